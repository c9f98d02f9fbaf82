// SPDX-License-Identifier: GPL-2.0
/*
 * collx: debugfs, a leaf: it shows what others hand it.
 *
 *   /sys/kernel/debug/collx/stats          module-wide counters
 *   /sys/kernel/debug/collx/<comm>/state   a communicator, its connections
 *                                          and running ops: which peer
 *                                          each waits for, and how long
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "collx_loc.h"

struct collx_stats collx_stats;
static struct dentry *collx_debugfs_root;

static int collx_stats_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "comms %d\n", atomic_read(&collx_stats.comms));
	seq_printf(m, "mrs %d\n", atomic_read(&collx_stats.mrs));
	seq_printf(m, "qps %d\n", atomic_read(&collx_stats.qps));
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

/**
 * struct collx_debugfs_file - a show callback and its data
 * @show: prints the file
 * @data: handed to @show
 * @dir: its folder
 */
struct collx_debugfs_file {
	int (*show)(struct seq_file *m, void *data);
	void *data;
	struct dentry *dir;
};

static int collx_obj_show(struct seq_file *m, void *unused)
{
	struct collx_debugfs_file *f = m->private;

	return f->show(m, f->data);
}
DEFINE_SHOW_ATTRIBUTE(collx_obj);

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
 * collx_debugfs_comm_add() - publish an object's state file
 * @id: the folder's name (a comm's module-wide id)
 * @data: handed to @show
 * @show: prints the state
 *
 * Context: process context.
 * Return: a handle for collx_debugfs_comm_remove(), or NULL.
 */
struct collx_debugfs_file *collx_debugfs_comm_add(u32 id, void *data,
						  int (*show)(struct seq_file *,
							      void *))
{
	struct collx_debugfs_file *f;
	struct dentry *dir;
	char name[16];

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return NULL;
	f->show = show;
	f->data = data;
	snprintf(name, sizeof(name), "%u", id);
	dir = debugfs_create_dir(name, collx_debugfs_root);
	debugfs_create_file("state", 0444, dir, f, &collx_obj_fops);
	f->dir = dir;
	return f;
}

/**
 * collx_debugfs_comm_remove() - withdraw it; waits for readers
 * @f: what collx_debugfs_comm_add() returned, or NULL
 *
 * Context: process context; not with a lock the show callback takes.
 */
void collx_debugfs_comm_remove(struct collx_debugfs_file *f)
{
	if (!f)
		return;
	debugfs_remove_recursive(f->dir);
	kfree(f);
}
