/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * QP counters (lib/swverbs/stat.c): every errno of the kernel's counter
 * calls, auto mode by type, pid and both (a QP bound at its RESET -> INIT
 * with a port, as the kernel binds), and counts exact against frames
 * sent over a pair wire: bound before traffic, after part of it, unbound in
 * the middle; over bursts whose frames go to two QPs in runs, on the
 * thread and the inline engines (those on the full profile, which binds
 * QPs in any state and counts sends). The mlx5 profile's own rules: hash
 * QPs numbered 0 and never found, binds in RESET only, no Tx counts, and
 * EPERM / ENOENT for a thread without CAP_NET_ADMIN / CAP_NET_RAW.
 */

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <linux/capability.h>

#include "swv_test_util.h"

static uint32_t
qpn(struct ibv_qp *qp)
{
	return qp->qp_num;
}

static int
mode_is(struct ibv_context *ctx, uint32_t mode, uint32_t mask)
{
	uint32_t m = 99, k = 99;

	if (swv_counter_get_mode(ctx, &m, &k) != 0)
		return 0;
	return m == mode && k == mask;
}

static int
test_errnos(void)
{
	struct swv_counter_attr at;
	struct tdev d;
	struct ibv_qp *q3;
	uint32_t c = 0, c2 = 0, list[4], lq[4];

	TEST_ASSERT_SUCCESS(t_setup_full(&d, "st-err", "loop"), "");
	TEST_ASSERT_EQUAL(swv_counter_set_auto_mode(NULL, 1), EINVAL, "");
	TEST_ASSERT_EQUAL(swv_counter_set_auto_mode(d.ctx, 4), EINVAL, "");
	TEST_ASSERT(mode_is(d.ctx, SWV_COUNTER_MODE_NONE, 0), "");
	TEST_ASSERT_EQUAL(swv_counter_bind_qp_alloc(d.ctx, 999999, &c), ENOENT,
			  "unknown lqpn");
	TEST_ASSERT_EQUAL(swv_counter_bind_qp(d.ctx, qpn(d.sqp), 7), ENOENT,
			  "unknown cntn");
	TEST_ASSERT_EQUAL(swv_counter_bind_qp(d.ctx, 999999, 7), ENOENT, "");
	TEST_ASSERT_EQUAL(swv_counter_unbind_qp(d.ctx, 999999, 1), ENOENT, "");
	TEST_ASSERT_EQUAL(swv_counter_unbind_qp(d.ctx, qpn(d.sqp), 1), EINVAL,
			  "not bound");
	TEST_ASSERT_EQUAL(swv_counter_query(d.ctx, 1, &at, NULL, 0), -1, "");
	TEST_ASSERT_EQUAL(errno, ENOENT, "");

	/* Manual: a new counter, numbered from 1. */
	TEST_ASSERT_SUCCESS(swv_counter_bind_qp_alloc(d.ctx, qpn(d.sqp), &c),
			    "");
	TEST_ASSERT_EQUAL(c, 1, "first cntn");
	TEST_ASSERT(mode_is(d.ctx, SWV_COUNTER_MODE_MANUAL, 0), "");
	TEST_ASSERT_EQUAL(swv_counter_bind_qp_alloc(d.ctx, qpn(d.sqp), &c2),
			  EINVAL, "already bound");
	TEST_ASSERT_EQUAL(swv_counter_bind_qp(d.ctx, qpn(d.sqp), 1), EINVAL,
			  "already bound");
	TEST_ASSERT_EQUAL(swv_counter_bind_qp(d.ctx, qpn(d.sqp), 9), ENOENT,
			  "bound, to an unknown cntn: the counter first");
	TEST_ASSERT_EQUAL(swv_counter_set_auto_mode(d.ctx,
						    SWV_COUNTER_MASK_QP_TYPE),
			  EBUSY, "auto on with a counter");
	/* Off while counters exist: manual stays. */
	TEST_ASSERT_SUCCESS(swv_counter_set_auto_mode(d.ctx, 0), "");
	TEST_ASSERT(mode_is(d.ctx, SWV_COUNTER_MODE_MANUAL, 0), "");
	TEST_ASSERT_SUCCESS(swv_counter_bind_qp(d.ctx, qpn(d.rqp), 1), "");
	TEST_ASSERT_EQUAL(swv_counter_query(d.ctx, 1, &at, lq, 4), 2, "");
	TEST_ASSERT_EQUAL(at.nqps, 2, "");
	TEST_ASSERT_EQUAL(at.mode, SWV_COUNTER_MODE_MANUAL, "");
	TEST_ASSERT_EQUAL(at.qp_type, IBV_QPT_RAW_PACKET, "");
	TEST_ASSERT(lq[0] < lq[1], "lqpn ascending");
	TEST_ASSERT(lq[0] == qpn(d.sqp) || lq[0] == qpn(d.rqp), "");
	/* A second counter takes 2. */
	q3 = t_raw_qp(&d, 4, 0, 1, 1);
	TEST_ASSERT_NOT_NULL(q3, "");
	TEST_ASSERT_SUCCESS(swv_counter_bind_qp_alloc(d.ctx, qpn(q3), &c2), "");
	TEST_ASSERT_EQUAL(c2, 2, "");
	TEST_ASSERT_EQUAL(swv_counter_list(d.ctx, list, 4), 2, "");
	TEST_ASSERT(list[0] == 1 && list[1] == 2, "");
	TEST_ASSERT_EQUAL(swv_counter_unbind_qp(d.ctx, qpn(d.rqp), 2), EINVAL,
			  "bound to another counter");
	TEST_ASSERT_SUCCESS(swv_counter_unbind_qp(d.ctx, qpn(d.rqp), 1), "");
	TEST_ASSERT_EQUAL(swv_counter_query(d.ctx, 1, &at, lq, 4), 1,
			  "the counter stays with its other QP");
	TEST_ASSERT_SUCCESS(swv_counter_unbind_qp(d.ctx, qpn(d.sqp), 1), "");
	TEST_ASSERT_EQUAL(swv_counter_query(d.ctx, 1, &at, lq, 4), -1,
			  "the last unbind frees the counter");
	TEST_ASSERT_EQUAL(errno, ENOENT, "");
	TEST_ASSERT(mode_is(d.ctx, SWV_COUNTER_MODE_MANUAL, 0), "");
	/* The lowest free number is reused. */
	TEST_ASSERT_SUCCESS(swv_counter_bind_qp_alloc(d.ctx, qpn(d.sqp), &c),
			    "");
	TEST_ASSERT_EQUAL(c, 1, "");
	/* Destroying a bound QP unbinds it; its counter goes with it. */
	TEST_ASSERT_SUCCESS(swv_destroy_qp(q3), "");
	TEST_ASSERT_EQUAL(swv_counter_list(d.ctx, list, 4), 1, "");
	TEST_ASSERT_SUCCESS(swv_counter_unbind_qp(d.ctx, qpn(d.sqp), 1), "");
	TEST_ASSERT(mode_is(d.ctx, SWV_COUNTER_MODE_NONE, 0),
		    "manual mode with no counter left is none");

	/* Auto mode: manual binds and unbinds are refused. */
	TEST_ASSERT_SUCCESS(swv_counter_set_auto_mode(d.ctx,
						      SWV_COUNTER_MASK_QP_TYPE),
			    "");
	TEST_ASSERT_SUCCESS(swv_counter_set_auto_mode(d.ctx,
						      SWV_COUNTER_MASK_QP_TYPE),
			    "the same mode again");
	TEST_ASSERT_EQUAL(swv_counter_bind_qp_alloc(d.ctx, qpn(d.sqp), &c),
			  EINVAL, "bind in auto mode");
	q3 = t_raw_qp(&d, 4, 0, 1, 1);
	TEST_ASSERT_NOT_NULL(q3, "");
	TEST_ASSERT_EQUAL(swv_counter_list(d.ctx, list, 4), 0,
			  "auto-bound before INIT");
	TEST_ASSERT_SUCCESS(t_qp_to(q3, IBV_QPS_INIT), "");
	TEST_ASSERT_EQUAL(swv_counter_list(d.ctx, list, 4), 1, "auto-bound");
	TEST_ASSERT_EQUAL(swv_counter_bind_qp(d.ctx, qpn(d.sqp), list[0]),
			  EINVAL, "bind in auto mode");
	TEST_ASSERT_EQUAL(swv_counter_unbind_qp(d.ctx, qpn(q3), list[0]),
			  EINVAL, "unbind in auto mode");
	TEST_ASSERT_EQUAL(swv_counter_set_auto_mode(d.ctx,
						    SWV_COUNTER_MASK_PID),
			  EBUSY, "new criteria with a bound QP");
	TEST_ASSERT_SUCCESS(swv_counter_set_auto_mode(d.ctx, 0), "");
	TEST_ASSERT(mode_is(d.ctx, SWV_COUNTER_MODE_MANUAL, 0), "");
	TEST_ASSERT_SUCCESS(swv_counter_unbind_qp(d.ctx, qpn(q3), list[0]),
			    "unbind once auto is off");
	TEST_ASSERT(mode_is(d.ctx, SWV_COUNTER_MODE_NONE, 0), "");
	TEST_ASSERT_SUCCESS(swv_destroy_qp(q3), "");
	t_teardown(&d);
	return TEST_SUCCESS;
}

struct mk {
	struct tdev *d;
	struct ibv_qp *qp;
	int tid;
};

static void *
mk_qp(void *arg)
{
	struct mk *m = arg;

	prctl(PR_SET_NAME, "st-maker");
	m->tid = (int)gettid();
	m->qp = t_raw_qp(m->d, 4, 0, 1, 1);
	return NULL;
}

/* A QP made by a thread of its own: another pid for the counters. */
static struct ibv_qp *
qp_other_thread(struct tdev *d, int *tid)
{
	struct mk m = { .d = d, .qp = NULL, .tid = 0 };
	pthread_t t;

	if (pthread_create(&t, NULL, mk_qp, &m) != 0)
		return NULL;
	pthread_join(t, NULL);
	*tid = m.tid;
	return m.qp;
}

/* Auto mode under @mask: QPs a, b here, c on another thread. */
static int
t_qp_reset(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	return swv_modify_qp(qp, &a, IBV_QP_STATE);
}

static int
auto_case(uint32_t mask, int ncnt, const char *name)
{
	struct swv_counter_attr at;
	struct ibv_qp *a, *b, *c;
	struct tdev d;
	uint32_t list[8], ca, cb, cc;
	int tid = 0, pid;
	struct swv_qp_stats st;

	TEST_ASSERT_SUCCESS(t_setup(&d, name, "loop"), "");
	TEST_ASSERT_SUCCESS(swv_counter_set_auto_mode(d.ctx, mask), "");
	TEST_ASSERT(mode_is(d.ctx, SWV_COUNTER_MODE_AUTO, mask), "");
	a = t_raw_qp(&d, 4, 0, 1, 1);
	b = t_raw_qp(&d, 4, 4, 1, 1);
	c = qp_other_thread(&d, &tid);
	TEST_ASSERT(a != NULL && b != NULL && c != NULL, "");
	/* _ib_modify_qp(): bound at RESET -> INIT with a port, not before. */
	TEST_ASSERT_EQUAL(swv_counter_list(d.ctx, list, 8), 0, "at creation");
	TEST_ASSERT_SUCCESS(swv_query_qp_stats(a, &st, &ca, NULL), "");
	TEST_ASSERT_EQUAL(ca, 0, "bound at creation");
	TEST_ASSERT_SUCCESS(t_qp_to(a, IBV_QPS_INIT), "");
	TEST_ASSERT_SUCCESS(t_qp_to(b, IBV_QPS_RTS), "");
	TEST_ASSERT_SUCCESS(t_qp_to(c, IBV_QPS_INIT), "");
	TEST_ASSERT_EQUAL(swv_counter_list(d.ctx, list, 8), ncnt, "%s", name);
	TEST_ASSERT_SUCCESS(swv_query_qp_stats(a, &st, &ca, &pid), "");
	TEST_ASSERT_EQUAL(pid, (int)gettid(), "");
	TEST_ASSERT_SUCCESS(swv_query_qp_stats(b, &st, &cb, NULL), "");
	TEST_ASSERT_SUCCESS(swv_query_qp_stats(c, &st, &cc, &pid), "");
	TEST_ASSERT_EQUAL(pid, tid, "");
	TEST_ASSERT(ca != 0 && cb != 0 && cc != 0, "all bound");
	TEST_ASSERT_EQUAL(ca, cb, "same type and pid: same counter");
	if (mask & SWV_COUNTER_MASK_PID) {
		TEST_ASSERT_NOT_EQUAL(ca, cc, "another pid: another counter");
		TEST_ASSERT_EQUAL(swv_counter_query(d.ctx, cc, &at, list, 8), 1,
				  "");
		TEST_ASSERT_EQUAL(at.pid, tid, "");
		TEST_ASSERT(strcmp(at.comm, "st-maker") == 0, "%s", at.comm);
		TEST_ASSERT_EQUAL(list[0], qpn(c), "");
	} else {
		TEST_ASSERT_EQUAL(ca, cc, "by type only: one counter");
	}
	TEST_ASSERT_EQUAL(swv_counter_query(d.ctx, ca, &at, list, 8),
			  (mask & SWV_COUNTER_MASK_PID) ? 2 : 3, "");
	TEST_ASSERT_EQUAL(at.mode, SWV_COUNTER_MODE_AUTO, "");
	TEST_ASSERT_EQUAL(at.mask, mask, "");
	/* RESET and INIT again: the same counter, no second bind. */
	TEST_ASSERT_SUCCESS(swv_query_qp_stats(a, &st, &ca, NULL), "");
	TEST_ASSERT_SUCCESS(t_qp_reset(a), "");
	TEST_ASSERT_SUCCESS(t_qp_to(a, IBV_QPS_INIT), "");
	TEST_ASSERT_SUCCESS(swv_query_qp_stats(a, &st, &cb, NULL), "");
	TEST_ASSERT_EQUAL(ca, cb, "a second INIT moved the QP");
	TEST_ASSERT_EQUAL(swv_counter_list(d.ctx, list, 8), ncnt, "");
	/* The setup's QPs, moved to INIT before auto mode, stay unbound. */
	TEST_ASSERT_SUCCESS(swv_query_qp_stats(d.sqp, &st, &ca, NULL), "");
	TEST_ASSERT_EQUAL(ca, 0, "");
	swv_destroy_qp(a);
	swv_destroy_qp(b);
	swv_destroy_qp(c);
	TEST_ASSERT_EQUAL(swv_counter_list(d.ctx, list, 8), 0, "");
	TEST_ASSERT(mode_is(d.ctx, SWV_COUNTER_MODE_AUTO, mask),
		    "auto mode stays without counters");
	/* ... until their next INIT. */
	TEST_ASSERT_SUCCESS(t_qp_reset(d.sqp), "");
	TEST_ASSERT_SUCCESS(t_qp_to(d.sqp, IBV_QPS_RTS), "");
	TEST_ASSERT_SUCCESS(swv_query_qp_stats(d.sqp, &st, &ca, NULL), "");
	TEST_ASSERT(ca != 0, "a QP made before auto mode, at its next INIT");
	TEST_ASSERT_EQUAL(swv_counter_list(d.ctx, list, 8), 1, "");
	t_teardown(&d);
	return TEST_SUCCESS;
}

static int
test_auto_type(void)
{
	return auto_case(SWV_COUNTER_MASK_QP_TYPE, 1, "st-at");
}

static int
test_auto_pid(void)
{
	return auto_case(SWV_COUNTER_MASK_PID, 2, "st-ap");
}

static int
test_auto_type_pid(void)
{
	return auto_case(SWV_COUNTER_MASK_ALL, 2, "st-atp");
}

#define FLEN 100
#define NRX 16

/* Send n frames a -> b from qp; wait for their send completions. */
static int
send_n(struct tport *a, struct tport *b, struct ibv_qp *qp, uint8_t *tbuf,
       unsigned int n)
{
	struct ibv_wc wc[NRX];
	unsigned int i;

	for (i = 0; i < n; i++) {
		t_frame(tbuf + i * FLEN, FLEN, b->d.mac, a->d.mac, (uint8_t)i);
		if (t_send(qp, a->tmr, tbuf + i * FLEN, FLEN, i) != 0)
			return -1;
	}
	return t_poll(a->d.scq, wc, (int)n, 2000) == (int)n ? 0 : -1;
}

static uint64_t
cnt_get(struct ibv_context *ctx, uint32_t cntn, size_t off)
{
	struct swv_counter_attr at;

	if (swv_counter_query(ctx, cntn, &at, NULL, 0) < 0)
		return UINT64_MAX;
	return *(const uint64_t *)((const char *)&at.stats + off);
}

#define ST(f) offsetof(struct swv_qp_stats, f)

static int
test_counts_pair(void)
{
	static uint8_t tbuf[NRX * FLEN], rbuf[2 * NRX * 2048];
	struct swv_device_attr attr = {
		.flags = SWV_DEVICE_PROFILE_FULL, .engine = NULL,
	};
	struct swv_port_counters pc;
	struct ibv_wc wc[NRX];
	struct tport a, b;
	struct ibv_qp *s2;
	uint32_t x, y;
	unsigned int i;

	TEST_ASSERT_SUCCESS(t_port_setup(&a, "st-pa", "pair:st-cnt", &attr,
					 tbuf, sizeof(tbuf), rbuf, 2048, false),
			    "");
	TEST_ASSERT_SUCCESS(t_port_setup(&b, "st-pb", "pair:st-cnt", &attr,
					 tbuf, sizeof(tbuf), rbuf,
					 sizeof(rbuf), true), "");
	for (i = 0; i < NRX; i++)
		TEST_ASSERT_SUCCESS(t_recv(b.d.rqp, b.rmr, rbuf + i * 2048,
					   2048, i), "");
	/* a's sender bound before any traffic. */
	TEST_ASSERT_SUCCESS(swv_counter_bind_qp_alloc(a.d.ctx, qpn(a.d.sqp),
						      &x), "");
	TEST_ASSERT_SUCCESS(send_n(&a, &b, a.d.sqp, tbuf, 4), "");
	TEST_ASSERT_EQUAL(t_poll(b.d.rcq, wc, 4, 2000), 4, "");
	TEST_ASSERT_EQUAL(cnt_get(a.d.ctx, x, ST(tx_frames)), 4, "");
	TEST_ASSERT_EQUAL(cnt_get(a.d.ctx, x, ST(tx_bytes)), 4 * FLEN, "");
	TEST_ASSERT_EQUAL(cnt_get(a.d.ctx, x, ST(rx_frames)), 0, "");
	/* b's receiver bound after 4 frames: they do not show. */
	TEST_ASSERT_SUCCESS(swv_counter_bind_qp_alloc(b.d.ctx, qpn(b.d.rqp),
						      &y), "");
	TEST_ASSERT_EQUAL(cnt_get(b.d.ctx, y, ST(rx_frames)), 0,
			  "counts from before the bind");
	TEST_ASSERT_SUCCESS(send_n(&a, &b, a.d.sqp, tbuf, 3), "");
	TEST_ASSERT_EQUAL(t_poll(b.d.rcq, wc, 3, 2000), 3, "");
	TEST_ASSERT_EQUAL(cnt_get(b.d.ctx, y, ST(rx_frames)), 3, "");
	TEST_ASSERT_EQUAL(cnt_get(b.d.ctx, y, ST(rx_bytes)), 3 * FLEN, "");
	/* A second sender on x, then unbound in the middle of its traffic. */
	s2 = t_raw_qp(&a.d, 64, 0, 1, 1);
	TEST_ASSERT_NOT_NULL(s2, "");
	TEST_ASSERT_SUCCESS(t_qp_to(s2, IBV_QPS_RTS), "");
	TEST_ASSERT_SUCCESS(send_n(&a, &b, s2, tbuf, 1), "before its bind");
	TEST_ASSERT_SUCCESS(swv_counter_bind_qp(a.d.ctx, qpn(s2), x), "");
	TEST_ASSERT_SUCCESS(send_n(&a, &b, s2, tbuf, 2), "");
	TEST_ASSERT_EQUAL(cnt_get(a.d.ctx, x, ST(tx_frames)), 4 + 3 + 2, "");
	TEST_ASSERT_SUCCESS(swv_counter_unbind_qp(a.d.ctx, qpn(s2), x), "");
	TEST_ASSERT_SUCCESS(send_n(&a, &b, s2, tbuf, 2), "after its unbind");
	TEST_ASSERT_EQUAL(cnt_get(a.d.ctx, x, ST(tx_frames)), 4 + 3 + 2,
			  "the counter keeps what s2 counted while bound");
	TEST_ASSERT_EQUAL(cnt_get(a.d.ctx, x, ST(tx_bytes)), 9 * FLEN, "");
	TEST_ASSERT_EQUAL(t_poll(b.d.rcq, wc, 5, 2000), 5, "");
	TEST_ASSERT_EQUAL(cnt_get(b.d.ctx, y, ST(rx_frames)), 3 + 5, "");
	/* 16 receives posted: 12 used, 4 more, then two out of buffer. */
	TEST_ASSERT_SUCCESS(send_n(&a, &b, a.d.sqp, tbuf, 4), "");
	TEST_ASSERT_EQUAL(t_poll(b.d.rcq, wc, 4, 2000), 4, "");
	TEST_ASSERT_SUCCESS(send_n(&a, &b, a.d.sqp, tbuf, 2), "");
	T_WAIT(swv_query_port_counters(b.d.ctx, &pc) == 0 &&
	       pc.rx_out_of_buffer == 2);
	TEST_ASSERT_EQUAL(pc.rx_out_of_buffer, 2, "");
	TEST_ASSERT_EQUAL(cnt_get(b.d.ctx, y, ST(rx_out_of_buffer)), 2, "");
	TEST_ASSERT_EQUAL(cnt_get(b.d.ctx, y, ST(rx_frames)), 12, "");
	TEST_ASSERT_EQUAL(cnt_get(b.d.ctx, y, ST(rx_errors)), 0, "");
	TEST_ASSERT_EQUAL(cnt_get(a.d.ctx, x, ST(tx_frames)), 15, "");
	TEST_ASSERT_EQUAL(cnt_get(a.d.ctx, x, ST(tx_errors)), 0, "");
	TEST_ASSERT(t_counters_ok(b.d.ctx), "port identity");
	TEST_ASSERT_SUCCESS(swv_destroy_qp(s2), "");
	TEST_ASSERT_SUCCESS(swv_counter_unbind_qp(a.d.ctx, qpn(a.d.sqp), x),
			    "");
	TEST_ASSERT_SUCCESS(swv_counter_unbind_qp(b.d.ctx, qpn(b.d.rqp), y),
			    "");
	t_port_teardown(&b);
	t_port_teardown(&a);
	return TEST_SUCCESS;
}

/*
 * Counts exact over bursts whose frames go to two receivers in runs
 * (whatever the engine gathers per burst must be in by the completions):
 * r1, r2 on device b, bound to one counter in turn, then both, then r1
 * unbound, with frames in runs of 1 to 5 per QP inside each burst and r2
 * running out of buffers in the middle of one. After each burst's completions
 * are polled, each QP's own counts and the counter are exact.
 */
#define RB_N 24			/* frames per burst */
#define RB_DIM(a) (sizeof(a) / sizeof((a)[0]))
#define RB_LEN(i) (60 + ((i) * 37) % 400)

struct rb_sum {
	uint64_t frames[2], bytes[2], oob[2];
};

/* Whether frame i of burst k goes to r2 (runs of 1..5 frames). */
static bool
rb_to_r2(unsigned int k, unsigned int i)
{
	static const uint8_t runs[] = { 3, 1, 5, 2, 1, 4, 2, 3, 1, 2 };
	unsigned int r = 0, at = 0;

	while (at + runs[(r + k) % RB_DIM(runs)] <= i) {
		at += runs[(r + k) % RB_DIM(runs)];
		r++;
	}
	return (r & 1) != 0;
}

/* One burst k of RB_N frames a -> b in one post, sums of what went where. */
static int
rb_burst(struct tport *a, uint8_t *tbuf, const uint8_t *mac1,
	 const uint8_t *mac2, unsigned int k, struct rb_sum *sent)
{
	struct ibv_send_wr wr[RB_N], *bad = NULL;
	struct ibv_sge sge[RB_N];
	struct ibv_wc wc[RB_N];
	unsigned int i, q;

	memset(sent, 0, sizeof(*sent));
	for (i = 0; i < RB_N; i++) {
		uint32_t len = RB_LEN(i + k);

		q = rb_to_r2(k, i);
		t_frame(tbuf + i * 512, len, q ? mac2 : mac1, a->d.mac,
			(uint8_t)i);
		sge[i].addr = (uintptr_t)(tbuf + i * 512);
		sge[i].length = len;
		sge[i].lkey = a->tmr->lkey;
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_SEND;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i + 1 < RB_N ? &wr[i + 1] : NULL;
		sent->frames[q]++;
		sent->bytes[q] += len;
	}
	if (ibv_post_send(a->d.sqp, wr, &bad) != 0)
		return -1;
	return t_poll(a->d.scq, wc, RB_N, 2000) == RB_N ? 0 : -1;
}

/* Post n receives of 512 bytes on qp from rbuf slot *slot on. */
static int
rb_recv(struct tport *b, struct ibv_qp *qp, uint8_t *rbuf, unsigned int n,
	unsigned int *slot)
{
	unsigned int i;

	for (i = 0; i < n; i++, (*slot)++)
		if (t_recv(qp, b->rmr, rbuf + (*slot % 256) * 512, 512,
			   *slot) != 0)
			return -1;
	return 0;
}

static int
rb_qp_is(struct ibv_qp *qp, uint64_t frames, uint64_t bytes, uint64_t oob)
{
	struct swv_qp_stats st;

	if (swv_query_qp_stats(qp, &st, NULL, NULL) != 0)
		return 0;
	if (st.rx_frames != frames || st.rx_bytes != bytes ||
	    st.rx_out_of_buffer != oob) {
		printf("    qp %u: rx %" PRIu64 "/%" PRIu64 " bytes %" PRIu64
		       "/%" PRIu64 " oob %" PRIu64 "/%" PRIu64 "\n",
		       qp->qp_num, st.rx_frames, frames, st.rx_bytes, bytes,
		       st.rx_out_of_buffer, oob);
		return 0;
	}
	return 1;
}

static int
runs_case(struct swv_engine *eng, const char *tag)
{
	static uint8_t tbuf[RB_N * 512], rbuf[256 * 512];
	struct swv_device_attr attr = {
		.flags = SWV_DEVICE_PROFILE_FULL, .engine = eng,
	};
	/* bound[k][q]: r(q+1) bound to x during burst k */
	static const bool bound[][2] = {
		{ false, false }, { true, false }, { true, true },
		{ true, true }, { false, true }, { false, true },
	};
	uint64_t xf = 0, xb = 0, xo = 0, own[2][3] = { { 0 } };
	struct ibv_wc wc[RB_N];
	struct ibv_qp *r[2];
	struct ibv_flow *fl2;
	struct tport a, b;
	struct rb_sum s;
	uint8_t mac2[6];
	char na[24], nb[24], wire[32];
	unsigned int k, q, slot = 0, want, got;
	uint32_t x = 0, c;

	snprintf(na, sizeof(na), "st-r%sa", tag);
	snprintf(nb, sizeof(nb), "st-r%sb", tag);
	snprintf(wire, sizeof(wire), "pair:st-runs-%s", tag);
	TEST_ASSERT_SUCCESS(t_port_setup(&a, na, wire, &attr, tbuf,
					 sizeof(tbuf), rbuf, 512, false), "");
	TEST_ASSERT_SUCCESS(t_port_setup(&b, nb, wire, &attr, tbuf,
					 sizeof(tbuf), rbuf, sizeof(rbuf),
					 true), "");
	memcpy(mac2, b.d.mac, 6);
	mac2[5] ^= 0x40;
	r[0] = b.d.rqp;
	r[1] = t_raw_qp(&b.d, 1, 256, 1, 1);
	TEST_ASSERT_NOT_NULL(r[1], "");
	TEST_ASSERT_SUCCESS(t_qp_to(r[1], IBV_QPS_RTR), "");
	fl2 = t_flow_eth(r[1], mac2, 0);
	TEST_ASSERT_NOT_NULL(fl2, "");
	for (k = 0; k < RB_DIM(bound); k++) {
		/* The binds of this burst, made between bursts. */
		for (q = 0; q < 2; q++) {
			if (bound[k][q] == (k > 0 && bound[k - 1][q]))
				continue;
			if (!bound[k][q]) {
				TEST_ASSERT_SUCCESS(swv_counter_unbind_qp(b.d.ctx,
						    qpn(r[q]), x), "");
			} else if (x == 0) {
				TEST_ASSERT_SUCCESS(swv_counter_bind_qp_alloc(
						    b.d.ctx, qpn(r[q]), &x), "");
			} else {
				TEST_ASSERT_SUCCESS(swv_counter_bind_qp(b.d.ctx,
						    qpn(r[q]), x), "");
			}
		}
		/*
		 * A buffer for each frame; in burst 3, r2 has 3, its other
		 * frames are dropped (out of buffer).
		 */
		want = 0;
		for (q = 0, c = 0; q < RB_N; q++)
			c += rb_to_r2(k, q);
		TEST_ASSERT_SUCCESS(rb_recv(&b, r[0], rbuf, RB_N - c, &slot),
				    "");
		TEST_ASSERT_SUCCESS(rb_recv(&b, r[1], rbuf, k == 3 ? 3 : c,
					    &slot), "");
		TEST_ASSERT_SUCCESS(rb_burst(&a, tbuf, b.d.mac, mac2, k, &s),
				    "burst %u", k);
		for (q = 0; q < 2; q++) {
			uint64_t f = s.frames[q], by = s.bytes[q], o = 0;

			if (q == 1 && k == 3) {
				/* The first 3 in, by their lengths. */
				unsigned int i, n = 0;

				by = 0;
				for (i = 0; i < RB_N; i++)
					if (rb_to_r2(k, i) && n++ < 3)
						by += RB_LEN(i + k);
				o = f - 3;
				f = 3;
			}
			own[q][0] += f;
			own[q][1] += by;
			own[q][2] += o;
			want += f;
			if (bound[k][q]) {
				xf += f;
				xb += by;
				xo += o;
			}
		}
		for (got = 0; got < want; got += c) {
			c = (uint32_t)t_poll(b.d.rcq, wc, (int)(want - got),
					     2000);
			TEST_ASSERT(c > 0, "burst %u: %u of %u received", k,
				    got, want);
		}
		/* A QP short of buffers leaves its own WQEs unused: none. */
		if (k == 3) {
			struct swv_port_counters pc;

			T_WAIT(swv_query_port_counters(b.d.ctx, &pc) == 0 &&
			       pc.rx_out_of_buffer == own[1][2]);
		}
		for (q = 0; q < 2; q++)
			TEST_ASSERT(rb_qp_is(r[q], own[q][0], own[q][1],
					     own[q][2]), "burst %u: r%u", k, q + 1);
		if (x == 0)
			continue;	/* none bound yet */
		TEST_ASSERT_EQUAL(cnt_get(b.d.ctx, x, ST(rx_frames)), xf,
				  "burst %u: counter frames", k);
		TEST_ASSERT_EQUAL(cnt_get(b.d.ctx, x, ST(rx_bytes)), xb,
				  "burst %u: counter bytes", k);
		TEST_ASSERT_EQUAL(cnt_get(b.d.ctx, x,
					  ST(rx_out_of_buffer)), xo,
				  "burst %u: counter out of buffer", k);
	}
	TEST_ASSERT(t_counters_ok(b.d.ctx), "port identity");
	TEST_ASSERT_SUCCESS(swv_counter_unbind_qp(b.d.ctx, qpn(r[1]), x), "");
	swv_destroy_flow(fl2);
	TEST_ASSERT_SUCCESS(swv_destroy_qp(r[1]), "");
	t_port_teardown(&b);
	t_port_teardown(&a);
	return TEST_SUCCESS;
}

static int
test_counts_runs_thread(void)
{
	return runs_case(NULL, "t");
}

static int
test_counts_runs_inline(void)
{
	return runs_case(swv_engine_inline(), "i");
}

/* The MR of st[0 .. n - 1] numbered after lkey's slot, or NULL. */
static const struct swv_mr_stats *
mr_find(const struct swv_mr_stats *st, int n, uint32_t lkey)
{
	int i;

	for (i = 0; i < n; i++)
		if (st[i].lkey == lkey)
			return &st[i];
	return NULL;
}

static int
test_mr_stats(void)
{
	static uint8_t tbuf[3 * 4096], rbuf[4096];
	struct swv_device_attr attr = {
		.flags = SWV_DEVICE_PROFILE_FULL, .engine = NULL,
	};
	const struct swv_mr_stats *m;
	struct swv_mr_stats st[8];
	struct swv_qp_stats qs;
	struct ibv_wc wc;
	struct tport a;
	uint32_t x;
	int n;

	TEST_ASSERT_SUCCESS(t_port_setup(&a, "st-mr", "loop", &attr, tbuf + 100,
					 2 * 4096, rbuf, sizeof(rbuf), true),
			    "");
	TEST_ASSERT_EQUAL(swv_query_mr_stats(NULL, st, 8), -1, "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "");
	n = swv_query_mr_stats(a.d.ctx, st, 8);
	TEST_ASSERT_EQUAL(n, 2, "the device's two MRs");
	TEST_ASSERT(st[0].mrn < st[1].mrn, "by mrn");
	m = mr_find(st, n, a.tmr->lkey);
	TEST_ASSERT_NOT_NULL(m, "");
	TEST_ASSERT_EQUAL(m->mrn, a.tmr->lkey & 0xffff, "");
	TEST_ASSERT_EQUAL(m->length, 2 * 4096, "");
	TEST_ASSERT_EQUAL(m->pages, 3, "unaligned: three pages");
	TEST_ASSERT_EQUAL(m->access_errors, 0, "");
	TEST_ASSERT_SUCCESS(swv_counter_bind_qp_alloc(a.d.ctx, qpn(a.d.sqp),
						      &x), "");
	/* A send whose SGE runs past the MR: refused, counted on both. */
	t_frame(tbuf + 100, 64, a.d.mac, a.d.mac, 1);
	TEST_ASSERT_SUCCESS(t_send(a.d.sqp, a.tmr, tbuf + 100 + 2 * 4096 - 32,
				   64, 1), "");
	TEST_ASSERT_EQUAL(t_poll(a.d.scq, &wc, 1, 2000), 1, "");
	TEST_ASSERT_EQUAL(wc.status, IBV_WC_LOC_PROT_ERR, "");
	n = swv_query_mr_stats(a.d.ctx, st, 8);
	TEST_ASSERT_EQUAL(mr_find(st, n, a.tmr->lkey)->access_errors, 1, "");
	TEST_ASSERT_EQUAL(mr_find(st, n, a.rmr->lkey)->access_errors, 0, "");
	TEST_ASSERT_EQUAL(cnt_get(a.d.ctx, x, ST(tx_errors)), 1, "");
	TEST_ASSERT_SUCCESS(swv_query_qp_stats(a.d.sqp, &qs, NULL, NULL), "");
	TEST_ASSERT_EQUAL(qs.tx_errors, 1, "");
	TEST_ASSERT_SUCCESS(swv_counter_unbind_qp(a.d.ctx, qpn(a.d.sqp), x),
			    "");
	t_port_teardown(&a);
	return TEST_SUCCESS;
}

static uint8_t key40[40] = { 0x6d, 0x5a, 0x56, 0xda };

/* The hash QPs made here, with their table and WQ (hash_qp_free()). */
#define NB_HQS 4
static struct {
	struct ibv_qp *qp;
	struct ibv_rwq_ind_table *t;
	struct ibv_wq *wq;
} hqs[NB_HQS];

/* Destroy a hash QP of hash_qp(), then its table and WQ. */
static int
hash_qp_free(struct ibv_qp *qp)
{
	unsigned int i;
	int ret;

	for (i = 0; i < NB_HQS && hqs[i].qp != qp; i++)
		;
	if (i == NB_HQS)
		return EINVAL;
	ret = swv_destroy_qp(qp);
	if (ret == 0)
		ret = swv_destroy_rwq_ind_table(hqs[i].t);
	if (ret == 0)
		ret = swv_destroy_wq(hqs[i].wq);
	memset(&hqs[i], 0, sizeof(hqs[i]));
	return ret;
}

/* A hash QP over one WQ and its table. */
static struct ibv_qp *
hash_qp(struct tdev *d, uint64_t fields)
{
	struct ibv_rwq_ind_table_init_attr ta;
	struct ibv_qp_init_attr_ex qa;
	struct ibv_wq_init_attr wa;
	struct ibv_rwq_ind_table *t;
	struct ibv_wq *wq[1];
	unsigned int i;

	memset(&wa, 0, sizeof(wa));
	wa.wq_type = IBV_WQT_RQ;
	wa.max_wr = 4;
	wa.max_sge = 1;
	wa.pd = d->pd;
	wa.cq = d->rcq;
	wq[0] = swv_create_wq(d->ctx, &wa);
	if (wq[0] == NULL)
		return NULL;
	memset(&ta, 0, sizeof(ta));
	ta.log_ind_tbl_size = 0;
	ta.ind_tbl = wq;
	t = swv_create_rwq_ind_table(d->ctx, &ta);
	if (t == NULL)
		return NULL;
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RAW_PACKET;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
		       IBV_QP_INIT_ATTR_RX_HASH;
	qa.pd = d->pd;
	qa.rwq_ind_tbl = t;
	qa.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	qa.rx_hash_conf.rx_hash_key_len = sizeof(key40);
	qa.rx_hash_conf.rx_hash_key = key40;
	qa.rx_hash_conf.rx_hash_fields_mask = fields;
	for (i = 0; i < NB_HQS && hqs[i].qp != NULL; i++)
		;
	if (i == NB_HQS)
		return NULL;
	hqs[i].qp = swv_create_qp_ex(d->ctx, &qa);
	if (hqs[i].qp == NULL) {
		swv_destroy_rwq_ind_table(t);
		swv_destroy_wq(wq[0]);
		return NULL;
	}
	hqs[i].t = t;
	hqs[i].wq = wq[0];
	return hqs[i].qp;
}

/*
 * The mlx5 profile: hash QPs are numbered 0 and never found (the full
 * profile numbers and binds them); a RAW_PACKET QP binds in RESET only
 * (the firmware's refusal in any other state); a bound sender's counter
 * reads no Tx counts, over frames it did send.
 */
static int
test_mlx5_rules(void)
{
	static uint8_t tbuf[4 * FLEN], rbuf[4 * 2048];
	struct swv_device_attr attr = {
		.flags = SWV_DEVICE_PROFILE_MLX5, .engine = NULL,
	};
	struct swv_counter_attr at;
	struct swv_qp_stats qs;
	struct ibv_qp *h1, *h2, *s2;
	struct ibv_wc wc[4];
	struct tport a, b;
	struct tdev f;
	uint32_t c = 0, x = 0, list[4];
	unsigned int i;

	TEST_ASSERT_SUCCESS(t_port_setup(&a, "st-m5a", "pair:st-m5", &attr,
					 tbuf, sizeof(tbuf), rbuf, 2048, false),
			    "");
	TEST_ASSERT_SUCCESS(t_port_setup(&b, "st-m5b", "pair:st-m5", &attr,
					 tbuf, sizeof(tbuf), rbuf,
					 sizeof(rbuf), true), "");
	for (i = 0; i < 4; i++)
		TEST_ASSERT_SUCCESS(t_recv(b.d.rqp, b.rmr, rbuf + i * 2048,
					   2048, i), "");
	h1 = hash_qp(&a.d, IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4);
	h2 = hash_qp(&a.d, 0);
	TEST_ASSERT(h1 != NULL && h2 != NULL, "hash QPs: %d", errno);
	TEST_ASSERT_EQUAL(h1->qp_num, 0, "mlx5: an RSS QP's qp_num is 0");
	TEST_ASSERT_EQUAL(h2->qp_num, 0, "every one of them");
	TEST_ASSERT_EQUAL(swv_counter_bind_qp_alloc(a.d.ctx, 0, &c), ENOENT,
			  "lqpn 0 names no QP");
	TEST_ASSERT_EQUAL(swv_counter_unbind_qp(a.d.ctx, 0, 1), ENOENT, "");
	/* Out of RESET: refused, in RTS (a sender) and RTR (a receiver). */
	TEST_ASSERT_EQUAL(swv_counter_bind_qp_alloc(a.d.ctx, qpn(a.d.sqp),
						    &c), EINVAL, "RTS");
	TEST_ASSERT_EQUAL(swv_counter_bind_qp_alloc(b.d.ctx, qpn(b.d.rqp),
						    &c), EINVAL, "RTR");
	TEST_ASSERT_EQUAL(swv_counter_list(a.d.ctx, list, 4), 0, "");
	TEST_ASSERT(mode_is(a.d.ctx, SWV_COUNTER_MODE_NONE, 0),
		    "a refused bind leaves the mode");
	/* In RESET it binds, and keeps its counter through INIT ... RTS. */
	s2 = t_raw_qp(&a.d, 64, 0, 1, 1);
	TEST_ASSERT_NOT_NULL(s2, "");
	TEST_ASSERT_SUCCESS(swv_counter_bind_qp_alloc(a.d.ctx, qpn(s2), &x),
			    "a QP in RESET");
	TEST_ASSERT(mode_is(a.d.ctx, SWV_COUNTER_MODE_MANUAL, 0), "");
	TEST_ASSERT_EQUAL(swv_counter_set_auto_mode(a.d.ctx,
						    SWV_COUNTER_MASK_QP_TYPE),
			  EBUSY, "auto mode while a counter exists");
	TEST_ASSERT_SUCCESS(t_qp_to(s2, IBV_QPS_RTS), "");
	TEST_ASSERT_EQUAL(swv_counter_bind_qp(a.d.ctx, qpn(a.d.sqp), x),
			  EINVAL, "to an existing counter: still not in RTS");
	TEST_ASSERT_SUCCESS(send_n(&a, &b, s2, tbuf, 3), "");
	TEST_ASSERT_EQUAL(t_poll(b.d.rcq, wc, 3, 2000), 3, "they went");
	TEST_ASSERT_EQUAL(swv_counter_query(a.d.ctx, x, &at, list, 4), 1, "");
	TEST_ASSERT_EQUAL(list[0], qpn(s2), "");
	TEST_ASSERT(at.stats.tx_frames == 0 && at.stats.tx_bytes == 0 &&
		    at.stats.tx_errors == 0, "mlx5: no Tx counts");
	/* swverbs' own per-QP counts still see them. */
	TEST_ASSERT_SUCCESS(swv_query_qp_stats(s2, &qs, NULL, NULL), "");
	TEST_ASSERT_EQUAL(qs.tx_frames, 3, "");
	TEST_ASSERT_SUCCESS(swv_counter_unbind_qp(a.d.ctx, qpn(s2), x), "");
	TEST_ASSERT(mode_is(a.d.ctx, SWV_COUNTER_MODE_NONE, 0), "");
	/* Auto mode binds at RESET -> INIT, never a hash QP. */
	TEST_ASSERT_SUCCESS(swv_counter_set_auto_mode(a.d.ctx,
						      SWV_COUNTER_MASK_QP_TYPE),
			    "");
	TEST_ASSERT_SUCCESS(t_qp_reset(s2), "");
	TEST_ASSERT_SUCCESS(t_qp_to(s2, IBV_QPS_RTS), "");
	TEST_ASSERT_EQUAL(swv_counter_list(a.d.ctx, list, 4), 1, "");
	TEST_ASSERT_EQUAL(swv_counter_query(a.d.ctx, list[0], &at, list, 4), 1,
			  "the sender only");
	TEST_ASSERT_EQUAL(list[0], qpn(s2), "");
	TEST_ASSERT_EQUAL(swv_counter_bind_qp_alloc(a.d.ctx, qpn(s2), &c),
			  EINVAL, "bind in auto mode");
	TEST_ASSERT_SUCCESS(swv_counter_set_auto_mode(a.d.ctx, 0), "");
	TEST_ASSERT_SUCCESS(swv_destroy_qp(s2), "");
	TEST_ASSERT_SUCCESS(hash_qp_free(h1), "");
	TEST_ASSERT_SUCCESS(hash_qp_free(h2), "");
	t_port_teardown(&b);
	t_port_teardown(&a);

	/* The full profile numbers hash QPs and binds them, running. */
	TEST_ASSERT_SUCCESS(t_setup_full(&f, "st-m5f", "loop"), "");
	h1 = hash_qp(&f, IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4);
	TEST_ASSERT_NOT_NULL(h1, "");
	TEST_ASSERT_NOT_EQUAL(h1->qp_num, 0, "full: a number");
	TEST_ASSERT_SUCCESS(swv_counter_bind_qp_alloc(f.ctx, qpn(h1), &x), "");
	TEST_ASSERT_SUCCESS(swv_counter_bind_qp(f.ctx, qpn(f.sqp), x), "RTS");
	TEST_ASSERT_SUCCESS(swv_counter_unbind_qp(f.ctx, qpn(f.sqp), x), "");
	TEST_ASSERT_SUCCESS(swv_counter_unbind_qp(f.ctx, qpn(h1), x), "");
	TEST_ASSERT_SUCCESS(hash_qp_free(h1), "");
	t_teardown(&f);
	return TEST_SUCCESS;
}

/* The calling thread's effective set without the capabilities of drop. */
static int
caps_drop(const unsigned int *drop, unsigned int n)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	unsigned int i;

	if (syscall(SYS_capget, &h, d) != 0)
		return -1;
	for (i = 0; i < n; i++)
		d[drop[i] / 32].effective &= ~(1u << (drop[i] % 32));
	return (int)syscall(SYS_capset, &h, d);
}

struct capcase {
	struct tdev *d;
	uint32_t lqpn;		/* a RAW_PACKET QP in RESET */
	int admin_set, admin_bind, admin_unbind, raw_bind, raw_list;
	int raw_unbind;
};

/*
 * Each on a thread of its own (capabilities are per thread, and a thread
 * cannot take back what it dropped): without CAP_NET_ADMIN every change
 * is EPERM; without CAP_NET_RAW a raw QP is not found, listing works.
 */
static void *
cap_admin(void *arg)
{
	struct capcase *k = arg;
	const unsigned int drop[] = { CAP_NET_ADMIN };
	uint32_t c = 0;

	if (caps_drop(drop, 1) != 0) {
		k->admin_set = -1;
		return NULL;
	}
	k->admin_set = swv_counter_set_auto_mode(k->d->ctx,
						 SWV_COUNTER_MASK_PID);
	k->admin_bind = swv_counter_bind_qp_alloc(k->d->ctx, k->lqpn, &c);
	k->admin_unbind = swv_counter_unbind_qp(k->d->ctx, k->lqpn, 1);
	return NULL;
}

static void *
cap_raw(void *arg)
{
	struct capcase *k = arg;
	const unsigned int drop[] = { CAP_NET_RAW };
	uint32_t c = 0, list[4];

	if (caps_drop(drop, 1) != 0) {
		k->raw_bind = -1;
		return NULL;
	}
	k->raw_bind = swv_counter_bind_qp_alloc(k->d->ctx, k->lqpn, &c);
	k->raw_list = swv_counter_list(k->d->ctx, list, 4);
	k->raw_unbind = swv_counter_unbind_qp(k->d->ctx, k->lqpn, 1);
	return NULL;
}

static bool
cap_has(unsigned int cap)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	return syscall(SYS_capget, &h, d) == 0 &&
	       (d[cap / 32].effective & (1u << (cap % 32))) != 0;
}

static int
test_mlx5_caps(void)
{
	struct capcase k = { 0 };
	struct ibv_qp *q;
	struct tdev d;
	pthread_t t;
	uint32_t c = 0;

	if (!cap_has(CAP_NET_ADMIN) || !cap_has(CAP_NET_RAW))
		TEST_SKIP("needs root: CAP_NET_ADMIN and CAP_NET_RAW to drop");
	TEST_ASSERT_SUCCESS(t_setup(&d, "st-caps", "loop"), "");
	q = t_raw_qp(&d, 4, 0, 1, 1);
	TEST_ASSERT_NOT_NULL(q, "");
	k.d = &d;
	k.lqpn = qpn(q);
	TEST_ASSERT_SUCCESS(pthread_create(&t, NULL, cap_admin, &k), "");
	pthread_join(t, NULL);
	TEST_ASSERT_EQUAL(k.admin_set, EPERM, "set auto: CAP_NET_ADMIN");
	TEST_ASSERT_EQUAL(k.admin_bind, EPERM, "bind: CAP_NET_ADMIN");
	TEST_ASSERT_EQUAL(k.admin_unbind, EPERM, "unbind: CAP_NET_ADMIN");
	TEST_ASSERT(mode_is(d.ctx, SWV_COUNTER_MODE_NONE, 0), "nothing set");
	/* With both here: bound; then a thread without CAP_NET_RAW. */
	TEST_ASSERT_SUCCESS(swv_counter_bind_qp_alloc(d.ctx, k.lqpn, &c), "");
	TEST_ASSERT_EQUAL(c, 1, "");
	TEST_ASSERT_SUCCESS(swv_counter_unbind_qp(d.ctx, k.lqpn, c), "");
	TEST_ASSERT_SUCCESS(swv_counter_bind_qp_alloc(d.ctx, k.lqpn, &c), "");
	TEST_ASSERT_SUCCESS(pthread_create(&t, NULL, cap_raw, &k), "");
	pthread_join(t, NULL);
	TEST_ASSERT_EQUAL(k.raw_bind, ENOENT,
			  "a raw QP without CAP_NET_RAW: no such QP");
	TEST_ASSERT_EQUAL(k.raw_list, 1, "listing needs nothing");
	TEST_ASSERT_EQUAL(k.raw_unbind, ENOENT, "");
	TEST_ASSERT_SUCCESS(swv_counter_unbind_qp(d.ctx, k.lqpn, c), "");
	TEST_ASSERT_SUCCESS(swv_destroy_qp(q), "");
	t_teardown(&d);
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite = {
	.name = "swverbs QP counters",
	.cases = {
		TEST_CASE(test_errnos),
		TEST_CASE(test_auto_type),
		TEST_CASE(test_auto_pid),
		TEST_CASE(test_auto_type_pid),
		TEST_CASE(test_counts_pair),
		TEST_CASE(test_counts_runs_thread),
		TEST_CASE(test_counts_runs_inline),
		TEST_CASE(test_mr_stats),
		TEST_CASE(test_mlx5_rules),
		TEST_CASE(test_mlx5_caps),
		TEST_CASES_END(),
	},
};

int
main(void)
{
	return unit_test_suite_runner(&suite);
}
