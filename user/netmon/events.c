// SPDX-License-Identifier: GPL-2.0
/*
 * The ring-buffer consumer: every event feeds the attribution, and with
 * --events it is also written as one JSON line.  The first line of that
 * file pairs CLOCK_MONOTONIC (the events' clock) with CLOCK_REALTIME, so
 * runs of several nodes can be put on one time axis (tests/plots).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <json-c/json.h>
#include "main.h"

static FILE *events_f;
static unsigned int budget;

/*
 * ring_buffer__poll() hands over samples until the ring is empty.  Under a
 * steady stream (rxe frees ~20 packets per chunk, each a kfree_skb event)
 * a consumer sharing one slow CPU with the job finds it never empty and
 * never returns: the exporter then served the snapshot of netmon's start
 * for a whole run.  A negative return from the callback ends the poll
 * after that sample (libbpf keeps the rest), so the loop gets back to its
 * timers; 0 lifts the limit, for the last drain.
 */
void events_budget(unsigned int samples)
{
	budget = samples;
}

static void put_line(json_object *o)
{
	fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), events_f);
	fputc('\n', events_f);
	json_object_put(o);
}

int events_open(const char *path)
{
	struct timespec mono, real;
	char host[256] = "";
	json_object *o;

	events_f = fopen(path, "w");
	if (!events_f) {
		fprintf(stderr, "collx-netmon: %s: %s\n", path, strerror(errno));
		return -1;
	}
	gethostname(host, sizeof(host) - 1);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	o = json_object_new_object();
	json_object_object_add(o, "type", json_object_new_string("clock"));
	json_object_object_add(o, "host", json_object_new_string(host));
	json_object_object_add(o, "mono_ns",
			       json_object_new_uint64(mono.tv_sec * 1000000000ULL + mono.tv_nsec));
	json_object_object_add(o, "realtime_ns",
			       json_object_new_uint64(real.tv_sec * 1000000000ULL + real.tv_nsec));
	put_line(o);
	return 0;
}

void events_close(void)
{
	if (events_f)
		fclose(events_f);
	events_f = NULL;
}

static void log_event(const struct netmon_event *e)
{
	char n[IF_NAMESIZE], a[INET6_ADDRSTRLEN];
	json_object *o = json_object_new_object();

	json_object_object_add(o, "ts", json_object_new_uint64(e->ts));
	json_object_object_add(o, "type", json_object_new_string(ev_name(e->type)));
	if (e->type >= EV_PFC) {
		json_object_object_add(o, "dev", json_object_new_string(ifname(e->ifindex, n)));
		json_object_object_add(o, "dir", json_object_new_string(dir_name(e->dir)));
		if (e->type != EV_PFC && e->type != EV_PAUSE)
			json_object_object_add(o, "addr", json_object_new_string(
				addr_str(e->family ? e->family : 4, e->addr, a, sizeof(a))));
	} else {
		json_object_object_add(o, "comm", json_object_new_int64(e->comm_id));
		json_object_object_add(o, "op", json_object_new_uint64(e->op_id));
		json_object_object_add(o, "coll", json_object_new_int((int)e->coll));
		json_object_object_add(o, "peer", json_object_new_int((int)e->peer));
		json_object_object_add(o, "phase", json_object_new_int64(e->phase));
		json_object_object_add(o, "status", json_object_new_int(e->status));
	}
	json_object_object_add(o, "a", json_object_new_uint64(e->a));
	json_object_object_add(o, "b", json_object_new_uint64(e->b));
	json_object_object_add(o, "c", json_object_new_uint64(e->c));
	put_line(o);
}

int events_on_sample(void *ctx, void *data, size_t len)
{
	const struct netmon_event *e = data;

	(void)ctx;
	if (len < sizeof(*e))
		return 0;
	/* rxe frees every packet it consumed with kfree_skb: not a drop */
	if (e->type != EV_DROP || strcmp(drop_class(e->a, e->c), "rxe"))
		attrib_event(&attr, e);
	if (events_f)
		log_event(e);
	if (budget && !--budget)
		return -EAGAIN;
	return 0;
}
