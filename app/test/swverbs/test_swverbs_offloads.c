/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * swverbs offloads, as a ConnectX has them: the capabilities
 * query_device_ex reports, IBV_WC_IP_CSUM_OK on receive (good and bad
 * IPv4 header, TCP and UDP checksums; IPv6, fragments and 16-byte CQEs
 * unchecked; on the mlx5 profile a QP's receive queue only, never a WQ),
 * IBV_SEND_IP_CSUM filling the checksums (IPv4 and IPv6, TCP
 * and UDP, gathered headers, a UDP sum of 0), bad and short frames sent as
 * they are, C-VLAN stripping on a WQ (create and modify; a C-tag first
 * only; a failed modify changes nothing), the device clock.
 * Checksums are checked against a plain RFC 1071 sum of the test's own.
 */

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "swv_test_util.h"

static uint8_t txbuf[65536];
static uint8_t rxbuf[64 * 2048];
static uint8_t qpbuf[2048];	/* the receive QP's one buffer */
/* The profile rxe_setup() gives its device (swv_device_create_flags()). */
static unsigned int rxe_profile = SWV_DEVICE_PROFILE_MLX5;
static const uint8_t peer[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };

/* RFC 1071, one byte pair at a time: the test's own reference. */
static uint32_t
ref_sum(uint32_t s, const uint8_t *p, uint32_t n)
{
	uint32_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += ((uint32_t)p[i] << 8) | p[i + 1];
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

/* A test frame's layout. */
struct tf {
	uint8_t *b;
	uint32_t len;
	uint32_t l3;	/* IP header offset */
	uint32_t l4;	/* TCP/UDP header offset */
	int v6;
	int tcp;
};

/*
 * Ethernet (nvlan 802.1Q tags, VID 100), IPv4 or IPv6, TCP or UDP, plen
 * bytes of payload; every checksum right.
 */
static void
tf_build(struct tf *f, uint8_t *b, int nvlan, int v6, int tcp, uint32_t plen)
{
	uint32_t o = 12, l4len, i, s;
	uint8_t *ip, *l4;

	f->b = b;
	f->v6 = v6;
	f->tcp = tcp;
	memcpy(b, peer, 6);
	memcpy(b + 6, peer, 6);
	b[6] = 0x04;
	for (i = 0; i < (uint32_t)nvlan; i++, o += 4) {
		b[o] = 0x81;
		b[o + 1] = 0;
		b[o + 2] = 0x20;	/* PCP 1 */
		b[o + 3] = 100;
	}
	b[o] = v6 ? 0x86 : 0x08;
	b[o + 1] = v6 ? 0xdd : 0x00;
	f->l3 = o + 2;
	ip = b + f->l3;
	l4len = (tcp ? 20 : 8) + plen;
	if (v6) {
		memset(ip, 0, 40);
		ip[0] = 0x60;
		ip[4] = (uint8_t)(l4len >> 8);
		ip[5] = (uint8_t)l4len;
		ip[6] = tcp ? 6 : 17;
		ip[7] = 64;
		ip[8] = 0x20;
		ip[23] = 1;
		ip[24] = 0x20;
		ip[39] = 2;
		f->l4 = f->l3 + 40;
	} else {
		memset(ip, 0, 20);
		ip[0] = 0x45;
		ip[2] = (uint8_t)((20 + l4len) >> 8);
		ip[3] = (uint8_t)(20 + l4len);
		ip[8] = 64;
		ip[9] = tcp ? 6 : 17;
		ip[12] = 10;
		ip[15] = 1;
		ip[16] = 10;
		ip[19] = 2;
		s = ref_sum(0, ip, 20);
		ip[10] = (uint8_t)(~s >> 8);
		ip[11] = (uint8_t)~s;
		f->l4 = f->l3 + 20;
	}
	l4 = b + f->l4;
	memset(l4, 0, tcp ? 20 : 8);
	l4[0] = 0x30;
	l4[1] = 0x39;
	l4[2] = 0x00;
	l4[3] = 0x50;
	if (tcp) {
		l4[12] = 0x50;
		l4[13] = 0x18;
	} else {
		l4[4] = (uint8_t)(l4len >> 8);
		l4[5] = (uint8_t)l4len;
	}
	for (i = 0; i < plen; i++)
		l4[(tcp ? 20 : 8) + i] = (uint8_t)(i * 13 + 7);
	f->len = f->l4 + l4len;
	s = 0;
}

/* The L4 checksum field's offset in the frame. */
static uint32_t
tf_csum_off(const struct tf *f)
{
	return f->l4 + (f->tcp ? 16 : 6);
}

/* The pseudo header and segment sum of f as it is (0xffff: right). */
static uint32_t
tf_l4_sum(const struct tf *f)
{
	const uint8_t *ip = f->b + f->l3;
	uint32_t l4len = f->len - f->l4, s;
	uint8_t tail[4] = { 0, 0, 0, f->tcp ? 6 : 17 };

	if (f->v6)
		s = ref_sum(0, ip + 8, 32);
	else
		s = ref_sum(0, ip + 12, 8);
	s += l4len;
	s = ref_sum(s, tail, 4);
	return ref_sum(s, f->b + f->l4, l4len);
}

/* Fill f's L4 checksum (the reference way). */
static void
tf_fill_l4(struct tf *f)
{
	uint32_t off = tf_csum_off(f), s;

	f->b[off] = 0;
	f->b[off + 1] = 0;
	s = ~tf_l4_sum(f) & 0xffff;
	if (!f->tcp && s == 0)
		s = 0xffff;
	f->b[off] = (uint8_t)(s >> 8);
	f->b[off + 1] = (uint8_t)s;
}

/* A receiver: a CQ (16- or 32-byte CQEs), a WQ, a 1-entry table, a rule. */
struct rxe {
	struct tdev d;
	struct ibv_mr *tmr, *rmr;
	struct ibv_cq_ex *cq;
	struct ibv_wq *wq;
	struct ibv_rwq_ind_table *tbl;
	struct ibv_qp *hqp, *sq1;
	struct ibv_flow *fl;
};

/* Post the 64 receive buffers (at setup, and after a RESET dropped them). */
static int
rxe_repost(struct rxe *e)
{
	unsigned int j;

	for (j = 0; j < 64; j++) {
		struct ibv_sge sge = {
			(uintptr_t)rxbuf + j * 2048, 2048, e->rmr->lkey,
		};
		struct ibv_recv_wr wr = {
			.wr_id = j, .sg_list = &sge, .num_sge = 1,
		}, *bad;

		TEST_ASSERT_SUCCESS(ibv_post_wq_recv(e->wq, &wr, &bad), "");
	}
	return TEST_SUCCESS;
}

static int
rxe_setup(struct rxe *e, uint64_t wc_extra, bool strip)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 256,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | wc_extra,
	};
	struct ibv_wq_init_attr wa = { .wq_type = IBV_WQT_RQ };
	struct ibv_wq_attr wm = {
		.attr_mask = IBV_WQ_ATTR_STATE, .wq_state = IBV_WQS_RDY,
	};
	struct ibv_rwq_ind_table_init_attr ta = { .log_ind_tbl_size = 0 };
	struct ibv_qp_init_attr_ex qa;
	static unsigned int seq;
	char name[16];

	/*
	 * A name of its own: a case that failed returned before its
	 * teardown and left its device, which must not fail the next ones.
	 */
	snprintf(name, sizeof(name), "offl%u", seq++);
	memset(e, 0, sizeof(*e));
	TEST_ASSERT_SUCCESS(t_setup_flags(&e->d, name, "loop", rxe_profile),
			    "setup");
	e->tmr = swv_reg_mr(e->d.pd, txbuf, sizeof(txbuf), 0);
	e->rmr = swv_reg_mr(e->d.pd, rxbuf, sizeof(rxbuf),
			    IBV_ACCESS_LOCAL_WRITE);
	TEST_ASSERT(e->tmr != NULL && e->rmr != NULL, "mr");
	e->cq = swv_create_cq_ex(e->d.ctx, &ca);
	TEST_ASSERT_NOT_NULL(e->cq, "create_cq_ex: %d", errno);
	wa.max_wr = 64;
	wa.max_sge = 1;
	wa.pd = e->d.pd;
	wa.cq = ibv_cq_ex_to_cq(e->cq);
	if (strip) {
		wa.comp_mask = IBV_WQ_INIT_ATTR_FLAGS;
		wa.create_flags = IBV_WQ_FLAGS_CVLAN_STRIPPING;
	}
	e->wq = swv_create_wq(e->d.ctx, &wa);
	TEST_ASSERT_NOT_NULL(e->wq, "create_wq: %d", errno);
	TEST_ASSERT_SUCCESS(swv_modify_wq(e->wq, &wm), "");
	TEST_ASSERT_SUCCESS(rxe_repost(e), "");
	ta.ind_tbl = &e->wq;
	e->tbl = swv_create_rwq_ind_table(e->d.ctx, &ta);
	TEST_ASSERT_NOT_NULL(e->tbl, "");
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RAW_PACKET;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
		       IBV_QP_INIT_ATTR_RX_HASH;
	qa.pd = e->d.pd;
	qa.rwq_ind_tbl = e->tbl;
	qa.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	qa.rx_hash_conf.rx_hash_key_len = 40;
	qa.rx_hash_conf.rx_hash_key = rxbuf;
	e->hqp = swv_create_qp_ex(e->d.ctx, &qa);
	TEST_ASSERT_NOT_NULL(e->hqp, "hash qp: %d", errno);
	e->fl = t_flow_default(e->hqp, IBV_FLOW_ATTR_ALL_DEFAULT, 0);
	TEST_ASSERT_NOT_NULL(e->fl, "");
	/* A sender of one SGE: compact send slots. */
	e->sq1 = t_raw_qp(&e->d, 64, 0, 1, 1);
	TEST_ASSERT_NOT_NULL(e->sq1, "");
	TEST_ASSERT_SUCCESS(t_qp_to(e->sq1, IBV_QPS_RTS), "");
	return TEST_SUCCESS;
}

static void
rxe_teardown(struct rxe *e)
{
	if (e->fl != NULL)
		swv_destroy_flow(e->fl);
	if (e->hqp != NULL)
		swv_destroy_qp(e->hqp);
	if (e->sq1 != NULL)
		swv_destroy_qp(e->sq1);
	if (e->tbl != NULL)
		swv_destroy_rwq_ind_table(e->tbl);
	if (e->wq != NULL)
		swv_destroy_wq(e->wq);
	if (e->cq != NULL)
		swv_destroy_cq(ibv_cq_ex_to_cq(e->cq));
	if (e->tmr != NULL)
		swv_dereg_mr(e->tmr);
	if (e->rmr != NULL)
		swv_dereg_mr(e->rmr);
	t_teardown(&e->d);
}

/* What one received frame completed with. */
struct rxc {
	uint64_t wr_id;
	uint32_t len;
	unsigned int wc_flags;
	uint16_t cvlan;
};

/*
 * Send len bytes at txbuf + off in nsge pieces (1: the compact sender,
 * through swv_post_send_burst()) with send_flags; receive the frame.
 */
static int
rxe_xfer(struct rxe *e, uint32_t off, uint32_t len, unsigned int nsge,
	 unsigned int send_flags, struct rxc *c)
{
	struct ibv_poll_cq_attr pa = { .comp_mask = 0 };
	struct ibv_sge sge[3];
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	uint32_t step = len / nsge, i, at = 0;
	uint64_t end = t_now_ms() + 2000;
	int ret;

	for (i = 0; i < nsge; i++) {
		sge[i].addr = (uintptr_t)txbuf + off + at;
		sge[i].length = i + 1 < nsge ? step : len - at;
		sge[i].lkey = e->tmr->lkey;
		at += sge[i].length;
	}
	if (nsge == 1) {
		uint64_t id = 7;
		uint8_t fl = SWV_SEND_BURST_SIGNALED |
			     ((send_flags & IBV_SEND_IP_CSUM) ?
			      SWV_SEND_BURST_IP_CSUM : 0);

		TEST_ASSERT_EQUAL(swv_post_send_burst(e->sq1, 1, &id, sge,
						      &fl), 1u, "burst");
		TEST_ASSERT_EQUAL(t_poll(e->d.scq, &wc, 1, 2000), 1, "scqe");
	} else {
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 7;
		wr.sg_list = sge;
		wr.num_sge = (int)nsge;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED | send_flags;
		TEST_ASSERT_SUCCESS(ibv_post_send(e->d.sqp, &wr, &bad), "");
		TEST_ASSERT_EQUAL(t_poll(e->d.scq, &wc, 1, 2000), 1, "scqe");
	}
	TEST_ASSERT_EQUAL(wc.status, IBV_WC_SUCCESS, "send status");
	while ((ret = ibv_start_poll(e->cq, &pa)) == ENOENT &&
	       t_now_ms() < end)
		usleep(50);
	TEST_ASSERT_SUCCESS(ret, "no receive completion");
	TEST_ASSERT_EQUAL(e->cq->status, IBV_WC_SUCCESS, "recv status");
	c->wr_id = e->cq->wr_id;
	c->len = ibv_wc_read_byte_len(e->cq);
	c->wc_flags = ibv_wc_read_wc_flags(e->cq);
	c->cvlan = 0;
	if (e->cq->read_cvlan != NULL)
		c->cvlan = ibv_wc_read_cvlan(e->cq);
	ibv_end_poll(e->cq);
	/* Give the buffer back. */
	{
		struct ibv_sge s = {
			(uintptr_t)rxbuf + c->wr_id * 2048, 2048,
			e->rmr->lkey,
		};
		struct ibv_recv_wr r = {
			.wr_id = c->wr_id, .sg_list = &s, .num_sge = 1,
		}, *rb;

		TEST_ASSERT_SUCCESS(ibv_post_wq_recv(e->wq, &r, &rb), "");
	}
	return TEST_SUCCESS;
}

static const uint8_t *
rx_data(const struct rxc *c)
{
	return rxbuf + c->wr_id * 2048;
}

static int
test_caps(void)
{
	struct ibv_device_attr_ex a;
	struct ibv_values_ex v;
	struct tdev d;
	uint64_t t0, t1, clk;

	TEST_ASSERT_SUCCESS(t_setup(&d, "offl", "loop"), "");
	TEST_ASSERT_SUCCESS(swv_query_device_ex(d.ctx, NULL, &a), "");
	TEST_ASSERT(a.raw_packet_caps & IBV_RAW_PACKET_CAP_IP_CSUM, "");
	TEST_ASSERT(a.raw_packet_caps & IBV_RAW_PACKET_CAP_CVLAN_STRIPPING,
		    "");
	TEST_ASSERT(a.device_cap_flags_ex & IBV_DEVICE_RAW_IP_CSUM, "");
	TEST_ASSERT(a.hca_core_clock != 0, "");
	/* The clock: the completion timestamps' (CLOCK_MONOTONIC ns). */
	memset(&v, 0, sizeof(v));
	v.comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
	t0 = t_now_ns();
	TEST_ASSERT_SUCCESS(ibv_query_rt_values_ex(d.ctx, &v), "");
	t1 = t_now_ns();
	clk = (uint64_t)v.raw_clock.tv_sec * 1000000000ull +
	      (uint64_t)v.raw_clock.tv_nsec;
	TEST_ASSERT(clk >= t0 && clk <= t1, "clock %" PRIu64 " not in "
		    "[%" PRIu64 ", %" PRIu64 "]", clk, t0, t1);
	v.comp_mask = IBV_VALUES_MASK_RESERVED;
	TEST_ASSERT_EQUAL(swv_query_rt_values_ex(d.ctx, &v), EINVAL, "");
	t_teardown(&d);
	return TEST_SUCCESS;
}

/*
 * Receive checksum status on a WQ: right, wrong, and not checked (full
 * profile); never reported on the mlx5 profile, whose provider sets
 * IBV_WC_IP_CSUM_OK for a QP's receive queue only (test_rx_csum_qp()).
 */
static int
rx_csum_profile(unsigned int profile)
{
	static const struct {
		const char *what;
		int v6, tcp, nvlan;
		int spoil;	/* 1: IP header, 2: L4, 3: UDP 0, 4: frag */
		bool ok;
	} c[] = {
		{ "ipv4 tcp", 0, 1, 0, 0, true },
		{ "ipv4 udp", 0, 0, 0, 0, true },
		{ "ipv4 tcp vlan", 0, 1, 1, 0, true },
		{ "ipv4 udp no checksum", 0, 0, 0, 3, true },
		{ "ipv4 bad header", 0, 1, 0, 1, false },
		{ "ipv4 tcp bad", 0, 1, 0, 2, false },
		{ "ipv4 udp bad", 0, 0, 0, 2, false },
		{ "ipv4 fragment", 0, 0, 0, 4, false },
		{ "ipv6 tcp (not checked)", 1, 1, 0, 0, false },
		{ "ipv6 udp (not checked)", 1, 0, 0, 0, false },
	};
	bool mlx5 = profile == SWV_DEVICE_PROFILE_MLX5, ok;
	struct rxe e;
	struct rxc r;
	struct tf f;
	unsigned int i;

	rxe_profile = profile;
	TEST_ASSERT_SUCCESS(rxe_setup(&e, IBV_WC_EX_WITH_CVLAN, false), "");
	rxe_profile = SWV_DEVICE_PROFILE_MLX5;
	for (i = 0; i < (sizeof(c) / sizeof(c[0])); i++) {
		ok = c[i].ok && !mlx5;
		tf_build(&f, txbuf, c[i].nvlan, c[i].v6, c[i].tcp, 100 + i);
		tf_fill_l4(&f);
		TEST_ASSERT_EQUAL(tf_l4_sum(&f), 0xffffu, "%s: reference",
				  c[i].what);
		if (c[i].spoil == 1)
			txbuf[f.l3 + 10] ^= 0x40;
		if (c[i].spoil == 2)
			txbuf[tf_csum_off(&f) + 1] ^= 0x01;
		if (c[i].spoil == 3) {
			txbuf[tf_csum_off(&f)] = 0;
			txbuf[tf_csum_off(&f) + 1] = 0;
		}
		if (c[i].spoil == 4) {
			/* MF set, header checksum fixed up. */
			uint32_t s;

			txbuf[f.l3 + 6] = 0x20;
			txbuf[f.l3 + 10] = 0;
			txbuf[f.l3 + 11] = 0;
			s = ~ref_sum(0, txbuf + f.l3, 20);
			txbuf[f.l3 + 10] = (uint8_t)(s >> 8);
			txbuf[f.l3 + 11] = (uint8_t)s;
		}
		TEST_ASSERT_SUCCESS(rxe_xfer(&e, 0, f.len, 1, 0, &r), "%s",
				    c[i].what);
		TEST_ASSERT_EQUAL(r.len, f.len, "%s: length", c[i].what);
		TEST_ASSERT_EQUAL(!!(r.wc_flags & IBV_WC_IP_CSUM_OK), ok,
				  "%s (%s profile, WQ): IP_CSUM_OK %s",
				  c[i].what, mlx5 ? "mlx5" : "full",
				  ok ? "missing" : "set");
		TEST_ASSERT_EQUAL(r.cvlan, 0, "%s: nothing stripped",
				  c[i].what);
		TEST_ASSERT(memcmp(rx_data(&r), txbuf, f.len) == 0,
			    "%s: bytes", c[i].what);
	}
	rxe_teardown(&e);
	return TEST_SUCCESS;
}

static int
test_rx_csum(void)
{
	struct rxe e;
	struct rxc r;
	struct tf f;

	TEST_ASSERT_SUCCESS(rx_csum_profile(SWV_DEVICE_PROFILE_FULL), "");
	TEST_ASSERT_SUCCESS(rx_csum_profile(SWV_DEVICE_PROFILE_MLX5), "");
	/* 16-byte CQEs have no room for it: a right frame reads unchecked. */
	rxe_profile = SWV_DEVICE_PROFILE_FULL;
	TEST_ASSERT_SUCCESS(rxe_setup(&e, 0, false), "");
	rxe_profile = SWV_DEVICE_PROFILE_MLX5;
	tf_build(&f, txbuf, 0, 0, 1, 64);
	tf_fill_l4(&f);
	TEST_ASSERT_SUCCESS(rxe_xfer(&e, 0, f.len, 1, 0, &r), "");
	TEST_ASSERT_EQUAL(r.wc_flags & IBV_WC_IP_CSUM_OK, 0u, "compact CQE");
	rxe_teardown(&e);
	return TEST_SUCCESS;
}

/*
 * A QP's receive queue on the mlx5 profile reports IBV_WC_IP_CSUM_OK, as
 * mlx5's provider does for a RAW_PACKET QP (a right IPv4 TCP frame: set;
 * its L4 checksum spoiled: not set).
 */
static int
test_rx_csum_qp(void)
{
	struct ibv_poll_cq_attr pa = { .comp_mask = 0 };
	struct ibv_qp_init_attr qa;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_flow *fl;
	struct rxe e;
	struct tf f;
	unsigned int i, flags;
	uint64_t id = 7, end;
	uint8_t fl8 = SWV_SEND_BURST_SIGNALED;
	struct ibv_wc wc;
	int ret;

	TEST_ASSERT_SUCCESS(rxe_setup(&e, IBV_WC_EX_WITH_CVLAN, false), "");
	swv_destroy_flow(e.fl);
	e.fl = NULL;
	/* A receive QP whose receives complete on the 32-byte CQ. */
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = e.d.scq;
	qa.recv_cq = ibv_cq_ex_to_cq(e.cq);
	qa.qp_type = IBV_QPT_RAW_PACKET;
	qa.cap.max_send_wr = 1;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qp = swv_create_qp(e.d.pd, &qa);
	TEST_ASSERT_NOT_NULL(qp, "create_qp: %d", errno);
	TEST_ASSERT_SUCCESS(t_qp_to(qp, IBV_QPS_RTR), "");
	mr = swv_reg_mr(e.d.pd, qpbuf, sizeof(qpbuf), IBV_ACCESS_LOCAL_WRITE);
	TEST_ASSERT_NOT_NULL(mr, "");
	fl = t_flow_default(qp, IBV_FLOW_ATTR_ALL_DEFAULT, 0);
	TEST_ASSERT_NOT_NULL(fl, "");
	for (i = 0; i < 2; i++) {
		struct ibv_sge rs = { (uintptr_t)qpbuf, sizeof(qpbuf),
				      mr->lkey };
		struct ibv_recv_wr rw = { .wr_id = 99, .sg_list = &rs,
					  .num_sge = 1 }, *bad;
		struct ibv_sge ss;

		TEST_ASSERT_SUCCESS(ibv_post_recv(qp, &rw, &bad), "");
		tf_build(&f, txbuf, 0, 0, 1, 64);
		tf_fill_l4(&f);
		if (i == 1)
			txbuf[tf_csum_off(&f) + 1] ^= 0x01;
		ss.addr = (uintptr_t)txbuf;
		ss.length = f.len;
		ss.lkey = e.tmr->lkey;
		TEST_ASSERT_EQUAL(swv_post_send_burst(e.sq1, 1, &id, &ss,
						      &fl8), 1u, "");
		TEST_ASSERT_EQUAL(t_poll(e.d.scq, &wc, 1, 2000), 1, "scqe");
		end = t_now_ms() + 2000;
		while ((ret = ibv_start_poll(e.cq, &pa)) == ENOENT &&
		       t_now_ms() < end)
			usleep(50);
		TEST_ASSERT_SUCCESS(ret, "no receive completion");
		TEST_ASSERT_EQUAL(e.cq->wr_id, 99u, "the QP's buffer");
		flags = ibv_wc_read_wc_flags(e.cq);
		ibv_end_poll(e.cq);
		TEST_ASSERT_EQUAL(!!(flags & IBV_WC_IP_CSUM_OK), i == 0,
				  "%s frame: IP_CSUM_OK %s",
				  i == 0 ? "right" : "bad L4",
				  i == 0 ? "missing" : "set");
	}
	swv_destroy_flow(fl);
	TEST_ASSERT_SUCCESS(swv_destroy_qp(qp), "");
	swv_dereg_mr(mr);
	rxe_teardown(&e);
	return TEST_SUCCESS;
}

/* IBV_SEND_IP_CSUM fills what the headers need; the buffer stays. */
static int
test_tx_csum(void)
{
	static const struct {
		int v6, tcp, nvlan;
		unsigned int nsge;
	} c[] = {
		{ 0, 1, 0, 1 }, { 0, 0, 0, 1 }, { 1, 1, 0, 1 }, { 1, 0, 0, 1 },
		{ 0, 1, 1, 3 }, { 0, 0, 2, 3 }, { 1, 1, 0, 3 }, { 1, 0, 1, 3 },
	};
	uint8_t keep[2048];
	struct rxe e;
	struct rxc r;
	struct tf f, g;
	unsigned int i;

	/* The full profile: its WQ reports what the receiver checked. */
	rxe_profile = SWV_DEVICE_PROFILE_FULL;
	TEST_ASSERT_SUCCESS(rxe_setup(&e, IBV_WC_EX_WITH_CVLAN, false), "");
	rxe_profile = SWV_DEVICE_PROFILE_MLX5;
	for (i = 0; i < (sizeof(c) / sizeof(c[0])); i++) {
		tf_build(&f, txbuf, c[i].nvlan, c[i].v6, c[i].tcp, 333 + i);
		/* Checksums wrong on purpose: the device must fill them. */
		txbuf[tf_csum_off(&f)] = 0xde;
		txbuf[tf_csum_off(&f) + 1] = 0xad;
		if (!c[i].v6) {
			txbuf[f.l3 + 10] = 0xbe;
			txbuf[f.l3 + 11] = 0xef;
		}
		memcpy(keep, txbuf, f.len);
		TEST_ASSERT_SUCCESS(rxe_xfer(&e, 0, f.len, c[i].nsge,
					     IBV_SEND_IP_CSUM, &r), "case %u",
				    i);
		TEST_ASSERT_EQUAL(r.len, f.len, "case %u: length", i);
		TEST_ASSERT(memcmp(txbuf, keep, f.len) == 0,
			    "case %u: the send buffer was written", i);
		g = f;
		g.b = (uint8_t *)(uintptr_t)rx_data(&r);
		TEST_ASSERT_EQUAL(tf_l4_sum(&g), 0xffffu,
				  "case %u: L4 checksum wrong", i);
		if (!c[i].v6)
			TEST_ASSERT_EQUAL(ref_sum(0, g.b + g.l3, 20), 0xffffu,
					  "case %u: IPv4 checksum wrong", i);
		/* Nothing else changed. */
		TEST_ASSERT(memcmp(g.b, keep, f.l3 + 10) == 0 &&
			    memcmp(g.b + tf_csum_off(&f) + 2,
				   keep + tf_csum_off(&f) + 2,
				   f.len - tf_csum_off(&f) - 2) == 0,
			    "case %u: other bytes changed", i);
		/* IPv4: a checked frame; the receiver says so. */
		TEST_ASSERT_EQUAL(!!(r.wc_flags & IBV_WC_IP_CSUM_OK),
				  !c[i].v6, "case %u: IP_CSUM_OK", i);
	}
	/* Without the flag the frame goes as it is. */
	TEST_ASSERT_SUCCESS(rxe_xfer(&e, 0, f.len, 1, 0, &r), "");
	TEST_ASSERT(memcmp(rx_data(&r), keep, f.len) == 0, "no flag");
	/* A UDP sum of 0 is sent as 0xffff (0 says "none"). */
	tf_build(&f, txbuf, 0, 0, 0, 2);
	tf_fill_l4(&f);
	{
		uint32_t off = tf_csum_off(&f), s;
		uint32_t p = f.l4 + 8;

		/* Make the payload word bring the sum to 0xffff. */
		txbuf[p] = 0;
		txbuf[p + 1] = 0;
		txbuf[off] = 0;
		txbuf[off + 1] = 0;
		s = tf_l4_sum(&f);
		s = 0xffff - s;
		txbuf[p] = (uint8_t)(s >> 8);
		txbuf[p + 1] = (uint8_t)s;
		TEST_ASSERT_EQUAL(tf_l4_sum(&f), 0xffffu, "crafted");
		TEST_ASSERT_SUCCESS(rxe_xfer(&e, 0, f.len, 1,
					     IBV_SEND_IP_CSUM, &r), "");
		TEST_ASSERT(rx_data(&r)[off] == 0xff &&
			    rx_data(&r)[off + 1] == 0xff,
			    "UDP checksum %02x%02x, not ffff",
			    rx_data(&r)[off], rx_data(&r)[off + 1]);
	}
	rxe_teardown(&e);
	return TEST_SUCCESS;
}

/*
 * Frames the checksums cannot be filled in (truncated headers, lengths
 * that lie, random bytes) go out as they are: no crash, nothing read
 * past the frame, the bytes unchanged unless a whole header was there.
 */
static int
test_tx_csum_fuzz(void)
{
	uint8_t keep[2048];
	struct rxe e;
	struct rxc r;
	struct tf f;
	unsigned int i, cut;

	srand(1313);
	TEST_ASSERT_SUCCESS(rxe_setup(&e, IBV_WC_EX_WITH_CVLAN, false), "");
	/* Truncated: the IP length says more than the frame has. */
	for (cut = 14; cut < 80; cut += 3) {
		tf_build(&f, txbuf, 0, cut & 1, cut & 2, 40);
		if (cut >= f.len)
			continue;
		memcpy(keep, txbuf, cut);
		TEST_ASSERT_SUCCESS(rxe_xfer(&e, 0, cut < 60 ? 60 : cut, 1,
					     IBV_SEND_IP_CSUM, &r), "cut %u",
				    cut);
		if (cut >= 60)
			TEST_ASSERT(memcmp(rx_data(&r), keep, cut) == 0,
				    "cut %u: a short frame was changed", cut);
	}
	/* Random bytes after an IPv4 or IPv6 ether type. */
	for (i = 0; i < 300; i++) {
		uint32_t len = 60 + (uint32_t)rand() % 200, k;

		for (k = 0; k < len; k++)
			txbuf[k] = (uint8_t)rand();
		txbuf[12] = (i & 1) ? 0x86 : 0x08;
		txbuf[13] = (i & 1) ? 0xdd : 0x00;
		if (i & 2)
			txbuf[14] = (i & 1) ? 0x60 : 0x45;
		TEST_ASSERT_SUCCESS(rxe_xfer(&e, 0, len, 1 + (i % 3 == 0) * 2,
					     IBV_SEND_IP_CSUM, &r), "fuzz %u",
				    i);
		TEST_ASSERT_EQUAL(r.len, len, "fuzz %u: length", i);
	}
	TEST_ASSERT(t_counters_ok(e.d.ctx), "counters");
	rxe_teardown(&e);
	return TEST_SUCCESS;
}

/* C-VLAN stripping: a WQ flag at create and by modify; steering first. */
static int
test_vlan_strip(void)
{
	struct ibv_wq_attr wm = {
		.attr_mask = IBV_WQ_ATTR_FLAGS,
		.flags = 0,
		.flags_mask = IBV_WQ_FLAGS_CVLAN_STRIPPING,
	};
	struct rxe e;
	struct rxc r;
	struct tf f;

	/* The full profile: its WQ reports the checksum status too. */
	rxe_profile = SWV_DEVICE_PROFILE_FULL;
	TEST_ASSERT_SUCCESS(rxe_setup(&e, IBV_WC_EX_WITH_CVLAN, true), "");
	rxe_profile = SWV_DEVICE_PROFILE_MLX5;
	tf_build(&f, txbuf, 1, 0, 0, 50);
	tf_fill_l4(&f);
	TEST_ASSERT_SUCCESS(rxe_xfer(&e, 0, f.len, 1, 0, &r), "");
	TEST_ASSERT_EQUAL(r.len, f.len - 4, "tag not stripped");
	TEST_ASSERT_EQUAL(r.cvlan, 0x2064, "TCI %#x", r.cvlan);
	TEST_ASSERT(memcmp(rx_data(&r), txbuf, 12) == 0 &&
		    memcmp(rx_data(&r) + 12, txbuf + 16, f.len - 16) == 0,
		    "stripped frame's bytes");
	/* Checksums still checked (on the frame as it came). */
	TEST_ASSERT(r.wc_flags & IBV_WC_IP_CSUM_OK, "csum");
	/* Untagged: untouched, TCI 0. */
	tf_build(&f, txbuf, 0, 0, 0, 50);
	TEST_ASSERT_SUCCESS(rxe_xfer(&e, 0, f.len, 1, 0, &r), "");
	TEST_ASSERT_EQUAL(r.len, f.len, "");
	TEST_ASSERT_EQUAL(r.cvlan, 0, "");
	/* Off by modify (in RDY): the tag stays. */
	TEST_ASSERT_SUCCESS(swv_modify_wq(e.wq, &wm), "");
	tf_build(&f, txbuf, 1, 0, 0, 50);
	TEST_ASSERT_SUCCESS(rxe_xfer(&e, 0, f.len, 1, 0, &r), "");
	TEST_ASSERT_EQUAL(r.len, f.len, "tag stripped after off");
	TEST_ASSERT_EQUAL(r.cvlan, 0, "");
	TEST_ASSERT(memcmp(rx_data(&r), txbuf, f.len) == 0, "");
	/* And on again. */
	wm.flags = IBV_WQ_FLAGS_CVLAN_STRIPPING;
	TEST_ASSERT_SUCCESS(swv_modify_wq(e.wq, &wm), "");
	TEST_ASSERT_SUCCESS(rxe_xfer(&e, 0, f.len, 1, 0, &r), "");
	TEST_ASSERT_EQUAL(r.len, f.len - 4, "");
	/* Other flags are refused. */
	wm.flags_mask = IBV_WQ_FLAGS_SCATTER_FCS;
	TEST_ASSERT_EQUAL(swv_modify_wq(e.wq, &wm), EOPNOTSUPP, "");
	rxe_teardown(&e);
	return TEST_SUCCESS;
}

/*
 * An 802.1ad S-tag first (0x88a8, VID 100, then an 802.1Q tag of VID 7):
 * a stripping WQ leaves the frame as it came (an mlx5 strips only a C-tag
 * first), TCI 0; a C-tag first is stripped.
 */
static int
test_vlan_strip_stag(void)
{
	struct rxe e;
	struct rxc r;
	struct tf f;

	TEST_ASSERT_SUCCESS(rxe_setup(&e, IBV_WC_EX_WITH_CVLAN, true), "");
	tf_build(&f, txbuf, 2, 0, 0, 50);
	txbuf[12] = 0x88;
	txbuf[13] = 0xa8;
	txbuf[18] = 0;
	txbuf[19] = 7;
	tf_fill_l4(&f);
	TEST_ASSERT_SUCCESS(rxe_xfer(&e, 0, f.len, 1, 0, &r), "");
	TEST_ASSERT_EQUAL(r.len, f.len, "S-tag stripped");
	TEST_ASSERT_EQUAL(r.cvlan, 0, "S-tag TCI %#x reported", r.cvlan);
	TEST_ASSERT(memcmp(rx_data(&r), txbuf, f.len) == 0, "S-tag frame");
	/* The same frame with a C-tag first: stripped. */
	txbuf[12] = 0x81;
	txbuf[13] = 0x00;
	TEST_ASSERT_SUCCESS(rxe_xfer(&e, 0, f.len, 1, 0, &r), "");
	TEST_ASSERT_EQUAL(r.len, f.len - 4, "C-tag not stripped");
	TEST_ASSERT_EQUAL(r.cvlan, 0x2064, "TCI %#x", r.cvlan);
	TEST_ASSERT(memcmp(rx_data(&r), txbuf, 12) == 0 &&
		    memcmp(rx_data(&r) + 12, txbuf + 16, f.len - 16) == 0,
		    "C-tag stripped frame's bytes");
	rxe_teardown(&e);
	return TEST_SUCCESS;
}

/*
 * A modify that fails (a wrong current state, a bad state, ERR to RDY)
 * changes nothing: the strip flag it carried is not applied.
 */
static int
test_vlan_strip_modify_fail(void)
{
	struct ibv_wq_attr wm = {
		.attr_mask = IBV_WQ_ATTR_FLAGS | IBV_WQ_ATTR_STATE |
			     IBV_WQ_ATTR_CURR_STATE,
		.wq_state = IBV_WQS_RDY,
		.curr_wq_state = IBV_WQS_RESET,
		.flags = IBV_WQ_FLAGS_CVLAN_STRIPPING,
		.flags_mask = IBV_WQ_FLAGS_CVLAN_STRIPPING,
	};
	struct ibv_wq_attr st = { .attr_mask = IBV_WQ_ATTR_STATE };
	struct rxe e;
	struct rxc r;
	struct tf f;

	TEST_ASSERT_SUCCESS(rxe_setup(&e, IBV_WC_EX_WITH_CVLAN, false), "");
	tf_build(&f, txbuf, 1, 0, 0, 50);
	tf_fill_l4(&f);
	/* The WQ is RDY: curr_wq_state RESET is wrong. */
	TEST_ASSERT_EQUAL(swv_modify_wq(e.wq, &wm), EINVAL, "curr state");
	TEST_ASSERT_SUCCESS(rxe_xfer(&e, 0, f.len, 1, 0, &r), "");
	TEST_ASSERT_EQUAL(r.len, f.len, "stripping after a failed modify");
	TEST_ASSERT_EQUAL(r.cvlan, 0, "");
	/* A state that is none of RESET, RDY, ERR. */
	wm.attr_mask = IBV_WQ_ATTR_FLAGS | IBV_WQ_ATTR_STATE;
	wm.wq_state = IBV_WQS_UNKNOWN;
	TEST_ASSERT_EQUAL(swv_modify_wq(e.wq, &wm), EINVAL, "bad state");
	TEST_ASSERT_SUCCESS(rxe_xfer(&e, 0, f.len, 1, 0, &r), "");
	TEST_ASSERT_EQUAL(r.len, f.len, "stripping after a bad state");
	/* ERR to RDY, refused; then RESET, RDY: still not stripping. */
	st.wq_state = IBV_WQS_ERR;
	TEST_ASSERT_SUCCESS(swv_modify_wq(e.wq, &st), "");
	wm.wq_state = IBV_WQS_RDY;
	TEST_ASSERT_EQUAL(swv_modify_wq(e.wq, &wm), EINVAL, "ERR to RDY");
	st.wq_state = IBV_WQS_RESET;
	TEST_ASSERT_SUCCESS(swv_modify_wq(e.wq, &st), "");
	st.wq_state = IBV_WQS_RDY;
	TEST_ASSERT_SUCCESS(swv_modify_wq(e.wq, &st), "");
	TEST_ASSERT_SUCCESS(rxe_repost(&e), "");
	TEST_ASSERT_SUCCESS(rxe_xfer(&e, 0, f.len, 1, 0, &r), "");
	TEST_ASSERT_EQUAL(r.len, f.len, "stripping after ERR to RDY");
	TEST_ASSERT_EQUAL(r.cvlan, 0, "");
	/* A good modify with the flag applies both. */
	TEST_ASSERT_SUCCESS(swv_modify_wq(e.wq, &wm), "");
	TEST_ASSERT_SUCCESS(rxe_xfer(&e, 0, f.len, 1, 0, &r), "");
	TEST_ASSERT_EQUAL(r.len, f.len - 4, "not stripping after a good one");
	rxe_teardown(&e);
	return TEST_SUCCESS;
}

/* n receives on wq, 2048-byte slots of rxbuf, wr_ids id0 on. */
static int
wq_recvs(struct ibv_wq *wq, struct ibv_mr *mr, uint64_t id0, unsigned int n)
{
	unsigned int j;

	for (j = 0; j < n; j++) {
		struct ibv_sge s = {
			(uintptr_t)rxbuf + j * 2048, 2048, mr->lkey,
		};
		struct ibv_recv_wr wr = {
			.wr_id = id0 + j, .sg_list = &s, .num_sge = 1,
		}, *rb;

		TEST_ASSERT_SUCCESS(ibv_post_wq_recv(wq, &wr, &rb), "");
	}
	return TEST_SUCCESS;
}

/*
 * ERR, RESET, RDY: the CQ forgets what the WQ completed before, a receive
 * and the flushed WQEs nobody polled (mlx5's provider cleans the CQ when a
 * WQ leaves RESET), and keeps, in order, another WQ's CQEs among them.
 */
static int
test_wq_restart_cleans_cq(void)
{
	struct ibv_wq_init_attr wa = { .wq_type = IBV_WQT_RQ };
	struct ibv_wq_attr st = { .attr_mask = IBV_WQ_ATTR_STATE };
	struct ibv_poll_cq_attr pa = { .comp_mask = 0 };
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct ibv_wq *w2;
	unsigned int j;
	struct rxe e;
	struct rxc r;
	struct tf f;
	uint64_t id = 7;
	uint8_t fl = SWV_SEND_BURST_SIGNALED;

	TEST_ASSERT_SUCCESS(rxe_setup(&e, 0, false), "");
	wa.max_wr = 8;
	wa.max_sge = 1;
	wa.pd = e.d.pd;
	wa.cq = ibv_cq_ex_to_cq(e.cq);
	w2 = swv_create_wq(e.d.ctx, &wa);
	TEST_ASSERT_NOT_NULL(w2, "second WQ: %d", errno);
	st.wq_state = IBV_WQS_RDY;
	TEST_ASSERT_SUCCESS(swv_modify_wq(w2, &st), "");
	TEST_ASSERT_SUCCESS(wq_recvs(w2, e.rmr, 100, 8), "");
	/* One frame the first WQ receives, left in the CQ. */
	tf_build(&f, txbuf, 1, 0, 0, 50);
	tf_fill_l4(&f);
	sge.addr = (uintptr_t)txbuf;
	sge.length = f.len;
	sge.lkey = e.tmr->lkey;
	TEST_ASSERT_EQUAL(swv_post_send_burst(e.sq1, 1, &id, &sge, &fl), 1u,
			  "");
	TEST_ASSERT_EQUAL(t_poll(e.d.scq, &wc, 1, 2000), 1, "scqe");
	TEST_ASSERT_SUCCESS(t_cq_wait_pending(e.cq, 1), "");
	/* The second WQ's 8 flushed, then the first's 63. */
	st.wq_state = IBV_WQS_ERR;
	TEST_ASSERT_SUCCESS(swv_modify_wq(w2, &st), "");
	TEST_ASSERT_SUCCESS(t_cq_wait_pending(e.cq, 9), "");
	TEST_ASSERT_SUCCESS(swv_modify_wq(e.wq, &st), "");
	TEST_ASSERT_SUCCESS(t_cq_wait_pending(e.cq, 72), "");
	st.wq_state = IBV_WQS_RESET;
	TEST_ASSERT_SUCCESS(swv_modify_wq(e.wq, &st), "");
	TEST_ASSERT_SUCCESS(t_cq_wait_pending(e.cq, 72), "RESET keeps them");
	st.wq_state = IBV_WQS_RDY;
	TEST_ASSERT_SUCCESS(swv_modify_wq(e.wq, &st), "");
	TEST_ASSERT_SUCCESS(t_cq_wait_pending(e.cq, 8), "RDY cleans");
	for (j = 0; j < 8; j++) {
		TEST_ASSERT_SUCCESS(j == 0 ? ibv_start_poll(e.cq, &pa) :
				    ibv_next_poll(e.cq), "CQE %u", j);
		TEST_ASSERT_EQUAL(e.cq->wr_id, 100u + j, "order");
		TEST_ASSERT_EQUAL(e.cq->status, IBV_WC_WR_FLUSH_ERR, "");
	}
	TEST_ASSERT_EQUAL(ibv_next_poll(e.cq), ENOENT, "a ninth CQE");
	ibv_end_poll(e.cq);
	/* The restarted WQ receives. */
	TEST_ASSERT_SUCCESS(rxe_repost(&e), "");
	TEST_ASSERT_SUCCESS(rxe_xfer(&e, 0, f.len, 1, 0, &r), "");
	TEST_ASSERT_EQUAL(r.len, f.len, "");
	/* A WQ destroyed leaves none of its CQEs (mlx5 too): 2 flushed. */
	for (st.wq_state = IBV_WQS_RESET; st.wq_state <= IBV_WQS_RDY;
	     st.wq_state++)
		TEST_ASSERT_SUCCESS(swv_modify_wq(w2, &st), "");
	TEST_ASSERT_SUCCESS(wq_recvs(w2, e.rmr, 200, 2), "");
	st.wq_state = IBV_WQS_ERR;
	TEST_ASSERT_SUCCESS(swv_modify_wq(w2, &st), "");
	TEST_ASSERT_SUCCESS(t_cq_wait_pending(e.cq, 2), "w2 flushed");
	TEST_ASSERT_SUCCESS(swv_destroy_wq(w2), "");
	TEST_ASSERT_SUCCESS(t_cq_wait_pending(e.cq, 0), "destroy cleans");
	rxe_teardown(&e);
	return TEST_SUCCESS;
}

/* Random frames into a checking, stripping queue: no crash, all counted. */
static int
test_rx_fuzz(void)
{
	struct rxe e;
	struct rxc r;
	unsigned int i;

	srand(1314);
	TEST_ASSERT_SUCCESS(rxe_setup(&e, IBV_WC_EX_WITH_CVLAN, true), "");
	for (i = 0; i < 300; i++) {
		uint32_t len = 60 + (uint32_t)rand() % 300, k;

		for (k = 0; k < len; k++)
			txbuf[k] = (uint8_t)rand();
		if (i & 1) {
			txbuf[12] = 0x81;
			txbuf[13] = 0x00;
		}
		if (i & 2) {
			txbuf[(i & 1) ? 16 : 12] = 0x08;
			txbuf[(i & 1) ? 17 : 13] = 0x00;
			txbuf[(i & 1) ? 18 : 14] = 0x45;
		}
		TEST_ASSERT_SUCCESS(rxe_xfer(&e, 0, len, 1, 0, &r), "%u", i);
		TEST_ASSERT(r.len == len || r.len == len - 4, "%u", i);
	}
	TEST_ASSERT(t_counters_ok(e.d.ctx), "counters");
	rxe_teardown(&e);
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite = {
	.name = "swverbs offloads",
	.cases = {
		TEST_CASE(test_caps),
		TEST_CASE(test_rx_csum),
		TEST_CASE(test_rx_csum_qp),
		TEST_CASE(test_tx_csum),
		TEST_CASE(test_tx_csum_fuzz),
		TEST_CASE(test_vlan_strip),
		TEST_CASE(test_vlan_strip_stag),
		TEST_CASE(test_vlan_strip_modify_fail),
		TEST_CASE(test_wq_restart_cleans_cq),
		TEST_CASE(test_rx_fuzz),
		TEST_CASES_END(),
	},
};

int
main(void)
{
	return unit_test_suite_runner(&suite);
}
