/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Completion channels: one event per arm, a CQE pending at the arm raises
 * it at once (as on a ConnectX), solicited_only waits for an error
 * completion, a sleeper in a blocking get_cq_event wakes on a frame,
 * destroy refuses unacknowledged events and drops unread ones, and the
 * errno cases.
 */

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>

#include "swv_priv.h"
#include "swv_test_util.h"

#define FLEN 128

static uint8_t tbuf[FLEN];
static uint8_t rbuf[16][2048];

struct chdev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq;
	struct ibv_cq *rcq;	/**< on ch */
	struct ibv_qp *sqp;
	struct ibv_qp *rqp;
	struct ibv_mr *tmr;
	struct ibv_mr *rmr;
	struct ibv_flow *fl;
	uint8_t mac[6];
	int cq_ctx;
};

static struct chdev cd;

static int
ch_setup(void)
{
	struct ibv_qp_init_attr a;

	memset(&cd, 0, sizeof(cd));
	if (swv_device_create("ch0", "loop", NULL) != 0)
		return TEST_FAILED;
	cd.ctx = t_open("ch0");
	if (cd.ctx == NULL)
		return TEST_FAILED;
	swv_query_port_mac(cd.ctx, cd.mac);
	cd.pd = swv_alloc_pd(cd.ctx);
	cd.ch = swv_create_comp_channel(cd.ctx);
	cd.scq = swv_create_cq(cd.ctx, 64, NULL, NULL, 0);
	cd.rcq = swv_create_cq(cd.ctx, 64, &cd.cq_ctx, cd.ch, 0);
	if (cd.pd == NULL || cd.ch == NULL || cd.scq == NULL ||
	    cd.rcq == NULL)
		return TEST_FAILED;
	memset(&a, 0, sizeof(a));
	a.send_cq = cd.scq;
	a.recv_cq = cd.rcq;
	a.qp_type = IBV_QPT_RAW_PACKET;
	a.sq_sig_all = 1;
	a.cap.max_send_wr = 16;
	a.cap.max_recv_wr = 16;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	cd.sqp = swv_create_qp(cd.pd, &a);
	a.cap.max_send_wr = 1;
	cd.rqp = swv_create_qp(cd.pd, &a);
	if (cd.sqp == NULL || cd.rqp == NULL ||
	    t_qp_to(cd.sqp, IBV_QPS_RTS) != 0 ||
	    t_qp_to(cd.rqp, IBV_QPS_RTR) != 0)
		return TEST_FAILED;
	cd.tmr = swv_reg_mr(cd.pd, tbuf, sizeof(tbuf), 0);
	cd.rmr = swv_reg_mr(cd.pd, rbuf, sizeof(rbuf),
			    IBV_ACCESS_LOCAL_WRITE);
	cd.fl = t_flow_eth(cd.rqp, cd.mac, 0);
	if (cd.tmr == NULL || cd.rmr == NULL || cd.fl == NULL)
		return TEST_FAILED;
	t_frame(tbuf, FLEN, cd.mac, cd.mac, 1);
	return TEST_SUCCESS;
}

/* Send one frame to ourselves and reap its send completion. */
static int
ch_send(void)
{
	struct ibv_wc wc;

	if (t_send(cd.sqp, cd.tmr, tbuf, FLEN, 0) != 0)
		return -1;
	return t_poll(cd.scq, &wc, 1, 2000) == 1 ? 0 : -1;
}

/* Whether the channel's fd becomes readable within ms. */
static bool
ch_readable(int ms)
{
	struct pollfd p = { .fd = cd.ch->fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

/* One event of the channel, checked to be for the Rx CQ, acknowledged. */
static int
ch_event(void)
{
	struct ibv_cq *cq = NULL;
	void *ctx = NULL;

	if (swv_get_cq_event(cd.ch, &cq, &ctx) != 0)
		return -1;
	if (cq != cd.rcq || ctx != &cd.cq_ctx)
		return -1;
	swv_ack_cq_events(cq, 1);
	return 0;
}

static int
test_errors(void)
{
	struct swv_device_attr ia = {
		.flags = SWV_DEVICE_PROFILE_MLX5,
		.engine = swv_engine_inline(),
	};
	struct ibv_context *ictx, *c2;
	struct ibv_comp_channel *ich;
	struct ibv_cq_init_attr_ex ca;

	errno = 0;
	TEST_ASSERT_NULL(swv_create_comp_channel(NULL), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "");
	TEST_ASSERT_EQUAL(swv_destroy_comp_channel(NULL), EINVAL, "");
	/* CQs use it. */
	TEST_ASSERT_EQUAL(swv_destroy_comp_channel(cd.ch), EBUSY, "");
	/* No channel: nothing to raise an event on. */
	TEST_ASSERT_EQUAL(swv_req_notify_cq(cd.scq, 0), EINVAL, "");
	TEST_ASSERT_EQUAL(ibv_req_notify_cq(cd.scq, 0), EINVAL, "");
	/* The channel of another context. */
	c2 = t_open("ch0");
	TEST_ASSERT_NOT_NULL(c2, "");
	errno = 0;
	TEST_ASSERT_NULL(swv_create_cq(c2, 8, NULL, cd.ch, 0), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "");
	TEST_ASSERT_SUCCESS(swv_close_device(c2), "");
	/* An inline device: nothing would run it while its user sleeps. */
	TEST_ASSERT_SUCCESS(swv_device_create_attr("chi", "loop", NULL, &ia),
			    "");
	ictx = t_open("chi");
	TEST_ASSERT_NOT_NULL(ictx, "");
	ich = swv_create_comp_channel(ictx);
	TEST_ASSERT_NOT_NULL(ich, "");
	errno = 0;
	TEST_ASSERT_NULL(swv_create_cq(ictx, 8, NULL, ich, 0), "");
	TEST_ASSERT_EQUAL(errno, EOPNOTSUPP, "");
	memset(&ca, 0, sizeof(ca));
	ca.cqe = 8;
	ca.channel = ich;
	errno = 0;
	TEST_ASSERT_NULL(swv_create_cq_ex(ictx, &ca), "");
	TEST_ASSERT_EQUAL(errno, EOPNOTSUPP, "");
	TEST_ASSERT_SUCCESS(swv_destroy_comp_channel(ich), "");
	TEST_ASSERT_SUCCESS(swv_close_device(ictx), "");
	TEST_ASSERT_SUCCESS(swv_device_destroy("chi"), "");
	return TEST_SUCCESS;
}

static int
test_one_event_per_arm(void)
{
	struct ibv_cq *cq;
	struct ibv_wc wc[4];
	void *ctx;
	int i, fl;

	fl = fcntl(cd.ch->fd, F_GETFL);
	TEST_ASSERT_SUCCESS(fcntl(cd.ch->fd, F_SETFL, fl | O_NONBLOCK), "");
	for (i = 0; i < 8; i++)
		TEST_ASSERT_SUCCESS(t_recv(cd.rqp, cd.rmr, rbuf[i],
					   sizeof(rbuf[i]), i), "");
	/* Not armed: a frame raises nothing. */
	TEST_ASSERT_SUCCESS(ch_send(), "");
	TEST_ASSERT_EQUAL(t_poll(cd.rcq, wc, 1, 2000), 1, "");
	TEST_ASSERT(!ch_readable(0), "an event without an arm");
	errno = 0;
	TEST_ASSERT_EQUAL(swv_get_cq_event(cd.ch, &cq, &ctx), -1, "");
	TEST_ASSERT_EQUAL(errno, EAGAIN, "");
	/* Armed on an empty CQ: the next frame raises one event. */
	TEST_ASSERT_SUCCESS(ibv_req_notify_cq(cd.rcq, 0), "");
	TEST_ASSERT(!ch_readable(0), "an event on an empty CQ");
	TEST_ASSERT_SUCCESS(ch_send(), "");
	TEST_ASSERT(ch_readable(2000), "no event for the frame");
	TEST_ASSERT_SUCCESS(ch_event(), "");
	TEST_ASSERT_EQUAL(t_poll(cd.rcq, wc, 1, 2000), 1, "");
	/* The arm is spent: another frame, no event. */
	TEST_ASSERT_SUCCESS(ch_send(), "");
	TEST_ASSERT_EQUAL(t_poll(cd.rcq, wc, 1, 2000), 1, "");
	TEST_ASSERT(!ch_readable(0), "two events for one arm");
	/* Two arms before any frame: still one event. */
	TEST_ASSERT_SUCCESS(ibv_req_notify_cq(cd.rcq, 0), "");
	TEST_ASSERT_SUCCESS(ibv_req_notify_cq(cd.rcq, 0), "");
	TEST_ASSERT_SUCCESS(ch_send(), "");
	TEST_ASSERT(ch_readable(2000), "no event");
	TEST_ASSERT_SUCCESS(ch_event(), "");
	TEST_ASSERT_EQUAL(t_poll(cd.rcq, wc, 1, 2000), 1, "");
	TEST_ASSERT(!ch_readable(0), "a second event");
	/* A CQE already there when arming raises the event at once (mlx5). */
	TEST_ASSERT_SUCCESS(ch_send(), "");
	T_WAIT(SWV_LOAD_ACQ(&to_swv_cq(cd.rcq)->head) !=
	       to_swv_cq(cd.rcq)->tail);
	TEST_ASSERT_SUCCESS(ibv_req_notify_cq(cd.rcq, 0), "");
	TEST_ASSERT(ch_readable(0), "no event for the pending CQE");
	TEST_ASSERT_SUCCESS(ch_event(), "");
	TEST_ASSERT_EQUAL(t_poll(cd.rcq, wc, 1, 2000), 1, "");
	TEST_ASSERT_SUCCESS(fcntl(cd.ch->fd, F_SETFL, fl), "");
	return TEST_SUCCESS;
}

struct sleeper {
	pthread_t tid;
	int ret;
	struct ibv_cq *cq;
	bool done;
};

static void *
sleeper_main(void *arg)
{
	struct sleeper *s = arg;
	void *ctx;

	s->ret = swv_get_cq_event(cd.ch, &s->cq, &ctx);
	__atomic_store_n(&s->done, true, __ATOMIC_RELEASE);
	return NULL;
}

static int
test_blocking_wakes(void)
{
	struct sleeper s = { .ret = -2 };
	struct ibv_wc wc;

	TEST_ASSERT_SUCCESS(ibv_req_notify_cq(cd.rcq, 0), "");
	TEST_ASSERT_SUCCESS(pthread_create(&s.tid, NULL, sleeper_main, &s),
			    "");
	usleep(50000);
	TEST_ASSERT(!__atomic_load_n(&s.done, __ATOMIC_ACQUIRE),
		    "get_cq_event returned with nothing received");
	TEST_ASSERT_SUCCESS(ch_send(), "");
	T_WAIT(__atomic_load_n(&s.done, __ATOMIC_ACQUIRE));
	TEST_ASSERT(__atomic_load_n(&s.done, __ATOMIC_ACQUIRE),
		    "the sleeper did not wake on the frame");
	pthread_join(s.tid, NULL);
	TEST_ASSERT_SUCCESS(s.ret, "");
	TEST_ASSERT(s.cq == cd.rcq, "");
	swv_ack_cq_events(s.cq, 1);
	TEST_ASSERT_EQUAL(t_poll(cd.rcq, &wc, 1, 2000), 1, "");
	return TEST_SUCCESS;
}

static int
test_solicited(void)
{
	struct ibv_wc wc;
	int fl;

	fl = fcntl(cd.ch->fd, F_GETFL);
	TEST_ASSERT_SUCCESS(fcntl(cd.ch->fd, F_SETFL, fl | O_NONBLOCK), "");
	/* A good frame is not solicited. */
	TEST_ASSERT_SUCCESS(ibv_req_notify_cq(cd.rcq, 1), "");
	TEST_ASSERT_SUCCESS(ch_send(), "");
	TEST_ASSERT_EQUAL(t_poll(cd.rcq, &wc, 1, 2000), 1, "");
	TEST_ASSERT_EQUAL(wc.status, IBV_WC_SUCCESS, "");
	TEST_ASSERT(!ch_readable(0), "an event for a good frame");
	/* A receive in error is: a buffer beyond its MR. */
	{
		struct ibv_sge sge = {
			.addr = (uintptr_t)rbuf[15] + 2048 - 16,
			.length = 2048, .lkey = cd.rmr->lkey,
		};
		struct ibv_recv_wr wr = { .wr_id = 99, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		/* The last good buffer: no event still. */
		TEST_ASSERT_SUCCESS(ch_send(), "");
		TEST_ASSERT_EQUAL(t_poll(cd.rcq, &wc, 1, 2000), 1, "");
		TEST_ASSERT(!ch_readable(0), "an event for a good frame");
		TEST_ASSERT_SUCCESS(ibv_post_recv(cd.rqp, &wr, &bad), "");
	}
	TEST_ASSERT_SUCCESS(ch_send(), "");
	TEST_ASSERT(ch_readable(2000), "no event for an error completion");
	TEST_ASSERT_SUCCESS(ch_event(), "");
	TEST_ASSERT_EQUAL(t_poll(cd.rcq, &wc, 1, 2000), 1, "");
	TEST_ASSERT_NOT_EQUAL(wc.status, IBV_WC_SUCCESS, "");
	TEST_ASSERT_SUCCESS(fcntl(cd.ch->fd, F_SETFL, fl), "");
	return TEST_SUCCESS;
}

static int
test_destroy(void)
{
	struct ibv_cq *cq, *cq2;
	struct ibv_wc wc;
	void *ctx;
	int fl;

	fl = fcntl(cd.ch->fd, F_GETFL);
	TEST_ASSERT_SUCCESS(fcntl(cd.ch->fd, F_SETFL, fl | O_NONBLOCK), "");
	cq2 = swv_create_cq(cd.ctx, 8, NULL, cd.ch, 0);
	TEST_ASSERT_NOT_NULL(cq2, "");
	/* The RQ is in error: a receive posted now completes flushed. */
	TEST_ASSERT_SUCCESS(ibv_req_notify_cq(cd.rcq, 0), "");
	TEST_ASSERT_SUCCESS(t_recv(cd.rqp, cd.rmr, rbuf[0], 64, 7), "");
	TEST_ASSERT(ch_readable(2000), "no event for the flushed receive");
	TEST_ASSERT_SUCCESS(swv_get_cq_event(cd.ch, &cq, &ctx), "");
	TEST_ASSERT(cq == cd.rcq, "");
	/* The flushed CQE is still there: a new arm fires at once. */
	TEST_ASSERT_SUCCESS(ibv_req_notify_cq(cd.rcq, 0), "");
	TEST_ASSERT(ch_readable(0), "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(cd.fl), "");
	cd.fl = NULL;
	TEST_ASSERT_SUCCESS(swv_destroy_qp(cd.rqp), "");
	cd.rqp = NULL;
	TEST_ASSERT_SUCCESS(swv_destroy_qp(cd.sqp), "");
	cd.sqp = NULL;
	/* The QP's destroy took its CQE from the CQ, as mlx5's does. */
	TEST_ASSERT_EQUAL(swv_poll_cq(cd.rcq, 1, &wc), 0, "a CQE left");
	/* Read, not acknowledged. */
	TEST_ASSERT_EQUAL(swv_destroy_cq(cd.rcq), EBUSY, "");
	swv_ack_cq_events(cd.rcq, 1);
	/* An event not read (the second arm's) goes with its CQ. */
	TEST_ASSERT_SUCCESS(swv_destroy_cq(cd.rcq), "");
	cd.rcq = NULL;
	errno = 0;
	TEST_ASSERT_EQUAL(swv_get_cq_event(cd.ch, &cq, &ctx), -1, "");
	TEST_ASSERT_EQUAL(errno, EAGAIN, "");
	TEST_ASSERT_EQUAL(swv_destroy_comp_channel(cd.ch), EBUSY, "cq2");
	TEST_ASSERT_SUCCESS(swv_destroy_cq(cq2), "");
	TEST_ASSERT_SUCCESS(swv_destroy_comp_channel(cd.ch), "");
	cd.ch = NULL;
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite = {
	.name = "swverbs completion channels",
	.setup = ch_setup,
	.cases = {
		TEST_CASE(test_errors),
		TEST_CASE(test_one_event_per_arm),
		TEST_CASE(test_blocking_wakes),
		TEST_CASE(test_solicited),
		TEST_CASE(test_destroy),
		TEST_CASES_END(),
	},
};

int
main(void)
{
	return unit_test_suite_runner(&suite);
}
