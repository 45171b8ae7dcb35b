/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Frames and flow rules for the swverbs steering tests: Ethernet (with
 * VLAN tags), IPv4, IPv6, TCP/UDP, VXLAN frames built byte by byte, and
 * ibv_flow_attr buffers with packed specs.
 */

#ifndef SWV_TEST_FRAMES_H
#define SWV_TEST_FRAMES_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "swverbs.h"

/*
 * Frames.
 */
struct fb {
	uint8_t b[512];
	uint32_t len;
};

static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0xa };
static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 0xb };

static inline void
put(struct fb *f, const void *p, uint32_t n)
{
	memcpy(f->b + f->len, p, n);
	f->len += n;
}

static inline void
put16(struct fb *f, uint16_t v)
{
	v = htons(v);
	put(f, &v, 2);
}

static inline void
put32(struct fb *f, uint32_t v)
{
	v = htonl(v);
	put(f, &v, 4);
}

/* Ethernet with nvlan tags (TCI vid, vid + 1). */
static inline void
f_eth(struct fb *f, const uint8_t *dst, int nvlan, uint16_t vid,
      uint16_t type)
{
	int i;

	f->len = 0;
	put(f, dst, 6);
	put(f, mac_b, 6);
	for (i = 0; i < nvlan; i++) {
		put16(f, i == 0 && nvlan == 2 ? 0x88a8 : 0x8100);
		put16(f, (uint16_t)(vid + i));
	}
	put16(f, type);
}

static inline void
f_ipv4(struct fb *f, uint32_t src, uint32_t dst, uint8_t proto, uint8_t tos,
       uint8_t ttl, uint16_t frag, int opt_words)
{
	uint8_t ihl = (uint8_t)(5 + opt_words);
	int i;

	put(f, &(uint8_t){ (uint8_t)(0x40 | ihl) }, 1);
	put(f, &tos, 1);
	put16(f, 100);
	put16(f, 1);
	put16(f, frag);
	put(f, &ttl, 1);
	put(f, &proto, 1);
	put16(f, 0);
	put32(f, src);
	put32(f, dst);
	for (i = 0; i < opt_words; i++)
		put32(f, 0x01010101);
}

static const uint8_t ip6_a[16] = { 0x20, 0x01, 0xd, 0xb8, [15] = 1 };
static const uint8_t ip6_b[16] = { 0x20, 0x01, 0xd, 0xb8, [15] = 2 };

static inline void
f_ipv6(struct fb *f, const uint8_t *src, const uint8_t *dst, uint8_t nh,
       uint8_t tc, uint32_t label, uint8_t hop)
{
	put32(f, (6u << 28) | ((uint32_t)tc << 20) | (label & 0xfffff));
	put16(f, 64);
	put(f, &nh, 1);
	put(f, &hop, 1);
	put(f, src, 16);
	put(f, dst, 16);
}

static inline void
f_l4(struct fb *f, uint16_t sp, uint16_t dp, int tcp)
{
	int i;

	put16(f, sp);
	put16(f, dp);
	for (i = 0; i < (tcp ? 16 : 4); i++)
		put(f, &(uint8_t){ 0 }, 1);
}

static inline void
f_pad(struct fb *f)
{
	while (f->len < 80)
		put(f, &(uint8_t){ 0xee }, 1);
}

/* Ethernet / IPv4 / UDP with the given ports. */
static inline void
f_udp4(struct fb *f, uint32_t src, uint32_t dst, uint16_t sp, uint16_t dp)
{
	f_eth(f, mac_a, 0, 0, 0x0800);
	f_ipv4(f, src, dst, 17, 0, 64, 0, 0);
	f_l4(f, sp, dp, 0);
	f_pad(f);
}

/* eth / IPv4 / UDP 4789 / VXLAN vni / inner eth / inner IPv4 / inner L4 */
static inline void
f_vxlan(struct fb *f, uint32_t vni, uint32_t isrc, uint16_t idp, int itcp)
{
	f_eth(f, mac_a, 0, 0, 0x0800);
	f_ipv4(f, 0x0a000001, 0x0a000002, 17, 0, 64, 0, 0);
	f_l4(f, 1234, 4789, 0);
	put32(f, 0x08000000);
	put32(f, vni << 8);
	put(f, mac_b, 6);
	put(f, mac_a, 6);
	put16(f, 0x0800);
	f_ipv4(f, isrc, 0x0b000002, itcp ? 6 : 17, 0, 64, 0, 0);
	f_l4(f, 99, idp, itcp);
	f_pad(f);
}

/*
 * Rules.
 */
struct rb {
	union {
		struct ibv_flow_attr attr;
		uint8_t b[1024];
	};
};

static inline void
r_init(struct rb *r, enum ibv_flow_attr_type type, uint16_t prio)
{
	memset(r, 0, sizeof(*r));
	r->attr.type = type;
	r->attr.size = sizeof(r->attr);
	r->attr.priority = prio;
	r->attr.port = 1;
}

static inline void *
r_add(struct rb *r, uint32_t type, uint16_t size)
{
	uint8_t *h = r->b + r->attr.size;
	struct ibv_flow_spec spec;

	/* specs are packed: the header may sit at 4 modulo 8 */
	spec.hdr.type = type;
	spec.hdr.size = size;
	memcpy(h, &spec.hdr, sizeof(spec.hdr));
	r->attr.size += size;
	r->attr.num_of_specs++;
	return h;
}

/* A COUNT spec of c: its pointer stored bytewise (it may sit at 4 mod 8). */
static inline void
r_count(struct rb *r, struct ibv_counters *c)
{
	uint8_t *h = r_add(r, IBV_FLOW_SPEC_ACTION_COUNT,
			   sizeof(struct ibv_flow_spec_counter_action));

	memcpy(h + offsetof(struct ibv_flow_spec_counter_action, counters),
	       &c, sizeof(c));
}

static inline struct ibv_flow_spec_eth *
r_eth(struct rb *r, bool inner)
{
	return r_add(r, IBV_FLOW_SPEC_ETH | (inner ? IBV_FLOW_SPEC_INNER : 0),
		     sizeof(struct ibv_flow_spec_eth));
}

static inline struct ibv_flow_spec_ipv4_ext *
r_ip4(struct rb *r, bool inner)
{
	return r_add(r, IBV_FLOW_SPEC_IPV4_EXT |
		     (inner ? IBV_FLOW_SPEC_INNER : 0),
		     sizeof(struct ibv_flow_spec_ipv4_ext));
}

static inline struct ibv_flow_spec_tcp_udp *
r_l4(struct rb *r, bool tcp, bool inner)
{
	return r_add(r, (tcp ? IBV_FLOW_SPEC_TCP : IBV_FLOW_SPEC_UDP) |
		     (inner ? IBV_FLOW_SPEC_INNER : 0),
		     sizeof(struct ibv_flow_spec_tcp_udp));
}

static inline struct ibv_flow *
r_create(struct rb *r, struct ibv_qp *qp)
{
	return swv_create_flow(qp, &r->attr);
}

#endif /* SWV_TEST_FRAMES_H */
