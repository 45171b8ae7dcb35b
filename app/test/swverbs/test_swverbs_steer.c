/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * swverbs flow steering: every spec type with frames that must and must not
 * match (partial masks, inner vs outer, VLAN, fragments), TAG in CQEs, DROP
 * counted, SNIFFER copies, priorities and same-priority overlap, the errno
 * cases, 100k rules inserted and removed with lookups still right, rules
 * changed while traffic flows, and a burst of frames steered together. One
 * device on a loop wire.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "swv_test_util.h"

#define BUF_SZ 4096
#define NRECV 256

static uint8_t txbuf[BUF_SZ];
static uint8_t rxarea[NRECV * 2048];
static struct tdev d;
static struct ibv_mr *tmr, *rmr;
static struct ibv_qp *q2;
static struct ibv_wc last_wc;

/* Keep both receiving QPs stocked: wr_id 1 for rqp, 2 for q2. */
static int
restock(struct ibv_qp *qp, uint64_t id, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (t_recv(qp, rmr, rxarea + (id - 1) * (NRECV / 2) * 2048,
			   2048, id) != 0)
			return -1;
	return 0;
}

enum outcome { O_ERR = -1, O_NOMATCH, O_RQP, O_Q2, O_DROP };

/* Send a frame; tell where it went. A received CQE is kept in last_wc. */
static int
sendf(const void *frame, uint32_t len)
{
	struct swv_port_counters c0, c1;
	struct ibv_wc wc;

	memcpy(txbuf, frame, len);
	swv_query_port_counters(d.ctx, &c0);
	if (t_send(d.sqp, tmr, txbuf, len, 0) != 0)
		return O_ERR;
	if (t_poll(d.scq, &wc, 1, 2000) != 1)
		return O_ERR;
	T_WAIT((swv_query_port_counters(d.ctx, &c1), c1.rx_frames >
		c0.rx_frames));
	if (c1.rx_frames != c0.rx_frames + 1)
		return O_ERR;
	if (c1.rx_no_match != c0.rx_no_match)
		return O_NOMATCH;
	if (c1.rx_dropped != c0.rx_dropped)
		return O_DROP;
	if (c1.rx_delivered != c0.rx_delivered + 1)
		return O_ERR;
	if (t_poll(d.rcq, &last_wc, 1, 2000) != 1 ||
	    last_wc.status != IBV_WC_SUCCESS)
		return O_ERR;
	if (restock(last_wc.wr_id == 1 ? d.rqp : q2, last_wc.wr_id, 1) != 0)
		return O_ERR;
	return last_wc.wr_id == 1 ? O_RQP : O_Q2;
}

#include "swv_test_frames.h"


/* Create, send each frame and compare the outcome, destroy. */
#define CHECK(fr, want, what) \
	TEST_ASSERT_EQUAL(sendf((fr)->b, (fr)->len), (want), "%s", what)

static int
setup(void)
{
	if (t_setup_full(&d, "steer", "loop") != 0)
		return -1;
	tmr = swv_reg_mr(d.pd, txbuf, BUF_SZ, 0);
	rmr = swv_reg_mr(d.pd, rxarea, sizeof(rxarea), IBV_ACCESS_LOCAL_WRITE);
	q2 = t_raw_qp(&d, 1, 256, 1, 0);
	if (tmr == NULL || rmr == NULL || q2 == NULL ||
	    t_qp_to(q2, IBV_QPS_RTR) != 0)
		return -1;
	if (restock(d.rqp, 1, 64) != 0 || restock(q2, 2, 64) != 0)
		return -1;
	return 0;
}

static int
test_eth_vlan(void)
{
	struct ibv_flow_spec_eth *e;
	struct ibv_flow *fl;
	struct rb r;
	struct fb f;

	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	e = r_eth(&r, false);
	e->val.vlan_tag = htons(100);
	e->mask.vlan_tag = htons(0x0fff);
	e->val.ether_type = htons(0x0800);
	e->mask.ether_type = 0xffff;
	fl = r_create(&r, d.rqp);
	TEST_ASSERT_NOT_NULL(fl, "");
	f_eth(&f, mac_a, 1, 100, 0x0800);
	f_pad(&f);
	CHECK(&f, O_RQP, "vlan 100 ipv4");
	f_eth(&f, mac_a, 1, 0x2000 | 100, 0x0800);
	f_pad(&f);
	CHECK(&f, O_RQP, "PCP outside the mask");
	f_eth(&f, mac_a, 1, 101, 0x0800);
	f_pad(&f);
	CHECK(&f, O_NOMATCH, "vlan 101");
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_pad(&f);
	CHECK(&f, O_NOMATCH, "untagged");
	/* QinQ: the first tag is matched, the type after both. */
	f_eth(&f, mac_a, 2, 100, 0x0800);
	f_pad(&f);
	CHECK(&f, O_RQP, "qinq");
	f_eth(&f, mac_a, 2, 99, 0x0800);
	f_pad(&f);
	CHECK(&f, O_NOMATCH, "qinq, inner tag 100");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fl), "");
	/* Partial MAC mask: the multicast bit. */
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	e = r_eth(&r, false);
	e->val.dst_mac[0] = 1;
	e->mask.dst_mac[0] = 1;
	fl = r_create(&r, q2);
	f_eth(&f, (const uint8_t []){ 0x33, 0x33, 0, 0, 0, 1 }, 0, 0, 0x86dd);
	f_pad(&f);
	CHECK(&f, O_Q2, "multicast");
	f_eth(&f, mac_a, 0, 0, 0x86dd);
	f_pad(&f);
	CHECK(&f, O_NOMATCH, "unicast");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fl), "");
	return TEST_SUCCESS;
}

static int
test_ipv4(void)
{
	struct ibv_flow_spec_ipv4_ext *ip;
	struct ibv_flow_spec_ipv4 *p4;
	struct ibv_flow *fl, *fl2;
	struct rb r;
	struct fb f;

	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	r_eth(&r, false);
	ip = r_ip4(&r, false);
	ip->val.dst_ip = htonl(0x0a000200);
	ip->mask.dst_ip = htonl(0xffffff00);
	ip->val.proto = 17;
	ip->mask.proto = 0xff;
	ip->val.tos = 0x10;
	ip->mask.tos = 0xfc;
	ip->val.ttl = 64;
	ip->mask.ttl = 0xff;
	fl = r_create(&r, d.rqp);
	TEST_ASSERT_NOT_NULL(fl, "");
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_ipv4(&f, 1, 0x0a000207, 17, 0x11, 64, 0, 0);
	f_pad(&f);
	CHECK(&f, O_RQP, "dst /24, proto, tos (ECN bits masked), ttl");
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_ipv4(&f, 1, 0x0a000307, 17, 0x10, 64, 0, 0);
	f_pad(&f);
	CHECK(&f, O_NOMATCH, "other /24");
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_ipv4(&f, 1, 0x0a000207, 6, 0x10, 64, 0, 0);
	f_pad(&f);
	CHECK(&f, O_NOMATCH, "proto");
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_ipv4(&f, 1, 0x0a000207, 17, 0x10, 63, 0, 0);
	f_pad(&f);
	CHECK(&f, O_NOMATCH, "ttl");
	f_eth(&f, mac_a, 0, 0, 0x86dd);
	f_ipv6(&f, ip6_a, ip6_b, 17, 0, 0, 64);
	f_pad(&f);
	CHECK(&f, O_NOMATCH, "IPv6");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fl), "");
	/* The plain IPv4 spec, and IPv4 flags (DF). */
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	p4 = r_add(&r, IBV_FLOW_SPEC_IPV4, sizeof(*p4));
	p4->val.src_ip = htonl(0x0a000001);
	p4->mask.src_ip = 0xffffffff;
	fl = r_create(&r, d.rqp);
	TEST_ASSERT_NOT_NULL(fl, "");
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	ip = r_ip4(&r, false);
	ip->val.flags = 2;
	ip->mask.flags = 2;
	fl2 = r_create(&r, q2);
	TEST_ASSERT_NOT_NULL(fl2, "");
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_ipv4(&f, 0x0a000001, 2, 50, 0, 64, 0, 2);
	f_pad(&f);
	CHECK(&f, O_RQP, "src, with options");
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_ipv4(&f, 0x0a000009, 2, 50, 0, 64, 0x4000, 0);
	f_pad(&f);
	CHECK(&f, O_Q2, "DF");
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_ipv4(&f, 0x0a000009, 2, 50, 0, 64, 0, 0);
	f_pad(&f);
	CHECK(&f, O_NOMATCH, "no DF");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fl), "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fl2), "");
	return TEST_SUCCESS;
}

static int
test_ipv6(void)
{
	struct ibv_flow_spec_ipv6 *ip;
	struct ibv_flow *fl;
	struct rb r;
	struct fb f;

	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	ip = r_add(&r, IBV_FLOW_SPEC_IPV6, sizeof(*ip));
	memcpy(ip->val.dst_ip, ip6_b, 16);
	memset(ip->mask.dst_ip, 0xff, 16);
	ip->val.flow_label = htonl(0x12345);
	ip->mask.flow_label = htonl(0xfffff);
	ip->val.next_hdr = 6;
	ip->mask.next_hdr = 0xff;
	ip->val.traffic_class = 0xb8;
	ip->mask.traffic_class = 0xff;
	ip->val.hop_limit = 7;
	ip->mask.hop_limit = 0xff;
	fl = r_create(&r, d.rqp);
	TEST_ASSERT_NOT_NULL(fl, "");
	f_eth(&f, mac_a, 0, 0, 0x86dd);
	f_ipv6(&f, ip6_a, ip6_b, 6, 0xb8, 0x12345, 7);
	f_l4(&f, 1, 2, 1);
	CHECK(&f, O_RQP, "all fields");
	f_eth(&f, mac_a, 0, 0, 0x86dd);
	f_ipv6(&f, ip6_a, ip6_b, 6, 0xb8, 0x12346, 7);
	f_l4(&f, 1, 2, 1);
	CHECK(&f, O_NOMATCH, "flow label");
	f_eth(&f, mac_a, 0, 0, 0x86dd);
	f_ipv6(&f, ip6_a, ip6_a, 6, 0xb8, 0x12345, 7);
	f_l4(&f, 1, 2, 1);
	CHECK(&f, O_NOMATCH, "dst");
	f_eth(&f, mac_a, 0, 0, 0x86dd);
	f_ipv6(&f, ip6_a, ip6_b, 6, 0xb0, 0x12345, 7);
	f_l4(&f, 1, 2, 1);
	CHECK(&f, O_NOMATCH, "traffic class");
	f_eth(&f, mac_a, 0, 0, 0x86dd);
	f_ipv6(&f, ip6_a, ip6_b, 6, 0xb8, 0x12345, 8);
	f_l4(&f, 1, 2, 1);
	CHECK(&f, O_NOMATCH, "hop limit");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fl), "");
	return TEST_SUCCESS;
}

static int
test_l4_fragments(void)
{
	struct ibv_flow_spec_tcp_udp *l4;
	struct ibv_flow *fl, *ft;
	struct rb r;
	struct fb f;

	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	r_ip4(&r, false);
	l4 = r_l4(&r, false, false);
	l4->val.dst_port = htons(53);
	l4->mask.dst_port = 0xffff;
	l4->val.src_port = htons(0x1200);
	l4->mask.src_port = htons(0xff00);
	fl = r_create(&r, d.rqp);
	TEST_ASSERT_NOT_NULL(fl, "");
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	l4 = r_l4(&r, true, false);
	l4->val.dst_port = htons(443);
	l4->mask.dst_port = 0xffff;
	ft = r_create(&r, q2);
	TEST_ASSERT_NOT_NULL(ft, "");
	f_udp4(&f, 1, 2, 0x1234, 53);
	CHECK(&f, O_RQP, "udp 53, sport in 0x12xx");
	f_udp4(&f, 1, 2, 0x1334, 53);
	CHECK(&f, O_NOMATCH, "sport outside");
	f_udp4(&f, 1, 2, 0x1234, 54);
	CHECK(&f, O_NOMATCH, "dport");
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_ipv4(&f, 1, 2, 6, 0, 64, 0, 0);
	f_l4(&f, 0x1234, 53, 1);
	CHECK(&f, O_NOMATCH, "tcp 53 for a udp rule");
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_ipv4(&f, 1, 2, 6, 0, 64, 0, 0);
	f_l4(&f, 5, 443, 1);
	CHECK(&f, O_Q2, "tcp 443");
	f_eth(&f, mac_a, 0, 0, 0x86dd);
	f_ipv6(&f, ip6_a, ip6_b, 6, 0, 0, 64);
	f_l4(&f, 5, 443, 1);
	CHECK(&f, O_Q2, "tcp 443 over IPv6");
	/* Fragments: the first has ports, the others do not. */
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_ipv4(&f, 1, 2, 17, 0, 64, 0x2000, 0);
	f_l4(&f, 0x1234, 53, 0);
	f_pad(&f);
	CHECK(&f, O_RQP, "first fragment");
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_ipv4(&f, 1, 2, 17, 0, 64, 0x2010, 0);
	f_l4(&f, 0x1234, 53, 0);
	f_pad(&f);
	CHECK(&f, O_NOMATCH, "later fragment");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fl), "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(ft), "");
	return TEST_SUCCESS;
}

static int
test_vxlan_inner(void)
{
	struct ibv_flow_spec_tunnel *t;
	struct ibv_flow_spec_ipv4_ext *ip;
	struct ibv_flow_spec_tcp_udp *l4;
	struct ibv_flow *fl, *fo;
	struct rb r;
	struct fb f;

	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	r_eth(&r, false);
	r_ip4(&r, false);
	r_l4(&r, false, false);
	t = r_add(&r, IBV_FLOW_SPEC_VXLAN_TUNNEL, sizeof(*t));
	t->val.tunnel_id = htonl(42);
	t->mask.tunnel_id = htonl(0xffffff);
	r_eth(&r, true);
	ip = r_ip4(&r, true);
	ip->val.src_ip = htonl(0x0b000001);
	ip->mask.src_ip = 0xffffffff;
	l4 = r_l4(&r, true, true);
	l4->val.dst_port = htons(80);
	l4->mask.dst_port = 0xffff;
	fl = r_create(&r, d.rqp);
	TEST_ASSERT_NOT_NULL(fl, "");
	/* The outer UDP dst is 4789: an outer rule on it sees every VXLAN. */
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 1);
	l4 = r_l4(&r, false, false);
	l4->val.dst_port = htons(4789);
	l4->mask.dst_port = 0xffff;
	fo = r_create(&r, q2);
	TEST_ASSERT_NOT_NULL(fo, "");
	f_vxlan(&f, 42, 0x0b000001, 80, 1);
	CHECK(&f, O_RQP, "vni 42, inner src, inner tcp 80");
	f_vxlan(&f, 43, 0x0b000001, 80, 1);
	CHECK(&f, O_Q2, "vni 43");
	f_vxlan(&f, 42, 0x0b000009, 80, 1);
	CHECK(&f, O_Q2, "inner src");
	f_vxlan(&f, 42, 0x0b000001, 81, 1);
	CHECK(&f, O_Q2, "inner port");
	f_vxlan(&f, 42, 0x0b000001, 80, 0);
	CHECK(&f, O_Q2, "inner udp for a tcp rule");
	/* An inner spec never matches the outer headers. */
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_ipv4(&f, 0x0b000001, 2, 6, 0, 64, 0, 0);
	f_l4(&f, 1, 80, 1);
	CHECK(&f, O_NOMATCH, "same headers, not tunnelled");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fl), "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fo), "");
	return TEST_SUCCESS;
}

static int
test_gre_mpls_esp(void)
{
	struct ibv_flow_spec_gre *g;
	struct ibv_flow_spec_mpls *m;
	struct ibv_flow_spec_esp *e;
	struct ibv_flow_spec_ipv4_ext *ip;
	struct ibv_flow *fg, *fm, *fe;
	struct rb r;
	struct fb f;

	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	g = r_add(&r, IBV_FLOW_SPEC_GRE, sizeof(*g));
	g->val.c_ks_res0_ver = htons(0x2000);
	g->mask.c_ks_res0_ver = htons(0xb007);
	g->val.protocol = htons(0x0800);
	g->mask.protocol = 0xffff;
	g->val.key = htonl(7);
	g->mask.key = 0xffffffff;
	ip = r_ip4(&r, true);
	ip->val.dst_ip = htonl(0x0c000001);
	ip->mask.dst_ip = 0xffffffff;
	fg = r_create(&r, d.rqp);
	TEST_ASSERT_NOT_NULL(fg, "gre");
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_ipv4(&f, 1, 2, 47, 0, 64, 0, 0);
	put16(&f, 0x2000);
	put16(&f, 0x0800);
	put32(&f, 7);
	f_ipv4(&f, 5, 0x0c000001, 17, 0, 64, 0, 0);
	f_l4(&f, 1, 2, 0);
	CHECK(&f, O_RQP, "gre key 7, inner dst");
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_ipv4(&f, 1, 2, 47, 0, 64, 0, 0);
	put16(&f, 0x2000);
	put16(&f, 0x0800);
	put32(&f, 8);
	f_ipv4(&f, 5, 0x0c000001, 17, 0, 64, 0, 0);
	f_l4(&f, 1, 2, 0);
	CHECK(&f, O_NOMATCH, "gre key 8");
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_ipv4(&f, 1, 2, 47, 0, 64, 0, 0);
	put16(&f, 0xa000);	/* checksum and key */
	put16(&f, 0x0800);
	put32(&f, 0);
	put32(&f, 7);
	f_ipv4(&f, 5, 0x0c000001, 17, 0, 64, 0, 0);
	f_l4(&f, 1, 2, 0);
	CHECK(&f, O_NOMATCH, "C bit set, masked in");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fg), "");

	/* MPLS: label 1000, tc and s matched, TTL not. */
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	m = r_add(&r, IBV_FLOW_SPEC_MPLS, sizeof(*m));
	m->val.label = htonl((1000u << 12) | (3u << 9) | (1u << 8));
	m->mask.label = htonl(0xffffff00);
	fm = r_create(&r, d.rqp);
	TEST_ASSERT_NOT_NULL(fm, "mpls");
	f_eth(&f, mac_a, 0, 0, 0x8847);
	put32(&f, (1000u << 12) | (3u << 9) | (1u << 8) | 64);
	f_ipv4(&f, 1, 2, 17, 0, 64, 0, 0);
	f_l4(&f, 1, 2, 0);
	CHECK(&f, O_RQP, "mpls label 1000");
	f_eth(&f, mac_a, 0, 0, 0x8847);
	put32(&f, (1001u << 12) | (3u << 9) | (1u << 8) | 64);
	f_ipv4(&f, 1, 2, 17, 0, 64, 0, 0);
	CHECK(&f, O_NOMATCH, "mpls label 1001");
	/* MPLS in UDP (6635). */
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_ipv4(&f, 1, 2, 17, 0, 64, 0, 0);
	f_l4(&f, 7, 6635, 0);
	put32(&f, (1000u << 12) | (3u << 9) | (1u << 8) | 1);
	f_ipv4(&f, 1, 2, 17, 0, 64, 0, 0);
	CHECK(&f, O_RQP, "mpls over udp");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fm), "");

	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	e = r_add(&r, IBV_FLOW_SPEC_ESP, sizeof(*e));
	e->val.spi = htonl(0xabcd);
	e->mask.spi = 0xffffffff;
	fe = r_create(&r, q2);
	TEST_ASSERT_NOT_NULL(fe, "esp");
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_ipv4(&f, 1, 2, 50, 0, 64, 0, 0);
	put32(&f, 0xabcd);
	put32(&f, 1);
	f_pad(&f);
	CHECK(&f, O_Q2, "esp spi");
	f_eth(&f, mac_a, 0, 0, 0x86dd);
	f_ipv6(&f, ip6_a, ip6_b, 50, 0, 0, 64);
	put32(&f, 0xabcd);
	put32(&f, 9);
	CHECK(&f, O_Q2, "esp spi over IPv6");
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_ipv4(&f, 1, 2, 50, 0, 64, 0, 0);
	put32(&f, 0xabce);
	put32(&f, 1);
	f_pad(&f);
	CHECK(&f, O_NOMATCH, "esp other spi");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fe), "");
	return TEST_SUCCESS;
}

static int
test_actions_sniffer(void)
{
	struct ibv_flow_spec_action_tag *tag;
	struct ibv_flow_spec_tcp_udp *l4;
	struct ibv_flow *ft, *fd, *fs;
	struct rb r;
	struct fb f;
	struct ibv_wc wc;

	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	l4 = r_l4(&r, false, false);
	l4->val.dst_port = htons(1000);
	l4->mask.dst_port = 0xffff;
	tag = r_add(&r, IBV_FLOW_SPEC_ACTION_TAG, sizeof(*tag));
	tag->tag_id = 0x123456;
	ft = r_create(&r, d.rqp);
	TEST_ASSERT_NOT_NULL(ft, "tag");
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	l4 = r_l4(&r, false, false);
	l4->val.dst_port = htons(1001);
	l4->mask.dst_port = 0xffff;
	r_add(&r, IBV_FLOW_SPEC_ACTION_DROP,
	      sizeof(struct ibv_flow_spec_action_drop));
	fd = r_create(&r, d.rqp);
	TEST_ASSERT_NOT_NULL(fd, "drop");
	/* The tag comes back through ibv_wc_read_flow_tag(). */
	{
		struct ibv_cq_init_attr_ex ca = {
			.cqe = 64,
			.wc_flags = IBV_WC_EX_WITH_FLOW_TAG |
				    IBV_WC_EX_WITH_BYTE_LEN,
		};
		struct ibv_poll_cq_attr pa = { 0 };
		struct ibv_cq_ex *cqx = swv_create_cq_ex(d.ctx, &ca);
		struct ibv_qp_init_attr qa;
		struct ibv_qp *qx;
		struct ibv_flow *fx;
		uint32_t got;

		TEST_ASSERT_NOT_NULL(cqx, "");
		memset(&qa, 0, sizeof(qa));
		qa.send_cq = ibv_cq_ex_to_cq(cqx);
		qa.recv_cq = ibv_cq_ex_to_cq(cqx);
		qa.qp_type = IBV_QPT_RAW_PACKET;
		qa.cap.max_recv_wr = 4;
		qa.cap.max_recv_sge = 1;
		qa.cap.max_send_wr = 1;
		qa.cap.max_send_sge = 1;
		qx = swv_create_qp(d.pd, &qa);
		TEST_ASSERT_NOT_NULL(qx, "");
		TEST_ASSERT_SUCCESS(t_qp_to(qx, IBV_QPS_RTR), "");
		TEST_ASSERT_SUCCESS(t_recv(qx, rmr, rxarea, 2048, 77), "");
		r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
		l4 = r_l4(&r, false, false);
		l4->val.dst_port = htons(1002);
		l4->mask.dst_port = 0xffff;
		tag = r_add(&r, IBV_FLOW_SPEC_ACTION_TAG, sizeof(*tag));
		tag->tag_id = 0xbeef;
		fx = r_create(&r, qx);
		TEST_ASSERT_NOT_NULL(fx, "");
		f_udp4(&f, 1, 2, 9, 1002);
		memcpy(txbuf, f.b, f.len);
		TEST_ASSERT_SUCCESS(t_send(d.sqp, tmr, txbuf, f.len, 0), "");
		TEST_ASSERT_EQUAL(t_poll(d.scq, &wc, 1, 2000), 1, "");
		T_WAIT(ibv_start_poll(cqx, &pa) == 0);
		TEST_ASSERT_EQUAL(cqx->wr_id, 77, "");
		got = ibv_wc_read_flow_tag(cqx);
		ibv_end_poll(cqx);
		TEST_ASSERT_EQUAL(got, 0xbeef, "flow tag via cq_ex");
		TEST_ASSERT_SUCCESS(swv_destroy_flow(fx), "");
		TEST_ASSERT_SUCCESS(swv_destroy_qp(qx), "");
		TEST_ASSERT_SUCCESS(swv_destroy_cq(ibv_cq_ex_to_cq(cqx)), "");
	}
	f_udp4(&f, 1, 2, 9, 1000);
	CHECK(&f, O_RQP, "tagged");
	f_udp4(&f, 1, 2, 9, 1001);
	CHECK(&f, O_DROP, "dropped and counted");
	TEST_ASSERT(t_counters_ok(d.ctx), "invariant with drops");
	/* SNIFFER: q2 gets a copy of every frame, steering goes on. */
	r_init(&r, IBV_FLOW_ATTR_SNIFFER, 0);
	fs = r_create(&r, q2);
	TEST_ASSERT_NOT_NULL(fs, "sniffer");
	f_udp4(&f, 1, 2, 9, 1000);
	/* The copy is completed first, then the steered frame. */
	CHECK(&f, O_Q2, "sniffer copy");
	TEST_ASSERT_EQUAL(last_wc.byte_len, f.len, "");
	TEST_ASSERT_EQUAL(t_poll(d.rcq, &wc, 1, 2000), 1, "");
	TEST_ASSERT_EQUAL(wc.wr_id, 1, "steered as before");
	TEST_ASSERT_EQUAL(wc.wc_flags & IBV_WC_WITH_IMM, 0, "");
	restock(d.rqp, 1, 1);
	f_udp4(&f, 1, 2, 9, 1001);
	CHECK(&f, O_DROP, "a dropped frame...");
	TEST_ASSERT_EQUAL(t_poll(d.rcq, &wc, 1, 2000), 1, "...is sniffed");
	restock(q2, 2, 1);
	f_udp4(&f, 1, 2, 9, 5);
	CHECK(&f, O_NOMATCH, "so is an unmatched one");
	TEST_ASSERT_EQUAL(t_poll(d.rcq, &wc, 1, 2000), 1, "");
	restock(q2, 2, 1);
	TEST_ASSERT(t_counters_ok(d.ctx), "copies are not counted");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fs), "");
	f_udp4(&f, 1, 2, 9, 5);
	CHECK(&f, O_NOMATCH, "");
	TEST_ASSERT_EQUAL(t_poll(d.rcq, &wc, 1, 50), 0, "no sniffer now");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(ft), "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fd), "");
	return TEST_SUCCESS;
}

static int
test_priority_overlap(void)
{
	struct ibv_flow_spec_tcp_udp *l4;
	struct ibv_flow_spec_eth *e;
	struct ibv_flow *a, *b, *c, *dflt;
	struct rb r;
	struct fb f;

	f_udp4(&f, 1, 2, 9, 53);
	/* Broad rule, priority 5, to rqp; narrow, priority 1, to q2. */
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 5);
	r_ip4(&r, false);
	a = r_create(&r, d.rqp);
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 1);
	l4 = r_l4(&r, false, false);
	l4->val.dst_port = htons(53);
	l4->mask.dst_port = 0xffff;
	b = r_create(&r, q2);
	TEST_ASSERT(a != NULL && b != NULL, "");
	CHECK(&f, O_Q2, "lower priority value wins");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(b), "");
	CHECK(&f, O_RQP, "then the broad one");
	/* Same priority, different masks: the first created wins. */
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 5);
	l4 = r_l4(&r, false, false);
	l4->val.dst_port = htons(53);
	l4->mask.dst_port = 0xffff;
	b = r_create(&r, q2);
	CHECK(&f, O_RQP, "equal priority: earlier rule");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(a), "");
	CHECK(&f, O_Q2, "");
	/* Same mask and value: the earlier, then the next one. */
	c = r_create(&r, d.rqp);
	TEST_ASSERT_NOT_NULL(c, "");
	CHECK(&f, O_Q2, "identical rules: earlier");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(b), "");
	CHECK(&f, O_RQP, "identical rules: the survivor");
	/* Identical with a better priority, created later, takes over. */
	r.attr.priority = 2;
	b = r_create(&r, q2);
	CHECK(&f, O_Q2, "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(b), "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(c), "");
	/* NORMAL at any priority beats ALL_DEFAULT at 0. */
	dflt = t_flow_default(q2, IBV_FLOW_ATTR_ALL_DEFAULT, 0);
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0xffff);
	e = r_eth(&r, false);
	(void)e;
	a = r_create(&r, d.rqp);
	CHECK(&f, O_RQP, "normal before default");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(a), "");
	CHECK(&f, O_Q2, "default");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(dflt), "");
	return TEST_SUCCESS;
}

static int
test_errors(void)
{
	struct ibv_flow_spec_tcp_udp *l4;
	struct ibv_flow_spec_action_tag *tag;
	struct rb r;

	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	r_add(&r, 0x7f, 8);
	TEST_ASSERT_NULL(r_create(&r, d.rqp), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "unknown type");
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	r_add(&r, IBV_FLOW_SPEC_UDP, sizeof(struct ibv_flow_spec_tcp_udp) + 4);
	TEST_ASSERT_NULL(r_create(&r, d.rqp), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "size mismatch");
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	l4 = r_l4(&r, false, false);
	l4 = r_l4(&r, true, false);
	TEST_ASSERT_NULL(r_create(&r, d.rqp), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "two L4 specs");
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	r_add(&r, IBV_FLOW_SPEC_ACTION_COUNT,
	      sizeof(struct ibv_flow_spec_counter_action));
	TEST_ASSERT_NULL(r_create(&r, d.rqp), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "count without a counters object");
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	r_add(&r, IBV_FLOW_SPEC_ACTION_HANDLE,
	      sizeof(struct ibv_flow_spec_action_handle));
	TEST_ASSERT_NULL(r_create(&r, d.rqp), "");
	TEST_ASSERT_EQUAL(errno, ENOTSUP, "handle");
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	r_add(&r, IBV_FLOW_SPEC_GRE | IBV_FLOW_SPEC_INNER,
	      sizeof(struct ibv_flow_spec_gre));
	TEST_ASSERT_NULL(r_create(&r, d.rqp), "");
	TEST_ASSERT_EQUAL(errno, ENOTSUP, "inner tunnel");
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	tag = r_add(&r, IBV_FLOW_SPEC_ACTION_TAG, sizeof(*tag));
	tag->tag_id = 0x1000000;
	TEST_ASSERT_NULL(r_create(&r, d.rqp), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "tag over 24 bits");
	r_init(&r, IBV_FLOW_ATTR_SNIFFER, 0);
	r_l4(&r, false, false);
	TEST_ASSERT_NULL(r_create(&r, d.rqp), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "sniffer with a spec");
	r_init(&r, 42, 0);
	TEST_ASSERT_NULL(r_create(&r, d.rqp), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "rule type");
	(void)l4;
	return TEST_SUCCESS;
}

/* 100k rules of one mask (plus a few others), lookups, then removal. */
static int
test_many_rules(void)
{
	enum { N = 100000 };
	struct ibv_flow_spec_ipv4_ext *ip;
	struct ibv_flow_spec_tcp_udp *l4;
	struct ibv_flow **fl;
	struct timespec t0, t1;
	struct rb r;
	struct fb f;
	double s;
	int i;

	fl = calloc(N, sizeof(*fl));
	TEST_ASSERT_NOT_NULL(fl, "");
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	ip = r_ip4(&r, false);
	ip->mask.dst_ip = 0xffffffff;
	l4 = r_l4(&r, false, false);
	l4->mask.dst_port = 0xffff;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < N; i++) {
		ip->val.dst_ip = htonl(0x0a000000 + (uint32_t)i);
		l4->val.dst_port = htons((uint16_t)(1000 + (i & 7)));
		fl[i] = r_create(&r, (i & 1) ? q2 : d.rqp);
		TEST_ASSERT_NOT_NULL(fl[i], "rule %d: %d", i, errno);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("  %d inserts: %.0f rules/s\n", N, N / s);
	for (i = 0; i < N; i += 9973) {
		f_udp4(&f, 1, 0x0a000000 + (uint32_t)i, 5,
		       (uint16_t)(1000 + (i & 7)));
		CHECK(&f, (i & 1) ? O_Q2 : O_RQP, "rule hit");
		f_udp4(&f, 1, 0x0a000000 + (uint32_t)i, 5,
		       (uint16_t)(1000 + ((i + 1) & 7)));
		CHECK(&f, O_NOMATCH, "port of another rule");
	}
	/* Remove the even ones. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < N; i += 2) {
		TEST_ASSERT_SUCCESS(swv_destroy_flow(fl[i]), "");
		fl[i] = NULL;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("  %d deletes: %.0f rules/s\n", N / 2, N / 2 / s);
	for (i = 0; i < N; i += 9973) {
		f_udp4(&f, 1, 0x0a000000 + (uint32_t)i, 5,
		       (uint16_t)(1000 + (i & 7)));
		CHECK(&f, (i & 1) ? O_Q2 : O_NOMATCH, "after removal");
	}
	for (i = 1; i < N; i += 2)
		TEST_ASSERT_SUCCESS(swv_destroy_flow(fl[i]), "");
	free(fl);
	f_udp4(&f, 1, 0x0a000001, 5, 1001);
	CHECK(&f, O_NOMATCH, "all gone");
	return TEST_SUCCESS;
}

/*
 * A rehash whose retirement of the old array fills the retire list (the
 * batch is freed after a grace period) must not free that array under the
 * rehash, which still reads it. Which update lands on the batch's last
 * entry depends on the list's length, so the test walks every length:
 * each round retires the same number of objects (a subtable that grows
 * once and is emptied, plus @extra rules of a kept subtable), and for an
 * odd number per round the rehash lands on every position of the batch
 * within SWV_BATCH rounds. Without the fix, ASan reports a use-after-free
 * in sub_rehash(); huge arrays (mmap-backed) fault in a plain build.
 */
#define SWV_BATCH 4096

static int
test_retire_mid_update(void)
{
	struct ibv_flow_spec_ipv4_ext *ip;
	struct ibv_flow_spec_tcp_udp *l4;
	struct ibv_flow *keep, *fl[8];
	struct rb r;
	struct fb f;
	unsigned int extra, round, k;

	/* Keeps the device's rule count above 0 (which flushes at once). */
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 1);
	l4 = r_l4(&r, false, false);
	l4->val.dst_port = htons(9);
	l4->mask.dst_port = 0xffff;
	keep = r_create(&r, d.rqp);
	TEST_ASSERT_NOT_NULL(keep, "%d", errno);
	for (extra = 0; extra < 2; extra++) {
		for (round = 0; round < SWV_BATCH; round++) {
			/* 7 keys: the 7th grows the 8-slot hash. */
			r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
			ip = r_ip4(&r, false);
			ip->mask.dst_ip = 0xffffffff;
			for (k = 0; k < 7; k++) {
				ip->val.dst_ip = htonl(0x0c000000 + k);
				fl[k] = r_create(&r, q2);
				TEST_ASSERT_NOT_NULL(fl[k], "round %u rule %u: %d",
						     round, k, errno);
			}
			if (round % 1024 == 0) {
				f_udp4(&f, 1, 0x0c000006, 5, 5);
				CHECK(&f, O_Q2, "a rule of the grown hash");
			}
			for (k = 0; k < 7; k++)
				TEST_ASSERT_SUCCESS(swv_destroy_flow(fl[k]),
						    "round %u", round);
			/* One more retired rule of the kept subtable. */
			if (extra > 0) {
				r_init(&r, IBV_FLOW_ATTR_NORMAL, 1);
				l4 = r_l4(&r, false, false);
				l4->val.dst_port = htons(10);
				l4->mask.dst_port = 0xffff;
				fl[7] = r_create(&r, d.rqp);
				TEST_ASSERT_NOT_NULL(fl[7], "%d", errno);
				TEST_ASSERT_SUCCESS(swv_destroy_flow(fl[7]), "");
			}
		}
	}
	f_udp4(&f, 1, 0x0c000006, 5, 5);
	CHECK(&f, O_NOMATCH, "all gone");
	f_udp4(&f, 1, 0x0c000006, 5, 9);
	CHECK(&f, O_RQP, "the kept rule");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(keep), "");
	return TEST_SUCCESS;
}

/* Rules come and go while a thread keeps sending. */
static volatile int churn_stop;

static void *
churn(void *arg)
{
	struct ibv_flow_spec_tcp_udp *l4;
	struct ibv_flow *fl[64] = { NULL };
	struct rb r;
	unsigned int i = 0;

	(void)arg;
	while (!churn_stop) {
		unsigned int k = i++ % 64;

		if (fl[k] != NULL)
			swv_destroy_flow(fl[k]);
		r_init(&r, IBV_FLOW_ATTR_NORMAL, (uint16_t)(k & 3));
		l4 = r_l4(&r, false, false);
		l4->val.dst_port = htons((uint16_t)(2000 + k));
		l4->mask.dst_port = 0xffff;
		fl[k] = r_create(&r, (k & 1) ? q2 : d.rqp);
	}
	for (i = 0; i < 64; i++)
		if (fl[i] != NULL)
			swv_destroy_flow(fl[i]);
	return NULL;
}

static int
test_churn_traffic(void)
{
	struct ibv_flow *keep;
	struct ibv_flow_spec_tcp_udp *l4;
	struct ibv_wc wc[64];
	struct rb r;
	struct fb f;
	pthread_t th;
	uint64_t end;
	unsigned int sent = 0, got = 0, i;
	struct swv_port_counters c0, c1;

	/* A stable rule the traffic must keep hitting. */
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	l4 = r_l4(&r, false, false);
	l4->val.dst_port = htons(7);
	l4->mask.dst_port = 0xffff;
	keep = r_create(&r, d.rqp);
	TEST_ASSERT_NOT_NULL(keep, "");
	f_udp4(&f, 1, 2, 3, 7);
	memcpy(txbuf, f.b, f.len);
	swv_query_port_counters(d.ctx, &c0);
	churn_stop = 0;
	TEST_ASSERT_SUCCESS(pthread_create(&th, NULL, churn, NULL), "");
	end = t_now_ms() + 1000;
	while (t_now_ms() < end) {
		int n;

		if (t_send(d.sqp, tmr, txbuf, f.len, 0) == 0)
			sent++;
		while ((n = ibv_poll_cq(d.scq, 64, wc)) > 0)
			got += (unsigned int)n;
		while ((n = ibv_poll_cq(d.rcq, 64, wc)) > 0)
			for (i = 0; i < (unsigned int)n; i++)
				restock(wc[i].wr_id == 1 ? d.rqp : q2,
					wc[i].wr_id, 1);
	}
	churn_stop = 1;
	pthread_join(th, NULL);
	end = t_now_ms() + 2000;
	while (got < sent && t_now_ms() < end) {
		int n = ibv_poll_cq(d.scq, 64, wc);

		if (n > 0)
			got += (unsigned int)n;
	}
	TEST_ASSERT_EQUAL(got, sent, "");
	T_WAIT((swv_query_port_counters(d.ctx, &c1),
		c1.rx_frames - c0.rx_frames == sent));
	printf("  %u frames during churn\n", sent);
	TEST_ASSERT_EQUAL(c1.rx_frames - c0.rx_frames, sent, "");
	TEST_ASSERT_EQUAL(c1.rx_no_match, c0.rx_no_match, "all matched");
	TEST_ASSERT(t_counters_ok(d.ctx), "");
	/* Drain what is left and restock. */
	{
		int n;

		usleep(10000);
		while ((n = ibv_poll_cq(d.rcq, 64, wc)) > 0)
			for (i = 0; i < (unsigned int)n; i++)
				restock(wc[i].wr_id == 1 ? d.rqp : q2,
					wc[i].wr_id, 1);
	}
	TEST_ASSERT_SUCCESS(swv_destroy_flow(keep), "");
	return TEST_SUCCESS;
}

/*
 * A burst of frames posted in one list reaches the receiving side as a
 * burst (steered together): every frame must still get its own rule, the
 * better-priority rule of another mask where both match, drop and no-match
 * counted, and the deliveries in the order sent, through both a subtable
 * big enough for the batched passes and a small one. Frames are told apart
 * by their length, the QP by the receive wr_id.
 */
static int
test_burst_order(void)
{
	enum { NB = 48, NPORT = 40, STRIDE = 128, NFILL = 1000 };
	static uint8_t bbuf[NB * STRIDE];
	struct ibv_send_wr wr[NB], *bad = NULL;
	struct ibv_flow *fl[NPORT + 2 + NFILL];
	struct ibv_flow_spec_ipv4_ext *ip;
	struct ibv_flow_spec_tcp_udp *l4;
	struct swv_port_counters c0, c1;
	struct ibv_sge sge[NB];
	int want[NB], nwant = 0, ndrop = 0, nnomatch = 0, i, k, n;
	struct ibv_wc wc[NB];
	struct ibv_mr *bmr;
	uint64_t end;
	struct rb r;
	struct fb f;

	bmr = swv_reg_mr(d.pd, bbuf, sizeof(bbuf), 0);
	TEST_ASSERT_NOT_NULL(bmr, "");
	/* Port 2000 + i: rqp for even i, q2 for odd i; 2100 drops. */
	for (i = 0; i <= NPORT; i++) {
		r_init(&r, IBV_FLOW_ATTR_NORMAL, 1);
		l4 = r_l4(&r, false, false);
		l4->val.dst_port = htons(i < NPORT ? 2000 + i : 2100);
		l4->mask.dst_port = 0xffff;
		if (i == NPORT)
			r_add(&r, IBV_FLOW_SPEC_ACTION_DROP,
			      sizeof(struct ibv_flow_spec_action_drop));
		fl[i] = r_create(&r, (i & 1) ? q2 : d.rqp);
		TEST_ASSERT_NOT_NULL(fl[i], "rule %d", i);
	}
	/* Source 1.2.3.4 to port 2005 (q2's): rqp, by a better priority. */
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	ip = r_ip4(&r, false);
	ip->val.src_ip = htonl(0x01020304);
	ip->mask.src_ip = 0xffffffff;
	l4 = r_l4(&r, false, false);
	l4->val.dst_port = htons(2005);
	l4->mask.dst_port = 0xffff;
	fl[NPORT + 1] = r_create(&r, d.rqp);
	TEST_ASSERT_NOT_NULL(fl[NPORT + 1], "override");
	/*
	 * More rules of the ports' mask, none hit: a subtable big enough
	 * for the batched passes (small ones are probed frame by frame).
	 */
	for (i = 0; i < NFILL; i++) {
		r_init(&r, IBV_FLOW_ATTR_NORMAL, 1);
		l4 = r_l4(&r, false, false);
		l4->val.dst_port = htons(10000 + i);
		l4->mask.dst_port = 0xffff;
		fl[NPORT + 2 + i] = r_create(&r, q2);
		TEST_ASSERT_NOT_NULL(fl[NPORT + 2 + i], "filler %d", i);
	}
	/* want[k]: 1 rqp, 2 q2, 0 dropped, -1 no match. */
	for (k = 0; k < NB; k++) {
		uint32_t src = 0x0a000001;
		uint16_t port = (uint16_t)(2000 + (k * 7) % NPORT);

		if (k % 12 == 5) {
			src = 0x01020304;
			port = 2005;
			want[k] = 1;
		} else if (k % 12 == 11) {
			port = 2100;
			want[k] = 0;
			ndrop++;
		} else if (k % 16 == 15) {
			port = 3000;
			want[k] = -1;
			nnomatch++;
		} else {
			want[k] = (port & 1) ? 2 : 1;
		}
		if (want[k] > 0)
			nwant++;
		memset(&f, 0, sizeof(f));
		f_udp4(&f, src, 0x0a000002, 9, port);
		memset(bbuf + k * STRIDE, 0, STRIDE);
		memcpy(bbuf + k * STRIDE, f.b, f.len);
		sge[k].addr = (uintptr_t)(bbuf + k * STRIDE);
		sge[k].length = 80 + (uint32_t)k;
		sge[k].lkey = bmr->lkey;
		memset(&wr[k], 0, sizeof(wr[k]));
		wr[k].wr_id = (uint64_t)k;
		wr[k].sg_list = &sge[k];
		wr[k].num_sge = 1;
		wr[k].opcode = IBV_WR_SEND;
		wr[k].send_flags = IBV_SEND_SIGNALED;
		wr[k].next = k + 1 < NB ? &wr[k + 1] : NULL;
	}
	swv_query_port_counters(d.ctx, &c0);
	TEST_ASSERT_SUCCESS(ibv_post_send(d.sqp, wr, &bad), "");
	for (n = 0, end = t_now_ms() + 2000; n < NB && t_now_ms() < end;) {
		k = ibv_poll_cq(d.scq, NB - n, wc);
		TEST_ASSERT(k >= 0, "");
		n += k;
	}
	TEST_ASSERT_EQUAL(n, NB, "send completions");
	for (n = 0, end = t_now_ms() + 2000; n < nwant && t_now_ms() < end;) {
		k = ibv_poll_cq(d.rcq, nwant - n, wc + n);
		TEST_ASSERT(k >= 0, "");
		n += k;
	}
	TEST_ASSERT_EQUAL(n, nwant, "receive completions");
	for (n = 0, k = 0; k < NB; k++) {
		if (want[k] <= 0)
			continue;
		TEST_ASSERT_EQUAL(wc[n].status, IBV_WC_SUCCESS, "");
		TEST_ASSERT_EQUAL(wc[n].byte_len, 80u + (uint32_t)k,
				  "frame %d in order", k);
		TEST_ASSERT_EQUAL(wc[n].wr_id, (uint64_t)want[k],
				  "frame %d on its rule's QP", k);
		restock(want[k] == 1 ? d.rqp : q2, (uint64_t)want[k], 1);
		n++;
	}
	T_WAIT((swv_query_port_counters(d.ctx, &c1),
		c1.rx_frames - c0.rx_frames == NB));
	TEST_ASSERT_EQUAL(c1.rx_frames - c0.rx_frames, NB, "");
	TEST_ASSERT_EQUAL(c1.rx_dropped - c0.rx_dropped, (uint64_t)ndrop, "");
	TEST_ASSERT_EQUAL(c1.rx_no_match - c0.rx_no_match,
			  (uint64_t)nnomatch, "");
	TEST_ASSERT_EQUAL(c1.rx_delivered - c0.rx_delivered,
			  (uint64_t)nwant, "");
	for (i = 0; i < NPORT + 2 + NFILL; i++)
		TEST_ASSERT_SUCCESS(swv_destroy_flow(fl[i]), "");
	TEST_ASSERT_SUCCESS(swv_dereg_mr(bmr), "");
	return TEST_SUCCESS;
}

/*
 * Past its first chunks the rule pool asks for transparent huge pages: the
 * mapping of the last of 100,000 rules (10 MB of them) is one with huge
 * pages advised ("hg" in /proc/self/smaps VmFlags) and holds the whole
 * 2 MiB-aligned block around the rule (the chunk is aligned, so one huge
 * page can back it). Lookups over a million rules then do not take a page
 * walk per frame. Skipped where the kernel has no THP.
 */
static int
pool_vma_flags(uintptr_t a, uintptr_t *lo, uintptr_t *hi, char *flags,
	       size_t len)
{
	char line[512];
	bool in = false;
	FILE *fp = fopen("/proc/self/smaps", "r");
	int ret = -1;

	if (fp == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp) != NULL) {
		unsigned long s, e;

		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = a >= s && a < e;
			if (in) {
				*lo = s;
				*hi = e;
			}
		} else if (in && strncmp(line, "VmFlags:", 8) == 0) {
			snprintf(flags, len, "%s", line + 8);
			ret = 0;
			break;
		}
	}
	fclose(fp);
	return ret;
}

static int
test_pool_huge(void)
{
	enum { N = 100000 };
	const uintptr_t huge = 2u << 20;
	struct ibv_flow_spec_ipv4_ext *ip;
	uintptr_t a, lo = 0, hi = 0;
	struct ibv_flow **fl;
	char flags[512];
	struct rb r;
	int i;

	if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) != 0)
		return TEST_SKIPPED;
	fl = calloc(N, sizeof(*fl));
	TEST_ASSERT_NOT_NULL(fl, "");
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	ip = r_ip4(&r, false);
	ip->mask.dst_ip = 0xffffffff;
	for (i = 0; i < N; i++) {
		ip->val.dst_ip = htonl(0x0a000000 + (uint32_t)i);
		fl[i] = r_create(&r, d.rqp);
		TEST_ASSERT_NOT_NULL(fl[i], "rule %d: %d", i, errno);
	}
	a = (uintptr_t)fl[N - 1];
	TEST_ASSERT_SUCCESS(pool_vma_flags(a, &lo, &hi, flags, sizeof(flags)),
			    "no mapping holds the rule at %#lx",
			    (unsigned long)a);
	printf("  rule at %#lx, mapping %#lx-%#lx, flags%s", (unsigned long)a,
	       (unsigned long)lo, (unsigned long)hi, flags);
	TEST_ASSERT(strstr(flags, " hg") != NULL,
		    "huge pages not advised for the rule pool");
	TEST_ASSERT(lo <= (a & ~(huge - 1)) && hi >= (a & ~(huge - 1)) + huge,
		    "the chunk is not 2 MiB aligned");
	for (i = 0; i < N; i++)
		TEST_ASSERT_SUCCESS(swv_destroy_flow(fl[i]), "");
	free(fl);
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite = {
	.name = "swverbs steering",
	.cases = {
		TEST_CASE(test_eth_vlan),
		TEST_CASE(test_ipv4),
		TEST_CASE(test_ipv6),
		TEST_CASE(test_l4_fragments),
		TEST_CASE(test_vxlan_inner),
		TEST_CASE(test_gre_mpls_esp),
		TEST_CASE(test_actions_sniffer),
		TEST_CASE(test_priority_overlap),
		TEST_CASE(test_errors),
		TEST_CASE(test_many_rules),
		TEST_CASE(test_retire_mid_update),
		TEST_CASE(test_churn_traffic),
		TEST_CASE(test_burst_order),
		TEST_CASE(test_pool_huge),
		TEST_CASES_END(),
	},
};

int
main(void)
{
	int ret;

	if (setup() != 0) {
		printf("setup failed: %s\n", strerror(errno));
		return 1;
	}
	ret = unit_test_suite_runner(&suite);
	swv_destroy_qp(q2);
	swv_dereg_mr(tmr);
	swv_dereg_mr(rmr);
	t_teardown(&d);
	return ret;
}
