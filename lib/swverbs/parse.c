/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The frame parser: one pass over the first SWV_HDR_COPY bytes of a frame
 * builds a struct swv_flow_key (outer Ethernet with up to two VLAN tags,
 * IPv4/IPv6, TCP/UDP ports, VXLAN, GRE, MPLS, ESP, and the inner
 * Ethernet/IP/L4 after a tunnel). The common words are built in registers
 * and stored whole; only the words that say which headers are present are
 * always written, the others hold junk unless their presence byte says
 * otherwise (every rule that looks at a field also matches its presence
 * byte). Each frame is parsed once; the classifier and RSS read the key.
 */

#include <netinet/in.h>
#include <stdbool.h>
#include <string.h>

#include "swv_priv.h"

#define SWV_VXLAN_PORT 4789
#define SWV_MPLS_UDP_PORT 6635
#define SWV_MPLS_MAX_LABELS 8

/* Bytes at offset i of a key word, for either byte order. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SWV_B8(v, i) ((uint64_t)(uint8_t)(v) << (8 * (i)))
#define SWV_B16(v, i) ((uint64_t)(uint16_t)(v) << (8 * (i)))
#define SWV_B32(v, i) ((uint64_t)(uint32_t)(v) << (8 * (i)))
#define SWV_M48 ((1ull << 48) - 1)
#else
#define SWV_B8(v, i) ((uint64_t)(uint8_t)(v) << (56 - 8 * (i)))
#define SWV_B16(v, i) ((uint64_t)(uint16_t)(v) << (48 - 8 * (i)))
#define SWV_B32(v, i) ((uint64_t)(uint32_t)(v) << (32 - 8 * (i)))
#define SWV_M48 (~0ull << 16)
#endif

/* Word offsets of a header level in the key. */
#define SWV_KW_OUTER 0
#define SWV_KW_INNER 12

static inline uint16_t
ld16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static inline uint32_t
ld32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t
ld64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline bool
is_vlan(uint16_t type)
{
	return type == htons(0x8100) || type == htons(0x88a8);
}

/*
 * Ethernet at buf[0] with up to two VLAN tags (the first TCI is matched) into
 * key words w and w + 1. The caller checked len >= 14. Return the offset of
 * the payload; *type is its ether type, *cvlan SWV_TAG_ANY when tagged,
 * with SWV_TAG_C when the first tag is an 802.1Q C-tag (what an mlx5 VLAN
 * match asks for).
 */
static inline uint32_t
parse_eth(union swv_key *k, unsigned int w, const uint8_t *buf, uint32_t len,
	  uint16_t *type, uint8_t *cvlan)
{
	uint64_t a = ld64(buf), b = ld64(buf + 6);
	uint16_t t = ld16(buf + 12), vlan = 0;
	uint32_t off = 14;

	*cvlan = 0;
	if (SWV_UNLIKELY(is_vlan(t)) && len >= 18) {
		*cvlan = SWV_TAG_ANY | (t == htons(0x8100) ? SWV_TAG_C : 0);
		vlan = ld16(buf + 14);
		t = ld16(buf + 16);
		off = 18;
		if (is_vlan(t) && len >= 22) {
			t = ld16(buf + 20);
			off = 22;
		}
	}
	k->w[w] = (a & SWV_M48) | SWV_B16(vlan, 6);
	k->w[w + 1] = (b & SWV_M48) | SWV_B16(t, 6);
	*type = t;
	return off;
}

/*
 * IPv4 at buf[off] into the header level at key word w (eth: whether it
 * came with an Ethernet header). Return the offset of the L4 header, or 0
 * when there is none to look at (short, not IPv4, a non-first fragment).
 */
static inline uint32_t
parse_ipv4(union swv_key *k, unsigned int w, const uint8_t *buf,
	   uint32_t off, uint32_t len, uint8_t eth)
{
	const uint8_t *ip = buf + off;
	uint32_t ihl, l4off, ports = 0;
	uint8_t l4 = 0;
	bool first;

	if (SWV_UNLIKELY(len < off + 20))
		return 0;
	ihl = (ip[0] & 0xf) * 4u;
	if (SWV_UNLIKELY((ip[0] >> 4) != 4 || ihl < 20 || len < off + ihl))
		return 0;
	l4off = off + ihl;
	first = ((ip[6] & 0x1f) | ip[7]) == 0;
	if (SWV_LIKELY(first && (ip[9] == IPPROTO_UDP ||
				 ip[9] == IPPROTO_TCP) &&
		       len >= l4off + 4)) {
		l4 = ip[9];
		ports = ld32(buf + l4off);
	}
	/* ipflags: reserved 0x1, DF 0x2, MF 0x4, offset not 0 0x8. */
	k->w[w + 2] = SWV_B8(4, 0) | SWV_B8(ip[9], 1) | SWV_B8(ip[1], 2) |
		      SWV_B8(ip[8], 3) |
		      SWV_B8((ip[6] >> 7) | ((ip[6] >> 5) & 0x2) |
			     ((ip[6] >> 3) & 0x4) | (first ? 0 : 0x8), 4) |
		      SWV_B8(l4, 5) | SWV_B8(eth, 6);
	k->w[w + 3] = SWV_B32(ports, 0);
	k->w[w + 4] = SWV_B32(ld32(ip + 12), 0);
	k->w[w + 6] = SWV_B32(ld32(ip + 16), 0);
	return first ? l4off : 0;
}

/* IPv6, as parse_ipv4(). Extension headers are not walked. */
static inline uint32_t
parse_ipv6(union swv_key *k, unsigned int w, const uint8_t *buf,
	   uint32_t off, uint32_t len, uint8_t eth)
{
	const uint8_t *ip = buf + off;
	uint32_t l4off = off + 40, ports = 0, vtc;
	uint8_t l4 = 0, tc;

	if (SWV_UNLIKELY(len < l4off || (ip[0] >> 4) != 6))
		return 0;
	if ((ip[6] == IPPROTO_UDP || ip[6] == IPPROTO_TCP) &&
	    len >= l4off + 4) {
		l4 = ip[6];
		ports = ld32(buf + l4off);
	}
	vtc = ld32(ip);
	tc = (uint8_t)((ip[0] << 4) | (ip[1] >> 4));
	k->w[w + 2] = SWV_B8(6, 0) | SWV_B8(ip[6], 1) | SWV_B8(tc, 2) |
		      SWV_B8(ip[7], 3) | SWV_B8(l4, 5) | SWV_B8(eth, 6);
	k->w[w + 3] = SWV_B32(ports, 0) |
		      SWV_B32(vtc & htonl(0xfffff), 4);
	k->w[w + 4] = ld64(ip + 8);
	k->w[w + 5] = ld64(ip + 16);
	k->w[w + 6] = ld64(ip + 24);
	k->w[w + 7] = ld64(ip + 32);
	return l4off;
}

/* IPv4 or IPv6 by ether type (0: neither). */
static inline uint32_t
parse_ip(union swv_key *k, unsigned int w, const uint8_t *buf, uint32_t off,
	 uint32_t len, uint16_t type, uint8_t eth)
{
	if (type == htons(0x0800))
		return parse_ipv4(k, w, buf, off, len, eth);
	if (type == htons(0x86dd))
		return parse_ipv6(k, w, buf, off, len, eth);
	return 0;
}

/* The headers after a tunnel, from an inner Ethernet header. */
static void
parse_inner_eth(union swv_key *k, const uint8_t *buf, uint32_t off,
		uint32_t len)
{
	uint16_t type;
	uint8_t cv;
	uint32_t o;

	if (len < off + 14)
		return;
	o = off + parse_eth(k, SWV_KW_INNER, buf + off, len - off, &type,
			    &cv);
	k->w[SWV_KW_INNER + 2] = SWV_B8(1, 6);
	parse_ip(k, SWV_KW_INNER, buf, o, len, type, 1);
	k->k.inner.cvlan = cv;
}

/*
 * IP with no Ethernet header: of version ver (what a GRE protocol field
 * says), or (ver 0, after MPLS) told by its version nibble.
 */
static void
parse_inner_ip(union swv_key *k, const uint8_t *buf, uint32_t off,
	       uint32_t len, unsigned int ver)
{
	if (len < off + 1)
		return;
	if (ver == 0)
		ver = buf[off] >> 4;
	if (ver == 4)
		parse_ipv4(k, SWV_KW_INNER, buf, off, len, 0);
	else if (ver == 6)
		parse_ipv6(k, SWV_KW_INNER, buf, off, len, 0);
}

/* An MPLS label stack: the top entry is matched, IP follows the bottom. */
static void
parse_mpls(union swv_key *k, const uint8_t *buf, uint32_t off, uint32_t len)
{
	unsigned int i;

	if (len < off + 4)
		return;
	k->k.tun |= SWV_TUN_MPLS;
	k->k.mpls = ld32(buf + off);
	for (i = 0; i < SWV_MPLS_MAX_LABELS && len >= off + 4; i++) {
		bool bos = (buf[off + 2] & 1) != 0;

		off += 4;
		if (bos) {
			parse_inner_ip(k, buf, off, len, 0);
			return;
		}
	}
}

/* GRE at buf[off]: flags, protocol, key; then what it carries. */
static void
parse_gre(union swv_key *k, const uint8_t *buf, uint32_t off, uint32_t len)
{
	uint16_t flags, proto;
	uint32_t o = off + 4;

	if (len < o)
		return;
	flags = ld16(buf + off);
	proto = ld16(buf + off + 2);
	k->k.tun |= SWV_TUN_GRE;
	k->k.gre_flags = flags;
	k->k.gre_proto = proto;
	k->k.gre_key = 0;
	if (flags & htons(0x8000))
		o += 4;
	if (flags & htons(0x2000)) {
		if (len < o + 4)
			return;
		k->k.gre_key = ld32(buf + o);
		o += 4;
	}
	if (flags & htons(0x1000))
		o += 4;
	if (proto == htons(0x6558))
		parse_inner_eth(k, buf, o, len);
	else if (proto == htons(0x0800))
		parse_inner_ip(k, buf, o, len, 4);
	else if (proto == htons(0x86dd))
		parse_inner_ip(k, buf, o, len, 6);
	else if (proto == htons(0x8847))
		parse_mpls(k, buf, o, len);
}

/* The rare headers after the outer L3/L4: tunnels and ESP. */
static void
parse_tunnel(union swv_key *k, const uint8_t *buf, uint32_t l4off,
	     uint32_t len)
{
	uint8_t proto = k->k.outer.proto;
	uint8_t *t;

	if (k->k.outer.l4 == IPPROTO_UDP) {
		if (k->k.outer.dport == htons(SWV_VXLAN_PORT)) {
			if (len < l4off + 16)
				return;
			k->k.tun = SWV_TUN_VXLAN;
			t = (uint8_t *)&k->k.tunnel_id;
			t[0] = 0;
			memcpy(t + 1, buf + l4off + 12, 3);
			parse_inner_eth(k, buf, l4off + 16, len);
		} else if (k->k.outer.dport == htons(SWV_MPLS_UDP_PORT)) {
			parse_mpls(k, buf, l4off + 8, len);
		}
	} else if (proto == IPPROTO_GRE) {
		parse_gre(k, buf, l4off, len);
	} else if (proto == IPPROTO_ESP && len >= l4off + 8) {
		k->k.tun = SWV_TUN_ESP;
		k->k.esp_spi = ld32(buf + l4off);
		k->k.esp_seq = ld32(buf + l4off + 4);
	}
}

void
swv_parse(struct swv_pkt *pkt, const uint8_t *buf, uint32_t len)
{
	union swv_key *k = &pkt->key;
	uint32_t off, l4off;
	uint16_t type;
	uint8_t cv;

	/* The presence words: everything else is junk unless they say. */
	k->w[SWV_KW_OUTER_L3] = 0;
	k->w[SWV_KW_TUN] = 0;
	k->w[SWV_KW_INNER_L3] = 0;
	if (SWV_UNLIKELY(len < 14)) {
		k->w[0] = 0;
		k->w[1] = 0;
		memcpy(k->k.outer.dmac, buf, len < 6 ? len : 6);
		return;
	}
	off = parse_eth(k, SWV_KW_OUTER, buf, len, &type, &cv);
	if (SWV_LIKELY(type == htons(0x0800))) {
		l4off = parse_ipv4(k, SWV_KW_OUTER, buf, off, len, 1);
	} else if (type == htons(0x86dd)) {
		l4off = parse_ipv6(k, SWV_KW_OUTER, buf, off, len, 1);
	} else {
		k->k.outer.cvlan = cv;
		if (type == htons(0x8847))
			parse_mpls(k, buf, off, len);
		return;
	}
	k->k.outer.cvlan = cv;
	if (SWV_UNLIKELY(l4off == 0))
		return;
	if (k->k.outer.l4 == IPPROTO_UDP) {
		if (SWV_UNLIKELY(k->k.outer.dport == htons(SWV_VXLAN_PORT) ||
				 k->k.outer.dport ==
				 htons(SWV_MPLS_UDP_PORT)))
			parse_tunnel(k, buf, l4off, len);
	} else if (SWV_UNLIKELY(k->k.outer.proto == IPPROTO_GRE ||
				k->k.outer.proto == IPPROTO_ESP)) {
		parse_tunnel(k, buf, l4off, len);
	}
}
