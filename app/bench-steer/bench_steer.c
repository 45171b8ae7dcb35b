/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * swverbs steering benchmark: insert and delete rates at the swverbs API,
 * memory per rule, and frames/s through one device on a loop wire with 1
 * rule and with N rules of the same mask (eth/IPv4 dst/UDP dst), the
 * traffic spread over the rules.
 *
 *   bench-steer [rules] [seconds]     (default 1000000 rules, 1 s)
 */

#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "swv_test_util.h"

#define NFRAMES 4096
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

static struct ibv_flow *
rule(struct ibv_qp *qp, uint32_t dst)
{
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
		struct ibv_flow_spec_ipv4_ext ip;
		struct ibv_flow_spec_tcp_udp udp;
	} f;

	memset(&f, 0, sizeof(f));
	f.attr.type = IBV_FLOW_ATTR_NORMAL;
	f.attr.size = sizeof(f);
	f.attr.num_of_specs = 3;
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

/* Frames/s delivered to rqp over secs, the frames spread over nrules. */
static double
run(struct tdev *d, struct ibv_mr *tmr, struct ibv_mr *rmr, uint32_t nrules,
    double secs)
{
	struct swv_port_counters c0, c1;
	struct ibv_wc wc[64];
	double t0, t1;
	unsigned int i, k = 0;
	int n;

	for (i = 0; i < NFRAMES; i++)
		frame(frames[i], d->mac,
		      0x0a000000 + (uint32_t)(((uint64_t)i * 2654435761u) %
					      nrules));
	swv_query_port_counters(d->ctx, &c0);
	t0 = now_s();
	do {
		for (i = 0; i < 32; i++, k++)
			if (t_send(d->sqp, tmr, frames[k % NFRAMES], FLEN, 0)
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

int
main(int argc, char **argv)
{
	uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 1000000;
	double secs = argc > 2 ? atof(argv[2]) : 1.0, t0, t1, one, many;
	struct ibv_flow **fl;
	struct ibv_mr *tmr, *rmr;
	struct mallinfo2 m0, m1;
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
	if (fl == NULL || tmr == NULL || rmr == NULL)
		return 1;
	fl[0] = rule(d.rqp, 0x0a000000);
	one = run(&d, tmr, rmr, 1, secs);
	m0 = mallinfo2();
	t0 = now_s();
	for (i = 1; i < n; i++) {
		fl[i] = rule(d.rqp, 0x0a000000 + i);
		if (fl[i] == NULL) {
			fprintf(stderr, "rule %u: %s\n", i, strerror(errno));
			return 1;
		}
	}
	t1 = now_s();
	m1 = mallinfo2();
	printf("insert: %u rules in %.3f s: %.0f rules/s\n", n - 1, t1 - t0,
	       (n - 1) / (t1 - t0));
	printf("memory: %.1f bytes/rule (heap in use)\n",
	       (double)(m1.uordblks + m1.hblkhd - m0.uordblks - m0.hblkhd) /
	       (n - 1));
	many = run(&d, tmr, rmr, n, secs);
	printf("loop wire, 64 B frames: 1 rule %.3f Mfps, %u rules %.3f Mfps "
	       "(%+.1f%%)\n", one / 1e6, n, many / 1e6,
	       (many - one) / one * 100);
	t0 = now_s();
	for (i = 1; i < n; i++)
		swv_destroy_flow(fl[i]);
	t1 = now_s();
	printf("delete: %.0f rules/s\n", (n - 1) / (t1 - t0));
	swv_destroy_flow(fl[0]);
	free(fl);
	swv_dereg_mr(tmr);
	swv_dereg_mr(rmr);
	t_teardown(&d);
	return 0;
}
