/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * swverbs datapath: loop and pair wires carry frames exactly, scatter and
 * gather, memory protection on both directions, out-of-buffer, steering
 * (MAC rules, ALL_DEFAULT, MC_DEFAULT, priorities), the counters invariant,
 * selective signalling, the extended CQ, and an idle engine that sleeps.
 */

#include <dirent.h>
#include <stdio.h>

#include "swv_test_util.h"

#define BUF_SZ (3 * 16384)
#define GUARD 64

static uint8_t txbuf[BUF_SZ];
static uint8_t rxarea[GUARD + BUF_SZ + GUARD];
#define rxbuf (rxarea + GUARD)

static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t other[6] = { 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee };
static const uint8_t mcast[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };

static int
guards_intact(void)
{
	unsigned int i;

	for (i = 0; i < GUARD; i++)
		if (rxarea[i] != 0xa5 || rxarea[GUARD + BUF_SZ + i] != 0xa5)
			return 0;
	return 1;
}

/*
 * Send frames of many sizes from @tx to @rx, the sender gathering from 3
 * SGEs and the receiver scattering into 4; compare every byte.
 */
static int
exact_transfer(struct tdev *tx, struct tdev *rx)
{
	static const uint32_t sizes[] = { 60, 61, 64, 127, 128, 129, 512,
					  1500, 1514, 2048, 4000, 9000 };
	struct ibv_mr *tmr, *rmr;
	struct ibv_flow *fl;
	struct swv_port_counters c0, c1;
	struct ibv_wc wc;
	unsigned int k, i;
	uint64_t bytes = 0;

	tmr = swv_reg_mr(tx->pd, txbuf, BUF_SZ, 0);
	rmr = swv_reg_mr(rx->pd, rxarea, sizeof(rxarea),
			 IBV_ACCESS_LOCAL_WRITE);
	TEST_ASSERT_NOT_NULL(tmr, "");
	TEST_ASSERT_NOT_NULL(rmr, "");
	fl = t_flow_eth(rx->rqp, rx->mac, 0);
	TEST_ASSERT_NOT_NULL(fl, "");
	/* Jumbo frames: an MTU that takes them (1500 drops them). */
	TEST_ASSERT_SUCCESS(swv_set_port_mtu(rx->ctx, SWV_MAX_FRAME - 18), "");
	swv_query_port_counters(rx->ctx, &c0);
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint32_t len = sizes[k];
		uint32_t a = len / 3, b = len / 3, c = len - a - b;
		uint32_t r1 = len / 4, r2 = 7, r3 = len / 2;
		struct ibv_sge ss[3] = {
			{ (uintptr_t)txbuf, a, tmr->lkey },
			{ (uintptr_t)txbuf + 20000, b, tmr->lkey },
			{ (uintptr_t)txbuf + 40000, c, tmr->lkey },
		};
		/* Receive SGEs: three pieces, the last one roomy. */
		struct ibv_sge rs[4] = {
			{ (uintptr_t)rxbuf, r1, rmr->lkey },
			{ (uintptr_t)rxbuf + 12000, r2, rmr->lkey },
			{ (uintptr_t)rxbuf + 16000, r3, rmr->lkey },
			{ (uintptr_t)rxbuf + 30000, 16384, rmr->lkey },
		};
		struct ibv_send_wr swr = {
			.wr_id = 100 + k, .sg_list = ss, .num_sge = 3,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		}, *sbad;
		struct ibv_recv_wr rwr = {
			.wr_id = 200 + k, .sg_list = rs, .num_sge = 4,
		}, *rbad;
		uint8_t frame[9000];
		uint32_t off;

		memset(rxarea, 0xa5, sizeof(rxarea));
		t_frame(frame, len, rx->mac, tx->mac, (uint8_t)k);
		memcpy(txbuf, frame, a);
		memcpy(txbuf + 20000, frame + a, b);
		memcpy(txbuf + 40000, frame + a + b, c);
		TEST_ASSERT_SUCCESS(ibv_post_recv(rx->rqp, &rwr, &rbad), "");
		TEST_ASSERT_SUCCESS(ibv_post_send(tx->sqp, &swr, &sbad), "");
		TEST_ASSERT_EQUAL(t_poll(tx->scq, &wc, 1, T_WAIT_MS), 1, "send CQE");
		TEST_ASSERT_EQUAL(wc.status, IBV_WC_SUCCESS, "");
		TEST_ASSERT_EQUAL(wc.wr_id, 100 + k, "");
		TEST_ASSERT_EQUAL(wc.opcode, IBV_WC_SEND, "");
		TEST_ASSERT_EQUAL(t_poll(rx->rcq, &wc, 1, T_WAIT_MS), 1, "recv CQE");
		TEST_ASSERT_EQUAL(wc.status, IBV_WC_SUCCESS, "len %u", len);
		TEST_ASSERT_EQUAL(wc.wr_id, 200 + k, "");
		TEST_ASSERT_EQUAL(wc.opcode, IBV_WC_RECV, "");
		TEST_ASSERT_EQUAL(wc.byte_len, len, "");
		TEST_ASSERT_EQUAL(wc.qp_num, rx->rqp->qp_num, "");
		/* Scatter order: fill each SGE before the next. */
		off = 0;
		for (i = 0; i < 4 && off < len; i++) {
			uint32_t n = rs[i].length < len - off ?
				     rs[i].length : len - off;

			TEST_ASSERT(memcmp((void *)(uintptr_t)rs[i].addr,
					   frame + off, n) == 0,
				    "len %u sge %u", len, i);
			/* The byte after the piece is untouched. */
			TEST_ASSERT_EQUAL(((uint8_t *)(uintptr_t)rs[i].addr)[n],
					  0xa5, "len %u sge %u", len, i);
			off += n;
		}
		TEST_ASSERT(guards_intact(), "");
		bytes += len;
	}
	swv_query_port_counters(rx->ctx, &c1);
	TEST_ASSERT_EQUAL(c1.rx_delivered - c0.rx_delivered, k, "");
	TEST_ASSERT_EQUAL(c1.rx_bytes - c0.rx_bytes, bytes, "");
	swv_query_port_counters(tx->ctx, &c1);
	TEST_ASSERT(c1.tx_bytes >= bytes, "");
	TEST_ASSERT(t_counters_ok(rx->ctx), "invariant");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fl), "");
	TEST_ASSERT_SUCCESS(swv_dereg_mr(tmr), "");
	TEST_ASSERT_SUCCESS(swv_dereg_mr(rmr), "");
	return TEST_SUCCESS;
}

static int
test_loop_exact(void)
{
	struct tdev d;
	int ret;

	TEST_ASSERT_SUCCESS(t_setup(&d, "l0", "loop"), "");
	ret = exact_transfer(&d, &d);
	t_teardown(&d);
	return ret;
}

/*
 * One QP whose send and receive sides complete on one small CQ, over a
 * loop wire: each frame it sends comes straight back to it. A burst of
 * signaled sends fills the CQ with send completions and the frames that
 * find it full are counted out of buffer: the CQ never takes more CQEs than
 * it holds, and every send completes exactly once.
 */
#define SHARED_CQE 16
#define SHARED_SENDS 64

static int
test_loop_shared_cq(void)
{
	static uint8_t area[2 * SHARED_SENDS * 128];
	struct swv_port_counters c;
	uint8_t sent[SHARED_SENDS] = { 0 }, got[SHARED_SENDS] = { 0 };
	struct ibv_send_wr swr[SHARED_SENDS], *sbad;
	struct ibv_sge sge[SHARED_SENDS];
	struct ibv_wc wc[SHARED_CQE];
	struct ibv_qp_init_attr a;
	struct ibv_flow *fl;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct tdev d;
	unsigned int i, nsend = 0, nrecv = 0;
	uint64_t end;
	int r;

	memset(&d, 0, sizeof(d));
	snprintf(d.name, sizeof(d.name), "lq");
	TEST_ASSERT_SUCCESS(swv_device_create("lq", "loop", NULL), "");
	d.ctx = t_open("lq");
	TEST_ASSERT_NOT_NULL(d.ctx, "");
	swv_query_port_mac(d.ctx, d.mac);
	d.pd = swv_alloc_pd(d.ctx);
	cq = swv_create_cq(d.ctx, SHARED_CQE, NULL, NULL, 0);
	TEST_ASSERT(d.pd != NULL && cq != NULL, "");
	memset(&a, 0, sizeof(a));
	a.send_cq = cq;
	a.recv_cq = cq;
	a.qp_type = IBV_QPT_RAW_PACKET;
	a.sq_sig_all = 1;
	a.cap.max_send_wr = SHARED_SENDS;
	a.cap.max_recv_wr = SHARED_SENDS;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	qp = swv_create_qp(d.pd, &a);
	TEST_ASSERT_NOT_NULL(qp, "");
	TEST_ASSERT_SUCCESS(t_qp_to(qp, IBV_QPS_RTS), "");
	mr = swv_reg_mr(d.pd, area, sizeof(area), IBV_ACCESS_LOCAL_WRITE);
	TEST_ASSERT_NOT_NULL(mr, "");
	fl = t_flow_eth(qp, d.mac, 0);
	TEST_ASSERT_NOT_NULL(fl, "");
	for (i = 0; i < SHARED_SENDS; i++)
		TEST_ASSERT_SUCCESS(t_recv(qp, mr, area + (SHARED_SENDS + i) *
					   128, 128, 1000 + i), "");
	/* All the sends in one post: one doorbell, one burst. */
	for (i = 0; i < SHARED_SENDS; i++) {
		t_frame(area + i * 128, 64, d.mac, d.mac, (uint8_t)i);
		sge[i].addr = (uintptr_t)(area + i * 128);
		sge[i].length = 64;
		sge[i].lkey = mr->lkey;
		memset(&swr[i], 0, sizeof(swr[i]));
		swr[i].wr_id = i;
		swr[i].sg_list = &sge[i];
		swr[i].num_sge = 1;
		swr[i].opcode = IBV_WR_SEND;
		swr[i].next = i + 1 < SHARED_SENDS ? &swr[i + 1] : NULL;
	}
	TEST_ASSERT_SUCCESS(ibv_post_send(qp, swr, &sbad), "");
	/*
	 * Let the engine run the whole queue into the full CQ first: the
	 * frames that find it full are counted, and nothing moves until the
	 * CQ is polled. Waited for, not timed (it once was 20 ms).
	 */
	T_WAIT(swv_query_port_counters(d.ctx, &c) == 0 &&
	       c.rx_out_of_buffer > 0);
	end = t_now_ms() + 5000;
	while (nsend < SHARED_SENDS && t_now_ms() < end) {
		r = ibv_poll_cq(cq, SHARED_CQE, wc);
		TEST_ASSERT(r >= 0 && r <= SHARED_CQE, "poll %d", r);
		for (i = 0; i < (unsigned int)r; i++) {
			TEST_ASSERT_EQUAL(wc[i].status, IBV_WC_SUCCESS, "");
			if (wc[i].opcode == IBV_WC_SEND) {
				TEST_ASSERT(wc[i].wr_id < SHARED_SENDS, "");
				TEST_ASSERT(!sent[wc[i].wr_id], "send %" PRIu64
					    " completed twice", wc[i].wr_id);
				sent[wc[i].wr_id] = 1;
				nsend++;
			} else {
				TEST_ASSERT_EQUAL(wc[i].opcode, IBV_WC_RECV,
						  "");
				TEST_ASSERT(wc[i].wr_id >= 1000 &&
					    wc[i].wr_id < 1000 + SHARED_SENDS,
					    "");
				TEST_ASSERT(!got[wc[i].wr_id - 1000], "");
				got[wc[i].wr_id - 1000] = 1;
				nrecv++;
			}
		}
		if (r == 0)
			usleep(100);
	}
	TEST_ASSERT_EQUAL(nsend, SHARED_SENDS, "every send completes once");
	/* Whatever came back found room or was counted. */
	T_WAIT(swv_query_port_counters(d.ctx, &c) == 0 &&
	       c.rx_delivered + c.rx_out_of_buffer == SHARED_SENDS);
	r = ibv_poll_cq(cq, SHARED_CQE, wc);
	TEST_ASSERT(r >= 0, "");
	for (i = 0; i < (unsigned int)r; i++)
		if (wc[i].opcode == IBV_WC_RECV)
			nrecv++;
	TEST_ASSERT_SUCCESS(swv_query_port_counters(d.ctx, &c), "");
	TEST_ASSERT_EQUAL(c.rx_delivered + c.rx_out_of_buffer, SHARED_SENDS,
			  "");
	TEST_ASSERT_EQUAL(c.rx_delivered, nrecv, "one CQE per delivery");
	TEST_ASSERT(c.rx_out_of_buffer > 0, "the CQ was full for some");
	TEST_ASSERT(t_counters_ok(d.ctx), "invariant");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fl), "");
	TEST_ASSERT_SUCCESS(swv_destroy_qp(qp), "");
	TEST_ASSERT_SUCCESS(swv_dereg_mr(mr), "");
	TEST_ASSERT_SUCCESS(swv_destroy_cq(cq), "");
	TEST_ASSERT_SUCCESS(swv_dealloc_pd(d.pd), "");
	TEST_ASSERT_SUCCESS(swv_close_device(d.ctx), "");
	TEST_ASSERT_SUCCESS(swv_device_destroy("lq"), "");
	return TEST_SUCCESS;
}

static int
test_pair_exact(void)
{
	struct swv_port_counters ca, cb;
	struct tdev a, b;
	int ret;

	TEST_ASSERT_SUCCESS(t_setup(&a, "pa", "pair:x"), "");
	TEST_ASSERT_SUCCESS(t_setup(&b, "pb", "pair:x"), "");
	ret = exact_transfer(&a, &b);
	if (ret == TEST_SUCCESS)
		ret = exact_transfer(&b, &a);
	swv_query_port_counters(a.ctx, &ca);
	swv_query_port_counters(b.ctx, &cb);
	t_teardown(&a);
	t_teardown(&b);
	TEST_ASSERT_EQUAL(ca.tx_frames, cb.rx_frames, "a -> b");
	TEST_ASSERT_EQUAL(cb.tx_frames, ca.rx_frames, "b -> a");
	TEST_ASSERT_EQUAL(ca.tx_bytes, cb.rx_bytes, "");
	return ret;
}

static int
test_send_protection(void)
{
	struct ibv_mr *mr, *rmr;
	struct ibv_pd *pd2;
	struct ibv_mr *mr2;
	struct ibv_wc wc;
	struct swv_port_counters c0, c1;
	struct ibv_flow *fl;
	struct tdev d;
	uint32_t lkeys[3];
	uintptr_t addrs[3];
	unsigned int i;

	TEST_ASSERT_SUCCESS(t_setup(&d, "sp", "loop"), "");
	mr = swv_reg_mr(d.pd, txbuf + 4096, 1024, 0);
	rmr = swv_reg_mr(d.pd, rxarea, sizeof(rxarea), IBV_ACCESS_LOCAL_WRITE);
	pd2 = swv_alloc_pd(d.ctx);
	mr2 = swv_reg_mr(pd2, txbuf + 4096, 1024, 0);
	fl = t_flow_default(d.rqp, IBV_FLOW_ATTR_ALL_DEFAULT, 0);
	TEST_ASSERT_NOT_NULL(fl, "");
	t_frame(txbuf + 4096, 1024, d.mac, d.mac, 1);
	/* Bad: unknown lkey, past the end, other PD's MR. */
	lkeys[0] = mr->lkey ^ 0x40000;
	addrs[0] = (uintptr_t)txbuf + 4096;
	lkeys[1] = mr->lkey;
	addrs[1] = (uintptr_t)txbuf + 4096 + 1024 - 59;
	lkeys[2] = mr2->lkey;
	addrs[2] = (uintptr_t)txbuf + 4096;
	for (i = 0; i < 3; i++) {
		struct ibv_sge sge = { addrs[i], 60, lkeys[i] };
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND,
		}, *bad;

		TEST_ASSERT_SUCCESS(t_recv(d.rqp, rmr, rxbuf, 2048, 50 + i),
				    "");
		swv_query_port_counters(d.ctx, &c0);
		/* Unsignaled: errors complete anyway. */
		TEST_ASSERT_SUCCESS(ibv_post_send(d.sqp, &wr, &bad), "");
		TEST_ASSERT_EQUAL(t_poll(d.scq, &wc, 1, T_WAIT_MS), 1, "case %u", i);
		TEST_ASSERT_EQUAL(wc.status, IBV_WC_LOC_PROT_ERR, "case %u", i);
		TEST_ASSERT_EQUAL(wc.wr_id, i, "");
		swv_query_port_counters(d.ctx, &c1);
		TEST_ASSERT_EQUAL(c1.tx_errors - c0.tx_errors, 1, "");
		TEST_ASSERT_EQUAL(c1.tx_frames, c0.tx_frames, "nothing sent");
		TEST_ASSERT_EQUAL(t_dev_state(d.sqp), IBV_QPS_ERR,
				  "a local error moves the QP to ERR");
		TEST_ASSERT_EQUAL(d.sqp->state, IBV_QPS_RTS,
				  "mlx5 profile: not in ibv_qp.state");
		{
			struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

			TEST_ASSERT_SUCCESS(swv_modify_qp(d.sqp, &a,
							  IBV_QP_STATE), "");
		}
		TEST_ASSERT_SUCCESS(t_qp_to(d.sqp, IBV_QPS_RTS), "");
	}
	/* A good one still goes through; nothing was received before. */
	TEST_ASSERT_EQUAL(t_poll(d.rcq, &wc, 1, 50), 0, "no frame leaked");
	TEST_ASSERT_SUCCESS(t_send(d.sqp, mr, txbuf + 4096, 1024, 9), "");
	TEST_ASSERT_EQUAL(t_poll(d.scq, &wc, 1, T_WAIT_MS), 1, "");
	TEST_ASSERT_EQUAL(wc.status, IBV_WC_SUCCESS, "");
	TEST_ASSERT_EQUAL(t_poll(d.rcq, &wc, 1, T_WAIT_MS), 1, "");
	TEST_ASSERT_EQUAL(wc.byte_len, 1024, "");
	TEST_ASSERT_EQUAL(wc.wr_id, 50, "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fl), "");
	swv_dereg_mr(mr);
	swv_dereg_mr(mr2);
	swv_dereg_mr(rmr);
	swv_dealloc_pd(pd2);
	t_teardown(&d);
	return TEST_SUCCESS;
}

/*
 * A send queue the device moved to ERR, by profile. Both: the failed WQE's
 * completion, the device's state ERR (swv_query_qp()), then RESET -> RTS
 * sends again. mlx5 (as rdma-core's provider and the mlx5 kernel driver):
 * ibv_qp.state stays RTS, a post is taken and flushed
 * (IBV_WC_WR_FLUSH_ERR, unsignaled too), a WR of fewer than 18 bytes is
 * refused with EINVAL as bad_wr, the WRs before it posted, the ones after
 * it not. full: ibv_qp.state ERR, a post refused (EINVAL), the short WR
 * sent as any other.
 */
static int
t_err_posts(bool strict)
{
	struct ibv_send_wr wr[3], *bad;
	struct ibv_sge sge[3];
	struct ibv_wc wc[4];
	struct ibv_mr *tmr;
	struct tdev d;
	unsigned int i;
	int ret;

	TEST_ASSERT_SUCCESS(strict ? t_setup(&d, "ep", "loop") :
			    t_setup_full(&d, "ep", "loop"), "");
	tmr = swv_reg_mr(d.pd, txbuf, BUF_SZ, 0);
	TEST_ASSERT_NOT_NULL(tmr, "");
	t_frame(txbuf, 64, d.mac, d.mac, 1);
	/* A bad lkey: the device fails the WQE, the QP goes to ERR. */
	sge[0] = (struct ibv_sge){ (uintptr_t)txbuf, 64, tmr->lkey ^ 0x40000 };
	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = 1;
	wr[0].sg_list = &sge[0];
	wr[0].num_sge = 1;
	wr[0].opcode = IBV_WR_SEND;
	TEST_ASSERT_SUCCESS(ibv_post_send(d.sqp, &wr[0], &bad), "post");
	TEST_ASSERT_EQUAL(t_poll(d.scq, wc, 1, T_WAIT_MS), 1, "error CQE");
	TEST_ASSERT_EQUAL(wc[0].status, IBV_WC_LOC_PROT_ERR, "");
	TEST_ASSERT_EQUAL(t_dev_state(d.sqp), IBV_QPS_ERR, "device state");
	TEST_ASSERT_EQUAL(d.sqp->state, (strict ? IBV_QPS_RTS : IBV_QPS_ERR),
			  "ibv_qp.state");
	/* A post in ERR: two WRs, the first unsignaled. */
	for (i = 0; i < 2; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)txbuf, 64, tmr->lkey };
		wr[i].wr_id = 10 + i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_SEND;
		wr[i].send_flags = i == 1 ? IBV_SEND_SIGNALED : 0;
		wr[i].next = i == 0 ? &wr[1] : NULL;
	}
	bad = NULL;
	ret = ibv_post_send(d.sqp, &wr[0], &bad);
	if (strict) {
		TEST_ASSERT_SUCCESS(ret, "mlx5 takes a post in ERR");
		TEST_ASSERT_EQUAL(t_poll(d.scq, wc, 2, T_WAIT_MS), 2,
				  "flush CQEs");
		for (i = 0; i < 2; i++) {
			TEST_ASSERT_EQUAL(wc[i].wr_id, 10 + i, "");
			TEST_ASSERT_EQUAL(wc[i].status, IBV_WC_WR_FLUSH_ERR,
					  "");
		}
	} else {
		TEST_ASSERT_EQUAL(ret, EINVAL, "full refuses a post in ERR");
		TEST_ASSERT(bad == &wr[0], "bad_wr");
		TEST_ASSERT_EQUAL(t_poll(d.scq, wc, 1, 50), 0, "no CQE");
	}
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

		TEST_ASSERT_SUCCESS(swv_modify_qp(d.sqp, &a, IBV_QP_STATE), "");
	}
	TEST_ASSERT_SUCCESS(t_qp_to(d.sqp, IBV_QPS_RTS), "");
	TEST_ASSERT_EQUAL(d.sqp->state, IBV_QPS_RTS, "");
	/* 64, 17, 64 bytes, all signaled. */
	for (i = 0; i < 3; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)txbuf, i == 1 ? 17 : 64,
					   tmr->lkey };
		wr[i].wr_id = 20 + i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_SEND;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	bad = NULL;
	ret = ibv_post_send(d.sqp, &wr[0], &bad);
	TEST_ASSERT_EQUAL(ret, (strict ? EINVAL : 0), "a 17-byte WR");
	TEST_ASSERT(bad == (strict ? &wr[1] : NULL), "bad_wr");
	TEST_ASSERT_EQUAL(t_poll(d.scq, wc, strict ? 1 : 3, T_WAIT_MS),
			  (strict ? 1 : 3), "CQEs");
	TEST_ASSERT_EQUAL(t_poll(d.scq, wc + 3, 1, 50), 0, "no more CQEs");
	for (i = 0; i < (strict ? 1u : 3u); i++) {
		TEST_ASSERT_EQUAL(wc[i].wr_id, 20 + i, "");
		TEST_ASSERT_EQUAL(wc[i].status, IBV_WC_SUCCESS, "");
	}
	/* 18 bytes is enough; the QP never left RTS. */
	TEST_ASSERT_SUCCESS(t_send(d.sqp, tmr, txbuf, 18, 30), "18 bytes");
	TEST_ASSERT_EQUAL(t_poll(d.scq, wc, 1, T_WAIT_MS), 1, "");
	TEST_ASSERT_EQUAL(wc[0].status, IBV_WC_SUCCESS, "");
	TEST_ASSERT_EQUAL(t_dev_state(d.sqp), IBV_QPS_RTS, "");
	swv_dereg_mr(tmr);
	t_teardown(&d);
	return TEST_SUCCESS;
}

static int
test_err_posts(void)
{
	TEST_ASSERT_SUCCESS(t_err_posts(true), "mlx5 profile");
	return t_err_posts(false);
}

static int
test_recv_protection(void)
{
	struct ibv_mr *tmr, *rmr, *romr;
	struct swv_port_counters c0, c1;
	struct ibv_flow *fl;
	struct ibv_wc wc;
	struct tdev d;
	unsigned int i;

	TEST_ASSERT_SUCCESS(t_setup(&d, "rp", "loop"), "");
	tmr = swv_reg_mr(d.pd, txbuf, BUF_SZ, 0);
	/* The MR covers rxbuf[0, 1000): the guards are outside it. */
	rmr = swv_reg_mr(d.pd, rxbuf, 1000, IBV_ACCESS_LOCAL_WRITE);
	romr = swv_reg_mr(d.pd, rxbuf, 1000, 0);	/* read-only */
	fl = t_flow_eth(d.rqp, d.mac, 0);
	TEST_ASSERT_NOT_NULL(fl, "");
	t_frame(txbuf, 500, d.mac, d.mac, 3);
	for (i = 0; i < 3; i++) {
		struct ibv_sge sge;
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		if (i == 0)	/* starts before the MR */
			sge = (struct ibv_sge){ (uintptr_t)rxbuf - 16, 600,
						rmr->lkey };
		else if (i == 1) /* runs past its end */
			sge = (struct ibv_sge){ (uintptr_t)rxbuf + 600, 600,
						rmr->lkey };
		else		/* no local write */
			sge = (struct ibv_sge){ (uintptr_t)rxbuf, 600,
						romr->lkey };
		memset(rxarea, 0xa5, sizeof(rxarea));
		if (i > 0)
			TEST_ASSERT_SUCCESS(t_qp_to(d.rqp, IBV_QPS_RTR), "");
		TEST_ASSERT_SUCCESS(ibv_post_recv(d.rqp, &wr, &bad), "");
		swv_query_port_counters(d.ctx, &c0);
		TEST_ASSERT_SUCCESS(t_send(d.sqp, tmr, txbuf, 500, 0), "");
		TEST_ASSERT_EQUAL(t_poll(d.scq, &wc, 1, T_WAIT_MS), 1, "");
		TEST_ASSERT_EQUAL(t_poll(d.rcq, &wc, 1, T_WAIT_MS), 1, "case %u", i);
		TEST_ASSERT_EQUAL(wc.status, IBV_WC_LOC_PROT_ERR, "case %u", i);
		TEST_ASSERT_EQUAL(wc.wr_id, i, "");
		swv_query_port_counters(d.ctx, &c1);
		TEST_ASSERT_EQUAL(c1.rx_errors - c0.rx_errors, 1, "");
		for (unsigned int j = 0; j < sizeof(rxarea); j++)
			TEST_ASSERT_EQUAL(rxarea[j], 0xa5, "byte %u written", j);
		TEST_ASSERT_EQUAL(t_dev_state(d.rqp), IBV_QPS_ERR, "");
		TEST_ASSERT_EQUAL(d.rqp->state, IBV_QPS_RTR,
				  "mlx5 profile: not in ibv_qp.state");
		{
			struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

			TEST_ASSERT_SUCCESS(swv_modify_qp(d.rqp, &a,
							  IBV_QP_STATE), "");
		}
	}
	TEST_ASSERT(t_counters_ok(d.ctx), "invariant");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fl), "");
	swv_dereg_mr(tmr);
	swv_dereg_mr(rmr);
	swv_dereg_mr(romr);
	t_teardown(&d);
	return TEST_SUCCESS;
}

static int
test_len_error_and_oob(void)
{
	struct swv_port_counters c0, c1;
	struct ibv_mr *tmr, *rmr;
	struct ibv_flow *fl;
	struct ibv_wc wc;
	struct tdev d;

	TEST_ASSERT_SUCCESS(t_setup(&d, "lo", "loop"), "");
	tmr = swv_reg_mr(d.pd, txbuf, BUF_SZ, 0);
	rmr = swv_reg_mr(d.pd, rxarea, sizeof(rxarea), IBV_ACCESS_LOCAL_WRITE);
	fl = t_flow_eth(d.rqp, d.mac, 0);
	t_frame(txbuf, 1000, d.mac, d.mac, 5);
	/* No WQE posted: out of buffer. */
	swv_query_port_counters(d.ctx, &c0);
	TEST_ASSERT_SUCCESS(t_send(d.sqp, tmr, txbuf, 1000, 0), "");
	TEST_ASSERT_EQUAL(t_poll(d.scq, &wc, 1, T_WAIT_MS), 1, "");
	swv_query_port_counters(d.ctx, &c1);
	TEST_ASSERT_EQUAL(c1.rx_out_of_buffer - c0.rx_out_of_buffer, 1, "");
	TEST_ASSERT_EQUAL(c1.rx_frames - c0.rx_frames, 1, "");
	/* Too small a buffer: LOC_LEN_ERR, and the QP keeps receiving. */
	memset(rxarea, 0xa5, sizeof(rxarea));
	TEST_ASSERT_SUCCESS(t_recv(d.rqp, rmr, rxbuf, 999, 1), "");
	TEST_ASSERT_SUCCESS(t_send(d.sqp, tmr, txbuf, 1000, 0), "");
	TEST_ASSERT_EQUAL(t_poll(d.rcq, &wc, 1, T_WAIT_MS), 1, "");
	TEST_ASSERT_EQUAL(wc.status, IBV_WC_LOC_LEN_ERR, "");
	TEST_ASSERT_EQUAL(d.rqp->state, IBV_QPS_RTR, "stays");
	TEST_ASSERT_EQUAL(rxbuf[999], 0xa5, "");
	TEST_ASSERT_SUCCESS(t_recv(d.rqp, rmr, rxbuf, 1000, 2), "");
	TEST_ASSERT_SUCCESS(t_send(d.sqp, tmr, txbuf, 1000, 0), "");
	TEST_ASSERT_EQUAL(t_poll(d.rcq, &wc, 1, T_WAIT_MS), 1, "");
	TEST_ASSERT_EQUAL(wc.status, IBV_WC_SUCCESS, "");
	TEST_ASSERT_EQUAL(wc.wr_id, 2, "");
	{
		struct ibv_wc w2[2];

		TEST_ASSERT_EQUAL(t_poll(d.scq, w2, 2, T_WAIT_MS), 2, "");
	}
	swv_query_port_counters(d.ctx, &c1);
	TEST_ASSERT_EQUAL(c1.rx_errors - c0.rx_errors, 1, "");
	TEST_ASSERT_EQUAL(c1.rx_delivered - c0.rx_delivered, 1, "");
	TEST_ASSERT(t_counters_ok(d.ctx), "invariant");
	/* A receiver in RESET takes nothing: out of buffer too. */
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

		TEST_ASSERT_SUCCESS(swv_modify_qp(d.rqp, &a, IBV_QP_STATE), "");
		swv_query_port_counters(d.ctx, &c0);
		TEST_ASSERT_SUCCESS(t_send(d.sqp, tmr, txbuf, 1000, 0), "");
		TEST_ASSERT_EQUAL(t_poll(d.scq, &wc, 1, T_WAIT_MS), 1, "");
		swv_query_port_counters(d.ctx, &c1);
		TEST_ASSERT_EQUAL(c1.rx_out_of_buffer - c0.rx_out_of_buffer, 1,
				  "");
	}
	swv_destroy_flow(fl);
	swv_dereg_mr(tmr);
	swv_dereg_mr(rmr);
	t_teardown(&d);
	return TEST_SUCCESS;
}

/*
 * Runts: frames shorter than an Ethernet header are dropped and counted
 * (rx_runts, within rx_errors) on in-memory wires, never delivered, even
 * with an ALL_DEFAULT rule that takes everything; 14 bytes and up pass.
 * On the full profile: the mlx5 profile refuses a send of fewer than 18
 * bytes (test_err_posts()).
 */
static int
test_runts(void)
{
	static const uint32_t lens[] = { 14, 1, 13, 59, 6, 60 };
	struct swv_port_counters c0, c1;
	struct ibv_mr *tmr, *rmr;
	struct ibv_flow *fl;
	struct ibv_wc wc[8];
	struct tdev d;
	unsigned int i, n = sizeof(lens) / sizeof(lens[0]);
	int got;

	TEST_ASSERT_SUCCESS(t_setup_full(&d, "lr", "loop"), "");
	tmr = swv_reg_mr(d.pd, txbuf, BUF_SZ, 0);
	rmr = swv_reg_mr(d.pd, rxarea, sizeof(rxarea), IBV_ACCESS_LOCAL_WRITE);
	TEST_ASSERT_NOT_NULL(tmr, "");
	TEST_ASSERT_NOT_NULL(rmr, "");
	fl = t_flow_default(d.rqp, IBV_FLOW_ATTR_ALL_DEFAULT, 0);
	TEST_ASSERT_NOT_NULL(fl, "");
	for (i = 0; i < n; i++)
		TEST_ASSERT_SUCCESS(t_recv(d.rqp, rmr, rxbuf + i * 128, 128,
					   i), "");
	swv_query_port_counters(d.ctx, &c0);
	/* All posted at once: the loop wire steers them as one burst. */
	for (i = 0; i < n; i++) {
		t_frame(txbuf + i * 128, 64, d.mac, d.mac, (uint8_t)i);
		TEST_ASSERT_SUCCESS(t_send(d.sqp, tmr, txbuf + i * 128,
					   lens[i], 100 + i), "");
	}
	TEST_ASSERT_EQUAL(t_poll(d.scq, wc, n, T_WAIT_MS), (int)n, "send CQEs");
	/*
	 * The three that are not runts, however late the engine's pass; then
	 * none more. The counts are published after the pass's completions:
	 * wait for them too before checking them exactly.
	 */
	got = t_poll(d.rcq, wc, 3, T_WAIT_MS);
	TEST_ASSERT_EQUAL(got, 3, "received frames");
	TEST_ASSERT_EQUAL(t_poll(d.rcq, wc + 3, 1, 50), 0, "received runts");
	TEST_ASSERT_EQUAL(wc[0].byte_len, 14, "");
	TEST_ASSERT_EQUAL(wc[1].byte_len, 59, "");
	TEST_ASSERT_EQUAL(wc[2].byte_len, 60, "");
	T_WAIT(swv_query_port_counters(d.ctx, &c1) == 0 &&
	       c1.rx_frames - c0.rx_frames >= n &&
	       c1.rx_delivered - c0.rx_delivered >= 3 &&
	       c1.rx_runts - c0.rx_runts >= 3 &&
	       c1.rx_errors - c0.rx_errors >= 3);
	swv_query_port_counters(d.ctx, &c1);
	TEST_ASSERT_EQUAL(c1.rx_runts - c0.rx_runts, 3, "runts");
	TEST_ASSERT_EQUAL(c1.rx_errors - c0.rx_errors, 3, "");
	TEST_ASSERT_EQUAL(c1.rx_frames - c0.rx_frames, n, "");
	TEST_ASSERT_EQUAL(c1.rx_delivered - c0.rx_delivered, 3, "");
	TEST_ASSERT(t_counters_ok(d.ctx), "invariant");
	/* One at a time too (not in a burst). */
	swv_query_port_counters(d.ctx, &c0);
	TEST_ASSERT_SUCCESS(t_send(d.sqp, tmr, txbuf, 13, 200), "");
	TEST_ASSERT_EQUAL(t_poll(d.scq, wc, 1, T_WAIT_MS), 1, "");
	/* Counted first: then the frame was handled, and not delivered. */
	T_WAIT(swv_query_port_counters(d.ctx, &c1) == 0 &&
	       c1.rx_runts - c0.rx_runts >= 1);
	TEST_ASSERT_EQUAL(t_poll(d.rcq, wc, 1, 100), 0, "runt delivered");
	swv_query_port_counters(d.ctx, &c1);
	TEST_ASSERT_EQUAL(c1.rx_runts - c0.rx_runts, 1, "");
	swv_destroy_flow(fl);
	swv_dereg_mr(tmr);
	swv_dereg_mr(rmr);
	t_teardown(&d);
	return TEST_SUCCESS;
}

/* What became of the frames the port received, as far as deliver() goes. */
static uint64_t
rx_fates(const struct swv_port_counters *c)
{
	return c->rx_delivered + c->rx_no_match + c->rx_out_of_buffer +
	       c->rx_dropped;
}

/* Send one frame to @dst; return the wr_id it was received with, or -1
 * (nothing received) after checking it was counted.
 */
static int64_t
deliver(struct tdev *d, struct ibv_mr *tmr, const uint8_t *dst)
{
	struct swv_port_counters c0, c1;
	struct ibv_wc wc;

	swv_query_port_counters(d->ctx, &c0);
	t_frame(txbuf, 64, dst, d->mac, 9);
	if (t_send(d->sqp, tmr, txbuf, 64, 0) != 0)
		return -2;
	if (t_poll(d->scq, &wc, 1, T_WAIT_MS) != 1)
		return -2;
	/*
	 * The loop wire hands the frame to a later engine pass, which may
	 * come late on a loaded machine: wait until the port has counted
	 * the frame's fate, then give a delivered one all the time it needs
	 * and a dropped one the old 30 ms to show a completion it must not.
	 */
	T_WAIT(swv_query_port_counters(d->ctx, &c1) == 0 &&
	       rx_fates(&c1) > rx_fates(&c0));
	if (rx_fates(&c1) == rx_fates(&c0))
		return -2;
	if (t_poll(d->rcq, &wc, 1,
		   c1.rx_delivered > c0.rx_delivered ? T_WAIT_MS : 30) != 1)
		return -1;
	if (wc.status != IBV_WC_SUCCESS)
		return -2;
	return (int64_t)wc.wr_id;
}

static int
test_steering(void)
{
	struct ibv_flow *fmac, *fall, *fmc, *fhi, *fother;
	struct swv_port_counters c0, c1;
	struct ibv_mr *tmr, *rmr;
	struct ibv_qp *q2, *q3;
	struct tdev d;
	int i;

	TEST_ASSERT_SUCCESS(t_setup(&d, "st", "loop"), "");
	tmr = swv_reg_mr(d.pd, txbuf, BUF_SZ, 0);
	rmr = swv_reg_mr(d.pd, rxarea, sizeof(rxarea), IBV_ACCESS_LOCAL_WRITE);
	q2 = t_raw_qp(&d, 1, 64, 1, 0);
	q3 = t_raw_qp(&d, 1, 64, 1, 0);
	TEST_ASSERT_SUCCESS(t_qp_to(q2, IBV_QPS_RTR), "");
	TEST_ASSERT_SUCCESS(t_qp_to(q3, IBV_QPS_RTR), "");
	/* wr_id tells the receiving QP: 1xx rqp, 2xx q2, 3xx q3. */
	for (i = 0; i < 32; i++) {
		TEST_ASSERT_SUCCESS(t_recv(d.rqp, rmr, rxbuf, 2048, 100), "");
		TEST_ASSERT_SUCCESS(t_recv(q2, rmr, rxbuf + 2048, 2048, 200),
				    "");
		TEST_ASSERT_SUCCESS(t_recv(q3, rmr, rxbuf + 4096, 2048, 300),
				    "");
	}
	/* No rule at all: nothing received, no_match counted. */
	swv_query_port_counters(d.ctx, &c0);
	TEST_ASSERT_EQUAL(deliver(&d, tmr, d.mac), -1, "");
	swv_query_port_counters(d.ctx, &c1);
	TEST_ASSERT_EQUAL(c1.rx_no_match - c0.rx_no_match, 1, "");

	fmac = t_flow_eth(d.rqp, d.mac, 5);
	TEST_ASSERT_NOT_NULL(fmac, "");
	TEST_ASSERT_EQUAL(deliver(&d, tmr, d.mac), 100, "own MAC");
	TEST_ASSERT_EQUAL(deliver(&d, tmr, other), -1, "other MAC");
	TEST_ASSERT_EQUAL(deliver(&d, tmr, bcast), -1, "broadcast");

	fall = t_flow_default(q2, IBV_FLOW_ATTR_ALL_DEFAULT, 0);
	TEST_ASSERT_NOT_NULL(fall, "");
	TEST_ASSERT_EQUAL(deliver(&d, tmr, other), 200, "promiscuous");
	TEST_ASSERT_EQUAL(deliver(&d, tmr, d.mac), 100,
			  "NORMAL rules before defaults, whatever priority");
	TEST_ASSERT_EQUAL(deliver(&d, tmr, mcast), 200, "");

	fmc = t_flow_default(q3, IBV_FLOW_ATTR_MC_DEFAULT, 0);
	TEST_ASSERT_NOT_NULL(fmc, "");
	TEST_ASSERT_EQUAL(deliver(&d, tmr, mcast), 300, "multicast");
	TEST_ASSERT_EQUAL(deliver(&d, tmr, bcast), 300, "broadcast too");
	TEST_ASSERT_EQUAL(deliver(&d, tmr, other), 200, "unicast: ALL");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fall), "");
	TEST_ASSERT_EQUAL(deliver(&d, tmr, other), -1, "no promiscuous");
	TEST_ASSERT_EQUAL(deliver(&d, tmr, mcast), 300, "");

	/* Priorities: q2 at priority 1 beats rqp at 5 for the same MAC. */
	fhi = t_flow_eth(q2, d.mac, 1);
	TEST_ASSERT_NOT_NULL(fhi, "");
	TEST_ASSERT_EQUAL(deliver(&d, tmr, d.mac), 200, "lower value wins");
	/* Same priority as fhi: the earlier rule wins. */
	fother = t_flow_eth(q3, d.mac, 1);
	TEST_ASSERT_NOT_NULL(fother, "");
	TEST_ASSERT_EQUAL(deliver(&d, tmr, d.mac), 200, "first created");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fhi), "");
	TEST_ASSERT_EQUAL(deliver(&d, tmr, d.mac), 300, "next in line");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fother), "");
	TEST_ASSERT_EQUAL(deliver(&d, tmr, d.mac), 100, "");
	TEST_ASSERT(t_counters_ok(d.ctx), "invariant");

	swv_destroy_flow(fmac);
	swv_destroy_flow(fmc);
	/* Move the receivers to RESET so teardown is clean. */
	swv_destroy_qp(q2);
	swv_destroy_qp(q3);
	swv_dereg_mr(tmr);
	swv_dereg_mr(rmr);
	t_teardown(&d);
	return TEST_SUCCESS;
}

static int
test_vlan_ethertype_rule(void)
{
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
	} f;
	struct ibv_mr *tmr, *rmr;
	struct ibv_flow *fl;
	struct ibv_wc wc;
	struct tdev d;
	uint8_t *p = txbuf;

	TEST_ASSERT_SUCCESS(t_setup(&d, "vl", "loop"), "");
	tmr = swv_reg_mr(d.pd, txbuf, BUF_SZ, 0);
	rmr = swv_reg_mr(d.pd, rxarea, sizeof(rxarea), IBV_ACCESS_LOCAL_WRITE);
	memset(&f, 0, sizeof(f));
	f.attr.type = IBV_FLOW_ATTR_NORMAL;
	f.attr.size = sizeof(f);
	f.attr.num_of_specs = 1;
	f.attr.port = 1;
	f.eth.type = IBV_FLOW_SPEC_ETH;
	f.eth.size = sizeof(f.eth);
	f.eth.val.vlan_tag = htobe16(100);
	f.eth.mask.vlan_tag = htobe16(0x0fff);
	f.eth.val.ether_type = htobe16(0x0800);
	f.eth.mask.ether_type = 0xffff;
	fl = swv_create_flow(d.rqp, &f.attr);
	TEST_ASSERT_NOT_NULL(fl, "");
	TEST_ASSERT_SUCCESS(t_recv(d.rqp, rmr, rxbuf, 2048, 7), "");
	/* VLAN 101: no match. */
	memset(p, 0, 64);
	memcpy(p, d.mac, 6);
	memcpy(p + 6, d.mac, 6);
	p[12] = 0x81; p[13] = 0x00; p[14] = 0x00; p[15] = 101;
	p[16] = 0x08; p[17] = 0x00;
	TEST_ASSERT_SUCCESS(t_send(d.sqp, tmr, p, 64, 0), "");
	TEST_ASSERT_EQUAL(t_poll(d.rcq, &wc, 1, 30), 0, "VLAN 101");
	/* Priority bits are outside the mask: PCP 3, VLAN 100 matches. */
	p[14] = 0x60; p[15] = 100;
	TEST_ASSERT_SUCCESS(t_send(d.sqp, tmr, p, 64, 0), "");
	TEST_ASSERT_EQUAL(t_poll(d.rcq, &wc, 1, T_WAIT_MS), 1, "VLAN 100");
	TEST_ASSERT_EQUAL(wc.wr_id, 7, "");
	{
		struct ibv_wc w2[2];

		TEST_ASSERT_EQUAL(t_poll(d.scq, w2, 2, T_WAIT_MS), 2, "");
	}
	swv_destroy_flow(fl);
	swv_dereg_mr(tmr);
	swv_dereg_mr(rmr);
	t_teardown(&d);
	return TEST_SUCCESS;
}

static int
test_selective_signal_and_cq_ex(void)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 256,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM |
			    IBV_WC_EX_WITH_FLOW_TAG |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	};
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_qp_init_attr qa;
	struct ibv_mr *tmr, *rmr;
	struct ibv_cq_ex *cqx;
	struct ibv_flow *fl;
	struct ibv_qp *sq, *rq;
	struct ibv_wc wc[16];
	struct tdev d;
	uint64_t prev_ts = 0;
	int i, n, ret;

	TEST_ASSERT_SUCCESS(t_setup(&d, "ss", "loop"), "");
	tmr = swv_reg_mr(d.pd, txbuf, BUF_SZ, 0);
	rmr = swv_reg_mr(d.pd, rxarea, sizeof(rxarea), IBV_ACCESS_LOCAL_WRITE);
	cqx = swv_create_cq_ex(d.ctx, &ca);
	TEST_ASSERT_NOT_NULL(cqx, "");
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RAW_PACKET;
	qa.send_cq = d.scq;
	qa.recv_cq = ibv_cq_ex_to_cq(cqx);
	qa.cap.max_send_wr = 64;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_wr = 64;
	qa.cap.max_recv_sge = 1;
	qa.sq_sig_all = 0;
	sq = swv_create_qp(d.pd, &qa);
	rq = swv_create_qp(d.pd, &qa);
	TEST_ASSERT_NOT_NULL(sq, "");
	TEST_ASSERT_SUCCESS(t_qp_to(sq, IBV_QPS_RTS), "");
	TEST_ASSERT_SUCCESS(t_qp_to(rq, IBV_QPS_RTR), "");
	fl = t_flow_eth(rq, d.mac, 0);
	for (i = 0; i < 10; i++)
		TEST_ASSERT_SUCCESS(t_recv(rq, rmr, rxbuf + i * 2048, 2048,
					   1000 + i), "");
	/* 10 sends, only #4 and #9 signaled. */
	for (i = 0; i < 10; i++) {
		struct ibv_sge sge = { (uintptr_t)txbuf + i * 128, 60 + i,
				       tmr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND,
			.send_flags = (i == 4 || i == 9) ?
				      IBV_SEND_SIGNALED : 0,
		}, *bad;

		t_frame(txbuf + i * 128, 60 + i, d.mac, d.mac, (uint8_t)i);
		TEST_ASSERT_SUCCESS(ibv_post_send(sq, &wr, &bad), "");
	}
	/* The two, however late the engine; then none more for 50 ms. */
	n = t_poll(d.scq, wc, 2, T_WAIT_MS);
	if (n == 2)
		n += t_poll(d.scq, wc + 2, 14, 50);
	TEST_ASSERT_EQUAL(n, 2, "only the signaled ones");
	TEST_ASSERT_EQUAL(wc[0].wr_id, 4, "");
	TEST_ASSERT_EQUAL(wc[1].wr_id, 9, "");
	TEST_ASSERT_EQUAL(wc[1].byte_len, 69, "");
	/* Receive side through the extended CQ. */
	n = 0;
	{
		uint64_t end = t_now_ms() + T_WAIT_MS;

		while (n < 10 && t_now_ms() < end) {
			ret = ibv_start_poll(cqx, &pa);
			if (ret == ENOENT) {
				usleep(100);
				continue;
			}
			TEST_ASSERT_SUCCESS(ret, "");
			do {
				TEST_ASSERT_EQUAL(cqx->status, IBV_WC_SUCCESS,
						  "");
				TEST_ASSERT_EQUAL(cqx->wr_id, 1000 + n, "");
				TEST_ASSERT_EQUAL(ibv_wc_read_opcode(cqx),
						  IBV_WC_RECV, "");
				TEST_ASSERT_EQUAL(ibv_wc_read_byte_len(cqx),
						  60 + n, "");
				TEST_ASSERT_EQUAL(ibv_wc_read_qp_num(cqx),
						  rq->qp_num, "");
				TEST_ASSERT_EQUAL(ibv_wc_read_flow_tag(cqx), 0,
						  "");
				TEST_ASSERT_EQUAL(ibv_wc_read_wc_flags(cqx), 0,
						  "");
				TEST_ASSERT(ibv_wc_read_completion_ts(cqx) >=
					    prev_ts && ibv_wc_read_completion_ts(
					    cqx) > 0, "monotonic ns");
				prev_ts = ibv_wc_read_completion_ts(cqx);
				n++;
			} while (ibv_next_poll(cqx) == 0);
			ibv_end_poll(cqx);
		}
	}
	TEST_ASSERT_EQUAL(n, 10, "");
	TEST_ASSERT_EQUAL(ibv_start_poll(cqx, &pa), ENOENT, "drained");
	swv_destroy_flow(fl);
	swv_destroy_qp(sq);
	swv_destroy_qp(rq);
	TEST_ASSERT_SUCCESS(swv_destroy_cq(ibv_cq_ex_to_cq(cqx)), "");
	swv_dereg_mr(tmr);
	swv_dereg_mr(rmr);
	t_teardown(&d);
	return TEST_SUCCESS;
}

/* CPU time of the thread named swv-engine, in clock ticks, or -1. */
static long
engine_ticks(void)
{
	char path[300], buf[512];
	struct dirent *e;
	long ticks = -1;
	DIR *dir;
	FILE *f;

	dir = opendir("/proc/self/task");
	if (dir == NULL)
		return -1;
	while ((e = readdir(dir)) != NULL) {
		char *p;
		unsigned long ut, st;
		int k;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat",
			 e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fgets(buf, sizeof(buf), f) == NULL) {
			fclose(f);
			continue;
		}
		fclose(f);
		if (strstr(buf, "(swv-engine)") == NULL)
			continue;
		p = strrchr(buf, ')');
		/* fields after the name: state is #3; utime #14, stime #15 */
		for (k = 0; k < 11 && p != NULL; k++)
			p = strchr(p + 1, ' ');
		if (p != NULL && sscanf(p + 1, "%lu %lu", &ut, &st) == 2)
			ticks = (long)(ut + st);
	}
	closedir(dir);
	return ticks;
}

static int
test_idle_engine_sleeps(void)
{
	struct tdev d;
	long t0, t1, hz = sysconf(_SC_CLK_TCK);

	TEST_ASSERT_SUCCESS(t_setup(&d, "id", "loop"), "");
	usleep(100000);
	t0 = engine_ticks();
	TEST_ASSERT(t0 >= 0, "engine thread found");
	sleep(2);
	t1 = engine_ticks();
	t_teardown(&d);
	printf("    idle engine: %ld ticks in 2 s (%ld Hz)\n", t1 - t0, hz);
	/* < 5% of one core over 2 s. */
	TEST_ASSERT((t1 - t0) * 100 < 5 * 2 * hz, "engine busy while idle");
	return TEST_SUCCESS;
}

static int
test_many_frames_counters(void)
{
	struct swv_port_counters c;
	struct ibv_mr *tmr, *rmr;
	struct ibv_flow *fl;
	struct ibv_wc wc[64];
	struct tdev d;
	unsigned int sent = 0, got = 0, i;
	uint64_t end;

	TEST_ASSERT_SUCCESS(t_setup(&d, "mf", "loop"), "");
	tmr = swv_reg_mr(d.pd, txbuf, BUF_SZ, 0);
	rmr = swv_reg_mr(d.pd, rxarea, sizeof(rxarea), IBV_ACCESS_LOCAL_WRITE);
	fl = t_flow_eth(d.rqp, d.mac, 0);
	t_frame(txbuf, 64, d.mac, d.mac, 0);
	/* Post 100 receive buffers, send 20000 frames as fast as the ring
	 * allows: most find no buffer; the sums must still add up.
	 */
	for (i = 0; i < 100; i++)
		TEST_ASSERT_SUCCESS(t_recv(d.rqp, rmr, rxbuf + 64 * i, 64, i),
				    "");
	end = t_now_ms() + 10000;
	while (sent < 20000 && t_now_ms() < end) {
		if (t_send(d.sqp, tmr, txbuf, 64, sent) == 0)
			sent++;
		got += (unsigned int)ibv_poll_cq(d.scq, 64, wc);
	}
	while (got < sent && t_now_ms() < end)
		got += (unsigned int)ibv_poll_cq(d.scq, 64, wc);
	TEST_ASSERT_EQUAL(got, sent, "");
	TEST_ASSERT_SUCCESS(swv_query_port_counters(d.ctx, &c), "");
	TEST_ASSERT_EQUAL(c.tx_frames, sent, "");
	TEST_ASSERT_EQUAL(c.rx_frames, sent, "");
	TEST_ASSERT_EQUAL(c.rx_delivered, 100, "");
	TEST_ASSERT_EQUAL(c.rx_out_of_buffer, sent - 100, "");
	TEST_ASSERT(t_counters_ok(d.ctx), "invariant");
	swv_destroy_flow(fl);
	swv_dereg_mr(tmr);
	swv_dereg_mr(rmr);
	t_teardown(&d);
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite = {
	.name = "swverbs datapath",
	.cases = {
		TEST_CASE(test_loop_exact),
		TEST_CASE(test_pair_exact),
		TEST_CASE(test_loop_shared_cq),
		TEST_CASE(test_send_protection),
		TEST_CASE(test_err_posts),
		TEST_CASE(test_recv_protection),
		TEST_CASE(test_len_error_and_oob),
		TEST_CASE(test_runts),
		TEST_CASE(test_steering),
		TEST_CASE(test_vlan_ethertype_rule),
		TEST_CASE(test_selective_signal_and_cq_ex),
		TEST_CASE(test_many_frames_counters),
		TEST_CASE(test_idle_engine_sleeps),
		TEST_CASES_END(),
	},
};

int
main(void)
{
	return unit_test_suite_runner(&suite);
}
