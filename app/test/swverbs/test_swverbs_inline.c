/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The inline engine: devices with no thread, whose work runs inside the
 * verbs calls made on them (lib/swverbs/progress.c). The backpressure
 * case holds a device the way another thread's call holds it (its owner
 * flag, from swv_priv.h), so that what a sender does then is exact.
 */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "swv_test_util.h"
#include "swv_priv.h"

#define NFRAMES 8

/* A device on the inline engine, a MAC rule to its receiver, buffers. */
struct tinl {
	struct tport p;
	uint8_t tbuf[NFRAMES][128];
	uint8_t rbuf[NFRAMES][2048];
};

static int
ti_setup(struct tinl *t, const char *name, const char *wire,
	 struct swv_engine *eng)
{
	struct swv_device_attr attr = { .flags = 0, .engine = eng };

	return t_port_setup(&t->p, name, wire, &attr, t->tbuf,
			    sizeof(t->tbuf), t->rbuf, sizeof(t->rbuf), true);
}

/* Post n receives on r and n sends from s to r's MAC. */
static int
ti_post(struct tinl *s, struct tinl *r, unsigned int n)
{
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = t_recv(r->p.d.rqp, r->p.rmr, r->rbuf[i],
			     sizeof(r->rbuf[i]), 100 + i);
		if (ret != 0)
			return ret;
	}
	for (i = 0; i < n; i++) {
		t_frame(s->tbuf[i], 64 + i, r->p.d.mac, s->p.d.mac, (uint8_t)i);
		ret = t_send(s->p.d.sqp, s->p.tmr, s->tbuf[i], 64 + i, 200 + i);
		if (ret != 0)
			return ret;
	}
	return 0;
}

/*
 * One poll of cq (no retry: the call itself does the work) for n
 * completions, checked in order.
 */
static int
ti_check(struct ibv_cq *cq, unsigned int n, uint64_t wr_id0, bool rx)
{
	struct ibv_wc wc[NFRAMES];
	unsigned int i;

	TEST_ASSERT_EQUAL(ibv_poll_cq(cq, (int)n, wc), (int)n, "completions");
	for (i = 0; i < n; i++) {
		TEST_ASSERT_EQUAL(wc[i].status, IBV_WC_SUCCESS, "status %u", i);
		TEST_ASSERT_EQUAL(wc[i].wr_id, wr_id0 + i, "order %u", i);
		if (rx)
			TEST_ASSERT_EQUAL(wc[i].byte_len, 64 + i, "len %u", i);
	}
	return TEST_SUCCESS;
}

/*
 * No thread: the post itself sends, loops back and receives; the
 * completions are there when ibv_post_send() returns. The inline engine
 * is not one to start, run or destroy.
 */
static int
test_inline_loop(void)
{
	struct swv_engine *eng = swv_engine_inline();
	struct swv_engine_stats st;
	struct tinl t;

	TEST_ASSERT_SUCCESS(ti_setup(&t, "inl-loop", "loop", eng), "setup");
	TEST_ASSERT_SUCCESS(swv_engine_get_stats(eng, &st), "stats");
	TEST_ASSERT_EQUAL(st.thread, 0, "the inline engine has a thread");
	TEST_ASSERT_EQUAL(st.ndev, 1, "ndev");
	TEST_ASSERT_SUCCESS(ti_post(&t, &t, NFRAMES), "post");
	TEST_ASSERT_SUCCESS(ti_check(t.p.d.rcq, NFRAMES, 100, true), "rx");
	TEST_ASSERT_SUCCESS(ti_check(t.p.d.scq, NFRAMES, 200, false), "tx");
	TEST_ASSERT_EQUAL(swv_engine_run_once(eng), -1, "run_once");
	TEST_ASSERT_EQUAL(errno, EINVAL, "run_once errno");
	TEST_ASSERT_EQUAL(swv_engine_start(eng, -1), EINVAL, "start");
	TEST_ASSERT_EQUAL(swv_engine_stop(eng), EINVAL, "stop");
	TEST_ASSERT_EQUAL(swv_engine_destroy(eng), EINVAL, "destroy");
	t_port_teardown(&t.p);
	return TEST_SUCCESS;
}

/*
 * Backpressure: while the receiving end of a pair is held (another
 * thread's call owns it), a sender's WQEs stay posted: nothing sent,
 * nothing completed, nothing lost. The next call on either end, a poll of
 * the receiver's empty CQ here, sends them, in order.
 */
static int
test_inline_backpressure(void)
{
	struct swv_engine *eng = swv_engine_inline();
	struct swv_port_counters ca, cb;
	struct swv_device *db;
	struct tinl a, b;
	struct ibv_wc wc;

	TEST_ASSERT_SUCCESS(ti_setup(&a, "inl-a", "pair:inl-bp", eng), "a");
	TEST_ASSERT_SUCCESS(ti_setup(&b, "inl-b", "pair:inl-bp", eng), "b");
	db = swv_ctx_dev(b.p.d.ctx);
	/* b's first call, its first link check: the next is 10 ms away */
	TEST_ASSERT_EQUAL(ibv_poll_cq(b.p.d.rcq, 1, &wc), 0, "empty");
	__atomic_store_n(&db->inl_own, 1, __ATOMIC_RELEASE);
	TEST_ASSERT_SUCCESS(ti_post(&a, &b, NFRAMES), "post");
	TEST_ASSERT_EQUAL(t_poll(a.p.d.scq, &wc, 1, 0), 0, "sent while held");
	TEST_ASSERT_SUCCESS(swv_query_port_counters(a.p.d.ctx, &ca), "ca");
	TEST_ASSERT_EQUAL(ca.tx_frames, 0, "tx_frames while held");
	__atomic_store_n(&db->inl_own, 0, __ATOMIC_RELEASE);
	/* b's CQ is empty: the poll pulls what a left posted */
	TEST_ASSERT_SUCCESS(ti_check(b.p.d.rcq, NFRAMES, 100, true), "rx");
	TEST_ASSERT_SUCCESS(ti_check(a.p.d.scq, NFRAMES, 200, false), "tx");
	TEST_ASSERT_SUCCESS(swv_query_port_counters(a.p.d.ctx, &ca), "ca");
	TEST_ASSERT_SUCCESS(swv_query_port_counters(b.p.d.ctx, &cb), "cb");
	TEST_ASSERT_EQUAL(ca.tx_frames, NFRAMES, "tx_frames");
	TEST_ASSERT_EQUAL(cb.rx_delivered, NFRAMES, "rx_delivered");
	TEST_ASSERT_EQUAL(cb.rx_out_of_buffer, 0, "rx_out_of_buffer");
	t_port_teardown(&b.p);
	t_port_teardown(&a.p);
	return TEST_SUCCESS;
}

/*
 * A request made while another call owns the device is not lost: it is
 * counted (inl_want), and the owner, seeing the count change when it lets
 * go, runs once more. Made exact with a hook in the owner's pass: the
 * wire's tx_flush(), which runs after the pass has drained the send
 * queues, has a second thread post a send on another QP and waits for
 * that post to return. The post finds the device owned and returns with
 * its WQE posted; the owner's own call must then send it before it
 * returns, with no further call (the pass's drain came before the WQE, so
 * nothing else marks it as left over).
 */
static struct {
	const struct swv_wire_ops *orig;
	struct tinl *t;
	struct ibv_qp *qp2;
	int armed;
	int ret;
} req;

static void *
req_post(void *arg)
{
	struct tinl *t = req.t;

	(void)arg;
	t_frame(t->tbuf[1], 65, t->p.d.mac, t->p.d.mac, 1);
	req.ret = t_send(req.qp2, t->p.tmr, t->tbuf[1], 65, 201);
	return NULL;
}

static void
req_flush(struct swv_wire *wire)
{
	pthread_t th;

	if (req.armed) {
		req.armed = 0;
		if (pthread_create(&th, NULL, req_post, NULL) == 0)
			pthread_join(th, NULL);
		else
			req.ret = -1;
	}
	req.orig->tx_flush(wire);
}

static int
test_inline_request(void)
{
	struct swv_engine *eng = swv_engine_inline();
	struct swv_port_counters c;
	struct swv_wire_ops hooked;
	struct swv_device *dev;
	struct ibv_wc wc[2];
	struct tinl t;
	unsigned int i;
	int n;

	TEST_ASSERT_SUCCESS(ti_setup(&t, "inl-req", "loop", eng), "setup");
	dev = swv_ctx_dev(t.p.d.ctx);
	req.t = &t;
	req.qp2 = t_raw_qp(&t.p.d, 16, 0, 1, 1);
	TEST_ASSERT_NOT_NULL(req.qp2, "second sender");
	TEST_ASSERT_SUCCESS(t_qp_to(req.qp2, IBV_QPS_RTS), "RTS");
	for (i = 0; i < 2; i++)
		TEST_ASSERT_SUCCESS(t_recv(t.p.d.rqp, t.p.rmr, t.rbuf[i],
					   sizeof(t.rbuf[i]), 100 + i), "");
	req.orig = dev->wire->ops;
	hooked = *req.orig;
	hooked.tx_flush = req_flush;
	dev->wire->ops = &hooked;
	req.armed = 1;
	req.ret = -1;
	t_frame(t.tbuf[0], 64, t.p.d.mac, t.p.d.mac, 0);
	n = t_send(t.p.d.sqp, t.p.tmr, t.tbuf[0], 64, 200);
	dev->wire->ops = req.orig;
	TEST_ASSERT_SUCCESS(n, "post");
	TEST_ASSERT_EQUAL(req.armed, 0, "the hook ran");
	TEST_ASSERT_SUCCESS(req.ret, "the second thread's post");
	/* Both frames are in: the one posted meanwhile too. */
	TEST_ASSERT_SUCCESS(swv_query_port_counters(t.p.d.ctx, &c), "");
	TEST_ASSERT_EQUAL(c.rx_delivered, 2,
			  "frames delivered by the owner's call");
	TEST_ASSERT_SUCCESS(ti_check(t.p.d.rcq, 2, 100, true), "rx");
	n = ibv_poll_cq(t.p.d.scq, 2, wc);
	TEST_ASSERT_EQUAL(n, 2, "send completions");
	TEST_ASSERT(wc[0].wr_id == 200 && wc[1].wr_id == 201, "");
	TEST_ASSERT_SUCCESS(swv_destroy_qp(req.qp2), "");
	t_port_teardown(&t.p);
	return TEST_SUCCESS;
}

/* The ends of a pair hand frames to each other: both inline, or EXDEV. */
static int
test_inline_cross_model(void)
{
	struct swv_device_attr attr = { .flags = 0, .engine = NULL };

	attr.engine = swv_engine_inline();
	TEST_ASSERT_SUCCESS(swv_device_create_attr("inl-x0", "pair:inl-x",
						   NULL, &attr), "x0");
	attr.engine = NULL;
	TEST_ASSERT_EQUAL(swv_device_create_attr("inl-x1", "pair:inl-x",
						 NULL, &attr), EXDEV,
			  "a thread end on an inline end's cable");
	TEST_ASSERT_SUCCESS(swv_device_destroy("inl-x0"), "destroy");
	return TEST_SUCCESS;
}

/*
 * A pair end's link follows its peer without a call on it: the peer's
 * creation and destruction check it at once.
 */
static int
test_inline_link(void)
{
	struct swv_engine *eng = swv_engine_inline();
	struct tinl a, b;

	TEST_ASSERT_SUCCESS(ti_setup(&a, "inl-la", "pair:inl-l", eng), "a");
	TEST_ASSERT_EQUAL(SWV_LOAD(&swv_ctx_dev(a.p.d.ctx)->link), 0, "alone");
	TEST_ASSERT_SUCCESS(ti_setup(&b, "inl-lb", "pair:inl-l", eng), "b");
	TEST_ASSERT_EQUAL(SWV_LOAD(&swv_ctx_dev(a.p.d.ctx)->link), 1,
			  "up when the peer came");
	t_port_teardown(&b.p);
	TEST_ASSERT_EQUAL(SWV_LOAD(&swv_ctx_dev(a.p.d.ctx)->link), 0,
			  "down when the peer left");
	t_port_teardown(&a.p);
	return TEST_SUCCESS;
}

static const struct unit_test_suite inline_suite = {
	.name = "swverbs inline progress",
	.cases = {
		TEST_CASE(test_inline_loop),
		TEST_CASE(test_inline_backpressure),
		TEST_CASE(test_inline_request),
		TEST_CASE(test_inline_cross_model),
		TEST_CASE(test_inline_link),
		TEST_CASES_END(),
	},
};

int
main(void)
{
	return unit_test_suite_runner(&inline_suite);
}
