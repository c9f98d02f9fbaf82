/* SPDX-License-Identifier: GPL-2.0 */
/*
 * This node's address, for the rank table of a 1-rank communicator: the
 * one given, else $COLLX_NODE_ADDR (the lab sets it), else the first
 * IPv4 address of an interface that is up and not loopback.
 */
#ifndef FUZZ_NODE_H
#define FUZZ_NODE_H

#include <stdint.h>

/* Network order; 0 if there is none (or @given is not an address). */
uint32_t fz_node_addr(const char *given);

#endif /* FUZZ_NODE_H */
