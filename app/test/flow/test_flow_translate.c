/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Table-driven tests of the rte_flow to verbs translation (vbr_flow.c, built
 * into this program; no device, no EAL): for each accepted rule the exact
 * verbs attr bytes and the fate, for each rejected rule the error type and a
 * substring of the message. Both the validate pass (no output) and the fill
 * pass are checked.
 */

#include <stdlib.h>

#include <rte_byteorder.h>
#include <rte_flow.h>

#include "test.h"
#include "vbr_flow.h"
#include "vbr_rxtx.h"

/* A pattern or action list, END added. */
#define P(...) ((const struct rte_flow_item []){ __VA_ARGS__, \
	{ .type = RTE_FLOW_ITEM_TYPE_END } })
#define A(...) ((const struct rte_flow_action []){ __VA_ARGS__, \
	{ .type = RTE_FLOW_ACTION_TYPE_END } })
#define I(t, s, m) { .type = RTE_FLOW_ITEM_TYPE_ ## t, .spec = s, .mask = m }
#define IL(t, s, l, m) { .type = RTE_FLOW_ITEM_TYPE_ ## t, .spec = s, \
	.last = l, .mask = m }
#define ACT(t, c) { .type = RTE_FLOW_ACTION_TYPE_ ## t, .conf = c }
#define C(st, ...) (&(const st){ __VA_ARGS__ })

/* An expected verbs spec. */
struct exp_spec {
	const void *p;
	size_t n;
};
#define S(st, ...) { &(const st){ __VA_ARGS__ }, sizeof(st) }
#define SPEC(st, t, ...) S(st, .type = t, .size = sizeof(st), __VA_ARGS__)
#define SPECS(...) ((const struct exp_spec []){ __VA_ARGS__, { NULL, 0 } })

#define ING .attr = { .ingress = 1 }
#define Q(n) C(struct rte_flow_action_queue, .index = n)

static const uint8_t key40[40] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };

struct ok_case {
	const char *name;
	struct rte_flow_attr attr;
	const struct rte_flow_item *pattern;
	const struct rte_flow_action *actions;
	uint16_t nb_rx_queues;
	unsigned int internal;
	uint16_t prio;			/* verbs priority */
	const struct exp_spec *specs;
	enum vbr_flow_fate fate;
	uint16_t nb_queues;
	uint16_t queues[8];
	uint64_t fields;
	uint64_t rx_act;		/* the tag's Rx action table entry */
	unsigned int has_key;
	uint8_t comp;			/* VBR_FLOW_COMP_* */
	uint32_t no_fields;		/* VBR_FLOW_F_* the device refuses */
	uint8_t sw_frag;		/* condition kept in software */
};

#define UDP_FIELDS (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | \
		    IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP)
#define IP_FIELDS (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | \
		   IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6)
#define ETH struct ibv_flow_spec_eth
#define IP4 struct ibv_flow_spec_ipv4_ext
#define IP6 struct ibv_flow_spec_ipv6
#define L4 struct ibv_flow_spec_tcp_udp
#define TUN struct ibv_flow_spec_tunnel
#define INNER(t) ((enum ibv_flow_spec_type)((t) | IBV_FLOW_SPEC_INNER))
#define MAC1 { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 }
#define MACFF { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }

/* What OVS 3.1's netdev-offload-dpdk emits for partial offload. */
#define MAC2 { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 }
static const struct rte_flow_item_eth ovs_eth_untagged = {
	.src.addr_bytes = MAC1, .dst.addr_bytes = MAC2,
	.type = RTE_BE16(0x0800), .has_vlan = 0,
};
static const struct rte_flow_item_eth ovs_eth_m = {
	.src.addr_bytes = MACFF, .dst.addr_bytes = MACFF,
	.type = RTE_BE16(0xffff), .has_vlan = 1,
};
static const struct rte_flow_item_eth ovs_eth_tagged = {
	.src.addr_bytes = MAC1, .dst.addr_bytes = MAC2,
	.type = RTE_BE16(0x8100), .has_vlan = 1,
};
static const struct rte_flow_item_eth ovs_eth6_untagged = {
	.src.addr_bytes = MAC1, .dst.addr_bytes = MAC2,
	.type = RTE_BE16(0x86dd), .has_vlan = 0,
};
static const struct rte_flow_item_eth ovs_arp_untagged = {
	.src.addr_bytes = MAC1, .dst.addr_bytes = MAC2,
	.type = RTE_BE16(0x0806), .has_vlan = 0,
};
/* OVS: tci & ~CFI under mask & ~CFI; inner_type is the megaflow's. */
static const struct rte_flow_item_vlan ovs_vlan100 = {
	.tci = RTE_BE16(100), .inner_type = RTE_BE16(0x0800),
};
static const struct rte_flow_item_vlan ovs_vlan_m = {
	.tci = RTE_BE16(0xefff), .inner_type = RTE_BE16(0xffff),
};
static const struct rte_flow_item_ipv4 ovs_nofrag = {
	.hdr.next_proto_id = 17,
};
static const struct rte_flow_item_ipv4 ovs_fragm = {
	.hdr.next_proto_id = 0xff, .hdr.fragment_offset = RTE_BE16(0x3fff),
};
static const struct rte_flow_item_ipv4 ovs_first = {
	.hdr.next_proto_id = 17, .hdr.fragment_offset = RTE_BE16(0x2000),
};
static const struct rte_flow_item_ipv6 ovs_v6_nofrag = {
	.has_frag_ext = 0,
};
static const struct rte_flow_item_ipv6 ovs_v6_fragm = {
	.has_frag_ext = 1,
};
static const struct rte_flow_item_ipv6 ovs_v6_udp_m = {
	.hdr.proto = 0xff, .has_frag_ext = 1,
};
static const struct rte_flow_item_ipv6 ovs_v6_udp = {
	.hdr.proto = 17,
};
/* OVS: mark, then RSS over every Rx queue, types ip udp tcp, no key. */
#define OVS_ACTIONS(n) A(ACT(MARK, C(struct rte_flow_action_mark, \
				      .id = (n))), \
			  ACT(RSS, C(struct rte_flow_action_rss, \
				     .types = RTE_ETH_RSS_IP | \
					      RTE_ETH_RSS_UDP | \
					      RTE_ETH_RSS_TCP, \
				     .queue_num = 2, \
				     .queue = (const uint16_t []){ 0, 1 })))
#define OVS_FIELDS (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | \
		    IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6 | \
		    IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP | \
		    IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP)
#define OVS_ETH_SPEC(t, ...) SPEC(ETH, IBV_FLOW_SPEC_ETH, \
	.val.src_mac = MAC1, .mask.src_mac = MACFF, \
	.val.dst_mac = MAC2, .mask.dst_mac = MACFF, \
	.val.ether_type = RTE_BE16(t), .mask.ether_type = RTE_BE16(0xffff), \
	__VA_ARGS__)
#define TAG_SPEC SPEC(struct ibv_flow_spec_action_tag, \
		      IBV_FLOW_SPEC_ACTION_TAG, .tag_id = 0)

static const struct ok_case ok_cases[] = {
{
	.name = "ovs: eth has_vlan 0 / ipv4 not a fragment / udp -> mark, rss",
	ING,
	.pattern = P(I(ETH, &ovs_eth_untagged, &ovs_eth_m),
		     I(IPV4, &ovs_nofrag, &ovs_fragm), I(UDP, NULL, NULL)),
	.actions = OVS_ACTIONS(1),
	.nb_rx_queues = 2,
	.specs = SPECS(OVS_ETH_SPEC(0x0800, .val.vlan_tag = 0),
		       SPEC(IP4, IBV_FLOW_SPEC_IPV4_EXT, .val.proto = 17,
			    .mask.proto = 0xff, .val.flags = 0,
			    .mask.flags = 0xc),
		       SPEC(L4, IBV_FLOW_SPEC_UDP, .val.dst_port = 0),
		       TAG_SPEC),
	.fate = VBR_FLOW_FATE_RSS, .nb_queues = 2, .queues = { 0, 1 },
	.fields = OVS_FIELDS, .rx_act = VBR_RX_ACT_MARK | 1,
	.comp = VBR_FLOW_COMP_TAGGED,
},
{
	/* No fragment match on the device: the condition goes to the Rx
	 * burst (MF and offset under the mask, both 0), in the tag's entry.
	 */
	.name = "ovs on a ConnectX: ipv4 not a fragment / udp: in software",
	ING,
	.pattern = P(I(ETH, &ovs_eth_untagged, &ovs_eth_m),
		     I(IPV4, &ovs_nofrag, &ovs_fragm), I(UDP, NULL, NULL)),
	.actions = OVS_ACTIONS(1),
	.nb_rx_queues = 2,
	.specs = SPECS(OVS_ETH_SPEC(0x0800, .val.vlan_tag = 0),
		       SPEC(IP4, IBV_FLOW_SPEC_IPV4_EXT, .val.proto = 17,
			    .mask.proto = 0xff),
		       SPEC(L4, IBV_FLOW_SPEC_UDP, .val.dst_port = 0),
		       TAG_SPEC),
	.fate = VBR_FLOW_FATE_RSS, .nb_queues = 2, .queues = { 0, 1 },
	.fields = OVS_FIELDS,
	.rx_act = VBR_RX_ACT_MARK | 1 | VBR_RX_ACT_FRAG |
		  (uint64_t)(VBR_RX_FRAG_V4 | VBR_RX_FRAG_MF | VBR_RX_FRAG_OFF)
		  << VBR_RX_ACT_FRAG_SHIFT,
	.comp = VBR_FLOW_COMP_TAGGED,
	.no_fields = VBR_FLOW_F_FRAG,
	.sw_frag = VBR_RX_FRAG_V4 | VBR_RX_FRAG_MF | VBR_RX_FRAG_OFF,
},
{
	.name = "ovs on a ConnectX: ipv4 first fragment: in software",
	ING,
	.pattern = P(I(ETH, &ovs_eth_untagged, &ovs_eth_m),
		     I(IPV4, &ovs_first, &ovs_fragm)),
	.actions = A(ACT(FLAG, NULL), ACT(QUEUE, Q(0))),
	.nb_rx_queues = 2,
	.specs = SPECS(OVS_ETH_SPEC(0x0800, .val.vlan_tag = 0),
		       SPEC(IP4, IBV_FLOW_SPEC_IPV4_EXT, .val.proto = 17,
			    .mask.proto = 0xff),
		       TAG_SPEC),
	.fate = VBR_FLOW_FATE_QUEUE, .nb_queues = 1, .queues = { 0 },
	.rx_act = VBR_RX_ACT_FLAG | VBR_RX_ACT_FRAG |
		  (uint64_t)(VBR_RX_FRAG_V4 | VBR_RX_FRAG_MF | VBR_RX_FRAG_OFF |
			     VBR_RX_FRAG_MF << VBR_RX_FRAG_VAL_SHIFT)
		  << VBR_RX_ACT_FRAG_SHIFT,
	.comp = VBR_FLOW_COMP_TAGGED,
	.no_fields = VBR_FLOW_F_FRAG,
	.sw_frag = VBR_RX_FRAG_V4 | VBR_RX_FRAG_MF | VBR_RX_FRAG_OFF |
		   VBR_RX_FRAG_MF << VBR_RX_FRAG_VAL_SHIFT,
},
{
	/* No companions for the extension headers: the Rx burst walks them. */
	.name = "ovs on a ConnectX: ipv6 has_frag_ext 0: in software",
	ING,
	.pattern = P(I(IPV6, &ovs_v6_nofrag, &ovs_v6_fragm)),
	.actions = OVS_ACTIONS(7),
	.nb_rx_queues = 2,
	.specs = SPECS(SPEC(IP6, IBV_FLOW_SPEC_IPV6, .val.next_hdr = 0),
		       TAG_SPEC),
	.fate = VBR_FLOW_FATE_RSS, .nb_queues = 2, .queues = { 0, 1 },
	.fields = OVS_FIELDS,
	.rx_act = VBR_RX_ACT_MARK | 7 | VBR_RX_ACT_FRAG |
		  (uint64_t)VBR_RX_FRAG_V6 << VBR_RX_ACT_FRAG_SHIFT,
	.no_fields = VBR_FLOW_F_FRAG,
	.sw_frag = VBR_RX_FRAG_V6,
},
{
	.name = "ovs: ipv4 first fragment (MF 1, offset 0)",
	ING,
	.pattern = P(I(ETH, &ovs_eth_untagged, &ovs_eth_m),
		     I(IPV4, &ovs_first, &ovs_fragm)),
	.actions = OVS_ACTIONS(2),
	.nb_rx_queues = 2,
	.specs = SPECS(OVS_ETH_SPEC(0x0800, .val.vlan_tag = 0),
		       SPEC(IP4, IBV_FLOW_SPEC_IPV4_EXT, .val.proto = 17,
			    .mask.proto = 0xff, .val.flags = 0x4,
			    .mask.flags = 0xc),
		       TAG_SPEC),
	.fate = VBR_FLOW_FATE_RSS, .nb_queues = 2, .queues = { 0, 1 },
	.fields = OVS_FIELDS, .rx_act = VBR_RX_ACT_MARK | 2,
	.comp = VBR_FLOW_COMP_TAGGED,
},
{
	.name = "ovs-style later fragment (offset 1 to 0x1fff), no eth",
	ING,
	.pattern = P(IL(IPV4, C(struct rte_flow_item_ipv4,
				.hdr.fragment_offset = RTE_BE16(1)),
			C(struct rte_flow_item_ipv4,
			  .hdr.fragment_offset = RTE_BE16(0x1fff)),
			C(struct rte_flow_item_ipv4,
			  .hdr.fragment_offset = RTE_BE16(0x1fff)))),
	.actions = OVS_ACTIONS(3),
	.nb_rx_queues = 2,
	.prio = 0,
	.specs = SPECS(SPEC(IP4, IBV_FLOW_SPEC_IPV4_EXT, .val.flags = 0x8,
			    .mask.flags = 0x8),
		       TAG_SPEC),
	.fate = VBR_FLOW_FATE_RSS, .nb_queues = 2, .queues = { 0, 1 },
	.fields = OVS_FIELDS, .rx_act = VBR_RX_ACT_MARK | 3,
},
{
	.name = "ovs: eth 0x8100 has_vlan 1 / vlan 100 / ipv4 proto 17",
	ING,
	.pattern = P(I(ETH, &ovs_eth_tagged, &ovs_eth_m),
		     I(VLAN, &ovs_vlan100, &ovs_vlan_m),
		     I(IPV4, &ovs_nofrag, &ovs_fragm)),
	.actions = OVS_ACTIONS(4),
	.nb_rx_queues = 2,
	.specs = SPECS(SPEC(ETH, IBV_FLOW_SPEC_ETH,
			    .val.src_mac = MAC1, .mask.src_mac = MACFF,
			    .val.dst_mac = MAC2, .mask.dst_mac = MACFF,
			    .val.vlan_tag = RTE_BE16(100),
			    .mask.vlan_tag = RTE_BE16(0xefff),
			    .val.ether_type = RTE_BE16(0x0800),
			    .mask.ether_type = RTE_BE16(0xffff)),
		       SPEC(IP4, IBV_FLOW_SPEC_IPV4_EXT, .val.proto = 17,
			    .mask.proto = 0xff, .val.flags = 0,
			    .mask.flags = 0xc),
		       TAG_SPEC),
	.fate = VBR_FLOW_FATE_RSS, .nb_queues = 2, .queues = { 0, 1 },
	.fields = OVS_FIELDS, .rx_act = VBR_RX_ACT_MARK | 4,
},
{
	.name = "ovs: eth has_vlan 0 / ipv6 has_frag_ext 0 (any next header)",
	ING,
	.pattern = P(I(ETH, &ovs_eth6_untagged, &ovs_eth_m),
		     I(IPV6, &ovs_v6_nofrag, &ovs_v6_fragm)),
	.actions = OVS_ACTIONS(5),
	.nb_rx_queues = 2,
	.specs = SPECS(OVS_ETH_SPEC(0x86dd, .val.vlan_tag = 0),
		       SPEC(IP6, IBV_FLOW_SPEC_IPV6, .val.next_hdr = 0),
		       TAG_SPEC),
	.fate = VBR_FLOW_FATE_RSS, .nb_queues = 2, .queues = { 0, 1 },
	.fields = OVS_FIELDS, .rx_act = VBR_RX_ACT_MARK | 5,
	.comp = VBR_FLOW_COMP_TAGGED | VBR_FLOW_COMP_V6_EXT,
},
{
	.name = "ovs: ipv6 udp has_frag_ext 0: exact without companions",
	ING,
	.pattern = P(I(IPV6, &ovs_v6_udp, &ovs_v6_udp_m), I(UDP, NULL, NULL)),
	.actions = OVS_ACTIONS(6),
	.nb_rx_queues = 2,
	.specs = SPECS(SPEC(IP6, IBV_FLOW_SPEC_IPV6, .val.next_hdr = 17,
			    .mask.next_hdr = 0xff),
		       SPEC(L4, IBV_FLOW_SPEC_UDP, .val.dst_port = 0),
		       TAG_SPEC),
	.fate = VBR_FLOW_FATE_RSS, .nb_queues = 2, .queues = { 0, 1 },
	.fields = OVS_FIELDS, .rx_act = VBR_RX_ACT_MARK | 6,
},
{
	.name = "ovs: eth arp has_vlan 0 -> mark, rss",
	ING,
	.pattern = P(I(ETH, &ovs_arp_untagged, &ovs_eth_m)),
	.actions = OVS_ACTIONS(7),
	.nb_rx_queues = 2,
	.specs = SPECS(OVS_ETH_SPEC(0x0806, .val.vlan_tag = 0), TAG_SPEC),
	.fate = VBR_FLOW_FATE_RSS, .nb_queues = 2, .queues = { 0, 1 },
	.fields = OVS_FIELDS, .rx_act = VBR_RX_ACT_MARK | 7,
	.comp = VBR_FLOW_COMP_TAGGED,
},
{
	.name = "ipv4 / icmp -> IP protocol 1",
	ING,
	.pattern = P(I(ETH, NULL, NULL), I(IPV4, NULL, NULL),
		     I(ICMP, NULL, NULL)),
	.actions = A(ACT(QUEUE, Q(0))),
	.specs = SPECS(SPEC(ETH, IBV_FLOW_SPEC_ETH, .val.vlan_tag = 0),
		       SPEC(IP4, IBV_FLOW_SPEC_IPV4_EXT, .val.proto = 1,
			    .mask.proto = 0xff)),
	.fate = VBR_FLOW_FATE_QUEUE, .nb_queues = 1,
},
{
	.name = "ipv6 / sctp -> next header 132",
	ING,
	.pattern = P(I(IPV6, NULL, NULL), I(SCTP, NULL, NULL)),
	.actions = A(ACT(QUEUE, Q(0))),
	.specs = SPECS(SPEC(IP6, IBV_FLOW_SPEC_IPV6, .val.next_hdr = 132,
			    .mask.next_hdr = 0xff)),
	.fate = VBR_FLOW_FATE_QUEUE, .nb_queues = 1,
},
{
	.name = "rss with no queue list: every Rx queue",
	ING,
	.pattern = P(I(ETH, NULL, NULL)),
	.actions = A(ACT(RSS, C(struct rte_flow_action_rss, .queue_num = 0))),
	.nb_rx_queues = 3,
	.specs = SPECS(SPEC(ETH, IBV_FLOW_SPEC_ETH, .val.vlan_tag = 0)),
	.fate = VBR_FLOW_FATE_RSS, .nb_queues = 3, .queues = { 0, 1, 2 },
	.fields = IP_FIELDS,
},
{
	.name = "eth type -> drop",
	ING,
	.pattern = P(I(ETH, C(struct rte_flow_item_eth,
			      .type = RTE_BE16(0x88f7)),
		       C(struct rte_flow_item_eth, .type = RTE_BE16(0xffff)))),
	.actions = A(ACT(DROP, NULL)),
	.specs = SPECS(SPEC(ETH, IBV_FLOW_SPEC_ETH,
			    .val.ether_type = RTE_BE16(0x88f7),
			    .mask.ether_type = RTE_BE16(0xffff)),
		       SPEC(struct ibv_flow_spec_action_drop,
			    IBV_FLOW_SPEC_ACTION_DROP)),
	.fate = VBR_FLOW_FATE_DROP,
},
{
	.name = "eth dst -> queue 1",
	ING,
	.pattern = P(I(ETH, C(struct rte_flow_item_eth, .dst.addr_bytes = MAC1),
		       C(struct rte_flow_item_eth, .dst.addr_bytes = MACFF))),
	.actions = A(ACT(QUEUE, Q(1))),
	.nb_rx_queues = 4,
	.specs = SPECS(SPEC(ETH, IBV_FLOW_SPEC_ETH, .val.dst_mac = MAC1,
			    .mask.dst_mac = MACFF)),
	.fate = VBR_FLOW_FATE_QUEUE, .nb_queues = 1, .queues = { 1 },
},
{
	.name = "priority 1 eth / ipv6 / tcp dst 443 -> queue 2",
	.attr = { .ingress = 1, .priority = 1 },
	.pattern = P(I(ETH, NULL, NULL), I(IPV6, NULL, NULL),
		     I(TCP, C(struct rte_flow_item_tcp,
			      .hdr.dst_port = RTE_BE16(443)),
		       C(struct rte_flow_item_tcp,
			 .hdr.dst_port = RTE_BE16(0xffff)))),
	.actions = A(ACT(QUEUE, Q(2))),
	.prio = 1,
	.specs = SPECS(SPEC(ETH, IBV_FLOW_SPEC_ETH, .val.vlan_tag = 0),
		       SPEC(IP6, IBV_FLOW_SPEC_IPV6, .val.next_hdr = 0),
		       SPEC(L4, IBV_FLOW_SPEC_TCP,
			    .val.dst_port = RTE_BE16(443),
			    .mask.dst_port = RTE_BE16(0xffff))),
	.fate = VBR_FLOW_FATE_QUEUE, .nb_queues = 1, .queues = { 2 },
},
{
	.name = "vxlan, inner eth/ipv4 -> rss 0-3 ipv4-udp, mark 7",
	ING,
	.pattern = P(I(ETH, NULL, NULL),
		     I(IPV4, C(struct rte_flow_item_ipv4,
			       .hdr.dst_addr = RTE_BE32(0x0a000002)),
		       C(struct rte_flow_item_ipv4,
			 .hdr.dst_addr = RTE_BE32(0xffffffff))),
		     I(UDP, C(struct rte_flow_item_udp,
			      .hdr.dst_port = RTE_BE16(4789)),
		       C(struct rte_flow_item_udp,
			 .hdr.dst_port = RTE_BE16(0xffff))),
		     I(VXLAN, C(struct rte_flow_item_vxlan,
				.vni = { 0, 0, 42 }), NULL),
		     I(ETH, NULL, NULL), I(IPV4, NULL, NULL)),
	.actions = A(ACT(RSS, C(struct rte_flow_action_rss,
				.types = RTE_ETH_RSS_NONFRAG_IPV4_UDP,
				.queue_num = 4,
				.queue = (const uint16_t []){ 0, 1, 2, 3 })),
		     ACT(MARK, C(struct rte_flow_action_mark, .id = 7))),
	.nb_rx_queues = 4,
	.specs = SPECS(SPEC(ETH, IBV_FLOW_SPEC_ETH, .val.vlan_tag = 0),
		       SPEC(IP4, IBV_FLOW_SPEC_IPV4_EXT,
			    .val.dst_ip = RTE_BE32(0x0a000002),
			    .mask.dst_ip = RTE_BE32(0xffffffff)),
		       SPEC(L4, IBV_FLOW_SPEC_UDP,
			    .val.dst_port = RTE_BE16(4789),
			    .mask.dst_port = RTE_BE16(0xffff)),
		       SPEC(TUN, IBV_FLOW_SPEC_VXLAN_TUNNEL,
			    .val.tunnel_id = RTE_BE32(42),
			    .mask.tunnel_id = RTE_BE32(0xffffff)),
		       SPEC(ETH, INNER(IBV_FLOW_SPEC_ETH), .val.vlan_tag = 0),
		       SPEC(IP4, INNER(IBV_FLOW_SPEC_IPV4_EXT), .val.tos = 0),
		       SPEC(struct ibv_flow_spec_action_tag,
			    IBV_FLOW_SPEC_ACTION_TAG, .tag_id = 0)),
	.fate = VBR_FLOW_FATE_RSS, .nb_queues = 4, .queues = { 0, 1, 2, 3 },
	.fields = UDP_FIELDS, .rx_act = VBR_RX_ACT_MARK | 7,
},
{
	.name = "eth / vlan tci 10 inner_type ipv4 -> queue 0",
	ING,
	.pattern = P(I(ETH, NULL, NULL),
		     I(VLAN, C(struct rte_flow_item_vlan, .tci = RTE_BE16(10),
			       .inner_type = RTE_BE16(0x0800)),
		       C(struct rte_flow_item_vlan, .tci = RTE_BE16(0x0fff),
			 .inner_type = RTE_BE16(0xffff)))),
	.actions = A(ACT(QUEUE, Q(0))),
	.specs = SPECS(SPEC(ETH, IBV_FLOW_SPEC_ETH,
			    .val.vlan_tag = RTE_BE16(10),
			    .mask.vlan_tag = RTE_BE16(0x0fff),
			    .val.ether_type = RTE_BE16(0x0800),
			    .mask.ether_type = RTE_BE16(0xffff))),
	.fate = VBR_FLOW_FATE_QUEUE, .nb_queues = 1,
},
{
	.name = "ipv6 traffic class, flow label, hop limit",
	ING,
	.pattern = P(I(IPV6, C(struct rte_flow_item_ipv6,
			       .hdr.vtc_flow = RTE_BE32(0x612abcde),
			       .hdr.hop_limits = 64, .hdr.proto = 17),
		       C(struct rte_flow_item_ipv6,
			 .hdr.vtc_flow = RTE_BE32(0x0fffffff),
			 .hdr.hop_limits = 0xff, .hdr.proto = 0xff))),
	.actions = A(ACT(DROP, NULL)),
	.specs = SPECS(SPEC(IP6, IBV_FLOW_SPEC_IPV6,
			    .val.traffic_class = 0x12,
			    .mask.traffic_class = 0xff,
			    .val.flow_label = RTE_BE32(0xabcde),
			    .mask.flow_label = RTE_BE32(0xfffff),
			    .val.hop_limit = 64, .mask.hop_limit = 0xff,
			    .val.next_hdr = 17, .mask.next_hdr = 0xff),
		       SPEC(struct ibv_flow_spec_action_drop,
			    IBV_FLOW_SPEC_ACTION_DROP)),
	.fate = VBR_FLOW_FATE_DROP,
},
{
	.name = "ipv4 partial mask src 10/8, tos, ttl -> queue",
	ING,
	.pattern = P(I(ETH, NULL, NULL),
		     I(IPV4, C(struct rte_flow_item_ipv4,
			       .hdr.src_addr = RTE_BE32(0x0a010203),
			       .hdr.type_of_service = 0x2e,
			       .hdr.time_to_live = 9),
		       C(struct rte_flow_item_ipv4,
			 .hdr.src_addr = RTE_BE32(0xff000000),
			 .hdr.type_of_service = 0xfc,
			 .hdr.time_to_live = 0xff))),
	.actions = A(ACT(QUEUE, Q(0))),
	.specs = SPECS(SPEC(ETH, IBV_FLOW_SPEC_ETH, .val.vlan_tag = 0),
		       SPEC(IP4, IBV_FLOW_SPEC_IPV4_EXT,
			    .val.src_ip = RTE_BE32(0x0a000000),
			    .mask.src_ip = RTE_BE32(0xff000000),
			    .val.tos = 0x2c, .mask.tos = 0xfc,
			    .val.ttl = 9, .mask.ttl = 0xff)),
	.fate = VBR_FLOW_FATE_QUEUE, .nb_queues = 1,
},
{
	.name = "gre K bit, protocol, inner ipv4",
	ING,
	.pattern = P(I(ETH, NULL, NULL), I(IPV4, NULL, NULL),
		     I(GRE, C(struct rte_flow_item_gre,
			      .c_rsvd0_ver = RTE_BE16(0x2000),
			      .protocol = RTE_BE16(0x0800)),
		       C(struct rte_flow_item_gre,
			 .c_rsvd0_ver = RTE_BE16(0xb000),
			 .protocol = RTE_BE16(0xffff))),
		     I(IPV4, NULL, NULL)),
	.actions = A(ACT(QUEUE, Q(0))),
	.specs = SPECS(SPEC(ETH, IBV_FLOW_SPEC_ETH, .val.vlan_tag = 0),
		       SPEC(IP4, IBV_FLOW_SPEC_IPV4_EXT, .val.tos = 0),
		       SPEC(struct ibv_flow_spec_gre, IBV_FLOW_SPEC_GRE,
			    .val.c_ks_res0_ver = RTE_BE16(0x2000),
			    .mask.c_ks_res0_ver = RTE_BE16(0xb000),
			    .val.protocol = RTE_BE16(0x0800),
			    .mask.protocol = RTE_BE16(0xffff)),
		       SPEC(IP4, INNER(IBV_FLOW_SPEC_IPV4_EXT), .val.tos = 0)),
	.fate = VBR_FLOW_FATE_QUEUE, .nb_queues = 1,
},
{
	.name = "udp / mpls label (default mask) / inner ipv4",
	ING,
	.pattern = P(I(ETH, NULL, NULL), I(IPV4, NULL, NULL),
		     I(UDP, C(struct rte_flow_item_udp,
			      .hdr.dst_port = RTE_BE16(6635)),
		       C(struct rte_flow_item_udp,
			 .hdr.dst_port = RTE_BE16(0xffff))),
		     I(MPLS, C(struct rte_flow_item_mpls,
			       .label_tc_s = { 0x00, 0x01, 0x31 }), NULL),
		     I(IPV4, NULL, NULL)),
	.actions = A(ACT(QUEUE, Q(0))),
	.specs = SPECS(SPEC(ETH, IBV_FLOW_SPEC_ETH, .val.vlan_tag = 0),
		       SPEC(IP4, IBV_FLOW_SPEC_IPV4_EXT, .val.tos = 0),
		       SPEC(L4, IBV_FLOW_SPEC_UDP,
			    .val.dst_port = RTE_BE16(6635),
			    .mask.dst_port = RTE_BE16(0xffff)),
		       SPEC(struct ibv_flow_spec_mpls, IBV_FLOW_SPEC_MPLS,
			    .val.label = RTE_BE32(0x00013000),
			    .mask.label = RTE_BE32(0xfffff000)),
		       SPEC(IP4, INNER(IBV_FLOW_SPEC_IPV4_EXT), .val.tos = 0)),
	.fate = VBR_FLOW_FATE_QUEUE, .nb_queues = 1,
},
{
	.name = "esp spi -> drop",
	ING,
	.pattern = P(I(ETH, NULL, NULL), I(IPV4, NULL, NULL),
		     I(ESP, C(struct rte_flow_item_esp,
			      .hdr.spi = RTE_BE32(0x1000)), NULL)),
	.actions = A(ACT(DROP, NULL)),
	.specs = SPECS(SPEC(ETH, IBV_FLOW_SPEC_ETH, .val.vlan_tag = 0),
		       SPEC(IP4, IBV_FLOW_SPEC_IPV4_EXT, .val.tos = 0),
		       SPEC(struct ibv_flow_spec_esp, IBV_FLOW_SPEC_ESP,
			    .val.spi = RTE_BE32(0x1000),
			    .mask.spi = RTE_BE32(0xffffffff)),
		       SPEC(struct ibv_flow_spec_action_drop,
			    IBV_FLOW_SPEC_ACTION_DROP)),
	.fate = VBR_FLOW_FATE_DROP,
},
{
	.name = "flag, void, passthru, jump group 0 -> queue 3",
	ING,
	.pattern = P(I(VOID, NULL, NULL), I(ETH, NULL, NULL)),
	.actions = A(ACT(VOID, NULL), ACT(FLAG, NULL), ACT(PASSTHRU, NULL),
		     ACT(JUMP, C(struct rte_flow_action_jump, .group = 0)),
		     ACT(QUEUE, Q(3))),
	.nb_rx_queues = 4,
	.specs = SPECS(SPEC(ETH, IBV_FLOW_SPEC_ETH, .val.vlan_tag = 0),
		       SPEC(struct ibv_flow_spec_action_tag,
			    IBV_FLOW_SPEC_ACTION_TAG, .tag_id = 0)),
	.fate = VBR_FLOW_FATE_QUEUE, .nb_queues = 1, .queues = { 3 },
	.rx_act = VBR_RX_ACT_FLAG,
},
{
	.name = "rss over 3 queues 0 2 5, default types, own key",
	ING,
	.pattern = P(I(ETH, NULL, NULL)),
	.actions = A(ACT(RSS, C(struct rte_flow_action_rss,
				.func = RTE_ETH_HASH_FUNCTION_TOEPLITZ,
				.level = 1, .key_len = 40, .key = key40,
				.queue_num = 3,
				.queue = (const uint16_t []){ 0, 2, 5 }))),
	.nb_rx_queues = 6,
	.specs = SPECS(SPEC(ETH, IBV_FLOW_SPEC_ETH, .val.vlan_tag = 0)),
	.fate = VBR_FLOW_FATE_RSS, .nb_queues = 3, .queues = { 0, 2, 5 },
	.fields = IP_FIELDS, .has_key = 1,
},
{
	.name = "rss l3-src-only l4-dst-only tcp",
	ING,
	.pattern = P(I(ETH, NULL, NULL)),
	.actions = A(ACT(RSS, C(struct rte_flow_action_rss,
				.types = RTE_ETH_RSS_NONFRAG_IPV6_TCP |
					 RTE_ETH_RSS_L3_SRC_ONLY |
					 RTE_ETH_RSS_L4_DST_ONLY,
				.queue_num = 2,
				.queue = (const uint16_t []){ 1, 0 }))),
	.specs = SPECS(SPEC(ETH, IBV_FLOW_SPEC_ETH, .val.vlan_tag = 0)),
	.fate = VBR_FLOW_FATE_RSS, .nb_queues = 2, .queues = { 1, 0 },
	.fields = IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_PORT_TCP,
},
{
	.name = "internal rule: lowest priority, no fate",
	ING,
	.pattern = P(I(ETH, C(struct rte_flow_item_eth, .dst.addr_bytes = MAC1),
		       C(struct rte_flow_item_eth, .dst.addr_bytes = MACFF))),
	.actions = A(ACT(VOID, NULL)),
	.internal = 1,
	.prio = VBR_FLOW_PRIO_INTERNAL,
	.specs = SPECS(SPEC(ETH, IBV_FLOW_SPEC_ETH, .val.dst_mac = MAC1,
			    .mask.dst_mac = MACFF)),
	.fate = VBR_FLOW_FATE_NONE,
},
};

struct bad_case {
	const char *name;
	struct rte_flow_attr attr;
	const struct rte_flow_item *pattern;
	const struct rte_flow_action *actions;
	uint16_t nb_rx_queues;
	enum rte_flow_error_type type;
	const char *msg;
	uint32_t no_fields;		/* VBR_FLOW_F_* the device refuses */
};

#define ETH_ANY I(ETH, NULL, NULL)
#define QUEUE0 ACT(QUEUE, Q(0))

static const struct bad_case bad_cases[] = {
{ "egress", { .egress = 1 }, P(ETH_ANY), A(QUEUE0), 0,
	RTE_FLOW_ERROR_TYPE_ATTR_EGRESS, "egress rules are not supported" },
{ "transfer", { .ingress = 1, .transfer = 1 }, P(ETH_ANY), A(QUEUE0), 0,
	RTE_FLOW_ERROR_TYPE_ATTR_TRANSFER, "transfer rules are not supported" },
{ "no direction", { .priority = 0 }, P(ETH_ANY), A(QUEUE0), 0,
	RTE_FLOW_ERROR_TYPE_ATTR_INGRESS, "must be ingress" },
{ "group 1", { .ingress = 1, .group = 1 }, P(ETH_ANY), A(QUEUE0), 0,
	RTE_FLOW_ERROR_TYPE_ATTR_GROUP, "group 0 is the only group" },
{ "priority 16", { .ingress = 1, .priority = 16 }, P(ETH_ANY), A(QUEUE0), 0,
	RTE_FLOW_ERROR_TYPE_ATTR_PRIORITY, "priority 16: levels are 0 to 15" },
{ "no fate", { .ingress = 1 }, P(ETH_ANY),
	A(ACT(MARK, C(struct rte_flow_action_mark, .id = 1))), 0,
	RTE_FLOW_ERROR_TYPE_ACTION_NUM,
	"vbr: a fate action (queue, rss or drop) or a meter is required" },
{ "two fates", { .ingress = 1 }, P(ETH_ANY),
	A(QUEUE0, ACT(DROP, NULL)), 0, RTE_FLOW_ERROR_TYPE_ACTION,
	"drop action: the rule already has a queue action; a rule has exactly "
	"one fate" },
{ "vlan without VID", { .ingress = 1 }, P(ETH_ANY, I(VLAN, NULL, NULL)),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM, "vlan item: give a non-zero VID" },
{ "vlan VID 0 (priority tag)", { .ingress = 1 },
	P(ETH_ANY, I(VLAN, C(struct rte_flow_item_vlan, .tci = RTE_BE16(0xe000)),
	       C(struct rte_flow_item_vlan, .tci = RTE_BE16(0xefff)))),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM, "vlan item: give a non-zero VID" },
{ "eth type 0x88a8 before vlan", { .ingress = 1 },
	P(I(ETH, C(struct rte_flow_item_eth, .type = RTE_BE16(0x88a8)),
	    C(struct rte_flow_item_eth, .type = RTE_BE16(0xffff))),
	  I(VLAN, C(struct rte_flow_item_vlan, .tci = RTE_BE16(5)), NULL)),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM,
	"vlan item: the eth item before it must not match a type other than "
	"0x8100" },
{ "eth has_vlan", { .ingress = 1 },
	P(I(ETH, C(struct rte_flow_item_eth, .has_vlan = 1),
	    C(struct rte_flow_item_eth, .has_vlan = 1))),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM,
	"eth item: has_vlan 1 needs a vlan item with a VID" },
{ "ipv4 version_ihl", { .ingress = 1 },
	P(ETH_ANY, I(IPV4, C(struct rte_flow_item_ipv4, .hdr.version_ihl = 0x45),
	       C(struct rte_flow_item_ipv4, .hdr.version_ihl = 0xff))),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM_MASK,
	"ipv4 item: field version_ihl cannot be matched" },
{ "ipv6 version", { .ingress = 1 },
	P(I(IPV6, C(struct rte_flow_item_ipv6, .hdr.vtc_flow = RTE_BE32(6u << 28)),
	    C(struct rte_flow_item_ipv6, .hdr.vtc_flow = RTE_BE32(0xf0000000)))),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM_MASK,
	"ipv6 item: field vtc_flow (version) cannot be matched" },
{ "tcp flags", { .ingress = 1 },
	P(ETH_ANY, I(IPV4, NULL, NULL),
	  I(TCP, C(struct rte_flow_item_tcp, .hdr.tcp_flags = 2),
	    C(struct rte_flow_item_tcp, .hdr.tcp_flags = 0xff))),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM_MASK,
	"tcp item: field flags cannot be matched (verbs matches: src, dst)" },
{ "gre version", { .ingress = 1 },
	P(ETH_ANY, I(IPV4, NULL, NULL),
	  I(GRE, C(struct rte_flow_item_gre, .c_rsvd0_ver = RTE_BE16(1)),
	    C(struct rte_flow_item_gre, .c_rsvd0_ver = RTE_BE16(7)))),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM_MASK,
	"only the C, K and S bits may be masked" },
{ "mpls ttl", { .ingress = 1 },
	P(ETH_ANY, I(IPV4, NULL, NULL), I(UDP, NULL, NULL),
	  I(MPLS, C(struct rte_flow_item_mpls, .ttl = 3),
	    C(struct rte_flow_item_mpls, .ttl = 0xff))),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM_MASK,
	"mpls item: field ttl cannot be matched" },
{ "udp port range", { .ingress = 1 },
	P(ETH_ANY, I(IPV4, NULL, NULL),
	  IL(UDP, C(struct rte_flow_item_udp, .hdr.dst_port = RTE_BE16(1)),
	     C(struct rte_flow_item_udp, .hdr.dst_port = RTE_BE16(100)), NULL)),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM_LAST,
	"udp item: ranges (last) cannot be matched" },
{ "icmp type", { .ingress = 1 }, P(ETH_ANY, I(IPV4, NULL, NULL),
	I(ICMP, C(struct rte_flow_item_icmp, .hdr.icmp_type = 8),
	  C(struct rte_flow_item_icmp, .hdr.icmp_type = 0xff))),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM_MASK,
	"icmp item: field type cannot be matched (verbs matches: nothing" },
{ "icmp after ipv6", { .ingress = 1 }, P(ETH_ANY, I(IPV6, NULL, NULL),
					 I(ICMP, NULL, NULL)),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM, "icmp item: ICMP is IPv4's" },
{ "sctp ports", { .ingress = 1 }, P(ETH_ANY, I(IPV4, NULL, NULL),
	I(SCTP, C(struct rte_flow_item_sctp, .hdr.dst_port = RTE_BE16(9)),
	  C(struct rte_flow_item_sctp, .hdr.dst_port = RTE_BE16(0xffff)))),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM_MASK,
	"sctp item: field dst cannot be matched" },
{ "not a fragment on a ConnectX, counted", { .ingress = 1 },
	P(ETH_ANY, I(IPV4, &ovs_nofrag, &ovs_fragm)),
	A(ACT(MARK, C(struct rte_flow_action_mark, .id = 1)),
	  ACT(COUNT, NULL), QUEUE0), 0,
	RTE_FLOW_ERROR_TYPE_ITEM,
	"vbr: ipv4 item: fragment_offset: the device cannot match fragments; "
	"only a mark or flag with the port's own RSS can be kept exact in "
	"software, not a count action", VBR_FLOW_F_FRAG },
{ "ipv6 has_frag_ext 0 on a ConnectX, dropped", { .ingress = 1 },
	P(ETH_ANY, I(IPV6, &ovs_v6_nofrag, &ovs_v6_fragm)),
	A(ACT(DROP, NULL)), 0, RTE_FLOW_ERROR_TYPE_ITEM,
	"vbr: ipv6 item: has_frag_ext: the device cannot match fragments; "
	"only a mark or flag with the port's own RSS can be kept exact in "
	"software, not a drop action", VBR_FLOW_F_FRAG },
{ "not a fragment on a ConnectX, aged", { .ingress = 1 },
	P(ETH_ANY, I(IPV4, &ovs_nofrag, &ovs_fragm)),
	A(ACT(AGE, C(struct rte_flow_action_age, .timeout = 10)), QUEUE0), 0,
	RTE_FLOW_ERROR_TYPE_ITEM, "software, not an age action",
	VBR_FLOW_F_FRAG },
{ "inner fragment match on a ConnectX", { .ingress = 1 },
	P(ETH_ANY, I(IPV4, NULL, NULL), I(GRE, NULL, NULL),
	  I(IPV4, &ovs_nofrag, &ovs_fragm)), A(QUEUE0), 0,
	RTE_FLOW_ERROR_TYPE_ITEM_MASK,
	"vbr: fragment match (ipv4 fragment_offset, ipv6 has_frag_ext; a "
	"ConnectX through verbs matches IPv4 up to tos", VBR_FLOW_F_FRAG },
{ "ovs: later fragment as OVS 3.1 says it (offset 8 to 0x1fff)",
	{ .ingress = 1 },
	P(ETH_ANY, IL(IPV4, C(struct rte_flow_item_ipv4,
			      .hdr.fragment_offset = RTE_BE16(8)),
		      C(struct rte_flow_item_ipv4,
			.hdr.fragment_offset = RTE_BE16(0x1fff)),
		      C(struct rte_flow_item_ipv4,
			.hdr.fragment_offset = RTE_BE16(0x1fff)))),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM_LAST,
	"fragment_offset: offset 8 to 8191: only 0" },
{ "ipv4 a given fragment offset", { .ingress = 1 },
	P(ETH_ANY, I(IPV4, C(struct rte_flow_item_ipv4,
			     .hdr.fragment_offset = RTE_BE16(185)),
		     C(struct rte_flow_item_ipv4,
		       .hdr.fragment_offset = RTE_BE16(0x1fff)))),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM,
	"fragment_offset: offset 185 to 185: only 0" },
{ "ipv4 part of the offset", { .ingress = 1 },
	P(ETH_ANY, I(IPV4, C(struct rte_flow_item_ipv4,
			     .hdr.fragment_offset = 0),
		     C(struct rte_flow_item_ipv4,
		       .hdr.fragment_offset = RTE_BE16(0x00ff)))),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM_MASK,
	"fragment_offset: mask all 13 offset bits or none" },
{ "ipv6 has_frag_ext 1", { .ingress = 1 },
	P(ETH_ANY, I(IPV6, C(struct rte_flow_item_ipv6, .has_frag_ext = 1),
		     &ovs_v6_fragm)), A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM,
	"has_frag_ext: only 0 (no fragment header)" },
{ "ipv6 has_frag_ext 0, next header hop-by-hop", { .ingress = 1 },
	P(ETH_ANY, I(IPV6, C(struct rte_flow_item_ipv6, .hdr.proto = 0),
		     C(struct rte_flow_item_ipv6, .hdr.proto = 0xff,
		       .has_frag_ext = 1))), A(QUEUE0), 0,
	RTE_FLOW_ERROR_TYPE_ITEM, "has_frag_ext 0 with next header 0" },
{ "ipv6 frag_ext item", { .ingress = 1 },
	P(ETH_ANY, I(IPV6, NULL, NULL), I(IPV6_FRAG_EXT, NULL, NULL)),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM,
	"item ipv6_frag_ext is not supported" },
{ "has_vlan 0 and a vlan item", { .ingress = 1 },
	P(I(ETH, &ovs_eth_untagged, &ovs_eth_m),
	  I(VLAN, C(struct rte_flow_item_vlan, .tci = RTE_BE16(5)), NULL)),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM,
	"vlan item: the eth item before it must not match a type other" },
{ "untagged eth without type, then a vlan item", { .ingress = 1 },
	P(I(ETH, C(struct rte_flow_item_eth, .has_vlan = 0),
	    C(struct rte_flow_item_eth, .has_vlan = 1)),
	  I(VLAN, C(struct rte_flow_item_vlan, .tci = RTE_BE16(5)), NULL)),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM,
	"the eth item before it says has_vlan 0" },
{ "tcp after eth", { .ingress = 1 }, P(ETH_ANY, I(TCP, NULL, NULL)),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM, "tcp item cannot follow eth" },
{ "vxlan first", { .ingress = 1 }, P(I(VXLAN, NULL, NULL)),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM,
	"vxlan item cannot follow the start of the pattern" },
{ "two tunnels", { .ingress = 1 },
	P(ETH_ANY, I(IPV4, NULL, NULL), I(UDP, NULL, NULL), I(VXLAN, NULL, NULL),
	  ETH_ANY, I(IPV4, NULL, NULL), I(UDP, NULL, NULL), I(VXLAN, NULL, NULL)),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM,
	"vxlan item: only one tunnel level" },
{ "ipv4 proto 17 then tcp", { .ingress = 1 },
	P(ETH_ANY, I(IPV4, C(struct rte_flow_item_ipv4, .hdr.next_proto_id = 17),
		     C(struct rte_flow_item_ipv4, .hdr.next_proto_id = 0xff)),
	  I(TCP, NULL, NULL)),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM,
	"tcp item: the ipv4 item before it matches IP protocol 17 under mask "
	"0xff, not 6" },
{ "eth type ipv6 then ipv4", { .ingress = 1 },
	P(I(ETH, C(struct rte_flow_item_eth, .type = RTE_BE16(0x86dd)),
	    C(struct rte_flow_item_eth, .type = RTE_BE16(0xffff))),
	  I(IPV4, NULL, NULL)),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM,
	"ipv4 item: the eth item before it matches type 0x86dd" },
{ "eth type partly masked then ipv6", { .ingress = 1 },
	P(I(ETH, C(struct rte_flow_item_eth, .type = RTE_BE16(0x86dd)),
	    C(struct rte_flow_item_eth, .type = RTE_BE16(0xff00))),
	  I(IPV6, NULL, NULL)),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM,
	"under mask 0xff00, not 0x86dd" },
{ "esp after a tunnel", { .ingress = 1 },
	P(ETH_ANY, I(IPV4, NULL, NULL), I(UDP, NULL, NULL), I(VXLAN, NULL, NULL),
	  ETH_ANY, I(IPV4, NULL, NULL), I(ESP, NULL, NULL)),
	A(QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ITEM,
	"esp item: ESP can be matched in the outer headers only" },
{ "queue out of range", { .ingress = 1 }, P(ETH_ANY),
	A(ACT(QUEUE, Q(4))), 4, RTE_FLOW_ERROR_TYPE_ACTION_CONF,
	"queue action: queue 4 is not below the 4 Rx queues configured" },
{ "rss queue out of range", { .ingress = 1 }, P(ETH_ANY),
	A(ACT(RSS, C(struct rte_flow_action_rss, .queue_num = 2,
	       .queue = (const uint16_t []){ 0, 9 }))), 4,
	RTE_FLOW_ERROR_TYPE_ACTION_CONF,
	"rss action: queue 9 is not below the 4 Rx queues" },
{ "rss key 20", { .ingress = 1 }, P(ETH_ANY),
	A(ACT(RSS, C(struct rte_flow_action_rss, .key_len = 20, .key = key40,
	       .queue_num = 1, .queue = (const uint16_t []){ 0 }))), 0,
	RTE_FLOW_ERROR_TYPE_ACTION_CONF, "rss action: key of 20 bytes: must be 40" },
{ "rss level 2", { .ingress = 1 }, P(ETH_ANY),
	A(ACT(RSS, C(struct rte_flow_action_rss, .level = 2,
	       .queue_num = 1, .queue = (const uint16_t []){ 0 }))), 0,
	RTE_FLOW_ERROR_TYPE_ACTION_CONF, "rss action: level 0 or 1 only" },
{ "rss xor", { .ingress = 1 }, P(ETH_ANY),
	A(ACT(RSS, C(struct rte_flow_action_rss,
	       .func = RTE_ETH_HASH_FUNCTION_SIMPLE_XOR,
	       .queue_num = 1, .queue = (const uint16_t []){ 0 }))), 0,
	RTE_FLOW_ERROR_TYPE_ACTION_CONF, "only the Toeplitz hash function" },
{ "rss sctp", { .ingress = 1 }, P(ETH_ANY),
	A(ACT(RSS, C(struct rte_flow_action_rss, .types = RTE_ETH_RSS_SCTP,
	       .queue_num = 1, .queue = (const uint16_t []){ 0 }))), 0,
	RTE_FLOW_ERROR_TYPE_ACTION_CONF, "cannot be hashed" },
{ "rss no queue", { .ingress = 1 }, P(ETH_ANY),
	A(ACT(RSS, C(struct rte_flow_action_rss, .queue_num = 0))), 0,
	RTE_FLOW_ERROR_TYPE_ACTION_CONF, "rss action: no queue" },
{ "mark too large", { .ingress = 1 }, P(ETH_ANY),
	A(ACT(MARK, C(struct rte_flow_action_mark, .id = 0xfffffe)), QUEUE0), 0,
	RTE_FLOW_ERROR_TYPE_ACTION_CONF, "mark action: id above the maximum" },
{ "mark and flag", { .ingress = 1 }, P(ETH_ANY),
	A(ACT(MARK, C(struct rte_flow_action_mark, .id = 1)), ACT(FLAG, NULL),
	  QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ACTION, "one mark or flag action" },
{ "mark on drop", { .ingress = 1 }, P(ETH_ANY),
	A(ACT(MARK, C(struct rte_flow_action_mark, .id = 1)), ACT(DROP, NULL)), 0,
	RTE_FLOW_ERROR_TYPE_ACTION, "mark or flag on a drop rule" },
{ "jump group 1", { .ingress = 1 }, P(ETH_ANY),
	A(ACT(JUMP, C(struct rte_flow_action_jump, .group = 1)), QUEUE0), 0,
	RTE_FLOW_ERROR_TYPE_ACTION_CONF, "jump action: group 0 is the only group" },
{ "dec_ttl action", { .ingress = 1 }, P(ETH_ANY),
	A(ACT(DEC_TTL, NULL), QUEUE0), 0, RTE_FLOW_ERROR_TYPE_ACTION,
	"vbr: action dec_ttl is not supported" },
};

/* Expected attr bytes of an ok case. */
static size_t
build_expected(const struct ok_case *c, uint8_t *buf, size_t room)
{
	struct ibv_flow_attr *attr = (struct ibv_flow_attr *)buf;
	const struct exp_spec *s;
	size_t off = sizeof(*attr);

	memset(buf, 0, room);
	attr->type = IBV_FLOW_ATTR_NORMAL;
	attr->priority = c->prio;
	attr->port = 1;
	for (s = c->specs; s->p != NULL; s++) {
		if (off + s->n > room)
			return 0;
		memcpy(buf + off, s->p, s->n);
		off += s->n;
		attr->num_of_specs++;
	}
	attr->size = off;
	return off;
}

static void
hexdump(const char *what, const uint8_t *p, size_t n)
{
	size_t i;

	printf("%s (%zu bytes):", what, n);
	for (i = 0; i < n; i++)
		printf("%s%02x", i % 20 == 0 ? "\n  " : " ", p[i]);
	printf("\n");
}

static int
test_accepted(void)
{
	static struct vbr_flow_desc d;
	static uint8_t exp[VBR_FLOW_BUF_SIZE];
	unsigned int i, q;

	for (i = 0; i < RTE_DIM(ok_cases); i++) {
		const struct ok_case *c = &ok_cases[i];
		struct vbr_flow_caps caps = {
			.nb_rx_queues = c->nb_rx_queues,
			.internal = c->internal,
			.no_fields = c->no_fields,
		};
		struct rte_flow_error err;
		size_t n;
		int ret;

		printf("  ok: %s\n", c->name);
		memset(&err, 0x5a, sizeof(err));
		ret = vbr_flow_prepare(&caps, &c->attr, c->pattern, c->actions,
				       NULL, &err);
		TEST_ASSERT_SUCCESS(ret, "%s: validate: %s", c->name,
				    ret != 0 ? err.message : "");
		memset(&d, 0xa5, sizeof(d));
		ret = vbr_flow_prepare(&caps, &c->attr, c->pattern, c->actions,
				       &d, &err);
		TEST_ASSERT_SUCCESS(ret, "%s: prepare: %s", c->name,
				    ret != 0 ? err.message : "");
		n = build_expected(c, exp, sizeof(exp));
		TEST_ASSERT(n != 0, "%s: expected too large", c->name);
		if (d.attr_size != n || memcmp(d.u.buf, exp, n) != 0) {
			hexdump("got", d.u.buf, d.attr_size);
			hexdump("expected", exp, n);
			vbr_flow_dump_attr(stdout, &d.u.attr);
			TEST_ASSERT(0, "%s: verbs attr bytes differ", c->name);
		}
		TEST_ASSERT_EQUAL(d.fate, c->fate, "%s: fate", c->name);
		TEST_ASSERT_EQUAL(d.rx_act, c->rx_act, "%s: rx action",
				  c->name);
		TEST_ASSERT_EQUAL(d.has_key, c->has_key, "%s: key", c->name);
		if (c->has_key)
			TEST_ASSERT(memcmp(d.rss_key, key40, 40) == 0,
				    "%s: key bytes", c->name);
		if (c->fate == VBR_FLOW_FATE_RSS)
			TEST_ASSERT_EQUAL(d.hash_fields, c->fields,
					  "%s: hash fields", c->name);
		TEST_ASSERT_EQUAL(d.nb_queues, c->nb_queues, "%s: queues",
				  c->name);
		for (q = 0; q < c->nb_queues; q++)
			TEST_ASSERT_EQUAL(d.queues[q], c->queues[q],
					  "%s: queue %u", c->name, q);
		TEST_ASSERT_EQUAL(d.comp, c->comp, "%s: companions", c->name);
		TEST_ASSERT_EQUAL(d.sw_frag, c->sw_frag,
				  "%s: fragment condition in software",
				  c->name);
	}
	return TEST_SUCCESS;
}

static int
test_rejected(void)
{
	static struct vbr_flow_desc d;
	unsigned int i, pass;

	for (i = 0; i < RTE_DIM(bad_cases); i++) {
		const struct bad_case *c = &bad_cases[i];
		struct vbr_flow_caps caps = {
			.nb_rx_queues = c->nb_rx_queues,
			.no_fields = c->no_fields,
		};

		printf("  bad: %s\n", c->name);
		for (pass = 0; pass < 2; pass++) {
			struct rte_flow_error err;
			int ret;

			/* poisoned, as testpmd does */
			memset(&err, 0x5a, sizeof(err));
			rte_errno = 0;
			ret = vbr_flow_prepare(&caps, &c->attr, c->pattern,
					       c->actions, pass ? &d : NULL,
					       &err);
			TEST_ASSERT(ret < 0, "%s: accepted", c->name);
			TEST_ASSERT_EQUAL(ret, -rte_errno, "%s: ret/rte_errno",
					  c->name);
			TEST_ASSERT_EQUAL(err.type, c->type,
					  "%s: error type (message: %s)",
					  c->name, err.message);
			TEST_ASSERT(strstr(err.message, c->msg) != NULL,
				    "%s: message '%s' lacks '%s'", c->name,
				    err.message, c->msg);
			TEST_ASSERT(strncmp(err.message, "vbr: ", 5) == 0,
				    "%s: message '%s' not prefixed", c->name,
				    err.message);
		}
	}
	return TEST_SUCCESS;
}

/* The cause pointer names the offending item or action. */
static int
test_error_cause(void)
{
	const struct rte_flow_item pattern[] = {
		I(ETH, NULL, NULL), I(IPV4, NULL, NULL), I(ICMP6, NULL, NULL),
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	const struct rte_flow_action actions[] = {
		QUEUE0, ACT(RSS, NULL), { .type = RTE_FLOW_ACTION_TYPE_END },
	};
	const struct rte_flow_item good[] = {
		I(ETH, NULL, NULL), { .type = RTE_FLOW_ITEM_TYPE_END },
	};
	const struct rte_flow_attr attr = { .ingress = 1 };
	struct vbr_flow_caps caps = { 0 };
	struct rte_flow_error err;

	memset(&err, 0x5a, sizeof(err));
	TEST_ASSERT(vbr_flow_prepare(&caps, &attr, pattern, actions, NULL,
				     &err) < 0, "icmp6 accepted");
	TEST_ASSERT(err.cause == &pattern[2], "cause is not the icmp6 item");
	memset(&err, 0x5a, sizeof(err));
	TEST_ASSERT(vbr_flow_prepare(&caps, &attr, good, actions, NULL,
				     &err) < 0, "two fates accepted");
	TEST_ASSERT(err.cause == &actions[1], "cause is not the rss action");
	memset(&err, 0x5a, sizeof(err));
	TEST_ASSERT(vbr_flow_prepare(&caps, &attr, NULL, actions, NULL,
				     &err) < 0, "no pattern accepted");
	TEST_ASSERT_EQUAL(err.type, RTE_FLOW_ERROR_TYPE_ITEM_NUM, "type");
	return TEST_SUCCESS;
}

/*
 * MARK, FLAG and METER go into the word of the rule's Rx action table
 * entry; the TAG spec waits for the entry's index (0 until creation).
 */
static int
test_mark_mapping(void)
{
	const struct rte_flow_item pattern[] = {
		I(ETH, NULL, NULL), { .type = RTE_FLOW_ITEM_TYPE_END },
	};
	const struct rte_flow_attr attr = { .ingress = 1 };
	struct vbr_flow_caps caps = { 0 };
	static struct vbr_flow_desc d;
	struct rte_flow_action_mark mark = { .id = VBR_FLOW_MARK_MAX };
	const struct rte_flow_action actions[] = {
		ACT(MARK, &mark), QUEUE0, { .type = RTE_FLOW_ACTION_TYPE_END },
	};
	struct rte_flow_action_meter mtr = { .mtr_id = 5 };
	const struct rte_flow_action meter_only[] = {
		ACT(METER, &mtr), { .type = RTE_FLOW_ACTION_TYPE_END },
	};
	const struct rte_flow_action meter_mark[] = {
		ACT(METER, &mtr), ACT(MARK, &mark), ACT(COUNT, NULL), QUEUE0,
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	const struct rte_flow_action meter_drop[] = {
		ACT(METER, &mtr), ACT(DROP, NULL),
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	const struct rte_flow_action two_meters[] = {
		ACT(METER, &mtr), ACT(METER, &mtr), QUEUE0,
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	const struct rte_flow_action meter_no_conf[] = {
		ACT(METER, NULL), QUEUE0, { .type = RTE_FLOW_ACTION_TYPE_END },
	};
	const struct ibv_flow_spec_action_tag *t;
	struct rte_flow_error err;

	TEST_ASSERT_SUCCESS(vbr_flow_prepare(&caps, &attr, pattern, actions,
					     &d, &err), "top id");
	TEST_ASSERT_EQUAL(d.rx_act, VBR_RX_ACT_MARK | VBR_FLOW_MARK_MAX,
			  "top id");
	mark.id = 0;
	TEST_ASSERT_SUCCESS(vbr_flow_prepare(&caps, &attr, pattern, actions,
					     &d, &err), "id 0");
	TEST_ASSERT_EQUAL(d.rx_act, VBR_RX_ACT_MARK, "id 0 is still a tag");
	t = (const void *)(d.u.buf + d.tag_off);
	TEST_ASSERT_EQUAL(t->type, IBV_FLOW_SPEC_ACTION_TAG, "tag spec");
	TEST_ASSERT_EQUAL(t->tag_id, 0, "the index comes at creation");
	/* A rule whose only action is the meter: its policy's fate. */
	TEST_ASSERT_SUCCESS(vbr_flow_prepare(&caps, &attr, pattern,
					     meter_only, &d, &err),
			    "meter alone: %s", err.message);
	TEST_ASSERT_EQUAL(d.rx_act, VBR_RX_ACT_METER, "meter alone");
	TEST_ASSERT_EQUAL(d.meter_id, 5, "meter id");
	TEST_ASSERT_EQUAL(d.fate, VBR_FLOW_FATE_NONE, "fate from policy");
	mark.id = 9;
	TEST_ASSERT_SUCCESS(vbr_flow_prepare(&caps, &attr, pattern,
					     meter_mark, &d, &err),
			    "meter, mark, count: %s", err.message);
	TEST_ASSERT_EQUAL(d.rx_act, VBR_RX_ACT_METER | VBR_RX_ACT_MARK | 9,
			  "meter and mark in one entry");
	TEST_ASSERT_EQUAL(d.fate, VBR_FLOW_FATE_QUEUE, "own fate");
	TEST_ASSERT_EQUAL(d.count, VBR_FLOW_COUNT_RULE, "count");
	TEST_ASSERT(0 != vbr_flow_prepare(&caps, &attr, pattern, meter_drop,
					  &d, &err), "meter on drop");
	TEST_ASSERT(strstr(err.message, "nothing to meter") != NULL, "%s",
		    err.message);
	TEST_ASSERT(0 != vbr_flow_prepare(&caps, &attr, pattern, two_meters,
					  &d, &err), "two meters");
	TEST_ASSERT(strstr(err.message, "one meter per rule") != NULL, "%s",
		    err.message);
	TEST_ASSERT(0 != vbr_flow_prepare(&caps, &attr, pattern,
					  meter_no_conf, &d, &err), "no conf");
	TEST_ASSERT_EQUAL(err.type, RTE_FLOW_ERROR_TYPE_ACTION_CONF,
			  "no conf: its type");
	return TEST_SUCCESS;
}

/*
 * The companions of an OVS rule: its item specs, no action, at the priority
 * given, each with the match that selects one part of the excluded frames:
 * C-tagged with VID bit 0 clear or set, IPv6 next header 0, 43, 44, 51, 60.
 */
static int
test_companions(void)
{
	static const uint8_t v6_ext[] = { 0, 43, 44, 51, 60 };
	const struct rte_flow_item pattern[] = {
		I(ETH, &ovs_eth6_untagged, &ovs_eth_m),
		I(IPV6, &ovs_v6_nofrag, &ovs_v6_fragm),
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	const struct rte_flow_attr attr = { .ingress = 1 };
	struct vbr_flow_caps caps = { .nb_rx_queues = 2 };
	static struct vbr_flow_desc d;
	uint8_t buf[VBR_FLOW_BUF_SIZE] __rte_aligned(8);
	struct rte_flow_error err;
	struct ibv_flow_spec_eth e;
	struct ibv_flow_spec_ipv6 v6;
	struct ibv_flow_attr *a = (struct ibv_flow_attr *)buf;
	unsigned int i;
	size_t n;

	TEST_ASSERT_SUCCESS(vbr_flow_prepare(&caps, &attr, pattern,
					     OVS_ACTIONS(9), &d, &err),
			    "prepare: %s", err.message);
	TEST_ASSERT_EQUAL(vbr_flow_nb_comp(d.comp), 7u, "companions");
	TEST_ASSERT_EQUAL(vbr_flow_nb_comp(VBR_FLOW_COMP_TAGGED), 2u, "");
	for (i = 0; i < 7; i++) {
		n = vbr_flow_comp_attr(&d.u.attr, d.items_end, d.comp, i, 7,
				       buf, sizeof(buf));
		TEST_ASSERT_EQUAL(n, (size_t)d.items_end, "companion %u", i);
		TEST_ASSERT_EQUAL(a->size, d.items_end, "size");
		TEST_ASSERT_EQUAL(a->num_of_specs, 2, "specs (no action)");
		TEST_ASSERT_EQUAL(a->priority, 7, "priority");
		memcpy(&e, buf + sizeof(*a), sizeof(e));
		memcpy(&v6, buf + sizeof(*a) + sizeof(e), sizeof(v6));
		TEST_ASSERT(memcmp(e.mask.src_mac, "\xff\xff\xff\xff\xff\xff",
				   6) == 0, "eth kept");
		if (i < 2) {
			TEST_ASSERT_EQUAL(e.mask.vlan_tag, RTE_BE16(1),
					  "vlan mask %u", i);
			TEST_ASSERT_EQUAL(e.val.vlan_tag,
					  i ? RTE_BE16(1) : 0, "vlan %u", i);
			TEST_ASSERT_EQUAL(v6.mask.next_hdr, 0, "v6 untouched");
		} else {
			TEST_ASSERT_EQUAL(e.mask.vlan_tag, 0, "no vlan %u", i);
			TEST_ASSERT_EQUAL(v6.mask.next_hdr, 0xff, "nh mask");
			TEST_ASSERT_EQUAL(v6.val.next_hdr, v6_ext[i - 2],
					  "next header %u", i);
		}
	}
	TEST_ASSERT_EQUAL(vbr_flow_comp_attr(&d.u.attr, d.items_end, d.comp,
					     7, 7, buf, sizeof(buf)), 0u,
			  "companion 7 does not exist");
	return TEST_SUCCESS;
}

/* Translate pattern (QUEUE 0) into d; 0 or the error. */
static int
isect_prep(const struct rte_flow_item *pattern, struct vbr_flow_desc *d)
{
	static const struct rte_flow_action_queue q0 = { .index = 0 };
	const struct rte_flow_action acts[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &q0 },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	const struct rte_flow_attr attr = { .ingress = 1 };
	struct vbr_flow_caps caps = { .nb_rx_queues = 2 };
	struct rte_flow_error err;

	return vbr_flow_prepare(&caps, &attr, pattern, acts, d, &err);
}

/*
 * Whether two rules' verbs specs may match one frame: the steering
 * owner's test for rules a rule's companions would take frames from. Apart
 * only by an L3 family, an L4 protocol or a field under common mask bits.
 */
static int
test_attr_intersect(void)
{
	static const struct rte_flow_item_eth d1 = {
		.dst.addr_bytes = { 2, 0, 0, 0, 0, 1 },
	}, d2 = {
		.dst.addr_bytes = { 2, 0, 0, 0, 0, 2 },
	}, t4 = { .type = RTE_BE16(0x0800) }, t6 = { .type = RTE_BE16(0x86dd) };
	static const struct rte_flow_item_eth dm = {
		.dst.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
	}, tm = { .type = RTE_BE16(0xffff) };
	static const struct rte_flow_item_vlan v100 = { .tci = RTE_BE16(100) },
		v101 = { .tci = RTE_BE16(101) }, vm = { .tci = RTE_BE16(0xfff) };
	static const struct rte_flow_item_udp p53 = { .hdr.dst_port =
						      RTE_BE16(53) };
	static const struct rte_flow_item_udp pm = { .hdr.dst_port =
						     RTE_BE16(0xffff) };
#define END { .type = RTE_FLOW_ITEM_TYPE_END }
	const struct {
		const char *name;
		struct rte_flow_item a[4], b[4];
		bool isect;
	} c[] = {
		{ "same dst", { I(ETH, &d1, &dm), END },
		  { I(ETH, &d1, &dm), END }, true },
		{ "other dst", { I(ETH, &d1, &dm), END },
		  { I(ETH, &d2, &dm), END }, false },
		{ "dst against any eth", { I(ETH, &d1, &dm), END },
		  { I(ETH, NULL, NULL), END }, true },
		{ "ipv4 against ipv6", { I(ETH, NULL, NULL), I(IPV4, NULL, NULL),
					 END },
		  { I(ETH, NULL, NULL), I(IPV6, NULL, NULL), END }, false },
		{ "eth type 0x0800 against ipv6", { I(ETH, &t4, &tm), END },
		  { I(ETH, NULL, NULL), I(IPV6, NULL, NULL), END }, false },
		{ "eth type 0x86dd against ipv6", { I(ETH, &t6, &tm), END },
		  { I(ETH, NULL, NULL), I(IPV6, NULL, NULL), END }, true },
		{ "udp against tcp", { I(ETH, NULL, NULL), I(IPV4, NULL, NULL),
				       I(UDP, NULL, NULL), END },
		  { I(ETH, NULL, NULL), I(IPV4, NULL, NULL), I(TCP, NULL, NULL),
		    END }, false },
		{ "udp port against udp", { I(ETH, NULL, NULL),
					    I(IPV4, NULL, NULL),
					    I(UDP, &p53, &pm), END },
		  { I(ETH, NULL, NULL), I(IPV4, NULL, NULL), I(UDP, NULL, NULL),
		    END }, true },
		{ "vid 100 against vid 101", { I(ETH, NULL, NULL),
					       I(VLAN, &v100, &vm), END },
		  { I(ETH, NULL, NULL), I(VLAN, &v101, &vm), END }, false },
		{ "vid 100 against ipv4", { I(ETH, NULL, NULL),
					    I(VLAN, &v100, &vm), END },
		  { I(ETH, NULL, NULL), I(IPV4, NULL, NULL), END }, true },
	};
#undef END
	static struct vbr_flow_desc da, db;
	unsigned int i;

	for (i = 0; i < RTE_DIM(c); i++) {
		TEST_ASSERT_SUCCESS(isect_prep(c[i].a, &da), "%s: a", c[i].name);
		TEST_ASSERT_SUCCESS(isect_prep(c[i].b, &db), "%s: b", c[i].name);
		TEST_ASSERT_EQUAL(vbr_flow_attr_intersect(&da.u.attr,
				  da.items_end, &db.u.attr, db.items_end),
				  c[i].isect, "%s", c[i].name);
		TEST_ASSERT_EQUAL(vbr_flow_attr_intersect(&db.u.attr,
				  db.items_end, &da.u.attr, da.items_end),
				  c[i].isect, "%s (b, a)", c[i].name);
	}
	return TEST_SUCCESS;
}

/*
 * A companion's fate in its verbs attr: the VID split replaces the VLAN
 * match of the base companion; a drop adds a count (when counted) and a
 * drop spec.
 */
static int
test_comp_fate(void)
{
	const struct rte_flow_item pattern[] = {
		I(ETH, &ovs_eth6_untagged, &ovs_eth_m),
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	static struct vbr_flow_desc d;
	uint8_t buf[VBR_FLOW_BUF_SIZE] __rte_aligned(8);
	struct ibv_flow_attr *a = (struct ibv_flow_attr *)buf;
	struct ibv_counters *cnt = (struct ibv_counters *)(uintptr_t)0x1000;
	struct ibv_flow_spec_counter_action ca;
	struct ibv_flow_spec_eth e;
	uint32_t type;
	size_t n;

	TEST_ASSERT_SUCCESS(isect_prep(pattern, &d), "prepare");
	TEST_ASSERT_EQUAL(d.comp, VBR_FLOW_COMP_TAGGED, "has_vlan 0");
	n = vbr_flow_comp_attr(&d.u.attr, d.items_end, d.comp, 0, 3, buf,
			       sizeof(buf));
	TEST_ASSERT_EQUAL(n, (size_t)d.items_end, "base companion");
	n = vbr_flow_comp_fate(buf, sizeof(buf), 0x0a0, 0xff0, false, NULL);
	TEST_ASSERT_EQUAL(n, (size_t)d.items_end, "accept: no spec added");
	memcpy(&e, buf + sizeof(*a), sizeof(e));
	TEST_ASSERT_EQUAL(e.mask.vlan_tag, RTE_BE16(0xff0), "VID mask");
	TEST_ASSERT_EQUAL(e.val.vlan_tag, RTE_BE16(0x0a0), "VID");
	n = vbr_flow_comp_fate(buf, sizeof(buf), 0, 0, true, cnt);
	TEST_ASSERT_EQUAL(n, d.items_end + sizeof(ca) +
			  sizeof(struct ibv_flow_spec_action_drop), "drop");
	TEST_ASSERT_EQUAL(a->size, n, "attr size");
	TEST_ASSERT_EQUAL(a->num_of_specs, 3, "eth, count, drop");
	memcpy(&ca, buf + d.items_end, sizeof(ca));
	TEST_ASSERT_EQUAL(ca.type, IBV_FLOW_SPEC_ACTION_COUNT, "count spec");
	TEST_ASSERT(ca.counters == cnt, "its counters");
	memcpy(&type, buf + d.items_end + sizeof(ca), sizeof(type));
	TEST_ASSERT_EQUAL(type, IBV_FLOW_SPEC_ACTION_DROP, "drop spec");
	memcpy(&e, buf + sizeof(*a), sizeof(e));
	TEST_ASSERT_EQUAL(e.mask.vlan_tag, RTE_BE16(0xff0), "VID kept");
	TEST_ASSERT_EQUAL(vbr_flow_comp_fate(buf, d.items_end + 4, 0, 0, true,
					     NULL), 0u, "room short");
	return TEST_SUCCESS;
}

/*
 * eth type 0x8100 / vlan: the TPID is dropped on a device whose VLAN
 * match selects C-tags only; refused where it takes any TPID (it would
 * widen to S-tags); without the eth type, any tag on both.
 */
static int
test_vlan_tpid(void)
{
	const struct rte_flow_item tagged[] = {
		I(ETH, &ovs_eth_tagged, &ovs_eth_m),
		I(VLAN, &ovs_vlan100, &ovs_vlan_m),
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	const struct rte_flow_item any_tag[] = {
		{ .type = RTE_FLOW_ITEM_TYPE_ETH },
		I(VLAN, &ovs_vlan100, &ovs_vlan_m),
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	const struct rte_flow_attr attr = { .ingress = 1 };
	struct vbr_flow_caps caps = { .nb_rx_queues = 2 };
	static struct vbr_flow_desc d;
	struct rte_flow_error err;

	TEST_ASSERT_SUCCESS(vbr_flow_prepare(&caps, &attr, tagged,
					     OVS_ACTIONS(9), &d, &err),
			    "C-tag only: %s", err.message);
	caps.vlan_any_tpid = 1;
	memset(&err, 0, sizeof(err));
	TEST_ASSERT_EQUAL(vbr_flow_prepare(&caps, &attr, tagged,
					   OVS_ACTIONS(9), &d, &err),
			  -ENOTSUP, "any TPID: refused");
	TEST_ASSERT(err.message != NULL &&
		    strstr(err.message, "any TPID") != NULL, "%s",
		    err.message != NULL ? err.message : "");
	TEST_ASSERT_SUCCESS(vbr_flow_prepare(&caps, &attr, any_tag,
					     OVS_ACTIONS(9), &d, &err),
			    "any TPID, no eth type: %s", err.message);
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite = {
	.name = "vbr flow translation",
	.cases = {
		TEST_CASE(test_accepted),
		TEST_CASE(test_rejected),
		TEST_CASE(test_error_cause),
		TEST_CASE(test_mark_mapping),
		TEST_CASE(test_companions),
		TEST_CASE(test_attr_intersect),
		TEST_CASE(test_comp_fate),
		TEST_CASE(test_vlan_tpid),
		TEST_CASES_END(),
	},
};

int
main(void)
{
	return unit_test_suite_runner(&suite);
}
