/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * swverbs steering benchmark: insert and delete rates at the swverbs API,
 * memory per rule, and frames/s through one device on a loop wire with 1
 * rule and with N rules of the same mask (eth/IPv4 dst/UDP dst): the same
 * frame over and over (one rule hit), and the traffic spread over
 * min(N, 65536) rules (frames cycling over them, every lookup a likely cache
 * miss). Memory per rule is given both as heap in use and as resident set
 * growth (the device may carve rules from its own chunks). Then frames/s through 1 rule without and
 * with a COUNT action (a counters object with packets and bytes), measured
 * alternately, best of 3 each.
 *
 *   bench-steer [rules] [seconds] [count]
 *       (default 1000000 rules, 1 s; count = 1: every rule counts into its
 *       own counters object, so insert/delete rates and memory per rule are
 *       those of counted rules)
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "swv_test_util.h"

#define NFRAMES 65536	/* spread traffic: up to this many rules hit */
#define FLEN 64

static uint8_t frames[NFRAMES][FLEN];
static uint8_t rxarea[512 * 2048];

static double
now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* A counters object with packets at 0 and bytes at 1, or NULL. */
static struct ibv_counters *
counters_pb(struct ibv_context *ctx)
{
	struct ibv_counters_init_attr ia = { .comp_mask = 0 };
	struct ibv_counter_attach_attr a = { .counter_desc = IBV_COUNTER_PACKETS };
	struct ibv_counters *c = swv_create_counters(ctx, &ia);

	if (c == NULL)
		return NULL;
	if (swv_attach_counters_point_flow(c, &a, NULL) == 0) {
		a.counter_desc = IBV_COUNTER_BYTES;
		a.index = 1;
		if (swv_attach_counters_point_flow(c, &a, NULL) == 0)
			return c;
	}
	swv_destroy_counters(c);
	return NULL;
}

/* The rule for dst, with a COUNT action into cnt unless it is NULL. */
static struct ibv_flow *
rule(struct ibv_qp *qp, uint32_t dst, struct ibv_counters *cnt)
{
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
		struct ibv_flow_spec_ipv4_ext ip;
		struct ibv_flow_spec_tcp_udp udp;
		uint8_t count[sizeof(struct ibv_flow_spec_counter_action)];
	} f;
	struct ibv_flow_spec_counter_action ca = {
		.type = IBV_FLOW_SPEC_ACTION_COUNT,
		.size = sizeof(ca),
		.counters = cnt,
	};

	/* The specs follow each other with no padding (the count spec is
	 * copied in as bytes, it would otherwise be aligned).
	 */
	memset(&f, 0, sizeof(f));
	f.attr.type = IBV_FLOW_ATTR_NORMAL;
	f.attr.size = offsetof(__typeof__(f), count);
	f.attr.num_of_specs = 3;
	if (cnt != NULL) {
		memcpy(f.count, &ca, sizeof(ca));
		f.attr.size += sizeof(ca);
		f.attr.num_of_specs++;
	}
	f.attr.port = 1;
	f.eth.type = IBV_FLOW_SPEC_ETH;
	f.eth.size = sizeof(f.eth);
	f.ip.type = IBV_FLOW_SPEC_IPV4_EXT;
	f.ip.size = sizeof(f.ip);
	f.ip.val.dst_ip = htonl(dst);
	f.ip.mask.dst_ip = 0xffffffff;
	f.udp.type = IBV_FLOW_SPEC_UDP;
	f.udp.size = sizeof(f.udp);
	f.udp.val.dst_port = htons(4000);
	f.udp.mask.dst_port = 0xffff;
	return swv_create_flow(qp, &f.attr);
}

static void
frame(uint8_t *b, const uint8_t *mac, uint32_t dst)
{
	memset(b, 0, FLEN);
	memcpy(b, mac, 6);
	memcpy(b + 6, mac, 6);
	b[12] = 0x08;
	b[14] = 0x45;
	b[22] = 64;
	b[23] = 17;
	dst = htonl(dst);
	memcpy(b + 30, &dst, 4);
	b[36] = 4000 >> 8;
	b[37] = 4000 & 0xff;
}

/*
 * Frames/s delivered to rqp over secs, the frames spread over nrules (1:
 * every frame hits rule 0).
 */
static double
run(struct tdev *d, struct ibv_mr *tmr, struct ibv_mr *rmr, uint32_t nrules,
    double secs)
{
	struct swv_port_counters c0, c1;
	struct ibv_wc wc[64];
	double t0, t1;
	/* As many frame buffers as rules hit, at least 4096. */
	unsigned int i, k = 0, nf = nrules <= 4096 ? 4096 : NFRAMES;
	int n;

	for (i = 0; i < nf; i++)
		frame(frames[i], d->mac,
		      0x0a000000 + (uint32_t)(((uint64_t)i * 2654435761u) %
					      nrules));
	swv_query_port_counters(d->ctx, &c0);
	t0 = now_s();
	do {
		for (i = 0; i < 32; i++, k++)
			if (t_send(d->sqp, tmr, frames[k % nf], FLEN, 0)
			    != 0)
				break;
		while ((n = ibv_poll_cq(d->scq, 64, wc)) > 0)
			;
		while ((n = ibv_poll_cq(d->rcq, 64, wc)) > 0)
			for (i = 0; i < (unsigned int)n; i++)
				t_recv(d->rqp, rmr, rxarea + (wc[i].wr_id %
							      512) * 2048,
				       2048, wc[i].wr_id);
		t1 = now_s();
	} while (t1 - t0 < secs);
	swv_query_port_counters(d->ctx, &c1);
	if (c1.rx_no_match != c0.rx_no_match)
		fprintf(stderr, "unexpected no_match: %" PRIu64 "\n",
			c1.rx_no_match - c0.rx_no_match);
	return (double)(c1.rx_frames - c0.rx_frames) / (t1 - t0);
}

/* Resident set size in bytes, or 0. */
static uint64_t
rss_bytes(void)
{
	unsigned long size, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f == NULL)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &res) != 2)
		res = 0;
	fclose(f);
	return (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE);
}

/*
 * 1 rule without and with COUNT, alternately, best of 3 each; the counted
 * values checked against the port's. fl0 is the plain rule, kept on return.
 */
static int
count_cost(struct tdev *d, struct ibv_mr *tmr, struct ibv_mr *rmr,
	   struct ibv_flow **fl0, double secs)
{
	struct swv_port_counters c0, c1;
	double plain = 0, counted = 0, r;
	struct ibv_counters *cnt;
	struct ibv_flow *f;
	uint64_t v[2];
	int i;

	for (i = 0; i < 3; i++) {
		r = run(d, tmr, rmr, 1, secs);
		plain = r > plain ? r : plain;
		usleep(20000);	/* the plain run's last frames */
		swv_destroy_flow(*fl0);
		cnt = counters_pb(d->ctx);
		f = cnt == NULL ? NULL : rule(d->rqp, 0x0a000000, cnt);
		if (f == NULL) {
			fprintf(stderr, "counted rule: %s\n", strerror(errno));
			return -1;
		}
		swv_query_port_counters(d->ctx, &c0);
		r = run(d, tmr, rmr, 1, secs);
		counted = r > counted ? r : counted;
		usleep(20000);	/* frames still in the wire */
		swv_query_port_counters(d->ctx, &c1);
		swv_read_counters(cnt, v, 2, 0);
		swv_destroy_flow(f);
		swv_destroy_counters(cnt);
		if (v[0] != c1.rx_frames - c0.rx_frames ||
		    v[1] != c1.rx_bytes - c0.rx_bytes) {
			fprintf(stderr, "COUNT %" PRIu64 "/%" PRIu64 " != port %"
				PRIu64 "/%" PRIu64 "\n", v[0], v[1],
				c1.rx_frames - c0.rx_frames,
				c1.rx_bytes - c0.rx_bytes);
			return -1;
		}
		*fl0 = rule(d->rqp, 0x0a000000, NULL);
		if (*fl0 == NULL)
			return -1;
	}
	printf("loop wire, 64 B frames, 1 rule: %.3f Mfps, with COUNT %.3f "
	       "Mfps (%+.1f%%), best of 3 each\n", plain / 1e6,
	       counted / 1e6, (counted - plain) / plain * 100);
	return 0;
}

int
main(int argc, char **argv)
{
	uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 1000000;
	double secs = argc > 2 ? atof(argv[2]) : 1.0, t0, t1, one, many, same;
	bool count = argc > 3 && atoi(argv[3]) != 0;
	struct ibv_counters **cl = NULL;
	struct ibv_flow **fl;
	struct ibv_mr *tmr, *rmr;
	struct mallinfo2 m0, m1;
	uint64_t r0, r1;
	struct tdev d;
	uint32_t i;

	if (n == 0 || t_setup(&d, "bsteer", "loop") != 0) {
		fprintf(stderr, "setup failed\n");
		return 1;
	}
	tmr = swv_reg_mr(d.pd, frames, sizeof(frames), 0);
	rmr = swv_reg_mr(d.pd, rxarea, sizeof(rxarea),
			 IBV_ACCESS_LOCAL_WRITE);
	for (i = 0; i < 256; i++)
		t_recv(d.rqp, rmr, rxarea + i * 2048, 2048, i);
	fl = calloc(n, sizeof(*fl));
	if (count)
		cl = calloc(n, sizeof(*cl));
	if (fl == NULL || tmr == NULL || rmr == NULL || (count && cl == NULL))
		return 1;
	fl[0] = rule(d.rqp, 0x0a000000, NULL);
	if (fl[0] == NULL || count_cost(&d, tmr, rmr, &fl[0], secs) != 0)
		return 1;
	one = run(&d, tmr, rmr, 1, secs);
	m0 = mallinfo2();
	r0 = rss_bytes();
	t0 = now_s();
	for (i = 1; i < n; i++) {
		if (count) {
			cl[i] = counters_pb(d.ctx);
			if (cl[i] == NULL) {
				fprintf(stderr, "counters %u: %s\n", i,
					strerror(errno));
				return 1;
			}
		}
		fl[i] = rule(d.rqp, 0x0a000000 + i, count ? cl[i] : NULL);
		if (fl[i] == NULL) {
			fprintf(stderr, "rule %u: %s\n", i, strerror(errno));
			return 1;
		}
	}
	t1 = now_s();
	m1 = mallinfo2();
	r1 = rss_bytes();
	printf("insert: %u %srules in %.3f s: %.0f rules/s\n", n - 1,
	       count ? "counted " : "", t1 - t0, (n - 1) / (t1 - t0));
	printf("memory: %.1f bytes/rule (heap in use), %.1f bytes/rule "
	       "(resident set growth)\n",
	       (double)(m1.uordblks + m1.hblkhd - m0.uordblks - m0.hblkhd) /
	       (n - 1), (double)(r1 - r0) / (n - 1));
	same = run(&d, tmr, rmr, 1, secs);
	many = run(&d, tmr, rmr, n, secs);
	printf("loop wire, 64 B frames: 1 rule %.3f Mfps; %u rules: one rule "
	       "hit %.3f Mfps (%+.1f%%), spread over %u rules %.3f Mfps "
	       "(%+.1f%%)\n", one / 1e6, n, same / 1e6,
	       (same - one) / one * 100, n < NFRAMES ? n : NFRAMES,
	       many / 1e6, (many - one) / one * 100);
	t0 = now_s();
	for (i = 1; i < n; i++) {
		swv_destroy_flow(fl[i]);
		if (count)
			swv_destroy_counters(cl[i]);
	}
	t1 = now_s();
	printf("delete: %.0f rules/s\n", (n - 1) / (t1 - t0));
	swv_destroy_flow(fl[0]);
	free(fl);
	free(cl);
	swv_dereg_mr(tmr);
	swv_dereg_mr(rmr);
	t_teardown(&d);
	return 0;
}
