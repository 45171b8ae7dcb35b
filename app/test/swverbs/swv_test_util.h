/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Helpers shared by the swverbs unit tests: a device with a context, PD, CQs,
 * a sender QP in RTS and a receiver (raw QP with its own RQ), frames, and
 * polling with a deadline.
 */

#ifndef SWV_TEST_UTIL_H
#define SWV_TEST_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "swverbs.h"
#include "test.h"

struct tdev {
	char name[SWV_NAME_MAX];
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq;	/**< send CQ */
	struct ibv_cq *rcq;	/**< receive CQ */
	struct ibv_qp *sqp;	/**< sender, RTS */
	struct ibv_qp *rqp;	/**< raw QP with an RQ, RTR */
	uint8_t mac[6];
};

static inline uint64_t
t_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* CLOCK_MONOTONIC in ns: the clock of swverbs' completion timestamps. */
static inline uint64_t
t_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline struct ibv_context *
t_open(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = swv_get_device_list(&n);
	if (list == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		if (strcmp(swv_get_device_name(list[i]), name) == 0)
			ctx = swv_open_device(list[i]);
	swv_free_device_list(list);
	return ctx;
}

/*
 * One swv_modify_qp() to state s with attr_mask mask (port 1, cur_qp_state
 * s, rate_limit rate kbit/s). Return: its errno.
 */
static inline int
t_qp_modify(struct ibv_qp *qp, enum ibv_qp_state s, int mask, uint32_t rate)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = s;
	a.port_num = 1;
	a.cur_qp_state = s;
	a.rate_limit = rate;
	return swv_modify_qp(qp, &a, mask);
}

static inline int
t_qp_to(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	ret = swv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT);
	if (ret != 0 || s == IBV_QPS_INIT)
		return ret;
	a.qp_state = IBV_QPS_RTR;
	ret = swv_modify_qp(qp, &a, IBV_QP_STATE);
	if (ret != 0 || s == IBV_QPS_RTR)
		return ret;
	a.qp_state = IBV_QPS_RTS;
	return swv_modify_qp(qp, &a, IBV_QP_STATE);
}

static inline struct ibv_qp *
t_raw_qp(struct tdev *d, uint32_t send_wr, uint32_t recv_wr, uint32_t sge,
	 int sig_all)
{
	struct ibv_qp_init_attr a;

	memset(&a, 0, sizeof(a));
	a.send_cq = d->scq;
	a.recv_cq = d->rcq;
	a.qp_type = IBV_QPT_RAW_PACKET;
	a.sq_sig_all = sig_all;
	a.cap.max_send_wr = send_wr;
	a.cap.max_recv_wr = recv_wr;
	a.cap.max_send_sge = sge;
	a.cap.max_recv_sge = sge;
	return swv_create_qp(d->pd, &a);
}

/*
 * Device (with swv_device_create_attr() @attr: a profile, an engine),
 * context, PD, two CQs, sender QP (RTS), receiver QP (RTR).
 */
static inline int
t_setup_attr(struct tdev *d, const char *name, const char *wire,
	     const struct swv_device_attr *attr)
{
	int ret;

	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	ret = swv_device_create_attr(name, wire, NULL, attr);
	if (ret != 0)
		return ret;
	d->ctx = t_open(name);
	if (d->ctx == NULL)
		return errno;
	swv_query_port_mac(d->ctx, d->mac);
	d->pd = swv_alloc_pd(d->ctx);
	d->scq = swv_create_cq(d->ctx, 1024, NULL, NULL, 0);
	d->rcq = swv_create_cq(d->ctx, 1024, NULL, NULL, 0);
	if (d->pd == NULL || d->scq == NULL || d->rcq == NULL)
		return errno;
	d->sqp = t_raw_qp(d, 256, 0, 8, 1);
	d->rqp = t_raw_qp(d, 1, 256, 8, 1);
	if (d->sqp == NULL || d->rqp == NULL)
		return errno;
	ret = t_qp_to(d->sqp, IBV_QPS_RTS);
	if (ret == 0)
		ret = t_qp_to(d->rqp, IBV_QPS_RTR);
	return ret;
}

/* t_setup_attr() with @flags, on the default engine. */
static inline int
t_setup_flags(struct tdev *d, const char *name, const char *wire,
	      unsigned int flags)
{
	struct swv_device_attr attr = { .flags = flags, .engine = NULL };

	return t_setup_attr(d, name, wire, &attr);
}

/* t_setup_flags() on the default (mlx5) profile. */
static inline int
t_setup(struct tdev *d, const char *name, const char *wire)
{
	return t_setup_flags(d, name, wire, SWV_DEVICE_PROFILE_MLX5);
}

/* t_setup_flags() on the full profile: matches mlx5 refuses. */
static inline int
t_setup_full(struct tdev *d, const char *name, const char *wire)
{
	return t_setup_flags(d, name, wire, SWV_DEVICE_PROFILE_FULL);
}

/* A counters object with no point attached. */
static inline struct ibv_counters *
t_counters(struct ibv_context *ctx)
{
	struct ibv_counters_init_attr ia;

	memset(&ia, 0, sizeof(ia));
	return swv_create_counters(ctx, &ia);
}

/* Attach a point (static mode). 0 or the errno. */
static inline int
t_attach(struct ibv_counters *c, int desc, uint32_t index)
{
	struct ibv_counter_attach_attr a;

	memset(&a, 0, sizeof(a));
	a.counter_desc = (enum ibv_counter_description)desc;
	a.index = index;
	return swv_attach_counters_point_flow(c, &a, NULL);
}

static inline void
t_teardown(struct tdev *d)
{
	if (d->sqp != NULL)
		swv_destroy_qp(d->sqp);
	if (d->rqp != NULL)
		swv_destroy_qp(d->rqp);
	if (d->scq != NULL)
		swv_destroy_cq(d->scq);
	if (d->rcq != NULL)
		swv_destroy_cq(d->rcq);
	if (d->pd != NULL)
		swv_dealloc_pd(d->pd);
	if (d->ctx != NULL)
		swv_close_device(d->ctx);
	swv_device_destroy(d->name);
	memset(d, 0, sizeof(*d));
}

/* Poll until n completions arrived or ms passed; returns how many. */
static inline int
t_poll(struct ibv_cq *cq, struct ibv_wc *wc, int n, unsigned int ms)
{
	uint64_t end = t_now_ms() + ms;
	int got = 0, r;

	while (got < n) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			return r;
		got += r;
		if (got < n) {
			if (t_now_ms() > end)
				break;
			usleep(50);
		}
	}
	return got;
}

/*
 * Wait until cq holds n CQEs not polled yet (swv_cq_peek(), 5 s at most);
 * the caller is the CQ's poller.
 */
static inline int
t_cq_wait_pending(struct ibv_cq_ex *cq, uint32_t n)
{
	const volatile uint32_t *head;
	uint64_t end = t_now_ms() + 5000;
	uint32_t pending = 0, tail;

	do {
		TEST_ASSERT_SUCCESS(swv_cq_peek(cq, &pending, &head, &tail),
				    "");
		if (pending == n)
			return TEST_SUCCESS;
		usleep(100);
	} while (t_now_ms() < end);
	TEST_ASSERT_EQUAL(pending, n, "CQEs pending");
	return TEST_SUCCESS;
}

/*
 * The most a positive wait lasts (a frame through the engine, a count, a
 * link change), normally done within a millisecond: the deadline only ends
 * a failing test, and must outlast an engine thread starved on a loaded
 * machine (sanitizers, parallel tests on 2 CPUs), which 2 s did not always.
 */
#define T_WAIT_MS 10000

/* Wait until the condition holds or T_WAIT_MS pass. */
#define T_WAIT(cond) do { \
	uint64_t t_end_ = t_now_ms() + T_WAIT_MS; \
	while (!(cond) && t_now_ms() < t_end_) \
		usleep(100); \
} while (0)

/* Attach a NORMAL eth rule (dst MAC, full mask) to qp. */
static inline struct ibv_flow *
t_flow_eth(struct ibv_qp *qp, const uint8_t *dmac, uint16_t prio)
{
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
	} f;

	memset(&f, 0, sizeof(f));
	f.attr.type = IBV_FLOW_ATTR_NORMAL;
	f.attr.size = sizeof(f);
	f.attr.priority = prio;
	f.attr.num_of_specs = 1;
	f.attr.port = 1;
	f.eth.type = IBV_FLOW_SPEC_ETH;
	f.eth.size = sizeof(f.eth);
	memcpy(f.eth.val.dst_mac, dmac, 6);
	memset(f.eth.mask.dst_mac, 0xff, 6);
	return swv_create_flow(qp, &f.attr);
}

/* A NORMAL rule for frames to dmac (full mask): to qp, with flow tag tag. */
static inline struct ibv_flow *
t_flow_eth_tag(struct ibv_qp *qp, const uint8_t *dmac, uint32_t tag)
{
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
		struct ibv_flow_spec_action_tag tag;
	} f;

	memset(&f, 0, sizeof(f));
	f.attr.type = IBV_FLOW_ATTR_NORMAL;
	f.attr.size = sizeof(f);
	f.attr.num_of_specs = 2;
	f.attr.port = 1;
	f.eth.type = IBV_FLOW_SPEC_ETH;
	f.eth.size = sizeof(f.eth);
	memcpy(f.eth.val.dst_mac, dmac, 6);
	memset(f.eth.mask.dst_mac, 0xff, 6);
	f.tag.type = IBV_FLOW_SPEC_ACTION_TAG;
	f.tag.size = sizeof(f.tag);
	f.tag.tag_id = tag;
	return swv_create_flow(qp, &f.attr);
}

static inline struct ibv_flow *
t_flow_default(struct ibv_qp *qp, enum ibv_flow_attr_type type,
	       uint16_t prio)
{
	struct ibv_flow_attr a;

	memset(&a, 0, sizeof(a));
	a.type = type;
	a.size = sizeof(a);
	a.priority = prio;
	a.port = 1;
	return swv_create_flow(qp, &a);
}

/*
 * A test device with memory registered for its traffic: sends from the
 * caller's tbuf, receives into its rbuf, and (when asked) a NORMAL rule
 * for the device's own MAC to its receiver.
 */
struct tport {
	struct tdev d;
	struct ibv_mr *tmr;	/**< over tbuf */
	struct ibv_mr *rmr;	/**< over rbuf, local write */
	struct ibv_flow *fl;	/**< the MAC rule, or NULL */
};

/* t_setup_attr(), MRs, the rule if @rule. 0 or the errno. */
static inline int
t_port_setup(struct tport *p, const char *name, const char *wire,
	     const struct swv_device_attr *attr, void *tbuf, size_t tlen,
	     void *rbuf, size_t rlen, bool rule)
{
	int ret;

	memset(p, 0, sizeof(*p));
	ret = t_setup_attr(&p->d, name, wire, attr);
	if (ret != 0)
		return ret;
	p->tmr = swv_reg_mr(p->d.pd, tbuf, tlen, 0);
	p->rmr = swv_reg_mr(p->d.pd, rbuf, rlen, IBV_ACCESS_LOCAL_WRITE);
	if (p->tmr == NULL || p->rmr == NULL)
		return errno;
	if (rule) {
		p->fl = t_flow_eth(p->d.rqp, p->d.mac, 0);
		if (p->fl == NULL)
			return errno;
	}
	return 0;
}

/* Undo what t_port_setup() did, all or part. */
static inline void
t_port_teardown(struct tport *p)
{
	if (p->fl != NULL)
		swv_destroy_flow(p->fl);
	if (p->tmr != NULL)
		swv_dereg_mr(p->tmr);
	if (p->rmr != NULL)
		swv_dereg_mr(p->rmr);
	t_teardown(&p->d);
}

/* A frame: dst, src, ethertype 0x88b5, then a byte pattern from seed. */
static inline void
t_frame(uint8_t *buf, uint32_t len, const uint8_t *dst, const uint8_t *src,
	uint8_t seed)
{
	uint32_t i;

	memcpy(buf, dst, 6);
	memcpy(buf + 6, src, 6);
	buf[12] = 0x88;
	buf[13] = 0xb5;
	for (i = 14; i < len; i++)
		buf[i] = (uint8_t)(seed + i * 7);
}

/* A QP's state as the device has it (swv_query_qp()); -1 on error. */
static inline int
t_dev_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	if (swv_query_qp(qp, &a, IBV_QP_STATE, &ia) != 0)
		return -1;
	return (int)a.qp_state;
}

static inline int
t_send(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint32_t len,
       uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = len, .lkey = mr->lkey,
	};
	struct ibv_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	return ibv_post_send(qp, &wr, &bad);
}

static inline int
t_recv(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint32_t len,
       uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = len, .lkey = mr->lkey,
	};
	struct ibv_recv_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ibv_post_recv(qp, &wr, &bad);
}

static inline int
t_counters_ok(struct ibv_context *ctx)
{
	struct swv_port_counters c;

	if (swv_query_port_counters(ctx, &c) != 0)
		return 0;
	return c.rx_frames == c.rx_delivered + c.rx_out_of_buffer +
			      c.rx_no_match + c.rx_errors + c.rx_dropped;
}

#endif /* SWV_TEST_UTIL_H */
