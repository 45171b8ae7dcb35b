/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * A raw-verbs program on a swverbs device: after opening the device, it uses
 * verbs.h's own calls (the inline ones, which reach a provider through its
 * verbs_context) for everything verbs.h offers inline: port and device
 * queries, extended CQ, WQ, indirection table, hash and raw QPs, counters,
 * flow steering, posting and polling. Only what verbs.h reaches through
 * libibverbs' exported functions (PD, MR, QP state changes, destroying QPs
 * and CQs) is done with swv_* calls. Frames go round a loop wire, are
 * steered to the WQ by a counted rule, and the counts are read back.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "swv_test_util.h"

#define NWQE 16
#define FRAME_LEN 128
#define NFRAMES 8

static uint8_t txbuf[FRAME_LEN];
static uint8_t rxbuf[NWQE][2048];

static int
test_verbs_h(void)
{
	static uint8_t key[40] = { 0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b };
	struct ibv_cq_init_attr_ex cqa = { .cqe = 64 };
	struct ibv_wq_init_attr wqa = { 0 };
	struct ibv_wq_attr wmod = { 0 };
	struct ibv_rwq_ind_table_init_attr ita = { 0 };
	struct ibv_qp_init_attr_ex qpa = { 0 };
	struct ibv_counters_init_attr cia = { 0 };
	struct ibv_counter_attach_attr at = { 0 };
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_device_attr_ex dattr;
	struct ibv_port_attr port;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *tmr, *rmr;
	struct ibv_cq_ex *rcq, *scq;
	struct ibv_wq *wq;
	struct ibv_rwq_ind_table *ind;
	struct ibv_qp *hqp, *sqp;
	struct ibv_counters *cnt;
	struct ibv_flow *fl;
	struct ibv_wc wc[NFRAMES];
	uint64_t v[2];
	uint8_t mac[6];
	unsigned int got = 0, i, sent;
	int n;
	/* Specs follow one another with no padding, as verbs wants. */
	union {
		struct __attribute__((packed)) {
			struct ibv_flow_attr attr;
			struct ibv_flow_spec_eth eth;
			struct ibv_flow_spec_counter_action count;
		} r;
		uint64_t align;
	} rule;

	TEST_ASSERT_SUCCESS(swv_device_create("vh0", "loop", NULL), "");
	ctx = t_open("vh0");
	TEST_ASSERT_NOT_NULL(ctx, "%d", errno);
	TEST_ASSERT_SUCCESS(swv_query_port_mac(ctx, mac), "");

	/* Queries. */
	memset(&port, 0xa5, sizeof(port));
	TEST_ASSERT_SUCCESS(ibv_query_port(ctx, 1, &port), "");
	TEST_ASSERT_EQUAL(port.state, IBV_PORT_ACTIVE, "loop wire is up");
	TEST_ASSERT_EQUAL(port.link_layer, IBV_LINK_LAYER_ETHERNET, "");
	TEST_ASSERT_EQUAL(ibv_query_port(ctx, 2, &port), EINVAL, "port 2");
	TEST_ASSERT_SUCCESS(ibv_query_device_ex(ctx, NULL, &dattr), "");
	TEST_ASSERT(dattr.orig_attr.device_cap_flags &
		    IBV_DEVICE_MANAGED_FLOW_STEERING, "flow steering");
	TEST_ASSERT(dattr.rss_caps.rx_hash_function &
		    IBV_RX_HASH_FUNC_TOEPLITZ, "Toeplitz");

	/* Objects verbs.h has no inline call for. */
	pd = swv_alloc_pd(ctx);
	TEST_ASSERT_NOT_NULL(pd, "");
	tmr = swv_reg_mr(pd, txbuf, sizeof(txbuf), 0);
	rmr = swv_reg_mr(pd, rxbuf, sizeof(rxbuf), IBV_ACCESS_LOCAL_WRITE);
	TEST_ASSERT(tmr != NULL && rmr != NULL, "");

	/* Receive side: CQ, WQ, table, hash QP. */
	rcq = ibv_create_cq_ex(ctx, &cqa);
	scq = ibv_create_cq_ex(ctx, &cqa);
	TEST_ASSERT(rcq != NULL && scq != NULL, "create_cq_ex: %d", errno);
	wqa.wq_type = IBV_WQT_RQ;
	wqa.max_wr = NWQE;
	wqa.max_sge = 1;
	wqa.pd = pd;
	wqa.cq = ibv_cq_ex_to_cq(rcq);
	wq = ibv_create_wq(ctx, &wqa);
	TEST_ASSERT_NOT_NULL(wq, "create_wq: %d", errno);
	wmod.attr_mask = IBV_WQ_ATTR_STATE;
	wmod.wq_state = IBV_WQS_RDY;
	TEST_ASSERT_SUCCESS(ibv_modify_wq(wq, &wmod), "");
	ita.log_ind_tbl_size = 0;
	ita.ind_tbl = &wq;
	ind = ibv_create_rwq_ind_table(ctx, &ita);
	TEST_ASSERT_NOT_NULL(ind, "create_rwq_ind_table: %d", errno);
	qpa.qp_type = IBV_QPT_RAW_PACKET;
	qpa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			IBV_QP_INIT_ATTR_RX_HASH;
	qpa.pd = pd;
	qpa.rwq_ind_tbl = ind;
	qpa.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	qpa.rx_hash_conf.rx_hash_key_len = sizeof(key);
	qpa.rx_hash_conf.rx_hash_key = key;
	qpa.rx_hash_conf.rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 |
					       IBV_RX_HASH_DST_IPV4;
	hqp = ibv_create_qp_ex(ctx, &qpa);
	TEST_ASSERT_NOT_NULL(hqp, "hash QP: %d", errno);
	for (i = 0; i < NWQE; i++) {
		struct ibv_sge sge = { (uintptr_t)rxbuf[i], sizeof(rxbuf[i]),
				       rmr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		TEST_ASSERT_SUCCESS(ibv_post_wq_recv(wq, &wr, &bad), "");
	}

	/* A counted rule to the hash QP, its points attached first. */
	cnt = ibv_create_counters(ctx, &cia);
	TEST_ASSERT_NOT_NULL(cnt, "create_counters: %d", errno);
	at.counter_desc = IBV_COUNTER_PACKETS;
	at.index = 0;
	TEST_ASSERT_SUCCESS(ibv_attach_counters_point_flow(cnt, &at, NULL), "");
	at.counter_desc = IBV_COUNTER_BYTES;
	at.index = 1;
	TEST_ASSERT_SUCCESS(ibv_attach_counters_point_flow(cnt, &at, NULL), "");
	memset(&rule, 0, sizeof(rule));
	rule.r.attr.type = IBV_FLOW_ATTR_NORMAL;
	rule.r.attr.size = sizeof(rule.r);
	rule.r.attr.num_of_specs = 2;
	rule.r.attr.port = 1;
	rule.r.eth.type = IBV_FLOW_SPEC_ETH;
	rule.r.eth.size = sizeof(rule.r.eth);
	memcpy(rule.r.eth.val.dst_mac, mac, 6);
	memset(rule.r.eth.mask.dst_mac, 0xff, 6);
	rule.r.count.type = IBV_FLOW_SPEC_ACTION_COUNT;
	rule.r.count.size = sizeof(rule.r.count);
	rule.r.count.counters = cnt;
	fl = ibv_create_flow(hqp, (struct ibv_flow_attr *)(void *)&rule);
	TEST_ASSERT_NOT_NULL(fl, "create_flow: %d", errno);

	/* Send side: a raw QP with a send queue only. */
	memset(&qpa, 0, sizeof(qpa));
	qpa.qp_type = IBV_QPT_RAW_PACKET;
	qpa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS;
	qpa.pd = pd;
	qpa.send_cq = ibv_cq_ex_to_cq(scq);
	qpa.recv_cq = ibv_cq_ex_to_cq(scq);
	qpa.cap.max_send_wr = NFRAMES;
	qpa.cap.max_send_sge = 1;
	qpa.sq_sig_all = 1;
	sqp = ibv_create_qp_ex(ctx, &qpa);
	TEST_ASSERT_NOT_NULL(sqp, "raw QP: %d", errno);
	TEST_ASSERT_SUCCESS(t_qp_to(sqp, IBV_QPS_RTS), "");

	/* Frames round the loop, into the WQ, counted. */
	t_frame(txbuf, FRAME_LEN, mac, mac, 3);
	for (sent = 0; sent < NFRAMES; sent++)
		TEST_ASSERT_SUCCESS(t_send(sqp, tmr, txbuf, FRAME_LEN, sent),
				    "");
	TEST_ASSERT_EQUAL(t_poll(ibv_cq_ex_to_cq(scq), wc, NFRAMES, 2000),
			  NFRAMES, "send completions");
	for (i = 0; i < NFRAMES; i++)
		TEST_ASSERT_EQUAL(wc[i].status, IBV_WC_SUCCESS, "");
	T_WAIT((n = ibv_start_poll(rcq, &pa)) == 0);
	TEST_ASSERT_SUCCESS(n, "no receive completion");
	do {
		TEST_ASSERT_EQUAL(rcq->status, IBV_WC_SUCCESS, "");
		TEST_ASSERT_EQUAL(ibv_wc_read_byte_len(rcq), FRAME_LEN, "");
		TEST_ASSERT_SUCCESS(memcmp(rxbuf[rcq->wr_id], txbuf,
					   FRAME_LEN), "frame %u", got);
		got++;
	} while (got < NFRAMES && (ibv_next_poll(rcq) == 0 ||
				   (usleep(1000), ibv_next_poll(rcq) == 0)));
	ibv_end_poll(rcq);
	TEST_ASSERT_EQUAL(got, NFRAMES, "frames received");
	TEST_ASSERT_SUCCESS(ibv_read_counters(cnt, v, 2, 0), "");
	TEST_ASSERT_EQUAL(v[0], NFRAMES, "packets counted");
	TEST_ASSERT_EQUAL(v[1], (uint64_t)NFRAMES * FRAME_LEN, "bytes");
	/* ibv_req_notify_cq() reaches swverbs: this CQ has no channel. */
	TEST_ASSERT_EQUAL(ibv_req_notify_cq(ibv_cq_ex_to_cq(rcq), 0),
			  EINVAL, "");

	TEST_ASSERT_SUCCESS(ibv_destroy_flow(fl), "");
	TEST_ASSERT_SUCCESS(ibv_destroy_counters(cnt), "");
	TEST_ASSERT_SUCCESS(swv_destroy_qp(sqp), "");
	TEST_ASSERT_SUCCESS(swv_destroy_qp(hqp), "");
	TEST_ASSERT_SUCCESS(ibv_destroy_rwq_ind_table(ind), "");
	TEST_ASSERT_SUCCESS(ibv_destroy_wq(wq), "");
	TEST_ASSERT_SUCCESS(swv_destroy_cq(ibv_cq_ex_to_cq(rcq)), "");
	TEST_ASSERT_SUCCESS(swv_destroy_cq(ibv_cq_ex_to_cq(scq)), "");
	TEST_ASSERT_SUCCESS(swv_dereg_mr(tmr), "");
	TEST_ASSERT_SUCCESS(swv_dereg_mr(rmr), "");
	TEST_ASSERT_SUCCESS(swv_dealloc_pd(pd), "");
	TEST_ASSERT_SUCCESS(swv_close_device(ctx), "");
	TEST_ASSERT_SUCCESS(swv_device_destroy("vh0"), "");
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite = {
	.name = "swverbs through verbs.h",
	.cases = {
		TEST_CASE(test_verbs_h),
		TEST_CASES_END(),
	},
};

int
main(void)
{
	return unit_test_suite_runner(&suite);
}
