/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * swverbs flow caches (the EMC and SMC in front of the subtables): a frame
 * of a flow the caches have seen must get what the rules say now, not what
 * they said when it was cached. Between frames of the same flows: a better
 * rule created (with a mask over bits no rule looked at before), the
 * matching rule destroyed, replaced by one with another action, a flow
 * that matched nothing gaining a rule, an equal-priority rule that must not
 * take over; thousands of flows (more than the EMC holds, so the SMC
 * answers) before and after a change; a table growing past the caches'
 * size; rules churned by another thread while frames flow; random rules
 * against a model of the priority rules; the EMC's insertion and bypass
 * policy (a steady flow cached, spread flows turning it off, no entry used
 * after its rule changed while it was off). Every case runs
 * over eight extra subtables that no frame matches, so that the caches are
 * in use, and checks with the device's lookup tallies
 * (swv_query_cls_stats()) that the caches answered the frames sent again.
 * One device on a loop wire, full profile.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "swv_priv.h"
#include "swv_test_util.h"
#include "swv_test_frames.h"

#define FRAME_SZ 128
#define NTX 64			/* frames in flight, at most */
#define NRECV 256
#define NFILL 8
#define SRC0 0x0a000000u	/* sources: SRC0 + flow */
#define DST 0x0b000001u

static uint8_t txarea[NTX * FRAME_SZ];
static uint8_t rxarea[2 * NRECV * 2048];
static struct tdev d;
static struct ibv_mr *tmr, *rmr;
static struct ibv_qp *q2;
static struct ibv_flow *fill[NFILL];

enum outcome { O_ERR = -1, O_NOMATCH, O_RQP, O_Q2, O_DROP, O_N };

/* wr_id 1 for rqp, 2 for q2. */
static int
restock(struct ibv_qp *qp, uint64_t id, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (t_recv(qp, rmr, rxarea + (id - 1) * NRECV * 2048, 2048,
			   id) != 0)
			return -1;
	return 0;
}

static void
flow_frame(struct fb *f, uint32_t flow, uint16_t dport, uint8_t ttl)
{
	f_eth(f, mac_a, 0, 0, 0x0800);
	f_ipv4(f, SRC0 + flow, DST, 17, 0, ttl, 0, 0);
	f_l4(f, 1000, dport, 0);
	f_pad(f);
}

/*
 * Send n frames (flows flow[0..n), dport 53, ttl 64 unless told) in bursts
 * of NTX and count where they went: got[outcome]. 0, or -1 when a frame
 * went missing.
 */
static int
blast(const uint32_t *flow, unsigned int n, const uint16_t *dport,
      unsigned int *got)
{
	struct swv_port_counters c0, c1;
	struct ibv_wc wc[NTX];
	unsigned int i, j, m, done;
	struct fb f;
	int k, r;

	for (i = 0; i < O_N; i++)
		got[i] = 0;
	for (i = 0; i < n; i += m) {
		m = n - i < NTX ? n - i : NTX;
		swv_query_port_counters(d.ctx, &c0);
		for (j = 0; j < m; j++) {
			flow_frame(&f, flow[i + j],
				   dport != NULL ? dport[i + j] : 53, 64);
			memcpy(txarea + j * FRAME_SZ, f.b, f.len);
			if (t_send(d.sqp, tmr, txarea + j * FRAME_SZ, f.len,
				   j) != 0)
				return -1;
		}
		if (t_poll(d.scq, wc, (int)m, 2000) != (int)m)
			return -1;
		T_WAIT((swv_query_port_counters(d.ctx, &c1),
			c1.rx_frames >= c0.rx_frames + m));
		if (c1.rx_frames != c0.rx_frames + m)
			return -1;
		got[O_NOMATCH] += (unsigned int)(c1.rx_no_match -
						 c0.rx_no_match);
		got[O_DROP] += (unsigned int)(c1.rx_dropped - c0.rx_dropped);
		done = (unsigned int)(c1.rx_delivered - c0.rx_delivered);
		for (j = 0; j < done; j += (unsigned int)r) {
			r = t_poll(d.rcq, wc, (int)(done - j), 2000);
			if (r <= 0)
				return -1;
			for (k = 0; k < r; k++) {
				if (wc[k].status != IBV_WC_SUCCESS)
					return -1;
				got[wc[k].wr_id == 1 ? O_RQP : O_Q2]++;
				if (restock(wc[k].wr_id == 1 ? d.rqp : q2,
					    wc[k].wr_id, 1) != 0)
					return -1;
			}
		}
	}
	return 0;
}

/* Lookups the caches (EMC or SMC) answered so far. */
static uint64_t
cache_hits(void)
{
	struct swv_cls_stats st;

	if (swv_query_cls_stats(d.ctx, &st) != 0)
		return 0;
	return st.emc_hits + st.smc_hits;
}

/* Where one frame of a flow went. */
static int
sendf(uint32_t flow, uint16_t dport)
{
	unsigned int got[O_N], i;

	if (blast(&flow, 1, &dport, got) != 0)
		return O_ERR;
	for (i = 0; i < O_N; i++)
		if (got[i] == 1)
			return (int)i;
	return O_ERR;
}

/* A NORMAL rule: source (prefix bits, 0: none), dst port (0: none). */
static struct ibv_flow *
rule(uint16_t prio, uint32_t src, unsigned int plen, uint16_t dport,
     struct ibv_qp *qp, bool drop)
{
	struct ibv_flow_spec_ipv4_ext *ip;
	struct ibv_flow_spec_tcp_udp *l4;
	struct rb r;

	r_init(&r, IBV_FLOW_ATTR_NORMAL, prio);
	ip = r_ip4(&r, false);
	if (plen > 0) {
		ip->val.src_ip = htonl(src);
		ip->mask.src_ip = htonl(plen == 32 ? UINT32_MAX :
					~(UINT32_MAX >> plen));
	}
	if (dport != 0) {
		l4 = r_l4(&r, false, false);
		l4->val.dst_port = htons(dport);
		l4->mask.dst_port = 0xffff;
	}
	if (drop)
		r_add(&r, IBV_FLOW_SPEC_ACTION_DROP,
		      sizeof(struct ibv_flow_spec_action_drop));
	return r_create(&r, qp);
}

#define CHECK(flow, dport, want, what) \
	TEST_ASSERT_EQUAL(sendf((flow), (dport)), (want), "%s", what)

static int
setup(void)
{
	struct ibv_flow_spec_ipv4_ext *ip;
	struct rb r;
	unsigned int i;

	if (t_setup_full(&d, "cls", "loop") != 0)
		return -1;
	tmr = swv_reg_mr(d.pd, txarea, sizeof(txarea), 0);
	rmr = swv_reg_mr(d.pd, rxarea, sizeof(rxarea), IBV_ACCESS_LOCAL_WRITE);
	q2 = t_raw_qp(&d, 1, NRECV, 1, 0);
	if (tmr == NULL || rmr == NULL || q2 == NULL ||
	    t_qp_to(q2, IBV_QPS_RTR) != 0)
		return -1;
	if (restock(d.rqp, 1, NRECV) != 0 || restock(q2, 2, NRECV) != 0)
		return -1;
	/* Subtables no frame matches: dst 12.0.0.0 under 8 prefixes. */
	for (i = 0; i < NFILL; i++) {
		r_init(&r, IBV_FLOW_ATTR_NORMAL, 3);
		ip = r_ip4(&r, false);
		ip->val.dst_ip = htonl(0x0c000000);
		ip->mask.dst_ip = htonl(~(UINT32_MAX >> (24 + i)));
		fill[i] = r_create(&r, q2);
		if (fill[i] == NULL)
			return -1;
	}
	return 0;
}

/*
 * One flow, its rules changed between its frames: each frame must follow
 * the change.
 */
static int
test_rule_changes(void)
{
	struct ibv_flow *a, *b, *c;

	uint64_t h0;

	a = rule(5, SRC0 + 1, 32, 0, d.rqp, false);
	TEST_ASSERT_NOT_NULL(a, "");
	CHECK(1, 53, O_RQP, "");
	h0 = cache_hits();
	CHECK(1, 53, O_RQP, "a cached flow");
	TEST_ASSERT_EQUAL(cache_hits() - h0, 1, "not answered by a cache");
	CHECK(1, 54, O_RQP, "another port, the same answer");
	/* Better, on the port: bits no rule looked at so far. */
	b = rule(1, 0, 0, 53, q2, false);
	TEST_ASSERT_NOT_NULL(b, "");
	CHECK(1, 53, O_Q2, "a better rule created");
	CHECK(1, 54, O_RQP, "frames the new mask tells apart");
	CHECK(1, 53, O_Q2, "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(b), "");
	CHECK(1, 53, O_RQP, "the better rule destroyed");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(a), "");
	CHECK(1, 53, O_NOMATCH, "the matching rule destroyed");
	CHECK(1, 53, O_NOMATCH, "no match, cached");
	/* The same match back, with another action. */
	a = rule(5, SRC0 + 1, 32, 0, d.rqp, true);
	TEST_ASSERT_NOT_NULL(a, "");
	CHECK(1, 53, O_DROP, "a cached no-match, then a rule");
	CHECK(1, 53, O_DROP, "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(a), "");
	a = rule(5, SRC0 + 1, 32, 0, q2, false);
	TEST_ASSERT_NOT_NULL(a, "");
	CHECK(1, 53, O_Q2, "replaced: drop, then forward");
	/* Equal priority, another mask, created later: the earlier wins. */
	c = rule(5, SRC0, 24, 0, d.rqp, false);
	TEST_ASSERT_NOT_NULL(c, "");
	CHECK(1, 53, O_Q2, "an equal-priority rule created later");
	CHECK(2, 53, O_RQP, "a flow only the later one matches");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(a), "");
	CHECK(1, 53, O_RQP, "the earlier destroyed: the later one");
	/* Identical match and priority, created later: behind, then on. */
	a = rule(5, SRC0, 24, 0, q2, false);
	TEST_ASSERT_NOT_NULL(a, "");
	CHECK(1, 53, O_RQP, "an identical rule created later");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(c), "");
	CHECK(1, 53, O_Q2, "its twin destroyed");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(a), "");
	CHECK(1, 53, O_NOMATCH, "");
	TEST_ASSERT(t_counters_ok(d.ctx), "");
	return TEST_SUCCESS;
}

#define NFLOWS 3000
#define HI_LO 1024		/* flows [HI_LO, HI_LO + 256): src x.x.4.x */

/*
 * More flows than the EMC holds: the SMC answers most of them on the second
 * pass. A better rule over 256 of them, then gone: every flow follows.
 */
static int
test_many_flows(void)
{
	static uint32_t flow[NFLOWS];
	unsigned int got[O_N], i, pass;
	struct ibv_flow *all, *hi;
	uint64_t h0 = 0;

	for (i = 0; i < NFLOWS; i++)
		flow[i] = i;
	all = rule(5, SRC0, 16, 0, d.rqp, false);
	TEST_ASSERT_NOT_NULL(all, "");
	for (pass = 0; pass < 2; pass++) {
		h0 = cache_hits();
		TEST_ASSERT_SUCCESS(blast(flow, NFLOWS, NULL, got), "");
		TEST_ASSERT_EQUAL(got[O_RQP], NFLOWS, "pass %u", pass);
	}
	/* The second pass: the caches answer most (the SMC holds them). */
	TEST_ASSERT(cache_hits() - h0 >= NFLOWS / 2, "%" PRIu64 " cache hits "
		    "of %u", cache_hits() - h0, NFLOWS);
	hi = rule(2, SRC0 + HI_LO, 24, 0, q2, false);
	TEST_ASSERT_NOT_NULL(hi, "");
	for (pass = 0; pass < 2; pass++) {
		TEST_ASSERT_SUCCESS(blast(flow, NFLOWS, NULL, got), "");
		TEST_ASSERT_EQUAL(got[O_Q2], 256, "pass %u", pass);
		TEST_ASSERT_EQUAL(got[O_RQP], NFLOWS - 256, "pass %u", pass);
	}
	TEST_ASSERT_SUCCESS(swv_destroy_flow(hi), "");
	TEST_ASSERT_SUCCESS(blast(flow, NFLOWS, NULL, got), "");
	TEST_ASSERT_EQUAL(got[O_RQP], NFLOWS, "");
	hi = rule(2, SRC0 + HI_LO, 24, 0, q2, true);
	TEST_ASSERT_NOT_NULL(hi, "");
	TEST_ASSERT_SUCCESS(blast(flow, NFLOWS, NULL, got), "");
	TEST_ASSERT_EQUAL(got[O_DROP], 256, "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(all), "");
	TEST_ASSERT_SUCCESS(blast(flow, NFLOWS, NULL, got), "");
	TEST_ASSERT_EQUAL(got[O_DROP], 256, "");
	TEST_ASSERT_EQUAL(got[O_NOMATCH], NFLOWS - 256, "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(hi), "");
	TEST_ASSERT(t_counters_ok(d.ctx), "");
	return TEST_SUCCESS;
}

/* Send n frames of one flow; got[] adds up where they went. */
static int
steady(uint32_t fl, unsigned int n, unsigned int *got)
{
	static uint32_t one[NTX];
	unsigned int g[O_N], i, m;

	for (i = 0; i < NTX; i++)
		one[i] = fl;
	for (i = 0; i < O_N; i++)
		got[i] = 0;
	for (; n > 0; n -= m) {
		m = n < NTX ? n : NTX;
		if (blast(one, m, NULL, g) != 0)
			return -1;
		for (i = 0; i < O_N; i++)
			got[i] += g[i];
	}
	return 0;
}

static uint64_t
emc_hits(void)
{
	struct swv_cls_stats st;

	return swv_query_cls_stats(d.ctx, &st) != 0 ? 0 : st.emc_hits;
}

#define STEADY 7u			/* the steady flow */
#define NSPREAD 3000u			/* the spread flows, sent twice */
/* Enough lookups to end any skip, a trial window and one more. */
#define SETTLE ((SWV_EMC_SKIP_WINDOWS + 2) * SWV_EMC_WIN)

/*
 * The steady flow for SETTLE frames, then NTX more: all to want, the last
 * NTX answered by the EMC.
 */
static int
settle(int want, const char *what)
{
	unsigned int got[O_N];
	uint64_t e0;

	TEST_ASSERT_SUCCESS(steady(STEADY, SETTLE, got), "");
	TEST_ASSERT_EQUAL(got[want], SETTLE, "%s", what);
	e0 = emc_hits();
	TEST_ASSERT_SUCCESS(steady(STEADY, NTX, got), "");
	TEST_ASSERT_EQUAL(got[want], NTX, "%s", what);
	TEST_ASSERT_EQUAL(emc_hits() - e0, NTX, "%s: not in the EMC", what);
	return TEST_SUCCESS;
}

/*
 * The EMC's policy. A steady flow: the EMC answers its frames. Frames
 * spread over more flows than it holds: it answers none of them once a
 * window has shown it does not help (from 2 windows on, for the skipped
 * ones), the SMC does. A rule for the steady flow made while the EMC is
 * off, then destroyed: every frame follows, though the EMC held the flow's
 * old answer all along; and the EMC answers the flow again.
 */
static int
test_emc_policy(void)
{
	static uint32_t flow[2 * NSPREAD];
	struct swv_cls_stats s0, s1;
	struct ibv_flow *all, *lo, *hi;
	unsigned int got[O_N], i, skip;

	all = rule(5, SRC0, 16, 0, d.rqp, false);
	/* The steady flow's mask in the table: hi below keeps the caches. */
	lo = rule(9, SRC0 + STEADY, 32, 0, q2, false);
	TEST_ASSERT(all != NULL && lo != NULL, "");
	TEST_ASSERT_SUCCESS(settle(O_RQP, "a steady flow"), "");
	/* Spread, each flow twice; from 2 windows on the EMC is off. */
	for (i = 0; i < 2 * NSPREAD; i++)
		flow[i] = 1000 + i % NSPREAD;
	skip = 2 * SWV_EMC_WIN;
	TEST_ASSERT_SUCCESS(blast(flow, skip, NULL, got), "");
	TEST_ASSERT_EQUAL(got[O_RQP], skip, "");
	swv_query_cls_stats(d.ctx, &s0);
	TEST_ASSERT_SUCCESS(blast(flow + skip, 2 * NSPREAD - skip, NULL, got),
			    "");
	TEST_ASSERT_EQUAL(got[O_RQP], 2 * NSPREAD - skip, "");
	/* A better rule for the steady flow, the EMC still off. */
	hi = rule(2, SRC0 + STEADY, 32, 0, q2, false);
	TEST_ASSERT_NOT_NULL(hi, "");
	swv_query_cls_stats(d.ctx, &s1);
	TEST_ASSERT_EQUAL(s1.emc_hits - s0.emc_hits, 0,
			  "the EMC answered spread flows");
	TEST_ASSERT(s1.smc_hits - s0.smc_hits >= NSPREAD / 2,
		    "%" PRIu64 " SMC hits", s1.smc_hits - s0.smc_hits);
	TEST_ASSERT_SUCCESS(settle(O_Q2, "hi, made with the EMC off"), "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(hi), "");
	TEST_ASSERT_SUCCESS(steady(STEADY, NTX, got), "");
	TEST_ASSERT_EQUAL(got[O_RQP], NTX, "an answer from hi, now gone");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(lo), "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(all), "");
	TEST_ASSERT(t_counters_ok(d.ctx), "");
	return TEST_SUCCESS;
}

#define NGROW 2500

/*
 * One exact rule per flow, flows sent as the table grows past the size the
 * caches were made for (they are made again, larger): every flow still gets
 * its own rule; then every other rule destroyed, the catch-all answers.
 */
static int
test_grow(void)
{
	static struct ibv_flow *fl[NGROW];
	static uint32_t flow[NGROW];
	unsigned int got[O_N], i, n;
	struct ibv_flow *all;

	all = rule(7, SRC0, 16, 0, d.rqp, false);
	TEST_ASSERT_NOT_NULL(all, "");
	for (i = 0; i < NGROW; i++)
		flow[i] = i;
	for (n = 0; n < NGROW; n += 500) {
		TEST_ASSERT_SUCCESS(blast(flow, NGROW, NULL, got), "");
		TEST_ASSERT_EQUAL(got[O_Q2], n, "%u rules", n);
		TEST_ASSERT_EQUAL(got[O_RQP], NGROW - n, "%u rules", n);
		for (i = n; i < n + 500; i++) {
			fl[i] = rule(5, SRC0 + i, 32, 0, q2, false);
			TEST_ASSERT_NOT_NULL(fl[i], "rule %u", i);
		}
	}
	TEST_ASSERT_SUCCESS(blast(flow, NGROW, NULL, got), "");
	TEST_ASSERT_EQUAL(got[O_Q2], NGROW, "");
	for (i = 0; i < NGROW; i += 2)
		TEST_ASSERT_SUCCESS(swv_destroy_flow(fl[i]), "");
	TEST_ASSERT_SUCCESS(blast(flow, NGROW, NULL, got), "");
	TEST_ASSERT_EQUAL(got[O_Q2], NGROW / 2, "");
	TEST_ASSERT_EQUAL(got[O_RQP], NGROW / 2, "");
	for (i = 1; i < NGROW; i += 2)
		TEST_ASSERT_SUCCESS(swv_destroy_flow(fl[i]), "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(all), "");
	TEST_ASSERT(t_counters_ok(d.ctx), "");
	return TEST_SUCCESS;
}

static volatile int churn_stop;

struct churn_state {
	struct ibv_flow *fl[16];	/**< the rules left when it stopped */
	unsigned long n;		/**< rules made */
};

/*
 * Better rules over the traffic's flows, made and destroyed in a loop;
 * those in place when it stops are left for the test to check.
 */
static void *
churn(void *arg)
{
	struct churn_state *cs = arg;
	struct ibv_flow **fl = cs->fl;
	unsigned int i = 0, k;
	unsigned long *n = &cs->n;

	while (!churn_stop) {
		k = i++ % 16;
		if (fl[k] != NULL)
			swv_destroy_flow(fl[k]);
		/* Flows k * 16 .. k * 16 + 15: to q2 or dropped. */
		fl[k] = rule((uint16_t)(1 + (k & 1)), SRC0 + k * 16, 28, 0, q2,
			     (k & 2) != 0);
		if (fl[k] != NULL)
			(*n)++;
	}
	return NULL;
}

/*
 * Every one of the 256 flows once, twice: each frame where @fl (the churn's
 * last rules) says, the second pass answered by the caches.
 */
static int
churn_check(struct ibv_flow *const *fl, const char *what)
{
	static uint32_t flow[256];
	unsigned int got[O_N], i, pass, k;
	int want;
	uint64_t h0 = 0;

	for (pass = 0; pass < 2; pass++) {
		h0 = cache_hits();
		for (i = 0; i < 256; i++) {
			k = i / 16;
			want = fl[k] == NULL ? O_RQP :
			       (k & 2) != 0 ? O_DROP : O_Q2;
			flow[0] = i;
			TEST_ASSERT_SUCCESS(blast(flow, 1, NULL, got), "");
			TEST_ASSERT_EQUAL(got[want], 1, "%s, pass %u: flow %u "
					  "not where its rule says", what,
					  pass, i);
		}
	}
	TEST_ASSERT(cache_hits() - h0 >= 128, "%s: %" PRIu64 " cache hits "
		    "of 256", what, cache_hits() - h0);
	return TEST_SUCCESS;
}

/*
 * Rules over the flows created and destroyed by another thread while the
 * flows' frames come in (under ASan: nothing a cache points at is used
 * after it is freed); every frame is accounted for; once the churn has
 * stopped every flow goes where the rules it left say (a cache entry
 * made under an earlier rule would send it elsewhere), twice, and once
 * they are gone every flow gets the catch-all rule again.
 */
static int
test_churn(void)
{
	static uint32_t flow[256];
	unsigned int got[O_N], i, rounds = 0;
	static struct churn_state cs;
	struct ibv_flow *all;
	int ret;
	pthread_t th;
	uint64_t end;

	for (i = 0; i < 256; i++)
		flow[i] = i;
	all = rule(5, SRC0, 16, 0, d.rqp, false);
	TEST_ASSERT_NOT_NULL(all, "");
	churn_stop = 0;
	memset(&cs, 0, sizeof(cs));
	TEST_ASSERT_SUCCESS(pthread_create(&th, NULL, churn, &cs), "");
	end = t_now_ms() + 1000;
	while (t_now_ms() < end) {
		TEST_ASSERT_SUCCESS(blast(flow, 256, NULL, got), "");
		TEST_ASSERT_EQUAL(got[O_NOMATCH], 0, "");
		TEST_ASSERT_EQUAL(got[O_RQP] + got[O_Q2] + got[O_DROP], 256,
				  "");
		rounds++;
	}
	churn_stop = 1;
	pthread_join(th, NULL);
	printf("  %u rounds of 256 frames, %lu rules made meanwhile\n",
	       rounds, cs.n);
	ret = churn_check(cs.fl, "the churn's last rules");
	for (i = 0; i < 16; i++) {
		if (cs.fl[i] != NULL)
			TEST_ASSERT_SUCCESS(swv_destroy_flow(cs.fl[i]), "");
		cs.fl[i] = NULL;
	}
	TEST_ASSERT_SUCCESS(ret, "");
	TEST_ASSERT_SUCCESS(churn_check(cs.fl, "after the churn"), "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(all), "");
	TEST_ASSERT(t_counters_ok(d.ctx), "");
	return TEST_SUCCESS;
}

/*
 * Random rules against a model: rules over the source (prefixes /24 to
 * /32) and the dst port, priorities 0 to 3 (many equal), to rqp, q2 or
 * dropped, created and destroyed at random; after each change, frames of
 * a few flows (each sent twice, so that the caches answer the second) must
 * go where the model says: the lowest (priority, creation) among the rules
 * that match.
 */
#define NRULES 24
#define NSTEPS 300

struct mrule {
	struct ibv_flow *f;
	uint32_t src;
	unsigned int plen;
	uint16_t dport;
	uint16_t prio;
	uint64_t seq;
	int out;
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t
rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11) % n;
}

static int
model(const struct mrule *r, uint32_t flow, uint16_t dport)
{
	const struct mrule *best = NULL;
	unsigned int i;
	uint32_t m;

	for (i = 0; i < NRULES; i++) {
		if (r[i].f == NULL)
			continue;
		m = r[i].plen == 32 ? UINT32_MAX : ~(UINT32_MAX >> r[i].plen);
		if (((SRC0 + flow) & m) != (r[i].src & m) ||
		    (r[i].dport != 0 && r[i].dport != dport))
			continue;
		if (best == NULL || r[i].prio < best->prio ||
		    (r[i].prio == best->prio && r[i].seq < best->seq))
			best = &r[i];
	}
	return best == NULL ? O_NOMATCH : best->out;
}

static int
test_random_model(void)
{
	static const unsigned int plens[] = { 24, 26, 28, 29, 30, 31, 32 };
	struct mrule r[NRULES];
	unsigned int step, i, k, checked = 0;
	uint64_t seq = 0;
	uint16_t dport;
	uint32_t flow;

	memset(r, 0, sizeof(r));
	for (step = 0; step < NSTEPS; step++) {
		k = rnd(NRULES);
		if (r[k].f != NULL) {
			TEST_ASSERT_SUCCESS(swv_destroy_flow(r[k].f), "");
			r[k].f = NULL;
		} else {
			r[k].plen = plens[rnd(7)];
			r[k].src = SRC0 + rnd(64);
			r[k].dport = rnd(3) == 0 ? (uint16_t)(50 + rnd(4)) : 0;
			r[k].prio = (uint16_t)rnd(4);
			r[k].out = O_RQP + (int)rnd(3);
			r[k].f = rule(r[k].prio, r[k].src, r[k].plen, r[k].dport,
				      r[k].out == O_Q2 ? q2 : d.rqp,
				      r[k].out == O_DROP);
			TEST_ASSERT_NOT_NULL(r[k].f, "step %u", step);
			r[k].seq = seq++;
		}
		for (i = 0; i < 8; i++) {
			flow = rnd(64);
			dport = (uint16_t)(50 + rnd(4));
			CHECK(flow, dport, model(r, flow, dport), "first");
			CHECK(flow, dport, model(r, flow, dport), "again");
			checked += 2;
		}
	}
	for (k = 0; k < NRULES; k++)
		if (r[k].f != NULL)
			TEST_ASSERT_SUCCESS(swv_destroy_flow(r[k].f), "");
	printf("  %u frames checked against the model\n", checked);
	TEST_ASSERT(t_counters_ok(d.ctx), "");
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite = {
	.name = "swverbs flow caches",
	.cases = {
		TEST_CASE(test_rule_changes),
		TEST_CASE(test_many_flows),
		TEST_CASE(test_emc_policy),
		TEST_CASE(test_grow),
		TEST_CASE(test_churn),
		TEST_CASE(test_random_model),
		TEST_CASES_END(),
	},
};

int
main(void)
{
	unsigned int i;
	int ret;

	if (setup() != 0) {
		printf("setup failed: %s\n", strerror(errno));
		return 1;
	}
	ret = unit_test_suite_runner(&suite);
	for (i = 0; i < NFILL; i++)
		swv_destroy_flow(fill[i]);
	swv_destroy_qp(q2);
	swv_dereg_mr(tmr);
	swv_dereg_mr(rmr);
	t_teardown(&d);
	return ret;
}
