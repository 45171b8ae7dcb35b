/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * RSS: the Toeplitz hash against the verification vectors of Microsoft's
 * RSS specification, and a hash QP over 4 WQs that spreads flows as those
 * hashes say.
 */

#include <arpa/inet.h>
#include <netinet/in.h>

#include "swv_test_util.h"
#include "swv_priv.h"

static const uint8_t ms_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
	0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
	0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

struct v4_vector {
	const char *src, *dst;
	uint16_t sport, dport;
	uint32_t ip_hash, tcp_hash;
};

static const struct v4_vector v4[] = {
	{ "66.9.149.187", "161.142.100.80", 2794, 1766,
	  0x323e8fc2, 0x51ccc178 },
	{ "199.92.111.2", "65.69.140.83", 14230, 4739,
	  0xd718262a, 0xc626b0ea },
	{ "24.19.198.95", "12.22.207.184", 12898, 38024,
	  0xd2d0a5de, 0x5c2b394a },
	{ "38.27.205.30", "209.142.163.6", 48228, 2217,
	  0x82989176, 0xafc7327f },
	{ "153.39.163.191", "202.188.127.2", 44251, 1303,
	  0x5d1809c5, 0x10e828a2 },
};

static const struct v4_vector v6[] = {
	{ "3ffe:2501:200:1fff::7", "3ffe:2501:200:3::1", 2794, 1766,
	  0x2cc18cd5, 0x40207d3d },
	{ "3ffe:501:8::260:97ff:fe40:efab", "ff02::1", 14230, 4739,
	  0x0f0c461c, 0xdde51bbf },
	{ "3ffe:1900:4545:3:200:f8ff:fe21:67cf", "fe80::200:f8ff:fe21:67cf",
	  44251, 38024, 0x4b61e985, 0x02d1feef },
};

static int
test_toeplitz_vectors(void)
{
	uint8_t in[36];
	unsigned int i;
	uint16_t p;

	for (i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		inet_pton(AF_INET, v4[i].src, in);
		inet_pton(AF_INET, v4[i].dst, in + 4);
		p = htons(v4[i].sport);
		memcpy(in + 8, &p, 2);
		p = htons(v4[i].dport);
		memcpy(in + 10, &p, 2);
		TEST_ASSERT_EQUAL(swv_toeplitz(ms_key, in, 8), v4[i].ip_hash,
				  "IPv4 vector %u", i);
		TEST_ASSERT_EQUAL(swv_toeplitz(ms_key, in, 12),
				  v4[i].tcp_hash, "IPv4+TCP vector %u", i);
	}
	for (i = 0; i < sizeof(v6) / sizeof(v6[0]); i++) {
		inet_pton(AF_INET6, v6[i].src, in);
		inet_pton(AF_INET6, v6[i].dst, in + 16);
		p = htons(v6[i].sport);
		memcpy(in + 32, &p, 2);
		p = htons(v6[i].dport);
		memcpy(in + 34, &p, 2);
		TEST_ASSERT_EQUAL(swv_toeplitz(ms_key, in, 32), v6[i].ip_hash,
				  "IPv6 vector %u", i);
		TEST_ASSERT_EQUAL(swv_toeplitz(ms_key, in, 36),
				  v6[i].tcp_hash, "IPv6+TCP vector %u", i);
	}
	return TEST_SUCCESS;
}

/* An Ethernet + IPv4 + TCP/UDP frame of 64 bytes. */
static uint32_t
v4_frame(uint8_t *f, const uint8_t *mac, const struct v4_vector *v,
	 uint8_t proto)
{
	uint16_t p;

	memset(f, 0, 64);
	memcpy(f, mac, 6);
	memcpy(f + 6, mac, 6);
	f[12] = 0x08;
	f[13] = 0x00;
	f[14] = 0x45;
	f[16] = 0;
	f[17] = 50;		/* total length */
	f[22] = 64;		/* TTL */
	f[23] = proto;
	inet_pton(AF_INET, v->src, f + 26);
	inet_pton(AF_INET, v->dst, f + 30);
	p = htons(v->sport);
	memcpy(f + 34, &p, 2);
	p = htons(v->dport);
	memcpy(f + 36, &p, 2);
	return 64;
}

static uint32_t
v6_frame(uint8_t *f, const uint8_t *mac, const struct v4_vector *v)
{
	uint16_t p;

	memset(f, 0, 80);
	memcpy(f, mac, 6);
	memcpy(f + 6, mac, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	f[14] = 0x60;
	f[19] = 20;		/* payload length */
	f[20] = IPPROTO_TCP;
	f[21] = 64;
	inet_pton(AF_INET6, v->src, f + 22);
	inet_pton(AF_INET6, v->dst, f + 38);
	p = htons(v->sport);
	memcpy(f + 54, &p, 2);
	p = htons(v->dport);
	memcpy(f + 56, &p, 2);
	return 80;
}

struct rss_env {
	struct tdev d;
	struct ibv_wq *wq[4];
	struct ibv_rwq_ind_table *tbl;
	struct ibv_qp *hqp;
	struct ibv_flow *fl;
	struct ibv_mr *tmr, *rmr;
};

static uint8_t txbuf[4096];
static uint8_t rxbuf[4 * 64 * 2048];

static int
rss_setup(struct rss_env *e, uint64_t fields)
{
	struct ibv_rwq_ind_table_init_attr ta;
	struct ibv_qp_init_attr_ex qa;
	struct ibv_wq_init_attr wa;
	struct ibv_wq_attr wm;
	unsigned int i, j;

	memset(e, 0, sizeof(*e));
	TEST_ASSERT_SUCCESS(t_setup_full(&e->d, "rss", "loop"), "");
	e->tmr = swv_reg_mr(e->d.pd, txbuf, sizeof(txbuf), 0);
	e->rmr = swv_reg_mr(e->d.pd, rxbuf, sizeof(rxbuf),
			    IBV_ACCESS_LOCAL_WRITE);
	memset(&wa, 0, sizeof(wa));
	wa.wq_type = IBV_WQT_RQ;
	wa.max_wr = 64;
	wa.max_sge = 1;
	wa.pd = e->d.pd;
	wa.cq = e->d.rcq;
	memset(&wm, 0, sizeof(wm));
	wm.attr_mask = IBV_WQ_ATTR_STATE;
	wm.wq_state = IBV_WQS_RDY;
	for (i = 0; i < 4; i++) {
		e->wq[i] = swv_create_wq(e->d.ctx, &wa);
		TEST_ASSERT_NOT_NULL(e->wq[i], "");
		TEST_ASSERT_SUCCESS(swv_modify_wq(e->wq[i], &wm), "");
		for (j = 0; j < 64; j++) {
			struct ibv_sge sge = {
				(uintptr_t)rxbuf + (i * 64 + j) * 2048, 2048,
				e->rmr->lkey,
			};
			struct ibv_recv_wr wr = {
				.wr_id = i, .sg_list = &sge, .num_sge = 1,
			}, *bad;

			TEST_ASSERT_SUCCESS(ibv_post_wq_recv(e->wq[i], &wr,
							     &bad), "");
		}
	}
	memset(&ta, 0, sizeof(ta));
	ta.log_ind_tbl_size = 2;
	ta.ind_tbl = e->wq;
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
	qa.rx_hash_conf.rx_hash_key = (uint8_t *)ms_key;
	qa.rx_hash_conf.rx_hash_fields_mask = fields;
	e->hqp = swv_create_qp_ex(e->d.ctx, &qa);
	TEST_ASSERT_NOT_NULL(e->hqp, "");
	e->fl = t_flow_eth(e->hqp, e->d.mac, 0);
	TEST_ASSERT_NOT_NULL(e->fl, "");
	return TEST_SUCCESS;
}

static void
rss_teardown(struct rss_env *e)
{
	unsigned int i;

	swv_destroy_flow(e->fl);
	swv_destroy_qp(e->hqp);
	swv_destroy_rwq_ind_table(e->tbl);
	for (i = 0; i < 4; i++)
		swv_destroy_wq(e->wq[i]);
	swv_dereg_mr(e->tmr);
	swv_dereg_mr(e->rmr);
	t_teardown(&e->d);
}

/* Send one frame; return the index of the WQ that got it, or -1. */
static int
rss_one(struct rss_env *e, uint32_t len)
{
	struct ibv_wc wc;
	unsigned int i;

	if (t_send(e->d.sqp, e->tmr, txbuf, len, 0) != 0 ||
	    t_poll(e->d.scq, &wc, 1, 2000) != 1 ||
	    t_poll(e->d.rcq, &wc, 1, 2000) != 1 ||
	    wc.status != IBV_WC_SUCCESS || wc.byte_len != len)
		return -1;
	for (i = 0; i < 4; i++)
		if (wc.qp_num == e->wq[i]->wq_num && wc.wr_id == i)
			return (int)i;
	return -1;
}

#define ALL_V4 (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4)
#define ALL_V6 (IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6)
#define ALL_TCP (IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP)
#define ALL_UDP (IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP)

static int
test_hash_qp_spread(void)
{
	struct rss_env e;
	unsigned int i, seen = 0;
	uint32_t len;
	int q;

	if (rss_setup(&e, ALL_V4 | ALL_V6 | ALL_TCP) != TEST_SUCCESS)
		return TEST_FAILED;
	for (i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		/* TCP: the 4-tuple hash picks the queue. */
		len = v4_frame(txbuf, e.d.mac, &v4[i], IPPROTO_TCP);
		q = rss_one(&e, len);
		TEST_ASSERT_EQUAL(q, (int)(v4[i].tcp_hash & 3), "v4 TCP %u", i);
		seen |= 1u << q;
		/* UDP ports are not selected: the IP pair alone. */
		len = v4_frame(txbuf, e.d.mac, &v4[i], IPPROTO_UDP);
		q = rss_one(&e, len);
		TEST_ASSERT_EQUAL(q, (int)(v4[i].ip_hash & 3), "v4 UDP %u", i);
	}
	for (i = 0; i < sizeof(v6) / sizeof(v6[0]); i++) {
		len = v6_frame(txbuf, e.d.mac, &v6[i]);
		q = rss_one(&e, len);
		TEST_ASSERT_EQUAL(q, (int)(v6[i].tcp_hash & 3), "v6 TCP %u", i);
		seen |= 1u << q;
	}
	printf("    queues used: %#x\n", seen);
	TEST_ASSERT(__builtin_popcount(seen) >= 3, "flows spread");
	/* Not IP: hash 0, entry 0. */
	t_frame(txbuf, 64, e.d.mac, e.d.mac, 1);
	TEST_ASSERT_EQUAL(rss_one(&e, 64), 0, "non-IP frame");
	TEST_ASSERT(t_counters_ok(e.d.ctx), "invariant");
	rss_teardown(&e);
	return TEST_SUCCESS;
}

static int
test_hash_fields_subset(void)
{
	struct rss_env e;
	uint8_t in[4];
	unsigned int i;
	uint32_t h;

	/* Source address only. */
	if (rss_setup(&e, IBV_RX_HASH_SRC_IPV4) != TEST_SUCCESS)
		return TEST_FAILED;
	for (i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		inet_pton(AF_INET, v4[i].src, in);
		h = swv_toeplitz(ms_key, in, 4);
		v4_frame(txbuf, e.d.mac, &v4[i], IPPROTO_TCP);
		TEST_ASSERT_EQUAL(rss_one(&e, 64), (int)(h & 3), "%u", i);
	}
	rss_teardown(&e);
	/* No field: always entry 0. */
	if (rss_setup(&e, 0) != TEST_SUCCESS)
		return TEST_FAILED;
	for (i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		v4_frame(txbuf, e.d.mac, &v4[i], IPPROTO_TCP);
		TEST_ASSERT_EQUAL(rss_one(&e, 64), 0, "%u", i);
	}
	rss_teardown(&e);
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite = {
	.name = "swverbs rss",
	.cases = {
		TEST_CASE(test_toeplitz_vectors),
		TEST_CASE(test_hash_qp_spread),
		TEST_CASE(test_hash_fields_subset),
		TEST_CASES_END(),
	},
};

int
main(void)
{
	return unit_test_suite_runner(&suite);
}
