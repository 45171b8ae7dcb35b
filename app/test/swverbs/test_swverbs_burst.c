/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The burst datapath calls: swv_poll_cq_burst(), swv_post_wq_recv_burst()
 * and swv_post_send_burst(). A device on the loop wire, served by an engine
 * with no thread (each pass is the test's swv_engine_run_once(), so what
 * the rings hold between calls is exact) or by the inline engine; a WQ
 * behind a hash QP with a tagged MAC rule, as the PMD sets it up; both CQE
 * formats. Then the error cases: error completions among good ones in one
 * poll, a full ring, a QP in ERR; and an empty poll of an inline CQ that
 * must pull a pair cable's frame off the wire.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "swv_test_util.h"
#include "swv_priv.h"

#define TB_TAG 0xabcdefu	/* 24 bits */
#define TB_N 8u			/* frames per round */
#define TB_RING 16u		/* WQ and SQ entries */
#define TB_FRAME 60u

static const uint8_t tb_key[40] = { 0x6d, 0x5a, 0x6d, 0x5a };

struct tb_env {
	char name[SWV_NAME_MAX];
	struct swv_engine *eng;		/* NULL: the inline engine */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *scq, *rcq;
	struct ibv_qp *sqp;		/* sender, RTS */
	struct ibv_wq *wq;
	struct ibv_rwq_ind_table *tbl;
	struct ibv_qp *hqp;
	struct ibv_flow *fl;
	struct ibv_mr *tmr, *rmr;
	uint8_t mac[6];
	uint8_t tbuf[TB_N][2048];
	uint8_t rbuf[TB_RING][2048];
};

static struct tb_env env_a, env_b;

/* 64-bit wr_ids */
static uint64_t
tb_id(unsigned int k)
{
	return 0xc0ffee0000000000ull | (0x1234500u + k);
}

static struct ibv_cq_ex *
tb_cq(struct tb_env *e, bool full)
{
	struct ibv_cq_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.cqe = 64;
	a.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_FLOW_TAG;
	if (full)
		a.wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	return swv_create_cq_ex(e->ctx, &a);
}

/* A fresh sender QP of TB_RING one-SGE WQEs, in RTS. */
static struct ibv_qp *
tb_sqp(struct tb_env *e)
{
	struct ibv_qp_init_attr a;
	struct ibv_qp *qp;

	memset(&a, 0, sizeof(a));
	a.send_cq = ibv_cq_ex_to_cq(e->scq);
	a.recv_cq = ibv_cq_ex_to_cq(e->scq);
	a.qp_type = IBV_QPT_RAW_PACKET;
	a.cap.max_send_wr = TB_RING;
	a.cap.max_send_sge = 1;
	qp = swv_create_qp(e->pd, &a);
	if (qp != NULL && t_qp_to(qp, IBV_QPS_RTS) != 0) {
		swv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

static int
tb_setup(struct tb_env *e, const char *name, const char *wire, bool full,
	 struct swv_engine *eng)
{
	struct swv_device_attr attr = {
		.flags = SWV_DEVICE_PROFILE_MLX5,
		.engine = eng != NULL ? eng : swv_engine_inline(),
	};
	struct ibv_rwq_ind_table_init_attr ta;
	struct ibv_qp_init_attr_ex qa;
	struct ibv_wq_init_attr wa;
	struct ibv_wq_attr wm;

	memset(e, 0, sizeof(*e));
	e->eng = eng;
	snprintf(e->name, sizeof(e->name), "%s", name);
	TEST_ASSERT_SUCCESS(swv_device_create_attr(name, wire, NULL, &attr),
			    "device %s on %s", name, wire);
	e->ctx = t_open(name);
	TEST_ASSERT_NOT_NULL(e->ctx, "open");
	swv_query_port_mac(e->ctx, e->mac);
	e->pd = swv_alloc_pd(e->ctx);
	TEST_ASSERT_NOT_NULL(e->pd, "pd");
	e->tmr = swv_reg_mr(e->pd, e->tbuf, sizeof(e->tbuf), 0);
	e->rmr = swv_reg_mr(e->pd, e->rbuf, sizeof(e->rbuf),
			    IBV_ACCESS_LOCAL_WRITE);
	TEST_ASSERT(e->tmr != NULL && e->rmr != NULL, "mr");
	e->scq = tb_cq(e, full);
	e->rcq = tb_cq(e, full);
	TEST_ASSERT(e->scq != NULL && e->rcq != NULL, "cq");
	TEST_ASSERT_EQUAL(to_swv_cq_ex(e->rcq)->compact, !full, "CQE format");
	e->sqp = tb_sqp(e);
	TEST_ASSERT_NOT_NULL(e->sqp, "qp: %d", errno);

	memset(&wa, 0, sizeof(wa));
	wa.wq_type = IBV_WQT_RQ;
	wa.max_wr = TB_RING;
	wa.max_sge = 1;
	wa.pd = e->pd;
	wa.cq = ibv_cq_ex_to_cq(e->rcq);
	e->wq = swv_create_wq(e->ctx, &wa);
	TEST_ASSERT_NOT_NULL(e->wq, "wq: %d", errno);
	TEST_ASSERT_EQUAL(wa.max_wr, TB_RING, "wq size");
	memset(&wm, 0, sizeof(wm));
	wm.attr_mask = IBV_WQ_ATTR_STATE;
	wm.wq_state = IBV_WQS_RDY;
	TEST_ASSERT_SUCCESS(swv_modify_wq(e->wq, &wm), "wq ready");
	memset(&ta, 0, sizeof(ta));
	ta.log_ind_tbl_size = 0;
	ta.ind_tbl = &e->wq;
	e->tbl = swv_create_rwq_ind_table(e->ctx, &ta);
	TEST_ASSERT_NOT_NULL(e->tbl, "ind table: %d", errno);
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RAW_PACKET;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
		       IBV_QP_INIT_ATTR_RX_HASH;
	qa.pd = e->pd;
	qa.rwq_ind_tbl = e->tbl;
	qa.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	qa.rx_hash_conf.rx_hash_key_len = sizeof(tb_key);
	qa.rx_hash_conf.rx_hash_key = (uint8_t *)tb_key;
	qa.rx_hash_conf.rx_hash_fields_mask = 0;
	e->hqp = swv_create_qp_ex(e->ctx, &qa);
	TEST_ASSERT_NOT_NULL(e->hqp, "hash qp: %d", errno);

	e->fl = t_flow_eth_tag(e->hqp, e->mac, TB_TAG);
	TEST_ASSERT_NOT_NULL(e->fl, "rule: %d", errno);
	return TEST_SUCCESS;
}

static void
tb_teardown(struct tb_env *e)
{
	if (e->fl != NULL)
		swv_destroy_flow(e->fl);
	if (e->hqp != NULL)
		swv_destroy_qp(e->hqp);
	if (e->tbl != NULL)
		swv_destroy_rwq_ind_table(e->tbl);
	if (e->wq != NULL)
		swv_destroy_wq(e->wq);
	if (e->sqp != NULL)
		swv_destroy_qp(e->sqp);
	if (e->scq != NULL)
		swv_destroy_cq(ibv_cq_ex_to_cq(e->scq));
	if (e->rcq != NULL)
		swv_destroy_cq(ibv_cq_ex_to_cq(e->rcq));
	if (e->tmr != NULL)
		swv_dereg_mr(e->tmr);
	if (e->rmr != NULL)
		swv_dereg_mr(e->rmr);
	if (e->pd != NULL)
		swv_dealloc_pd(e->pd);
	if (e->ctx != NULL)
		swv_close_device(e->ctx);
	swv_device_destroy(e->name);
	memset(e, 0, sizeof(*e));
}

/* Engine passes until the engine finds nothing more to do. */
static void
tb_run(struct tb_env *e)
{
	unsigned int i;

	if (e->eng == NULL)
		return;		/* inline: the calls did the work */
	for (i = 0; i < 64; i++)
		if (swv_engine_run_once(e->eng) == 0)
			break;
}

/* Post n receives of slots [k0, k0 + n) in one burst; the count posted. */
static unsigned int
tb_recv(struct tb_env *e, unsigned int k0, unsigned int n)
{
	uint64_t id[TB_RING + 4];
	struct ibv_sge sge[TB_RING + 4];
	unsigned int i;

	for (i = 0; i < n; i++) {
		id[i] = tb_id(k0 + i);
		sge[i].addr = (uintptr_t)e->rbuf[(k0 + i) % TB_RING];
		sge[i].length = sizeof(e->rbuf[0]);
		sge[i].lkey = e->rmr->lkey;
	}
	return swv_post_wq_recv_burst(e->wq, n, id, sge);
}

/*
 * Send n frames to dst in one burst, frame i of TB_FRAME + i bytes (len
 * non-NULL: len[i]), signaled as sig[i]; the count posted.
 */
static unsigned int
tb_send(struct tb_env *e, struct ibv_qp *qp, const uint8_t *dst,
	unsigned int k0, unsigned int n, const uint32_t *len,
	const uint8_t *sig)
{
	uint64_t id[TB_RING + 4];
	struct ibv_sge sge[TB_RING + 4];
	unsigned int i;

	for (i = 0; i < n; i++) {
		uint8_t *buf = e->tbuf[i % TB_N];

		t_frame(buf, TB_FRAME + i, dst, e->mac, (uint8_t)(k0 + i));
		id[i] = tb_id(100 + k0 + i);
		sge[i].addr = (uintptr_t)buf;
		sge[i].length = len != NULL ? len[i] : TB_FRAME + i;
		sge[i].lkey = e->tmr->lkey;
	}
	return swv_post_send_burst(qp, n, id, sge, sig);
}

struct tb_wc {
	uint64_t wr_id[TB_RING * 2];
	uint32_t len[TB_RING * 2];
	uint32_t tag[TB_RING * 2];
	uint8_t status[TB_RING * 2];
};

/* One burst poll (tags: read them), after the engine's passes. */
static unsigned int
tb_poll(struct tb_env *e, struct ibv_cq_ex *cq, struct tb_wc *w,
	unsigned int n, bool tags)
{
	tb_run(e);
	memset(w, 0xee, sizeof(*w));
	return swv_poll_cq_burst(cq, n, w->wr_id, w->len, w->status,
				 tags ? w->tag : NULL);
}

/*
 * Burst polls until n completions came, 2 s at most: on the inline engine
 * the flush of the WQEs behind a failed one comes from later calls' work.
 */
static unsigned int
tb_poll_all(struct tb_env *e, struct ibv_cq_ex *cq, struct tb_wc *w,
	    unsigned int n, bool tags)
{
	uint64_t end = t_now_ms() + 2000;
	unsigned int got = 0, k;

	memset(w, 0xee, sizeof(*w));
	while (got < n && t_now_ms() < end) {
		tb_run(e);
		k = swv_poll_cq_burst(cq, n - got, &w->wr_id[got],
				      &w->len[got], &w->status[got],
				      tags ? &w->tag[got] : NULL);
		if (k == 0)
			usleep(100);
		got += k;
	}
	return got;
}

/* No CQE left for ibv_start_poll() either. */
static int
tb_cq_empty(struct ibv_cq_ex *cq)
{
	struct ibv_poll_cq_attr pa = { .comp_mask = 0 };

	return ibv_start_poll(cq, &pa) == ENOENT;
}

/* Good traffic through the three calls, tags read and not. */
static int
tb_traffic(struct tb_env *e)
{
	static const uint8_t sig[TB_N] = { 0, 1, 0, 0, 1, 0, 0, 1 };
	struct tb_wc w;
	unsigned int i, got;
	uint64_t npub;

	TEST_ASSERT_EQUAL(tb_recv(e, 0, TB_N), TB_N, "receives posted");
	TEST_ASSERT_EQUAL(tb_send(e, e->sqp, e->mac, 0, TB_N, NULL, sig),
			  TB_N, "sends posted");
	/* All of them at once: more asked than there are. */
	got = tb_poll(e, e->rcq, &w, TB_RING * 2, true);
	TEST_ASSERT_EQUAL(got, TB_N, "receive completions");
	for (i = 0; i < TB_N; i++) {
		TEST_ASSERT_EQUAL(w.wr_id[i], tb_id(i), "wr_id %u", i);
		TEST_ASSERT_EQUAL(w.status[i], IBV_WC_SUCCESS, "status %u", i);
		TEST_ASSERT_EQUAL(w.len[i], TB_FRAME + i, "byte_len %u", i);
		TEST_ASSERT_EQUAL(w.tag[i], TB_TAG, "tag %u", i);
		TEST_ASSERT(memcmp(e->rbuf[i], e->tbuf[i], TB_FRAME + i) == 0,
			    "bytes of frame %u", i);
	}
	TEST_ASSERT(tb_cq_empty(e->rcq), "receive CQEs left after the poll");
	/* The signaled sends only. */
	got = tb_poll(e, e->scq, &w, TB_RING, false);
	TEST_ASSERT_EQUAL(got, 3, "send completions");
	TEST_ASSERT_EQUAL(w.wr_id[0], tb_id(101), "send 1");
	TEST_ASSERT_EQUAL(w.wr_id[1], tb_id(104), "send 4");
	TEST_ASSERT_EQUAL(w.wr_id[2], tb_id(107), "send 7");
	for (i = 0; i < got; i++) {
		TEST_ASSERT_EQUAL(w.status[i], IBV_WC_SUCCESS, "status %u", i);
		TEST_ASSERT_EQUAL(w.len[i], TB_FRAME + 1 + i * 3,
				  "send byte_len %u", i);
		TEST_ASSERT_EQUAL(w.tag[i], 0xeeeeeeeeu,
				  "a tag written though not asked");
	}
	TEST_ASSERT(tb_cq_empty(e->scq), "send CQEs left after the poll");

	/* Fewer asked than there are: the rest stay for the next poll. */
	TEST_ASSERT_EQUAL(tb_recv(e, TB_N, 4), 4, "receives posted");
	TEST_ASSERT_EQUAL(tb_send(e, e->sqp, e->mac, 0, 4, NULL, sig), 4,
			  "sends posted");
	TEST_ASSERT_EQUAL(tb_poll(e, e->rcq, &w, 3, false), 3, "first 3");
	TEST_ASSERT_EQUAL(w.wr_id[2], tb_id(TB_N + 2), "third");
	TEST_ASSERT_EQUAL(tb_poll(e, e->rcq, &w, 3, true), 1, "the last one");
	TEST_ASSERT_EQUAL(w.wr_id[0], tb_id(TB_N + 3), "fourth");
	TEST_ASSERT_EQUAL(w.tag[0], TB_TAG, "tag");
	TEST_ASSERT_EQUAL(tb_poll(e, e->scq, &w, TB_RING, false), 1,
			  "send completion");
	npub = to_swv_cq_ex(e->rcq)->npub;
	TEST_ASSERT_EQUAL(tb_poll(e, e->rcq, &w, TB_RING, false), 0,
			  "an empty CQ");
	TEST_ASSERT_EQUAL(to_swv_cq_ex(e->rcq)->npub, npub,
			  "an empty poll published the CQ tail");
	return TEST_SUCCESS;
}

/* Full rings: what fits is posted, the count says so, errno ENOMEM. */
static int
tb_full(struct tb_env *e)
{
	uint8_t sig[TB_RING + 4];
	struct tb_wc w;
	unsigned int got;

	/* tb_traffic() left both rings empty. */
	errno = 0;
	TEST_ASSERT_EQUAL(tb_recv(e, 0, TB_RING + 4), TB_RING,
			  "receives posted on a ring of %u", TB_RING);
	TEST_ASSERT_EQUAL(errno, ENOMEM, "errno of a full receive ring");
	TEST_ASSERT_EQUAL(tb_recv(e, 0, 1), 0, "a receive on a full ring");
	if (e->eng != NULL) {
		/* Nothing drains the send ring before the engine's pass. */
		memset(sig, 0, sizeof(sig));
		sig[TB_RING - 1] = 1;
		errno = 0;
		TEST_ASSERT_EQUAL(tb_send(e, e->sqp, e->mac, 0, TB_RING + 4,
					  NULL, sig), TB_RING,
				  "sends posted on a ring of %u", TB_RING);
		TEST_ASSERT_EQUAL(errno, ENOMEM, "errno of a full send ring");
		TEST_ASSERT_EQUAL(tb_send(e, e->sqp, e->mac, 0, 1, NULL, sig),
				  0, "a send on a full ring");
		got = tb_poll(e, e->rcq, &w, TB_RING * 2, true);
		TEST_ASSERT_EQUAL(got, TB_RING, "receive completions");
		TEST_ASSERT_EQUAL(w.wr_id[TB_RING - 1], tb_id(TB_RING - 1),
				  "last receive");
		got = tb_poll(e, e->scq, &w, TB_RING * 2, false);
		TEST_ASSERT_EQUAL(got, 1, "send completion");
		TEST_ASSERT_EQUAL(w.wr_id[0], tb_id(100 + TB_RING - 1),
				  "signaled send");
	} else {
		/* Inline: each post drains; fill the receive ring instead. */
		memset(sig, 0, sizeof(sig));
		TEST_ASSERT_EQUAL(tb_send(e, e->sqp, e->mac, 0, TB_RING,
					  NULL, sig), TB_RING, "sends posted");
		got = tb_poll(e, e->rcq, &w, TB_RING * 2, true);
		TEST_ASSERT_EQUAL(got, TB_RING, "receive completions");
	}
	TEST_ASSERT_EQUAL(tb_recv(e, 0, TB_N), TB_N, "the ring has room again");
	return TEST_SUCCESS;
}

/*
 * Error completions in one poll next to a good one: a send SGE longer than
 * its MR fails (protection error), the QP goes to ERR and flushes the send
 * behind it; a post on the QP in ERR is refused whole (0, EINVAL). Then a
 * receive SGE longer than its MR: the WQ's error, a receive flushed.
 */
static int
tb_errors(struct tb_env *e)
{
	static const uint8_t sig[3] = { 1, 1, 0 };
	static const uint8_t nosig[TB_N];
	static const uint8_t far[6] = { 0x02, 0, 0, 0, 0xfe, 0xfe };
	uint32_t len[3] = { TB_FRAME, 1u << 30, TB_FRAME };
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	struct ibv_sge sge;
	struct tb_wc w;
	uint64_t id;
	unsigned int got;

	/* To a MAC no rule takes: the receive side sees none of it. */
	TEST_ASSERT_EQUAL(tb_send(e, e->sqp, far, 0, 3, len, sig), 3,
			  "sends posted (checked by the device, not the post)");
	got = tb_poll_all(e, e->scq, &w, 3, true);
	TEST_ASSERT_EQUAL(got, 3, "completions, unsignaled flush included");
	TEST_ASSERT_EQUAL(w.wr_id[0], tb_id(100), "good send");
	TEST_ASSERT_EQUAL(w.status[0], IBV_WC_SUCCESS, "good send status");
	TEST_ASSERT_EQUAL(w.wr_id[1], tb_id(101), "failed send");
	TEST_ASSERT_EQUAL(w.status[1], IBV_WC_LOC_PROT_ERR, "its status");
	TEST_ASSERT_EQUAL(w.wr_id[2], tb_id(102), "flushed send");
	TEST_ASSERT_EQUAL(w.status[2], IBV_WC_WR_FLUSH_ERR, "its status");
	TEST_ASSERT(tb_cq_empty(e->scq), "CQEs left after the poll");
	TEST_ASSERT_SUCCESS(swv_query_qp(e->sqp, &qa, IBV_QP_STATE, &qia),
			    "query");
	TEST_ASSERT_EQUAL(qa.qp_state, IBV_QPS_ERR, "QP state");
	/*
	 * The mlx5 profile, as mlx5: the device's ERR is not in ibv_qp.state
	 * (libibverbs sets it in modify and query only), a post in ERR is
	 * taken and flushed, each WQE with a completion.
	 */
	TEST_ASSERT_EQUAL(e->sqp->state, IBV_QPS_RTS, "ibv_qp.state");
	TEST_ASSERT_EQUAL(tb_send(e, e->sqp, e->mac, 0, 2, NULL, nosig), 2,
			  "a post on a QP in ERR");
	got = tb_poll_all(e, e->scq, &w, 2, false);
	TEST_ASSERT_EQUAL(got, 2, "flushed, unsignaled as they are");
	TEST_ASSERT_EQUAL(w.wr_id[0], tb_id(100), "first flushed");
	TEST_ASSERT_EQUAL(w.status[0], IBV_WC_WR_FLUSH_ERR, "its status");
	TEST_ASSERT_EQUAL(w.wr_id[1], tb_id(101), "second flushed");
	TEST_ASSERT_EQUAL(w.status[1], IBV_WC_WR_FLUSH_ERR, "its status");
	TEST_ASSERT(tb_cq_empty(e->scq), "CQEs left after the poll");
	/* A QP back from ERR through RESET takes posts again. */
	swv_destroy_qp(e->sqp);
	e->sqp = tb_sqp(e);
	TEST_ASSERT_NOT_NULL(e->sqp, "qp");

	/* The receive side: the WQ holds TB_N good receives (tb_full). */
	id = tb_id(77);
	sge.addr = (uintptr_t)e->rbuf[0];
	sge.length = 1u << 30;
	sge.lkey = e->rmr->lkey;
	TEST_ASSERT_EQUAL(tb_send(e, e->sqp, e->mac, 0, TB_N, NULL, nosig),
			  TB_N, "sends posted");
	got = tb_poll(e, e->rcq, &w, TB_RING, true);
	TEST_ASSERT_EQUAL(got, TB_N, "receive completions");
	TEST_ASSERT_EQUAL(swv_post_wq_recv_burst(e->wq, 1, &id, &sge), 1,
			  "a 1 GiB receive posted");
	TEST_ASSERT_EQUAL(tb_recv(e, 0, 1), 1, "one behind it");
	TEST_ASSERT_EQUAL(tb_send(e, e->sqp, e->mac, 0, 1, NULL, nosig), 1,
			  "send");
	got = tb_poll_all(e, e->rcq, &w, 2, true);
	TEST_ASSERT_EQUAL(got, 2, "receive error completions");
	TEST_ASSERT_EQUAL(w.wr_id[0], tb_id(77), "failed receive");
	TEST_ASSERT_EQUAL(w.status[0], IBV_WC_LOC_PROT_ERR, "its status");
	TEST_ASSERT_EQUAL(w.tag[0], 0, "no tag on an error completion");
	TEST_ASSERT_EQUAL(w.wr_id[1], tb_id(0), "flushed receive");
	TEST_ASSERT_EQUAL(w.status[1], IBV_WC_WR_FLUSH_ERR, "its status");
	return TEST_SUCCESS;
}

static int
tb_all(struct swv_engine *eng, const char *what)
{
	bool full;
	int ret;

	for (full = false; ; full = true) {
		printf("  %s engine, %s CQEs\n", what,
		       full ? "full (32-byte)" : "compact (16-byte)");
		ret = tb_setup(&env_a, "burst0", "loop", full, eng);
		if (ret == TEST_SUCCESS)
			ret = tb_traffic(&env_a);
		if (ret == TEST_SUCCESS)
			ret = tb_full(&env_a);
		if (ret == TEST_SUCCESS)
			ret = tb_errors(&env_a);
		tb_teardown(&env_a);
		if (ret != TEST_SUCCESS || full)
			return ret;
	}
}

static int
test_burst_manual(void)
{
	struct swv_engine *eng = swv_engine_create();
	int ret;

	TEST_ASSERT_NOT_NULL(eng, "engine");
	ret = tb_all(eng, "run_once");
	TEST_ASSERT_SUCCESS(swv_engine_destroy(eng), "engine destroy");
	return ret;
}

static int
test_burst_inline(void)
{
	return tb_all(NULL, "inline");
}

/*
 * Two inline devices on a shm cable (a wire the receiver pulls from, as
 * af_packet): a send on one leaves the frame on the cable, and the other's
 * empty receive CQ, polled once, pulls it from the wire in that call.
 */
static bool
tb_up(struct tb_env *e)
{
	struct ibv_port_attr pa;

	return swv_query_port(e->ctx, 1, &pa) == 0 &&
	       pa.state == IBV_PORT_ACTIVE;
}

static int
test_burst_inline_pull(void)
{
	static const uint8_t sig[1] = { 1 };
	struct swv_cq *cq;
	struct tb_wc w;
	char wire[64];
	uint64_t end;
	int ret;

	snprintf(wire, sizeof(wire), "shm:burst-%d", (int)getpid());
	ret = tb_setup(&env_a, "burst-a", wire, false, NULL);
	if (ret == TEST_SUCCESS)
		ret = tb_setup(&env_b, "burst-b", wire, false, NULL);
	if (ret != TEST_SUCCESS)
		goto out;
	ret = TEST_FAILED;
	/* Empty polls do the link checks that bring the cable up. */
	end = t_now_ms() + 5000;
	while (!(tb_up(&env_a) && tb_up(&env_b)) && t_now_ms() < end) {
		tb_poll(&env_a, env_a.rcq, &w, 1, false);
		tb_poll(&env_b, env_b.rcq, &w, 1, false);
		usleep(1000);
	}
	if (!(tb_up(&env_a) && tb_up(&env_b))) {
		printf("shm cable not up\n");
		goto out;
	}
	if (tb_recv(&env_b, 0, 1) != 1 ||
	    tb_send(&env_a, env_a.sqp, env_b.mac, 0, 1, NULL, sig) != 1) {
		printf("post failed\n");
		goto out;
	}
	cq = to_swv_cq_ex(env_b.rcq);
	if (SWV_LOAD_ACQ(&cq->head) != cq->tail) {
		printf("the receiver completed before it was polled\n");
		goto out;
	}
	if (tb_poll(&env_b, env_b.rcq, &w, TB_RING, true) != 1 ||
	    w.wr_id[0] != tb_id(0) || w.status[0] != IBV_WC_SUCCESS ||
	    w.len[0] != TB_FRAME || w.tag[0] != TB_TAG) {
		printf("one poll did not pull the frame from the wire\n");
		goto out;
	}
	if (memcmp(env_b.rbuf[0], env_a.tbuf[0], TB_FRAME) != 0) {
		printf("bytes differ\n");
		goto out;
	}
	ret = TEST_SUCCESS;
out:
	tb_teardown(&env_b);
	tb_teardown(&env_a);
	return ret;
}

static const struct unit_test_suite burst_suite = {
	.name = "swverbs burst calls",
	.cases = {
		TEST_CASE(test_burst_manual),
		TEST_CASE(test_burst_inline),
		TEST_CASE(test_burst_inline_pull),
		TEST_CASES_END(),
	},
};

int
main(void)
{
	return unit_test_suite_runner(&burst_suite);
}
