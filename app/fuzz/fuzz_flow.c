/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Fuzz target: random rte_flow rules into validate, create and destroy on a
 * started vbr port (swverbs pair wire, 4 Rx queues). Checked on every input:
 * no crash, no leak (ASan), and every call consistent with its error:
 *   - a failure returns a negative errno equal to -rte_errno, and sets the
 *     rte_flow_error (poisoned before the call) to a type other than NONE
 *     with a message;
 *   - a rule that validate rejects, create rejects too; one it accepts,
 *     create makes (unless short of memory);
 *   - destroy of a created rule succeeds, and destroy of a handle that is
 *     not a rule of the port fails with an error set (destroying a handle
 *     twice is a use after free, as in any rte_flow driver: not tried).
 *
 * Input format (fuzz_common.h's reader: zeros once the input runs out).
 * The first byte picks the decoder:
 *   not 0xff, shaped (decode() below): valid rule shapes, so that most
 *   inputs reach rte_flow_create(): bit 0 create twice (the second
 *   refused: the same match), bits 1-4 all set
 *   stop and start the port, the next byte the priority (mod 16); the
 *   pattern walks vbr's item graph (a byte per step: 7 in the low bits
 *   ends it, the others pick the next item; then per item a byte, low 2
 *   bits 0 no spec, 1 the full matchable mask, 2 a subset of it, and the
 *   spec bytes under it); then a fate byte (0-3, 7 queue, 4-5 rss, 6
 *   drop) and an extras byte (mark, flag, count, age, jump, void).
 *   0xff, raw: every byte as the fields below say (the error paths;
 *   libFuzzer keeps many such inputs, each reaching a new rejection):
 *   flags, priority, nb_items, items..., nb_actions, actions...
 *   item:   type index, presence (spec 1, mask 2, last 4), then for each
 *           present buffer a length and that many bytes (rest zero)
 *   action: type index, flags (1: conf NULL), then its conf:
 *           queue: index; mark, jump: 4 bytes; rss: func, level, 8 bytes of
 *           types, key mode (0 none, 1 40 bytes, 2 length byte, 3 length 40
 *           and no key) and key bytes, queue count (255: 2000 queues) and
 *           one byte per queue.
 *   flags: 1 not ingress, 2 egress, 4 transfer, 8 group 1, 16 create the
 *   rule twice, 32 stop and start the port with the rules on it.
 *
 * Built with clang: a libFuzzer target (-fsanitize=fuzzer,address). Built
 * otherwise: a replay driver, main() below, that runs the target over the
 * files and folders given and over random inputs from a fixed seed, so the
 * corpus runs as a plain test.
 *
 * The PMD: built in (FUZZ_PMD_BUILTIN, the libFuzzer build), else loaded
 * from $VBR_PMD, else from the path meson gave (VBR_PMD_PATH).
 */

#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_flow.h>
#include <rte_mbuf.h>
#include <rte_memory.h>

#include "fuzz_common.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_LSAN 1
#include <sanitizer/lsan_interface.h>
#endif
#endif

#define NB_RXQ 4
#define MAX_ITEMS 8
#define MAX_ACTIONS 6
#define BUF_SZ 128
#define MANY_QUEUES 2000

/* The port an input's rule goes to: PORT_MLX5 or PORT_FULL (by the input). */
#define PORT_MLX5 1
#define PORT_FULL 3
static uint16_t port = PORT_MLX5;
static int verbose; /* $FUZZ_FLOW_VERBOSE: print each outcome */
/* Inputs run, and how many of them validate accepted and create made. */
static uint64_t nb_inputs, nb_valid, nb_created;

static void print_figures(void);

/* Items: the ones the PMD knows, then some it does not (no pointers in
 * their specs).
 */
static const enum rte_flow_item_type item_types[] = {
	RTE_FLOW_ITEM_TYPE_ETH, RTE_FLOW_ITEM_TYPE_VLAN,
	RTE_FLOW_ITEM_TYPE_IPV4, RTE_FLOW_ITEM_TYPE_IPV6,
	RTE_FLOW_ITEM_TYPE_TCP, RTE_FLOW_ITEM_TYPE_UDP,
	RTE_FLOW_ITEM_TYPE_VXLAN, RTE_FLOW_ITEM_TYPE_GRE,
	RTE_FLOW_ITEM_TYPE_MPLS, RTE_FLOW_ITEM_TYPE_ESP,
	RTE_FLOW_ITEM_TYPE_VOID,
	RTE_FLOW_ITEM_TYPE_SCTP, RTE_FLOW_ITEM_TYPE_ICMP,
	RTE_FLOW_ITEM_TYPE_GENEVE, RTE_FLOW_ITEM_TYPE_NVGRE,
	RTE_FLOW_ITEM_TYPE_ANY, RTE_FLOW_ITEM_TYPE_MARK,
};
static const uint16_t item_sizes[] = {
	sizeof(struct rte_flow_item_eth), sizeof(struct rte_flow_item_vlan),
	sizeof(struct rte_flow_item_ipv4), sizeof(struct rte_flow_item_ipv6),
	sizeof(struct rte_flow_item_tcp), sizeof(struct rte_flow_item_udp),
	sizeof(struct rte_flow_item_vxlan), sizeof(struct rte_flow_item_gre),
	sizeof(struct rte_flow_item_mpls), sizeof(struct rte_flow_item_esp),
	0,
	sizeof(struct rte_flow_item_sctp), sizeof(struct rte_flow_item_icmp),
	sizeof(struct rte_flow_item_geneve),
	sizeof(struct rte_flow_item_nvgre), sizeof(struct rte_flow_item_any),
	sizeof(struct rte_flow_item_mark),
};

static const enum rte_flow_action_type action_types[] = {
	RTE_FLOW_ACTION_TYPE_QUEUE, RTE_FLOW_ACTION_TYPE_RSS,
	RTE_FLOW_ACTION_TYPE_DROP, RTE_FLOW_ACTION_TYPE_MARK,
	RTE_FLOW_ACTION_TYPE_FLAG, RTE_FLOW_ACTION_TYPE_PASSTHRU,
	RTE_FLOW_ACTION_TYPE_VOID, RTE_FLOW_ACTION_TYPE_JUMP,
	RTE_FLOW_ACTION_TYPE_COUNT, RTE_FLOW_ACTION_TYPE_DEC_TTL,
	RTE_FLOW_ACTION_TYPE_OF_POP_VLAN, RTE_FLOW_ACTION_TYPE_AGE,
};

/* Everything one input decodes into. */
struct fuzz_rule {
	struct rte_flow_attr attr;
	struct rte_flow_item items[MAX_ITEMS + 1];
	uint8_t bufs[MAX_ITEMS][3][BUF_SZ];
	struct rte_flow_action actions[MAX_ACTIONS + 1];
	union {
		struct rte_flow_action_queue queue;
		struct rte_flow_action_mark mark;
		struct rte_flow_action_jump jump;
		struct rte_flow_action_rss rss;
		struct rte_flow_action_count count;
		struct rte_flow_action_age age;
	} confs[MAX_ACTIONS];
	uint8_t keys[MAX_ACTIONS][BUF_SZ];
	uint16_t queues[MAX_ACTIONS][MANY_QUEUES];
	unsigned int flags;
	bool full;		/* on the full-profile port */
};

static void
decode_items(struct fuzz_reader *r, struct fuzz_rule *f)
{
	unsigned int n = fuzz_get8(r) % (MAX_ITEMS + 1), i, b;

	for (i = 0; i < n; i++) {
		unsigned int t = fuzz_get8(r) % RTE_DIM(item_types);
		unsigned int present = fuzz_get8(r);
		struct rte_flow_item *item = &f->items[i];

		item->type = item_types[t];
		for (b = 0; b < 3; b++) {
			unsigned int len, k;

			if (!(present & (1u << b)))
				continue;
			len = fuzz_get8(r) % (item_sizes[t] + 1);
			for (k = 0; k < len; k++)
				f->bufs[i][b][k] = fuzz_get8(r);
			if (b == 0)
				item->spec = f->bufs[i][b];
			else if (b == 1)
				item->mask = f->bufs[i][b];
			else
				item->last = f->bufs[i][b];
		}
	}
	f->items[n].type = RTE_FLOW_ITEM_TYPE_END;
}

static void
decode_rss(struct fuzz_reader *r, struct fuzz_rule *f, unsigned int i)
{
	struct rte_flow_action_rss *rss = &f->confs[i].rss;
	unsigned int mode, n, q;

	rss->func = fuzz_get8(r) % 5;
	rss->level = fuzz_get8(r) % 3;
	rss->types = fuzz_getn(r, 8);
	mode = fuzz_get8(r) % 4;
	if (mode == 1 || mode == 2) {
		rss->key_len = mode == 1 ? 40 : fuzz_get8(r) % (BUF_SZ + 1);
		for (q = 0; q < rss->key_len; q++)
			f->keys[i][q] = fuzz_get8(r);
		rss->key = f->keys[i];
	} else if (mode == 3) {
		rss->key_len = 40;
	}
	n = fuzz_get8(r);
	if (n == 255) {
		n = MANY_QUEUES;
		for (q = 0; q < n; q++)
			f->queues[i][q] = q % NB_RXQ;
	} else {
		n %= 10;
		for (q = 0; q < n; q++)
			f->queues[i][q] = fuzz_get8(r) % (NB_RXQ + 2);
	}
	rss->queue_num = n;
	rss->queue = n != 0 ? f->queues[i] : NULL;
}

static void
decode_actions(struct fuzz_reader *r, struct fuzz_rule *f)
{
	unsigned int n = fuzz_get8(r) % (MAX_ACTIONS + 1), i;

	for (i = 0; i < n; i++) {
		struct rte_flow_action *a = &f->actions[i];
		unsigned int null_conf = fuzz_get8(r) & 1;

		a->type = action_types[fuzz_get8(r) % RTE_DIM(action_types)];
		switch (a->type) {
		case RTE_FLOW_ACTION_TYPE_QUEUE:
			f->confs[i].queue.index = fuzz_get8(r) % (NB_RXQ + 2);
			break;
		case RTE_FLOW_ACTION_TYPE_MARK:
			f->confs[i].mark.id = fuzz_getn(r, 4);
			break;
		case RTE_FLOW_ACTION_TYPE_JUMP:
			f->confs[i].jump.group = fuzz_getn(r, 4);
			break;
		case RTE_FLOW_ACTION_TYPE_RSS:
			decode_rss(r, f, i);
			break;
		case RTE_FLOW_ACTION_TYPE_COUNT:
			f->confs[i].count.id = fuzz_getn(r, 4);
			break;
		case RTE_FLOW_ACTION_TYPE_AGE:
			f->confs[i].age.timeout = fuzz_getn(r, 3);
			break;
		default:
			null_conf = 1;
			break;
		}
		a->conf = null_conf ? NULL : &f->confs[i];
	}
	f->actions[n].type = RTE_FLOW_ACTION_TYPE_END;
}

/*
 * Shaped decoding: the pattern walks the item graph vbr accepts (eth, vlan,
 * ipv4/ipv6, tcp/udp, vxlan, gre, mpls, esp, and the inner headers after a
 * tunnel), with spec and mask bytes only under the bits vbr can match, and
 * the actions are a valid fate (queue, rss, drop) with extras (mark, flag,
 * count, age, jump 0, void), so that most inputs reach rte_flow_create()
 * and what they exercise is the rule, not its rejection.
 */

/* Bits vbr can match per item: documented in doc/guides/design.rst. */
static const struct rte_flow_item_eth shape_eth = {
	.dst.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
	.src.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
	.type = RTE_BE16(0xffff),
};
static const struct rte_flow_item_vlan shape_vlan = {
	.tci = RTE_BE16(0xffff), .inner_type = RTE_BE16(0xffff),
};
static const struct rte_flow_item_ipv4 shape_ipv4 = {
	.hdr = { .src_addr = RTE_BE32(0xffffffff),
		 .dst_addr = RTE_BE32(0xffffffff), .next_proto_id = 0xff,
		 .type_of_service = 0xff, .time_to_live = 0xff },
};
static const struct rte_flow_item_ipv6 shape_ipv6 = {
	.hdr = { .vtc_flow = RTE_BE32(0x0fffffff), .proto = 0xff,
		 .hop_limits = 0xff,
		 /* braced: uint8_t[16], or struct rte_ipv6_addr (24.11) */
		 .src_addr = { "\xff\xff\xff\xff\xff\xff\xff\xff"
			       "\xff\xff\xff\xff\xff\xff\xff\xff" },
		 .dst_addr = { "\xff\xff\xff\xff\xff\xff\xff\xff"
			       "\xff\xff\xff\xff\xff\xff\xff\xff" } },
};
static const struct rte_flow_item_tcp shape_tcp = {
	.hdr = { .src_port = RTE_BE16(0xffff), .dst_port = RTE_BE16(0xffff) },
};
static const struct rte_flow_item_udp shape_udp = {
	.hdr = { .src_port = RTE_BE16(0xffff), .dst_port = RTE_BE16(0xffff) },
};
static const struct rte_flow_item_vxlan shape_vxlan = {
	.vni = { 0xff, 0xff, 0xff },
};
static const struct rte_flow_item_gre shape_gre = {
	.c_rsvd0_ver = RTE_BE16(0xb000), .protocol = RTE_BE16(0xffff),
};
static const struct rte_flow_item_mpls shape_mpls = {
	.label_tc_s = { 0xff, 0xff, 0xff },
};
static const struct rte_flow_item_esp shape_esp = {
	.hdr.spi = RTE_BE32(0xffffffff),
};

enum shape { S_ETH, S_VLAN, S_IPV4, S_IPV6, S_TCP, S_UDP, S_VXLAN, S_GRE,
	     S_MPLS, S_ESP, S_END };

static const struct {
	enum rte_flow_item_type type;
	const void *mask;
	size_t size;
	uint8_t next[5];	/* S_END terminated; after a tunnel: inner */
} shapes[] = {
	[S_ETH] = { RTE_FLOW_ITEM_TYPE_ETH, &shape_eth, sizeof(shape_eth),
		    { S_VLAN, S_IPV4, S_IPV6, S_END } },
	[S_VLAN] = { RTE_FLOW_ITEM_TYPE_VLAN, &shape_vlan, sizeof(shape_vlan),
		     { S_IPV4, S_IPV6, S_END } },
	[S_IPV4] = { RTE_FLOW_ITEM_TYPE_IPV4, &shape_ipv4, sizeof(shape_ipv4),
		     { S_TCP, S_UDP, S_GRE, S_ESP, S_END } },
	[S_IPV6] = { RTE_FLOW_ITEM_TYPE_IPV6, &shape_ipv6, sizeof(shape_ipv6),
		     { S_TCP, S_UDP, S_GRE, S_ESP, S_END } },
	[S_TCP] = { RTE_FLOW_ITEM_TYPE_TCP, &shape_tcp, sizeof(shape_tcp),
		    { S_END } },
	[S_UDP] = { RTE_FLOW_ITEM_TYPE_UDP, &shape_udp, sizeof(shape_udp),
		    { S_VXLAN, S_MPLS, S_END } },
	[S_VXLAN] = { RTE_FLOW_ITEM_TYPE_VXLAN, &shape_vxlan,
		      sizeof(shape_vxlan), { S_ETH, S_END } },
	[S_GRE] = { RTE_FLOW_ITEM_TYPE_GRE, &shape_gre, sizeof(shape_gre),
		    { S_ETH, S_IPV4, S_IPV6, S_MPLS, S_END } },
	[S_MPLS] = { RTE_FLOW_ITEM_TYPE_MPLS, &shape_mpls, sizeof(shape_mpls),
		     { S_ETH, S_IPV4, S_IPV6, S_END } },
	[S_ESP] = { RTE_FLOW_ITEM_TYPE_ESP, &shape_esp, sizeof(shape_esp),
		    { S_END } },
};

static unsigned int
shape_nnext(const uint8_t *next)
{
	unsigned int n = 0;

	while (next[n] != S_END)
		n++;
	return n;
}

/*
 * An item's spec and mask from the input: no spec (the default mask), or
 * bytes under the matchable bits, with the full matchable mask or a
 * subset of it.
 */
static void
shape_item(struct fuzz_reader *r, struct fuzz_rule *f, unsigned int i,
	   unsigned int sh, bool after_tunnel)
{
	const uint8_t *sup = shapes[sh].mask;
	uint8_t *spec = f->bufs[i][0], *mask = f->bufs[i][1];
	unsigned int how = fuzz_get8(r), k;

	f->items[i].type = shapes[sh].type;
	/* any header of this type (a VLAN item needs its VID) */
	if ((how & 3) == 0 && sh != S_VLAN)
		return;
	if (sh == S_VLAN && i > 0 &&
	    f->items[i - 1].type == RTE_FLOW_ITEM_TYPE_ETH &&
	    f->items[i - 1].mask != NULL) {
		/* the type after the tag is vlan's inner_type, not eth's */
		((struct rte_flow_item_eth *)f->bufs[i - 1][1])->type = 0;
		((struct rte_flow_item_eth *)f->bufs[i - 1][0])->type = 0;
	}
	for (k = 0; k < shapes[sh].size; k++) {
		if (sup[k] == 0)
			continue;
		mask[k] = sup[k];
		if ((how & 3) == 2)
			mask[k] &= fuzz_get8(r) & 1 ? 0xff : 0;
		spec[k] = fuzz_get8(r) & mask[k];
	}
	if (sh == S_VLAN) {
		struct rte_flow_item_vlan *v = (void *)spec;
		struct rte_flow_item_vlan *m = (void *)mask;

		/* vbr refuses a VID of 0: it would take untagged frames */
		m->tci |= RTE_BE16(0x0fff);
		if ((v->tci & RTE_BE16(0x0fff)) == 0)
			v->tci |= RTE_BE16(1);
	}
	RTE_SET_USED(after_tunnel);
	f->items[i].spec = spec;
	f->items[i].mask = mask;
}

static void
shape_items(struct fuzz_reader *r, struct fuzz_rule *f)
{
	static const uint8_t start[] = { S_ETH, S_IPV4, S_IPV6, S_END };
	static const uint8_t inner_l3_next[] = { S_TCP, S_UDP, S_END };
	const uint8_t *next = start;
	unsigned int n = 0, choice, nn, sh;
	bool tunnel = false;

	while (n < MAX_ITEMS) {
		nn = shape_nnext(next);
		if (nn == 0)
			break;
		/* one value in 8 ends the pattern early */
		choice = fuzz_get8(r);
		if (n > 0 && (choice & 7) == 7)
			break;
		sh = next[(choice >> 3) % nn];
		shape_item(r, f, n, sh, tunnel);
		tunnel |= sh == S_VXLAN || sh == S_GRE || sh == S_MPLS;
		n++;
		next = shapes[sh].next;
		/* one level of tunnel: no tunnel item inside one */
		if (tunnel && (sh == S_IPV4 || sh == S_IPV6))
			next = inner_l3_next;
		if (tunnel && sh == S_UDP)
			next = shapes[S_TCP].next;
	}
	f->items[n].type = RTE_FLOW_ITEM_TYPE_END;
}

/*
 * What the device and the PMD refuse of a shaped pattern, made to agree:
 * the mlx5 profile matches no IPv4 TTL, IPv6 hop limit or GRE C/K/S bits
 * (their masks are cleared); on both, an IP item's protocol and the L4 or
 * GRE item after it say the same thing, and so do an eth type (or a VLAN
 * item's inner type) and the IP item after it. The raw decoder keeps
 * every such conflict, to be refused.
 */
static void
shape_agree(struct fuzz_rule *f, bool full)
{
	unsigned int i;

	for (i = 0; f->items[i].type != RTE_FLOW_ITEM_TYPE_END; i++) {
		const struct rte_flow_item *it = &f->items[i];
		uint8_t *spec = (uint8_t *)(uintptr_t)it->spec;
		uint8_t *mask = (uint8_t *)(uintptr_t)it->mask;
		uint8_t *ps = NULL, *pm = NULL, proto = 0;
		rte_be16_t *ts = NULL, *tm = NULL, type = 0;

		if (spec == NULL)
			continue;
		switch (it->type) {
		case RTE_FLOW_ITEM_TYPE_IPV4:
			if (!full)
				((struct rte_flow_item_ipv4 *)mask)->hdr.
					time_to_live = 0;
			ps = &((struct rte_flow_item_ipv4 *)spec)->hdr.
				next_proto_id;
			pm = &((struct rte_flow_item_ipv4 *)mask)->hdr.
				next_proto_id;
			type = RTE_BE16(RTE_ETHER_TYPE_IPV4);
			break;
		case RTE_FLOW_ITEM_TYPE_IPV6:
			if (!full)
				((struct rte_flow_item_ipv6 *)mask)->hdr.
					hop_limits = 0;
			ps = &((struct rte_flow_item_ipv6 *)spec)->hdr.proto;
			pm = &((struct rte_flow_item_ipv6 *)mask)->hdr.proto;
			type = RTE_BE16(RTE_ETHER_TYPE_IPV6);
			break;
		case RTE_FLOW_ITEM_TYPE_GRE:
			if (!full)
				((struct rte_flow_item_gre *)mask)->
					c_rsvd0_ver = 0;
			break;
		default:
			break;
		}
		if (type != 0 && i > 0 && f->items[i - 1].spec != NULL) {
			const struct rte_flow_item *b = &f->items[i - 1];

			if (b->type == RTE_FLOW_ITEM_TYPE_ETH) {
				ts = &((struct rte_flow_item_eth *)
				       (uintptr_t)b->spec)->type;
				tm = &((struct rte_flow_item_eth *)
				       (uintptr_t)b->mask)->type;
			} else if (b->type == RTE_FLOW_ITEM_TYPE_VLAN) {
				ts = &((struct rte_flow_item_vlan *)
				       (uintptr_t)b->spec)->inner_type;
				tm = &((struct rte_flow_item_vlan *)
				       (uintptr_t)b->mask)->inner_type;
			}
			if (tm != NULL && *tm != 0) {
				*ts = type;
				*tm = RTE_BE16(0xffff);
			}
		}
		if (pm == NULL || *pm == 0)
			continue;
		switch (f->items[i + 1].type) {
		case RTE_FLOW_ITEM_TYPE_TCP:
			proto = IPPROTO_TCP;
			break;
		case RTE_FLOW_ITEM_TYPE_UDP:
			proto = IPPROTO_UDP;
			break;
		case RTE_FLOW_ITEM_TYPE_GRE:
			proto = IPPROTO_GRE;
			break;
		default:
			continue;
		}
		*ps = proto;
		*pm = 0xff;
	}
}

static const uint64_t shape_rss_types[] = {
	0, RTE_ETH_RSS_IP, RTE_ETH_RSS_UDP, RTE_ETH_RSS_TCP,
	RTE_ETH_RSS_NONFRAG_IPV4_TCP, RTE_ETH_RSS_NONFRAG_IPV6_UDP,
	RTE_ETH_RSS_IPV4, RTE_ETH_RSS_IPV6 | RTE_ETH_RSS_NONFRAG_IPV6_TCP,
};

static void
shape_actions(struct fuzz_reader *r, struct fuzz_rule *f)
{
	unsigned int fate = fuzz_get8(r), extra = fuzz_get8(r), n = 0, q, k;
	struct rte_flow_action *a = f->actions;

	/* Nothing to mark on a drop rule: now and then, to be refused. */
	if (fate % 8 == 6 && (extra & 0x60) != 0x60)
		extra &= ~3u;

	/* Extras first or after the fate, by bit 7. */
	for (k = 0; k < 2; k++) {
		if ((k == 0) == !(extra & 0x80)) {
			if (extra & 1) {
				a[n].type = RTE_FLOW_ACTION_TYPE_MARK;
				f->confs[n].mark.id = fuzz_getn(r, 3) %
						      0xfffffe;
				a[n].conf = &f->confs[n];
				n++;
			} else if (extra & 2) {
				a[n++].type = RTE_FLOW_ACTION_TYPE_FLAG;
			}
			if (extra & 4) {
				a[n].type = RTE_FLOW_ACTION_TYPE_COUNT;
				a[n].conf = &f->confs[n];
				n++;
			}
			if ((extra & 0x18) == 0x18) {
				a[n].type = RTE_FLOW_ACTION_TYPE_AGE;
				f->confs[n].age.timeout =
					1 + fuzz_get8(r) % 60;
				a[n].conf = &f->confs[n];
				n++;
			} else if (extra & 0x10) {
				/* to group 0, the only one */
				a[n].type = RTE_FLOW_ACTION_TYPE_JUMP;
				a[n].conf = &f->confs[n];
				n++;
			} else if (extra & 0x08) {
				a[n++].type = RTE_FLOW_ACTION_TYPE_VOID;
			}
			continue;
		}
		switch (fate % 8) {
		case 4:
		case 5: {
			struct rte_flow_action_rss *rss = &f->confs[n].rss;
			unsigned int nq = 1 + fuzz_get8(r) % NB_RXQ;

			a[n].type = RTE_FLOW_ACTION_TYPE_RSS;
			rss->func = (fate >> 3) & 1 ?
				    RTE_ETH_HASH_FUNCTION_TOEPLITZ :
				    RTE_ETH_HASH_FUNCTION_DEFAULT;
			rss->level = (fate >> 4) & 1;
			rss->types = shape_rss_types[(fate >> 5) % 8];
			if (fuzz_get8(r) & 1) {
				for (q = 0; q < 40; q++)
					f->keys[n][q] = fuzz_get8(r);
				rss->key = f->keys[n];
				rss->key_len = 40;
			}
			for (q = 0; q < nq; q++)
				f->queues[n][q] = fuzz_get8(r) % NB_RXQ;
			rss->queue = f->queues[n];
			rss->queue_num = nq;
			a[n].conf = rss;
			break;
		}
		case 6:
			a[n].type = RTE_FLOW_ACTION_TYPE_DROP;
			break;
		default:
			a[n].type = RTE_FLOW_ACTION_TYPE_QUEUE;
			f->confs[n].queue.index = (fate >> 3) % NB_RXQ;
			a[n].conf = &f->confs[n];
			break;
		}
		n++;
	}
	a[n].type = RTE_FLOW_ACTION_TYPE_END;
}

static void
decode(const uint8_t *data, size_t size, struct fuzz_rule *f)
{
	struct fuzz_reader r = { data, size };
	unsigned int mode;

	memset(f, 0, offsetof(struct fuzz_rule, queues));
	mode = fuzz_get8(&r);
	if (mode != 0xff) {
		/* shaped: flags 16 and (rarely) 32 only */
		f->flags = (mode & 1 ? 16 : 0) |
			   ((mode & 0x1e) == 0x1e ? 32 : 0);
		f->attr.ingress = 1;
		f->attr.priority = fuzz_get8(&r) % 16;
		/* bit 6: the full-profile port, else the default (mlx5) one */
		f->full = !!(mode & 0x40);
		/* the mlx5 port's lowest user level is 2 */
		if (!f->full)
			f->attr.priority %= 3;
		shape_items(&r, f);
		shape_agree(f, f->full);
		shape_actions(&r, f);
		return;
	}
	f->flags = fuzz_get8(&r);
	f->full = !!(f->flags & 64);
	f->attr.ingress = !(f->flags & 1);
	f->attr.egress = !!(f->flags & 2);
	f->attr.transfer = !!(f->flags & 4);
	f->attr.group = !!(f->flags & 8);
	f->attr.priority = fuzz_get8(&r) % 20;
	decode_items(&r, f);
	decode_actions(&r, f);
}

/* A failed call: ret negative, == -rte_errno, error set. */
static void
check_failure(const char *what, int ret, const struct rte_flow_error *err)
{
	FUZZ_ASSERT(ret < 0, "%s: ret %d", what, ret);
	FUZZ_ASSERT(ret == -rte_errno, "%s: ret %d, rte_errno %d", what, ret,
		    rte_errno);
	FUZZ_ASSERT(err->type != RTE_FLOW_ERROR_TYPE_NONE &&
		    (unsigned int)err->type <= RTE_FLOW_ERROR_TYPE_STATE,
		    "%s: error type %d", what, (int)err->type);
	FUZZ_ASSERT(err->message != NULL &&
		    err->message != (const char *)(uintptr_t)0x5a5a5a5a5a5a5a5aull,
		    "%s: no message", what);
	FUZZ_ASSERT(strlen(err->message) > 0, "%s: empty message", what);
}

static struct rte_flow *
create(const struct fuzz_rule *f, bool valid)
{
	struct rte_flow_error err;
	struct rte_flow *flow;

	memset(&err, 0x5a, sizeof(err));
	rte_errno = 0;
	flow = rte_flow_create(port, &f->attr, f->items, f->actions, &err);
	if (flow == NULL) {
		check_failure("create", -rte_errno, &err);
		FUZZ_ASSERT(rte_errno != 0, "create: rte_errno 0");
		/* What validate accepted, create makes, short of memory. */
		FUZZ_ASSERT(!valid || rte_errno == ENOMEM ||
			    rte_errno == ENOSPC,
			    "create refused what validate accepted: %s (%d)",
			    err.message, rte_errno);
	} else {
		FUZZ_ASSERT(valid, "create accepted what validate rejected");
	}
	return flow;
}

static void
destroy(struct rte_flow *flow)
{
	struct rte_flow_error err;
	int ret;

	memset(&err, 0x5a, sizeof(err));
	ret = rte_flow_destroy(port, flow, &err);
	FUZZ_ASSERT(ret == 0, "destroy: %d (%s)", ret,
		    err.message != NULL ? err.message : "?");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_rule f;
	struct rte_flow_error err;
	struct rte_flow *a, *b = NULL;
	bool valid;
	int ret;

	decode(data, size, &f);
	port = f.full ? PORT_FULL : PORT_MLX5;
	memset(&err, 0x5a, sizeof(err));
	rte_errno = 0;
	ret = rte_flow_validate(port, &f.attr, f.items, f.actions, &err);
	valid = ret == 0;
	if (!valid)
		check_failure("validate", ret, &err);
	a = create(&f, valid);
	nb_inputs++;
	nb_valid += valid;
	nb_created += a != NULL;
	if (verbose)
		printf("validate: %s; create: %s\n",
		       valid ? "ok" : err.message,
		       a != NULL ? "ok" : "failed");
	if (a != NULL && (f.flags & 16)) {
		/* The same rule again: refused (EEXIST), naming the first. */
		memset(&err, 0x5a, sizeof(err));
		rte_errno = 0;
		b = rte_flow_create(port, &f.attr, f.items, f.actions, &err);
		FUZZ_ASSERT(b == NULL, "the same rule created twice");
		check_failure("second create", -rte_errno, &err);
		FUZZ_ASSERT(rte_errno == EEXIST || rte_errno == ENOMEM,
			    "second create: %s (%d)", err.message, rte_errno);
	}
	if (a != NULL && (f.flags & 32)) {
		FUZZ_ASSERT(rte_eth_dev_stop(port) == 0, "stop");
		ret = rte_eth_dev_start(port);
		FUZZ_ASSERT(ret == 0, "start with the rule: %d", ret);
	}
	if (a != NULL)
		destroy(a);
	if (b != NULL)
		destroy(b);
	/* a handle that is not a rule: an error, with its message */
	memset(&f.bufs[0][0], (int)f.flags, BUF_SZ);
	memset(&err, 0x5a, sizeof(err));
	rte_errno = 0;
	ret = rte_flow_destroy(port, (struct rte_flow *)f.bufs[0][0], &err);
	check_failure("destroy of a foreign handle", ret, &err);
	return 0;
}

#ifdef FUZZ_LIBFUZZER
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed);

/*
 * libFuzzer's mutations, then the raw decoder (first byte 0xff) kept to
 * one mutant in 16: every new rejection is new coverage, so libFuzzer
 * keeps many raw inputs, and without this spends most runs on inputs that
 * validation refuses.
 */
size_t
LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			unsigned int seed)
{
	size = LLVMFuzzerMutate(data, size, max_size);
	if (size > 0 && data[0] == 0xff && (seed & 15) != 0)
		data[0] = (uint8_t)((seed >> 4) % 0xff);
	return size;
}
#endif

static int
port_setup(struct rte_mempool *mp, uint16_t p, uint16_t nb_rxq)
{
	struct rte_eth_conf conf = { 0 };
	uint16_t q;
	int ret;

	ret = rte_eth_dev_configure(p, nb_rxq, 1, &conf);
	for (q = 0; ret == 0 && q < nb_rxq; q++)
		ret = rte_eth_rx_queue_setup(p, q, 64, SOCKET_ID_ANY, NULL,
					     mp);
	if (ret == 0)
		ret = rte_eth_tx_queue_setup(p, 0, 64, SOCKET_ID_ANY, NULL);
	if (ret == 0)
		ret = rte_eth_dev_start(p);
	return ret;
}

#ifdef FUZZ_LSAN
/*
 * Let LeakSanitizer scan EAL memory: the ports' private data lives there,
 * and what it points to (the queue sets of the started ports, their QPs)
 * would otherwise be reported as leaked by every leak check libFuzzer runs
 * after an input, though it was made once at init and is in use.
 */
static int
lsan_root(const struct rte_memseg_list *msl, void *arg)
{
	(void)arg;
	if (msl->base_va != NULL && msl->len != 0)
		__lsan_register_root_region(msl->base_va, msl->len);
	return 0;
}
#endif

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *pmd = getenv("VBR_PMD");
	char *eal[] = {
		"fuzz_flow", "-l", "0", "--no-huge", "-m", "256",
		"--no-shconf", "--no-pci", "--no-telemetry",
		"--vdev", "net_vbr0,wire=pair:fuzz",
		"--vdev", "net_vbr1,wire=pair:fuzz",
		"--vdev", "net_vbr2,wire=pair:fuzzf,profile=full",
		"--vdev", "net_vbr3,wire=pair:fuzzf,profile=full",
		"--log-level=pmd.net.vbr:critical", "--log-level=lib.eal:error",
		"-d", NULL, /* last: dropped when the PMD is built in */
	};
	int nb_args = RTE_DIM(eal);
	struct rte_mempool *mp;

	(void)argc;
	(void)argv;
	verbose = getenv("FUZZ_FLOW_VERBOSE") != NULL;
#ifdef FUZZ_LIBFUZZER
	atexit(print_figures);
#endif
#ifdef FUZZ_PMD_BUILTIN
	RTE_SET_USED(pmd);
	nb_args -= 2;
#else
#ifdef VBR_PMD_PATH
	if (pmd == NULL)
		pmd = VBR_PMD_PATH;
#endif
	if (pmd == NULL) {
		fprintf(stderr, "fuzz_flow: set VBR_PMD to librte_net_vbr.so\n");
		exit(1);
	}
	eal[nb_args - 1] = (char *)(uintptr_t)pmd;
#endif
	if (rte_eal_init(nb_args, eal) < 0) {
		fprintf(stderr, "fuzz_flow: EAL init failed\n");
		exit(1);
	}
#ifdef FUZZ_LSAN
	rte_memseg_list_walk(lsan_root, NULL);
#endif
	mp = rte_pktmbuf_pool_create("fuzz", 2048, 0, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (mp == NULL || rte_eth_dev_count_avail() < 4 ||
	    port_setup(mp, 0, 1) != 0 || port_setup(mp, PORT_MLX5, NB_RXQ) != 0 ||
	    port_setup(mp, 2, 1) != 0 || port_setup(mp, PORT_FULL, NB_RXQ) != 0) {
		fprintf(stderr, "fuzz_flow: port setup failed\n");
		exit(1);
	}
	return 0;
}

/* The figures: at the replay's end, or when libFuzzer exits. */
static void
print_figures(void)
{
	printf("fuzz_flow: %" PRIu64 " inputs, %" PRIu64 " (%.1f %%) valid, "
	       "%" PRIu64 " (%.1f %%) created\n", nb_inputs, nb_valid,
	       nb_inputs ? 100.0 * nb_valid / nb_inputs : 0.0, nb_created,
	       nb_inputs ? 100.0 * nb_created / nb_inputs : 0.0);
}

void
fuzz_fini(void)
{
	print_figures();
	rte_eal_cleanup();
}
