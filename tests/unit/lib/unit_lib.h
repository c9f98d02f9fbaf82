/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host unit tests of libcollx and the bench helpers: TAP output, CHECK()
 * that fails the current test, and the helpers the test files share.
 */
#ifndef UNIT_LIB_H
#define UNIT_LIB_H

#include <stdint.h>
#include <stdio.h>

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		printf("#   %s:%d: %s: ", __FILE__, __LINE__, #cond);	\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		return 1;						\
	}								\
} while (0)

struct unit_test {
	const char *name;
	int (*fn)(void);
};

/* Each test file's table, ended by { NULL }. */
extern const struct unit_test env_tests[], bootstrap_tests[], fake_tests[], bench_tests[];

/* Unset every variable libcollx reads. */
void unit_clearenv(void);
int64_t unit_mono_ms(void);
/* A TCP port on 127.0.0.1 free right now. */
uint16_t unit_free_port(void);
/* Read a whole small file into @buf (NUL-terminated); bytes or -1. */
long unit_slurp(const char *path, char *buf, size_t len);

#endif
