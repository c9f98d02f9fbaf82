// SPDX-License-Identifier: GPL-2.0
/*
 * collx: debugfs.
 *
 *   /sys/kernel/debug/collx/stats          module-wide counters
 *   /sys/kernel/debug/collx/<comm>/state   a communicator, its connections
 *                                          and in-flight ops: which peer
 *                                          each op waits for, and how long
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "collx_loc.h"

struct collx_stats collx_stats;
static struct dentry *collx_debugfs_root;

static int collx_stats_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "comms %d\n", atomic_read(&collx_stats.comms));
	seq_printf(m, "mrs %d\n", atomic_read(&collx_stats.mrs));
	seq_printf(m, "pinned_pages %lld\n",
		   (long long)atomic64_read(&collx_stats.pinned_pages));
	seq_printf(m, "ops_in_flight %d\n", atomic_read(&collx_stats.ops));
	seq_printf(m, "ops_done %lld\n",
		   (long long)atomic64_read(&collx_stats.ops_done));
	seq_printf(m, "ops_failed %lld\n",
		   (long long)atomic64_read(&collx_stats.ops_failed));
	seq_printf(m, "bytes_written %lld\n",
		   (long long)atomic64_read(&collx_stats.bytes_written));
	seq_printf(m, "bytes_zero_copy %lld\n",
		   (long long)atomic64_read(&collx_stats.bytes_zero_copy));
	seq_printf(m, "bytes_placed %lld\n",
		   (long long)atomic64_read(&collx_stats.bytes_placed));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(collx_stats);

static int collx_state_show(struct seq_file *m, void *unused)
{
	collx_engine_describe(m->private, m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(collx_state);

/**
 * collx_debugfs_init() - create /sys/kernel/debug/collx
 *
 * Context: module init.  debugfs failures are not errors.
 */
void collx_debugfs_init(void)
{
	collx_debugfs_root = debugfs_create_dir("collx", NULL);
	debugfs_create_file("stats", 0444, collx_debugfs_root, NULL,
			    &collx_stats_fops);
}

/**
 * collx_debugfs_exit() - remove /sys/kernel/debug/collx
 *
 * Context: module exit.
 */
void collx_debugfs_exit(void)
{
	debugfs_remove_recursive(collx_debugfs_root);
}

/**
 * collx_debugfs_comm_add() - publish a communicator's state file
 * @comm: the communicator
 *
 * Context: process context.
 */
void collx_debugfs_comm_add(struct collx_comm *comm)
{
	char name[16];

	snprintf(name, sizeof(name), "%u", comm->id);
	comm->debugfs = debugfs_create_dir(name, collx_debugfs_root);
	debugfs_create_file("state", 0444, comm->debugfs, comm,
			    &collx_state_fops);
}

/**
 * collx_debugfs_comm_remove() - withdraw it; waits for readers
 * @comm: the communicator
 *
 * Context: process context; not with @comm->lock held.
 */
void collx_debugfs_comm_remove(struct collx_comm *comm)
{
	debugfs_remove_recursive(comm->debugfs);
	comm->debugfs = NULL;
}
