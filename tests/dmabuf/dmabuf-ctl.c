// SPDX-License-Identifier: GPL-2.0
/*
 * dmabuf-ctl: collx_test_exporter from the shell.  A dma-buf lives only as
 * long as an fd of it, so `create ... -- CMD` runs CMD with the buffer on
 * fd 3 and the other commands take such an inherited fd:
 *
 *   dmabuf-ctl create 1M dynamic -- sh -c \
 *	'dmabuf-ctl fill 3 7 && dmabuf-ctl move 3 && dmabuf-ctl check 3 7'
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "exporter.h"

static void usage(void)
{
	fprintf(stderr,
		"usage: dmabuf-ctl create SIZE [KIND] [-- CMD [ARG...]]\n"
		"         KIND: %s (default dynamic); with CMD, run it with the\n"
		"         dma-buf on fd 3 and exit with its status, else print its stats\n"
		"       dmabuf-ctl move FD [--if-unpinned] [--timeout MS]\n"
		"       dmabuf-ctl revoke FD\n"
		"       dmabuf-ctl stats FD\n"
		"       dmabuf-ctl fill FD SEED      write test pattern SEED (mmap)\n"
		"       dmabuf-ctl check FD SEED     exit 1 unless pattern SEED is there\n"
		"       dmabuf-ctl counters          the module's debugfs counters\n",
		dmabuf_kinds);
	exit(2);
}

static int die(const char *what, int err)
{
	fprintf(stderr, "dmabuf-ctl: %s: %s\n", what, strerror(-err));
	return 1;
}

static unsigned long long parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	switch (*end) {
	case 'K': case 'k': v <<= 10; end++; break;
	case 'M': case 'm': v <<= 20; end++; break;
	case 'G': case 'g': v <<= 30; end++; break;
	}
	if (*end || !v)
		usage();
	return v;
}

static int parse_fd(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*end || v < 0 || v > 1 << 20)
		usage();
	return v;
}

static int print_stats(int fd)
{
	struct collx_texp_stats st;
	int ret = texp_stats(fd, &st);

	if (ret)
		return die("stats", ret);
	printf("length %llu\ngeneration %u\nrevoked %u\nattachments %u\n"
	       "dynamic_attachments %u\nmappings %u\nstale_mappings %u\npins %u\n"
	       "vmaps %u\nstale_vmaps %u\nmmaps %u\nmoves %u\nnotified %u\n"
	       "retired_pages %u\nlate_write_pages %u\n",
	       (unsigned long long)st.length, st.generation, st.revoked,
	       st.attachments, st.dynamic_attachments, st.mappings,
	       st.stale_mappings, st.pins, st.vmaps, st.stale_vmaps, st.mmaps,
	       st.moves, st.notified, st.retired_pages, st.late_write_pages);
	if (st.late_write_pages)
		printf("late_write_gen %u\nlate_write_offset %llu\n",
		       st.late_write_gen,
		       (unsigned long long)st.late_write_offset);
	return 0;
}

static int cmd_create(int argc, char **argv)
{
	const char *kind = "dynamic";
	unsigned long long len;
	int fd, i = 1;

	if (argc < 2)
		usage();
	len = parse_size(argv[i++]);
	if (i < argc && strcmp(argv[i], "--"))
		kind = argv[i++];
	fd = dmabuf_new(kind, len);
	if (fd < 0)
		return die(kind, fd);
	if (i == argc) {
		printf("kind %s\n", kind);
		return dmabuf_kind_is_texp(kind) ? print_stats(fd) : 0;
	}
	if (strcmp(argv[i++], "--") || i == argc)
		usage();
	if (fd != 3 && (dup2(fd, 3) < 0 || close(fd)))
		return die("dup2", -errno);
	setenv("DMABUF_FD", "3", 1);
	execvp(argv[i], argv + i);
	return die(argv[i], -errno);
}

static int cmd_move(int argc, char **argv, int revoke)
{
	struct collx_texp_move mv;
	unsigned int flags = 0, timeout = 0;
	int fd, i, ret;

	if (argc < 2)
		usage();
	fd = parse_fd(argv[1]);
	for (i = 2; i < argc; i++) {
		if (!revoke && !strcmp(argv[i], "--if-unpinned"))
			flags |= COLLX_TEXP_MOVE_IF_UNPINNED;
		else if (!revoke && !strcmp(argv[i], "--timeout") && i + 1 < argc)
			timeout = parse_size(argv[++i]);
		else
			usage();
	}
	ret = revoke ? texp_revoke(fd, &mv) : texp_move(fd, flags, timeout, &mv);
	if (ret)
		return die(revoke ? "revoke" : "move", ret);
	printf("notified %u\nunnotified %u\npins %u\nmappings %u\nvmaps %u\nwait_ns %llu\n",
	       mv.notified, mv.unnotified, mv.pins, mv.mappings, mv.vmaps,
	       (unsigned long long)mv.wait_ns);
	return 0;
}

static int cmd_pattern(int argc, char **argv, int write)
{
	long long len;
	uint64_t seed;
	long bad;
	void *p;
	int fd;

	if (argc != 3)
		usage();
	fd = parse_fd(argv[1]);
	seed = strtoull(argv[2], NULL, 0);
	len = dmabuf_length(fd);
	if (len < 0)
		return die("length", len);
	p = dmabuf_mmap(fd, len, 0);
	if (!p)
		return die("mmap", -errno);
	dmabuf_sync(fd, 1);
	if (write) {
		dmabuf_fill(p, len, seed);
		bad = -1;
	} else {
		bad = dmabuf_check(p, len, seed);
	}
	dmabuf_sync(fd, 0);
	munmap(p, len);
	if (bad >= 0) {
		fprintf(stderr, "dmabuf-ctl: pattern %llu wrong at byte %ld\n",
			(unsigned long long)seed, bad * 8);
		return 1;
	}
	return 0;
}

static int cmd_counters(void)
{
	char line[256];
	FILE *f = fopen(TEXP_COUNTERS, "re");

	if (!f)
		return die(TEXP_COUNTERS, -errno);
	while (fgets(line, sizeof(line), f))
		fputs(line, stdout);
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	argc--;
	argv++;
	if (!strcmp(argv[0], "create"))
		return cmd_create(argc, argv);
	if (!strcmp(argv[0], "move"))
		return cmd_move(argc, argv, 0);
	if (!strcmp(argv[0], "revoke"))
		return cmd_move(argc, argv, 1);
	if (!strcmp(argv[0], "stats") && argc == 2)
		return print_stats(parse_fd(argv[1]));
	if (!strcmp(argv[0], "fill"))
		return cmd_pattern(argc, argv, 1);
	if (!strcmp(argv[0], "check"))
		return cmd_pattern(argc, argv, 0);
	if (!strcmp(argv[0], "counters") && argc == 1)
		return cmd_counters();
	usage();
	return 2;
}
