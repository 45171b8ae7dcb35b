/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * swverbs through the system libibverbs (suite 'provider'): a program
 * linked with -libverbs and nothing of swverbs, run by
 * devtools/swverbs-run.sh with two devices cabled to each other
 * (swverbs0=pair:<c>,swverbs1=pair:<c>), lists and opens them, queries
 * them, makes every kind of object vbr's libibverbs glue makes, and sends a
 * frame from one to the other: a RAW_PACKET QP in RTS sends, a flow rule
 * with a COUNT action steers it to the other device's QP, a completion
 * channel raises the receive CQ's event (the provider's write()
 * interposer answers ibv_create_comp_channel()), the frame's bytes and
 * the counters object are checked.
 *
 * Run by swverbs-run.sh --dlopen (SWVERBS_DLOPEN set: libibverbs loads the
 * provider itself, nothing preloaded), ibv_create_comp_channel() must fail
 * with ENOSPC, as documented (it is libibverbs' alone, a write() on the
 * /dev/full the device's node is), and the receive completion is polled.
 *
 * usage: test-provider-verbs [DEV0 DEV1] (default swverbs0 swverbs1)
 * Skips (77) when libibverbs lists neither device: the program was not
 * run under swverbs-run.sh.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "test.h"

#define T_FRAME_LEN 128
#define T_WAIT_MS 5000

static const char *dev_names[2] = { "swverbs0", "swverbs1" };
/* The provider loaded by libibverbs, not preloaded: no channels. */
static bool dlopened;

/* One device, its objects; [0] sends, [1] receives. */
struct pdev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;		/* send CQ of [0], unused on [1] */
	struct ibv_cq_ex *cqx;		/* receive CQ of [1] (channel) */
	struct ibv_comp_channel *ch;
	struct ibv_qp *qp;
	struct ibv_counters *cnt;
	struct ibv_flow *flow;
	uint8_t mac[6];
	uint8_t buf[4096];
};

static struct pdev devs[2];

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The port's MAC, from its link-local GID (the EUI-64 of the MAC). */
static int
gid_mac(struct ibv_context *ctx, uint8_t mac[6])
{
	union ibv_gid gid;
	int ret;

	ret = ibv_query_gid(ctx, 1, 0, &gid);
	if (ret != 0)
		return ret;
	mac[0] = gid.raw[8] ^ 0x02;
	mac[1] = gid.raw[9];
	mac[2] = gid.raw[10];
	mac[3] = gid.raw[13];
	mac[4] = gid.raw[14];
	mac[5] = gid.raw[15];
	return 0;
}

static int
setup(void)
{
	struct ibv_device **list;
	int n, i, k;

	list = ibv_get_device_list(&n);
	if (list == NULL) {
		printf("skip: ibv_get_device_list: %s\n", strerror(errno));
		return TEST_SKIPPED;
	}
	for (k = 0; k < 2; k++)
		for (i = 0; i < n; i++)
			if (strcmp(ibv_get_device_name(list[i]),
				   dev_names[k]) == 0)
				devs[k].ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (devs[0].ctx == NULL && devs[1].ctx == NULL) {
		printf("skip: libibverbs lists neither %s nor %s: run under "
		       "devtools/swverbs-run.sh %s=pair:x,%s=pair:x\n",
		       dev_names[0], dev_names[1], dev_names[0], dev_names[1]);
		return TEST_SKIPPED;
	}
	if (devs[0].ctx == NULL || devs[1].ctx == NULL) {
		printf("cannot open %s: %s\n",
		       dev_names[devs[0].ctx == NULL ? 0 : 1], strerror(errno));
		return TEST_FAILED;
	}
	return TEST_SUCCESS;
}

static void
teardown(void)
{
	int k;

	for (k = 0; k < 2; k++) {
		struct pdev *d = &devs[k];

		if (d->flow != NULL)
			ibv_destroy_flow(d->flow);
		if (d->cnt != NULL)
			ibv_destroy_counters(d->cnt);
		if (d->qp != NULL)
			ibv_destroy_qp(d->qp);
		if (d->cq != NULL)
			ibv_destroy_cq(d->cq);
		if (d->cqx != NULL)
			ibv_destroy_cq(ibv_cq_ex_to_cq(d->cqx));
		if (d->ch != NULL)
			ibv_destroy_comp_channel(d->ch);
		if (d->mr != NULL)
			ibv_dereg_mr(d->mr);
		if (d->pd != NULL)
			ibv_dealloc_pd(d->pd);
		if (d->ctx != NULL)
			ibv_close_device(d->ctx);
		memset(d, 0, sizeof(*d));
	}
}

/* Device and port queries, as a ConnectX port for raw Ethernet. */
static int
test_query(void)
{
	struct ibv_device_attr_ex ax;
	struct ibv_port_attr pa;
	struct ibv_device_attr a;
	uint16_t pkey;
	uint64_t end;
	int k;

	for (k = 0; k < 2; k++) {
		struct ibv_context *ctx = devs[k].ctx;

		TEST_ASSERT_SUCCESS(ibv_query_device(ctx, &a), "%s",
				    dev_names[k]);
		TEST_ASSERT_EQUAL(a.phys_port_cnt, 1, "");
		TEST_ASSERT(a.max_qp > 0 && a.max_cqe > 0 && a.max_mr > 0, "");
		TEST_ASSERT(strncmp(a.fw_ver, "swverbs", 7) == 0, "fw %s",
			    a.fw_ver);
		TEST_ASSERT_SUCCESS(ibv_query_device_ex(ctx, NULL, &ax), "");
		TEST_ASSERT(ax.raw_packet_caps &
			    IBV_RAW_PACKET_CAP_CVLAN_STRIPPING, "");
		TEST_ASSERT(ax.rss_caps.supported_qpts &
			    (1u << IBV_QPT_RAW_PACKET), "");
		TEST_ASSERT(ax.rss_caps.max_rwq_indirection_tables > 0, "");
		TEST_ASSERT(ax.packet_pacing_caps.qp_rate_limit_max > 0, "");
		TEST_ASSERT_EQUAL(ibv_get_device_guid(ctx->device),
				  ax.orig_attr.node_guid,
				  "sysfs node_guid is the device's");
		/* The pair's link comes up once both ends are open. */
		end = now_ms() + T_WAIT_MS;
		do {
			TEST_ASSERT_SUCCESS(ibv_query_port(ctx, 1, &pa), "");
			if (pa.state == IBV_PORT_ACTIVE)
				break;
			usleep(1000);
		} while (now_ms() < end);
		TEST_ASSERT_EQUAL(pa.state, IBV_PORT_ACTIVE, "%s",
				  dev_names[k]);
		TEST_ASSERT_EQUAL(pa.link_layer, IBV_LINK_LAYER_ETHERNET, "");
		TEST_ASSERT(ibv_query_port(ctx, 2, &pa) != 0, "port 2");
		TEST_ASSERT_SUCCESS(gid_mac(ctx, devs[k].mac), "query_gid");
		TEST_ASSERT_SUCCESS(ibv_query_pkey(ctx, 1, 0, &pkey), "");
		TEST_ASSERT_EQUAL(pkey, 0xffff, "");
	}
	return TEST_SUCCESS;
}

/* PD, MR (ibv_dereg_mr reads struct verbs_mr), CQ, CQ_EX, channel. */
static int
test_objects(void)
{
	struct ibv_cq_init_attr_ex cqa;
	struct ibv_mr *mr;
	int k;

	for (k = 0; k < 2; k++) {
		struct pdev *d = &devs[k];

		d->pd = ibv_alloc_pd(d->ctx);
		TEST_ASSERT_NOT_NULL(d->pd, "%s", strerror(errno));
		mr = ibv_reg_mr(d->pd, d->buf, sizeof(d->buf),
				IBV_ACCESS_LOCAL_WRITE);
		TEST_ASSERT_NOT_NULL(mr, "%s", strerror(errno));
		TEST_ASSERT(mr->lkey != 0 && mr->addr == d->buf &&
			    mr->length == sizeof(d->buf) && mr->pd == d->pd &&
			    mr->context == d->ctx, "");
		TEST_ASSERT_SUCCESS(ibv_dereg_mr(mr), "");
		d->mr = ibv_reg_mr(d->pd, d->buf, sizeof(d->buf),
				   IBV_ACCESS_LOCAL_WRITE);
		TEST_ASSERT_NOT_NULL(d->mr, "%s", strerror(errno));
	}
	devs[0].cq = ibv_create_cq(devs[0].ctx, 64, NULL, NULL, 0);
	TEST_ASSERT_NOT_NULL(devs[0].cq, "%s", strerror(errno));
	TEST_ASSERT(devs[0].cq->cqe >= 64, "");
	TEST_ASSERT_NULL(ibv_create_cq(devs[0].ctx, 64, NULL, NULL, 1),
			 "comp_vector 1 of 1");
	errno = 0;
	devs[1].ch = ibv_create_comp_channel(devs[1].ctx);
	if (dlopened) {
		TEST_ASSERT(devs[1].ch == NULL && errno == ENOSPC,
			    "ibv_create_comp_channel() with the provider not "
			    "preloaded: ENOSPC (%s)", strerror(errno));
		printf("    no completion channel (libibverbs loaded the "
		       "provider: ENOSPC, as documented): CQ polled\n");
	} else {
		TEST_ASSERT_NOT_NULL(devs[1].ch, "ibv_create_comp_channel: %s "
				     "(the provider preloaded?)",
				     strerror(errno));
	}
	memset(&cqa, 0, sizeof(cqa));
	cqa.cqe = 64;
	cqa.cq_context = &devs[1];
	cqa.channel = devs[1].ch;
	cqa.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM;
	devs[1].cqx = ibv_create_cq_ex(devs[1].ctx, &cqa);
	TEST_ASSERT_NOT_NULL(devs[1].cqx, "%s", strerror(errno));
	if (devs[1].ch != NULL) {
		TEST_ASSERT_EQUAL(devs[1].ch->refcnt, 1, "the CQ counts once");
		TEST_ASSERT(ibv_destroy_comp_channel(devs[1].ch) != 0,
			    "a channel with a CQ on it");
	}
	return TEST_SUCCESS;
}

/* A RAW_PACKET QP through INIT, RTR (and RTS). */
static struct ibv_qp *
raw_qp(struct pdev *d, struct ibv_cq *cq, bool send)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	struct ibv_qp *qp;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RAW_PACKET;
	ia.cap.max_send_wr = send ? 16 : 1;
	ia.cap.max_recv_wr = send ? 0 : 16;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	qp = ibv_create_qp(d->pd, &ia);
	if (qp == NULL)
		return NULL;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT) != 0)
		goto err;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE) != 0)
		goto err;
	a.qp_state = IBV_QPS_RTS;
	if (send && ibv_modify_qp(qp, &a, IBV_QP_STATE) != 0)
		goto err;
	return qp;
err:
	ibv_destroy_qp(qp);
	return NULL;
}

/* A rule for frames to the receiver's MAC, counted. */
static struct ibv_flow *
rx_flow(struct pdev *d)
{
	struct ibv_flow_spec_counter_action count;
	struct ibv_flow_spec_eth eth;
	union {
		struct ibv_flow_attr attr;
		uint8_t b[256];
	} r;
	size_t off = sizeof(r.attr);

	/* The specs follow the attr, packed, as libibverbs takes them. */
	memset(&r, 0, sizeof(r));
	memset(&eth, 0, sizeof(eth));
	eth.type = IBV_FLOW_SPEC_ETH;
	eth.size = sizeof(eth);
	memcpy(eth.val.dst_mac, d->mac, 6);
	memset(eth.mask.dst_mac, 0xff, 6);
	memcpy(r.b + off, &eth, sizeof(eth));
	off += sizeof(eth);
	memset(&count, 0, sizeof(count));
	count.type = IBV_FLOW_SPEC_ACTION_COUNT;
	count.size = sizeof(count);
	count.counters = d->cnt;
	memcpy(r.b + off, &count, sizeof(count));
	off += sizeof(count);
	r.attr.type = IBV_FLOW_ATTR_NORMAL;
	/*
	 * libibverbs never reads size (it sums the specs' own): pyverbs and
	 * rdma-core's tests leave it at the attr's. vbr's glue gives it all.
	 */
	r.attr.size = sizeof(r.attr);
	r.attr.num_of_specs = 2;
	r.attr.port = 1;
	return ibv_create_flow(d->qp, &r.attr);
}

/* The frame: to [1]'s MAC from [0]'s, IPv4/UDP, a counting payload. */
static void
make_frame(uint8_t *f)
{
	unsigned int i;

	memset(f, 0, T_FRAME_LEN);
	memcpy(f, devs[1].mac, 6);
	memcpy(f + 6, devs[0].mac, 6);
	f[12] = 0x08;
	f[14] = 0x45;
	f[16] = (T_FRAME_LEN - 14) >> 8;
	f[17] = (T_FRAME_LEN - 14) & 0xff;
	f[22] = 64;
	f[23] = 17;
	for (i = 34; i < T_FRAME_LEN; i++)
		f[i] = (uint8_t)i;
}

/* A frame through libibverbs into swverbs, over the cable, and back. */
static int
test_traffic(void)
{
	struct pdev *tx = &devs[0], *rx = &devs[1];
	struct ibv_counter_attach_attr at;
	struct ibv_recv_wr rwr, *bad_rwr;
	struct ibv_send_wr swr, *bad_swr;
	struct pollfd pfd;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct ibv_cq *ecq;
	uint64_t vals[2];
	void *ectx;
	uint64_t end;
	int n;

	if (tx->cq == NULL || rx->cqx == NULL)
		TEST_SKIP("no CQs (test_objects failed)");
	tx->qp = raw_qp(tx, tx->cq, true);
	TEST_ASSERT_NOT_NULL(tx->qp, "sender QP: %s", strerror(errno));
	rx->qp = raw_qp(rx, ibv_cq_ex_to_cq(rx->cqx), false);
	TEST_ASSERT_NOT_NULL(rx->qp, "receiver QP: %s", strerror(errno));
	TEST_ASSERT_NULL(ibv_qp_to_qp_ex(rx->qp), "no ibv_qp_ex (verbs_qp)");
	/* A counters object: packets at 0, bytes at 1, bound by the rule. */
	rx->cnt = ibv_create_counters(rx->ctx,
				      &(struct ibv_counters_init_attr){ 0 });
	TEST_ASSERT_NOT_NULL(rx->cnt, "%s", strerror(errno));
	memset(&at, 0, sizeof(at));
	at.counter_desc = IBV_COUNTER_PACKETS;
	at.index = 0;
	TEST_ASSERT_SUCCESS(ibv_attach_counters_point_flow(rx->cnt, &at, NULL),
			    "");
	at.counter_desc = IBV_COUNTER_BYTES;
	at.index = 1;
	TEST_ASSERT_SUCCESS(ibv_attach_counters_point_flow(rx->cnt, &at, NULL),
			    "");
	rx->flow = rx_flow(rx);
	TEST_ASSERT_NOT_NULL(rx->flow, "ibv_create_flow: %s", strerror(errno));

	sge.addr = (uintptr_t)rx->buf;
	sge.length = 2048;
	sge.lkey = rx->mr->lkey;
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 7;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	TEST_ASSERT_SUCCESS(ibv_post_recv(rx->qp, &rwr, &bad_rwr), "");
	if (rx->ch != NULL)
		TEST_ASSERT_SUCCESS(ibv_req_notify_cq(ibv_cq_ex_to_cq(rx->cqx),
						      0), "");

	make_frame(tx->buf);
	sge.addr = (uintptr_t)tx->buf;
	sge.length = T_FRAME_LEN;
	sge.lkey = tx->mr->lkey;
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 9;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	TEST_ASSERT_SUCCESS(ibv_post_send(tx->qp, &swr, &bad_swr), "");
	end = now_ms() + T_WAIT_MS;
	while ((n = ibv_poll_cq(tx->cq, 1, &wc)) == 0 && now_ms() < end)
		usleep(100);
	TEST_ASSERT_EQUAL(n, 1, "send completion");
	TEST_ASSERT_EQUAL(wc.status, IBV_WC_SUCCESS, "%s",
			  ibv_wc_status_str(wc.status));
	TEST_ASSERT_EQUAL(wc.wr_id, 9, "");

	if (rx->ch != NULL) {
		/* The receive CQ's event, through libibverbs' channel. */
		pfd.fd = rx->ch->fd;
		pfd.events = POLLIN;
		TEST_ASSERT_EQUAL(poll(&pfd, 1, T_WAIT_MS), 1,
				  "no CQ event in %d ms", T_WAIT_MS);
		TEST_ASSERT_SUCCESS(ibv_get_cq_event(rx->ch, &ecq, &ectx),
				    "%s", strerror(errno));
		TEST_ASSERT(ecq == ibv_cq_ex_to_cq(rx->cqx), "the event's CQ");
		TEST_ASSERT(ectx == rx, "the CQ's context");
		ibv_ack_cq_events(ecq, 1);
		n = ibv_start_poll(rx->cqx, &(struct ibv_poll_cq_attr){ 0 });
	} else {
		end = now_ms() + T_WAIT_MS;
		while ((n = ibv_start_poll(rx->cqx,
					   &(struct ibv_poll_cq_attr){ 0 })) ==
		       ENOENT && now_ms() < end)
			usleep(100);
	}
	TEST_ASSERT_SUCCESS(n, "a receive completion");
	TEST_ASSERT_EQUAL(rx->cqx->status, IBV_WC_SUCCESS, "%s",
			  ibv_wc_status_str(rx->cqx->status));
	TEST_ASSERT_EQUAL(rx->cqx->wr_id, 7, "");
	TEST_ASSERT_EQUAL(ibv_wc_read_opcode(rx->cqx), IBV_WC_RECV, "");
	TEST_ASSERT_EQUAL(ibv_wc_read_byte_len(rx->cqx), T_FRAME_LEN, "");
	TEST_ASSERT_EQUAL(ibv_wc_read_qp_num(rx->cqx), rx->qp->qp_num, "");
	TEST_ASSERT_EQUAL(ibv_next_poll(rx->cqx), ENOENT, "one frame");
	ibv_end_poll(rx->cqx);
	TEST_ASSERT(memcmp(rx->buf, tx->buf, T_FRAME_LEN) == 0,
		    "the bytes received are those sent");

	/* The engine publishes its counts within a few passes. */
	end = now_ms() + T_WAIT_MS;
	do {
		TEST_ASSERT_SUCCESS(ibv_read_counters(rx->cnt, vals, 2,
				    IBV_READ_COUNTERS_ATTR_PREFER_CACHED),
				    "");
		if (vals[0] == 1)
			break;
		usleep(1000);
	} while (now_ms() < end);
	TEST_ASSERT_EQUAL(vals[0], 1, "packets");
	TEST_ASSERT_EQUAL(vals[1], T_FRAME_LEN, "bytes");
	return TEST_SUCCESS;
}

/* Teardown in the order a program would, each destroy checked. */
static int
test_destroy(void)
{
	struct pdev *rx = &devs[1];

	if (rx->flow == NULL)
		TEST_SKIP("nothing made (test_traffic failed)");
	TEST_ASSERT_SUCCESS(ibv_destroy_flow(rx->flow), "");
	rx->flow = NULL;
	TEST_ASSERT_SUCCESS(ibv_destroy_counters(rx->cnt), "");
	rx->cnt = NULL;
	TEST_ASSERT_SUCCESS(ibv_destroy_qp(rx->qp), "");
	rx->qp = NULL;
	TEST_ASSERT_SUCCESS(ibv_destroy_cq(ibv_cq_ex_to_cq(rx->cqx)), "");
	rx->cqx = NULL;
	if (rx->ch != NULL) {
		TEST_ASSERT_EQUAL(rx->ch->refcnt, 0, "");
		TEST_ASSERT_SUCCESS(ibv_destroy_comp_channel(rx->ch), "");
		rx->ch = NULL;
	}
	TEST_ASSERT_SUCCESS(ibv_dereg_mr(rx->mr), "");
	rx->mr = NULL;
	TEST_ASSERT_SUCCESS(ibv_dealloc_pd(rx->pd), "");
	rx->pd = NULL;
	TEST_ASSERT_SUCCESS(ibv_close_device(rx->ctx), "");
	rx->ctx = NULL;
	return TEST_SUCCESS;
}

static struct unit_test_suite suite = {
	.name = "swverbs through libibverbs",
	.setup = setup,
	.teardown = teardown,
	.cases = {
		TEST_CASE(test_query),
		TEST_CASE(test_objects),
		TEST_CASE(test_traffic),
		TEST_CASE(test_destroy),
		TEST_CASES_END(),
	},
};

int
main(int argc, char **argv)
{
	if (argc == 3) {
		dev_names[0] = argv[1];
		dev_names[1] = argv[2];
	} else if (argc != 1) {
		fprintf(stderr, "usage: %s [DEV0 DEV1]\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	dlopened = getenv("SWVERBS_DLOPEN") != NULL;
	return unit_test_suite_runner(&suite);
}
