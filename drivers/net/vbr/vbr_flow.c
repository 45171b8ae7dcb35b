/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * rte_flow to verbs: the translation of one rule into an ibv_flow_attr and
 * its specs, and a readable dump of the result.
 *
 * Items are walked along a graph (each item lists the items that may follow
 * it). Every item type has a table entry: the fields verbs can match
 * (mask_support), the mask used when the rule gives none (mask_default), the
 * size of the verbs spec it adds (dst_sz, 0 when it folds into an earlier
 * spec) and a merge function that writes value and mask, both in network
 * order. A mask bit outside mask_support, a range (last), a VLAN match that
 * would also accept untagged frames: each is an error naming the item and
 * field, never a wider rule. This file calls no device: vbr_flow_prepare()
 * is a pure function.
 *
 * Conditions verbs cannot say are kept exact by companion rules (desc.comp,
 * vbr_flow_comp_attr()): "untagged only" (eth has_vlan 0) and "no IPv6
 * extension header" (ipv6 has_frag_ext 0 with the next header unmasked)
 * become the rule plus companions that catch the excluded frames at a
 * better verbs priority (vbr_steer.c). IPv4 fragment_offset and IPv6
 * has_frag_ext are matched by a device that matches fragments
 * (VBR_FLOW_F_FRAG, swverbs' full profile). A ConnectX through verbs
 * matches IPv4 up to tos and no IPv6 fragment header: there the outer
 * headers' fragment condition is left out of the verbs flow and kept in
 * software (desc.sw_frag): the rule's Rx action table entry carries it,
 * and the Rx burst takes the mark off a frame outside it (vbr_rxtx.c).
 * The verbs flow then takes frames the rule excludes (any fragment
 * without an L4 item; first fragments under one on swverbs, whose parser
 * reads their L4 header, not on a ConnectX, which matches no header after
 * IP in a fragment); they stay exact only when
 * the rule does nothing else to them: a mark or flag and a queue set that
 * places every frame as the port's own does (vbr_flow_sw_frag() here,
 * vbr_steer_sw_exact() for the port's state). Anything else is refused.
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ether.h>
#include <rte_flow.h>

#include "vbr_compat.h"
#include "vbr_flow.h"
#include "vbr_rxtx.h"

/** State of one translation. */
struct vbr_flow_parse {
	struct vbr_flow_desc *d;		/**< output */
	uint8_t *pos;				/**< where the next spec goes */
	struct ibv_flow_spec_eth *eth;		/**< last eth spec, for vlan */
	struct ibv_flow_spec_eth *outer_eth;	/**< first eth spec */
	uint8_t *ip;				/**< last IPv4/IPv6 spec */
	const struct rte_flow_item *eth_item;	/**< has_vlan's item */
	unsigned int inner:1;			/**< after a tunnel item */
	unsigned int prev_tunnel:1;		/**< previous item a tunnel */
	unsigned int want_vlan:1;		/**< eth has_vlan 1 */
	unsigned int no_vlan:1;			/**< eth has_vlan 0 */
	unsigned int vlan:1;			/**< a vlan item was seen */
	unsigned int v6_nofrag:1;		/**< outer ipv6 has_frag_ext 0 */
	unsigned int vlan_any_tpid:1;		/**< vbr_flow_caps' */
	/** The device matches no fragment: the condition goes to software. */
	unsigned int sw_frag:1;
	const struct rte_flow_item *frag_item;	/**< its ipv4/ipv6 item */
	/** What each header level (outer, inner) has fixed so far. */
	struct {
		uint8_t l3;		/**< 4, 6 or 0: the IP item's family */
		uint8_t proto_mask;	/**< the IP protocol's first writer */
		uint8_t proto;		/**< under proto_mask */
	} lvl[2];
};

/** One field of an rte_flow item, to name it in an error. */
struct vbr_flow_field {
	const char *name;	/**< as testpmd spells it, NULL: end */
	uint16_t off;		/**< byte offset in the item struct */
	uint16_t len;		/**< bytes */
};

typedef int (vbr_flow_merge_t)(struct vbr_flow_parse *p, const void *spec,
			       const void *mask,
			       const struct rte_flow_item *item,
			       struct rte_flow_error *error);

/** Everything the translation knows of one item type. */
struct vbr_flow_item_info {
	const char *name;			/**< item name in messages */
	const enum rte_flow_item_type *next;	/**< may follow, END-ended */
	const void *mask_support;		/**< bits verbs can match */
	const void *mask_default;		/**< mask when none is given */
	uint16_t mask_sz;			/**< size of the item struct */
	uint16_t dst_sz;			/**< verbs spec bytes added */
	enum ibv_flow_spec_type spec_type;	/**< verbs spec type */
	unsigned int tunnel:1;			/**< a tunnel header */
	const struct vbr_flow_field *fields;	/**< for error messages */
	const char *matchable;			/**< what may be masked */
	vbr_flow_merge_t *merge;		/**< write value and mask */
};

#define FIELD(st, n, m) { n, offsetof(st, m), sizeof(((st *)0)->m) }

static const enum rte_flow_item_type vbr_next_start[] = {
	RTE_FLOW_ITEM_TYPE_ETH,
	RTE_FLOW_ITEM_TYPE_IPV4,
	RTE_FLOW_ITEM_TYPE_IPV6,
	RTE_FLOW_ITEM_TYPE_END,
};
static const enum rte_flow_item_type vbr_next_eth[] = {
	RTE_FLOW_ITEM_TYPE_VLAN,
	RTE_FLOW_ITEM_TYPE_IPV4,
	RTE_FLOW_ITEM_TYPE_IPV6,
	RTE_FLOW_ITEM_TYPE_END,
};
static const enum rte_flow_item_type vbr_next_vlan[] = {
	RTE_FLOW_ITEM_TYPE_IPV4,
	RTE_FLOW_ITEM_TYPE_IPV6,
	RTE_FLOW_ITEM_TYPE_END,
};
static const enum rte_flow_item_type vbr_next_ip[] = {
	RTE_FLOW_ITEM_TYPE_TCP,
	RTE_FLOW_ITEM_TYPE_UDP,
	RTE_FLOW_ITEM_TYPE_GRE,
	RTE_FLOW_ITEM_TYPE_ESP,
	RTE_FLOW_ITEM_TYPE_ICMP,
	RTE_FLOW_ITEM_TYPE_SCTP,
	RTE_FLOW_ITEM_TYPE_END,
};
static const enum rte_flow_item_type vbr_next_udp[] = {
	RTE_FLOW_ITEM_TYPE_VXLAN,
	RTE_FLOW_ITEM_TYPE_MPLS,
	RTE_FLOW_ITEM_TYPE_END,
};
static const enum rte_flow_item_type vbr_next_none[] = {
	RTE_FLOW_ITEM_TYPE_END,
};
static const enum rte_flow_item_type vbr_next_vxlan[] = {
	RTE_FLOW_ITEM_TYPE_ETH,
	RTE_FLOW_ITEM_TYPE_END,
};
static const enum rte_flow_item_type vbr_next_gre[] = {
	RTE_FLOW_ITEM_TYPE_ETH,
	RTE_FLOW_ITEM_TYPE_IPV4,
	RTE_FLOW_ITEM_TYPE_IPV6,
	RTE_FLOW_ITEM_TYPE_MPLS,
	RTE_FLOW_ITEM_TYPE_END,
};
static const enum rte_flow_item_type vbr_next_mpls[] = {
	RTE_FLOW_ITEM_TYPE_ETH,
	RTE_FLOW_ITEM_TYPE_IPV4,
	RTE_FLOW_ITEM_TYPE_IPV6,
	RTE_FLOW_ITEM_TYPE_END,
};

/* Copy value and mask, the value reduced to the mask. */
static void
vbr_flow_set(void *val, void *msk, const void *v, const void *m, size_t n)
{
	uint8_t *dv = val, *dm = msk;
	const uint8_t *sv = v, *sm = m;
	size_t i;

	for (i = 0; i < n; i++) {
		dm[i] = sm[i];
		dv[i] = sv[i] & sm[i];
	}
}

static int
vbr_flow_merge_eth(struct vbr_flow_parse *p, const void *spec,
		   const void *mask, const struct rte_flow_item *item,
		   struct rte_flow_error *error)
{
	struct ibv_flow_spec_eth *eth = (struct ibv_flow_spec_eth *)p->pos;
	const struct rte_flow_item_eth *s = spec, *m = mask;

	RTE_SET_USED(item);
	RTE_SET_USED(error);
	p->eth = eth;
	if (s == NULL)
		return 0;
	/*
	 * has_vlan 1: a vlan item must follow (its mask says "tagged");
	 * has_vlan 0: untagged only, which verbs cannot say: companions.
	 */
	if (m->has_vlan && !p->inner) {
		p->eth_item = item;
		p->want_vlan = s->has_vlan;
		p->no_vlan = !s->has_vlan;
	} else if (m->has_vlan) {
		return rte_flow_error_set(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ITEM, item,
			"vbr: eth item: has_vlan can be matched in the outer "
			"headers only");
	}
	vbr_flow_set(eth->val.dst_mac, eth->mask.dst_mac, s->dst.addr_bytes,
		     m->dst.addr_bytes, RTE_ETHER_ADDR_LEN);
	vbr_flow_set(eth->val.src_mac, eth->mask.src_mac, s->src.addr_bytes,
		     m->src.addr_bytes, RTE_ETHER_ADDR_LEN);
	vbr_flow_set(&eth->val.ether_type, &eth->mask.ether_type, &s->type,
		     &m->type, sizeof(s->type));
	return 0;
}

/*
 * A VLAN item folds into the eth spec before it. Verbs matches the EtherType
 * after the tag, and it has no "tagged" bit: a tag can only be told apart from
 * no tag by a non-zero VID under the mask.
 */
static int
vbr_flow_merge_vlan(struct vbr_flow_parse *p, const void *spec,
		    const void *mask, const struct rte_flow_item *item,
		    struct rte_flow_error *error)
{
	struct ibv_flow_spec_eth *eth = p->eth;
	const struct rte_flow_item_vlan *s = spec, *m = mask;

	/*
	 * The eth type before a tag is its TPID: on a ConnectX a verbs VLAN
	 * match selects 802.1Q C-tags (mlx5's cvlan_tag), so 0x8100 is what
	 * it says already; verbs matches the type after the tag in
	 * ether_type. A device whose VLAN match takes any TPID (swverbs'
	 * full profile) cannot say 0x8100: refused, not widened.
	 */
	if (eth->mask.ether_type == RTE_BE16(0xffff) &&
	    eth->val.ether_type == RTE_BE16(RTE_ETHER_TYPE_VLAN)) {
		if (p->vlan_any_tpid)
			return rte_flow_error_set(error, ENOTSUP,
				RTE_FLOW_ERROR_TYPE_ITEM, item,
				"vbr: vlan item: the eth item's type 0x8100 "
				"(802.1Q C-tag) cannot be matched here: this "
				"device's VLAN match takes tags of any TPID "
				"(swverbs' full profile); leave the eth type "
				"out to match any tag");
		eth->mask.ether_type = 0;
		eth->val.ether_type = 0;
	}
	if (eth->mask.ether_type != 0)
		return rte_flow_error_set(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ITEM, item,
			"vbr: vlan item: the eth item before it must not match "
			"a type other than 0x8100 (verbs matches 802.1Q tags "
			"and the type after the tag: use vlan inner_type)");
	if (p->no_vlan)
		return rte_flow_error_set(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_ITEM, item,
			"vbr: vlan item: the eth item before it says has_vlan "
			"0 (untagged)");
	p->vlan = 1;
	if (s == NULL || (s->tci & m->tci & RTE_BE16(0x0fff)) == 0)
		return rte_flow_error_set(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ITEM, item,
			"vbr: vlan item: give a non-zero VID under the tci "
			"mask (verbs cannot tell a tag with VID 0 or any VID "
			"from no tag)");
	vbr_flow_set(&eth->val.vlan_tag, &eth->mask.vlan_tag, &s->tci,
		     &m->tci, sizeof(s->tci));
	vbr_flow_set(&eth->val.ether_type, &eth->mask.ether_type,
		     &s->inner_type, &m->inner_type, sizeof(s->inner_type));
	return 0;
}

/*
 * ipv4 fragment_offset (flags and offset) onto the verbs flags of the
 * ipv4_ext spec: IB_IPV4_DONT_FRAG (0x2), IB_IPV4_MORE_FRAG (0x4) and, in
 * swverbs' full profile, VBR_IPV4_FLAG_OFFSET (0x8: the fragment offset is
 * not 0). So "not a fragment" (0 under 0x3fff) is MF 0 and offset 0, a
 * first fragment MF 1 and offset 0, a later one the range 1 to 0x1fff of
 * the offset. A given non-zero offset cannot be matched.
 */
#define VBR_IPV4_FLAG_DF 0x2
#define VBR_IPV4_FLAG_MF 0x4
#define VBR_IPV4_FLAG_OFFSET 0x8
#define VBR_IPV4_OFF 0x1fff
#define VBR_IPV4_FRAG_OFF offsetof(struct rte_flow_item_ipv4, \
				   hdr.fragment_offset)

static int
vbr_flow_merge_frag(struct ibv_flow_spec_ipv4_ext *ip,
		    const struct rte_flow_item_ipv4 *s, const void *lastp,
		    const struct rte_flow_item_ipv4 *m,
		    const struct rte_flow_item *item,
		    struct rte_flow_error *error)
{
	const struct rte_flow_item_ipv4 *l = lastp;
	uint16_t fm = rte_be_to_cpu_16(m->hdr.fragment_offset);
	uint16_t fs = rte_be_to_cpu_16(s->hdr.fragment_offset) & fm;
	uint16_t fl = l != NULL ?
		      rte_be_to_cpu_16(l->hdr.fragment_offset) & fm : fs;
	uint8_t vm = 0, vv = 0;

	if (fm == 0)
		return 0;
	if ((fm & VBR_IPV4_OFF) != 0 && (fm & VBR_IPV4_OFF) != VBR_IPV4_OFF)
		return rte_flow_error_set(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ITEM_MASK, item,
			"vbr: ipv4 item: fragment_offset: mask all 13 offset "
			"bits or none");
	if ((fl & ~VBR_IPV4_OFF) != (fs & ~VBR_IPV4_OFF))
		return rte_flow_error_set(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ITEM_LAST, item,
			"vbr: ipv4 item: fragment_offset: a range can span "
			"the offset only");
	if (fm & RTE_IPV4_HDR_DF_FLAG) {
		vm |= VBR_IPV4_FLAG_DF;
		vv |= fs & RTE_IPV4_HDR_DF_FLAG ? VBR_IPV4_FLAG_DF : 0;
	}
	if (fm & RTE_IPV4_HDR_MF_FLAG) {
		vm |= VBR_IPV4_FLAG_MF;
		vv |= fs & RTE_IPV4_HDR_MF_FLAG ? VBR_IPV4_FLAG_MF : 0;
	}
	if (fm & VBR_IPV4_OFF) {
		uint16_t lo = fs & VBR_IPV4_OFF, hi = fl & VBR_IPV4_OFF;

		vm |= VBR_IPV4_FLAG_OFFSET;
		if (lo == 1 && hi == VBR_IPV4_OFF)
			vv |= VBR_IPV4_FLAG_OFFSET;
		else if (lo != 0 || hi != 0)
			return vbr_flow_error(error, ENOTSUP,
				l != NULL ? RTE_FLOW_ERROR_TYPE_ITEM_LAST :
				RTE_FLOW_ERROR_TYPE_ITEM, item,
				"vbr: ipv4 item: fragment_offset: offset %u to "
				"%u: only 0 (not a fragment, or a first one) "
				"or the range 1 to 0x1fff (a later fragment) "
				"can be matched", lo, hi);
	}
	ip->mask.flags = vm;
	ip->val.flags = vv;
	return 0;
}

static int
vbr_flow_merge_ipv4(struct vbr_flow_parse *p, const void *spec,
		    const void *mask, const struct rte_flow_item *item,
		    struct rte_flow_error *error)
{
	struct ibv_flow_spec_ipv4_ext *ip =
		(struct ibv_flow_spec_ipv4_ext *)p->pos;
	const struct rte_flow_item_ipv4 *s = spec, *m = mask;
	int ret;

	p->ip = p->pos;
	if (s == NULL)
		return 0;
	ret = vbr_flow_merge_frag(ip, s, item->last, m, item, error);
	if (ret != 0)
		return ret;
	if (p->sw_frag && ip->mask.flags != 0) {
		/* DF, MF, offset: the verbs flags shifted down by one. */
		p->d->sw_frag = VBR_RX_FRAG_V4 | ip->mask.flags >> 1 |
				(ip->val.flags >> 1) << VBR_RX_FRAG_VAL_SHIFT;
		p->frag_item = item;
		ip->mask.flags = 0;
		ip->val.flags = 0;
	}
	vbr_flow_set(&ip->val.src_ip, &ip->mask.src_ip, &s->hdr.src_addr,
		     &m->hdr.src_addr, 4);
	vbr_flow_set(&ip->val.dst_ip, &ip->mask.dst_ip, &s->hdr.dst_addr,
		     &m->hdr.dst_addr, 4);
	vbr_flow_set(&ip->val.proto, &ip->mask.proto, &s->hdr.next_proto_id,
		     &m->hdr.next_proto_id, 1);
	vbr_flow_set(&ip->val.tos, &ip->mask.tos, &s->hdr.type_of_service,
		     &m->hdr.type_of_service, 1);
	vbr_flow_set(&ip->val.ttl, &ip->mask.ttl, &s->hdr.time_to_live,
		     &m->hdr.time_to_live, 1);
	return 0;
}

static int
vbr_flow_merge_ipv6(struct vbr_flow_parse *p, const void *spec,
		    const void *mask, const struct rte_flow_item *item,
		    struct rte_flow_error *error)
{
	struct ibv_flow_spec_ipv6 *ip = (struct ibv_flow_spec_ipv6 *)p->pos;
	const struct rte_flow_item_ipv6 *s = spec, *m = mask;
	uint32_t vs, vm;

	p->ip = p->pos;
	if (s == NULL)
		return 0;
	if (m->has_frag_ext && (s->has_frag_ext || p->inner))
		return rte_flow_error_set(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ITEM, item,
			"vbr: ipv6 item: has_frag_ext: only 0 (no fragment "
			"header) in the outer headers can be matched");
	if (m->has_frag_ext && p->sw_frag) {
		p->d->sw_frag = VBR_RX_FRAG_V6;
		p->frag_item = item;
	} else if (m->has_frag_ext) {
		p->v6_nofrag = 1;
	}
	vbr_flow_set(ip->val.src_ip, ip->mask.src_ip,
		     VBR_IPV6_BYTES(s->hdr.src_addr),
		     VBR_IPV6_BYTES(m->hdr.src_addr), 16);
	vbr_flow_set(ip->val.dst_ip, ip->mask.dst_ip,
		     VBR_IPV6_BYTES(s->hdr.dst_addr),
		     VBR_IPV6_BYTES(m->hdr.dst_addr), 16);
	vbr_flow_set(&ip->val.next_hdr, &ip->mask.next_hdr, &s->hdr.proto,
		     &m->hdr.proto, 1);
	vbr_flow_set(&ip->val.hop_limit, &ip->mask.hop_limit,
		     &s->hdr.hop_limits, &m->hdr.hop_limits, 1);
	/* vtc_flow: version (4 bits), traffic class (8), flow label (20). */
	vm = rte_be_to_cpu_32(m->hdr.vtc_flow);
	vs = rte_be_to_cpu_32(s->hdr.vtc_flow) & vm;
	ip->mask.traffic_class = (vm >> 20) & 0xff;
	ip->val.traffic_class = (vs >> 20) & 0xff;
	ip->mask.flow_label = rte_cpu_to_be_32(vm & 0xfffff);
	ip->val.flow_label = rte_cpu_to_be_32(vs & 0xfffff);
	return 0;
}

/*
 * TCP and UDP: the ports. Both headers begin with the source then the
 * destination port, so the two items share this merge.
 */
static int
vbr_flow_merge_l4(struct vbr_flow_parse *p, const void *spec,
		  const void *mask, const struct rte_flow_item *item,
		  struct rte_flow_error *error)
{
	struct ibv_flow_spec_tcp_udp *l4 =
		(struct ibv_flow_spec_tcp_udp *)p->pos;
	const struct rte_udp_hdr *s, *m;

	RTE_BUILD_BUG_ON(offsetof(struct rte_flow_item_tcp, hdr.src_port) !=
			 offsetof(struct rte_flow_item_udp, hdr.src_port));
	RTE_BUILD_BUG_ON(offsetof(struct rte_flow_item_tcp, hdr.dst_port) !=
			 offsetof(struct rte_flow_item_udp, hdr.dst_port));
	RTE_SET_USED(item);
	RTE_SET_USED(error);
	if (spec == NULL)
		return 0;
	s = &((const struct rte_flow_item_udp *)spec)->hdr;
	m = &((const struct rte_flow_item_udp *)mask)->hdr;
	vbr_flow_set(&l4->val.src_port, &l4->mask.src_port, &s->src_port,
		     &m->src_port, 2);
	vbr_flow_set(&l4->val.dst_port, &l4->mask.dst_port, &s->dst_port,
		     &m->dst_port, 2);
	return 0;
}

/*
 * ICMP and SCTP: verbs has no spec for them; with nothing masked the item
 * says the IP protocol only, which goes into the IP spec before it.
 */
static int
vbr_flow_merge_proto(struct vbr_flow_parse *p, const void *spec,
		     const void *mask, const struct rte_flow_item *item,
		     struct rte_flow_error *error)
{
	uint8_t proto = item->type == RTE_FLOW_ITEM_TYPE_ICMP ? IPPROTO_ICMP :
			IPPROTO_SCTP;
	uint32_t type;

	RTE_SET_USED(spec);
	RTE_SET_USED(mask);
	if (p->ip == NULL)
		return rte_flow_error_set(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ITEM, item,
			"vbr: icmp/sctp item: an ip item must come before it");
	memcpy(&type, p->ip, sizeof(type));
	type &= ~(uint32_t)IBV_FLOW_SPEC_INNER;
	if (type == IBV_FLOW_SPEC_IPV4_EXT) {
		struct ibv_flow_spec_ipv4_ext *ip =
			(struct ibv_flow_spec_ipv4_ext *)p->ip;

		ip->mask.proto = 0xff;
		ip->val.proto = proto;
	} else if (proto == IPPROTO_ICMP) {
		return rte_flow_error_set(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ITEM, item,
			"vbr: icmp item: ICMP is IPv4's (for ICMPv6 match "
			"ipv6 proto 58)");
	} else {
		struct ibv_flow_spec_ipv6 *ip =
			(struct ibv_flow_spec_ipv6 *)p->ip;

		ip->mask.next_hdr = 0xff;
		ip->val.next_hdr = proto;
	}
	return 0;
}

/* tunnel_id: the 24-bit VNI in network order, in the low three bytes. */
static int
vbr_flow_merge_vxlan(struct vbr_flow_parse *p, const void *spec,
		     const void *mask, const struct rte_flow_item *item,
		     struct rte_flow_error *error)
{
	struct ibv_flow_spec_tunnel *t = (struct ibv_flow_spec_tunnel *)p->pos;
	const struct rte_flow_item_vxlan *s = spec, *m = mask;

	RTE_SET_USED(item);
	RTE_SET_USED(error);
	if (s == NULL)
		return 0;
	vbr_flow_set((uint8_t *)&t->val.tunnel_id + 1,
		     (uint8_t *)&t->mask.tunnel_id + 1, s->vni, m->vni, 3);
	return 0;
}

static int
vbr_flow_merge_gre(struct vbr_flow_parse *p, const void *spec,
		   const void *mask, const struct rte_flow_item *item,
		   struct rte_flow_error *error)
{
	struct ibv_flow_spec_gre *g = (struct ibv_flow_spec_gre *)p->pos;
	const struct rte_flow_item_gre *s = spec, *m = mask;

	RTE_SET_USED(item);
	RTE_SET_USED(error);
	if (s == NULL)
		return 0;
	vbr_flow_set(&g->val.c_ks_res0_ver, &g->mask.c_ks_res0_ver,
		     &s->c_rsvd0_ver, &m->c_rsvd0_ver, 2);
	vbr_flow_set(&g->val.protocol, &g->mask.protocol, &s->protocol,
		     &m->protocol, 2);
	return 0;
}

/* label: the 32-bit MPLS header in network order; TTL is not matched. */
static int
vbr_flow_merge_mpls(struct vbr_flow_parse *p, const void *spec,
		    const void *mask, const struct rte_flow_item *item,
		    struct rte_flow_error *error)
{
	struct ibv_flow_spec_mpls *l = (struct ibv_flow_spec_mpls *)p->pos;
	const struct rte_flow_item_mpls *s = spec, *m = mask;

	RTE_SET_USED(item);
	RTE_SET_USED(error);
	if (s == NULL)
		return 0;
	vbr_flow_set(&l->val.label, &l->mask.label, s->label_tc_s,
		     m->label_tc_s, 3);
	return 0;
}

static int
vbr_flow_merge_esp(struct vbr_flow_parse *p, const void *spec,
		   const void *mask, const struct rte_flow_item *item,
		   struct rte_flow_error *error)
{
	struct ibv_flow_spec_esp *e = (struct ibv_flow_spec_esp *)p->pos;
	const struct rte_flow_item_esp *s = spec, *m = mask;

	/* Verbs' ESP spec has no inner form: validate must not accept it. */
	if (p->inner)
		return vbr_flow_error(error, ENOTSUP, RTE_FLOW_ERROR_TYPE_ITEM,
			item, "vbr: esp item: ESP can be matched in the outer "
			"headers only, not after a tunnel item");
	if (s == NULL)
		return 0;
	vbr_flow_set(&e->val.spi, &e->mask.spi, &s->hdr.spi, &m->hdr.spi, 4);
	return 0;
}

/* Masks of what verbs can match, per item. */
static const struct rte_flow_item_eth vbr_mask_eth = {
	.dst.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
	.src.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
	.type = RTE_BE16(0xffff),
	.has_vlan = 1,
};
static const struct rte_flow_item_vlan vbr_mask_vlan = {
	.tci = RTE_BE16(0xffff),
	.inner_type = RTE_BE16(0xffff),
};
static const struct rte_flow_item_ipv4 vbr_mask_ipv4 = {
	.hdr = {
		.src_addr = RTE_BE32(0xffffffff),
		.dst_addr = RTE_BE32(0xffffffff),
		.next_proto_id = 0xff,
		.type_of_service = 0xff,
		.time_to_live = 0xff,
		.fragment_offset = RTE_BE16(0x7fff),
	},
};
static const struct rte_flow_item_ipv6 vbr_mask_ipv6 = {
	.hdr = {
		.vtc_flow = RTE_BE32(0x0fffffff),
		.proto = 0xff,
		.hop_limits = 0xff,
		/* braced: uint8_t[16], or struct rte_ipv6_addr from 24.11 */
		.src_addr = { "\xff\xff\xff\xff\xff\xff\xff\xff"
			      "\xff\xff\xff\xff\xff\xff\xff\xff" },
		.dst_addr = { "\xff\xff\xff\xff\xff\xff\xff\xff"
			      "\xff\xff\xff\xff\xff\xff\xff\xff" },
	},
	.has_frag_ext = 1,
};
/* ICMP and SCTP: no field (the item stands for the IP protocol). */
static const struct rte_flow_item_icmp vbr_mask_icmp;
static const struct rte_flow_item_sctp vbr_mask_sctp;
static const struct rte_flow_item_tcp vbr_mask_tcp = {
	.hdr = {
		.src_port = RTE_BE16(0xffff),
		.dst_port = RTE_BE16(0xffff),
	},
};
static const struct rte_flow_item_udp vbr_mask_udp = {
	.hdr = {
		.src_port = RTE_BE16(0xffff),
		.dst_port = RTE_BE16(0xffff),
	},
};
static const struct rte_flow_item_vxlan vbr_mask_vxlan = {
	.vni = { 0xff, 0xff, 0xff },
};
/* C, K and S bits; not the version, not the reserved bits. */
static const struct rte_flow_item_gre vbr_mask_gre = {
	.c_rsvd0_ver = RTE_BE16(0xb000),
	.protocol = RTE_BE16(0xffff),
};
static const struct rte_flow_item_mpls vbr_mask_mpls = {
	.label_tc_s = { 0xff, 0xff, 0xff },
};
static const struct rte_flow_item_esp vbr_mask_esp = {
	.hdr.spi = RTE_BE32(0xffffffff),
};

static const struct vbr_flow_field vbr_fields_eth[] = {
	FIELD(struct rte_flow_item_eth, "dst", dst),
	FIELD(struct rte_flow_item_eth, "src", src),
	FIELD(struct rte_flow_item_eth, "type", type),
	{ "reserved", offsetof(struct rte_flow_item_eth, type) + 2, 4 },
	{ NULL, 0, 0 },
};
static const struct vbr_flow_field vbr_fields_vlan[] = {
	FIELD(struct rte_flow_item_vlan, "tci", tci),
	FIELD(struct rte_flow_item_vlan, "inner_type", inner_type),
	{ "has_more_vlan", offsetof(struct rte_flow_item_vlan, inner_type) + 2,
	  4 },
	{ NULL, 0, 0 },
};
static const struct vbr_flow_field vbr_fields_ipv4[] = {
	FIELD(struct rte_flow_item_ipv4, "version_ihl", hdr.version_ihl),
	FIELD(struct rte_flow_item_ipv4, "tos", hdr.type_of_service),
	FIELD(struct rte_flow_item_ipv4, "total_length", hdr.total_length),
	FIELD(struct rte_flow_item_ipv4, "packet_id", hdr.packet_id),
	FIELD(struct rte_flow_item_ipv4, "fragment_offset",
	      hdr.fragment_offset),
	FIELD(struct rte_flow_item_ipv4, "ttl", hdr.time_to_live),
	FIELD(struct rte_flow_item_ipv4, "proto", hdr.next_proto_id),
	FIELD(struct rte_flow_item_ipv4, "hdr_checksum", hdr.hdr_checksum),
	FIELD(struct rte_flow_item_ipv4, "src", hdr.src_addr),
	FIELD(struct rte_flow_item_ipv4, "dst", hdr.dst_addr),
	{ NULL, 0, 0 },
};
static const struct vbr_flow_field vbr_fields_ipv6[] = {
	FIELD(struct rte_flow_item_ipv6, "vtc_flow (version)", hdr.vtc_flow),
	FIELD(struct rte_flow_item_ipv6, "payload_len", hdr.payload_len),
	FIELD(struct rte_flow_item_ipv6, "proto", hdr.proto),
	FIELD(struct rte_flow_item_ipv6, "hop", hdr.hop_limits),
	FIELD(struct rte_flow_item_ipv6, "src", hdr.src_addr),
	FIELD(struct rte_flow_item_ipv6, "dst", hdr.dst_addr),
	{ "has_*_ext other than has_frag_ext",
	  sizeof(struct rte_ipv6_hdr), 4 },
	{ NULL, 0, 0 },
};
static const struct vbr_flow_field vbr_fields_tcp[] = {
	FIELD(struct rte_flow_item_tcp, "src", hdr.src_port),
	FIELD(struct rte_flow_item_tcp, "dst", hdr.dst_port),
	FIELD(struct rte_flow_item_tcp, "sent_seq", hdr.sent_seq),
	FIELD(struct rte_flow_item_tcp, "recv_ack", hdr.recv_ack),
	FIELD(struct rte_flow_item_tcp, "data_off", hdr.data_off),
	FIELD(struct rte_flow_item_tcp, "flags", hdr.tcp_flags),
	FIELD(struct rte_flow_item_tcp, "rx_win", hdr.rx_win),
	FIELD(struct rte_flow_item_tcp, "cksum", hdr.cksum),
	FIELD(struct rte_flow_item_tcp, "urp", hdr.tcp_urp),
	{ NULL, 0, 0 },
};
static const struct vbr_flow_field vbr_fields_udp[] = {
	FIELD(struct rte_flow_item_udp, "src", hdr.src_port),
	FIELD(struct rte_flow_item_udp, "dst", hdr.dst_port),
	FIELD(struct rte_flow_item_udp, "dgram_len", hdr.dgram_len),
	FIELD(struct rte_flow_item_udp, "dgram_cksum", hdr.dgram_cksum),
	{ NULL, 0, 0 },
};
static const struct vbr_flow_field vbr_fields_icmp[] = {
	FIELD(struct rte_flow_item_icmp, "type", hdr.icmp_type),
	FIELD(struct rte_flow_item_icmp, "code", hdr.icmp_code),
	FIELD(struct rte_flow_item_icmp, "cksum", hdr.icmp_cksum),
	FIELD(struct rte_flow_item_icmp, "ident", hdr.icmp_ident),
	FIELD(struct rte_flow_item_icmp, "seq", hdr.icmp_seq_nb),
	{ NULL, 0, 0 },
};
static const struct vbr_flow_field vbr_fields_sctp[] = {
	FIELD(struct rte_flow_item_sctp, "src", hdr.src_port),
	FIELD(struct rte_flow_item_sctp, "dst", hdr.dst_port),
	FIELD(struct rte_flow_item_sctp, "tag", hdr.tag),
	FIELD(struct rte_flow_item_sctp, "cksum", hdr.cksum),
	{ NULL, 0, 0 },
};
static const struct vbr_flow_field vbr_fields_vxlan[] = {
	FIELD(struct rte_flow_item_vxlan, "flags", flags),
	FIELD(struct rte_flow_item_vxlan, "rsvd0", rsvd0),
	FIELD(struct rte_flow_item_vxlan, "vni", vni),
	FIELD(struct rte_flow_item_vxlan, "rsvd1", rsvd1),
	{ NULL, 0, 0 },
};
static const struct vbr_flow_field vbr_fields_gre[] = {
	FIELD(struct rte_flow_item_gre, "c_rsvd0_ver (only the C, K and S "
	      "bits may be masked)", c_rsvd0_ver),
	FIELD(struct rte_flow_item_gre, "protocol", protocol),
	{ NULL, 0, 0 },
};
static const struct vbr_flow_field vbr_fields_mpls[] = {
	FIELD(struct rte_flow_item_mpls, "label_tc_s", label_tc_s),
	FIELD(struct rte_flow_item_mpls, "ttl", ttl),
	{ NULL, 0, 0 },
};
static const struct vbr_flow_field vbr_fields_esp[] = {
	FIELD(struct rte_flow_item_esp, "spi", hdr.spi),
	FIELD(struct rte_flow_item_esp, "seq", hdr.seq),
	{ NULL, 0, 0 },
};

#define INFO(t, n, nx, ms, md, st, sz, tun, f, what, fn) \
	[t] = { \
		.name = n, .next = nx, .mask_support = ms, \
		.mask_default = md, .mask_sz = sizeof(*(ms)), \
		.spec_type = st, .dst_sz = sz, .tunnel = tun, .fields = f, \
		.matchable = what, .merge = fn, \
	}

static const struct vbr_flow_item_info vbr_flow_items[] = {
	INFO(RTE_FLOW_ITEM_TYPE_ETH,
	     "eth", vbr_next_eth, &vbr_mask_eth, &rte_flow_item_eth_mask,
	     IBV_FLOW_SPEC_ETH, sizeof(struct ibv_flow_spec_eth), 0,
	     vbr_fields_eth, "dst, src, type, has_vlan", vbr_flow_merge_eth),
	INFO(RTE_FLOW_ITEM_TYPE_VLAN,
	     "vlan", vbr_next_vlan, &vbr_mask_vlan,
	     &rte_flow_item_vlan_mask, IBV_FLOW_SPEC_ETH, 0, 0,
	     vbr_fields_vlan, "tci, inner_type", vbr_flow_merge_vlan),
	INFO(RTE_FLOW_ITEM_TYPE_IPV4,
	     "ipv4", vbr_next_ip, &vbr_mask_ipv4,
	     &rte_flow_item_ipv4_mask, IBV_FLOW_SPEC_IPV4_EXT,
	     sizeof(struct ibv_flow_spec_ipv4_ext), 0, vbr_fields_ipv4,
	     "src, dst, proto, tos, ttl, fragment_offset",
	     vbr_flow_merge_ipv4),
	INFO(RTE_FLOW_ITEM_TYPE_IPV6,
	     "ipv6", vbr_next_ip, &vbr_mask_ipv6,
	     &rte_flow_item_ipv6_mask, IBV_FLOW_SPEC_IPV6,
	     sizeof(struct ibv_flow_spec_ipv6), 0, vbr_fields_ipv6,
	     "src, dst, proto, hop, tc, flow label, has_frag_ext",
	     vbr_flow_merge_ipv6),
	INFO(RTE_FLOW_ITEM_TYPE_TCP,
	     "tcp", vbr_next_none, &vbr_mask_tcp,
	     &rte_flow_item_tcp_mask, IBV_FLOW_SPEC_TCP,
	     sizeof(struct ibv_flow_spec_tcp_udp), 0, vbr_fields_tcp,
	     "src, dst", vbr_flow_merge_l4),
	INFO(RTE_FLOW_ITEM_TYPE_UDP,
	     "udp", vbr_next_udp, &vbr_mask_udp,
	     &rte_flow_item_udp_mask, IBV_FLOW_SPEC_UDP,
	     sizeof(struct ibv_flow_spec_tcp_udp), 0, vbr_fields_udp,
	     "src, dst", vbr_flow_merge_l4),
	INFO(RTE_FLOW_ITEM_TYPE_ICMP,
	     "icmp", vbr_next_none, &vbr_mask_icmp, &vbr_mask_icmp,
	     IBV_FLOW_SPEC_IPV4_EXT, 0, 0, vbr_fields_icmp,
	     "nothing (it matches IP protocol 1)", vbr_flow_merge_proto),
	INFO(RTE_FLOW_ITEM_TYPE_SCTP,
	     "sctp", vbr_next_none, &vbr_mask_sctp, &vbr_mask_sctp,
	     IBV_FLOW_SPEC_IPV4_EXT, 0, 0, vbr_fields_sctp,
	     "nothing (it matches IP protocol 132)", vbr_flow_merge_proto),
	INFO(RTE_FLOW_ITEM_TYPE_VXLAN,
	     "vxlan", vbr_next_vxlan, &vbr_mask_vxlan,
	     &rte_flow_item_vxlan_mask, IBV_FLOW_SPEC_VXLAN_TUNNEL,
	     sizeof(struct ibv_flow_spec_tunnel), 1, vbr_fields_vxlan,
	     "vni", vbr_flow_merge_vxlan),
	INFO(RTE_FLOW_ITEM_TYPE_GRE,
	     "gre", vbr_next_gre, &vbr_mask_gre,
	     &rte_flow_item_gre_mask, IBV_FLOW_SPEC_GRE,
	     sizeof(struct ibv_flow_spec_gre), 1, vbr_fields_gre,
	     "c_rsvd0_ver C/K/S bits, protocol", vbr_flow_merge_gre),
	INFO(RTE_FLOW_ITEM_TYPE_MPLS,
	     "mpls", vbr_next_mpls, &vbr_mask_mpls,
	     &rte_flow_item_mpls_mask, IBV_FLOW_SPEC_MPLS,
	     sizeof(struct ibv_flow_spec_mpls), 1, vbr_fields_mpls,
	     "label_tc_s", vbr_flow_merge_mpls),
	INFO(RTE_FLOW_ITEM_TYPE_ESP,
	     "esp", vbr_next_none, &vbr_mask_esp,
	     &rte_flow_item_esp_mask, IBV_FLOW_SPEC_ESP,
	     sizeof(struct ibv_flow_spec_esp), 0, vbr_fields_esp,
	     "spi", vbr_flow_merge_esp),
};

static const struct vbr_flow_item_info *
vbr_flow_item_info(enum rte_flow_item_type type)
{
	if ((unsigned int)type >= RTE_DIM(vbr_flow_items) ||
	    vbr_flow_items[type].name == NULL)
		return NULL;
	return &vbr_flow_items[type];
}

/* Lower-case name of an item or action type, as testpmd spells it. */
static const char *
vbr_flow_lower(char *buf, size_t size, const char *name)
{
	size_t i;

	if (name == NULL)
		name = "unknown";
	for (i = 0; i + 1 < size && name[i] != '\0'; i++)
		buf[i] = tolower((unsigned char)name[i]);
	buf[i] = '\0';
	return buf;
}

#define VBR_NAME_LEN 32

static const char *
vbr_flow_item_name(char *buf, enum rte_flow_item_type type)
{
	const char *name = NULL;

	if (rte_flow_conv(RTE_FLOW_CONV_OP_ITEM_NAME_PTR, &name, sizeof(name),
			  (void *)(uintptr_t)type, NULL) <= 0)
		name = NULL;
	return vbr_flow_lower(buf, VBR_NAME_LEN, name);
}

static const char *
vbr_flow_action_name(char *buf, enum rte_flow_action_type type)
{
	const char *name = NULL;

	if (rte_flow_conv(RTE_FLOW_CONV_OP_ACTION_NAME_PTR, &name,
			  sizeof(name), (void *)(uintptr_t)type, NULL) <= 0)
		name = NULL;
	return vbr_flow_lower(buf, VBR_NAME_LEN, name);
}

/* Message buffer for errors that name a field (rte_flow_error keeps a
 * pointer: the text must outlive the call; one per thread).
 */
static RTE_DEFINE_PER_LCORE(char, vbr_flow_msg[256]);

/**
 * rte_flow_error_set() with a formatted message, kept in a per-thread buffer
 * until the next call. Return -code.
 */
int
vbr_flow_error(struct rte_flow_error *error, int code,
	       enum rte_flow_error_type type, const void *cause,
	       const char *fmt, ...)
{
	char *msg = RTE_PER_LCORE(vbr_flow_msg);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(RTE_PER_LCORE(vbr_flow_msg)), fmt, ap);
	va_end(ap);
	return rte_flow_error_set(error, code, type, cause, msg);
}

/* Check the mask against what verbs matches; name the first bad field. */
static int
vbr_flow_check_mask(const struct vbr_flow_item_info *info,
		    const struct rte_flow_item *item, const uint8_t *mask,
		    struct rte_flow_error *error)
{
	const uint8_t *sup = info->mask_support;
	const struct vbr_flow_field *f;
	unsigned int i;

	for (i = 0; i < info->mask_sz; i++)
		if (mask[i] & ~sup[i])
			break;
	if (i == info->mask_sz)
		return 0;
	for (f = info->fields; f->name != NULL; f++)
		if (i >= f->off && i < (unsigned int)f->off + f->len)
			break;
	return vbr_flow_error(error, ENOTSUP, RTE_FLOW_ERROR_TYPE_ITEM_MASK,
			      item, "vbr: %s item: field %s cannot be matched "
			      "(verbs matches: %s)", info->name,
			      f->name != NULL ? f->name : "?",
			      info->matchable);
}

/*
 * Specs are packed back to back, as ibv_create_flow() reads them, so one
 * may start at 4 modulo 8 (after the 20-byte attr or a 12-byte tag spec)
 * while struct ibv_flow_spec needs 8: headers and 8-byte members are
 * written with memcpy, never through a struct ibv_flow_spec pointer.
 */
static void
vbr_flow_spec_hdr(uint8_t *pos, uint32_t type, uint16_t size)
{
	struct ibv_flow_spec s;

	/* The header has 2 bytes of padding: only type and size are ours. */
	s.hdr.type = type;
	s.hdr.size = size;
	memcpy(pos, &s.hdr.type, sizeof(s.hdr.type));
	memcpy(pos + offsetof(struct ibv_flow_spec_eth, size), &s.hdr.size,
	       sizeof(s.hdr.size));
}

/** Set the counters object of the COUNT spec at pos (packed). */
void
vbr_flow_spec_set_counters(uint8_t *pos, struct ibv_counters *counters)
{
	memcpy(pos + offsetof(struct ibv_flow_spec_counter_action, counters),
	       &counters, sizeof(counters));
}

/** Set the tag of the TAG spec at pos (the rule's Rx action table entry). */
void
vbr_flow_spec_set_tag(uint8_t *pos, uint32_t tag)
{
	memcpy(pos + offsetof(struct ibv_flow_spec_action_tag, tag_id), &tag,
	       sizeof(tag));
}

/* Names of the optional matches (VBR_FLOW_F_*), for messages. */
static const char *const vbr_flow_f_names[VBR_FLOW_F_NUM] = {
	"ipv4 item: field ttl",
	"ipv6 item: field hop",
	"gre item: field c_rsvd0_ver (the C, K and S bits)",
	"esp item",
	"mpls item",
	"vxlan item",
	"fragment match (ipv4 fragment_offset, ipv6 has_frag_ext; a "
	"ConnectX through verbs matches IPv4 up to tos, IPv6 up to the "
	"traffic class)",
};

/** Name of an optional match bit (one VBR_FLOW_F_* bit). */
const char *
vbr_flow_f_name(uint32_t bit)
{
	unsigned int i;

	for (i = 0; i < VBR_FLOW_F_NUM; i++)
		if (bit == (1u << i))
			return vbr_flow_f_names[i];
	return "?";
}

/*
 * What the device refused when it was probed (caps->no_fields): an item it
 * cannot match at all, or a field of an item. Checked before anything is
 * created, so validate answers the same as create.
 */
static int
vbr_flow_check_device(const struct vbr_flow_caps *caps,
		      const struct vbr_flow_parse *p,
		      const struct rte_flow_item *item, const void *mask,
		      struct rte_flow_error *error)
{
	uint32_t f = 0;
	bool field = false;

	switch (item->type) {
	case RTE_FLOW_ITEM_TYPE_IPV4:
		field = true;
		if (item->spec != NULL && ((const struct rte_flow_item_ipv4 *)
					   mask)->hdr.time_to_live != 0)
			f = VBR_FLOW_F_IPV4_TTL;
		if (item->spec != NULL && ((const struct rte_flow_item_ipv4 *)
					   mask)->hdr.fragment_offset != 0 &&
		    (caps->no_fields & f) == 0)
			f = VBR_FLOW_F_FRAG;
		break;
	case RTE_FLOW_ITEM_TYPE_IPV6:
		field = true;
		if (item->spec != NULL && ((const struct rte_flow_item_ipv6 *)
					   mask)->hdr.hop_limits != 0)
			f = VBR_FLOW_F_IPV6_HOP;
		if (item->spec != NULL && ((const struct rte_flow_item_ipv6 *)
					   mask)->has_frag_ext &&
		    (caps->no_fields & f) == 0)
			f = VBR_FLOW_F_FRAG;
		break;
	case RTE_FLOW_ITEM_TYPE_GRE:
		field = true;
		if (item->spec != NULL && ((const struct rte_flow_item_gre *)
					   mask)->c_rsvd0_ver != 0)
			f = VBR_FLOW_F_GRE_CKS;
		break;
	case RTE_FLOW_ITEM_TYPE_ESP:
		f = VBR_FLOW_F_ESP;
		break;
	case RTE_FLOW_ITEM_TYPE_MPLS:
		f = VBR_FLOW_F_MPLS;
		break;
	case RTE_FLOW_ITEM_TYPE_VXLAN:
		f = VBR_FLOW_F_VXLAN;
		break;
	default:
		break;
	}
	if ((caps->no_fields & f) == 0)
		return 0;
	/* The outer headers' condition is kept in software (see the top). */
	if (f == VBR_FLOW_F_FRAG && p->sw_frag && !p->inner)
		return 0;
	return vbr_flow_error(error, ENOTSUP, field ?
		RTE_FLOW_ERROR_TYPE_ITEM_MASK : RTE_FLOW_ERROR_TYPE_ITEM, item,
		"vbr: %s cannot be matched by this device (it refused a verbs "
		"rule with it when the port was probed)", vbr_flow_f_name(f));
}

/*
 * What two items of one header level say of the same field must agree, as
 * a ConnectX checks (it refuses the verbs rule with EINVAL, and such a rule
 * could match nothing anyway): an eth type masked together with an IP item
 * must be that IP family's, under a full mask; one IP family per level;
 * the IP protocol is set once: the IPv4/IPv6 item's protocol under a mask,
 * and the L4 or GRE item after it, must say the same thing.
 */
static int
vbr_flow_check_layers(struct vbr_flow_parse *p,
		      const struct vbr_flow_item_info *info,
		      const struct rte_flow_item *item,
		      struct rte_flow_error *error)
{
	unsigned int l = p->inner && !info->tunnel ? 1 : 0;
	uint8_t mask = 0, proto = 0, family = 0;
	uint32_t type = 0;

	switch (item->type) {
	case RTE_FLOW_ITEM_TYPE_IPV4: {
		struct ibv_flow_spec_ipv4_ext ip;

		memcpy(&ip, p->pos, sizeof(ip));
		family = 4;
		mask = ip.mask.proto;
		proto = ip.val.proto & mask;
		break;
	}
	case RTE_FLOW_ITEM_TYPE_IPV6: {
		struct ibv_flow_spec_ipv6 ip;

		memcpy(&ip, p->pos, sizeof(ip));
		family = 6;
		mask = ip.mask.next_hdr;
		proto = ip.val.next_hdr & mask;
		break;
	}
	case RTE_FLOW_ITEM_TYPE_TCP:
		mask = 0xff;
		proto = IPPROTO_TCP;
		break;
	case RTE_FLOW_ITEM_TYPE_UDP:
		mask = 0xff;
		proto = IPPROTO_UDP;
		break;
	case RTE_FLOW_ITEM_TYPE_GRE:
		mask = 0xff;
		proto = IPPROTO_GRE;
		break;
	case RTE_FLOW_ITEM_TYPE_ICMP:
		mask = 0xff;
		proto = IPPROTO_ICMP;
		break;
	case RTE_FLOW_ITEM_TYPE_SCTP:
		mask = 0xff;
		proto = IPPROTO_SCTP;
		break;
	default:
		return 0;
	}
	if (family != 0) {
		struct ibv_flow_spec_eth eth;
		uint16_t m, v, want = family == 4 ? RTE_ETHER_TYPE_IPV4 :
				      RTE_ETHER_TYPE_IPV6;

		if (p->lvl[l].l3 != 0)
			return vbr_flow_error(error, EINVAL,
				RTE_FLOW_ERROR_TYPE_ITEM, item,
				"vbr: %s item: the pattern has an IPv%u item "
				"at this level already", info->name,
				p->lvl[l].l3);
		p->lvl[l].l3 = family;
		if (p->eth != NULL)
			memcpy(&type, p->eth, sizeof(type));
		if (p->eth != NULL && !!(type & IBV_FLOW_SPEC_INNER) == l) {
			memcpy(&eth, p->eth, sizeof(eth));
			m = rte_be_to_cpu_16(eth.mask.ether_type);
			v = rte_be_to_cpu_16(eth.val.ether_type) & m;
			if (m != 0 && (m != 0xffff || v != want))
				return vbr_flow_error(error, EINVAL,
					RTE_FLOW_ERROR_TYPE_ITEM, item,
					"vbr: %s item: the eth item before it "
					"matches type 0x%04x under mask 0x%04x, "
					"not 0x%04x", info->name, v, m, want);
		}
	}
	if (mask == 0)
		return 0;
	if (p->lvl[l].proto_mask == 0) {
		p->lvl[l].proto_mask = mask;
		p->lvl[l].proto = proto;
		return 0;
	}
	/* The first writer is the IP item, the second an item after it. */
	if (p->lvl[l].proto_mask != mask || p->lvl[l].proto != proto)
		return vbr_flow_error(error, EINVAL, RTE_FLOW_ERROR_TYPE_ITEM,
			item, "vbr: %s item: the ipv%u item before it matches "
			"IP protocol %u under mask 0x%02x, not %u",
			info->name, p->lvl[l].l3, p->lvl[l].proto,
			p->lvl[l].proto_mask, proto);
	return 0;
}

/* Where the pattern is: the outer L3 and L4 it fixes, for the expansion. */
static void
vbr_flow_layers(struct vbr_flow_parse *p, const struct rte_flow_item *item)
{
	struct vbr_flow_desc *d = p->d;
	const uint8_t *proto = NULL, *pmask = NULL;

	if (p->inner)
		return;
	switch (item->type) {
	case RTE_FLOW_ITEM_TYPE_IPV4: {
		struct ibv_flow_spec_ipv4_ext *ip =
			(struct ibv_flow_spec_ipv4_ext *)p->pos;

		d->l3 = 4;
		proto = &ip->val.proto;
		pmask = &ip->mask.proto;
		break;
	}
	case RTE_FLOW_ITEM_TYPE_IPV6: {
		struct ibv_flow_spec_ipv6 *ip = (struct ibv_flow_spec_ipv6 *)p->pos;

		d->l3 = 6;
		proto = &ip->val.next_hdr;
		pmask = &ip->mask.next_hdr;
		break;
	}
	case RTE_FLOW_ITEM_TYPE_TCP:
		d->l4 = 6;
		break;
	case RTE_FLOW_ITEM_TYPE_UDP:
		d->l4 = 17;
		break;
	case RTE_FLOW_ITEM_TYPE_GRE:
	case RTE_FLOW_ITEM_TYPE_ESP:
	case RTE_FLOW_ITEM_TYPE_ICMP:
	case RTE_FLOW_ITEM_TYPE_SCTP:
		d->l4 = 0xff;
		break;
	default:
		break;
	}
	/* A protocol under a full mask: that L4 only; any other mask: one. */
	if (pmask != NULL && *pmask != 0)
		d->l4 = *pmask == 0xff && (*proto == 6 || *proto == 17) ?
			*proto : 0xff;
}

/* The L3 the outer EtherType fixes, once the items are parsed. */
static void
vbr_flow_layers_eth(struct vbr_flow_parse *p)
{
	struct vbr_flow_desc *d = p->d;
	struct ibv_flow_spec_eth eth;
	uint16_t v, m;

	if (p->outer_eth == NULL || d->l3 != 0)
		return;
	memcpy(&eth, p->outer_eth, sizeof(eth));
	v = rte_be_to_cpu_16(eth.val.ether_type);
	m = rte_be_to_cpu_16(eth.mask.ether_type);
	if (m == 0)
		return;
	if (m == 0xffff && v == RTE_ETHER_TYPE_IPV4)
		d->l3 = 4;
	else if (m == 0xffff && v == RTE_ETHER_TYPE_IPV6)
		d->l3 = 6;
	else
		d->l3 = 0xff;
}

/*
 * What the pattern says that verbs cannot: has_vlan 1 needs the vlan
 * item's tag match; has_vlan 0 becomes companions catching C-tagged
 * frames; has_frag_ext 0 holds by itself when the IPv6 next header is
 * fixed to a protocol (a fragment's is 44), else companions catch the
 * frames whose next header is an extension header.
 */
static int
vbr_flow_parse_comp(struct vbr_flow_parse *p, struct rte_flow_error *error)
{
	uint8_t m = p->lvl[0].proto_mask, v = p->lvl[0].proto;

	if (p->want_vlan && !p->vlan)
		return rte_flow_error_set(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ITEM, p->eth_item,
			"vbr: eth item: has_vlan 1 needs a vlan item with a "
			"VID (verbs matches a tag by its TCI)");
	if (p->no_vlan)
		p->d->comp |= VBR_FLOW_COMP_TAGGED;
	if (!p->v6_nofrag)
		return 0;
	if (m == 0) {
		p->d->comp |= VBR_FLOW_COMP_V6_EXT;
		return 0;
	}
	if (m != 0xff || v == 0 || v == 43 || v == 44 || v == 60)
		return vbr_flow_error(error, ENOTSUP, RTE_FLOW_ERROR_TYPE_ITEM,
			NULL, "vbr: ipv6 item: has_frag_ext 0 with next header "
			"%u under mask 0x%02x: give a protocol under a full "
			"mask, or none", v, m);
	return 0;
}

static int
vbr_flow_parse_items(const struct vbr_flow_caps *caps,
		     struct vbr_flow_parse *p,
		     const struct rte_flow_item *item,
		     struct rte_flow_error *error)
{
	const enum rte_flow_item_type *next = vbr_next_start;
	const char *prev = "the start of the pattern";
	struct ibv_flow_attr *attr = &p->d->u.attr;
	uint8_t *end = p->d->u.buf + sizeof(p->d->u.buf);

	for (; item->type != RTE_FLOW_ITEM_TYPE_END; item++) {
		const struct vbr_flow_item_info *info;
		char n1[VBR_NAME_LEN];
		const void *mask;
		unsigned int i;
		int ret;

		if (item->type == RTE_FLOW_ITEM_TYPE_VOID)
			continue;
		info = vbr_flow_item_info(item->type);
		if (info == NULL)
			return vbr_flow_error(error, ENOTSUP,
				RTE_FLOW_ERROR_TYPE_ITEM, item,
				"vbr: item %s is not supported",
				vbr_flow_item_name(n1, item->type));
		for (i = 0; next[i] != RTE_FLOW_ITEM_TYPE_END; i++)
			if (next[i] == item->type)
				break;
		if (next[i] == RTE_FLOW_ITEM_TYPE_END)
			return vbr_flow_error(error, ENOTSUP,
				RTE_FLOW_ERROR_TYPE_ITEM, item,
				"vbr: %s item cannot follow %s", info->name,
				prev);
		if (info->tunnel && p->inner && !p->prev_tunnel)
			return vbr_flow_error(error, ENOTSUP,
				RTE_FLOW_ERROR_TYPE_ITEM, item,
				"vbr: %s item: only one tunnel level can be "
				"matched", info->name);
		mask = item->mask != NULL ? item->mask : info->mask_default;
		if (item->spec != NULL) {
			ret = vbr_flow_check_mask(info, item, mask, error);
			if (ret != 0)
				return ret;
		}
		ret = vbr_flow_check_device(caps, p, item, mask, error);
		if (ret != 0)
			return ret;
		if (item->last != NULL) {
			const uint8_t *l = item->last, *s = item->spec;
			const uint8_t *m = mask;

			for (i = 0; s != NULL && i < info->mask_sz; i++) {
				/* The merge checks an IPv4 offset range. */
				if (item->type == RTE_FLOW_ITEM_TYPE_IPV4 &&
				    i >= VBR_IPV4_FRAG_OFF &&
				    i < VBR_IPV4_FRAG_OFF + 2)
					continue;
				if ((l[i] & m[i]) != (s[i] & m[i]))
					break;
			}
			if (s == NULL || i < info->mask_sz)
				return vbr_flow_error(error, ENOTSUP,
					RTE_FLOW_ERROR_TYPE_ITEM_LAST, item,
					"vbr: %s item: ranges (last) cannot "
					"be matched by verbs", info->name);
		}
		if (info->dst_sz != 0) {
			if (p->pos + info->dst_sz > end ||
			    attr->num_of_specs == UINT8_MAX)
				return vbr_flow_error(error, E2BIG,
					RTE_FLOW_ERROR_TYPE_ITEM, item,
					"vbr: %s item: too many items for "
					"one verbs rule", info->name);
			memset(p->pos, 0, info->dst_sz);
			vbr_flow_spec_hdr(p->pos, info->spec_type |
					  (p->inner && !info->tunnel ?
					   IBV_FLOW_SPEC_INNER : 0),
					  info->dst_sz);
		}
		ret = info->merge(p, item->spec, mask, item, error);
		if (ret == 0)
			ret = vbr_flow_check_layers(p, info, item, error);
		if (ret != 0)
			return ret;
		if (item->type == RTE_FLOW_ITEM_TYPE_ETH && !p->inner &&
		    p->outer_eth == NULL)
			p->outer_eth = p->eth;
		vbr_flow_layers(p, item);
		if (info->dst_sz != 0) {
			p->pos += info->dst_sz;
			attr->num_of_specs++;
		}
		p->prev_tunnel = info->tunnel;
		if (info->tunnel)
			p->inner = 1;
		next = info->next;
		prev = info->name;
	}
	vbr_flow_layers_eth(p);
	return vbr_flow_parse_comp(p, error);
}

/* RSS types the hash QP can honour. */
#define VBR_FLOW_RSS_L3 (RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_FRAG_IPV4 | \
			 RTE_ETH_RSS_NONFRAG_IPV4_OTHER | RTE_ETH_RSS_IPV6 | \
			 RTE_ETH_RSS_FRAG_IPV6 | RTE_ETH_RSS_NONFRAG_IPV6_OTHER | \
			 RTE_ETH_RSS_IPV6_EX)
#define VBR_FLOW_RSS_TCP (RTE_ETH_RSS_NONFRAG_IPV4_TCP | \
			  RTE_ETH_RSS_NONFRAG_IPV6_TCP | RTE_ETH_RSS_IPV6_TCP_EX)
#define VBR_FLOW_RSS_UDP (RTE_ETH_RSS_NONFRAG_IPV4_UDP | \
			  RTE_ETH_RSS_NONFRAG_IPV6_UDP | RTE_ETH_RSS_IPV6_UDP_EX)
#define VBR_FLOW_RSS_ONLY (RTE_ETH_RSS_L3_SRC_ONLY | RTE_ETH_RSS_L3_DST_ONLY | \
			   RTE_ETH_RSS_L4_SRC_ONLY | RTE_ETH_RSS_L4_DST_ONLY)
#define VBR_FLOW_RSS_TYPES (VBR_FLOW_RSS_L3 | VBR_FLOW_RSS_TCP | \
			    VBR_FLOW_RSS_UDP | VBR_FLOW_RSS_ONLY)

/**
 * IBV_RX_HASH_* fields of RSS types (RTE_ETH_RSS_*). Verbs hashes fields,
 * not packet types: ipv4-udp hashes the IPv4 addresses and the UDP ports of
 * every packet that has them; the IPv6 _EX types hash the addresses of the
 * fixed IPv6 header. Bits outside VBR_FLOW_RSS_TYPES are ignored:
 * the caller checks them.
 */
uint64_t
vbr_flow_rss_fields(uint64_t types)
{
	uint64_t f = 0, l3 = 0, l4;

	if (types & (RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_FRAG_IPV4 |
		     RTE_ETH_RSS_NONFRAG_IPV4_OTHER | RTE_ETH_RSS_NONFRAG_IPV4_TCP |
		     RTE_ETH_RSS_NONFRAG_IPV4_UDP))
		l3 |= IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4;
	if (types & (RTE_ETH_RSS_IPV6 | RTE_ETH_RSS_FRAG_IPV6 |
		     RTE_ETH_RSS_NONFRAG_IPV6_OTHER | RTE_ETH_RSS_NONFRAG_IPV6_TCP |
		     RTE_ETH_RSS_NONFRAG_IPV6_UDP | RTE_ETH_RSS_IPV6_EX |
		     RTE_ETH_RSS_IPV6_TCP_EX | RTE_ETH_RSS_IPV6_UDP_EX))
		l3 |= IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6;
	if (types & RTE_ETH_RSS_L3_SRC_ONLY)
		l3 &= IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_SRC_IPV6;
	else if (types & RTE_ETH_RSS_L3_DST_ONLY)
		l3 &= IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_DST_IPV6;
	f |= l3;
	l4 = 0;
	if (types & VBR_FLOW_RSS_TCP)
		l4 |= IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP;
	if (types & VBR_FLOW_RSS_UDP)
		l4 |= IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP;
	if (types & RTE_ETH_RSS_L4_SRC_ONLY)
		l4 &= IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_SRC_PORT_UDP;
	else if (types & RTE_ETH_RSS_L4_DST_ONLY)
		l4 &= IBV_RX_HASH_DST_PORT_TCP | IBV_RX_HASH_DST_PORT_UDP;
	return f | l4;
}

static int
vbr_flow_check_queue(const struct vbr_flow_caps *caps,
		     const struct rte_flow_action *action, uint16_t queue,
		     struct rte_flow_error *error)
{
	char n1[VBR_NAME_LEN];

	if (caps->nb_rx_queues != 0 && queue >= caps->nb_rx_queues)
		return vbr_flow_error(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_ACTION_CONF, action,
			"vbr: %s action: queue %u is not below the %u Rx "
			"queues configured",
			vbr_flow_action_name(n1, action->type), queue,
			caps->nb_rx_queues);
	return 0;
}

static int
vbr_flow_rss(const struct vbr_flow_caps *caps,
	     const struct rte_flow_action *action, struct vbr_flow_desc *d,
	     struct rte_flow_error *error)
{
	const struct rte_flow_action_rss *rss = action->conf;
	uint64_t types;
	unsigned int i;
	int ret;

	if (rss == NULL)
		return rte_flow_error_set(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_ACTION_CONF, action,
			"vbr: rss action: no configuration");
	if (rss->func != RTE_ETH_HASH_FUNCTION_DEFAULT &&
	    rss->func != RTE_ETH_HASH_FUNCTION_TOEPLITZ)
		return rte_flow_error_set(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ACTION_CONF, action,
			"vbr: rss action: only the Toeplitz hash function");
	if (rss->level > 1)
		return rte_flow_error_set(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ACTION_CONF, action,
			"vbr: rss action: level 0 or 1 only (verbs hashes the "
			"outer headers)");
	if (rss->key_len != 0 && rss->key_len != VBR_FLOW_RSS_KEY_LEN)
		return vbr_flow_error(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_ACTION_CONF, action,
			"vbr: rss action: key of %u bytes: must be %u (or none "
			"for the port's key)", rss->key_len,
			VBR_FLOW_RSS_KEY_LEN);
	if (rss->key_len != 0 && rss->key == NULL)
		return rte_flow_error_set(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_ACTION_CONF, action,
			"vbr: rss action: key_len set but no key");
	types = rss->types != 0 ? rss->types : RTE_ETH_RSS_IP;
	if (types & ~(uint64_t)VBR_FLOW_RSS_TYPES)
		return vbr_flow_error(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ACTION_CONF, action,
			"vbr: rss action: types 0x%" PRIx64 " cannot be "
			"hashed (verbs hashes IPv4/IPv6 addresses and TCP/UDP "
			"ports)", types & ~(uint64_t)VBR_FLOW_RSS_TYPES);
	/* No queue list: every Rx queue of the port. */
	if (rss->queue_num == 0 && caps->nb_rx_queues != 0) {
		for (i = 0; i < caps->nb_rx_queues; i++)
			d->queues[i] = i;
		d->nb_queues = caps->nb_rx_queues;
	} else if (rss->queue_num == 0 || rss->queue == NULL) {
		return rte_flow_error_set(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_ACTION_CONF, action,
			"vbr: rss action: no queue (and the number of Rx "
			"queues is not known)");
	}
	if (rss->queue_num > VBR_FLOW_MAX_QUEUES)
		return vbr_flow_error(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_ACTION_CONF, action,
			"vbr: rss action: %u queues, at most %u",
			rss->queue_num, VBR_FLOW_MAX_QUEUES);
	for (i = 0; i < rss->queue_num; i++) {
		ret = vbr_flow_check_queue(caps, action, rss->queue[i], error);
		if (ret != 0)
			return ret;
		d->queues[i] = rss->queue[i];
	}
	if (rss->queue_num != 0)
		d->nb_queues = rss->queue_num;
	d->hash_fields = vbr_flow_rss_fields(types);
	d->rss_types = types;
	if (rss->key_len != 0) {
		memcpy(d->rss_key, rss->key, VBR_FLOW_RSS_KEY_LEN);
		d->has_key = 1;
	}
	d->fate = VBR_FLOW_FATE_RSS;
	return 0;
}

/*
 * COUNT (the rule's own counters; the id is ignored: 22.11 has no shared
 * counters by id, an indirect action is the way to share) or INDIRECT (a
 * handle of vbr_count_handle_create(), checked by the caller: the
 * translation has no port). One counter per rule.
 */
static int
vbr_flow_count(const struct vbr_flow_caps *caps,
	       const struct rte_flow_action *action,
	       const struct rte_flow_action *prev, struct vbr_flow_desc *d,
	       struct rte_flow_error *error)
{
	char n1[VBR_NAME_LEN], n2[VBR_NAME_LEN];

	if (caps->internal && !caps->internal_count)
		return rte_flow_error_set(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ACTION, action,
			"vbr: internal rules do not count");
	if (prev != NULL)
		return vbr_flow_error(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ACTION, action,
			"vbr: %s action: the rule already has a %s action; a "
			"rule binds one counters object",
			vbr_flow_action_name(n1, action->type),
			vbr_flow_action_name(n2, prev->type));
	if (action->type == RTE_FLOW_ACTION_TYPE_COUNT) {
		d->count = VBR_FLOW_COUNT_RULE;
		return 0;
	}
	if (action->conf == NULL)
		return rte_flow_error_set(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_ACTION_CONF, action,
			"vbr: indirect action: no handle");
	d->count = VBR_FLOW_COUNT_INDIRECT;
	d->indirect = action->conf;
	return 0;
}

/*
 * METER: the frames are coloured in the Rx burst by the rte_mtr meter
 * mtr_id (vbr_mtr.c), which the rule's tag names; the meter is looked up,
 * and the rule's fate taken from its policy when it has none, at creation.
 */
static int
vbr_flow_meter(const struct vbr_flow_caps *caps,
	       const struct rte_flow_action *action,
	       const struct rte_flow_action *prev, struct vbr_flow_desc *d,
	       struct rte_flow_error *error)
{
	const struct rte_flow_action_meter *m = action->conf;

	if (caps->internal)
		return rte_flow_error_set(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ACTION, action,
			"vbr: internal rules do not meter");
	if (prev != NULL)
		return rte_flow_error_set(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ACTION, action,
			"vbr: meter action: one meter per rule (no meter "
			"chaining)");
	if (m == NULL)
		return rte_flow_error_set(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_ACTION_CONF, action,
			"vbr: meter action: no mtr_id");
	d->rx_act |= VBR_RX_ACT_METER;
	d->meter_id = m->mtr_id;
	d->meter_act = action;
	return 0;
}

static int
vbr_flow_age(const struct vbr_flow_caps *caps,
	     const struct rte_flow_action *action, struct vbr_flow_desc *d,
	     struct rte_flow_error *error)
{
	const struct rte_flow_action_age *age = action->conf;

	if (caps->internal)
		return rte_flow_error_set(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ACTION, action,
			"vbr: internal rules do not age");
	if (d->age)
		return rte_flow_error_set(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ACTION, action,
			"vbr: one age action per rule");
	if (age == NULL)
		return rte_flow_error_set(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_ACTION_CONF, action,
			"vbr: age action: no configuration");
	if (age->reserved != 0)
		return rte_flow_error_set(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_ACTION_CONF, action,
			"vbr: age action: reserved bits must be 0");
	if (age->timeout == 0)
		return rte_flow_error_set(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_ACTION_CONF, action,
			"vbr: age action: timeout 0: give 1 to 16777215 "
			"seconds");
	d->age = 1;
	d->age_timeout = age->timeout;
	d->age_context = age->context;
	return 0;
}

/*
 * A fragment condition the device cannot match (sw_frag) is kept in the
 * Rx burst: the rule's verbs flow also takes the frames it excludes, and
 * those lose the mark. That is exact only if nothing else of the rule
 * touched them: its actions are a mark or flag and a queue or rss that
 * vbr_steer.c checks is where the port puts every frame without the rule.
 * Counters, ageing, meters and drops would act on frames the rule
 * excludes: refused, naming the field and the action.
 */
static int
vbr_flow_sw_frag(struct vbr_flow_parse *p,
		 const struct rte_flow_action *fate,
		 const struct rte_flow_action *count,
		 const struct rte_flow_action *meter,
		 struct rte_flow_error *error)
{
	struct vbr_flow_desc *d = p->d;
	const char *what = NULL;

	if (d->sw_frag == 0)
		return 0;
	if (count != NULL)
		what = count->type == RTE_FLOW_ACTION_TYPE_COUNT ?
		       "a count action" : "an indirect (count) action";
	else if (d->age)
		what = "an age action";
	else if (meter != NULL)
		what = "a meter action";
	else if (fate == NULL || d->fate == VBR_FLOW_FATE_DROP)
		what = "a drop action";
	if (what != NULL)
		return vbr_flow_error(error, ENOTSUP, RTE_FLOW_ERROR_TYPE_ITEM,
			p->frag_item, "vbr: %s: the device cannot match "
			"fragments; only a mark or flag with the port's own "
			"RSS can be kept exact in software, not %s",
			d->sw_frag & VBR_RX_FRAG_V6 ?
			"ipv6 item: has_frag_ext" :
			"ipv4 item: fragment_offset", what);
	if (d->rx_act & (VBR_RX_ACT_MARK | VBR_RX_ACT_FLAG))
		d->rx_act |= VBR_RX_ACT_FRAG |
			     (uint64_t)d->sw_frag << VBR_RX_ACT_FRAG_SHIFT;
	return 0;
}

static int
vbr_flow_parse_actions(const struct vbr_flow_caps *caps,
		       struct vbr_flow_parse *p,
		       const struct rte_flow_action *action,
		       struct rte_flow_error *error)
{
	struct vbr_flow_desc *d = p->d;
	const struct rte_flow_action *fate = NULL, *tag = NULL, *count = NULL;
	const struct rte_flow_action *meter = NULL;
	char n1[VBR_NAME_LEN], n2[VBR_NAME_LEN];
	int ret;

	for (; action->type != RTE_FLOW_ACTION_TYPE_END; action++) {
		switch (action->type) {
		case RTE_FLOW_ACTION_TYPE_VOID:
		case RTE_FLOW_ACTION_TYPE_PASSTHRU:
			continue;
		case RTE_FLOW_ACTION_TYPE_JUMP: {
			const struct rte_flow_action_jump *j = action->conf;

			if (j == NULL || j->group != 0)
				return rte_flow_error_set(error, ENOTSUP,
					RTE_FLOW_ERROR_TYPE_ACTION_CONF,
					action, "vbr: jump action: group 0 "
					"is the only group");
			continue;
		}
		case RTE_FLOW_ACTION_TYPE_MARK:
		case RTE_FLOW_ACTION_TYPE_FLAG:
			if (tag != NULL)
				return rte_flow_error_set(error, ENOTSUP,
					RTE_FLOW_ERROR_TYPE_ACTION, action,
					"vbr: one mark or flag action per "
					"rule");
			tag = action;
			if (action->type == RTE_FLOW_ACTION_TYPE_FLAG) {
				d->rx_act |= VBR_RX_ACT_FLAG;
				continue;
			}
			if (action->conf == NULL)
				return rte_flow_error_set(error, EINVAL,
					RTE_FLOW_ERROR_TYPE_ACTION_CONF,
					action, "vbr: mark action: no id");
			if (((const struct rte_flow_action_mark *)
			     action->conf)->id > VBR_FLOW_MARK_MAX)
				return vbr_flow_error(error, ENOTSUP,
					RTE_FLOW_ERROR_TYPE_ACTION_CONF,
					action, "vbr: mark action: id above "
					"the maximum %u", VBR_FLOW_MARK_MAX);
			d->rx_act |= VBR_RX_ACT_MARK |
				((const struct rte_flow_action_mark *)
				 action->conf)->id;
			continue;
		case RTE_FLOW_ACTION_TYPE_METER:
			ret = vbr_flow_meter(caps, action, meter, d, error);
			if (ret != 0)
				return ret;
			meter = action;
			continue;
		case RTE_FLOW_ACTION_TYPE_COUNT:
		case RTE_FLOW_ACTION_TYPE_INDIRECT:
			ret = vbr_flow_count(caps, action, count, d, error);
			if (ret != 0)
				return ret;
			count = action;
			continue;
		case RTE_FLOW_ACTION_TYPE_AGE:
			ret = vbr_flow_age(caps, action, d, error);
			if (ret != 0)
				return ret;
			continue;
		case RTE_FLOW_ACTION_TYPE_QUEUE:
		case RTE_FLOW_ACTION_TYPE_RSS:
		case RTE_FLOW_ACTION_TYPE_DROP:
			break;
		default:
			return vbr_flow_error(error, ENOTSUP,
				RTE_FLOW_ERROR_TYPE_ACTION, action,
				"vbr: action %s is not supported",
				vbr_flow_action_name(n1, action->type));
		}
		if (fate != NULL)
			return vbr_flow_error(error, ENOTSUP,
				RTE_FLOW_ERROR_TYPE_ACTION, action,
				"vbr: %s action: the rule already has a %s "
				"action; a rule has exactly one fate (queue, "
				"rss or drop)",
				vbr_flow_action_name(n1, action->type),
				vbr_flow_action_name(n2, fate->type));
		fate = action;
		if (action->type == RTE_FLOW_ACTION_TYPE_QUEUE) {
			const struct rte_flow_action_queue *q = action->conf;

			if (q == NULL)
				return rte_flow_error_set(error, EINVAL,
					RTE_FLOW_ERROR_TYPE_ACTION_CONF,
					action, "vbr: queue action: no index");
			ret = vbr_flow_check_queue(caps, action, q->index,
						   error);
			if (ret != 0)
				return ret;
			d->fate = VBR_FLOW_FATE_QUEUE;
			d->queues[0] = q->index;
			d->nb_queues = 1;
		} else if (action->type == RTE_FLOW_ACTION_TYPE_RSS) {
			ret = vbr_flow_rss(caps, action, d, error);
			if (ret != 0)
				return ret;
		} else {
			d->fate = VBR_FLOW_FATE_DROP;
		}
	}
	if (caps->internal && fate == NULL)
		return 0;
	if (fate == NULL && meter == NULL)
		return rte_flow_error_set(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_ACTION_NUM, NULL,
			"vbr: a fate action (queue, rss or drop) or a meter "
			"is required");
	if (tag != NULL && d->fate == VBR_FLOW_FATE_DROP)
		return rte_flow_error_set(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ACTION, tag,
			"vbr: mark or flag on a drop rule: nothing to mark");
	if (meter != NULL && d->fate == VBR_FLOW_FATE_DROP)
		return rte_flow_error_set(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ACTION, meter,
			"vbr: meter on a drop rule: nothing to meter");
	ret = vbr_flow_sw_frag(p, fate, count, meter, error);
	if (ret != 0)
		return ret;
	/*
	 * Action specs follow the item specs, packed: built aside, copied.
	 * The tag is the rule's Rx action table entry, known at creation.
	 */
	if (d->rx_act != 0) {
		struct ibv_flow_spec_action_tag t;

		memset(&t, 0, sizeof(t));
		t.type = IBV_FLOW_SPEC_ACTION_TAG;
		t.size = sizeof(t);
		memcpy(p->pos, &t, sizeof(t));
		d->tag_off = p->pos - d->u.buf;
		p->pos += sizeof(t);
		d->u.attr.num_of_specs++;
	}
	/* AGE watches a counter: the rule's, or a hidden one of its own. */
	if (d->age && d->count == VBR_FLOW_COUNT_NONE)
		d->count = VBR_FLOW_COUNT_HIDDEN;
	if (d->count != VBR_FLOW_COUNT_NONE) {
		struct ibv_flow_spec_counter_action c;

		/*
		 * The counters object is the rule's: set at creation, with
		 * vbr_flow_spec_set_counters().
		 */
		memset(&c, 0, sizeof(c));
		c.type = IBV_FLOW_SPEC_ACTION_COUNT;
		c.size = sizeof(c);
		memcpy(p->pos, &c, sizeof(c));
		d->count_off = p->pos - d->u.buf;
		p->pos += sizeof(c);
		d->u.attr.num_of_specs++;
	}
	if (d->fate == VBR_FLOW_FATE_DROP) {
		memset(p->pos, 0, sizeof(struct ibv_flow_spec_action_drop));
		vbr_flow_spec_hdr(p->pos, IBV_FLOW_SPEC_ACTION_DROP,
				  sizeof(struct ibv_flow_spec_action_drop));
		p->pos += sizeof(struct ibv_flow_spec_action_drop);
		d->u.attr.num_of_specs++;
	}
	return 0;
}

static int
vbr_flow_attr(const struct vbr_flow_caps *caps,
	      const struct rte_flow_attr *attr, struct rte_flow_error *error)
{
	unsigned int levels;

	if (attr == NULL)
		return rte_flow_error_set(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_ATTR, NULL,
			"vbr: no attributes");
	if (attr->transfer)
		return rte_flow_error_set(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ATTR_TRANSFER, attr,
			"vbr: transfer rules are not supported: the port has "
			"no switch domain");
	if (attr->egress)
		return rte_flow_error_set(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ATTR_EGRESS, attr,
			"vbr: egress rules are not supported: verbs steering "
			"here is for received traffic");
	if (!attr->ingress)
		return rte_flow_error_set(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_ATTR_INGRESS, attr,
			"vbr: the rule must be ingress");
	if (attr->group != 0)
		return rte_flow_error_set(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ATTR_GROUP, attr,
			"vbr: group 0 is the only group");
	levels = caps->prio_levels != 0 ? caps->prio_levels :
		 VBR_FLOW_PRIO_LEVELS;
	if (!caps->internal && attr->priority >= levels) {
		if (caps->nb_prios == 0)
			return vbr_flow_error(error, ENOTSUP,
				RTE_FLOW_ERROR_TYPE_ATTR_PRIORITY, attr,
				"vbr: priority %u: levels are 0 to %u",
				attr->priority, levels - 1);
		return vbr_flow_error(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ATTR_PRIORITY, attr,
			"vbr: priority %u: levels are 0 to %u (the device "
			"has %u verbs flow priorities: %u per level, %u for "
			"the port's own rules)", attr->priority, levels - 1,
			caps->nb_prios, VBR_FLOW_PRIO_SUB,
			VBR_FLOW_PRIO_INTERNAL_SPAN);
	}
	return 0;
}

/**
 * Translate a rule. Return 0 and fill *out (when not NULL), or a negative
 * errno with *error set. Validation is the same call with out NULL.
 */
int
vbr_flow_prepare(const struct vbr_flow_caps *caps,
		 const struct rte_flow_attr *attr,
		 const struct rte_flow_item pattern[],
		 const struct rte_flow_action actions[],
		 struct vbr_flow_desc *out, struct rte_flow_error *error)
{
	struct vbr_flow_desc scratch;
	struct vbr_flow_parse p = { 0 };
	struct vbr_flow_desc *d = out != NULL ? out : &scratch;
	int ret;

	ret = vbr_flow_attr(caps, attr, error);
	if (ret != 0)
		return -rte_errno;
	p.vlan_any_tpid = caps->vlan_any_tpid;
	p.sw_frag = !caps->internal && (caps->no_fields & VBR_FLOW_F_FRAG);
	if (pattern == NULL)
		return rte_flow_error_set(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_ITEM_NUM, NULL,
			"vbr: no pattern");
	if (actions == NULL)
		return rte_flow_error_set(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_ACTION_NUM, NULL,
			"vbr: no actions");
	d->fate = VBR_FLOW_FATE_NONE;
	d->rx_act = 0;
	d->meter_id = 0;
	d->meter_act = NULL;
	d->tag_off = 0;
	d->hash_fields = 0;
	d->has_key = 0;
	d->nb_queues = 0;
	d->count = VBR_FLOW_COUNT_NONE;
	d->age = 0;
	d->age_timeout = 0;
	d->age_context = NULL;
	d->indirect = NULL;
	d->count_off = 0;
	d->rss_types = 0;
	d->l3 = 0;
	d->l4 = 0;
	d->comp = 0;
	d->sw_frag = 0;
	/* Only the attr: each spec is cleared where it is written. */
	memset(&d->u.attr, 0, sizeof(d->u.attr));
	d->u.attr.type = IBV_FLOW_ATTR_NORMAL;
	d->u.attr.priority = caps->internal ? VBR_FLOW_PRIO_INTERNAL :
			     attr->priority;
	d->u.attr.port = 1;
	p.d = d;
	p.pos = d->u.buf + sizeof(d->u.attr);
	ret = vbr_flow_parse_items(caps, &p, pattern, error);
	d->items_end = p.pos - d->u.buf;
	d->sub = d->l4 != 0 ? 0 : d->l3 != 0 ? 1 : 2;
	if (ret == 0)
		ret = vbr_flow_parse_actions(caps, &p, actions, error);
	if (ret != 0)
		return -rte_errno;
	d->attr_size = p.pos - d->u.buf;
	d->u.attr.size = d->attr_size;
	return 0;
}

/*
 * RSS expansion. A ConnectX hash QP hashes one L3 family and at most one L4
 * protocol, so an RSS over "ip tcp udp" is one hash QP per packet type, and
 * the rule one verbs flow per type it can match: the L4 flows at the
 * rule's first verbs sub-level, the L3 flows next, the L2 catch-all last
 * (vbr_flow_pt_sub()), so a frame takes the most specific. The pattern's
 * own items fix where the expansion starts; a type whose fields are those
 * of its parent needs no flow (the parent's takes its frames).
 */

#define VBR_HASH_V4 (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4)
#define VBR_HASH_V6 (IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6)
#define VBR_HASH_TCP (IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP)
#define VBR_HASH_UDP (IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP)

/* Per packet type: its parent, its L3 (4, 6, 0) and L4 (6, 17, 0). */
static const struct {
	uint8_t parent;
	uint8_t l3;
	uint8_t l4;
	uint8_t depth;		/* 0 L4, 1 L3, 2 L2 */
	uint64_t fields;	/* the hash fields it may use */
	const char *name;
} vbr_flow_pts[VBR_FLOW_PT_MAX] = {
	[VBR_FLOW_PT_L2] = { VBR_FLOW_PT_MAX, 0, 0, 2, 0, "l2" },
	[VBR_FLOW_PT_IPV4] = { VBR_FLOW_PT_L2, 4, 0, 1, VBR_HASH_V4, "ipv4" },
	[VBR_FLOW_PT_IPV4_TCP] = { VBR_FLOW_PT_IPV4, 4, 6, 0,
				   VBR_HASH_V4 | VBR_HASH_TCP, "ipv4-tcp" },
	[VBR_FLOW_PT_IPV4_UDP] = { VBR_FLOW_PT_IPV4, 4, 17, 0,
				   VBR_HASH_V4 | VBR_HASH_UDP, "ipv4-udp" },
	[VBR_FLOW_PT_IPV6] = { VBR_FLOW_PT_L2, 6, 0, 1, VBR_HASH_V6, "ipv6" },
	[VBR_FLOW_PT_IPV6_TCP] = { VBR_FLOW_PT_IPV6, 6, 6, 0,
				   VBR_HASH_V6 | VBR_HASH_TCP, "ipv6-tcp" },
	[VBR_FLOW_PT_IPV6_UDP] = { VBR_FLOW_PT_IPV6, 6, 17, 0,
				   VBR_HASH_V6 | VBR_HASH_UDP, "ipv6-udp" },
};

/** Name of a packet type ("ipv4-tcp"). */
const char *
vbr_flow_pt_name(unsigned int pt)
{
	return pt < VBR_FLOW_PT_MAX ? vbr_flow_pts[pt].name : "?";
}

/**
 * Hash fields of packet type pt for RSS types: those of
 * vbr_flow_rss_fields() that the type has, never L4 ports without L3
 * addresses (a ConnectX does not say what it hashes then).
 */
uint64_t
vbr_flow_pt_fields(uint64_t types, unsigned int pt)
{
	uint64_t f;

	if (pt >= VBR_FLOW_PT_MAX)
		return 0;
	f = vbr_flow_rss_fields(types) & vbr_flow_pts[pt].fields;
	if ((f & (VBR_HASH_V4 | VBR_HASH_V6)) == 0)
		f = 0;
	return f;
}

/* The type the pattern itself stands for. */
static unsigned int
vbr_flow_root(const struct vbr_flow_desc *d)
{
	unsigned int base = d->l3 == 6 ? VBR_FLOW_PT_IPV6 : VBR_FLOW_PT_IPV4;

	if (d->l3 != 4 && d->l3 != 6)
		return VBR_FLOW_PT_L2;
	if (d->l4 == 6)
		return base + 1;
	if (d->l4 == 17)
		return base + 2;
	return base;
}

/* Whether pt is below root in the type tree (root itself not). */
static bool
vbr_flow_below(unsigned int pt, unsigned int root)
{
	unsigned int p;

	for (p = vbr_flow_pts[pt].parent; p < VBR_FLOW_PT_MAX;
	     p = vbr_flow_pts[p].parent)
		if (p == root)
			return true;
	return false;
}

/**
 * The verbs flows of rule d over a queue set hashing types: the pattern's
 * own type first, then each type below it whose hash fields differ from
 * those of the nearest type above it that has a flow. QUEUE and DROP rules
 * (types 0) and patterns that fix their L4 (or an L3 other than IP) are
 * one flow.
 */
void
vbr_flow_expand(const struct vbr_flow_desc *d, uint64_t types,
		struct vbr_flow_exp *e)
{
	unsigned int root = vbr_flow_root(d), pt, anc, i;
	bool in[VBR_FLOW_PT_MAX] = { false };

	e->nb = 0;
	e->pt[e->nb++] = root;
	in[root] = true;
	if (d->l4 != 0 || d->l3 == 0xff || types == 0)
		return;
	for (pt = 0; pt < VBR_FLOW_PT_MAX; pt++) {
		if (!vbr_flow_below(pt, root))
			continue;
		for (anc = vbr_flow_pts[pt].parent; !in[anc];
		     anc = vbr_flow_pts[anc].parent)
			;
		if (vbr_flow_pt_fields(types, pt) ==
		    vbr_flow_pt_fields(types, anc))
			continue;
		in[pt] = true;
		i = e->nb++;
		e->pt[i] = pt;
	}
}

/** Verbs sub-level (0 first) of the flow of type pt of rule d. */
uint8_t
vbr_flow_pt_sub(const struct vbr_flow_desc *d, unsigned int pt)
{
	return RTE_MIN(d->sub, vbr_flow_pts[pt].depth);
}

/*
 * mlx5 takes a NORMAL rule whose first spec is an Ethernet spec matching
 * group addresses only (the group bit set in the dst mask and value) or
 * an IPv4 spec with a multicast dst out of its priority, into one table
 * after priority 15 where the rules of every priority are tried in flow
 * group order (drivers/infiniband/hw/mlx5/fs.c flow_is_multicast_only).
 * vbr relies on priorities among such rules: L4 flows before L3 before
 * L2 (multicast RSS), accepted VIDs before the VLAN filter's drops, user
 * levels before the port's rules. The order of the specs means nothing
 * else to verbs, so the rule keeps its priority when an action spec comes
 * first: its first TAG, DROP or COUNT spec moves to the front, or a TAG
 * of 0 (no mark: vbr_rxtx.h) goes there when it has none.
 * Return false when buf (room bytes) has no room for the TAG or the attr
 * has as many specs as verbs takes: it is left as it was.
 */
bool
vbr_flow_attr_keep_prio(uint8_t *buf, size_t room)
{
	struct ibv_flow_attr *attr = (struct ibv_flow_attr *)buf;
	struct ibv_flow_spec_action_tag tag;
	struct ibv_flow_spec_eth eth;
	struct ibv_flow_spec h;
	uint8_t *specs = buf + sizeof(*attr), *pos, *end;
	uint8_t act[sizeof(struct ibv_flow_spec)];
	unsigned int i;
	bool mc = false;

	if (attr->type != IBV_FLOW_ATTR_NORMAL || attr->num_of_specs == 0)
		return true;
	memcpy(&h.hdr, specs, sizeof(h.hdr));
	if (h.hdr.type == IBV_FLOW_SPEC_ETH && h.hdr.size >= sizeof(eth)) {
		memcpy(&eth, specs, sizeof(eth));
		mc = (eth.val.dst_mac[0] & eth.mask.dst_mac[0] & 1) != 0;
	} else if (h.hdr.type == IBV_FLOW_SPEC_IPV4 ||
		   h.hdr.type == IBV_FLOW_SPEC_IPV4_EXT) {
		struct ibv_flow_spec_ipv4 ip;

		memcpy(&ip, specs, sizeof(ip));
		mc = (rte_be_to_cpu_32(ip.val.dst_ip) >> 28) == 0xe;
	}
	if (!mc)
		return true;
	end = buf + attr->size;
	pos = specs;
	for (i = 0; i < attr->num_of_specs && pos < end; i++) {
		memcpy(&h.hdr, pos, sizeof(h.hdr));
		if (h.hdr.size == 0)
			break;
		if ((h.hdr.type == IBV_FLOW_SPEC_ACTION_TAG ||
		     h.hdr.type == IBV_FLOW_SPEC_ACTION_DROP ||
		     h.hdr.type == IBV_FLOW_SPEC_ACTION_COUNT) &&
		    h.hdr.size <= sizeof(act)) {
			memcpy(act, pos, h.hdr.size);
			memmove(specs + h.hdr.size, specs, pos - specs);
			memcpy(specs, act, h.hdr.size);
			return true;
		}
		pos += h.hdr.size;
	}
	if (attr->num_of_specs >= VBR_FLOW_MAX_SPECS ||
	    attr->size + sizeof(tag) > room)
		return false;
	memset(&tag, 0, sizeof(tag));
	tag.type = IBV_FLOW_SPEC_ACTION_TAG;
	tag.size = sizeof(tag);
	memmove(specs + sizeof(tag), specs, attr->size - sizeof(*attr));
	memcpy(specs, &tag, sizeof(tag));
	attr->size += sizeof(tag);
	attr->num_of_specs++;
	return true;
}

/* Append an empty spec (it matches the protocol it stands for). */
static size_t
vbr_flow_add_spec(uint8_t *pos, enum ibv_flow_spec_type type, uint16_t size)
{
	memset(pos, 0, size);
	vbr_flow_spec_hdr(pos, type, size);
	return size;
}

/**
 * The verbs attr of the flow of type pt of a rule: attr (as translated)
 * with the priority given, and the specs of the L3 and L4 that type adds to
 * the pattern (l3, l4: what the pattern has, from vbr_flow_desc), before
 * the action specs (from items_end). Return its size, 0 if room is short.
 */
size_t
vbr_flow_expand_attr(const struct ibv_flow_attr *attr, uint16_t items_end,
		     uint8_t l3, uint8_t l4, unsigned int pt,
		     uint16_t priority, uint8_t *buf, size_t room)
{
	const uint8_t *src = (const uint8_t *)attr;
	struct ibv_flow_attr *out = (struct ibv_flow_attr *)buf;
	size_t add = 0, off = items_end;
	uint8_t *pos;

	if (attr->size + sizeof(struct ibv_flow_spec_ipv6) +
	    sizeof(struct ibv_flow_spec_tcp_udp) > room)
		return 0;
	memcpy(buf, src, items_end);
	pos = buf + items_end;
	if (l3 != 4 && l3 != 6 && vbr_flow_pts[pt].l3 == 4) {
		add += vbr_flow_add_spec(pos + add, IBV_FLOW_SPEC_IPV4_EXT,
				sizeof(struct ibv_flow_spec_ipv4_ext));
		out->num_of_specs++;
	} else if (l3 != 4 && l3 != 6 && vbr_flow_pts[pt].l3 == 6) {
		add += vbr_flow_add_spec(pos + add, IBV_FLOW_SPEC_IPV6,
				sizeof(struct ibv_flow_spec_ipv6));
		out->num_of_specs++;
	}
	if (l4 == 0 && vbr_flow_pts[pt].l4 != 0) {
		add += vbr_flow_add_spec(pos + add, vbr_flow_pts[pt].l4 == 6 ?
				IBV_FLOW_SPEC_TCP : IBV_FLOW_SPEC_UDP,
				sizeof(struct ibv_flow_spec_tcp_udp));
		out->num_of_specs++;
	}
	memcpy(pos + add, src + off, attr->size - off);
	out->size = attr->size + add;
	out->priority = priority;
	return out->size;
}

/*
 * Companions. Each catches a part of the frames its rule's specs match but
 * its meaning excludes: C-tagged frames (VLAN bit 0 of the VID clear, set:
 * two flows, since a verbs VLAN match selects tagged frames only under a
 * non-zero mask), or IPv6 frames whose next header is hop-by-hop, routing,
 * fragment, authentication (AH) or destination options (five flows): the
 * headers OVS walks to find a fragment header, so IPv6/AH/fragment is a
 * fragment to it.
 */
static const uint8_t vbr_flow_v6_ext[] = { 0, 43, 44, 51, 60 };

/** Verbs flows of the companions comp (VBR_FLOW_COMP_* bits) stands for. */
unsigned int
vbr_flow_nb_comp(uint8_t comp)
{
	return (comp & VBR_FLOW_COMP_TAGGED ? 2 : 0) +
	       (comp & VBR_FLOW_COMP_V6_EXT ? RTE_DIM(vbr_flow_v6_ext) : 0);
}

/**
 * The verbs attr of companion i (0 to vbr_flow_nb_comp() - 1) of a rule:
 * its item specs (attr up to items_end), at priority, with the VLAN or the
 * next header match that selects the excluded frames, and no action.
 * Return its size, 0 if i is out of range or room short.
 */
size_t
vbr_flow_comp_attr(const struct ibv_flow_attr *attr, uint16_t items_end,
		   uint8_t comp, unsigned int i, uint16_t priority,
		   uint8_t *buf, size_t room)
{
	struct ibv_flow_attr *out = (struct ibv_flow_attr *)buf;
	unsigned int n, k;
	uint8_t *pos, *end;
	uint32_t want;

	if (items_end > room || i >= vbr_flow_nb_comp(comp))
		return 0;
	if (comp & VBR_FLOW_COMP_TAGGED)
		want = i < 2 ? IBV_FLOW_SPEC_ETH : IBV_FLOW_SPEC_IPV6;
	else
		want = IBV_FLOW_SPEC_IPV6;
	if (comp & VBR_FLOW_COMP_TAGGED && i >= 2)
		i -= 2;
	memcpy(buf, attr, items_end);
	pos = buf + sizeof(*out);
	end = buf + items_end;
	for (n = 0, k = 0; pos < end; n++) {
		struct ibv_flow_spec spec;

		memcpy(&spec.hdr, pos, sizeof(spec.hdr));
		if (spec.hdr.size == 0 || pos + spec.hdr.size > end)
			return 0;
		if (spec.hdr.type == want && k++ == 0) {
			if (want == IBV_FLOW_SPEC_ETH) {
				struct ibv_flow_spec_eth e;

				memcpy(&e, pos, sizeof(e));
				e.mask.vlan_tag |= RTE_BE16(1);
				e.val.vlan_tag = (e.val.vlan_tag &
						  ~RTE_BE16(1)) |
						 (i ? RTE_BE16(1) : 0);
				memcpy(pos, &e, sizeof(e));
			} else {
				struct ibv_flow_spec_ipv6 v6;

				memcpy(&v6, pos, sizeof(v6));
				v6.mask.next_hdr = 0xff;
				v6.val.next_hdr = vbr_flow_v6_ext[i];
				memcpy(pos, &v6, sizeof(v6));
			}
		}
		pos += spec.hdr.size;
	}
	if (k == 0)
		return 0;
	out->num_of_specs = n;
	out->size = items_end;
	out->priority = priority;
	return items_end;
}

/** Which base companion (vbr_flow_comp_attr() i) a VLAN_COMP_* bit owns. */
uint8_t
vbr_flow_comp_bit(uint8_t comp, unsigned int i)
{
	if (comp & VBR_FLOW_COMP_TAGGED && i < 2)
		return VBR_FLOW_COMP_TAGGED;
	return VBR_FLOW_COMP_V6_EXT;
}

/**
 * Give a companion built by vbr_flow_comp_attr() in buf its fate: with
 * vmask non-zero, its outer eth spec matches the VLAN TCI vid under vmask
 * instead of the VID bit of the base companion (a VLAN mask selects tagged
 * frames); with drop, it drops, counted by counters if not NULL. Return
 * the new size, 0 if room is short or the companion has no eth spec.
 */
size_t
vbr_flow_comp_fate(uint8_t *buf, size_t room, uint16_t vid, uint16_t vmask,
		   bool drop, struct ibv_counters *counters)
{
	struct ibv_flow_attr *out = (struct ibv_flow_attr *)buf;
	size_t size = out->size;
	uint8_t *pos = buf + sizeof(*out);

	if (vmask != 0) {
		struct ibv_flow_spec_eth e;

		if (size < sizeof(*out) + sizeof(e))
			return 0;
		memcpy(&e, pos, sizeof(e));
		if (e.type != IBV_FLOW_SPEC_ETH)
			return 0;
		e.val.vlan_tag = rte_cpu_to_be_16(vid & vmask);
		e.mask.vlan_tag = rte_cpu_to_be_16(vmask);
		memcpy(pos, &e, sizeof(e));
	}
	if (!drop)
		return size;
	if (size + sizeof(struct ibv_flow_spec_counter_action) +
	    sizeof(struct ibv_flow_spec_action_drop) > room)
		return 0;
	if (counters != NULL) {
		vbr_flow_spec_hdr(buf + size, IBV_FLOW_SPEC_ACTION_COUNT,
				  sizeof(struct ibv_flow_spec_counter_action));
		vbr_flow_spec_set_counters(buf + size, counters);
		size += sizeof(struct ibv_flow_spec_counter_action);
		out->num_of_specs++;
	}
	vbr_flow_spec_hdr(buf + size, IBV_FLOW_SPEC_ACTION_DROP,
			  sizeof(struct ibv_flow_spec_action_drop));
	size += sizeof(struct ibv_flow_spec_action_drop);
	out->num_of_specs++;
	out->size = size;
	return size;
}

/* Where the filter of a spec is, and its size; false: not an item spec. */
static bool
vbr_flow_spec_filter(uint32_t type, size_t *off, size_t *len)
{
#define F(t, s) case IBV_FLOW_SPEC_##t: \
	*off = offsetof(struct s, val); \
	*len = sizeof(((struct s *)NULL)->val); \
	return true
	switch (type & ~(uint32_t)IBV_FLOW_SPEC_INNER) {
	F(ETH, ibv_flow_spec_eth);
	F(IPV4, ibv_flow_spec_ipv4);
	F(IPV4_EXT, ibv_flow_spec_ipv4_ext);
	F(IPV6, ibv_flow_spec_ipv6);
	F(TCP, ibv_flow_spec_tcp_udp);
	F(UDP, ibv_flow_spec_tcp_udp);
	F(VXLAN_TUNNEL, ibv_flow_spec_tunnel);
	F(GRE, ibv_flow_spec_gre);
	F(MPLS, ibv_flow_spec_mpls);
	F(ESP, ibv_flow_spec_esp);
	default:
		return false;
	}
#undef F
}

/** Item specs of a rule at most (outer and inner eth, L3, L4, tunnel). */
#define VBR_FLOW_ISECT_SPECS 8

/* What the item specs of one attr say, per header level (outer, inner). */
struct vbr_flow_isect {
	const uint8_t *spec[VBR_FLOW_ISECT_SPECS]; /**< first of each type */
	uint32_t type[VBR_FLOW_ISECT_SPECS];	/**< their types */
	unsigned int nb;			/**< entries of spec */
	uint8_t l3[2];			/**< 4, 6, 0xff other, 0 any */
	uint8_t l4[2];			/**< IPPROTO_TCP, _UDP, 0 any */
};

/* Index the item specs of attr (up to end); false: a spec is malformed. */
static bool
vbr_flow_isect_index(const struct ibv_flow_attr *attr, uint16_t end,
		     struct vbr_flow_isect *x)
{
	const uint8_t *pos = (const uint8_t *)attr + sizeof(*attr);
	const uint8_t *stop = (const uint8_t *)attr + end;

	x->nb = 0;
	memset(x->l3, 0, sizeof(x->l3));
	memset(x->l4, 0, sizeof(x->l4));
	while (pos < stop) {
		struct ibv_flow_spec spec;
		unsigned int in, i;

		memcpy(&spec.hdr, pos, sizeof(spec.hdr));
		if (spec.hdr.size == 0 || pos + spec.hdr.size > stop)
			return false;
		in = !!(spec.hdr.type & IBV_FLOW_SPEC_INNER);
		for (i = 0; i < x->nb && x->type[i] != spec.hdr.type; i++)
			;
		if (i == x->nb) {
			if (x->nb == VBR_FLOW_ISECT_SPECS)
				return false;
			x->spec[x->nb] = pos;
			x->type[x->nb++] = spec.hdr.type;
		}
		switch (spec.hdr.type & ~(uint32_t)IBV_FLOW_SPEC_INNER) {
		case IBV_FLOW_SPEC_IPV4:
		case IBV_FLOW_SPEC_IPV4_EXT:
			x->l3[in] = 4;
			break;
		case IBV_FLOW_SPEC_IPV6:
			x->l3[in] = 6;
			break;
		case IBV_FLOW_SPEC_TCP:
			x->l4[in] = IPPROTO_TCP;
			break;
		case IBV_FLOW_SPEC_UDP:
			x->l4[in] = IPPROTO_UDP;
			break;
		case IBV_FLOW_SPEC_ETH: {
			struct ibv_flow_spec_eth e;

			memcpy(&e, pos, sizeof(e));
			if (e.mask.ether_type != RTE_BE16(0xffff) ||
			    x->l3[in] != 0)
				break;
			x->l3[in] = e.val.ether_type == RTE_BE16(0x0800) ? 4 :
				    e.val.ether_type == RTE_BE16(0x86dd) ? 6 :
				    0xff;
			break;
		}
		default:
			break;
		}
		pos += spec.hdr.size;
	}
	return true;
}

/**
 * Whether some frame may match both attrs' item specs (a up to a_end, b
 * up to b_end): false only when they provably cannot, by an L3 family, an
 * L4 protocol or a field both match under a common mask bit with different
 * values. Used to find the rules a rule's companions would take frames
 * from; "may" errs on the side of a conflict.
 */
bool
vbr_flow_attr_intersect(const struct ibv_flow_attr *a, uint16_t a_end,
			const struct ibv_flow_attr *b, uint16_t b_end)
{
	struct vbr_flow_isect xa, xb;
	unsigned int in, t, u;
	size_t off, len, i;

	if (!vbr_flow_isect_index(a, a_end, &xa) ||
	    !vbr_flow_isect_index(b, b_end, &xb))
		return true;
	for (in = 0; in < 2; in++) {
		if (xa.l3[in] != 0 && xb.l3[in] != 0 && xa.l3[in] != xb.l3[in])
			return false;
		if (xa.l4[in] != 0 && xb.l4[in] != 0 && xa.l4[in] != xb.l4[in])
			return false;
	}
	for (t = 0; t < xa.nb; t++) {
		const uint8_t *sa = xa.spec[t], *sb;

		for (u = 0; u < xb.nb && xb.type[u] != xa.type[t]; u++)
			;
		if (u == xb.nb ||
		    !vbr_flow_spec_filter(xa.type[t], &off, &len))
			continue;
		sb = xb.spec[u];
		for (i = 0; i < len; i++)
			if ((sa[off + i] ^ sb[off + i]) & sa[off + len + i] &
			    sb[off + len + i])
				return false;
	}
	return true;
}

/*
 * Dump.
 */
static void
vbr_flow_dump_bytes(FILE *f, const char *name, const void *val,
		    const void *mask, size_t n)
{
	const uint8_t *v = val, *m = mask;
	size_t i;

	for (i = 0; i < n; i++)
		if (m[i] != 0)
			break;
	if (i == n)
		return;
	fprintf(f, " %s ", name);
	for (i = 0; i < n; i++)
		fprintf(f, "%02x", v[i]);
	fprintf(f, "/");
	for (i = 0; i < n; i++)
		fprintf(f, "%02x", m[i]);
}

#define DUMP(f, n, s, fld) \
	vbr_flow_dump_bytes(f, n, &(s)->val.fld, &(s)->mask.fld, \
			    sizeof((s)->val.fld))

static const char *
vbr_flow_attr_type_name(enum ibv_flow_attr_type type)
{
	switch (type) {
	case IBV_FLOW_ATTR_NORMAL: return "NORMAL";
	case IBV_FLOW_ATTR_ALL_DEFAULT: return "ALL_DEFAULT";
	case IBV_FLOW_ATTR_MC_DEFAULT: return "MC_DEFAULT";
	case IBV_FLOW_ATTR_SNIFFER: return "SNIFFER";
	default: return "?";
	}
}

/** Print a verbs attr and its specs, one spec a line (values/masks hex). */
void
vbr_flow_dump_attr(FILE *f, const struct ibv_flow_attr *attr)
{
	const uint8_t *pos = (const uint8_t *)(attr + 1);
	const uint8_t *end = (const uint8_t *)attr + attr->size;
	unsigned int i;

	fprintf(f, "  verbs attr: type %s priority %u num_of_specs %u size %u "
		"port %u flags 0x%x\n", vbr_flow_attr_type_name(attr->type),
		attr->priority, attr->num_of_specs, attr->size, attr->port,
		attr->flags);
	for (i = 0; i < attr->num_of_specs; i++) {
		struct ibv_flow_spec spec;
		const struct ibv_flow_spec *s = &spec;
		uint32_t type;
		size_t size;

		/* packed specs: read through an aligned copy */
		if (pos + sizeof(spec.hdr) > end) {
			fprintf(f, "    (truncated)\n");
			return;
		}
		memcpy(&spec.hdr, pos, sizeof(spec.hdr));
		size = spec.hdr.size;
		if (size == 0 || pos + size > end || size > sizeof(spec)) {
			fprintf(f, "    (truncated)\n");
			return;
		}
		memset(&spec, 0, sizeof(spec));
		memcpy(&spec, pos, size);
		type = s->hdr.type & ~(uint32_t)IBV_FLOW_SPEC_INNER;
		fprintf(f, "    spec 0x%x size %u%s:", (unsigned int)s->hdr.type,
			s->hdr.size,
			(s->hdr.type & IBV_FLOW_SPEC_INNER) ? " inner" : "");
		switch (type) {
		case IBV_FLOW_SPEC_ETH:
			fprintf(f, " eth");
			DUMP(f, "dst", &s->eth, dst_mac);
			DUMP(f, "src", &s->eth, src_mac);
			DUMP(f, "ether_type", &s->eth, ether_type);
			DUMP(f, "vlan_tag", &s->eth, vlan_tag);
			break;
		case IBV_FLOW_SPEC_IPV4_EXT:
			fprintf(f, " ipv4_ext");
			DUMP(f, "src", &s->ipv4_ext, src_ip);
			DUMP(f, "dst", &s->ipv4_ext, dst_ip);
			DUMP(f, "proto", &s->ipv4_ext, proto);
			DUMP(f, "tos", &s->ipv4_ext, tos);
			DUMP(f, "ttl", &s->ipv4_ext, ttl);
			DUMP(f, "flags", &s->ipv4_ext, flags);
			break;
		case IBV_FLOW_SPEC_IPV6:
			fprintf(f, " ipv6");
			DUMP(f, "src", &s->ipv6, src_ip);
			DUMP(f, "dst", &s->ipv6, dst_ip);
			DUMP(f, "flow_label", &s->ipv6, flow_label);
			DUMP(f, "next_hdr", &s->ipv6, next_hdr);
			DUMP(f, "traffic_class", &s->ipv6, traffic_class);
			DUMP(f, "hop_limit", &s->ipv6, hop_limit);
			break;
		case IBV_FLOW_SPEC_TCP:
		case IBV_FLOW_SPEC_UDP:
			fprintf(f, " %s", type == IBV_FLOW_SPEC_TCP ?
				"tcp" : "udp");
			DUMP(f, "src_port", &s->tcp_udp, src_port);
			DUMP(f, "dst_port", &s->tcp_udp, dst_port);
			break;
		case IBV_FLOW_SPEC_VXLAN_TUNNEL:
			fprintf(f, " vxlan");
			DUMP(f, "tunnel_id", &s->tunnel, tunnel_id);
			break;
		case IBV_FLOW_SPEC_GRE:
			fprintf(f, " gre");
			DUMP(f, "c_ks_res0_ver", &s->gre, c_ks_res0_ver);
			DUMP(f, "protocol", &s->gre, protocol);
			DUMP(f, "key", &s->gre, key);
			break;
		case IBV_FLOW_SPEC_MPLS:
			fprintf(f, " mpls");
			DUMP(f, "label", &s->mpls, label);
			break;
		case IBV_FLOW_SPEC_ESP:
			fprintf(f, " esp");
			DUMP(f, "spi", &s->esp, spi);
			DUMP(f, "seq", &s->esp, seq);
			break;
		case IBV_FLOW_SPEC_ACTION_TAG:
			fprintf(f, " action tag %u", s->flow_tag.tag_id);
			break;
		case IBV_FLOW_SPEC_ACTION_DROP:
			fprintf(f, " action drop");
			break;
		case IBV_FLOW_SPEC_ACTION_COUNT:
			fprintf(f, " action count%s", s->flow_count.counters ==
				NULL ? " (counters not set)" : "");
			break;
		default:
			fprintf(f, " ?");
			break;
		}
		fprintf(f, "\n");
		pos += size;
	}
}
