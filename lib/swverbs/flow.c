/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * ibv_create_flow / ibv_destroy_flow: a flow attr and its specs, checked
 * as the device profile says (the mlx5 profile refuses what mlx5 refuses),
 * folded into a mask and a masked value over the parsed key, and handed to
 * the classifier (classifier.c) as a rule; SNIFFER rules go to the device's
 * sniffer list.
 */

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "swv_priv.h"


/* The mlx5 profile: 16 priorities, then the multicast level, 10 specs. */
#define SWV_MLX5_MAX_PRIO 15
#define SWV_PRIO_MCAST (SWV_MLX5_MAX_PRIO + 1)
#define SWV_MLX5_MAX_SPECS 10

/* What one rule's specs have set, to refuse duplicates. */
#define SEEN_ETH 0x1u
#define SEEN_L3 0x2u
#define SEEN_L4 0x4u
#define SEEN_INNER_SHIFT 4
#define SEEN_VXLAN 0x100u
#define SEEN_GRE 0x200u
#define SEEN_MPLS 0x400u
#define SEEN_ESP 0x800u
#define SEEN_TAG 0x1000u
#define SEEN_DROP 0x2000u
#define SEEN_COUNT 0x4000u

struct flow_build {
	union swv_key v;	/**< value */
	union swv_key m;	/**< mask */
	unsigned int seen;
	uint32_t tag;
	uint8_t actions;
	struct swv_counters *cnt;	/**< ACTION_COUNT */
	bool strict;		/**< the mlx5 profile's rules apply */
	/** IP protocol written so far, outer [0] and inner [1] (mlx5). */
	uint8_t proto_m[2];
	uint8_t proto_v[2];
};

/*
 * mlx5 writes a rule's IP protocol once per header level: IPV4_EXT proto,
 * IPV6 next_hdr, TCP (6), UDP (17) and GRE (47) all write it, and a later
 * writer with another mask or value is refused (fs.c set_proto). A zero
 * mask writes nothing.
 */
static int
set_proto(struct flow_build *b, bool inner, uint8_t m, uint8_t v)
{
	unsigned int l = inner ? 1 : 0;

	if (!b->strict || m == 0)
		return 0;
	if (b->proto_m[l] == 0) {
		b->proto_m[l] = m;
		b->proto_v[l] = v & m;
		return 0;
	}
	return b->proto_m[l] == m && b->proto_v[l] == (v & m) ? 0 : EINVAL;
}

/* dst = src (bytes), with a mask and a value. */
static inline void
set_field(void *vdst, void *mdst, const void *v, const void *m, size_t n)
{
	memcpy(vdst, v, n);
	memcpy(mdst, m, n);
}

static int
spec_seen(struct flow_build *b, unsigned int bit)
{
	if (b->seen & bit)
		return EINVAL;
	b->seen |= bit;
	return 0;
}

/*
 * The mlx5 profile's answer to a tunnel spec before it is folded: VXLAN and
 * GRE have no inner form (EINVAL from uverbs and libibverbs), a VNI has 24
 * bits (EINVAL), GRE's C/K/S/version bits cannot be matched, nor MPLS
 * without the device's MPLS field caps (none reported), nor ESP since the
 * FPGA IPsec code left the kernel (EOPNOTSUPP, fs.c parse_flow_attr).
 */
static int
flow_tunnel_mlx5(struct flow_build *b, const struct ibv_flow_spec *spec,
		 uint32_t type, bool inner)
{
	switch (type) {
	case IBV_FLOW_SPEC_VXLAN_TUNNEL:
		if (inner)
			return EINVAL;
		if (((spec->tunnel.val.tunnel_id | spec->tunnel.mask.tunnel_id) &
		     ~htonl(0xffffff)) != 0)
			return EINVAL;
		return 0;
	case IBV_FLOW_SPEC_GRE:
		if (inner)
			return EINVAL;
		return spec->gre.mask.c_ks_res0_ver != 0 ? EOPNOTSUPP : 0;
	case IBV_FLOW_SPEC_MPLS:
		if (spec->mpls.mask.label != 0)
			return EOPNOTSUPP;
		/* A zero mask: nothing to match, at either level. */
		return spec_seen(b, SEEN_MPLS);
	default:
		return EOPNOTSUPP;	/* ESP */
	}
}

/* Fold one spec into the rule. 0, EINVAL or ENOTSUP. */
static int
flow_add_spec(struct flow_build *b, const struct ibv_flow_spec *spec)
{
	uint32_t type = spec->hdr.type & ~(uint32_t)IBV_FLOW_SPEC_INNER;
	bool inner = (spec->hdr.type & IBV_FLOW_SPEC_INNER) != 0;
	struct swv_hdr_key *hv = inner ? &b->v.k.inner : &b->v.k.outer;
	struct swv_hdr_key *hm = inner ? &b->m.k.inner : &b->m.k.outer;
	unsigned int sh = inner ? SEEN_INNER_SHIFT : 0;
	size_t size;
	uint8_t l4;
	int ret;

	switch (type) {
	case IBV_FLOW_SPEC_ETH:
		size = sizeof(struct ibv_flow_spec_eth);
		break;
	case IBV_FLOW_SPEC_IPV4:
		size = sizeof(struct ibv_flow_spec_ipv4);
		break;
	case IBV_FLOW_SPEC_IPV4_EXT:
		size = sizeof(struct ibv_flow_spec_ipv4_ext);
		break;
	case IBV_FLOW_SPEC_IPV6:
		size = sizeof(struct ibv_flow_spec_ipv6);
		break;
	case IBV_FLOW_SPEC_TCP:
	case IBV_FLOW_SPEC_UDP:
		size = sizeof(struct ibv_flow_spec_tcp_udp);
		break;
	case IBV_FLOW_SPEC_VXLAN_TUNNEL:
		size = sizeof(struct ibv_flow_spec_tunnel);
		break;
	case IBV_FLOW_SPEC_GRE:
		size = sizeof(struct ibv_flow_spec_gre);
		break;
	case IBV_FLOW_SPEC_MPLS:
		size = sizeof(struct ibv_flow_spec_mpls);
		break;
	case IBV_FLOW_SPEC_ESP:
		size = sizeof(struct ibv_flow_spec_esp);
		break;
	case IBV_FLOW_SPEC_ACTION_TAG:
		size = sizeof(struct ibv_flow_spec_action_tag);
		break;
	case IBV_FLOW_SPEC_ACTION_DROP:
		size = sizeof(struct ibv_flow_spec_action_drop);
		break;
	case IBV_FLOW_SPEC_ACTION_HANDLE:
		size = sizeof(struct ibv_flow_spec_action_handle);
		break;
	case IBV_FLOW_SPEC_ACTION_COUNT:
		size = sizeof(struct ibv_flow_spec_counter_action);
		break;
	default:
		return EINVAL;
	}
	if (spec->hdr.size != size)
		return EINVAL;
	if (inner && type >= IBV_FLOW_SPEC_ACTION_TAG)
		return EINVAL;		/* actions have no inner form */
	switch (type) {
	case IBV_FLOW_SPEC_ETH: {
		const struct ibv_flow_spec_eth *e = &spec->eth;

		ret = spec_seen(b, SEEN_ETH << sh);
		if (ret != 0)
			return ret;
		set_field(hv->dmac, hm->dmac, e->val.dst_mac,
			  e->mask.dst_mac, 6);
		set_field(hv->smac, hm->smac, e->val.src_mac,
			  e->mask.src_mac, 6);
		set_field(&hv->ether_type, &hm->ether_type,
			  &e->val.ether_type, &e->mask.ether_type, 2);
		set_field(&hv->vlan_tag, &hm->vlan_tag, &e->val.vlan_tag,
			  &e->mask.vlan_tag, 2);
		/*
		 * mlx5: any VLAN mask asks for a C-tag (fs.c, cvlan_tag); the
		 * full profile: for a tag of any TPID, so a VLAN match never
		 * takes an untagged frame (VID 0 and PCP 0 under the mask).
		 */
		if (e->mask.vlan_tag != 0) {
			hv->cvlan = b->strict ? SWV_TAG_C : SWV_TAG_ANY;
			hm->cvlan = hv->cvlan;
		}
		if (inner) {
			hv->eth = 1;
			hm->eth = 0xff;
		}
		return 0;
	}
	case IBV_FLOW_SPEC_IPV4:
	case IBV_FLOW_SPEC_IPV4_EXT: {
		const struct ibv_flow_spec_ipv4_ext *ip = &spec->ipv4_ext;

		ret = spec_seen(b, SEEN_L3 << sh);
		if (ret != 0)
			return ret;
		hv->l3 = 4;
		hm->l3 = 0xff;
		if (type == IBV_FLOW_SPEC_IPV4) {
			const struct ibv_flow_spec_ipv4 *p4 = &spec->ipv4;

			set_field(hv->src, hm->src, &p4->val.src_ip,
				  &p4->mask.src_ip, 4);
			set_field(hv->dst, hm->dst, &p4->val.dst_ip,
				  &p4->mask.dst_ip, 4);
			return 0;
		}
		/* mlx5 matches up to tos: TTL and flags are refused. */
		if (b->strict && (ip->mask.ttl != 0 || ip->mask.flags != 0))
			return EOPNOTSUPP;
		ret = set_proto(b, inner, ip->mask.proto, ip->val.proto);
		if (ret != 0)
			return ret;
		set_field(hv->src, hm->src, &ip->val.src_ip,
			  &ip->mask.src_ip, 4);
		set_field(hv->dst, hm->dst, &ip->val.dst_ip,
			  &ip->mask.dst_ip, 4);
		set_field(&hv->proto, &hm->proto, &ip->val.proto,
			  &ip->mask.proto, 1);
		set_field(&hv->tos, &hm->tos, &ip->val.tos, &ip->mask.tos, 1);
		set_field(&hv->ttl, &hm->ttl, &ip->val.ttl, &ip->mask.ttl, 1);
		/*
		 * Flags as the kernel's enum ib_ipv4_flags: 0x2 DF, 0x4 MF;
		 * 0x8 (ours): the fragment offset is not 0; 0x1: the
		 * reserved bit.
		 */
		hv->ipflags = ip->val.flags & ip->mask.flags & 0xf;
		hm->ipflags = ip->mask.flags & 0xf;
		return 0;
	}
	case IBV_FLOW_SPEC_IPV6: {
		const struct ibv_flow_spec_ipv6 *ip = &spec->ipv6;

		ret = spec_seen(b, SEEN_L3 << sh);
		if (ret != 0)
			return ret;
		if (b->strict) {
			/* uverbs: a 20-bit label; mlx5: no hop limit. */
			if (((ip->val.flow_label | ip->mask.flow_label) &
			     ~htonl(0xfffff)) != 0)
				return EINVAL;
			if (ip->mask.hop_limit != 0)
				return EOPNOTSUPP;
			ret = set_proto(b, inner, ip->mask.next_hdr,
					ip->val.next_hdr);
			if (ret != 0)
				return ret;
		}
		hv->l3 = 6;
		hm->l3 = 0xff;
		set_field(hv->src, hm->src, ip->val.src_ip, ip->mask.src_ip,
			  16);
		set_field(hv->dst, hm->dst, ip->val.dst_ip, ip->mask.dst_ip,
			  16);
		hv->flow_label = ip->val.flow_label & htonl(0xfffff);
		hm->flow_label = ip->mask.flow_label & htonl(0xfffff);
		set_field(&hv->proto, &hm->proto, &ip->val.next_hdr,
			  &ip->mask.next_hdr, 1);
		set_field(&hv->tos, &hm->tos, &ip->val.traffic_class,
			  &ip->mask.traffic_class, 1);
		set_field(&hv->ttl, &hm->ttl, &ip->val.hop_limit,
			  &ip->mask.hop_limit, 1);
		return 0;
	}
	case IBV_FLOW_SPEC_TCP:
	case IBV_FLOW_SPEC_UDP: {
		const struct ibv_flow_spec_tcp_udp *t = &spec->tcp_udp;

		ret = spec_seen(b, SEEN_L4 << sh);
		if (ret != 0)
			return ret;
		l4 = type == IBV_FLOW_SPEC_TCP ? IPPROTO_TCP : IPPROTO_UDP;
		ret = set_proto(b, inner, 0xff, l4);
		if (ret != 0)
			return ret;
		hv->l4 = l4;
		hm->l4 = 0xff;
		set_field(&hv->sport, &hm->sport, &t->val.src_port,
			  &t->mask.src_port, 2);
		set_field(&hv->dport, &hm->dport, &t->val.dst_port,
			  &t->mask.dst_port, 2);
		return 0;
	}
	case IBV_FLOW_SPEC_VXLAN_TUNNEL:
	case IBV_FLOW_SPEC_GRE:
	case IBV_FLOW_SPEC_MPLS:
	case IBV_FLOW_SPEC_ESP:
		if (b->strict) {
			ret = flow_tunnel_mlx5(b, spec, type, inner);
			if (ret != 0 || type == IBV_FLOW_SPEC_MPLS)
				return ret;
		}
		/* One level of tunnel: no tunnel headers inside one. */
		if (inner)
			return ENOTSUP;
		break;
	case IBV_FLOW_SPEC_ACTION_TAG:
		ret = spec_seen(b, SEEN_TAG);
		if (ret != 0)
			return ret;
		/* 24 bits, as on mlx5; 0 reads as "no tag". */
		if (spec->flow_tag.tag_id > 0xffffff)
			return EINVAL;
		b->tag = spec->flow_tag.tag_id;
		return 0;
	case IBV_FLOW_SPEC_ACTION_DROP:
		ret = spec_seen(b, SEEN_DROP);
		if (ret != 0)
			return ret;
		b->actions |= SWV_ACT_DROP;
		return 0;
	case IBV_FLOW_SPEC_ACTION_COUNT:
		/* Binds a counters object (checked against the QP later). */
		ret = spec_seen(b, SEEN_COUNT);
		if (ret != 0)
			return ret;
		if (spec->flow_count.counters == NULL)
			return EINVAL;
		b->cnt = to_swv_counters(spec->flow_count.counters);
		return 0;
	default:
		/* HANDLE: no flow action objects. */
		return ENOTSUP;
	}
	switch (type) {
	case IBV_FLOW_SPEC_VXLAN_TUNNEL: {
		const struct ibv_flow_spec_tunnel *t = &spec->tunnel;

		ret = spec_seen(b, SEEN_VXLAN);
		if (ret != 0)
			return ret;
		b->v.k.tun |= SWV_TUN_VXLAN;
		b->m.k.tun |= SWV_TUN_VXLAN;
		/* The VNI: the low 24 bits of the big-endian tunnel_id. */
		set_field(&b->v.k.tunnel_id, &b->m.k.tunnel_id,
			  &t->val.tunnel_id, &t->mask.tunnel_id, 4);
		b->v.k.tunnel_id &= htonl(0xffffff);
		b->m.k.tunnel_id &= htonl(0xffffff);
		return 0;
	}
	case IBV_FLOW_SPEC_GRE: {
		const struct ibv_flow_spec_gre *g = &spec->gre;

		ret = spec_seen(b, SEEN_GRE);
		if (ret != 0)
			return ret;
		ret = set_proto(b, false, 0xff, IPPROTO_GRE);
		if (ret != 0)
			return ret;
		b->v.k.tun |= SWV_TUN_GRE;
		b->m.k.tun |= SWV_TUN_GRE;
		set_field(&b->v.k.gre_flags, &b->m.k.gre_flags,
			  &g->val.c_ks_res0_ver, &g->mask.c_ks_res0_ver, 2);
		set_field(&b->v.k.gre_proto, &b->m.k.gre_proto,
			  &g->val.protocol, &g->mask.protocol, 2);
		set_field(&b->v.k.gre_key, &b->m.k.gre_key, &g->val.key,
			  &g->mask.key, 4);
		return 0;
	}
	case IBV_FLOW_SPEC_MPLS: {
		const struct ibv_flow_spec_mpls *l = &spec->mpls;

		ret = spec_seen(b, SEEN_MPLS);
		if (ret != 0)
			return ret;
		b->v.k.tun |= SWV_TUN_MPLS;
		b->m.k.tun |= SWV_TUN_MPLS;
		set_field(&b->v.k.mpls, &b->m.k.mpls, &l->val.label,
			  &l->mask.label, 4);
		return 0;
	}
	default: {
		const struct ibv_flow_spec_esp *e = &spec->esp;

		ret = spec_seen(b, SEEN_ESP);
		if (ret != 0)
			return ret;
		b->v.k.tun |= SWV_TUN_ESP;
		b->m.k.tun |= SWV_TUN_ESP;
		set_field(&b->v.k.esp_spi, &b->m.k.esp_spi, &e->val.spi,
			  &e->mask.spi, 4);
		set_field(&b->v.k.esp_seq, &b->m.k.esp_seq, &e->val.seq,
			  &e->mask.seq, 4);
		return 0;
	}
	}
}

/* Publish dev's sniffer list with qp added, or one qp removed. */
static int
sniff_update(struct swv_device *dev, struct swv_qp *qp, bool add)
{
	struct swv_sniff *old = dev->sniff, *sn;
	uint32_t n = old == NULL ? 0 : old->n, i, j = 0;
	bool removed = false;

	sn = malloc(sizeof(*sn) + (n + 1) * sizeof(sn->qp[0]));
	if (sn == NULL)
		return ENOMEM;
	for (i = 0; i < n; i++) {
		if (!add && !removed && old->qp[i] == qp) {
			removed = true;
			continue;
		}
		sn->qp[j++] = old->qp[i];
	}
	if (add)
		sn->qp[j++] = qp;
	sn->n = j;
	if (j == 0) {
		free(sn);
		sn = NULL;
	}
	rcu_assign_pointer(dev->sniff, sn);
	swv_retire(dev->eng, old);
	return 0;
}

/*
 * The mlx5 profile's checks of a flow attr before its specs: the flags
 * (uverbs and mlx5 refuse unknown bits and DONT_TRAP or EGRESS on leftovers
 * rules with EINVAL; mlx5 without multi-path TIRs or an egress table
 * answers the flags themselves with EOPNOTSUPP), SNIFFER (EOPNOTSUPP: no
 * sniffer tables), the number of specs (IB_FLOW_SPEC_SUPPORT_LAYERS, EINVAL)
 * and the priority (the 16 bypass priorities of mlx5_ib_create_flow,
 * ENOMEM above, whatever the type).
 */
static int
flow_attr_mlx5(const struct ibv_flow_attr *attr)
{
	uint32_t known = IBV_FLOW_ATTR_FLAGS_DONT_TRAP |
			 IBV_FLOW_ATTR_FLAGS_EGRESS;
	bool leftovers = attr->type == IBV_FLOW_ATTR_ALL_DEFAULT ||
			 attr->type == IBV_FLOW_ATTR_MC_DEFAULT;

	if ((attr->flags & ~known) != 0 || (leftovers && attr->flags != 0))
		return EINVAL;
	if (attr->num_of_specs > SWV_MLX5_MAX_SPECS)
		return EINVAL;
	if (attr->priority > SWV_MLX5_MAX_PRIO)
		return ENOMEM;
	if (attr->flags != 0 || attr->type == IBV_FLOW_ATTR_SNIFFER)
		return EOPNOTSUPP;
	return 0;
}

/*
 * Whether mlx5 takes a NORMAL rule whose first spec is @spec for a
 * multicast-only one (fs.c flow_is_multicast_only): an IPv4 spec whose dst
 * value (the mask is not looked at) is in 224.0.0.0/4, or an Ethernet spec
 * whose dst MAC has the group bit in both mask and value.
 */
static bool
flow_mcast_only(const struct ibv_flow_spec *spec)
{
	switch (spec->hdr.type) {
	case IBV_FLOW_SPEC_ETH:
		return (spec->eth.mask.dst_mac[0] & 1) != 0 &&
		       (spec->eth.val.dst_mac[0] & 1) != 0;
	case IBV_FLOW_SPEC_IPV4:
	case IBV_FLOW_SPEC_IPV4_EXT:
		/* IPV4_EXT starts with the same src and dst as IPV4. */
		return (ntohl(spec->ipv4.val.dst_ip) >> 28) == 0xe;
	default:
		return false;
	}
}

/*
 * mlx5's ether type check of a rule with an IP spec (fs.c
 * is_valid_ethertype), per header level: a masked ether type must be fully
 * masked and agree with the IP family. EINVAL otherwise.
 */
static int
flow_ethertype_mlx5(const struct flow_build *b)
{
	const struct swv_hdr_key *hv[2] = { &b->v.k.outer, &b->v.k.inner };
	const struct swv_hdr_key *hm[2] = { &b->m.k.outer, &b->m.k.inner };
	unsigned int l;
	uint16_t want;

	for (l = 0; l < 2; l++) {
		if (hm[l]->ether_type == 0 || hm[l]->l3 == 0)
			continue;
		want = htons(hv[l]->l3 == 4 ? 0x0800 : 0x86dd);
		if (hm[l]->ether_type != 0xffff || hv[l]->ether_type != want)
			return EINVAL;
	}
	return 0;
}

/*
 * mlx5's flow groups, for the mlx5 profile's NORMAL rules. mlx5_ib gives
 * each priority, and the multicast level, a flow table of 65536 entries
 * autogrouped into 6 groups (drivers/infiniband/hw/mlx5/fs.c
 * MLX5_FS_MAX_ENTRIES, MLX5_FS_MAX_TYPES). A rule joins a group of its
 * match criteria that has room; else a new group is made, of 65536 / 7
 * entries while the table has fewer than 6 groups and of one entry after,
 * at the lowest index range free (first fit over the groups sorted by
 * start index: fs_core.c alloc_auto_flow_group). A group goes with its
 * last rule and leaves its range free. The device tries a table's groups
 * by index, so among overlapping rules of one level the rule whose group
 * sits first wins, not the one made first: a group made later can take
 * a range freed before an older one, and a rule made later that joins an
 * older group wins over the rules of groups made in between.
 */
#define SWV_FG_ENTRIES 65536u
#define SWV_FG_TYPES 6u

/*
 * A rule's match criteria as mlx5 has them (the mask of its flow table
 * entry): swverbs' mask, with what swverbs keeps otherwise put as mlx5
 * does. The IP protocol is what the specs wrote (set_proto(): TCP, UDP
 * and GRE write it, so they add no presence of their own); TCP and UDP
 * ports are two pairs of fields; an IPv4 address sits in the last 4 bytes
 * of the 16-byte address fields; an inner Ethernet spec adds nothing by
 * itself.
 */
struct swv_fg_crit {
	union swv_key m;
	uint8_t ports[2];		/**< outer, inner: TCP or UDP, 0 */
};

static void
flow_criteria(const struct flow_build *b, struct swv_fg_crit *c)
{
	struct swv_hdr_key *hm[2];
	const struct swv_hdr_key *hv[2] = { &b->v.k.outer, &b->v.k.inner };
	unsigned int l;

	memset(c, 0, sizeof(*c));
	c->m = b->m;
	hm[0] = &c->m.k.outer;
	hm[1] = &c->m.k.inner;
	c->m.k.tun &= (uint8_t)~SWV_TUN_GRE;
	for (l = 0; l < 2; l++) {
		if (hm[l]->sport != 0 || hm[l]->dport != 0)
			c->ports[l] = hv[l]->l4;
		hm[l]->l4 = 0;
		hm[l]->proto = b->proto_m[l];
		if (hv[l]->l3 == 4) {
			memmove(hm[l]->src + 12, hm[l]->src, 4);
			memset(hm[l]->src, 0, 4);
			memmove(hm[l]->dst + 12, hm[l]->dst, 4);
			memset(hm[l]->dst, 0, 4);
		}
	}
	c->m.k.inner.eth = 0;
}

struct swv_fgroup {
	struct swv_fgroup *next;	/**< sorted by (base, start) */
	uint64_t base;			/**< the table: class and priority */
	uint32_t start;			/**< first index */
	uint32_t size;			/**< entries */
	uint32_t n;			/**< rules in it */
	struct swv_fg_crit crit;	/**< its rules' match criteria */
};

/* Put a rule of criteria c in a group of table base. 0 or errno. */
static int
fgroup_join(struct swv_device *dev, uint64_t base,
	    const struct swv_fg_crit *c, uint32_t *start)
{
	struct swv_fgroup **pp, *g;
	uint32_t ngroups = 0, size, at = 0;

	for (g = dev->fgroups; g != NULL; g = g->next) {
		if (g->base != base)
			continue;
		ngroups++;
		if (g->n < g->size && memcmp(&g->crit, c, sizeof(*c)) == 0) {
			g->n++;
			*start = g->start;
			return 0;
		}
	}
	size = ngroups < SWV_FG_TYPES ?
	       SWV_FG_ENTRIES / (SWV_FG_TYPES + 1) : 1;
	pp = &dev->fgroups;
	while (*pp != NULL && (*pp)->base < base)
		pp = &(*pp)->next;
	for (; *pp != NULL && (*pp)->base == base; pp = &(*pp)->next) {
		if (at + size <= (*pp)->start)
			break;
		at = (*pp)->start + (*pp)->size;
	}
	if (at + size > SWV_FG_ENTRIES)
		return ENOSPC;
	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return ENOMEM;
	g->base = base;
	g->start = at;
	g->size = size;
	g->n = 1;
	g->crit = *c;
	g->next = *pp;
	*pp = g;
	*start = at;
	return 0;
}

/* A rule of the group at start of table base goes. */
static void
fgroup_leave(struct swv_device *dev, uint64_t base, uint32_t start)
{
	struct swv_fgroup **pp, *g;

	for (pp = &dev->fgroups; (g = *pp) != NULL; pp = &g->next) {
		if (g->base != base || g->start != start)
			continue;
		if (--g->n == 0) {
			*pp = g->next;
			free(g);
		}
		return;
	}
}

/* Whether rule f sits in a flow group (the mlx5 profile's NORMAL rules). */
static bool
flow_grouped(const struct swv_device *dev, const struct swv_flow *f)
{
	return dev->strict && f->sub != NULL &&
	       (f->rank >> SWV_RANK_CLASS_SHIFT) == SWV_CLASS_NORMAL;
}

void
swv_fgroups_free(struct swv_device *dev)
{
	struct swv_fgroup *g;

	while ((g = dev->fgroups) != NULL) {
		dev->fgroups = g->next;
		free(g);
	}
}

struct ibv_flow *
swv_create_flow(struct ibv_qp *ibqp, struct ibv_flow_attr *attr)
{
	uint8_t idx[SWV_KEY_WORDS];
	uint64_t mask[SWV_KEY_WORDS];
	const uint8_t *p, *end;
	struct flow_build b;
	struct swv_device *dev;
	struct swv_flow *f;
	struct swv_qp *qp;
	unsigned int i, nw;
	uint64_t cls = 0;
	uint32_t prio;
	bool sniffer = false, grouped = false;
	int ret;

	if (ibqp == NULL || attr == NULL || attr->port != 1 ||
	    attr->size < sizeof(*attr)) {
		errno = EINVAL;
		return NULL;
	}
	qp = to_swv_qp(ibqp);
	dev = qp->dev;
	/*
	 * libibverbs does not pass ibv_flow_attr.comp_mask to the kernel, so
	 * mlx5 never sees it; the full profile refuses it.
	 */
	if ((!dev->strict && attr->comp_mask != 0) ||
	    (!qp->is_hash && !qp->has_rq)) {
		errno = EINVAL;
		return NULL;
	}
	if (dev->strict) {
		ret = flow_attr_mlx5(attr);
		if (ret != 0) {
			errno = ret;
			return NULL;
		}
	}
	prio = attr->priority;
	switch (attr->type) {
	case IBV_FLOW_ATTR_NORMAL:
		cls = SWV_CLASS_NORMAL;
		break;
	case IBV_FLOW_ATTR_MC_DEFAULT:
		cls = SWV_CLASS_MC;
		break;
	case IBV_FLOW_ATTR_ALL_DEFAULT:
		cls = SWV_CLASS_ALL;
		break;
	case IBV_FLOW_ATTR_SNIFFER:
		sniffer = true;
		break;
	default:
		errno = EINVAL;
		return NULL;
	}
	if (attr->flags != 0) {
		errno = (attr->flags & ~(uint32_t)(IBV_FLOW_ATTR_FLAGS_DONT_TRAP |
						   IBV_FLOW_ATTR_FLAGS_EGRESS))
			? EINVAL : ENOTSUP;
		return NULL;
	}
	memset(&b, 0, sizeof(b));
	b.strict = dev->strict;
	/*
	 * Walk the specs; their sizes must add up to attr->size exactly.
	 * Specs are packed back to back, so one may start at any offset (a
	 * 12-byte tag spec puts the next one at 4 modulo 8): each is read
	 * through an aligned copy, never in place.
	 */
	p = (const uint8_t *)(attr + 1);
	end = (const uint8_t *)attr + attr->size;
	for (i = 0; i < attr->num_of_specs; i++) {
		struct ibv_flow_spec spec;
		size_t size;

		if ((size_t)(end - p) < sizeof(spec.hdr)) {
			errno = EINVAL;
			return NULL;
		}
		memcpy(&spec.hdr, p, sizeof(spec.hdr));
		size = spec.hdr.size;
		if (size < sizeof(spec.hdr) || size > (size_t)(end - p) ||
		    size > sizeof(spec)) {
			errno = EINVAL;
			return NULL;
		}
		memset(&spec, 0, sizeof(spec));
		memcpy(&spec, p, size);
		ret = flow_add_spec(&b, &spec);
		if (ret != 0) {
			errno = ret;
			return NULL;
		}
		if (i == 0 && dev->strict && cls == SWV_CLASS_NORMAL &&
		    flow_mcast_only(&spec))
			prio = SWV_PRIO_MCAST;
		p += size;
	}
	if (p != end) {
		errno = EINVAL;
		return NULL;
	}
	if (dev->strict) {
		ret = flow_ethertype_mlx5(&b);
		if (ret != 0) {
			errno = ret;
			return NULL;
		}
		if (cls != SWV_CLASS_NORMAL) {
			/*
			 * Leftovers: mlx5 puts its own rules in place of the
			 * user's specs (their tag and drop with them).
			 */
			memset(&b.v, 0, sizeof(b.v));
			memset(&b.m, 0, sizeof(b.m));
			b.seen &= SEEN_COUNT;
			b.tag = 0;
			b.actions = 0;
		}
	}
	if (cls == SWV_CLASS_MC) {
		b.m.k.outer.dmac[0] = 0x01;
		b.v.k.outer.dmac[0] = 0x01;
	}
	/* Default and sniffer rules match on nothing and take no action. */
	if ((cls != SWV_CLASS_NORMAL || sniffer) &&
	    (b.seen & ~(SEEN_TAG | SEEN_DROP | SEEN_COUNT)) != 0) {
		errno = EINVAL;
		return NULL;
	}
	if (sniffer && (b.seen & (SEEN_TAG | SEEN_DROP | SEEN_COUNT)) != 0) {
		errno = EINVAL;
		return NULL;
	}
	/* A flow counts into an object of its own device only. */
	if (b.cnt != NULL && b.cnt->dev != qp->dev) {
		errno = EINVAL;
		return NULL;
	}
	/* mlx5 provider: COUNT needs an attached point (EINVAL). */
	if (dev->strict && b.cnt != NULL && b.cnt->nidx == 0) {
		errno = EINVAL;
		return NULL;
	}
	/* The mask's words, and the value under them. */
	nw = 0;
	for (i = 0; i < SWV_KEY_WORDS; i++) {
		if (b.m.w[i] == 0)
			continue;
		idx[nw] = (uint8_t)i;
		mask[nw] = b.m.w[i];
		nw++;
	}
	pthread_mutex_lock(&swv_lock);
	if (dev->nflows >= SWV_MAX_FLOWS) {
		ret = ENOMEM;
		goto err;
	}
	f = swv_pool_alloc(&dev->eng->pool,
			   SWV_POOL_RULE(nw, b.cnt != NULL));
	if (f == NULL) {
		ret = ENOMEM;
		goto err;
	}
	memset(f, 0, sizeof(*f));
	for (i = 0; i < nw; i++)
		f->key[i] = b.v.w[idx[i]] & mask[i];
	f->nw = (uint8_t)nw;
	f->hash = swv_key_hash(f->key, nw);
	f->tag = b.tag;
	f->cnt = b.cnt;
	f->actions = b.actions;
	f->qp = qp;
	f->ibv_flow.context = ibqp->context;
	f->ibv_flow.handle = (uint32_t)++dev->flow_seq;
	/* Bound, its tally zeroed, before the engine can see the rule. */
	if (f->cnt != NULL)
		swv_counters_bind(f->cnt, f);
	if (sniffer) {
		ret = sniff_update(dev, qp, true);
	} else {
		uint64_t base = (cls << SWV_RANK_CLASS_SHIFT) |
				((uint64_t)prio << SWV_RANK_PRIO_SHIFT);
		uint32_t start = 0;

		f->rank = base | (dev->flow_seq & SWV_RANK_SEQ_MASK);
		grouped = dev->strict && cls == SWV_CLASS_NORMAL;
		ret = dev->strict ?
		      swv_steer_conflict(dev, f, nw, idx, mask) : 0;
		if (ret == 0 && grouped) {
			struct swv_fg_crit crit;

			flow_criteria(&b, &crit);
			ret = fgroup_join(dev, base, &crit, &start);
		}
		if (ret == 0 && grouped)
			f->rank = base |
				  ((uint64_t)start << SWV_RANK_GROUP_SHIFT) |
				  (dev->flow_seq & SWV_RANK_CREATED_MASK);
		if (ret == 0) {
			ret = swv_steer_add(dev, f, nw, idx, mask);
			if (ret != 0 && grouped)
				fgroup_leave(dev, base, start);
		}
	}
	if (ret != 0)
		goto err_unbind;
	dev->nflows++;
	qp->flows++;
	to_swv_ctx(ibqp->context)->objs++;
	swv_retire_done(dev->eng);
	pthread_mutex_unlock(&swv_lock);
	return &f->ibv_flow;
err_unbind:
	if (f->cnt != NULL)
		swv_counters_unbind(f->cnt, f, false);
	swv_pool_free(&dev->eng->pool, f,
		      SWV_POOL_RULE(nw, f->cnt != NULL));
err:
	swv_retire_done(dev->eng);
	pthread_mutex_unlock(&swv_lock);
	errno = ret;
	return NULL;
}

int
swv_destroy_flow(struct ibv_flow *ibflow)
{
	struct swv_device *dev;
	struct swv_flow *f;
	int ret = 0;

	if (ibflow == NULL)
		return EINVAL;
	f = container_of(ibflow, struct swv_flow, ibv_flow);
	dev = f->qp->dev;
	pthread_mutex_lock(&swv_lock);
	if (f->sub == NULL) {
		ret = sniff_update(dev, f->qp, false);
	} else {
		if (flow_grouped(dev, f))
			fgroup_leave(dev, f->rank & ~SWV_RANK_SEQ_MASK,
				     (uint32_t)((f->rank & SWV_RANK_SEQ_MASK) >>
						SWV_RANK_GROUP_SHIFT));
		swv_steer_del(dev, f);
	}
	if (ret == 0 && f->cnt != NULL)
		/* Unbound, but the engine may count until a grace period. */
		swv_counters_unbind(f->cnt, f, true);
	if (ret != 0) {
		pthread_mutex_unlock(&swv_lock);
		return ret;
	}
	dev->nflows--;
	f->qp->flows--;
	to_swv_ctx(ibflow->context)->objs--;
	swv_retire_rule(dev->eng, f);
	/* No rule left on the device: nothing it retired is needed. */
	if (dev->nflows == 0)
		swv_retire_flush(dev->eng);
	else
		swv_retire_done(dev->eng);
	pthread_mutex_unlock(&swv_lock);
	return 0;
}
