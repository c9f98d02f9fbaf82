// SPDX-License-Identifier: GPL-2.0
/*
 * selftest: proves collx_test_exporter works, without collx.  Runs as root
 * in a lab node with the module loaded (tests/dmabuf/selftest.sh does
 * that) and prints TAP; lines starting "# seen:" record what an importer
 * sees on this kernel, for the importer's author.
 *
 *   selftest [-v] [--vmap-after-revoke] [TEST...]
 *
 * --vmap-after-revoke also vmaps a revoked buffer: the dma-buf core WARNs
 * once when an exporter's vmap fails, so a lab run with it fails on
 * purpose.  Exit: 0 all passed or skipped, 1 a test failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "exporter.h"

#define MIB		(1024 * 1024UL)
#define PAGE		4096UL
#define BUFLEN		MIB

static bool verbose, vmap_after_revoke;
static char skip_why[256];
static long long late_expected;	/* late-write pages tests cause on purpose */

/* fds and mappings a test opened, released after it whatever happened */
static int tracked_fds[64], ntracked_fds;
static struct { void *p; size_t len; } tracked_maps[16];
static int ntracked_maps;

static int track(int fd)
{
	if (fd >= 0 && ntracked_fds < 64)
		tracked_fds[ntracked_fds++] = fd;
	return fd;
}

static void untrack(int fd)
{
	int i;

	for (i = 0; i < ntracked_fds; i++)
		if (tracked_fds[i] == fd)
			tracked_fds[i] = -1;
	close(fd);
}

static void *track_map(void *p, size_t len)
{
	if (p && ntracked_maps < 16) {
		tracked_maps[ntracked_maps].p = p;
		tracked_maps[ntracked_maps++].len = len;
	}
	return p;
}

static void untrack_map(void *p)
{
	int i;

	for (i = 0; i < ntracked_maps; i++)
		if (tracked_maps[i].p == p) {
			munmap(p, tracked_maps[i].len);
			tracked_maps[i].p = NULL;
		}
}

static void release_tracked(void)
{
	while (ntracked_maps--)
		if (tracked_maps[ntracked_maps].p)
			munmap(tracked_maps[ntracked_maps].p,
			       tracked_maps[ntracked_maps].len);
	ntracked_maps = 0;
	while (ntracked_fds--)
		if (tracked_fds[ntracked_fds] >= 0)
			close(tracked_fds[ntracked_fds]);
	ntracked_fds = 0;
}

#define FAIL(...) do {							\
	fprintf(stdout, "# %s:%d: ", __func__, __LINE__);		\
	fprintf(stdout, __VA_ARGS__);					\
	fprintf(stdout, "\n");						\
	return -1;							\
} while (0)
#define EXPECT(c) do { if (!(c)) FAIL("expected %s", #c); } while (0)
#define EXPECT_EQ(a, b) do {						\
	long long _a = (long long)(a), _b = (long long)(b);		\
	if (_a != _b)							\
		FAIL("%s is %lld, expected %s (%lld)", #a, _a, #b, _b);	\
} while (0)
#define EXPECT_OK(e) do {						\
	int _r = (e);							\
	if (_r < 0)							\
		FAIL("%s: %s", #e, strerror(-_r));			\
} while (0)
#define EXPECT_ERR(e, err) do {						\
	int _r = (e);							\
	if (_r != -(err))						\
		FAIL("%s gave %d (%s), expected -%s", #e, _r,		\
		     _r < 0 ? strerror(-_r) : "success", #err);		\
} while (0)
#define SKIP(...) do {							\
	snprintf(skip_why, sizeof(skip_why), __VA_ARGS__);		\
	return 77;							\
} while (0)
#define SEEN(...) do { printf("# seen: " __VA_ARGS__); printf("\n"); } while (0)

#define pat dmabuf_pattern
#define fill dmabuf_fill
#define check dmabuf_check

static int stats(int fd, struct collx_texp_stats *st)
{
	int ret = texp_stats(fd, st);

	if (!ret && verbose)
		printf("#   stats: gen %u att %u dyn %u maps %u stale %u pins %u vmaps %u/%u mmaps %u retired %u late %u\n",
		       st->generation, st->attachments, st->dynamic_attachments,
		       st->mappings, st->stale_mappings, st->pins, st->vmaps,
		       st->stale_vmaps, st->mmaps, st->retired_pages,
		       st->late_write_pages);
	return ret;
}

static int raw(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/* ---- the ABI ----------------------------------------------------------- */

static int t_uapi(void)
{
	struct collx_texp_create c = { .size = sizeof(c) };
	struct collx_texp_move m = { .size = sizeof(m) };
	unsigned char big[sizeof(c) + 8];
	int dev = texp_dev(), pfd[2], fd;
	long long max;

	EXPECT(dev >= 0);
	EXPECT_ERR(texp_create(0, COLLX_TEXP_DYNAMIC), EINVAL);
	EXPECT_ERR(texp_create(PAGE + 1, COLLX_TEXP_DYNAMIC), EINVAL);
	EXPECT_OK(texp_param("max_buf_mib", &max));
	EXPECT_ERR(texp_create((max + 1) * MIB, COLLX_TEXP_DYNAMIC), EINVAL);
	EXPECT_ERR(texp_create(PAGE, 0), EINVAL);
	EXPECT_ERR(texp_create(PAGE, COLLX_TEXP_DYNAMIC | COLLX_TEXP_STATIC),
		   EINVAL);
	EXPECT_ERR(texp_create(PAGE, COLLX_TEXP_DYNAMIC | 0x80), EOPNOTSUPP);

	/* size-first: one byte short of the mandatory part, and longer */
	c.size = offsetof(struct collx_texp_create, length) + 7;
	c.flags = COLLX_TEXP_DYNAMIC;
	c.length = PAGE;
	EXPECT_ERR(raw(dev, COLLX_TEXP_IOC_CREATE, &c), EINVAL);
	memset(big, 0, sizeof(big));
	c.size = sizeof(big);
	memcpy(big, &c, sizeof(c));
	big[sizeof(c) + 3] = 1;
	EXPECT_ERR(raw(dev, COLLX_TEXP_IOC_CREATE, big), E2BIG);
	big[sizeof(c) + 3] = 0;
	EXPECT_OK(raw(dev, COLLX_TEXP_IOC_CREATE, big));
	memcpy(&c, big, sizeof(c));
	EXPECT(c.fd >= 0);
	track(c.fd);

	EXPECT_ERR(raw(dev, _IO(COLLX_TEXP_TYPE, 0x01), &c), ENOTTY);
	EXPECT_ERR(raw(dev, COLLX_TEXP_IOC_IMP_MAP, &c), ENOTTY);
	EXPECT_ERR(texp_move(-1, 0, 0, NULL), EBADF);
	EXPECT_OK(pipe(pfd));
	track(pfd[0]);
	track(pfd[1]);
	EXPECT_ERR(texp_move(pfd[0], 0, 0, NULL), EINVAL);
	EXPECT_ERR(texp_stats(pfd[0], &(struct collx_texp_stats){ 0 }),
		   EINVAL);
	m.fd = c.fd;
	m.flags = 0x10;
	EXPECT_ERR(raw(dev, COLLX_TEXP_IOC_MOVE, &m), EOPNOTSUPP);
	m.flags = 0;
	m.__reserved = 1;
	EXPECT_ERR(raw(dev, COLLX_TEXP_IOC_MOVE, &m), EINVAL);
	EXPECT_ERR(texp_move(c.fd, 0, COLLX_TEXP_MOVE_MAX_TIMEOUT_MS + 1, NULL),
		   EINVAL);
	fd = track(texp_create(PAGE, COLLX_TEXP_STATIC));
	EXPECT(fd >= 0);
	EXPECT_ERR(texp_move(fd, 0, 0, NULL), EOPNOTSUPP);
	EXPECT_ERR(texp_revoke(fd, NULL), EOPNOTSUPP);
	EXPECT_ERR(texp_import(fd, COLLX_TEXP_IMP_PIN, 0), EINVAL);
	EXPECT_ERR(texp_import(fd, 0x40, 0), EOPNOTSUPP);
	EXPECT_ERR(texp_import(fd, 0, COLLX_TEXP_MAX_FENCE_MS + 1), EINVAL);
	EXPECT_ERR(texp_import(pfd[0], 0, 0), EINVAL);
	return 0;
}

/* ---- CPU access --------------------------------------------------------- */

static int mmap_kind(uint32_t flags)
{
	struct collx_texp_stats st;
	uint64_t *p;
	int fd;

	fd = track(texp_create(BUFLEN, flags));
	EXPECT(fd >= 0);
	p = track_map(dmabuf_mmap(fd, BUFLEN, 0), BUFLEN);
	EXPECT(p);
	for (size_t i = 0; i < BUFLEN / 8; i++)	/* zeroed pages */
		if (p[i])
			FAIL("word %zu not zero", i);
	fill(p, BUFLEN, 1);
	EXPECT_OK(stats(fd, &st));
	EXPECT_EQ(st.mmaps, 1);
	untrack_map(p);
	p = track_map(dmabuf_mmap(fd, BUFLEN - PAGE, PAGE), BUFLEN - PAGE);
	EXPECT(p);
	/* the second mapping starts one page in */
	EXPECT_EQ(p[0], pat(1, PAGE / 8));
	EXPECT(mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0) ==
	       MAP_FAILED && errno == EINVAL);
	EXPECT(mmap(NULL, 2 * PAGE, PROT_READ, MAP_SHARED, fd, BUFLEN - PAGE) ==
	       MAP_FAILED);
	EXPECT_OK(dmabuf_sync(fd, 1));
	EXPECT_OK(dmabuf_sync(fd, 0));
	return 0;
}

static int t_mmap_dynamic(void)
{
	return mmap_kind(COLLX_TEXP_DYNAMIC);
}

static int t_mmap_static(void)
{
	return mmap_kind(COLLX_TEXP_STATIC);
}

static int t_move_content(void)
{
	struct collx_texp_stats st;
	struct collx_texp_move mv;
	void *p;
	int fd;

	fd = track(texp_create(BUFLEN, COLLX_TEXP_DYNAMIC));
	EXPECT(fd >= 0);
	p = track_map(dmabuf_mmap(fd, BUFLEN, 0), BUFLEN);
	EXPECT(p);
	fill(p, BUFLEN, 2);
	EXPECT_OK(texp_move(fd, 0, 0, &mv));
	EXPECT_EQ(mv.notified, 0);
	EXPECT_EQ(mv.unnotified, 0);
	/* the same mapping faults in the new pages, which hold the bytes */
	EXPECT_EQ(check(p, BUFLEN, 2), -1);
	fill(p, BUFLEN, 3);
	EXPECT_OK(stats(fd, &st));
	EXPECT_EQ(st.generation, 1);
	EXPECT_EQ(st.retired_pages, BUFLEN / PAGE);
	EXPECT_EQ(st.late_write_pages, 0);
	EXPECT_OK(texp_move(fd, COLLX_TEXP_MOVE_IF_UNPINNED, 0, NULL));
	EXPECT_EQ(check(p, BUFLEN, 3), -1);
	EXPECT_OK(stats(fd, &st));
	EXPECT_EQ(st.generation, 2);
	EXPECT_EQ(st.retired_pages, 2 * BUFLEN / PAGE);
	EXPECT_EQ(st.late_write_pages, 0);
	return 0;
}

struct writer {
	volatile uint64_t *p;
	volatile int stop;
	uint64_t last[BUFLEN / PAGE];
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint64_t v = 1;
	size_t pg;

	while (!w->stop)
		for (pg = 0; pg < BUFLEN / PAGE; pg++, v++) {
			w->p[pg * PAGE / 8] = v;
			w->last[pg] = v;
		}
	return NULL;
}

/* User writes racing moves land in the new pages or are copied there. */
static int t_move_racing_writer(void)
{
	struct collx_texp_stats st;
	struct writer w = { 0 };
	pthread_t th;
	int fd, i;

	fd = track(texp_create(BUFLEN, COLLX_TEXP_DYNAMIC));
	EXPECT(fd >= 0);
	w.p = track_map(dmabuf_mmap(fd, BUFLEN, 0), BUFLEN);
	EXPECT(w.p);
	EXPECT(!pthread_create(&th, NULL, writer_main, &w));
	for (i = 0; i < 8; i++) {
		usleep(20000);
		if (texp_move(fd, 0, 0, NULL)) {
			w.stop = 1;
			pthread_join(th, NULL);
			FAIL("move %d failed", i);
		}
	}
	w.stop = 1;
	pthread_join(th, NULL);
	for (i = 0; i < (int)(BUFLEN / PAGE); i++)
		if (w.p[i * PAGE / 8] != w.last[i])
			FAIL("page %d holds %llu, the writer's last was %llu", i,
			     (unsigned long long)w.p[i * PAGE / 8],
			     (unsigned long long)w.last[i]);
	EXPECT_OK(stats(fd, &st));
	EXPECT_EQ(st.generation, 8);
	EXPECT_EQ(st.late_write_pages, 0);
	return 0;
}

static sigjmp_buf sigbus_jmp;

static void on_sigbus(int sig)
{
	siglongjmp(sigbus_jmp, sig);
}

/* 1 when reading *p raised SIGBUS. */
static int reads_sigbus(volatile uint64_t *p)
{
	struct sigaction sa = { .sa_handler = on_sigbus }, old;
	int got;

	sigaction(SIGBUS, &sa, &old);
	got = sigsetjmp(sigbus_jmp, 1);
	if (!got)
		(void)*p;
	sigaction(SIGBUS, &old, NULL);
	return got == SIGBUS;
}

static int t_revoke_mmap(void)
{
	struct collx_texp_stats st;
	struct collx_texp_move mv;
	uint64_t *p;
	int fd;

	fd = track(texp_create(BUFLEN, COLLX_TEXP_DYNAMIC));
	EXPECT(fd >= 0);
	p = track_map(dmabuf_mmap(fd, BUFLEN, 0), BUFLEN);
	EXPECT(p);
	fill(p, BUFLEN, 4);
	EXPECT_OK(texp_revoke(fd, &mv));
	EXPECT_EQ(reads_sigbus(p), 1);
	EXPECT_EQ(reads_sigbus(p + BUFLEN / 8 - 1), 1);
	EXPECT(!dmabuf_mmap(fd, BUFLEN, 0) && errno == ENODEV);
	EXPECT_OK(stats(fd, &st));
	EXPECT_EQ(st.revoked, 1);
	EXPECT_EQ(st.retired_pages, BUFLEN / PAGE);
	EXPECT_EQ(st.late_write_pages, 0);
	EXPECT_ERR(texp_move(fd, 0, 0, NULL), ENODEV);
	EXPECT_ERR(texp_revoke(fd, NULL), ENODEV);
	EXPECT_ERR(texp_import(fd, 0, 0), ENODEV);
	EXPECT_ERR(texp_import(fd, COLLX_TEXP_IMP_DYNAMIC, 0), ENODEV);
	return 0;
}

/* ---- importers ----------------------------------------------------------- */

static int t_imp_dynamic(void)
{
	struct collx_texp_imp_status is;
	struct collx_texp_stats st;
	struct collx_texp_imp_map im;
	struct collx_texp_move mv;
	uint64_t *p, w[4];
	int fd, imp;

	fd = track(texp_create(BUFLEN, COLLX_TEXP_DYNAMIC));
	EXPECT(fd >= 0);
	p = track_map(dmabuf_mmap(fd, BUFLEN, 0), BUFLEN);
	EXPECT(p);
	fill(p, BUFLEN, 5);
	imp = track(texp_import(fd, COLLX_TEXP_IMP_DYNAMIC, 0));
	EXPECT(imp >= 0);
	EXPECT_OK(texp_imp_status(imp, &is));
	EXPECT_EQ(is.dynamic, 1);
	EXPECT_EQ(is.exporter_dynamic, 1);
	EXPECT_EQ(is.premapped, 0);
	EXPECT_OK(stats(fd, &st));
	EXPECT_EQ(st.attachments, 1);
	EXPECT_EQ(st.dynamic_attachments, 1);
	EXPECT_EQ(st.pins, 0);
	EXPECT_OK(texp_imp_map(imp, &im));
	EXPECT_EQ(im.bytes, BUFLEN);
	EXPECT_ERR(texp_imp_map(imp, NULL), EBUSY);
	EXPECT_OK(stats(fd, &st));
	EXPECT_EQ(st.mappings, 1);
	SEEN("dynamic importer, dynamic exporter: attach does not map; map gives %u segments; pins while mapped: %u%s",
	     im.nents, st.pins,
	     st.pins ? " (the core pins every dynamic mapping: CONFIG_DMABUF_MOVE_NOTIFY is off)" : "");
	EXPECT_ERR(texp_move(fd, COLLX_TEXP_MOVE_IF_UNPINNED, 0, NULL),
		   st.pins ? EBUSY : 0);

	EXPECT_OK(texp_imp_access(imp, 0, 3 * PAGE, w, sizeof(w)));
	EXPECT_EQ(w[0], pat(5, 3 * PAGE / 8));
	w[0] = 0x1234;
	EXPECT_OK(texp_imp_access(imp, COLLX_TEXP_ACCESS_WRITE, 8, w, 8));
	EXPECT_EQ(p[1], 0x1234);
	p[1] = pat(5, 1);
	EXPECT_OK(texp_imp_vmap(imp));
	EXPECT_ERR(texp_imp_vmap(imp), EBUSY);
	EXPECT_OK(texp_imp_access(imp, COLLX_TEXP_ACCESS_VMAP, BUFLEN - 32, w,
				  32));
	EXPECT_EQ(w[3], pat(5, BUFLEN / 8 - 1));

	EXPECT_OK(texp_move(fd, 0, 0, &mv));
	EXPECT_EQ(mv.notified, 1);
	EXPECT_EQ(mv.unnotified, 0);
	EXPECT_EQ(mv.mappings, 1);
	EXPECT_EQ(mv.vmaps, 1);
	EXPECT_OK(texp_imp_status(imp, &is));
	EXPECT_EQ(is.notified, 1);
	EXPECT_EQ(is.mapped, 0);	/* it dropped the mapping in move_notify */
	EXPECT_EQ(is.vmap_stale, 1);
	EXPECT_ERR(texp_imp_access(imp, COLLX_TEXP_ACCESS_VMAP, 0, w, 8),
		   ESTALE);
	EXPECT_ERR(texp_imp_access(imp, 0, 0, w, 8), ENXIO);
	EXPECT_OK(stats(fd, &st));
	EXPECT_EQ(st.mappings, 0);
	EXPECT_EQ(st.pins, 0);
	EXPECT_EQ(st.vmaps, 1);
	EXPECT_EQ(st.stale_vmaps, 1);
	/* remap: the new pages, same bytes */
	EXPECT_OK(texp_imp_map(imp, NULL));
	EXPECT_OK(texp_imp_access(imp, 0, 3 * PAGE, w, 8));
	EXPECT_EQ(w[0], pat(5, 3 * PAGE / 8));
	EXPECT_OK(texp_imp_vunmap(imp));
	EXPECT_ERR(texp_imp_vunmap(imp), ENXIO);
	EXPECT_OK(texp_imp_vmap(imp));
	EXPECT_OK(texp_imp_access(imp, COLLX_TEXP_ACCESS_VMAP, 0, w, 8));
	EXPECT_EQ(w[0], pat(5, 0));
	EXPECT_OK(stats(fd, &st));
	EXPECT_EQ(st.stale_vmaps, 0);
	EXPECT_EQ(st.stale_mappings, 0);
	EXPECT_EQ(st.late_write_pages, 0);
	EXPECT_OK(texp_imp_unmap(imp));
	EXPECT_ERR(texp_imp_unmap(imp), ENXIO);
	untrack(imp);
	EXPECT_OK(stats(fd, &st));
	EXPECT_EQ(st.attachments, 0);
	EXPECT_EQ(st.vmaps, 0);
	EXPECT_EQ(check(p, BUFLEN, 5), -1);
	return 0;
}

/* A static importer of a moving exporter is never told: late writes. */
static int t_imp_static_on_dynamic(void)
{
	struct collx_texp_imp_status is;
	struct collx_texp_stats st;
	struct collx_texp_move mv;
	uint64_t w = 0xbad;
	int fd, imp;

	fd = track(texp_create(BUFLEN, COLLX_TEXP_DYNAMIC));
	EXPECT(fd >= 0);
	imp = track(texp_import(fd, 0, 0));
	EXPECT(imp >= 0);
	EXPECT_OK(texp_imp_status(imp, &is));
	EXPECT_EQ(is.dynamic, 0);
	EXPECT_EQ(is.premapped, 1);
	EXPECT_OK(stats(fd, &st));
	SEEN("static importer, dynamic exporter: the core maps and pins at attach (mappings %u, pins %u)",
	     st.mappings, st.pins);
	EXPECT_EQ(st.mappings, 1);
	EXPECT_EQ(st.pins, 1);
	EXPECT_OK(texp_imp_map(imp, NULL));	/* the cached one */
	EXPECT_OK(stats(fd, &st));
	EXPECT_EQ(st.mappings, 1);
	EXPECT_ERR(texp_move(fd, COLLX_TEXP_MOVE_IF_UNPINNED, 0, NULL), EBUSY);
	EXPECT_OK(texp_move(fd, 0, 0, &mv));
	EXPECT_EQ(mv.notified, 0);
	EXPECT_EQ(mv.unnotified, 1);
	EXPECT_OK(stats(fd, &st));
	EXPECT_EQ(st.stale_mappings, 1);
	EXPECT_EQ(st.late_write_pages, 0);
	/* it goes on writing into the old pages: caught */
	EXPECT_OK(texp_imp_access(imp, COLLX_TEXP_ACCESS_WRITE, 5 * PAGE + 16,
				  &w, 8));
	EXPECT_OK(stats(fd, &st));
	EXPECT_EQ(st.late_write_pages, 1);
	EXPECT_EQ(st.late_write_gen, 0);
	EXPECT_EQ(st.late_write_offset, 5 * PAGE + 16);
	late_expected += 1;
	untrack(imp);
	EXPECT_OK(stats(fd, &st));
	EXPECT_EQ(st.attachments, 0);
	EXPECT_EQ(st.mappings, 0);
	EXPECT_EQ(st.pins, 0);
	return 0;
}

/* A dynamic importer that ignores move_notify: caught as well. */
static int t_imp_keep_stale(void)
{
	struct collx_texp_stats st;
	uint64_t w[2] = { 1, 2 };
	int fd, imp;

	fd = track(texp_create(BUFLEN, COLLX_TEXP_DYNAMIC));
	EXPECT(fd >= 0);
	imp = track(texp_import(fd, COLLX_TEXP_IMP_DYNAMIC |
				COLLX_TEXP_IMP_KEEP_STALE, 0));
	EXPECT(imp >= 0);
	EXPECT_OK(texp_imp_map(imp, NULL));
	EXPECT_OK(texp_move(fd, 0, 0, NULL));
	EXPECT_OK(texp_move(fd, 0, 0, NULL));
	EXPECT_OK(stats(fd, &st));
	EXPECT_EQ(st.stale_mappings, 1);
	EXPECT_EQ(st.late_write_pages, 0);
	EXPECT_OK(texp_imp_access(imp, COLLX_TEXP_ACCESS_WRITE, PAGE - 8, w,
				  16));
	EXPECT_OK(stats(fd, &st));
	EXPECT_EQ(st.late_write_pages, 2);	/* the write spans two pages */
	EXPECT_EQ(st.late_write_gen, 0);
	EXPECT_EQ(st.late_write_offset, PAGE - 8);
	late_expected += 2;
	return 0;
}

static int t_imp_pin(void)
{
	struct collx_texp_stats st;
	struct collx_texp_move mv;
	int fd, imp;

	fd = track(texp_create(BUFLEN, COLLX_TEXP_DYNAMIC));
	EXPECT(fd >= 0);
	imp = track(texp_import(fd, COLLX_TEXP_IMP_DYNAMIC | COLLX_TEXP_IMP_PIN,
				0));
	EXPECT(imp >= 0);
	EXPECT_OK(stats(fd, &st));
	EXPECT_EQ(st.pins, 1);
	EXPECT_OK(texp_imp_map(imp, NULL));
	EXPECT_ERR(texp_move(fd, COLLX_TEXP_MOVE_IF_UNPINNED, 0, NULL), EBUSY);
	EXPECT_OK(texp_move(fd, 0, 0, &mv));
	EXPECT_EQ(mv.notified, 1);
	EXPECT(mv.pins >= 1);
	untrack(imp);
	EXPECT_OK(stats(fd, &st));
	EXPECT_EQ(st.pins, 0);
	EXPECT_OK(texp_move(fd, COLLX_TEXP_MOVE_IF_UNPINNED, 0, NULL));
	return 0;
}

struct racer {
	int imp;
	volatile int stop;
	int writes, remaps;
	uint64_t last[BUFLEN / PAGE];
	int err;
};

static void *racer_main(void *arg)
{
	struct racer *r = arg;
	uint64_t v = 1;
	int ret, tries;
	size_t pg;

	for (pg = 0; !r->stop; pg = (pg + 1) % (BUFLEN / PAGE), v++) {
		ret = texp_imp_access(r->imp, COLLX_TEXP_ACCESS_WRITE,
				      pg * PAGE, &v, 8);
		for (tries = 0; ret == -ENXIO && tries < 10; tries++) {
			/* moved: map the new pages */
			r->remaps++;
			ret = texp_imp_map(r->imp, NULL);
			if (!ret)
				ret = texp_imp_access(r->imp,
						      COLLX_TEXP_ACCESS_WRITE,
						      pg * PAGE, &v, 8);
		}
		if (ret) {
			r->err = ret;
			return NULL;
		}
		r->last[pg] = v;
		r->writes++;
	}
	return NULL;
}

/* A correct importer writing while the buffer moves never writes late. */
static int t_imp_racing_moves(void)
{
	struct collx_texp_stats st;
	struct racer r = { 0 };
	pthread_t th;
	uint64_t *p;
	int fd, i;

	fd = track(texp_create(BUFLEN, COLLX_TEXP_DYNAMIC));
	EXPECT(fd >= 0);
	p = track_map(dmabuf_mmap(fd, BUFLEN, 0), BUFLEN);
	EXPECT(p);
	r.imp = track(texp_import(fd, COLLX_TEXP_IMP_DYNAMIC, 0));
	EXPECT(r.imp >= 0);
	EXPECT_OK(texp_imp_map(r.imp, NULL));
	EXPECT(!pthread_create(&th, NULL, racer_main, &r));
	for (i = 0; i < 8 && !r.err; i++) {
		usleep(30000);
		if (texp_move(fd, 0, 0, NULL))
			break;
	}
	r.stop = 1;
	pthread_join(th, NULL);
	if (r.err)
		FAIL("importer: %s", strerror(-r.err));
	EXPECT_EQ(i, 8);
	printf("#   %d importer writes, %d remaps across 8 moves\n", r.writes,
	       r.remaps);
	EXPECT(r.remaps >= 1);
	for (i = 0; i < (int)(BUFLEN / PAGE); i++)
		if (p[i * PAGE / 8] != r.last[i])
			FAIL("page %d holds %llu, the importer's last write was %llu",
			     i, (unsigned long long)p[i * PAGE / 8],
			     (unsigned long long)r.last[i]);
	EXPECT_OK(stats(fd, &st));
	EXPECT_EQ(st.late_write_pages, 0);
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

/* Moves wait for the importers' fences, and time out on them. */
static int t_fences(void)
{
	struct collx_texp_imp_status is;
	struct collx_texp_move mv;
	int fd, imp, udma;
	uint64_t t;

	fd = track(texp_create(BUFLEN, COLLX_TEXP_DYNAMIC));
	EXPECT(fd >= 0);
	imp = track(texp_import(fd, COLLX_TEXP_IMP_DYNAMIC, 300));
	EXPECT(imp >= 0);
	EXPECT_OK(texp_move(fd, 0, 0, &mv));
	EXPECT(mv.wait_ns >= 290 * 1000000ull);
	EXPECT_OK(texp_imp_status(imp, &is));
	EXPECT_EQ(is.fences, 1);
	EXPECT_EQ(is.fence_errors, 0);
	untrack(imp);

	imp = track(texp_import(fd, COLLX_TEXP_IMP_DYNAMIC, 1000));
	EXPECT(imp >= 0);
	t = now_ms();
	EXPECT_ERR(texp_move(fd, 0, 200, &mv), ETIMEDOUT);
	EXPECT(now_ms() - t < 900);
	usleep(1000 * 1000);
	EXPECT_OK(texp_move(fd, 0, 0, &mv));	/* a new fence, 1 s */
	EXPECT(mv.wait_ns >= 900 * 1000000ull);
	untrack(imp);

	udma = track(dmabuf_new("udmabuf", BUFLEN));
	if (udma >= 0)
		EXPECT_ERR(texp_import(udma, COLLX_TEXP_IMP_DYNAMIC, 100),
			   EINVAL);
	return 0;
}

static int t_imp_static_exporter(void)
{
	struct collx_texp_imp_status is;
	struct collx_texp_stats st;
	uint64_t w;
	int fd, imp, imp2;

	fd = track(texp_create(BUFLEN, COLLX_TEXP_STATIC));
	EXPECT(fd >= 0);
	imp = track(texp_import(fd, COLLX_TEXP_IMP_DYNAMIC, 0));
	EXPECT(imp >= 0);
	EXPECT_OK(texp_imp_status(imp, &is));
	EXPECT_EQ(is.exporter_dynamic, 0);
	EXPECT_EQ(is.premapped, 1);
	SEEN("dynamic importer, static exporter: attach succeeds, the core maps at attach and caches it; map returns that; never notified");
	EXPECT_OK(texp_imp_map(imp, NULL));
	EXPECT_OK(texp_imp_unmap(imp));
	EXPECT_OK(stats(fd, &st));
	EXPECT_EQ(st.mappings, 1);	/* cached until detach */
	EXPECT_EQ(st.pins, 0);

	imp2 = track(texp_import(fd, 0, 0));
	EXPECT(imp2 >= 0);
	EXPECT_OK(texp_imp_status(imp2, &is));
	EXPECT_EQ(is.premapped, 0);
	EXPECT_OK(texp_imp_map(imp2, NULL));
	EXPECT_OK(stats(fd, &st));
	EXPECT_EQ(st.mappings, 2);
	EXPECT_OK(texp_imp_access(imp2, 0, 0, &w, 8));
	EXPECT_OK(texp_imp_unmap(imp2));
	EXPECT_OK(stats(fd, &st));
	EXPECT_EQ(st.mappings, 1);
	SEEN("static importer, static exporter: not premapped; every map and unmap reaches the exporter");
	return 0;
}

static int t_refuse(void)
{
	struct collx_texp_imp_status is;
	struct collx_texp_stats st;
	int fd, imp;

	fd = track(dmabuf_new("refuse", BUFLEN));
	EXPECT(fd >= 0);
	EXPECT_ERR(texp_import(fd, COLLX_TEXP_IMP_DYNAMIC, 0), EOPNOTSUPP);
	imp = track(texp_import(fd, 0, 0));
	EXPECT(imp >= 0);
	EXPECT_OK(texp_imp_map(imp, NULL));
	SEEN("refuse (static, no dynamic importers): dma_buf_dynamic_attach() fails with EOPNOTSUPP; dma_buf_attach() works");

	fd = track(dmabuf_new("pinonly", BUFLEN));
	EXPECT(fd >= 0);
	EXPECT_ERR(texp_import(fd, COLLX_TEXP_IMP_DYNAMIC, 0), EOPNOTSUPP);
	imp = track(texp_import(fd, 0, 0));
	EXPECT(imp >= 0);
	EXPECT_OK(texp_imp_status(imp, &is));
	EXPECT_EQ(is.premapped, 1);
	EXPECT_OK(stats(fd, &st));
	EXPECT_EQ(st.pins, 1);
	EXPECT_ERR(texp_move(fd, COLLX_TEXP_MOVE_IF_UNPINNED, 0, NULL), EBUSY);
	SEEN("pinonly (dynamic, no dynamic importers): dma_buf_attach() is pinned by the core at attach");
	return 0;
}

/* Closing the fd and the mmap leaves the importer's buffer alive. */
static int t_close_while_mapped(void)
{
	long long before, after;
	uint64_t *p, w;
	int fd, imp;

	EXPECT_OK(texp_counter("buffers", &before));
	fd = texp_create(BUFLEN, COLLX_TEXP_DYNAMIC);
	EXPECT(fd >= 0);
	p = dmabuf_mmap(fd, BUFLEN, 0);
	EXPECT(p);
	fill(p, BUFLEN, 7);
	imp = track(texp_import(fd, COLLX_TEXP_IMP_DYNAMIC, 0));
	EXPECT(imp >= 0);
	EXPECT_OK(texp_imp_map(imp, NULL));
	EXPECT_OK(texp_imp_vmap(imp));
	close(fd);
	munmap(p, BUFLEN);
	EXPECT_OK(texp_counter("buffers", &after));
	EXPECT_EQ(after, before + 1);
	EXPECT_OK(texp_imp_access(imp, 0, 9 * PAGE, &w, 8));
	EXPECT_EQ(w, pat(7, 9 * PAGE / 8));
	EXPECT_OK(texp_imp_access(imp, COLLX_TEXP_ACCESS_VMAP, 9 * PAGE, &w, 8));
	EXPECT_EQ(w, pat(7, 9 * PAGE / 8));
	untrack(imp);
	EXPECT_OK(texp_counter("buffers", &after));
	EXPECT_EQ(after, before);
	return 0;
}

/* A forked child's mapping follows moves too. */
static int t_fork(void)
{
	volatile uint64_t *p;
	int fd, status;
	pid_t pid;

	fd = track(texp_create(BUFLEN, COLLX_TEXP_DYNAMIC));
	EXPECT(fd >= 0);
	p = track_map(dmabuf_mmap(fd, BUFLEN, 0), BUFLEN);
	EXPECT(p);
	p[0] = 1;
	pid = fork();
	EXPECT(pid >= 0);
	if (!pid) {
		while (p[0] != 2)
			usleep(1000);
		p[1] = 3;	/* after the parent's move */
		_exit(p[0] == 2 ? 0 : 1);
	}
	EXPECT_OK(texp_move(fd, 0, 0, NULL));
	p[0] = 2;
	EXPECT(waitpid(pid, &status, 0) == pid);
	EXPECT(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(p[1], 3);
	return 0;
}

/* The module's page budget holds. */
static int t_limits(void)
{
	long long total, buf, pages;
	uint64_t len;
	int fd, n = 0;

	EXPECT_OK(texp_param("max_total_mib", &total));
	EXPECT_OK(texp_param("max_buf_mib", &buf));
	EXPECT_OK(texp_counter("pages", &pages));
	if (total > 128)
		SKIP("max_total_mib=%lld: would fill this node", total);
	len = buf * MIB;
	while (n < 64 && (fd = texp_create(len, COLLX_TEXP_DYNAMIC)) >= 0) {
		track(fd);
		n++;
	}
	EXPECT_EQ(fd, -ENOMEM);
	EXPECT(n >= (long long)((total * MIB - pages * PAGE) / len) - 1);
	/* and a move needs a second generation */
	if (n) {
		EXPECT_ERR(texp_move(tracked_fds[ntracked_fds - 1], 0, 0, NULL),
			   ENOMEM);
	}
	return 0;
}

static int t_imp_errors(void)
{
	uint64_t w = 0;
	int fd, imp;

	fd = track(texp_create(2 * PAGE, COLLX_TEXP_DYNAMIC));
	EXPECT(fd >= 0);
	imp = track(texp_import(fd, COLLX_TEXP_IMP_DYNAMIC, 0));
	EXPECT(imp >= 0);
	EXPECT_ERR(texp_imp_access(imp, 0, 0, &w, 8), ENXIO);
	EXPECT_ERR(texp_imp_access(imp, COLLX_TEXP_ACCESS_VMAP, 0, &w, 8),
		   ENXIO);
	EXPECT_OK(texp_imp_map(imp, NULL));
	EXPECT_ERR(texp_imp_access(imp, 0, 0, &w, 0), EINVAL);
	EXPECT_ERR(texp_imp_access(imp, 0, 2 * PAGE - 4, &w, 8), EINVAL);
	EXPECT_ERR(texp_imp_access(imp, 0, ~0ULL, &w, 8), EINVAL);
	EXPECT_ERR(texp_imp_access(imp, 0, 0, &w, COLLX_TEXP_MAX_ACCESS + 1),
		   EINVAL);
	EXPECT_ERR(texp_imp_access(imp, 0x10, 0, &w, 8), EOPNOTSUPP);
	EXPECT_ERR(texp_imp_access(imp, 0, 0, NULL, 8), EFAULT);
	EXPECT_ERR(raw(imp, COLLX_TEXP_IOC_CREATE,
		       &(struct collx_texp_create){ .size = 24 }), ENOTTY);
	return 0;
}

static int t_revoke_importer(void)
{
	struct collx_texp_imp_status is;
	struct collx_texp_stats st;
	struct collx_texp_move mv;
	uint64_t w;
	int fd, imp;

	fd = track(texp_create(BUFLEN, COLLX_TEXP_DYNAMIC));
	EXPECT(fd >= 0);
	imp = track(texp_import(fd, COLLX_TEXP_IMP_DYNAMIC, 0));
	EXPECT(imp >= 0);
	EXPECT_OK(texp_imp_map(imp, NULL));
	EXPECT_OK(texp_imp_vmap(imp));
	EXPECT_OK(texp_revoke(fd, &mv));
	EXPECT_EQ(mv.notified, 1);
	EXPECT_OK(texp_imp_status(imp, &is));
	EXPECT_EQ(is.mapped, 0);
	EXPECT_EQ(is.vmap_stale, 1);
	EXPECT_ERR(texp_imp_map(imp, NULL), ENODEV);
	EXPECT_ERR(texp_imp_access(imp, COLLX_TEXP_ACCESS_VMAP, 0, &w, 8),
		   ESTALE);
	SEEN("revoke: move_notify, then dma_buf_map_attachment() fails with ENODEV; a vmap held from before stays (stale); new attaches fail with ENODEV");
	EXPECT_OK(texp_imp_vunmap(imp));
	if (vmap_after_revoke) {
		EXPECT_ERR(texp_imp_vmap(imp), ENODEV);
		SEEN("revoke: a new dma_buf_vmap() fails with ENODEV, and the core WARNs (WARN_ON_ONCE in dma_buf_vmap)");
	}
	EXPECT_OK(stats(fd, &st));
	EXPECT_EQ(st.late_write_pages, 0);
	EXPECT_EQ(st.mappings, 0);
	EXPECT_EQ(st.pins, 0);
	return 0;
}

/* ---- RDMA -------------------------------------------------------------- */

static int rdma_try(struct ibv_pd *pd, const char *kind)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ;
	struct ibv_mr *mr;
	void *p;
	int fd;

	fd = track(dmabuf_new(kind, BUFLEN));
	if (fd == -ENOENT) {
		SEEN("ibv_reg_dmabuf_mr(%s): no such exporter on this kernel",
		     kind);
		return 0;
	}
	EXPECT(fd >= 0);
	errno = 0;
	mr = ibv_reg_dmabuf_mr(pd, 0, BUFLEN, 0, fd, access);
	if (mr) {
		SEEN("ibv_reg_dmabuf_mr(%s) on %s: works, lkey %#x", kind,
		     ibv_get_device_name(pd->context->device), mr->lkey);
		ibv_dereg_mr(mr);
	} else {
		SEEN("ibv_reg_dmabuf_mr(%s) on %s: fails, errno %d (%s)", kind,
		     ibv_get_device_name(pd->context->device), errno,
		     strerror(errno));
		EXPECT(errno == EOPNOTSUPP || errno == EPROTONOSUPPORT);
	}
	p = track_map(dmabuf_mmap(fd, BUFLEN, 0), BUFLEN);
	EXPECT(p);
	errno = 0;
	mr = ibv_reg_mr(pd, p, BUFLEN, access);
	SEEN("ibv_reg_mr() of the mmap of %s: %s%s", kind,
	     mr ? "works" : "fails: ", mr ? "" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	return 0;
}

static int t_rdma(void)
{
	const char *want = getenv("TEXP_IBDEV") ?: "rxe0";
	struct ibv_device **list, *dev = NULL;
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pd = NULL;
	int n, i, ret = 0;
	const char *kinds[] = { "dynamic", "static", "udmabuf", "heap" };

	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), want))
			dev = list[i];
	if (!dev) {
		if (list)
			ibv_free_device_list(list);
		SKIP("no RDMA device %s", want);
	}
	ctx = ibv_open_device(dev);
	if (ctx)
		pd = ibv_alloc_pd(ctx);
	if (!pd) {
		ret = -1;
		printf("# cannot open %s or allocate a PD\n", want);
	}
	for (i = 0; pd && !ret && i < 4; i++)
		ret = rdma_try(pd, kinds[i]);
	if (pd)
		ibv_dealloc_pd(pd);
	if (ctx)
		ibv_close_device(ctx);
	ibv_free_device_list(list);
	return ret;
}

/* ---- the kernel's exporters, through the same probe --------------------- */

static int other_exporter(const char *kind)
{
	struct collx_texp_imp_status is;
	struct collx_texp_imp_map im;
	uint64_t *p, w;
	int fd, imp, i;

	fd = track(dmabuf_new(kind, BUFLEN));
	if (fd == -ENOENT)
		SKIP("no %s on this kernel", kind);
	EXPECT(fd >= 0);
	p = track_map(dmabuf_mmap(fd, BUFLEN, 0), BUFLEN);
	EXPECT(p);
	EXPECT_OK(dmabuf_sync(fd, 1));
	fill(p, BUFLEN, 8);
	EXPECT_OK(dmabuf_sync(fd, 0));
	for (i = 0; i < 2; i++) {
		imp = track(texp_import(fd, i ? COLLX_TEXP_IMP_DYNAMIC : 0, 0));
		EXPECT(imp >= 0);
		EXPECT_OK(texp_imp_status(imp, &is));
		EXPECT_OK(texp_imp_map(imp, &im));
		EXPECT_EQ(im.bytes, BUFLEN);
		EXPECT_OK(texp_imp_vmap(imp));
		EXPECT_OK(texp_imp_access(imp, COLLX_TEXP_ACCESS_VMAP, 11 * PAGE,
					  &w, 8));
		EXPECT_EQ(w, pat(8, 11 * PAGE / 8));
		EXPECT_ERR(texp_imp_access(imp, 0, 0, &w, 8), EOPNOTSUPP);
		SEEN("%s, %s importer: exporter %s, premapped %u, %u segments, vmap works",
		     kind, i ? "dynamic" : "static",
		     is.exporter_dynamic ? "dynamic" : "static", is.premapped,
		     im.nents);
		EXPECT_EQ(is.exporter_dynamic, 0);
		untrack(imp);
	}
	return 0;
}

static int t_udmabuf(void)
{
	return other_exporter("udmabuf");
}

static int t_heap(void)
{
	return other_exporter("heap");
}

/* ---- no leak ------------------------------------------------------------- */

static long long base_late;

static int t_counters(void)
{
	static const char *const zero[] = {
		"buffers", "pages", "attachments", "mappings", "vmaps", "mmaps",
		"importers",
	};
	long long v;
	size_t i;
	int n;

	/* fput() of a closed fd may still be on its way: give it a moment */
	for (n = 0; n < 50; n++) {
		EXPECT_OK(texp_counter("buffers", &v));
		if (!v)
			break;
		usleep(20000);
	}
	for (i = 0; i < sizeof(zero) / sizeof(zero[0]); i++) {
		EXPECT_OK(texp_counter(zero[i], &v));
		if (v)
			FAIL("counter %s is %lld after every fd closed", zero[i],
			     v);
	}
	EXPECT_OK(texp_counter("late_write_pages", &v));
	EXPECT_EQ(v - base_late, late_expected);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(void);
} tests[] = {
	{ "uapi", t_uapi },
	{ "mmap_dynamic", t_mmap_dynamic },
	{ "mmap_static", t_mmap_static },
	{ "move_content", t_move_content },
	{ "move_racing_writer", t_move_racing_writer },
	{ "revoke_mmap", t_revoke_mmap },
	{ "imp_dynamic", t_imp_dynamic },
	{ "imp_static_on_dynamic", t_imp_static_on_dynamic },
	{ "imp_keep_stale", t_imp_keep_stale },
	{ "imp_pin", t_imp_pin },
	{ "imp_racing_moves", t_imp_racing_moves },
	{ "fences", t_fences },
	{ "imp_static_exporter", t_imp_static_exporter },
	{ "refuse", t_refuse },
	{ "close_while_mapped", t_close_while_mapped },
	{ "fork", t_fork },
	{ "limits", t_limits },
	{ "imp_errors", t_imp_errors },
	{ "revoke_importer", t_revoke_importer },
	{ "rdma", t_rdma },
	{ "udmabuf", t_udmabuf },
	{ "heap", t_heap },
	{ "counters", t_counters },
};

static bool wanted(int argc, char **argv, const char *name)
{
	int i, any = 0;

	for (i = 1; i < argc; i++) {
		if (argv[i][0] == '-')
			continue;
		any = 1;
		if (!strcmp(argv[i], name))
			return true;
	}
	return !any || !strcmp(name, "counters");
}

int main(int argc, char **argv)
{
	int i, n = 0, failed = 0, ret;
	long long v;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-v"))
			verbose = true;
		else if (!strcmp(argv[i], "--vmap-after-revoke"))
			vmap_after_revoke = true;
		else if (argv[i][0] == '-') {
			fprintf(stderr, "usage: selftest [-v] [--vmap-after-revoke] [TEST...]\n");
			return 2;
		}
	}
	if (texp_dev() < 0) {
		printf("1..0 # SKIP %s: %s (load collx_test_exporter.ko)\n",
		       TEXP_DEVICE, strerror(-texp_dev()));
		return 1;
	}
	if (texp_counter("buffers", &v) || v) {
		printf("Bail out! %s missing, or buffers already alive\n",
		       TEXP_COUNTERS);
		return 1;
	}
	texp_counter("late_write_pages", &base_late);
	for (i = 0; i < (int)(sizeof(tests) / sizeof(tests[0])); i++) {
		if (!wanted(argc, argv, tests[i].name))
			continue;
		n++;
		ret = tests[i].fn();
		release_tracked();
		if (ret == 77) {
			printf("ok %d - %s # SKIP %s\n", n, tests[i].name,
			       skip_why);
		} else if (ret) {
			printf("not ok %d - %s\n", n, tests[i].name);
			failed++;
		} else {
			printf("ok %d - %s\n", n, tests[i].name);
		}
	}
	printf("1..%d\n", n);
	return failed ? 1 : 0;
}
