/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * swverbs' device profiles: on the default (mlx5) profile every refusal a
 * ConnectX makes, with its errno, and the same request accepted on the full
 * profile; then, with real frames on a loop wire, the steering mlx5 does
 * where the man pages are silent: VLAN masks, multicast-only rules after
 * priority 15, leftovers rules, duplicate rules, counters reads; hash QPs,
 * QP transitions and port attributes.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "swv_test_util.h"
#include "swv_test_frames.h"

#define NRECV 64
#define SLOT 2048
#define T_UNUSED __attribute__((unused))

static uint8_t txbuf[SLOT];
static uint8_t rxarea[2 * NRECV * SLOT];

/* One device: tdev, a second receiving QP, its MRs. */
struct env {
	struct tdev d;
	struct ibv_qp *q2;
	struct ibv_mr *tmr, *rmr;
	struct ibv_counters *cnt;	/**< packets at index 0 */
};

static struct env es;	/* mlx5 profile */
static struct env ef;	/* full profile */

enum outcome { O_ERR = -1, O_NOMATCH, O_RQP, O_Q2, O_DROP };

static struct ibv_wc last_wc;

static int
env_setup(struct env *e, const char *name, unsigned int flags)
{
	int i, ret;

	memset(e, 0, sizeof(*e));
	ret = t_setup_flags(&e->d, name, "loop", flags);
	if (ret != 0)
		return ret;
	e->tmr = swv_reg_mr(e->d.pd, txbuf, sizeof(txbuf), 0);
	e->rmr = swv_reg_mr(e->d.pd, rxarea, sizeof(rxarea),
			    IBV_ACCESS_LOCAL_WRITE);
	e->q2 = t_raw_qp(&e->d, 1, NRECV, 1, 1);
	e->cnt = t_counters(e->d.ctx);
	if (e->tmr == NULL || e->rmr == NULL || e->q2 == NULL ||
	    e->cnt == NULL)
		return errno;
	ret = t_attach(e->cnt, IBV_COUNTER_PACKETS, 0);
	if (ret != 0)
		return ret;
	ret = t_qp_to(e->q2, IBV_QPS_RTR);
	for (i = 0; ret == 0 && i < NRECV; i++) {
		ret = t_recv(e->d.rqp, e->rmr, rxarea + i * SLOT, SLOT, 1);
		if (ret == 0)
			ret = t_recv(e->q2, e->rmr,
				     rxarea + (NRECV + i) * SLOT, SLOT, 2);
	}
	return ret;
}

static void
env_teardown(struct env *e)
{
	if (e->q2 != NULL)
		swv_destroy_qp(e->q2);
	if (e->cnt != NULL)
		swv_destroy_counters(e->cnt);
	if (e->tmr != NULL)
		swv_dereg_mr(e->tmr);
	if (e->rmr != NULL)
		swv_dereg_mr(e->rmr);
	t_teardown(&e->d);
}

/* Send a frame on e; tell where it went (last CQE in last_wc). */
static int
sendf(struct env *e, const struct fb *f)
{
	struct swv_port_counters c0, c1;
	struct ibv_wc wc;
	struct ibv_qp *qp;

	memcpy(txbuf, f->b, f->len);
	swv_query_port_counters(e->d.ctx, &c0);
	if (t_send(e->d.sqp, e->tmr, txbuf, f->len, 0) != 0 ||
	    t_poll(e->d.scq, &wc, 1, 2000) != 1)
		return O_ERR;
	T_WAIT((swv_query_port_counters(e->d.ctx, &c1),
		c1.rx_frames > c0.rx_frames));
	if (c1.rx_frames != c0.rx_frames + 1)
		return O_ERR;
	if (c1.rx_no_match != c0.rx_no_match)
		return O_NOMATCH;
	if (c1.rx_dropped != c0.rx_dropped)
		return O_DROP;
	if (c1.rx_delivered != c0.rx_delivered + 1 ||
	    t_poll(e->d.rcq, &last_wc, 1, 2000) != 1 ||
	    last_wc.status != IBV_WC_SUCCESS)
		return O_ERR;
	/* Give the buffer back where it came from. */
	qp = last_wc.wr_id == 1 ? e->d.rqp : e->q2;
	if (t_recv(qp, e->rmr, rxarea + (last_wc.wr_id == 1 ? 0 : NRECV) *
		   SLOT, SLOT, last_wc.wr_id) != 0)
		return O_ERR;
	return last_wc.wr_id == 1 ? O_RQP : O_Q2;
}

#define SEND(e, fr, want, what) \
	TEST_ASSERT_EQUAL(sendf((e), (fr)), (want), "%s", what)

/* 0 if the rule is taken (then destroyed), else the errno. */
static int
try_flow(struct env *e, struct rb *r)
{
	struct ibv_flow *fl = swv_create_flow(e->d.rqp, &r->attr);

	if (fl == NULL)
		return errno;
	return swv_destroy_flow(fl) == 0 ? 0 : -1;
}

/*
 * Refusals.
 */

struct refusal {
	const char *what;
	void (*build)(struct rb *r, struct env *env);
	int strict_errno;
	bool full_takes;	/**< the full profile accepts it */
};

static void
b_prio16(struct rb *r, struct env *env T_UNUSED)
{
	r_init(r, IBV_FLOW_ATTR_NORMAL, 16);
	r_eth(r, false);
}

static void
b_prio16_all(struct rb *r, struct env *env T_UNUSED)
{
	r_init(r, IBV_FLOW_ATTR_ALL_DEFAULT, 16);
}

static void
b_prio16_mc(struct rb *r, struct env *env T_UNUSED)
{
	r_init(r, IBV_FLOW_ATTR_MC_DEFAULT, 16);
}

static void
b_prio16_sniffer(struct rb *r, struct env *env T_UNUSED)
{
	r_init(r, IBV_FLOW_ATTR_SNIFFER, 16);
}

static void
b_11_specs(struct rb *r, struct env *env)
{

	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	r_eth(r, false);
	r_ip4(r, false);
	r_l4(r, false, false);
	r_add(r, IBV_FLOW_SPEC_VXLAN_TUNNEL,
	      sizeof(struct ibv_flow_spec_tunnel));
	r_add(r, IBV_FLOW_SPEC_MPLS, sizeof(struct ibv_flow_spec_mpls));
	r_eth(r, true);
	r_ip4(r, true);
	r_l4(r, true, true);
	r_add(r, IBV_FLOW_SPEC_ACTION_TAG,
	      sizeof(struct ibv_flow_spec_action_tag));
	r_add(r, IBV_FLOW_SPEC_ACTION_DROP,
	      sizeof(struct ibv_flow_spec_action_drop));
	r_count(r, env->cnt);
}

static void
b_ttl(struct rb *r, struct env *env T_UNUSED)
{
	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	r_ip4(r, false)->mask.ttl = 0xff;
}

static void
b_ipflags(struct rb *r, struct env *env T_UNUSED)
{
	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	r_ip4(r, false)->mask.flags = 0x2;
}

static struct ibv_flow_spec_ipv6 *
r_ip6(struct rb *r)
{
	return r_add(r, IBV_FLOW_SPEC_IPV6, sizeof(struct ibv_flow_spec_ipv6));
}

static void
b_hop_limit(struct rb *r, struct env *env T_UNUSED)
{
	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	r_ip6(r)->mask.hop_limit = 0xff;
}

static void
b_flow_label(struct rb *r, struct env *env T_UNUSED)
{
	struct ibv_flow_spec_ipv6 *ip;

	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	ip = r_ip6(r);
	ip->val.flow_label = htonl(1u << 20);
	ip->mask.flow_label = htonl(0xfffff);
}

static void
b_vni(struct rb *r, struct env *env T_UNUSED)
{
	struct ibv_flow_spec_tunnel *t;

	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	t = r_add(r, IBV_FLOW_SPEC_VXLAN_TUNNEL, sizeof(*t));
	t->val.tunnel_id = htonl(1u << 24);
	t->mask.tunnel_id = htonl(0xffffff);
}

static void
b_gre_bits(struct rb *r, struct env *env T_UNUSED)
{
	struct ibv_flow_spec_gre *g;

	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	g = r_add(r, IBV_FLOW_SPEC_GRE, sizeof(*g));
	g->val.c_ks_res0_ver = htons(0x2000);
	g->mask.c_ks_res0_ver = htons(0x2000);
}

static void
b_esp(struct rb *r, struct env *env T_UNUSED)
{
	struct ibv_flow_spec_esp *s;

	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	s = r_add(r, IBV_FLOW_SPEC_ESP, sizeof(*s));
	s->val.spi = htonl(5);
	s->mask.spi = htonl(0xffffffff);
}

static void
b_mpls(struct rb *r, struct env *env T_UNUSED)
{
	struct ibv_flow_spec_mpls *m;

	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	m = r_add(r, IBV_FLOW_SPEC_MPLS, sizeof(*m));
	m->val.label = htonl(100 << 12);
	m->mask.label = htonl(0xfffff000);
}

static void
b_vxlan_inner(struct rb *r, struct env *env T_UNUSED)
{
	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	r_add(r, IBV_FLOW_SPEC_VXLAN_TUNNEL | IBV_FLOW_SPEC_INNER,
	      sizeof(struct ibv_flow_spec_tunnel));
}

static void
b_gre_inner(struct rb *r, struct env *env T_UNUSED)
{
	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	r_add(r, IBV_FLOW_SPEC_GRE | IBV_FLOW_SPEC_INNER,
	      sizeof(struct ibv_flow_spec_gre));
}

static void
b_type_v6_ip4(struct rb *r, struct env *env T_UNUSED)
{
	struct ibv_flow_spec_eth *e;

	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	e = r_eth(r, false);
	e->val.ether_type = htons(0x86dd);
	e->mask.ether_type = 0xffff;
	r_ip4(r, false);
}

static void
b_type_partial(struct rb *r, struct env *env T_UNUSED)
{
	struct ibv_flow_spec_eth *e;

	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	e = r_eth(r, false);
	e->val.ether_type = htons(0x0800);
	e->mask.ether_type = htons(0xff00);
	r_ip4(r, false);
}

static void
b_proto_udp_tcp(struct rb *r, struct env *env T_UNUSED)
{
	struct ibv_flow_spec_ipv4_ext *ip;

	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	ip = r_ip4(r, false);
	ip->val.proto = IPPROTO_UDP;
	ip->mask.proto = 0xff;
	r_l4(r, true, false);
}

static void
b_tcp_proto_udp(struct rb *r, struct env *env T_UNUSED)
{
	struct ibv_flow_spec_ipv4_ext *ip;

	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	r_l4(r, true, false);
	ip = r_ip4(r, false);
	ip->val.proto = IPPROTO_UDP;
	ip->mask.proto = 0xff;
}

static void
b_proto_mask(struct rb *r, struct env *env T_UNUSED)
{
	struct ibv_flow_spec_ipv4_ext *ip;

	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	ip = r_ip4(r, false);
	ip->val.proto = IPPROTO_TCP;
	ip->mask.proto = 0x0f;
	r_l4(r, true, false);
}

static void
b_next_hdr_udp(struct rb *r, struct env *env T_UNUSED)
{
	struct ibv_flow_spec_ipv6 *ip;

	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	ip = r_ip6(r);
	ip->val.next_hdr = IPPROTO_TCP;
	ip->mask.next_hdr = 0xff;
	r_l4(r, false, false);
}

static void
b_proto_gre(struct rb *r, struct env *env T_UNUSED)
{
	struct ibv_flow_spec_ipv4_ext *ip;

	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	ip = r_ip4(r, false);
	ip->val.proto = IPPROTO_UDP;
	ip->mask.proto = 0xff;
	r_add(r, IBV_FLOW_SPEC_GRE, sizeof(struct ibv_flow_spec_gre));
}

static void
b_tag24(struct rb *r, struct env *env T_UNUSED)
{
	struct ibv_flow_spec_action_tag *t;

	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	t = r_add(r, IBV_FLOW_SPEC_ACTION_TAG, sizeof(*t));
	t->tag_id = 1u << 24;
}

static void
b_handle(struct rb *r, struct env *env T_UNUSED)
{
	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	r_add(r, IBV_FLOW_SPEC_ACTION_HANDLE,
	      sizeof(struct ibv_flow_spec_action_handle));
}

static void
b_dont_trap(struct rb *r, struct env *env T_UNUSED)
{
	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	r->attr.flags = IBV_FLOW_ATTR_FLAGS_DONT_TRAP;
}

static void
b_egress(struct rb *r, struct env *env T_UNUSED)
{
	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	r->attr.flags = IBV_FLOW_ATTR_FLAGS_EGRESS;
}

static void
b_dont_trap_all(struct rb *r, struct env *env T_UNUSED)
{
	r_init(r, IBV_FLOW_ATTR_ALL_DEFAULT, 0);
	r->attr.flags = IBV_FLOW_ATTR_FLAGS_DONT_TRAP;
}

static void
b_egress_mc(struct rb *r, struct env *env T_UNUSED)
{
	r_init(r, IBV_FLOW_ATTR_MC_DEFAULT, 0);
	r->attr.flags = IBV_FLOW_ATTR_FLAGS_EGRESS;
}

static void
b_unknown_flag(struct rb *r, struct env *env T_UNUSED)
{
	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	r->attr.flags = 0x10;
}

static void
b_port0(struct rb *r, struct env *env T_UNUSED)
{
	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	r->attr.port = 0;
}

static void
b_port2(struct rb *r, struct env *env T_UNUSED)
{
	r_init(r, IBV_FLOW_ATTR_NORMAL, 0);
	r->attr.port = 2;
}

static void
b_sniffer(struct rb *r, struct env *env T_UNUSED)
{
	r_init(r, IBV_FLOW_ATTR_SNIFFER, 0);
}

static const struct refusal refusals[] = {
	{ "priority 16", b_prio16, ENOMEM, true },
	{ "ALL_DEFAULT priority 16", b_prio16_all, ENOMEM, true },
	{ "MC_DEFAULT priority 16", b_prio16_mc, ENOMEM, true },
	{ "SNIFFER priority 16", b_prio16_sniffer, ENOMEM, true },
	{ "11 specs", b_11_specs, EINVAL, true },
	{ "IPv4 TTL", b_ttl, EOPNOTSUPP, true },
	{ "IPv4 flags", b_ipflags, EOPNOTSUPP, true },
	{ "IPv6 hop limit", b_hop_limit, EOPNOTSUPP, true },
	{ "IPv6 flow label 2^20", b_flow_label, EINVAL, true },
	{ "VNI 2^24", b_vni, EINVAL, true },
	{ "GRE K bit", b_gre_bits, EOPNOTSUPP, true },
	{ "ESP", b_esp, EOPNOTSUPP, true },
	{ "MPLS label", b_mpls, EOPNOTSUPP, true },
	{ "VXLAN | INNER", b_vxlan_inner, EINVAL, false },
	{ "GRE | INNER", b_gre_inner, EINVAL, false },
	{ "ether type 0x86dd + IPv4", b_type_v6_ip4, EINVAL, true },
	{ "partial ether type + IPv4", b_type_partial, EINVAL, true },
	{ "IPv4 proto 17 + TCP", b_proto_udp_tcp, EINVAL, true },
	{ "TCP + IPv4 proto 17", b_tcp_proto_udp, EINVAL, true },
	{ "IPv4 proto 6 mask 0x0f + TCP", b_proto_mask, EINVAL, true },
	{ "IPv6 next header 6 + UDP", b_next_hdr_udp, EINVAL, true },
	{ "IPv4 proto 17 + GRE", b_proto_gre, EINVAL, true },
	{ "tag 2^24", b_tag24, EINVAL, false },
	{ "ACTION_HANDLE", b_handle, EOPNOTSUPP, false },
	{ "DONT_TRAP", b_dont_trap, EOPNOTSUPP, false },
	{ "EGRESS", b_egress, EOPNOTSUPP, false },
	{ "DONT_TRAP on ALL_DEFAULT", b_dont_trap_all, EINVAL, false },
	{ "EGRESS on MC_DEFAULT", b_egress_mc, EINVAL, false },
	{ "unknown flag", b_unknown_flag, EINVAL, false },
	{ "port 0", b_port0, EINVAL, false },
	{ "port 2", b_port2, EINVAL, false },
	{ "SNIFFER", b_sniffer, EOPNOTSUPP, true },
};

static int
test_flow_refusals(void)
{
	unsigned int i, bad = 0;
	struct rb r;
	int ret;

	/* Every row is tried and reported, so one run shows them all. */
	for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		const struct refusal *c = &refusals[i];

		c->build(&r, &es);
		ret = try_flow(&es, &r);
		if (ret != c->strict_errno) {
			printf("mlx5 profile: %s: %d, want %d\n", c->what, ret,
			       c->strict_errno);
			bad++;
		}
		c->build(&r, &ef);
		ret = c->full_takes ? try_flow(&ef, &r) : 0;
		if (ret != 0) {
			printf("full profile: %s: %d, want 0\n", c->what, ret);
			bad++;
		}
	}
	TEST_ASSERT_EQUAL(bad, 0u, "rows that failed");
	return TEST_SUCCESS;
}

/* What mlx5 takes that its checks might be read to refuse. */
static int
test_flow_accepted(void)
{
	struct ibv_flow_spec_ipv4_ext *ip;
	struct ibv_flow_spec_eth *e;
	struct rb r;

	r_init(&r, IBV_FLOW_ATTR_NORMAL, 15);
	r_eth(&r, false);
	TEST_ASSERT_EQUAL(try_flow(&es, &r), 0, "priority 15");
	/* TCP then the same protocol, fully masked: one writer's value. */
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	r_l4(&r, true, false);
	ip = r_ip4(&r, false);
	ip->val.proto = IPPROTO_TCP;
	ip->mask.proto = 0xff;
	TEST_ASSERT_EQUAL(try_flow(&es, &r), 0, "TCP + IPv4 proto 6");
	/* A matching, fully masked ether type. */
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	e = r_eth(&r, false);
	e->val.ether_type = htons(0x0800);
	e->mask.ether_type = 0xffff;
	r_ip4(&r, false);
	TEST_ASSERT_EQUAL(try_flow(&es, &r), 0, "0x0800 + IPv4");
	/* Ten specs: all but the COUNT. */
	b_11_specs(&r, &es);
	r.attr.num_of_specs--;
	r.attr.size -= sizeof(struct ibv_flow_spec_counter_action);
	TEST_ASSERT_EQUAL(try_flow(&es, &r), 0, "10 specs");
	/* libibverbs never passes ibv_flow_attr.comp_mask to mlx5. */
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	r.attr.comp_mask = 1;
	TEST_ASSERT_EQUAL(try_flow(&es, &r), 0, "comp_mask ignored");
	TEST_ASSERT_EQUAL(try_flow(&ef, &r), EINVAL, "full: comp_mask");
	/* Leftovers rules: specs ignored, not refused. */
	r_init(&r, IBV_FLOW_ATTR_MC_DEFAULT, 0);
	r_eth(&r, false);
	TEST_ASSERT_EQUAL(try_flow(&es, &r), 0, "MC_DEFAULT with a spec");
	TEST_ASSERT_EQUAL(try_flow(&ef, &r), EINVAL, "full: spec refused");
	/* MPLS with no mask matches nothing more (no cap needed). */
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	r_add(&r, IBV_FLOW_SPEC_MPLS, sizeof(struct ibv_flow_spec_mpls));
	TEST_ASSERT_EQUAL(try_flow(&es, &r), 0, "MPLS, zero mask");
	return TEST_SUCCESS;
}

/*
 * Steering with frames.
 */

/* A rule on qp: ETH dst = dmac (full mask, or none), VLAN tag/mask. */
static struct ibv_flow *
vlan_rule(struct ibv_qp *qp, uint16_t tci, uint16_t mask)
{
	struct ibv_flow_spec_eth *e;
	struct rb r;

	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	e = r_eth(&r, false);
	memcpy(e->val.dst_mac, mac_a, 6);
	memset(e->mask.dst_mac, 0xff, 6);
	e->val.vlan_tag = htons(tci);
	e->mask.vlan_tag = htons(mask);
	return swv_create_flow(qp, &r.attr);
}

static int
test_vlan(void)
{
	struct ibv_flow *fs, *ff;
	struct fb f;

	/* VID 0 under a full VID mask: tagged frames only (both profiles). */
	fs = vlan_rule(es.d.rqp, 0, 0x0fff);
	ff = vlan_rule(ef.d.rqp, 0, 0x0fff);
	TEST_ASSERT_NOT_NULL(fs, "");
	TEST_ASSERT_NOT_NULL(ff, "");
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_pad(&f);
	SEND(&es, &f, O_NOMATCH, "mlx5: untagged, VID mask");
	SEND(&ef, &f, O_NOMATCH, "full: untagged, VID mask");
	f_eth(&f, mac_a, 1, 0, 0x0800);
	f_pad(&f);
	SEND(&es, &f, O_RQP, "mlx5: priority-tagged VID 0");
	SEND(&ef, &f, O_RQP, "full: priority-tagged VID 0");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fs), "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(ff), "");

	/* A PCP-only mask still asks for a tag. */
	fs = vlan_rule(es.d.rqp, 0, 0xe000);
	TEST_ASSERT_NOT_NULL(fs, "");
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_pad(&f);
	SEND(&es, &f, O_NOMATCH, "mlx5: untagged, PCP mask");
	f_eth(&f, mac_a, 1, 5, 0x0800);
	f_pad(&f);
	SEND(&es, &f, O_RQP, "mlx5: tagged VID 5 PCP 0");
	/* An 802.1ad outer tag is no C-tag. */
	f_eth(&f, mac_a, 2, 5, 0x0800);
	f_pad(&f);
	SEND(&es, &f, O_NOMATCH, "mlx5: S-tagged");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fs), "");

	/* No VLAN mask: tagged and untagged alike. */
	fs = vlan_rule(es.d.rqp, 0, 0);
	TEST_ASSERT_NOT_NULL(fs, "");
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_pad(&f);
	SEND(&es, &f, O_RQP, "mlx5: untagged, no mask");
	f_eth(&f, mac_a, 1, 7, 0x0800);
	f_pad(&f);
	SEND(&es, &f, O_RQP, "mlx5: tagged, no mask");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fs), "");
	return TEST_SUCCESS;
}

static const uint8_t mac_mc[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };

/* A NORMAL rule matching every frame, at prio, on qp. */
static struct ibv_flow *
match_all(struct ibv_qp *qp, uint16_t prio)
{
	struct rb r;

	r_init(&r, IBV_FLOW_ATTR_NORMAL, prio);
	r_eth(&r, false);
	return swv_create_flow(qp, &r.attr);
}

static int
test_multicast_only(struct env *e, int want_mc)
{
	struct ibv_flow_spec_ipv4_ext *ip;
	struct ibv_flow *all, *mc, *ipmc;
	struct ibv_flow_spec_eth *eth;
	struct rb r;
	struct fb f;

	/* Catch-all at 15 on q2, a multicast MAC rule at 0 on rqp. */
	all = match_all(e->q2, 15);
	TEST_ASSERT_NOT_NULL(all, "");
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	eth = r_eth(&r, false);
	memcpy(eth->val.dst_mac, mac_mc, 6);
	memset(eth->mask.dst_mac, 0xff, 6);
	mc = swv_create_flow(e->d.rqp, &r.attr);
	TEST_ASSERT_NOT_NULL(mc, "");
	f_eth(&f, mac_mc, 0, 0, 0x0800);
	f_ipv4(&f, 0x0a000001, 0xe0000001, 17, 0, 64, 0, 0);
	f_l4(&f, 1, 2, 0);
	f_pad(&f);
	SEND(e, &f, want_mc, "multicast MAC rule at priority 0");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(mc), "");
	/* The same with an IPv4 first spec: the dst value decides. */
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	ip = r_ip4(&r, false);
	ip->val.dst_ip = htonl(0xe0000001);
	ip->mask.dst_ip = 0xffffffff;
	ipmc = swv_create_flow(e->d.rqp, &r.attr);
	TEST_ASSERT_NOT_NULL(ipmc, "");
	SEND(e, &f, want_mc, "IPv4 224.0.0.1 rule at priority 0");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(ipmc), "");
	/* A unicast first spec stays at its priority. */
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	eth = r_eth(&r, false);
	eth->val.ether_type = htons(0x0800);
	eth->mask.ether_type = 0xffff;
	mc = swv_create_flow(e->d.rqp, &r.attr);
	TEST_ASSERT_NOT_NULL(mc, "");
	SEND(e, &f, O_RQP, "ether type rule at priority 0");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(mc), "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(all), "");
	return TEST_SUCCESS;
}

static int
test_multicast_placement(void)
{
	/* mlx5: after priority 15, so the catch-all wins; full: 0 wins. */
	if (test_multicast_only(&es, O_Q2) != TEST_SUCCESS)
		return TEST_FAILED;
	return test_multicast_only(&ef, O_RQP);
}

/*
 * One level, overlapping rules of different masks: mlx5 tries them by flow
 * group (one group per mask, a new group at the lowest free range), the
 * full profile by creation. dmask: the dst MAC's mask (NULL: the ether
 * type IPv4 instead).
 */
static struct ibv_flow *
group_rule(struct ibv_qp *qp, const uint8_t *dmac, const uint8_t *dmask)
{
	struct ibv_flow_spec_eth *e;
	struct rb r;

	r_init(&r, IBV_FLOW_ATTR_NORMAL, 3);
	e = r_eth(&r, false);
	if (dmask == NULL) {
		e->val.ether_type = htons(0x0800);
		e->mask.ether_type = 0xffff;
	} else {
		memcpy(e->val.dst_mac, dmac, 6);
		memcpy(e->mask.dst_mac, dmask, 6);
	}
	return swv_create_flow(qp, &r.attr);
}

static int
test_flow_groups(void)
{
	static const uint8_t full[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t part[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0 };
	struct env *env[2] = { &es, &ef };
	struct ibv_flow *a, *b, *c, *d, *e2;
	unsigned int i;
	struct fb f;

	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_pad(&f);
	for (i = 0; i < 2; i++) {
		struct env *e = env[i];
		bool mlx5 = e == &es;

		/* A (dst MAC) then B (ether type): A first either way. */
		a = group_rule(e->d.rqp, mac_a, full);
		b = group_rule(e->q2, NULL, NULL);
		TEST_ASSERT(a != NULL && b != NULL, "errno %d", errno);
		SEND(e, &f, O_RQP, "the first group's rule");
		/* C, a third mask, takes the range A's group left. */
		TEST_ASSERT_SUCCESS(swv_destroy_flow(a), "");
		SEND(e, &f, O_Q2, "B alone");
		c = group_rule(e->d.rqp, mac_a, part);
		TEST_ASSERT_NOT_NULL(c, "errno %d", errno);
		SEND(e, &f, mlx5 ? O_RQP : O_Q2,
		     mlx5 ? "mlx5: C in the range freed before B's group" :
		     "full: B, made before C");
		/*
		 * D makes a group for A's mask after B's; E, made after C is
		 * gone, joins it: B first on both profiles.
		 */
		d = group_rule(e->d.rqp, mac_b, full);
		TEST_ASSERT_NOT_NULL(d, "errno %d", errno);
		TEST_ASSERT_SUCCESS(swv_destroy_flow(c), "");
		e2 = group_rule(e->d.rqp, mac_a, full);
		TEST_ASSERT_NOT_NULL(e2, "errno %d", errno);
		SEND(e, &f, O_Q2, "E joins the group after B's");
		TEST_ASSERT_SUCCESS(swv_destroy_flow(e2), "");
		TEST_ASSERT_SUCCESS(swv_destroy_flow(d), "");
		TEST_ASSERT_SUCCESS(swv_destroy_flow(b), "");
	}
	return TEST_SUCCESS;
}

/* An action spec first: the rule keeps its priority (vbr does that). */
static int
test_multicast_action_first(void)
{
	struct ibv_flow *all, *mc;
	struct ibv_flow_spec_eth *eth;
	struct rb r;
	struct fb f;

	all = match_all(es.q2, 15);
	TEST_ASSERT_NOT_NULL(all, "");
	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	r_add(&r, IBV_FLOW_SPEC_ACTION_TAG,
	      sizeof(struct ibv_flow_spec_action_tag));
	eth = r_eth(&r, false);
	memcpy(eth->val.dst_mac, mac_mc, 6);
	memset(eth->mask.dst_mac, 0xff, 6);
	mc = swv_create_flow(es.d.rqp, &r.attr);
	TEST_ASSERT_NOT_NULL(mc, "errno %d", errno);
	f_eth(&f, mac_mc, 0, 0, 0x0800);
	f_pad(&f);
	SEND(&es, &f, O_RQP, "mlx5: TAG 0 first, multicast MAC at 0");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(mc), "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(all), "");
	return TEST_SUCCESS;
}

static int
test_leftovers(void)
{
	struct ibv_flow_spec_action_tag *tag;
	struct ibv_flow_spec_eth *eth;
	struct ibv_flow *all, *mc, *n;
	struct rb r;
	struct fb f;

	/* ALL_DEFAULT with an ETH spec for mac_b and a tag: both ignored. */
	r_init(&r, IBV_FLOW_ATTR_ALL_DEFAULT, 0);
	eth = r_eth(&r, false);
	memcpy(eth->val.dst_mac, mac_b, 6);
	memset(eth->mask.dst_mac, 0xff, 6);
	tag = r_add(&r, IBV_FLOW_SPEC_ACTION_TAG, sizeof(*tag));
	tag->tag_id = 77;
	all = swv_create_flow(es.q2, &r.attr);
	TEST_ASSERT_NOT_NULL(all, "errno %d", errno);
	r_init(&r, IBV_FLOW_ATTR_MC_DEFAULT, 0);
	r_add(&r, IBV_FLOW_SPEC_ACTION_DROP,
	      sizeof(struct ibv_flow_spec_action_drop));
	mc = swv_create_flow(es.d.rqp, &r.attr);
	TEST_ASSERT_NOT_NULL(mc, "errno %d", errno);
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_pad(&f);
	SEND(&es, &f, O_Q2, "unicast to ALL_DEFAULT, its spec ignored");
	f_eth(&f, mac_mc, 0, 0, 0x0800);
	f_pad(&f);
	SEND(&es, &f, O_RQP, "multicast to MC_DEFAULT, its DROP ignored");
	/* A NORMAL rule takes what it matches first, at any priority. */
	n = match_all(es.d.rqp, 15);
	TEST_ASSERT_NOT_NULL(n, "");
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_pad(&f);
	SEND(&es, &f, O_RQP, "NORMAL before leftovers");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(n), "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(mc), "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(all), "");
	return TEST_SUCCESS;
}

static int
test_duplicates(void)
{
	struct ibv_flow_spec_action_tag *tag;
	struct ibv_flow_spec_eth *eth;
	struct ibv_flow *a, *b, *c;
	struct rb r, rd, rt;
	struct fb f;

	r_init(&r, IBV_FLOW_ATTR_NORMAL, 3);
	eth = r_eth(&r, false);
	memcpy(eth->val.dst_mac, mac_a, 6);
	memset(eth->mask.dst_mac, 0xff, 6);
	a = swv_create_flow(es.d.rqp, &r.attr);
	b = swv_create_flow(es.d.rqp, &r.attr);
	TEST_ASSERT_NOT_NULL(a, "");
	TEST_ASSERT_NOT_NULL(b, "the same attr twice");
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_pad(&f);
	SEND(&es, &f, O_RQP, "one copy for two equal rules");
	/* Same match and priority, another action: EEXIST. */
	rd = r;
	r_add(&rd, IBV_FLOW_SPEC_ACTION_DROP,
	      sizeof(struct ibv_flow_spec_action_drop));
	TEST_ASSERT_NULL(swv_create_flow(es.d.rqp, &rd.attr), "");
	TEST_ASSERT_EQUAL(errno, EEXIST, "drop against forward");
	rt = r;
	tag = r_add(&rt, IBV_FLOW_SPEC_ACTION_TAG, sizeof(*tag));
	tag->tag_id = 9;
	TEST_ASSERT_NULL(swv_create_flow(es.d.rqp, &rt.attr), "");
	TEST_ASSERT_EQUAL(errno, EEXIST, "another tag");
	c = swv_create_flow(ef.d.rqp, &rd.attr);
	TEST_ASSERT_NOT_NULL(c, "full: drop next to forward");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(c), "");
	/* At another priority it is another entry. */
	rd.attr.priority = 4;
	c = swv_create_flow(es.d.rqp, &rd.attr);
	TEST_ASSERT_NOT_NULL(c, "drop at another priority");
	SEND(&es, &f, O_RQP, "priority 3 before 4");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(a), "");
	SEND(&es, &f, O_RQP, "the other equal rule stays");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(b), "");
	SEND(&es, &f, O_DROP, "then the drop rule");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(c), "");
	return TEST_SUCCESS;
}

/*
 * Counters.
 */


static struct ibv_flow *
counted_rule(struct env *e, struct ibv_counters *c)
{
	struct ibv_flow_spec_eth *eth;
	struct rb r;

	r_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	eth = r_eth(&r, false);
	memcpy(eth->val.dst_mac, mac_a, 6);
	memset(eth->mask.dst_mac, 0xff, 6);
	r_count(&r, c);
	return swv_create_flow(e->d.rqp, &r.attr);
}

static int
test_counters(void)
{
	struct ibv_counters *c, *cf;
	struct ibv_flow *fl;
	uint64_t v[4];
	struct fb f;
	int i;

	c = t_counters(es.d.ctx);
	cf = t_counters(ef.d.ctx);
	TEST_ASSERT_NOT_NULL(c, "");
	TEST_ASSERT_NOT_NULL(cf, "");
	/* COUNT with no attach point. */
	TEST_ASSERT_NULL(counted_rule(&es, c), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "COUNT, no attach point");
	fl = counted_rule(&ef, cf);
	TEST_ASSERT_NOT_NULL(fl, "full: COUNT, no attach point");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fl), "");
	TEST_ASSERT_SUCCESS(t_attach(c, IBV_COUNTER_PACKETS, 0), "");
	TEST_ASSERT_SUCCESS(t_attach(c, IBV_COUNTER_BYTES, 2), "");
	TEST_ASSERT_SUCCESS(t_attach(cf, IBV_COUNTER_PACKETS, 0), "");
	TEST_ASSERT_SUCCESS(t_attach(cf, IBV_COUNTER_BYTES, 2), "");
	/* No flow holds it. */
	TEST_ASSERT_EQUAL(swv_read_counters(c, v, 3, 0), EINVAL, "unbound");
	TEST_ASSERT_SUCCESS(swv_read_counters(cf, v, 3, 0), "full: unbound");
	fl = counted_rule(&es, c);
	TEST_ASSERT_NOT_NULL(fl, "errno %d", errno);
	f_eth(&f, mac_a, 0, 0, 0x0800);
	f_pad(&f);
	for (i = 0; i < 3; i++)
		SEND(&es, &f, O_RQP, "counted");
	memset(v, 0xaa, sizeof(v));
	TEST_ASSERT_SUCCESS(swv_read_counters(c, v, 4, 0), "bound");
	TEST_ASSERT_EQUAL(v[0], 3u, "packets");
	TEST_ASSERT_EQUAL(v[1], 0u, "no point at 1");
	TEST_ASSERT_EQUAL(v[2], 3u * f.len, "bytes");
	TEST_ASSERT_EQUAL(v[3], 0u, "beyond the points");
	TEST_ASSERT_EQUAL(swv_read_counters(c, v, 2, 0), EINVAL,
			  "ncounters below the highest index + 1");
	TEST_ASSERT_SUCCESS(swv_read_counters(cf, v, 2, 0), "full: short");
	TEST_ASSERT_EQUAL(swv_read_counters(c, v, 3, 2), EINVAL, "flag");
	TEST_ASSERT_SUCCESS(swv_read_counters(c, v, 3,
			    IBV_READ_COUNTERS_ATTR_PREFER_CACHED), "cached");
	TEST_ASSERT_EQUAL(t_attach(c, IBV_COUNTER_PACKETS, 1), EBUSY, "bound");
	TEST_ASSERT_EQUAL(swv_destroy_counters(c), EBUSY, "held");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fl), "");
	TEST_ASSERT_EQUAL(swv_read_counters(c, v, 3, 0), EINVAL,
			  "after the flow is gone");
	TEST_ASSERT_SUCCESS(swv_destroy_counters(c), "");
	TEST_ASSERT_SUCCESS(swv_destroy_counters(cf), "");
	return TEST_SUCCESS;
}

/*
 * Hash QPs.
 */

static uint8_t key40[40] = { 0x6d, 0x5a, 0x56, 0xda };

/* errno of a hash QP over a table of 2^log WQs (0: created, destroyed). */
static int
try_hash(struct env *e, uint32_t log, uint64_t fields, uint8_t fn,
	 uint32_t keylen, int (*after)(struct ibv_qp *qp))
{
	struct ibv_rwq_ind_table_init_attr ta;
	struct ibv_qp_init_attr_ex qa;
	struct ibv_wq_init_attr wa;
	struct ibv_rwq_ind_table *t;
	struct ibv_wq *wq[2];
	struct ibv_qp *qp;
	int ret = 0;

	memset(&wa, 0, sizeof(wa));
	wa.wq_type = IBV_WQT_RQ;
	wa.max_wr = 4;
	wa.max_sge = 1;
	wa.pd = e->d.pd;
	wa.cq = e->d.rcq;
	wq[0] = swv_create_wq(e->d.ctx, &wa);
	wq[1] = swv_create_wq(e->d.ctx, &wa);
	memset(&ta, 0, sizeof(ta));
	ta.log_ind_tbl_size = log;
	ta.ind_tbl = wq;
	t = swv_create_rwq_ind_table(e->d.ctx, &ta);
	if (wq[0] == NULL || wq[1] == NULL || t == NULL)
		return -1;
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RAW_PACKET;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
		       IBV_QP_INIT_ATTR_RX_HASH;
	qa.pd = e->d.pd;
	qa.rwq_ind_tbl = t;
	qa.rx_hash_conf.rx_hash_function = fn;
	qa.rx_hash_conf.rx_hash_key_len = (uint8_t)keylen;
	qa.rx_hash_conf.rx_hash_key = key40;
	qa.rx_hash_conf.rx_hash_fields_mask = fields;
	qp = swv_create_qp_ex(e->d.ctx, &qa);
	if (qp == NULL) {
		ret = errno;
	} else {
		if (after != NULL)
			ret = after(qp);
		if (swv_destroy_qp(qp) != 0)
			ret = -1;
	}
	swv_destroy_rwq_ind_table(t);
	swv_destroy_wq(wq[0]);
	swv_destroy_wq(wq[1]);
	return ret;
}

static int
modify_hash(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	return swv_modify_qp(qp, &a, IBV_QP_STATE);
}

static int
query_hash(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	return swv_query_qp(qp, &a, IBV_QP_STATE, &ia);
}

#define T IBV_RX_HASH_FUNC_TOEPLITZ
#define V4 (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4)
#define V6 (IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6)
#define TCP (IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP)
#define UDP (IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP)

static int
test_hash_qps(void)
{
	TEST_ASSERT_EQUAL(try_hash(&es, 1, V4 | TCP, T, 40, NULL), 0, "ok");
	TEST_ASSERT_EQUAL(try_hash(&es, 1, V4 | V6, T, 40, NULL), EINVAL,
			  "IPv4 + IPv6");
	TEST_ASSERT_EQUAL(try_hash(&ef, 1, V4 | V6, T, 40, NULL), 0,
			  "full: IPv4 + IPv6");
	TEST_ASSERT_EQUAL(try_hash(&es, 1, V4 | TCP | UDP, T, 40, NULL),
			  EINVAL, "TCP + UDP");
	TEST_ASSERT_EQUAL(try_hash(&ef, 1, V4 | TCP | UDP, T, 40, NULL), 0,
			  "full: TCP + UDP");
	TEST_ASSERT_EQUAL(try_hash(&es, 1, V4 | TCP | IBV_RX_HASH_IPSEC_SPI,
				   T, 40, NULL), EINVAL, "TCP + SPI");
	TEST_ASSERT_EQUAL(try_hash(&es, 1, TCP, T, 40, NULL), EINVAL,
			  "ports with no IP family");
	TEST_ASSERT_EQUAL(try_hash(&ef, 1, TCP, T, 40, NULL), 0,
			  "full: ports with no IP family");
	TEST_ASSERT_EQUAL(try_hash(&es, 1, V4 | IBV_RX_HASH_INNER, T, 40,
				   NULL), EOPNOTSUPP, "INNER");
	TEST_ASSERT_EQUAL(try_hash(&es, 1, 0, T, 40, NULL), EINVAL,
			  "no fields, 2 entries");
	TEST_ASSERT_EQUAL(try_hash(&ef, 1, 0, T, 40, NULL), 0,
			  "full: no fields, 2 entries");
	TEST_ASSERT_EQUAL(try_hash(&es, 0, 0, T, 40, NULL), 0,
			  "no fields, 1 entry");
	TEST_ASSERT_EQUAL(try_hash(&es, 0, 0, T, 0, NULL), EINVAL,
			  "no key");
	TEST_ASSERT_EQUAL(try_hash(&ef, 0, 0, T, 0, NULL), 0,
			  "full: no key without fields");
	TEST_ASSERT_EQUAL(try_hash(&es, 1, V4, T, 16, NULL), EINVAL,
			  "16-byte key");
	TEST_ASSERT_EQUAL(try_hash(&es, 1, V4, T + 1, 40, NULL), EOPNOTSUPP,
			  "not Toeplitz");
	TEST_ASSERT_EQUAL(try_hash(&es, 1, V4, T, 40, modify_hash),
			  EOPNOTSUPP, "modify a hash QP");
	TEST_ASSERT_EQUAL(try_hash(&es, 1, V4, T, 40, query_hash),
			  EOPNOTSUPP, "query a hash QP");
	TEST_ASSERT_EQUAL(try_hash(&ef, 1, V4, T, 40, query_hash), 0,
			  "full: query a hash QP");
	return TEST_SUCCESS;
}

/*
 * QP transitions.
 */

static int
to(struct ibv_qp *qp, enum ibv_qp_state s, int mask)
{
	return t_qp_modify(qp, s, mask, 0);
}

static int
qp_walk(struct env *e, bool strict)
{
	struct ibv_qp *qp = t_raw_qp(&e->d, 4, 0, 1, 1);
	int st = IBV_QP_STATE;

	TEST_ASSERT_NOT_NULL(qp, "");
	TEST_ASSERT_EQUAL(to(qp, IBV_QPS_INIT, st), EINVAL, "no port");
	TEST_ASSERT_EQUAL(to(qp, IBV_QPS_ERR, st), strict ? EINVAL : 0,
			  "RESET -> ERR");
	TEST_ASSERT_SUCCESS(to(qp, IBV_QPS_RESET, st), "-> RESET");
	TEST_ASSERT_SUCCESS(to(qp, IBV_QPS_INIT, st | IBV_QP_PORT), "");
	TEST_ASSERT_EQUAL(to(qp, IBV_QPS_INIT, st), strict ? 0 : EINVAL,
			  "INIT -> INIT");
	TEST_ASSERT_EQUAL(to(qp, IBV_QPS_RTS, st), EINVAL, "INIT -> RTS");
	TEST_ASSERT_SUCCESS(to(qp, IBV_QPS_RTR, st), "");
	TEST_ASSERT_EQUAL(to(qp, IBV_QPS_RTR, st), EINVAL, "RTR -> RTR");
	TEST_ASSERT_EQUAL(to(qp, IBV_QPS_INIT, st), EINVAL, "RTR -> INIT");
	if (strict)
		TEST_ASSERT_EQUAL(to(qp, IBV_QPS_RTS, st | IBV_QP_CUR_STATE),
				  EINVAL, "IBV_QP_CUR_STATE");
	TEST_ASSERT_SUCCESS(to(qp, IBV_QPS_RTS, st), "");
	TEST_ASSERT_EQUAL(to(qp, IBV_QPS_RTS, st), strict ? 0 : EINVAL,
			  "RTS -> RTS");
	/*
	 * Pacing within packet_pacing_caps, both profiles; RTS -> RTS takes
	 * IBV_QP_RATE_LIMIT alone on the full profile too.
	 */
	TEST_ASSERT_SUCCESS(t_qp_modify(qp, IBV_QPS_RTS, st | IBV_QP_RATE_LIMIT,
				    100000), "RTS -> RTS at 100 Mbit/s");
	TEST_ASSERT_SUCCESS(t_qp_modify(qp, IBV_QPS_RTS, st | IBV_QP_RATE_LIMIT,
				    0), "RTS -> RTS, limit removed");
	TEST_ASSERT_EQUAL(t_qp_modify(qp, IBV_QPS_RTS, st | IBV_QP_RATE_LIMIT,
				  100000001), EINVAL, "above qp_rate_limit_max");
	TEST_ASSERT_SUCCESS(to(qp, IBV_QPS_ERR, st), "");
	TEST_ASSERT_SUCCESS(to(qp, IBV_QPS_ERR, st), "ERR -> ERR");
	TEST_ASSERT_SUCCESS(to(qp, IBV_QPS_RESET, st), "");
	TEST_ASSERT_SUCCESS(swv_destroy_qp(qp), "");
	return TEST_SUCCESS;
}

static int
test_qp_transitions(void)
{
	if (qp_walk(&es, true) != TEST_SUCCESS)
		return TEST_FAILED;
	return qp_walk(&ef, false);
}

/*
 * Device and port.
 */

static int
test_device_port(void)
{
	static const struct { uint32_t mtu; enum ibv_mtu want; } m[] = {
		{ 1500, IBV_MTU_1024 }, { 2143, IBV_MTU_1024 },
		{ 2144, IBV_MTU_2048 }, { 4191, IBV_MTU_2048 },
		{ 4192, IBV_MTU_4096 }, { 9000, IBV_MTU_4096 },
		{ 607, IBV_MTU_256 }, { 608, IBV_MTU_512 },
	};
	struct ibv_device_attr_ex a;
	struct ibv_port_attr p;
	unsigned int i;

	TEST_ASSERT_SUCCESS(swv_query_device_ex(es.d.ctx, NULL, &a), "");
	TEST_ASSERT_EQUAL(a.orig_attr.vendor_part_id, SWV_VENDOR_PART_MLX5,
			  "");
	TEST_ASSERT_EQUAL(a.orig_attr.vendor_id, SWV_VENDOR_ID, "");
	TEST_ASSERT(strstr(a.orig_attr.fw_ver, "mlx5") != NULL, "%s",
		    a.orig_attr.fw_ver);
	TEST_ASSERT_SUCCESS(swv_query_device_ex(ef.d.ctx, NULL, &a), "");
	TEST_ASSERT_EQUAL(a.orig_attr.vendor_part_id, SWV_VENDOR_PART_FULL,
			  "");
	TEST_ASSERT_EQUAL(a.orig_attr.vendor_id, SWV_VENDOR_ID, "");
	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		TEST_ASSERT_SUCCESS(swv_set_port_mtu(es.d.ctx, m[i].mtu), "");
		TEST_ASSERT_SUCCESS(swv_query_port(es.d.ctx, 1, &p), "");
		TEST_ASSERT_EQUAL(p.active_mtu, m[i].want, "MTU %u",
				  m[i].mtu);
		TEST_ASSERT_EQUAL(p.max_mtu, IBV_MTU_4096, "");
	}
	TEST_ASSERT_SUCCESS(swv_set_port_mtu(es.d.ctx, 1500), "");
	TEST_ASSERT_EQUAL(swv_device_create_flags("bad", "loop", NULL, 8),
			  EINVAL, "unknown flag");
	return TEST_SUCCESS;
}

/*
 * Send queue sizes: the mlx5 profile takes what a ConnectX's provider
 * takes (a 512-byte WQE: 29 SGEs; 32768 64-byte blocks a queue) and
 * refuses the rest with EINVAL; the full profile takes up to its caps.
 */
static int
sq_try(struct env *e, uint32_t wr, uint32_t sge)
{
	struct ibv_qp *qp;

	errno = 0;
	qp = t_raw_qp(&e->d, wr, 0, sge, 0);
	if (qp == NULL)
		return errno;
	swv_destroy_qp(qp);
	return 0;
}

static int
test_sq_sizes(void)
{
	static const struct { uint32_t wr, sge; int want; } c[] = {
		{ 32768, 1, 0 }, { 32768, 0, 0 },
		{ 16384, 2, 0 }, { 16385, 2, EINVAL }, /* 128-byte WQEs */
		{ 10922, 9, 0 }, { 10923, 9, EINVAL }, /* 192: pow2(bytes) */
		{ 4096, 29, 0 }, { 4097, 29, EINVAL }, /* 512 */
		{ 1, 30, EINVAL }, { 1, 32, EINVAL },  /* above 512 bytes */
	};
	struct ibv_device_attr_ex a;
	unsigned int i;

	TEST_ASSERT_SUCCESS(swv_query_device_ex(es.d.ctx, NULL, &a), "");
	TEST_ASSERT_EQUAL(a.orig_attr.max_sge, 30, "mlx5: max_sge");
	TEST_ASSERT_EQUAL(a.orig_attr.max_qp_wr, 32768, "mlx5: max_qp_wr");
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		TEST_ASSERT_EQUAL(sq_try(&es, c[i].wr, c[i].sge), c[i].want,
				  "mlx5: %u WRs x %u SGEs", c[i].wr,
				  c[i].sge);
	TEST_ASSERT_SUCCESS(swv_query_device_ex(ef.d.ctx, NULL, &a), "");
	TEST_ASSERT_EQUAL(a.orig_attr.max_sge, 32, "full: max_sge");
	TEST_ASSERT_SUCCESS(sq_try(&ef, 32768, 32), "full: 32768 x 32");
	TEST_ASSERT_EQUAL(sq_try(&ef, 32769, 1), EINVAL, "full: 32769");
	return TEST_SUCCESS;
}

static int
test_profile_names(void)
{
	unsigned int fl = 99;

	TEST_ASSERT_SUCCESS(swv_profile_parse("mlx5", &fl), "");
	TEST_ASSERT_EQUAL(fl, SWV_DEVICE_PROFILE_MLX5, "");
	TEST_ASSERT_SUCCESS(swv_profile_parse("full", &fl), "");
	TEST_ASSERT_EQUAL(fl, SWV_DEVICE_PROFILE_FULL, "");
	TEST_ASSERT_EQUAL(swv_profile_parse("cx7", &fl), EINVAL, "");
	return TEST_SUCCESS;
}

static int
suite_setup(void)
{
	if (env_setup(&es, "strict-mlx5", SWV_DEVICE_PROFILE_MLX5) != 0 ||
	    env_setup(&ef, "strict-full", SWV_DEVICE_PROFILE_FULL) != 0)
		return TEST_FAILED;
	return TEST_SUCCESS;
}

static void
suite_teardown(void)
{
	env_teardown(&es);
	env_teardown(&ef);
}

static const struct unit_test_suite suite = {
	.name = "swverbs profiles",
	.setup = suite_setup,
	.teardown = suite_teardown,
	.cases = {
		TEST_CASE(test_flow_refusals),
		TEST_CASE(test_flow_accepted),
		TEST_CASE(test_vlan),
		TEST_CASE(test_multicast_placement),
		TEST_CASE(test_multicast_action_first),
		TEST_CASE(test_flow_groups),
		TEST_CASE(test_leftovers),
		TEST_CASE(test_duplicates),
		TEST_CASE(test_counters),
		TEST_CASE(test_hash_qps),
		TEST_CASE(test_qp_transitions),
		TEST_CASE(test_device_port),
		TEST_CASE(test_sq_sizes),
		TEST_CASE(test_profile_names),
		TEST_CASES_END(),
	},
};

int
main(void)
{
	return unit_test_suite_runner(&suite);
}
