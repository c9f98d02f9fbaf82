/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx_lab: libcollx scenarios the lab cases run on every node.  Rank and
 * rendezvous come from the environment (COLLX_RANK, COLLX_NRANKS,
 * COLLX_MASTER_ADDR, COLLX_MASTER_PORT) as for any libcollx program.
 * Every loop is bounded in count and in time.
 */
#ifndef COLLX_LAB_H
#define COLLX_LAB_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "collx.h"

extern int lab_rank;

#define FAIL(...) do {							\
	fprintf(stderr, "collx_lab: rank %d: ", lab_rank);		\
	fprintf(stderr, __VA_ARGS__);					\
	fprintf(stderr, "\n");						\
	exit(1);							\
} while (0)

uint64_t lab_now_ns(void);
struct collx_comm *lab_init(void);
void *lab_alloc(size_t bytes);
/* Touch @path (a ready file the case waits for). */
void lab_touch(const char *path);

/* The subcommands, one file per concern. */
int lab_matrix(int argc, char **argv);		/* matrix.c */
int lab_inflight(void);				/* inflight.c */
int lab_ringp2p(int argc, char **argv);		/* p2p.c */
int lab_stuck(int argc, char **argv);		/* stuck.c */
int lab_abort(int argc, char **argv);		/* abort.c */
int lab_load(int argc, char **argv);		/* load.c */

#endif
