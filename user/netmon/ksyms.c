// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel text symbols for drop call sites, from /proc/kallsyms (read once,
 * at start: 114,000 of them on 6.12 are a pause the event loop should not
 * take at a run's first drop).  Without CAP_SYSLOG the kernel shows every
 * address as 0: then every site is "?" (attach.c warns at start).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "main.h"

struct ksym {
	uint64_t addr;
	char *name;
};

static struct ksym *ksyms;
static size_t nksyms;

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void ksyms_load(void)
{
	static int loaded;
	FILE *f;
	char line[512], name[256], type;
	unsigned long long a;
	size_t cap = 0;

	if (loaded)
		return;
	loaded = 1;
	f = fopen("/proc/kallsyms", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3 || !a)
			continue;
		if (type != 't' && type != 'T')
			continue;
		if (nksyms == cap) {
			void *p;

			cap = cap ? cap * 2 : 65536;
			p = realloc(ksyms, cap * sizeof(*ksyms));
			if (!p)
				break;
			ksyms = p;
		}
		ksyms[nksyms].addr = a;
		ksyms[nksyms].name = strdup(name);
		if (ksyms[nksyms].name)
			nksyms++;
	}
	if (f)
		fclose(f);
	qsort(ksyms, nksyms, sizeof(*ksyms), ksym_cmp);
}

const char *ksym_name(uint64_t addr)
{
	size_t lo = 0, hi;

	ksyms_load();
	if (!nksyms || addr < ksyms[0].addr)
		return "?";
	hi = nksyms;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (ksyms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return ksyms[lo].name;
}
