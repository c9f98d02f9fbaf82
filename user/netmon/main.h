/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx-netmon: what the files of user/netmon share (one file per concern,
 * as bpftool is split): the options, the snapshot of the BPF maps, and the
 * prototypes, grouped by the file that defines them.
 */
#ifndef COLLX_NETMON_MAIN_H
#define COLLX_NETMON_MAIN_H

#include <stdint.h>
#include <stdio.h>
#include <net/if.h>
#include <linux/types.h>
#include "netmon.h"
#include "attrib.h"
#include "hw.h"

#ifndef COLLX_VERSION
#define COLLX_VERSION "0.1.0"
#endif

#define MAX_DEVS	8
/* Collectives netmon names (enum collx_coll); others count as one more. */
#define COLLX_NCOLL	9
/* The exposition and the textfile are refreshed this often. */
#define PUBLISH_NS	1000000000ULL
/* Ring-buffer samples one poll hands over before the timers' turn. */
#define EVENTS_PER_POLL	256

struct nm_dev {
	char name[IF_NAMESIZE];
	int ifindex;
	uint64_t mbps;
	int speed_assumed;
};

struct nm_opts {
	struct nm_dev devs[MAX_DEVS];
	int ndevs;
	double interval, duration;
	uint64_t speed_override;
	int all_drops, hw_all, keep_pins, no_pin, no_tc, verbose, top;
	const char *json_path, *table_path, *listen, *textfile, *events_path;
	const char *ready_file, *lock_path;
	int json, table;
};

extern struct nm_opts opt;
extern struct attrib attr;
/* CLOCK_MONOTONIC at start: the table's and the ops' time origin. */
extern uint64_t t0_mono;

/* Rows of the maps, as dumped: key then value. */
struct pfc_row { struct pfc_key k; struct pfc_val v; };
struct roce_row { struct roce_key k; struct roce_val v; };
struct drop_row { struct drop_key k; struct drop_val v; };
struct lat_row { struct lat_key k; struct lat_val v; };

struct snapshot {
	uint64_t mono;
	struct pfc_row *pfc;
	int npfc;
	struct roce_row *roce;
	int nroce;
	struct drop_row *drop;
	int ndrop;
	struct lat_row *lat;
	int nlat;
	struct hw_set hw;
	uint64_t lost;
	uint64_t kfree_shape;
};

struct netmon_bpf;

/* snapshot.c */
uint64_t now_ns(void);
void snapshot_take(struct netmon_bpf *skel, struct snapshot *s);
void snapshot_free(struct snapshot *s);
/* Move @cur into @prev (for rates), leaving @cur empty. */
void snapshot_rotate(struct snapshot *prev, struct snapshot *cur);
const struct pfc_val *snapshot_pfc(const struct snapshot *s, const struct pfc_key *k);
const struct roce_val *snapshot_roce(const struct snapshot *s, const struct roce_key *k);
const struct drop_val *snapshot_drop(const struct snapshot *s, const struct drop_key *k);
const struct lat_val *snapshot_lat(const struct snapshot *s, const struct lat_key *k);
uint64_t pfc_paused_now(const struct pfc_val *v, uint64_t now);
uint64_t hist_quantile(const struct lat_val *v, double q);

/* names.c */
void names_init(void);
const char *coll_name(uint32_t coll);
const char *reason_name(uint32_t reason);
const char *drop_class(uint32_t reason, uint64_t location);
const char *ifname(uint32_t ifindex, char *buf);
const char *addr_str(uint8_t family, const uint8_t *a, char *buf, size_t len);
const char *dir_name(int dir);
const char *kind_name(int kind);
const char *ev_name(uint32_t type);

/* ksyms.c */
void ksyms_load(void);
const char *ksym_name(uint64_t addr);

/* attach.c */
int nm_lock(const char *path);
int nm_check_caps(void);
int nm_pin_maps(struct netmon_bpf *skel);
void nm_unpin_maps(struct netmon_bpf *skel);
int nm_attach_tc(struct netmon_bpf *skel);
void nm_detach_tc(void);
/* "tcx" or "tc" once attached, "none" with --no-tc. */
const char *nm_attach_mode(void);
int nm_explain(int err, const char *what);

/* table.c */
void table_print(FILE *f, const struct snapshot *s, const struct snapshot *prev, int final);

/* json.c */
void json_print(FILE *f, const struct snapshot *s, int final);

/* events.c */
int events_open(const char *path);
void events_close(void);
int events_on_sample(void *ctx, void *data, size_t len);
void events_budget(unsigned int samples);

/* prom.c */
void prom_render(FILE *f, const struct snapshot *s, const struct attrib *a);
int prom_write_textfile(const char *path, const struct snapshot *s, const struct attrib *a);

/* http.c */
int http_check(const char *addr);	/* the address parses and resolves */
int http_start(const char *addr);
void http_publish(const struct snapshot *s, const struct attrib *a);
void http_stop(void);

#endif
