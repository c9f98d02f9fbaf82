// SPDX-License-Identifier: GPL-2.0
/*
 * Everything collx-netmon holds on the system while it runs: the instance
 * lock, the pinned maps and the tc programs.
 *
 * tc programs go on tcx links where the kernel has them (6.6+): a link
 * lives as long as its fd, so a monitor that is killed detaches by itself.
 * Older kernels (6.1) get classic clsact filters (handle 0xc011, pref 1),
 * which outlive a SIGKILL; the next instance replaces them, and the lock
 * makes sure no running instance loses its filters or pins to another.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "netmon.skel.h"
#include "main.h"

/* From 6.6's uapi; Debian 12's linux-libc-dev (6.1) does not have them. */
#ifndef BPF_TCX_INGRESS
#define BPF_TCX_INGRESS	46
#define BPF_TCX_EGRESS	47
#endif

#define TC_HANDLE	0xc011
#define TC_PRIO		1	/* first, so filters after it see what it saw */

static int lock_fd = -1;

int nm_lock(const char *path)
{
	char dir[256], pid[32] = "";
	char *slash;
	ssize_t n;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		mkdir(dir, 0755);
	}
	lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lock_fd < 0) {
		fprintf(stderr, "collx-netmon: lock %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (flock(lock_fd, LOCK_EX | LOCK_NB)) {
		n = pread(lock_fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = 0;
		pid[strcspn(pid, "\n")] = 0;
		fprintf(stderr, "collx-netmon: another collx-netmon (pid %s) holds %s; one instance "
			"per node, since both would own %s and the tc hooks\n",
			pid[0] ? pid : "?", path, NETMON_PIN_DIR);
		close(lock_fd);
		lock_fd = -1;
		return -1;
	}
	n = snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (ftruncate(lock_fd, 0) || pwrite(lock_fd, pid, n, 0) != n)
		fprintf(stderr, "collx-netmon: writing %s: %s\n", path, strerror(errno));
	return 0;
}

/*
 * CAP_BPF loads programs and maps, CAP_PERFMON attaches the tracepoints
 * (and lets the programs read kernel memory), CAP_NET_ADMIN attaches to
 * the netdevs; CAP_SYSLOG only names drop sites (kallsyms).  Say which are
 * missing before libbpf fails with a bare EPERM.
 */
int nm_check_caps(void)
{
	static const struct { int cap; const char *name; int need; } caps[] = {
		{ CAP_BPF, "CAP_BPF", 1 },
		{ CAP_PERFMON, "CAP_PERFMON", 1 },
		{ CAP_NET_ADMIN, "CAP_NET_ADMIN", 2 },
		{ CAP_SYSLOG, "CAP_SYSLOG", 0 },
	};
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};
	char missing[128] = "";
	size_t i;

	if (syscall(SYS_capget, &h, d))
		return 0;	/* cannot tell: let the kernel say */
	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		int c = caps[i].cap;

		if (d[c / 32].effective & (1U << (c % 32)))
			continue;
		if (caps[i].need == 0) {
			fprintf(stderr, "collx-netmon: no %s: drop call sites show as \"?\" and rxe's "
				"own frees count as stack drops\n", caps[i].name);
			continue;
		}
		if (caps[i].need == 2 && opt.no_tc)
			continue;
		snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%s%s",
			 missing[0] ? " " : "", caps[i].name);
	}
	if (!missing[0])
		return 0;
	fprintf(stderr, "collx-netmon: missing %s: needs CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN "
		"(CAP_SYSLOG for drop sites); run as root\n", missing);
	return -1;
}

int nm_pin_maps(struct netmon_bpf *skel)
{
	struct statfs st;
	struct bpf_map *m;
	char path[256];

	if (statfs("/sys/fs/bpf", &st) || st.f_type != BPF_FS_MAGIC) {
		fprintf(stderr, "collx-netmon: /sys/fs/bpf is not a bpf filesystem; maps not pinned "
			"(mount -t bpf bpf /sys/fs/bpf)\n");
		return 0;
	}
	if (mkdir(NETMON_PIN_DIR, 0700) && errno != EEXIST) {
		fprintf(stderr, "collx-netmon: mkdir %s: %s\n", NETMON_PIN_DIR, strerror(errno));
		return -1;
	}
	bpf_object__for_each_map(m, skel->obj) {
		const char *name = bpf_map__name(m);

		if (bpf_map__type(m) == BPF_MAP_TYPE_RINGBUF || strchr(name, '.'))
			continue;
		snprintf(path, sizeof(path), "%s/%s", NETMON_PIN_DIR, name);
		/* a killed instance's pin (we hold the lock): start afresh */
		unlink(path);
		if (bpf_map__set_pin_path(m, path))
			return -1;
	}
	return 0;
}

void nm_unpin_maps(struct netmon_bpf *skel)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, skel->obj)
		if (bpf_map__pin_path(m))
			bpf_map__unpin(m, NULL);
	rmdir(NETMON_PIN_DIR);
}

static const char *mode = "none";
static int tcx_fd[MAX_DEVS][2];
static int tcx_on[MAX_DEVS][2];
static struct bpf_tc_hook hooks[MAX_DEVS][2];
static struct bpf_tc_opts tcopts[MAX_DEVS][2];
static int tc_attached[MAX_DEVS][2];

const char *nm_attach_mode(void)
{
	return mode;
}

static int prog_fd(struct netmon_bpf *skel, int dir)
{
	return bpf_program__fd(dir == NETMON_RX ? skel->progs.netmon_tc_ingress :
			       skel->progs.netmon_tc_egress);
}

static int attach_tcx(struct netmon_bpf *skel)
{
	int d, dir, fd;

	for (d = 0; d < opt.ndevs; d++)
		for (dir = 0; dir < 2; dir++) {
			fd = bpf_link_create(prog_fd(skel, dir), opt.devs[d].ifindex,
					     dir == NETMON_RX ? BPF_TCX_INGRESS : BPF_TCX_EGRESS,
					     NULL);
			if (fd < 0)
				return fd;
			tcx_fd[d][dir] = fd;
			tcx_on[d][dir] = 1;
		}
	return 0;
}

static int attach_clsact(struct netmon_bpf *skel, int d)
{
	int dir, err;

	for (dir = 0; dir < 2; dir++) {
		struct bpf_tc_hook *h = &hooks[d][dir];
		struct bpf_tc_opts *o = &tcopts[d][dir];

		memset(h, 0, sizeof(*h));
		h->sz = sizeof(*h);
		h->ifindex = opt.devs[d].ifindex;
		h->attach_point = dir == NETMON_RX ? BPF_TC_INGRESS : BPF_TC_EGRESS;
		err = bpf_tc_hook_create(h);
		if (err && err != -EEXIST) {
			fprintf(stderr, "collx-netmon: clsact on %s: %s\n", opt.devs[d].name,
				strerror(-err));
			return err;
		}
		memset(o, 0, sizeof(*o));
		o->sz = sizeof(*o);
		o->handle = TC_HANDLE;
		o->priority = TC_PRIO;
		o->prog_fd = prog_fd(skel, dir);
		/* replaces the filter a killed instance left behind */
		o->flags = BPF_TC_F_REPLACE;
		err = bpf_tc_attach(h, o);
		if (err) {
			fprintf(stderr, "collx-netmon: tc %s on %s: %s\n",
				dir == NETMON_RX ? "ingress" : "egress", opt.devs[d].name,
				strerror(-err));
			return err;
		}
		tc_attached[d][dir] = 1;
	}
	return 0;
}

int nm_attach_tc(struct netmon_bpf *skel)
{
	int d, err;

	err = attach_tcx(skel);
	if (!err) {
		mode = "tcx";
		return 0;
	}
	nm_detach_tc();
	/* EINVAL: this kernel has no tcx attach type (before 6.6) */
	if (err != -EINVAL)
		return err;
	for (d = 0; d < opt.ndevs; d++) {
		err = attach_clsact(skel, d);
		if (err)
			return err;
	}
	mode = "tc";
	return 0;
}

void nm_detach_tc(void)
{
	int d, dir;

	for (d = 0; d < opt.ndevs; d++)
		for (dir = 0; dir < 2; dir++) {
			if (tcx_on[d][dir]) {
				close(tcx_fd[d][dir]);
				tcx_on[d][dir] = 0;
			}
			/* only our filters: the clsact qdisc may hold others */
			if (tc_attached[d][dir]) {
				tcopts[d][dir].prog_fd = 0;
				tcopts[d][dir].prog_id = 0;
				tcopts[d][dir].flags = 0;
				bpf_tc_detach(&hooks[d][dir], &tcopts[d][dir]);
				tc_attached[d][dir] = 0;
			}
		}
}

int nm_explain(int err, const char *what)
{
	if (err == -EPERM || err == -EACCES)
		fprintf(stderr, "collx-netmon: %s: %s: needs CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN "
			"(run as root)\n", what, strerror(-err));
	else
		fprintf(stderr, "collx-netmon: %s: %s\n", what, strerror(-err));
	return 1;
}
