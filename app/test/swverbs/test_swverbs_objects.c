/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * swverbs object lifecycles and the libibverbs errno conventions.
 */

#include <fcntl.h>

#include "swv_priv.h"
#include "swv_test_util.h"

/* The one parser of wire strings, as the device and the PMD use it. */
static int
test_wire_parse(void)
{
	enum swv_wire_kind kind;
	const char *name;

	TEST_ASSERT_SUCCESS(swv_wire_parse("loop", &kind, &name), "");
	TEST_ASSERT(kind == SWV_WIRE_LOOP && name == NULL, "loop");
	TEST_ASSERT_SUCCESS(swv_wire_parse("pair:c0", &kind, &name), "");
	TEST_ASSERT(kind == SWV_WIRE_PAIR && strcmp(name, "c0") == 0, "");
	TEST_ASSERT_SUCCESS(swv_wire_parse("af_packet:vb0", &kind, &name), "");
	TEST_ASSERT(kind == SWV_WIRE_AF_PACKET && strcmp(name, "vb0") == 0,
		    "");
	TEST_ASSERT_EQUAL(swv_wire_parse("pair:", &kind, &name), ENOENT, "");
	TEST_ASSERT_EQUAL(swv_wire_parse("af_packet:", NULL, NULL), ENOENT,
			  "");
	TEST_ASSERT_EQUAL(swv_wire_parse("loopy", &kind, &name), EINVAL, "");
	TEST_ASSERT_EQUAL(swv_wire_parse("loop:x", &kind, &name), EINVAL, "");
	TEST_ASSERT_EQUAL(swv_wire_parse("pair", &kind, &name), EINVAL, "");
	TEST_ASSERT_EQUAL(swv_wire_parse(NULL, &kind, &name), EINVAL, "");
	/* The device takes what the parser takes, and refuses the rest. */
	TEST_ASSERT_EQUAL(swv_device_create("wp0", "pair:", NULL), EINVAL, "");
	TEST_ASSERT_EQUAL(swv_device_create("wp0", "loopy", NULL), EINVAL, "");
	TEST_ASSERT_SUCCESS(swv_device_create("wp0", "loop", NULL), "");
	TEST_ASSERT_SUCCESS(swv_device_destroy("wp0"), "");
	return TEST_SUCCESS;
}

static int
test_device_registry(void)
{
	char longname[SWV_NAME_MAX + 1];
	struct ibv_device **list;
	struct ibv_context *ctx;
	int n;

	TEST_ASSERT_EQUAL(swv_device_create("", "loop", NULL), EINVAL, "");
	memset(longname, 'a', SWV_NAME_MAX);
	longname[SWV_NAME_MAX] = '\0';
	TEST_ASSERT_EQUAL(swv_device_create(longname, "loop", NULL), EINVAL,
			  "");
	longname[SWV_NAME_MAX - 1] = '\0';
	TEST_ASSERT_SUCCESS(swv_device_create(longname, "loop", NULL), "");
	TEST_ASSERT_SUCCESS(swv_device_destroy(longname), "");
	TEST_ASSERT_EQUAL(swv_device_create("d0", "bogus", NULL), EINVAL, "");
	TEST_ASSERT_EQUAL(swv_device_create("d0", "pair:", NULL), EINVAL, "");
	TEST_ASSERT_SUCCESS(swv_device_create("d0", "loop", NULL), "");
	TEST_ASSERT_EQUAL(swv_device_create("d0", "loop", NULL), EEXIST, "");
	list = swv_get_device_list(&n);
	TEST_ASSERT_NOT_NULL(list, "");
	TEST_ASSERT_EQUAL(n, 1, "");
	TEST_ASSERT_NULL(list[1], "list is NULL-terminated");
	TEST_ASSERT(strcmp(swv_get_device_name(list[0]), "d0") == 0, "");
	swv_free_device_list(list);
	ctx = t_open("d0");
	TEST_ASSERT_NOT_NULL(ctx, "");
	TEST_ASSERT_EQUAL(swv_device_destroy("d0"), EBUSY, "context open");
	TEST_ASSERT_SUCCESS(swv_close_device(ctx), "");
	TEST_ASSERT_SUCCESS(swv_device_destroy("d0"), "");
	TEST_ASSERT_EQUAL(swv_device_destroy("d0"), ENOENT, "");
	return TEST_SUCCESS;
}

static int
test_mac(void)
{
	const uint8_t want[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };
	uint8_t mac[6], mac2[6];
	struct ibv_context *ctx;

	TEST_ASSERT_SUCCESS(swv_device_create("m0", "loop", want), "");
	ctx = t_open("m0");
	TEST_ASSERT_NOT_NULL(ctx, "");
	TEST_ASSERT_SUCCESS(swv_query_port_mac(ctx, mac), "");
	TEST_ASSERT(memcmp(mac, want, 6) == 0, "given MAC");
	swv_close_device(ctx);
	swv_device_destroy("m0");
	/* Derived from the name: locally administered, stable. */
	TEST_ASSERT_SUCCESS(swv_device_create("m1", "loop", NULL), "");
	ctx = t_open("m1");
	TEST_ASSERT_SUCCESS(swv_query_port_mac(ctx, mac), "");
	swv_close_device(ctx);
	swv_device_destroy("m1");
	TEST_ASSERT_EQUAL(mac[0], 0x02, "locally administered unicast");
	TEST_ASSERT_SUCCESS(swv_device_create("m1", "loop", NULL), "");
	ctx = t_open("m1");
	TEST_ASSERT_SUCCESS(swv_query_port_mac(ctx, mac2), "");
	swv_close_device(ctx);
	swv_device_destroy("m1");
	TEST_ASSERT(memcmp(mac, mac2, 6) == 0, "same name, same MAC");
	return TEST_SUCCESS;
}

static int
test_pair_ends(void)
{
	TEST_ASSERT_SUCCESS(swv_device_create("pa", "pair:c1", NULL), "");
	TEST_ASSERT_SUCCESS(swv_device_create("pb", "pair:c1", NULL), "");
	TEST_ASSERT_EQUAL(swv_device_create("pc", "pair:c1", NULL), EBUSY,
			  "third end");
	TEST_ASSERT_SUCCESS(swv_device_destroy("pb"), "");
	TEST_ASSERT_SUCCESS(swv_device_create("pc", "pair:c1", NULL),
			    "a freed end can be taken again");
	TEST_ASSERT_SUCCESS(swv_device_destroy("pa"), "");
	TEST_ASSERT_SUCCESS(swv_device_destroy("pc"), "");
	return TEST_SUCCESS;
}

static int
test_query(void)
{
	struct ibv_query_device_ex_input in = { .comp_mask = 1 };
	struct ibv_device_attr_ex a;
	struct ibv_port_attr p;
	struct ibv_context *ctx;

	TEST_ASSERT_SUCCESS(swv_device_create("q0", "loop", NULL), "");
	ctx = t_open("q0");
	TEST_ASSERT_NOT_NULL(ctx, "");
	TEST_ASSERT_EQUAL(swv_query_device_ex(ctx, &in, &a), EINVAL, "");
	in.comp_mask = 0;
	TEST_ASSERT_SUCCESS(swv_query_device_ex(ctx, &in, &a), "");
	TEST_ASSERT(a.device_cap_flags_ex & IBV_DEVICE_MANAGED_FLOW_STEERING,
		    "");
	TEST_ASSERT_EQUAL(a.orig_attr.max_qp_wr, 32768, "");
	/* the mlx5 profile's: a 512-byte WQE less an RC header */
	TEST_ASSERT_EQUAL(a.orig_attr.max_sge, 30, "");
	TEST_ASSERT_EQUAL(a.orig_attr.phys_port_cnt, 1, "");
	TEST_ASSERT_EQUAL(a.rss_caps.rx_hash_function,
			  IBV_RX_HASH_FUNC_TOEPLITZ, "");
	TEST_ASSERT_EQUAL(a.rss_caps.max_rwq_indirection_table_size, 512, "");
	TEST_ASSERT(a.rss_caps.supported_qpts & (1u << IBV_QPT_RAW_PACKET), "");
	TEST_ASSERT_EQUAL(a.hca_core_clock, 1000000, "");
	/* A ConnectX's offloads (test_swverbs_offloads.c), no FCS scatter. */
	TEST_ASSERT_EQUAL(a.raw_packet_caps,
			  IBV_RAW_PACKET_CAP_CVLAN_STRIPPING |
			  IBV_RAW_PACKET_CAP_IP_CSUM, "offloads claimed");
	TEST_ASSERT_EQUAL(swv_query_port(ctx, 2, &p), EINVAL, "");
	TEST_ASSERT_SUCCESS(swv_query_port(ctx, 1, &p), "");
	TEST_ASSERT_EQUAL(p.state, IBV_PORT_ACTIVE, "loop is always up");
	TEST_ASSERT_EQUAL(p.link_layer, IBV_LINK_LAYER_ETHERNET, "");
	/* From the port MTU (1500) as mlx5 does: 1500 - 96 -> 1024. */
	TEST_ASSERT_EQUAL(p.max_mtu, IBV_MTU_4096, "");
	TEST_ASSERT_EQUAL(p.active_mtu, IBV_MTU_1024, "");
	TEST_ASSERT_EQUAL(p.active_width, 2, "4X");
	TEST_ASSERT_EQUAL(p.active_speed, 32, "EDR: 4 x 25G = 100G");
	TEST_ASSERT_SUCCESS(swv_close_device(ctx), "");
	TEST_ASSERT_SUCCESS(swv_device_destroy("q0"), "");
	return TEST_SUCCESS;
}

static int
test_pd_mr_cq(void)
{
	struct ibv_cq_init_attr_ex cqa;
	struct ibv_context *ctx;
	struct ibv_mr *mr, *mr2;
	struct ibv_cq_ex *cqx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	static uint8_t buf[4096];

	TEST_ASSERT_SUCCESS(swv_device_create("o0", "loop", NULL), "");
	ctx = t_open("o0");
	pd = swv_alloc_pd(ctx);
	TEST_ASSERT_NOT_NULL(pd, "");
	errno = 0;
	TEST_ASSERT_NULL(swv_reg_mr(pd, buf, 0, 0), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "length 0");
	TEST_ASSERT_NULL(swv_reg_mr(pd, buf, 64, 1 << 30), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "unknown access");
	mr = swv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	mr2 = swv_reg_mr(pd, buf, 64, 0);
	TEST_ASSERT_NOT_NULL(mr, "");
	TEST_ASSERT_NOT_NULL(mr2, "");
	TEST_ASSERT(mr->lkey != 0 && mr2->lkey != 0 && mr->lkey != mr2->lkey,
		    "unique non-zero lkeys");
	TEST_ASSERT_EQUAL(swv_dealloc_pd(pd), EBUSY, "MRs on it");
	TEST_ASSERT_EQUAL(swv_close_device(ctx), EBUSY, "objects on it");
	TEST_ASSERT_SUCCESS(swv_dereg_mr(mr), "");
	TEST_ASSERT_SUCCESS(swv_dereg_mr(mr2), "");
	TEST_ASSERT_SUCCESS(swv_dealloc_pd(pd), "");

	TEST_ASSERT_NULL(swv_create_cq(ctx, 0, NULL, NULL, 0), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "");
	TEST_ASSERT_NULL(swv_create_cq(ctx, 1 << 30, NULL, NULL, 0), "");
	cq = swv_create_cq(ctx, 100, NULL, NULL, 0);
	TEST_ASSERT_NOT_NULL(cq, "");
	TEST_ASSERT(cq->cqe >= 100, "");
	TEST_ASSERT_SUCCESS(swv_destroy_cq(cq), "");
	memset(&cqa, 0, sizeof(cqa));
	cqa.cqe = 64;
	cqa.wc_flags = IBV_WC_EX_WITH_TM_INFO;
	TEST_ASSERT_NULL(swv_create_cq_ex(ctx, &cqa), "");
	TEST_ASSERT_EQUAL(errno, EOPNOTSUPP, "");
	cqa.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	TEST_ASSERT_NULL(swv_create_cq_ex(ctx, &cqa), "");
	TEST_ASSERT_EQUAL(errno, EOPNOTSUPP, "");
	/* rdma-core's test_cqex asks for these: mlx5 takes them. */
	cqa.wc_flags = IBV_WC_STANDARD_FLAGS;
	cqx = swv_create_cq_ex(ctx, &cqa);
	TEST_ASSERT_NOT_NULL(cqx, "%s", strerror(errno));
	TEST_ASSERT_SUCCESS(swv_destroy_cq(ibv_cq_ex_to_cq(cqx)), "");
	cqa.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM |
		       IBV_WC_EX_WITH_FLOW_TAG |
		       IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	cqx = swv_create_cq_ex(ctx, &cqa);
	TEST_ASSERT_NOT_NULL(cqx, "");
	TEST_ASSERT_EQUAL(ibv_start_poll(cqx, &(struct ibv_poll_cq_attr){ 0 }),
			  ENOENT, "empty");
	TEST_ASSERT_SUCCESS(swv_destroy_cq(ibv_cq_ex_to_cq(cqx)), "");
	TEST_ASSERT_SUCCESS(swv_close_device(ctx), "");
	TEST_ASSERT_SUCCESS(swv_device_destroy("o0"), "");
	return TEST_SUCCESS;
}

static int
test_qp_states(void)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	struct ibv_qp *qp;
	struct tdev d;
	int ret;

	ret = t_setup(&d, "s0", "loop");
	TEST_ASSERT_SUCCESS(ret, "setup");
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = d.scq;
	ia.recv_cq = d.rcq;
	ia.qp_type = IBV_QPT_UD;
	ia.cap.max_send_wr = 16;
	ia.cap.max_send_sge = 1;
	TEST_ASSERT_NULL(swv_create_qp(d.pd, &ia), "");
	TEST_ASSERT_EQUAL(errno, EOPNOTSUPP, "UD QP");
	ia.qp_type = IBV_QPT_RAW_PACKET;
	ia.cap.max_send_wr = 40000;
	TEST_ASSERT_NULL(swv_create_qp(d.pd, &ia), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "too many WRs");
	ia.cap.max_send_wr = 16;
	ia.cap.max_send_sge = 33;
	TEST_ASSERT_NULL(swv_create_qp(d.pd, &ia), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "too many SGEs");
	ia.cap.max_send_sge = 1;
	qp = swv_create_qp(d.pd, &ia);
	TEST_ASSERT_NOT_NULL(qp, "");
	TEST_ASSERT_EQUAL(qp->state, IBV_QPS_RESET, "");
	TEST_ASSERT(ia.cap.max_send_wr >= 16, "cap written back");
	TEST_ASSERT_EQUAL(swv_destroy_cq(d.scq), EBUSY, "QPs use the CQ");

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	TEST_ASSERT_EQUAL(swv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL,
			  "RESET -> RTR");
	a.qp_state = IBV_QPS_INIT;
	TEST_ASSERT_EQUAL(swv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL,
			  "INIT needs the port");
	a.port_num = 2;
	TEST_ASSERT_EQUAL(swv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT),
			  EINVAL, "port 2");
	a.port_num = 1;
	TEST_ASSERT_EQUAL(swv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT |
					IBV_QP_PKEY_INDEX), EINVAL,
			  "mask bit the transition does not allow");
	TEST_ASSERT_SUCCESS(swv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT),
			    "");
	TEST_ASSERT_EQUAL(qp->state, IBV_QPS_INIT, "");
	a.qp_state = IBV_QPS_RTS;
	TEST_ASSERT_EQUAL(swv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL,
			  "INIT -> RTS");
	a.qp_state = IBV_QPS_RTR;
	TEST_ASSERT_EQUAL(swv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT),
			  EINVAL, "INIT -> RTR with a port");
	TEST_ASSERT_SUCCESS(swv_modify_qp(qp, &a, IBV_QP_STATE), "");
	a.qp_state = IBV_QPS_RTS;
	TEST_ASSERT_SUCCESS(swv_modify_qp(qp, &a, IBV_QP_STATE), "");
	TEST_ASSERT_EQUAL(qp->state, IBV_QPS_RTS, "");
	a.qp_state = IBV_QPS_INIT;
	TEST_ASSERT_EQUAL(swv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT),
			  EINVAL, "RTS -> INIT");
	a.qp_state = IBV_QPS_ERR;
	TEST_ASSERT_SUCCESS(swv_modify_qp(qp, &a, IBV_QP_STATE), "-> ERR");
	a.qp_state = IBV_QPS_RESET;
	TEST_ASSERT_SUCCESS(swv_modify_qp(qp, &a, IBV_QP_STATE), "-> RESET");
	TEST_ASSERT_EQUAL(swv_modify_qp(qp, &a, 0), EINVAL, "no state");
	TEST_ASSERT_SUCCESS(swv_destroy_qp(qp), "");
	t_teardown(&d);
	return TEST_SUCCESS;
}

static int
test_post_errors(void)
{
	struct ibv_send_wr wr[8], *bad;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_sge sge[2];
	struct ibv_mr *mr;
	struct ibv_qp *qp, *txonly;
	struct ibv_cq *cq1;
	struct tdev d;
	static uint8_t buf[256];
	int i;

	TEST_ASSERT_SUCCESS(t_setup(&d, "e0", "loop"), "setup");
	mr = swv_reg_mr(d.pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	cq1 = swv_create_cq(d.ctx, 1, NULL, NULL, 0);
	TEST_ASSERT_NOT_NULL(cq1, "");
	TEST_ASSERT_EQUAL(cq1->cqe, 1, "");
	{
		struct ibv_qp_init_attr ia = {
			.send_cq = cq1, .qp_type = IBV_QPT_RAW_PACKET,
			.sq_sig_all = 1,
			.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		};

		qp = swv_create_qp(d.pd, &ia);
	}
	TEST_ASSERT_NOT_NULL(qp, "");
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 8; i++) {
		sge[0] = (struct ibv_sge){ (uintptr_t)buf, 60, mr->lkey };
		wr[i].wr_id = i;
		wr[i].sg_list = sge;
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_SEND;
		wr[i].next = i < 7 ? &wr[i + 1] : NULL;
	}
	bad = NULL;
	TEST_ASSERT_EQUAL(ibv_post_send(qp, wr, &bad), EINVAL, "RESET");
	TEST_ASSERT(bad == &wr[0], "bad_wr");
	TEST_ASSERT_SUCCESS(t_qp_to(qp, IBV_QPS_RTS), "");
	/* Nobody listens on this loop: frames are dropped, no match. */
	wr[0].num_sge = 2;
	TEST_ASSERT_EQUAL(ibv_post_send(qp, wr, &bad), EINVAL, "num_sge");
	TEST_ASSERT(bad == &wr[0], "bad_wr");
	wr[0].num_sge = 1;
	wr[0].opcode = IBV_WR_RDMA_WRITE;
	TEST_ASSERT_EQUAL(ibv_post_send(qp, wr, &bad), EINVAL, "opcode");
	wr[0].opcode = IBV_WR_SEND;
	/* The 4-slot ring takes 4, the engine at most 1 more (the QP's
	 * 1-entry CQ then has no room for the next CQE): 8 cannot all fit.
	 */
	bad = NULL;
	TEST_ASSERT_EQUAL(ibv_post_send(qp, wr, &bad), ENOMEM, "full ring");
	TEST_ASSERT_NOT_NULL(bad, "");
	TEST_ASSERT(bad - wr >= 4 && bad - wr <= 5, "%d posted",
		    (int)(bad - wr));
	/* Receive on a send-only QP. */
	txonly = qp;
	memset(&rwr, 0, sizeof(rwr));
	rwr.sg_list = sge;
	rwr.num_sge = 1;
	TEST_ASSERT_EQUAL(ibv_post_recv(txonly, &rwr, &rbad), EINVAL, "no RQ");
	/* Receive ring full: 256 slots in the helper's receiver. */
	for (i = 0; i < 256; i++)
		TEST_ASSERT_SUCCESS(ibv_post_recv(d.rqp, &rwr, &rbad), "%d", i);
	rbad = NULL;
	TEST_ASSERT_EQUAL(ibv_post_recv(d.rqp, &rwr, &rbad), ENOMEM, "");
	TEST_ASSERT(rbad == &rwr, "");
	/* RESET discards, then the ring takes WQEs again. */
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

		TEST_ASSERT_SUCCESS(swv_modify_qp(d.rqp, &a, IBV_QP_STATE), "");
		TEST_ASSERT_EQUAL(ibv_post_recv(d.rqp, &rwr, &rbad), EINVAL,
				  "post_recv in RESET");
		TEST_ASSERT_SUCCESS(t_qp_to(d.rqp, IBV_QPS_INIT), "");
		TEST_ASSERT_SUCCESS(ibv_post_recv(d.rqp, &rwr, &rbad), "");
	}
	{
		struct ibv_wc wc[8];
		int n = 0;

		/*
		 * Read completions one by one until all posted sends are in
		 * (however long the engine thread pauses between two), then
		 * none more.
		 */
		while (n < bad - wr && t_poll(cq1, wc, 1, T_WAIT_MS) == 1) {
			TEST_ASSERT_EQUAL(wc[0].status, IBV_WC_SUCCESS, "");
			TEST_ASSERT_EQUAL(wc[0].wr_id, n, "in order");
			n++;
		}
		TEST_ASSERT_EQUAL(n, bad - wr, "one CQE per posted WQE");
		TEST_ASSERT_EQUAL(t_poll(cq1, wc, 1, 200), 0,
				  "a CQE more than posted WQEs");
	}
	TEST_ASSERT_SUCCESS(swv_destroy_qp(qp), "");
	TEST_ASSERT_SUCCESS(swv_destroy_cq(cq1), "");
	TEST_ASSERT_SUCCESS(swv_dereg_mr(mr), "");
	t_teardown(&d);
	return TEST_SUCCESS;
}

static int
test_wq_ind_hash_flow_busy(void)
{
	struct ibv_rwq_ind_table_init_attr ta;
	struct ibv_rwq_ind_table *tbl;
	struct ibv_qp_init_attr_ex qa;
	struct ibv_wq_init_attr wa;
	struct ibv_wq_attr wm;
	struct ibv_wq *wq[2];
	struct ibv_flow *fl;
	struct ibv_qp *hqp;
	struct tdev d;
	uint8_t key[40] = { 1 };
	const uint8_t mac[6] = { 2, 0, 0, 0, 0, 1 };

	TEST_ASSERT_SUCCESS(t_setup_full(&d, "w0", "loop"), "setup");
	memset(&wa, 0, sizeof(wa));
	wa.wq_type = IBV_WQT_RQ;
	wa.max_wr = 64;
	wa.max_sge = 1;
	wa.pd = d.pd;
	wa.cq = d.rcq;
	wq[0] = swv_create_wq(d.ctx, &wa);
	wq[1] = swv_create_wq(d.ctx, &wa);
	TEST_ASSERT_NOT_NULL(wq[0], "");
	TEST_ASSERT_NOT_NULL(wq[1], "");
	TEST_ASSERT_EQUAL(wq[0]->state, IBV_WQS_RESET, "");
	TEST_ASSERT(wq[0]->wq_num != wq[1]->wq_num, "");
	wa.wq_type = IBV_WQT_RQ + 1;
	TEST_ASSERT_NULL(swv_create_wq(d.ctx, &wa), "");
	memset(&wm, 0, sizeof(wm));
	wm.attr_mask = IBV_WQ_ATTR_STATE;
	wm.wq_state = IBV_WQS_RDY;
	TEST_ASSERT_SUCCESS(swv_modify_wq(wq[0], &wm), "");
	wm.wq_state = IBV_WQS_ERR;
	TEST_ASSERT_SUCCESS(swv_modify_wq(wq[0], &wm), "");
	wm.wq_state = IBV_WQS_RDY;
	TEST_ASSERT_EQUAL(swv_modify_wq(wq[0], &wm), EINVAL, "ERR -> RDY");
	wm.wq_state = IBV_WQS_RESET;
	TEST_ASSERT_SUCCESS(swv_modify_wq(wq[0], &wm), "");

	memset(&ta, 0, sizeof(ta));
	ta.log_ind_tbl_size = 10;
	ta.ind_tbl = wq;
	TEST_ASSERT_NULL(swv_create_rwq_ind_table(d.ctx, &ta), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "over the limit");
	ta.log_ind_tbl_size = 1;
	tbl = swv_create_rwq_ind_table(d.ctx, &ta);
	TEST_ASSERT_NOT_NULL(tbl, "");
	TEST_ASSERT_EQUAL(swv_destroy_wq(wq[0]), EBUSY, "in a table");

	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RAW_PACKET;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
		       IBV_QP_INIT_ATTR_RX_HASH;
	qa.pd = d.pd;
	qa.rwq_ind_tbl = tbl;
	qa.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	qa.rx_hash_conf.rx_hash_key_len = 40;
	qa.rx_hash_conf.rx_hash_key = key;
	qa.rx_hash_conf.rx_hash_fields_mask = IBV_RX_HASH_IPSEC_SPI;
	TEST_ASSERT_NULL(swv_create_qp_ex(d.ctx, &qa), "");
	TEST_ASSERT_EQUAL(errno, EOPNOTSUPP, "SPI hashing");
	qa.rx_hash_conf.rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4;
	qa.rx_hash_conf.rx_hash_key_len = 16;
	TEST_ASSERT_NULL(swv_create_qp_ex(d.ctx, &qa), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "key length");
	qa.rx_hash_conf.rx_hash_key_len = 40;
	hqp = swv_create_qp_ex(d.ctx, &qa);
	TEST_ASSERT_NOT_NULL(hqp, "");
	TEST_ASSERT_EQUAL(swv_destroy_rwq_ind_table(tbl), EBUSY, "hash QP");
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
					 .port_num = 1 };

		TEST_ASSERT_EQUAL(swv_modify_qp(hqp, &a, IBV_QP_STATE |
						IBV_QP_PORT), EINVAL,
				  "hash QPs have no state machine");
	}
	fl = t_flow_eth(hqp, mac, 0);
	TEST_ASSERT_NOT_NULL(fl, "");
	TEST_ASSERT_EQUAL(swv_destroy_qp(hqp), EBUSY, "flow attached");
	/* A send-only QP is no steering target. */
	{
		struct ibv_qp *tx = t_raw_qp(&d, 4, 0, 1, 0);

		TEST_ASSERT_NULL(t_flow_eth(tx, mac, 0), "");
		TEST_ASSERT_EQUAL(errno, EINVAL, "");
		swv_destroy_qp(tx);
	}
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fl), "");
	TEST_ASSERT_SUCCESS(swv_destroy_qp(hqp), "");
	TEST_ASSERT_SUCCESS(swv_destroy_rwq_ind_table(tbl), "");
	TEST_ASSERT_SUCCESS(swv_destroy_wq(wq[0]), "");
	TEST_ASSERT_SUCCESS(swv_destroy_wq(wq[1]), "");
	t_teardown(&d);
	return TEST_SUCCESS;
}

/*
 * A QP moved to RESET leaves none of its completions in its CQs, as
 * mlx5's provider cleans them (its sends in the send CQ, its receives in
 * the receive CQ); another QP's CQEs among them stay, in order. After
 * INIT, RTR, RTS the QP sends and receives again.
 */
static int
test_qp_reset_cleans_cqs(void)
{
	static uint8_t buf[8][256];
	struct ibv_cq_ex *scx, *rcx;
	struct ibv_qp *s2;
	struct ibv_flow *fl;
	struct ibv_mr *mr;
	struct ibv_wc wc[8];
	struct tdev d;
	unsigned int i;

	TEST_ASSERT_SUCCESS(t_setup(&d, "qpcl0", "loop"), "setup");
	scx = &to_swv_cq(d.scq)->ibv_cq;
	rcx = &to_swv_cq(d.rcq)->ibv_cq;
	s2 = t_raw_qp(&d, 16, 0, 1, 1);
	TEST_ASSERT_NOT_NULL(s2, "");
	TEST_ASSERT_SUCCESS(t_qp_to(s2, IBV_QPS_RTS), "");
	mr = swv_reg_mr(d.pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	TEST_ASSERT_NOT_NULL(mr, "");
	fl = t_flow_eth(d.rqp, d.mac, 0);
	TEST_ASSERT_NOT_NULL(fl, "");
	for (i = 0; i < 4; i++)
		TEST_ASSERT_SUCCESS(t_recv(d.rqp, mr, buf[4 + i], 256, 40 + i),
				    "");
	t_frame(buf[0], 64, d.mac, d.mac, 1);
	/* Sends of the two QPs in turn: sqp 1, s2 11, sqp 2, s2 12. */
	for (i = 0; i < 4; i++) {
		TEST_ASSERT_SUCCESS(t_send(i & 1 ? s2 : d.sqp, mr, buf[0], 64,
					   (i & 1 ? 11 : 1) + i / 2), "");
		TEST_ASSERT_SUCCESS(t_cq_wait_pending(scx, i + 1), "");
	}
	/* The four frames, received by rqp, left in the receive CQ. */
	TEST_ASSERT_SUCCESS(t_cq_wait_pending(rcx, 4), "");

	/* sqp to RESET: its two sends go, s2's stay in order. */
	TEST_ASSERT_SUCCESS(t_qp_modify(d.sqp, IBV_QPS_RESET, IBV_QP_STATE,
					0), "");
	TEST_ASSERT_SUCCESS(t_cq_wait_pending(scx, 2), "RESET cleans sends");
	TEST_ASSERT_SUCCESS(t_cq_wait_pending(rcx, 4), "not rqp's receives");
	TEST_ASSERT_EQUAL(swv_poll_cq(d.scq, 8, wc), 2, "");
	for (i = 0; i < 2; i++) {
		TEST_ASSERT_EQUAL(wc[i].wr_id, 11u + i, "order");
		TEST_ASSERT_EQUAL(wc[i].qp_num, s2->qp_num, "");
		TEST_ASSERT_EQUAL(wc[i].status, IBV_WC_SUCCESS, "");
	}
	/* rqp to RESET: its receives go. */
	TEST_ASSERT_SUCCESS(t_qp_modify(d.rqp, IBV_QPS_RESET, IBV_QP_STATE,
					0), "");
	TEST_ASSERT_SUCCESS(t_cq_wait_pending(rcx, 0), "RESET cleans recvs");

	/* Both back: a frame from sqp to rqp, completed on both sides. */
	TEST_ASSERT_SUCCESS(t_qp_to(d.sqp, IBV_QPS_RTS), "");
	TEST_ASSERT_SUCCESS(t_qp_to(d.rqp, IBV_QPS_RTR), "");
	TEST_ASSERT_SUCCESS(t_recv(d.rqp, mr, buf[4], 256, 50), "");
	TEST_ASSERT_SUCCESS(t_send(d.sqp, mr, buf[0], 64, 5), "");
	TEST_ASSERT_EQUAL(t_poll(d.scq, wc, 1, 2000), 1, "");
	TEST_ASSERT_EQUAL(wc[0].wr_id, 5u, "");
	TEST_ASSERT_EQUAL(t_poll(d.rcq, wc, 1, 2000), 1, "");
	TEST_ASSERT_EQUAL(wc[0].wr_id, 50u, "");
	TEST_ASSERT_EQUAL(wc[0].byte_len, 64u, "");
	TEST_ASSERT_EQUAL(wc[0].qp_num, d.rqp->qp_num, "");

	/* A QP destroyed leaves none of its CQEs either: s2's two sends. */
	for (i = 0; i < 2; i++)
		TEST_ASSERT_SUCCESS(t_send(s2, mr, buf[0], 64, 20 + i), "");
	TEST_ASSERT_SUCCESS(t_cq_wait_pending(scx, 2), "");
	TEST_ASSERT_SUCCESS(swv_destroy_qp(s2), "");
	TEST_ASSERT_SUCCESS(t_cq_wait_pending(scx, 0), "destroy cleans");

	TEST_ASSERT_SUCCESS(swv_destroy_flow(fl), "");
	TEST_ASSERT_SUCCESS(swv_dereg_mr(mr), "");
	t_teardown(&d);
	return TEST_SUCCESS;
}

/*
 * swv_qp_sq_held(): once it reads 0, every send's completion is in the CQ,
 * pollable at once (a RESET would clean them: vbr's Tx recovery reads them
 * first). The poster spins on the count, so it looks right after the
 * engine gave the slots back; rounds of 8 sends, the completions counted
 * without waiting.
 */
#define SH_ROUNDS 2000
#define SH_SENDS 8
static int
test_sq_held_then_cqes(void)
{
	static uint8_t buf[256];
	const volatile uint32_t *head;
	struct ibv_wc wc[SH_SENDS];
	uint32_t held, pending, tail;
	struct ibv_cq_ex *scx;
	struct ibv_mr *mr;
	struct tdev d;
	unsigned int r, i;
	uint64_t end;

	TEST_ASSERT_SUCCESS(t_setup(&d, "sqheld0", "loop"), "setup");
	scx = &to_swv_cq(d.scq)->ibv_cq;
	mr = swv_reg_mr(d.pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	TEST_ASSERT_NOT_NULL(mr, "");
	t_frame(buf, 64, d.mac, d.mac, 1);
	TEST_ASSERT_EQUAL(swv_qp_sq_held(NULL, &held), EINVAL, "no QP");
	for (r = 0; r < SH_ROUNDS; r++) {
		for (i = 0; i < SH_SENDS; i++)
			TEST_ASSERT_SUCCESS(t_send(d.sqp, mr, buf, 64,
						   r * SH_SENDS + i), "");
		end = t_now_ms() + T_WAIT_MS;
		do {
			TEST_ASSERT_SUCCESS(swv_qp_sq_held(d.sqp, &held), "");
		} while (held != 0 && t_now_ms() < end);
		TEST_ASSERT_EQUAL(held, 0, "round %u: sends held", r);
		TEST_ASSERT_SUCCESS(swv_cq_peek(scx, &pending, &head, &tail),
				    "");
		TEST_ASSERT_EQUAL(pending, SH_SENDS,
				  "round %u: none held, CQEs in the CQ", r);
		TEST_ASSERT_EQUAL(swv_poll_cq(d.scq, SH_SENDS, wc), SH_SENDS,
				  "");
		for (i = 0; i < SH_SENDS; i++)
			TEST_ASSERT_EQUAL(wc[i].status, IBV_WC_SUCCESS, "");
	}
	TEST_ASSERT_SUCCESS(swv_dereg_mr(mr), "");
	t_teardown(&d);
	return TEST_SUCCESS;
}

/* A hash QP over a table of @wq (2 entries), hashing IPv4 sources. */
static struct ibv_qp *
hash_qp(struct tdev *d, struct ibv_rwq_ind_table *tbl)
{
	static uint8_t key[40] = { 1 };
	struct ibv_qp_init_attr_ex qa;

	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RAW_PACKET;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
		       IBV_QP_INIT_ATTR_RX_HASH;
	qa.pd = d->pd;
	qa.rwq_ind_tbl = tbl;
	qa.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	qa.rx_hash_conf.rx_hash_key_len = 40;
	qa.rx_hash_conf.rx_hash_key = key;
	qa.rx_hash_conf.rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4;
	return swv_create_qp_ex(d->ctx, &qa);
}

/*
 * QP and WQ numbers come from one space: unique among the device's live
 * QPs and WQs together (a completion's qp_num names one queue, and a CQ
 * clean by number drops no other queue's), also after the 24-bit space has
 * been handed out once, and never below SWV_NUM_FIRST: the counter is
 * moved to the end of the space (as 2^24 creates would).
 */
#define NQ 8
#define NW 4
#define NH 5

/* Whether num is one of n[0, cnt). */
static bool
num_in(uint32_t num, const uint32_t *n, unsigned int cnt)
{
	unsigned int i;

	for (i = 0; i < cnt; i++)
		if (n[i] == num)
			return true;
	return false;
}

static int
test_object_numbers(void)
{
	struct ibv_rwq_ind_table_init_attr ta;
	struct ibv_rwq_ind_table *tbl;
	struct ibv_wq_init_attr wa;
	struct ibv_qp *q[NQ], *hqp, *hqp2;
	struct ibv_wq *wq[2], *w[NW];
	struct swv_device *dev;
	struct tdev d;
	uint32_t held[NH], live[NH + NQ + NW];
	unsigned int i, nlive;

	TEST_ASSERT_SUCCESS(t_setup_full(&d, "num0", "loop"), "setup");
	dev = swv_ctx_dev(d.ctx);
	memset(&wa, 0, sizeof(wa));
	wa.wq_type = IBV_WQT_RQ;
	wa.max_wr = 16;
	wa.max_sge = 1;
	wa.pd = d.pd;
	wa.cq = d.rcq;
	wq[0] = swv_create_wq(d.ctx, &wa);
	wq[1] = swv_create_wq(d.ctx, &wa);
	TEST_ASSERT(wq[0] != NULL && wq[1] != NULL, "");
	memset(&ta, 0, sizeof(ta));
	ta.log_ind_tbl_size = 1;
	ta.ind_tbl = wq;
	tbl = swv_create_rwq_ind_table(d.ctx, &ta);
	TEST_ASSERT_NOT_NULL(tbl, "");
	hqp = hash_qp(&d, tbl);
	TEST_ASSERT_NOT_NULL(hqp, "");
	/* Held by live objects from before the wrap, in creation order: */
	held[0] = d.sqp->qp_num;
	held[1] = d.rqp->qp_num;
	held[2] = wq[0]->wq_num;
	held[3] = wq[1]->wq_num;
	held[4] = hqp->qp_num;
	for (i = 0; i < NH; i++)
		TEST_ASSERT_EQUAL(held[i], SWV_NUM_FIRST + i,
				  "object %u: %#x, numbers from 0x100 up, QPs "
				  "and WQs in one space", i, held[i]);

	pthread_mutex_lock(&swv_lock);
	dev->next_num = SWV_NUM_LAST - 1;
	pthread_mutex_unlock(&swv_lock);
	for (i = 0; i < NQ; i++) {
		q[i] = i == 3 ? hash_qp(&d, tbl) : t_raw_qp(&d, 4, 4, 1, 0);
		TEST_ASSERT_NOT_NULL(q[i], "QP %u", i);
	}
	TEST_ASSERT_EQUAL(q[0]->qp_num, SWV_NUM_LAST - 1, "");
	TEST_ASSERT_EQUAL(q[1]->qp_num, SWV_NUM_LAST, "");
	/* Wrapped: the five held numbers, QPs' and WQs', are skipped. */
	TEST_ASSERT_EQUAL(q[2]->qp_num, SWV_NUM_FIRST + NH, "got %#x",
			  q[2]->qp_num);
	memcpy(live, held, sizeof(held));
	nlive = NH;
	for (i = 0; i < NQ; i++) {
		TEST_ASSERT(!num_in(q[i]->qp_num, live, nlive),
			    "QP %u reuses live number %#x", i, q[i]->qp_num);
		TEST_ASSERT(q[i]->qp_num >= SWV_NUM_FIRST &&
			    q[i]->qp_num <= SWV_NUM_LAST, "");
		live[nlive++] = q[i]->qp_num;
	}
	/* A number freed after the wrap is handed out again. */
	TEST_ASSERT_SUCCESS(swv_destroy_qp(hqp), "");
	pthread_mutex_lock(&swv_lock);
	dev->next_num = SWV_NUM_FIRST;
	pthread_mutex_unlock(&swv_lock);
	hqp2 = hash_qp(&d, tbl);
	TEST_ASSERT_NOT_NULL(hqp2, "");
	TEST_ASSERT_EQUAL(hqp2->qp_num, held[4], "freed number reused");

	/* WQs after the wrap skip the live QPs' numbers too. */
	pthread_mutex_lock(&swv_lock);
	dev->next_num = SWV_NUM_LAST - 1;	/* q[0]'s, then q[1]'s */
	pthread_mutex_unlock(&swv_lock);
	for (i = 0; i < NW; i++) {
		w[i] = swv_create_wq(d.ctx, &wa);
		TEST_ASSERT_NOT_NULL(w[i], "WQ %u", i);
		TEST_ASSERT(!num_in(w[i]->wq_num, live, nlive),
			    "WQ %u takes live number %#x", i, w[i]->wq_num);
		TEST_ASSERT(w[i]->wq_num >= SWV_NUM_FIRST &&
			    w[i]->wq_num <= SWV_NUM_LAST, "");
		live[nlive++] = w[i]->wq_num;
	}
	/* Past the held ones and q[2, NQ) (q[0], q[1] took the top two). */
	TEST_ASSERT_EQUAL(w[0]->wq_num, SWV_NUM_FIRST + NH + NQ - 2, "got %#x",
			  w[0]->wq_num);

	for (i = 0; i < NW; i++)
		TEST_ASSERT_SUCCESS(swv_destroy_wq(w[i]), "");
	for (i = 0; i < NQ; i++)
		TEST_ASSERT_SUCCESS(swv_destroy_qp(q[i]), "");
	TEST_ASSERT_SUCCESS(swv_destroy_qp(hqp2), "");
	TEST_ASSERT_SUCCESS(swv_destroy_rwq_ind_table(tbl), "");
	TEST_ASSERT_SUCCESS(swv_destroy_wq(wq[0]), "");
	TEST_ASSERT_SUCCESS(swv_destroy_wq(wq[1]), "");
	t_teardown(&d);
	return TEST_SUCCESS;
}

static int
test_flow_attr_errors(void)
{
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
		struct ibv_flow_spec_ipv4 ip;
	} f;
	struct ibv_flow *fl;
	struct tdev d;

	TEST_ASSERT_SUCCESS(t_setup_full(&d, "f0", "loop"), "setup");
	memset(&f, 0, sizeof(f));
	f.attr.type = IBV_FLOW_ATTR_NORMAL;
	f.attr.size = sizeof(f.attr) + sizeof(f.eth);
	f.attr.num_of_specs = 1;
	f.attr.port = 1;
	f.eth.type = IBV_FLOW_SPEC_ETH;
	f.eth.size = sizeof(f.eth);
	fl = swv_create_flow(d.rqp, &f.attr);
	TEST_ASSERT_NOT_NULL(fl, "all-zero mask");
	f.attr.port = 2;
	TEST_ASSERT_NULL(swv_create_flow(d.rqp, &f.attr), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "port 2");
	f.attr.port = 1;
	f.eth.size = sizeof(f.eth) - 2;
	TEST_ASSERT_NULL(swv_create_flow(d.rqp, &f.attr), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "spec size");
	f.eth.size = sizeof(f.eth);
	f.attr.size = sizeof(f.attr) + sizeof(f.eth) + 4;
	TEST_ASSERT_NULL(swv_create_flow(d.rqp, &f.attr), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "attr size");
	f.attr.size = sizeof(f.attr) + sizeof(f.eth);
	f.attr.num_of_specs = 2;
	TEST_ASSERT_NULL(swv_create_flow(d.rqp, &f.attr), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "num_of_specs");
	f.attr.size = sizeof(f);
	f.ip.type = IBV_FLOW_SPEC_IPV4;
	f.ip.size = sizeof(f.ip);
	{
		struct ibv_flow *fl2 = swv_create_flow(d.rqp, &f.attr);

		TEST_ASSERT_NOT_NULL(fl2, "eth + IPv4");
		TEST_ASSERT_SUCCESS(swv_destroy_flow(fl2), "");
	}
	f.ip.type = 0x99;
	TEST_ASSERT_NULL(swv_create_flow(d.rqp, &f.attr), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "unknown spec type");
	f.ip.type = IBV_FLOW_SPEC_IPV4;
	f.attr.num_of_specs = 1;
	f.attr.size = sizeof(f.attr) + sizeof(f.eth);
	f.attr.type = IBV_FLOW_ATTR_SNIFFER;
	TEST_ASSERT_NULL(swv_create_flow(d.rqp, &f.attr), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "sniffer with specs");
	f.attr.type = IBV_FLOW_ATTR_ALL_DEFAULT;
	TEST_ASSERT_NULL(swv_create_flow(d.rqp, &f.attr), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "default rule with specs");
	f.attr.type = IBV_FLOW_ATTR_NORMAL;
	f.attr.flags = IBV_FLOW_ATTR_FLAGS_EGRESS;
	TEST_ASSERT_NULL(swv_create_flow(d.rqp, &f.attr), "");
	TEST_ASSERT_EQUAL(errno, ENOTSUP, "egress");
	TEST_ASSERT_EQUAL(swv_destroy_qp(d.rqp), EBUSY, "flow on it");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fl), "");
	t_teardown(&d);
	return TEST_SUCCESS;
}

static int
test_async_pair(void)
{
	struct ibv_async_event ev;
	struct ibv_context *ca;
	struct ibv_port_attr p;
	int fl;

	TEST_ASSERT_SUCCESS(swv_device_create("aa", "pair:ev", NULL), "");
	ca = t_open("aa");
	TEST_ASSERT_NOT_NULL(ca, "");
	TEST_ASSERT_SUCCESS(swv_query_port(ca, 1, &p), "");
	TEST_ASSERT_EQUAL(p.state, IBV_PORT_DOWN, "alone on the cable");
	fl = fcntl(ca->async_fd, F_GETFL);
	fcntl(ca->async_fd, F_SETFL, fl | O_NONBLOCK);
	TEST_ASSERT_EQUAL(swv_get_async_event(ca, &ev), -1, "");
	TEST_ASSERT_EQUAL(errno, EAGAIN, "nothing yet");
	fcntl(ca->async_fd, F_SETFL, fl);
	TEST_ASSERT_SUCCESS(swv_device_create("ab", "pair:ev", NULL), "");
	/* Blocking read: the engine notices within ~10 ms. */
	TEST_ASSERT_SUCCESS(swv_get_async_event(ca, &ev), "");
	TEST_ASSERT_EQUAL(ev.event_type, IBV_EVENT_PORT_ACTIVE, "");
	TEST_ASSERT_EQUAL(ev.element.port_num, 1, "");
	swv_ack_async_event(&ev);
	TEST_ASSERT_SUCCESS(swv_query_port(ca, 1, &p), "");
	TEST_ASSERT_EQUAL(p.state, IBV_PORT_ACTIVE, "");
	TEST_ASSERT_SUCCESS(swv_device_destroy("ab"), "");
	TEST_ASSERT_SUCCESS(swv_get_async_event(ca, &ev), "");
	TEST_ASSERT_EQUAL(ev.event_type, IBV_EVENT_PORT_ERR, "");
	swv_ack_async_event(&ev);
	TEST_ASSERT_SUCCESS(swv_query_port(ca, 1, &p), "");
	TEST_ASSERT_EQUAL(p.state, IBV_PORT_DOWN, "");
	TEST_ASSERT_SUCCESS(swv_close_device(ca), "");
	TEST_ASSERT_SUCCESS(swv_device_destroy("aa"), "");
	return TEST_SUCCESS;
}

static int
test_engine_cpu(void)
{
	TEST_ASSERT_EQUAL(swv_set_engine_cpu(-2), EINVAL, "");
	TEST_ASSERT_EQUAL(swv_set_engine_cpu(1 << 20), EINVAL, "");
	TEST_ASSERT_SUCCESS(swv_set_engine_cpu(0), "");
	TEST_ASSERT_SUCCESS(swv_set_engine_cpu(-1), "");
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite = {
	.name = "swverbs objects",
	.cases = {
		TEST_CASE(test_device_registry),
		TEST_CASE(test_wire_parse),
		TEST_CASE(test_mac),
		TEST_CASE(test_pair_ends),
		TEST_CASE(test_query),
		TEST_CASE(test_pd_mr_cq),
		TEST_CASE(test_qp_states),
		TEST_CASE(test_post_errors),
		TEST_CASE(test_wq_ind_hash_flow_busy),
		TEST_CASE(test_object_numbers),
		TEST_CASE(test_qp_reset_cleans_cqs),
		TEST_CASE(test_sq_held_then_cqes),
		TEST_CASE(test_flow_attr_errors),
		TEST_CASE(test_async_pair),
		TEST_CASE(test_engine_cpu),
		TEST_CASES_END(),
	},
};

int
main(void)
{
	return unit_test_suite_runner(&suite);
}
