/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * QP counters (lib/swverbs/stat.c): every errno of the kernel's counter
 * calls, auto mode by type, pid and both (a QP bound at its RESET -> INIT
 * with a port, as the kernel binds), and counts exact against frames
 * sent over a pair wire: bound before traffic, after part of it, unbound in
 * the middle.
 */

#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>

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

	TEST_ASSERT_SUCCESS(t_setup(&d, "st-err", "loop"), "");
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
		.flags = SWV_DEVICE_PROFILE_MLX5, .engine = NULL,
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
		.flags = SWV_DEVICE_PROFILE_MLX5, .engine = NULL,
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

static const struct unit_test_suite suite = {
	.name = "swverbs QP counters",
	.cases = {
		TEST_CASE(test_errnos),
		TEST_CASE(test_auto_type),
		TEST_CASE(test_auto_pid),
		TEST_CASE(test_auto_type_pid),
		TEST_CASE(test_counts_pair),
		TEST_CASE(test_mr_stats),
		TEST_CASES_END(),
	},
};

int
main(void)
{
	return unit_test_suite_runner(&suite);
}
