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
_Static_assert(offsetof(struct swv_hdr_key, cvlan) == 8 * 2 + 7,
	       "cvlan: byte 7 of a header level's word 2");

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
	k->w[SWV_KW_INNER + 2] |= SWV_B8(cv, 7);
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

	pkt->l3off = 0;
	pkt->l4off = 0;
	/*
	 * The presence words: everything else is junk unless they say. The
	 * words of the Ethernet and IP headers are written whole (the bytes
	 * of a word put together first, a byte added by a load and a store
	 * of the word): the lookup reads the words right after, and a word
	 * load cannot be served from a word's worth of narrower stores still
	 * in the store buffer. Tunnel fields, rarer, are stored one by one.
	 */
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
		k->w[SWV_KW_OUTER_L3] |= SWV_B8(cv, 7);
		if (type == htons(0x8847))
			parse_mpls(k, buf, off, len);
		return;
	}
	k->w[SWV_KW_OUTER_L3] |= SWV_B8(cv, 7);
	pkt->l3off = (uint16_t)off;
	pkt->l4off = (uint16_t)l4off;
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

/*
 * Internet checksums (RFC 1071) over a frame in iovecs. Sums are taken of
 * native-order words, which gives the right bytes when stored natively;
 * a piece that starts at an odd offset of the summed stream adds its sum
 * byte-swapped.
 */
struct csum_acc {
	uint64_t sum;
	uint32_t odd;	/* bytes summed so far, odd */
};

static inline uint16_t
csum_fold(uint64_t s)
{
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* Sum of n bytes starting at an even offset of their stream. */
static uint16_t
csum_bytes(const uint8_t *p, uint32_t n)
{
	uint64_t s = 0;
	uint8_t last[2] = { 0, 0 };

	for (; n >= 8; p += 8, n -= 8)
		s += (uint64_t)ld32(p) + ld32(p + 4);
	for (; n >= 2; p += 2, n -= 2)
		s += ld16(p);
	if (n == 1) {
		last[0] = p[0];
		s += ld16(last);
	}
	return csum_fold(s);
}

static inline void
csum_add(struct csum_acc *a, const uint8_t *p, uint32_t n)
{
	uint16_t s = csum_bytes(p, n);

	if (a->odd)
		s = (uint16_t)((s << 8) | (s >> 8));
	a->sum += s;
	a->odd ^= n & 1;
}

static void
csum_piece(void *arg, const uint8_t *p, uint32_t n)
{
	csum_add(arg, p, n);
}

/* Add bytes [off, off + n) of the frame in iov. */
static void
csum_add_iov(struct csum_acc *a, const struct iovec *iov, int iovcnt,
	     uint32_t off, uint32_t n)
{
	swv_iov_each(iov, iovcnt, off, n, csum_piece, a);
}

/* The pseudo header's sum: addresses (alen bytes each), protocol, length. */
static void
csum_pseudo(struct csum_acc *a, const uint8_t *src, const uint8_t *dst,
	    uint32_t alen, uint8_t proto, uint32_t l4len)
{
	uint8_t tail[8] = { 0 };

	csum_add(a, src, alen);
	csum_add(a, dst, alen);
	tail[0] = (uint8_t)(l4len >> 24);
	tail[1] = (uint8_t)(l4len >> 16);
	tail[2] = (uint8_t)(l4len >> 8);
	tail[3] = (uint8_t)l4len;
	tail[7] = proto;
	csum_add(a, tail, 8);
}

bool
swv_rx_csum_ok(const struct swv_pkt *pkt, const struct iovec *iov,
	       int iovcnt, uint32_t len)
{
	const struct swv_hdr_key *o = &pkt->key.k.outer;
	uint32_t l3 = pkt->l3off, ihl, tot, l4len, min;
	struct csum_acc a = { 0, 0 };
	uint8_t ip[60], l4[8];

	/* What a ConnectX calls IP_CSUM_OK: IPv4, TCP or UDP, no fragment. */
	if (o->l3 != 4 || pkt->l4off == 0 ||
	    (o->proto != IPPROTO_TCP && o->proto != IPPROTO_UDP) ||
	    len < l3 + 20)
		return false;
	swv_iov_copy(ip, iov, iovcnt, l3, 20);
	ihl = (ip[0] & 0xf) * 4u;
	tot = ((uint32_t)ip[2] << 8) | ip[3];
	if ((ip[6] & 0x3f) != 0 || ip[7] != 0)	/* MF, or an offset */
		return false;
	min = o->proto == IPPROTO_TCP ? 20 : 8;
	if (tot < ihl + min || len < l3 + tot)
		return false;
	swv_iov_copy(ip, iov, iovcnt, l3, ihl);
	csum_add(&a, ip, ihl);
	if (csum_fold(a.sum) != 0xffff)
		return false;
	l4len = tot - ihl;
	if (o->proto == IPPROTO_UDP) {
		swv_iov_copy(l4, iov, iovcnt, l3 + ihl, 8);
		if (l4[6] == 0 && l4[7] == 0)
			return true;	/* sent without a checksum */
	}
	a.sum = 0;
	a.odd = 0;
	csum_pseudo(&a, ip + 12, ip + 16, 4, o->proto, l4len);
	csum_add_iov(&a, iov, iovcnt, l3 + ihl, l4len);
	return csum_fold(a.sum) == 0xffff;
}

int
swv_tx_csum_fill(const struct iovec *iov, int iovcnt, uint32_t len,
		 uint8_t *hdr, struct iovec *out)
{
	uint32_t l3, l4 = 0, l4len = 0, copy, coff = 0, ihl = 0, i;
	struct csum_acc a = { 0, 0 };
	uint16_t type, sum;
	uint8_t proto = 0;
	int n, k;

	if (len < 14)
		return 0;
	copy = len < SWV_CSUM_HDR_MAX ? len : SWV_CSUM_HDR_MAX;
	swv_iov_copy(hdr, iov, iovcnt, 0, copy);
	type = ld16(hdr + 12);
	l3 = 14;
	for (i = 0; i < 2 && is_vlan(type) && copy >= l3 + 4; i++) {
		type = ld16(hdr + l3 + 2);
		l3 += 4;
	}
	if (type == htons(0x0800) && copy >= l3 + 20 &&
	    (hdr[l3] >> 4) == 4) {
		uint32_t tot = ((uint32_t)hdr[l3 + 2] << 8) | hdr[l3 + 3];

		ihl = (hdr[l3] & 0xf) * 4u;
		if (ihl < 20 || copy < l3 + ihl || tot < ihl ||
		    len < l3 + tot)
			return 0;
		hdr[l3 + 10] = 0;
		hdr[l3 + 11] = 0;
		csum_add(&a, hdr + l3, ihl);
		sum = (uint16_t)~csum_fold(a.sum);
		memcpy(hdr + l3 + 10, &sum, 2);
		copy = l3 + ihl;	/* the header, at least */
		if ((hdr[l3 + 6] & 0x3f) == 0 && hdr[l3 + 7] == 0) {
			proto = hdr[l3 + 9];
			l4 = l3 + ihl;
			l4len = tot - ihl;
		}
	} else if (type == htons(0x86dd) && copy >= l3 + 40 &&
		   (hdr[l3] >> 4) == 6) {
		proto = hdr[l3 + 6];
		l4 = l3 + 40;
		l4len = ((uint32_t)hdr[l3 + 4] << 8) | hdr[l3 + 5];
		if (len < l4 + l4len)
			return 0;
		copy = 0;
	} else {
		return 0;
	}
	if (proto == IPPROTO_TCP && l4len >= 20)
		coff = 16;
	else if (proto == IPPROTO_UDP && l4len >= 8)
		coff = 6;
	if (coff != 0 && l4 + coff + 2 <= SWV_CSUM_HDR_MAX) {
		hdr[l4 + coff] = 0;
		hdr[l4 + coff + 1] = 0;
		a.sum = 0;
		a.odd = 0;
		if (ihl != 0)
			csum_pseudo(&a, hdr + l3 + 12, hdr + l3 + 16, 4, proto,
				    l4len);
		else
			csum_pseudo(&a, hdr + l3 + 8, hdr + l3 + 24, 16, proto,
				    l4len);
		copy = l4 + coff + 2;
		csum_add(&a, hdr + l4, coff + 2);
		csum_add_iov(&a, iov, iovcnt, copy, l4len - coff - 2);
		sum = (uint16_t)~csum_fold(a.sum);
		if (proto == IPPROTO_UDP && sum == 0)
			sum = 0xffff;	/* 0 says "no checksum" */
		memcpy(hdr + l4 + coff, &sum, 2);
	}
	if (copy == 0)
		return 0;	/* IPv6 with nothing to fill */
	/* The copy in front, then the frame from where it ends. */
	out[0].iov_base = hdr;
	out[0].iov_len = copy;
	n = 1;
	for (k = 0; k < iovcnt; k++) {
		uint32_t l = (uint32_t)iov[k].iov_len;

		if (copy >= l) {
			copy -= l;
			continue;
		}
		out[n].iov_base = (uint8_t *)iov[k].iov_base + copy;
		out[n].iov_len = l - copy;
		copy = 0;
		n++;
	}
	return n;
}
