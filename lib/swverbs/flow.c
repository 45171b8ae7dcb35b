/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Flow steering and RSS.
 *
 * Parser: one pass over the first SWV_HDR_COPY bytes of a frame builds a
 * struct swv_flow_key (outer Ethernet with up to two VLAN tags, IPv4/IPv6,
 * TCP/UDP ports, VXLAN, GRE, MPLS, ESP, and the inner Ethernet/IP/L4 after a
 * tunnel). The common words are built in registers and stored whole; only
 * the words that say which headers are present are always written, the
 * others hold junk unless their presence byte says otherwise (every rule
 * that looks at a field also matches its presence byte).
 *
 * Table (tuple space search): a rule is a mask and a masked value over the
 * key, and a rank (class, priority, creation sequence), lower wins; NORMAL
 * rules come before MC_DEFAULT, MC_DEFAULT before ALL_DEFAULT. Rules are
 * grouped by mask into subtables; a subtable keeps only the key words its
 * mask touches and an open-addressing hash (linear probing) of the masked
 * values. Rules with the same mask and value form a list sorted by rank whose
 * head sits in the hash. The published array of subtables (struct
 * swv_steer) is sorted by the best (class, priority) of each; a lookup walks
 * it and stops at the first subtable that cannot beat the match it has, so
 * its cost grows with the number of distinct masks, not of rules.
 *
 * Updates are incremental and lock-free for the engine (the only reader):
 * slots are written with single pointer stores (a new head, or a
 * tombstone), a grown or cleaned hash and a changed subtable array are
 * built aside and published with rcu_assign_pointer(). What the engine may
 * still see (removed rules, old hashes and arrays) goes to a retire list
 * that is freed in batches after one synchronize_rcu(), never one grace
 * period per update.
 */

#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "swv_priv.h"

/* Rule classes, the top bits of a rank. */
#define SWV_CLASS_NORMAL 0ull
#define SWV_CLASS_MC 1ull
#define SWV_CLASS_ALL 2ull
#define SWV_RANK_CLASS_SHIFT 62
#define SWV_RANK_PRIO_SHIFT 46
#define SWV_RANK_SEQ_MASK ((1ull << SWV_RANK_PRIO_SHIFT) - 1)
_Static_assert((SWV_CLASS_MC << SWV_RANK_CLASS_SHIFT) == SWV_RANK_LEFTOVERS,
	       "leftovers rank");

/* The mlx5 profile: 16 priorities, then the multicast level, 10 specs. */
#define SWV_MLX5_MAX_PRIO 15
#define SWV_PRIO_MCAST (SWV_MLX5_MAX_PRIO + 1)
#define SWV_MLX5_MAX_SPECS 10

/* Objects retired before a batched grace period. */
#define SWV_RETIRE_BATCH 4096

#define SWV_VXLAN_PORT 4789
#define SWV_MPLS_UDP_PORT 6635
#define SWV_MPLS_MAX_LABELS 8

/*
 * Parser.
 */

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
 * the payload; *type is its ether type, *cvlan 1 when the first tag is an
 * 802.1Q C-tag (what an mlx5 VLAN match asks for).
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
		*cvlan = t == htons(0x8100);
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
	k->w[w + 2] = SWV_B8(4, 0) | SWV_B8(ip[9], 1) | SWV_B8(ip[1], 2) |
		      SWV_B8(ip[8], 3) | SWV_B8(ip[6] >> 5, 4) |
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

/* IP with no Ethernet header, told by its version nibble. */
static void
parse_inner_ip(union swv_key *k, const uint8_t *buf, uint32_t off,
	       uint32_t len)
{
	if (len < off + 1)
		return;
	if ((buf[off] >> 4) == 4)
		parse_ipv4(k, SWV_KW_INNER, buf, off, len, 0);
	else if ((buf[off] >> 4) == 6)
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
			parse_inner_ip(k, buf, off, len);
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
	else if (proto == htons(0x0800) || proto == htons(0x86dd))
		parse_inner_ip(k, buf, o, len);
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

/*
 * Toeplitz hash, as in Microsoft's RSS specification: for every set bit of
 * the input, XOR in the 32 bits of the key that start at that bit.
 */
uint32_t
swv_toeplitz(const uint8_t *key, const uint8_t *data, unsigned int len)
{
	uint32_t hash = 0;
	uint64_t win;
	unsigned int i;
	int b;

	/* win holds key bits [8i, 8i + 64) left-aligned. */
	win = 0;
	for (i = 0; i < 8; i++)
		win = (win << 8) | key[i];
	for (i = 0; i < len; i++) {
		uint8_t d = data[i];

		for (b = 0; b < 8; b++)
			if (d & (0x80 >> b))
				hash ^= (uint32_t)(win >> (32 - b));
		win = (win << 8) | (i + 8 < len + 4 ? key[i + 8] : 0);
	}
	return hash;
}

uint32_t
swv_rss_hash(const struct swv_qp *qp, const struct swv_pkt *pkt)
{
	const struct swv_hdr_key *h = &pkt->key.k.outer;
	uint64_t f = qp->hash_fields;
	uint8_t in[36];
	unsigned int n = 0, alen;

	if (h->l3 == 4) {
		alen = 4;
		f &= ~(uint64_t)(IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6);
	} else if (h->l3 == 6) {
		alen = 16;
		f &= ~(uint64_t)(IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4);
	} else {
		return 0;
	}
	if (f & (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_SRC_IPV6)) {
		memcpy(in + n, h->src, alen);
		n += alen;
	}
	if (f & (IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_DST_IPV6)) {
		memcpy(in + n, h->dst, alen);
		n += alen;
	}
	if (h->l4 == IPPROTO_TCP) {
		if (f & IBV_RX_HASH_SRC_PORT_TCP) {
			memcpy(in + n, &h->sport, 2);
			n += 2;
		}
		if (f & IBV_RX_HASH_DST_PORT_TCP) {
			memcpy(in + n, &h->dport, 2);
			n += 2;
		}
	} else if (h->l4 == IPPROTO_UDP) {
		if (f & IBV_RX_HASH_SRC_PORT_UDP) {
			memcpy(in + n, &h->sport, 2);
			n += 2;
		}
		if (f & IBV_RX_HASH_DST_PORT_UDP) {
			memcpy(in + n, &h->dport, 2);
			n += 2;
		}
	}
	if (n == 0)
		return 0;
	return swv_toeplitz(qp->hash_key, in, n);
}

/*
 * Steering table.
 */
#define SWV_HASH_MUL 0x9e3779b97f4a7c15ull

static inline uint32_t
hash_fin(uint64_t h)
{
	h ^= h >> 29;
	h *= SWV_HASH_MUL;
	return (uint32_t)(h >> 32);
}

static uint32_t
words_hash(const uint64_t *w, unsigned int n)
{
	uint64_t h = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		h = (h ^ w[i]) * SWV_HASH_MUL;
	return hash_fin(h);
}

static inline bool
words_eq(const uint64_t *a, const uint64_t *b, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

const struct swv_flow *
swv_steer_lookup(const struct swv_steer *st, const struct swv_pkt *pkt)
{
	const struct swv_flow *best = NULL, *f;
	const struct swv_subtable *sub;
	const struct swv_slots *sl;
	uint64_t best_rank = UINT64_MAX, mk[SWV_KEY_WORDS], h;
	uint32_t i, j, nw, h32;

	if (st == NULL)
		return NULL;
	for (i = 0; i < st->nsub; i++) {
		if (st->sub[i].base > best_rank)
			break;
		sub = st->sub[i].sub;
		nw = sub->nw;
		h = 0;
		for (j = 0; j < nw; j++) {
			mk[j] = pkt->key.w[sub->idx[j]] & sub->mask[j];
			h = (h ^ mk[j]) * SWV_HASH_MUL;
		}
		h32 = hash_fin(h);
		sl = rcu_dereference(sub->slots);
		for (j = h32;; j++) {
			const struct swv_slot *s = &sl->slot[j & sl->mask];

			f = rcu_dereference(s->f);
			if (f == NULL)
				break;
			if (SWV_LOAD(&s->hash) != h32 || f == SWV_SLOT_TOMB ||
			    !words_eq(f->key, mk, nw))
				continue;
			if (f->rank < best_rank) {
				best_rank = f->rank;
				best = f;
			}
			break;
		}
	}
	return best;
}

/* The hash of pkt's words under sub's mask. */
static inline uint32_t
sub_hash(const struct swv_subtable *sub, const struct swv_pkt *pkt)
{
	uint64_t h = 0;
	uint32_t j;

	for (j = 0; j < sub->nw; j++)
		h = (h ^ (pkt->key.w[sub->idx[j]] & sub->mask[j])) *
		    SWV_HASH_MUL;
	return hash_fin(h);
}

/* Whether pkt's words under sub's mask are f's key. */
static inline bool
sub_key_eq(const struct swv_subtable *sub, const struct swv_flow *f,
	   const struct swv_pkt *pkt)
{
	uint32_t j;

	for (j = 0; j < sub->nw; j++)
		if (f->key[j] != (pkt->key.w[sub->idx[j]] & sub->mask[j]))
			return false;
	return true;
}

/* The head for pkt (hash h32) in sl, probing from slot j on, or NULL. */
static const struct swv_flow *
sub_probe(const struct swv_subtable *sub, const struct swv_slots *sl,
	  const struct swv_pkt *pkt, uint32_t h32, uint32_t j)
{
	const struct swv_flow *f;

	for (;; j++) {
		const struct swv_slot *s = &sl->slot[j & sl->mask];

		f = rcu_dereference(s->f);
		if (f == NULL)
			return NULL;
		if (SWV_LOAD(&s->hash) == h32 && f != SWV_SLOT_TOMB &&
		    sub_key_eq(sub, f, pkt))
			return f;
	}
}

/*
 * Batched lookup: the same walk as swv_steer_lookup() for every frame, one
 * subtable at a time for all the frames still looking, in three passes so
 * that the cache misses of different frames overlap instead of following
 * each other: hash each frame and prefetch its first slot; find each
 * frame's first slot with its hash and prefetch that rule (the lines from
 * rank to the end of the key); compare the keys (a mismatch, a hash
 * collision, probes on). A frame stops at the first subtable that cannot
 * beat its best match, as in the single lookup. A small subtable (its
 * slots likely in cache) is probed frame by frame, without the passes, and
 * when all are small the frames go through swv_steer_lookup() one by one.
 */
#define SWV_BURST_MIN_SLOTS 1024u
void
swv_steer_lookup_burst(const struct swv_steer *st, const struct swv_pkt *pkt,
		       const struct swv_flow **out, unsigned int n)
{
	const struct swv_flow *cand[SWV_RX_BURST], *f;
	uint64_t rank[SWV_RX_BURST], base;
	uint32_t h[SWV_RX_BURST], at[SWV_RX_BURST], i, j, nw;
	uint8_t act[SWV_RX_BURST];
	const struct swv_subtable *sub;
	const struct swv_slots *sl;
	unsigned int k, m, na = n, x;

	if (st == NULL) {
		for (k = 0; k < n; k++)
			out[k] = NULL;
		return;
	}
	/* One frame, or only small subtables: frame by frame. */
	for (i = 0; i < st->nsub && n > 1; i++)
		if (rcu_dereference(st->sub[i].sub->slots)->mask >=
		    SWV_BURST_MIN_SLOTS)
			break;
	if (i == st->nsub || n <= 1) {
		for (k = 0; k < n; k++)
			out[k] = swv_steer_lookup(st, &pkt[k]);
		return;
	}
	for (k = 0; k < n; k++) {
		out[k] = NULL;
		rank[k] = UINT64_MAX;
		act[k] = (uint8_t)k;
	}
	for (i = 0; i < st->nsub && na > 0; i++) {
		base = st->sub[i].base;
		sub = st->sub[i].sub;
		nw = sub->nw;
		sl = rcu_dereference(sub->slots);
		m = 0;
		if (sl->mask < SWV_BURST_MIN_SLOTS) {
			/* Small: in cache, probed at once. */
			for (k = 0; k < na; k++) {
				x = act[k];
				if (base > rank[x])
					continue;
				act[m++] = (uint8_t)x;
				j = sub_hash(sub, &pkt[x]);
				f = sub_probe(sub, sl, &pkt[x], j, j);
				if (f != NULL && f->rank < rank[x]) {
					rank[x] = f->rank;
					out[x] = f;
				}
			}
			na = m;
			continue;
		}
		for (k = 0; k < na; k++) {
			x = act[k];
			if (base > rank[x])
				continue;	/* sorted: done for good */
			h[x] = sub_hash(sub, &pkt[x]);
			__builtin_prefetch(&sl->slot[h[x] & sl->mask]);
			act[m++] = (uint8_t)x;
		}
		na = m;
		for (k = 0; k < na; k++) {
			x = act[k];
			for (j = h[x];; j++) {
				const struct swv_slot *s =
					&sl->slot[j & sl->mask];

				f = rcu_dereference(s->f);
				if (f == NULL)
					break;
				if (f != SWV_SLOT_TOMB &&
				    SWV_LOAD(&s->hash) == h[x]) {
					__builtin_prefetch(&f->rank);
					__builtin_prefetch(&f->key[nw] - 1);
					break;
				}
			}
			cand[x] = f;
			at[x] = j;
		}
		for (k = 0; k < na; k++) {
			x = act[k];
			f = cand[x];
			if (f == NULL)
				continue;
			if (SWV_UNLIKELY(!sub_key_eq(sub, f, &pkt[x])))
				f = sub_probe(sub, sl, &pkt[x], h[x], at[x] + 1);
			if (f != NULL && f->rank < rank[x]) {
				rank[x] = f->rank;
				out[x] = f;
			}
		}
	}
}

/*
 * Object memory: rules and counters objects. They are carved from 2 MiB
 * chunks, faulted in whole when a chunk is added, so that an insert takes an
 * object off a free list or a bump pointer instead of faulting in fresh heap
 * pages one by one, and objects sit densely, with no allocator header.
 * Freed objects (after their grace period) go to a free list per class: a
 * rule's class is its number of key words and whether it has a tally
 * (ACTION_COUNT), counters objects have one of their own. When no object
 * is left in the process the chunks go back to the system, all but the
 * newest, which is kept so that a table that comes and goes around zero
 * rules does not map and fault a chunk each time.
 * Control path only (swv_lock).
 */
#define SWV_CHUNK_SIZE (2u << 20)
#define SWV_PAGE_SIZE 4096u
#ifdef MADV_POPULATE_WRITE
#define SWV_MADV_POPULATE_WRITE MADV_POPULATE_WRITE
#else
#define SWV_MADV_POPULATE_WRITE 23	/* Linux 5.14 */
#endif

struct swv_pool_chunk {
	struct swv_pool_chunk *next;
};

static struct {
	void *free[SWV_POOL_CLASSES];	/**< free objects by class */
	struct swv_pool_chunk *chunks;	/**< newest first */
	uint8_t *cur;			/**< bump pointer in the newest */
	uint8_t *end;
	size_t live;			/**< objects allocated, not freed */
} swv_pool;

/* Size of the objects of a class (a multiple of 8: all stay aligned). */
static size_t
pool_size(unsigned int cls)
{
	unsigned int nw = cls % (SWV_KEY_WORDS + 1);

	if (cls == SWV_POOL_COUNTERS)
		return sizeof(struct swv_counters);
	return sizeof(struct swv_flow) + nw * sizeof(uint64_t) +
	       (cls > SWV_KEY_WORDS ? sizeof(struct swv_flow_tally) : 0);
}

/* Map and fault in one chunk. 0 or ENOMEM. */
static int
pool_chunk_add(void)
{
	size_t sz = SWV_CHUNK_SIZE, off;
	struct swv_pool_chunk *c;
	uint8_t *a;

	a = mmap(NULL, sz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		return ENOMEM;
	/*
	 * Fault it in now, in one call (Linux >= 5.14), else page by page in
	 * a row: either way not one fault per insert. Small pages on purpose:
	 * measured with bench-steer, a huge page here made inserts ~30%
	 * slower (the kernel finds and clears 2 MiB at once) and lookups
	 * spread over 64k rules no faster once they are batched.
	 */
	if (madvise(a, sz, SWV_MADV_POPULATE_WRITE) != 0)
		for (off = 0; off < sz; off += SWV_PAGE_SIZE)
			a[off] = 0;
	c = (struct swv_pool_chunk *)a;
	c->next = swv_pool.chunks;
	swv_pool.chunks = c;
	swv_pool.cur = a + SWV_CACHE_LINE;
	swv_pool.end = a + sz;
	return 0;
}

void *
swv_pool_alloc(unsigned int cls)
{
	size_t size = pool_size(cls);
	void *p = swv_pool.free[cls];

	if (p != NULL) {
		memcpy(&swv_pool.free[cls], p, sizeof(void *));
	} else {
		if ((size_t)(swv_pool.end - swv_pool.cur) < size &&
		    pool_chunk_add() != 0)
			return NULL;
		p = swv_pool.cur;
		swv_pool.cur += size;
	}
	swv_pool.live++;
	return p;
}

void
swv_pool_free(void *p, unsigned int cls)
{
	struct swv_pool_chunk *c, *next;
	unsigned int i;

	memcpy(p, &swv_pool.free[cls], sizeof(void *));
	swv_pool.free[cls] = p;
	if (--swv_pool.live > 0)
		return;
	/* Nothing left: keep the newest chunk, empty, and unmap the rest. */
	for (c = swv_pool.chunks->next; c != NULL; c = next) {
		next = c->next;
		munmap(c, SWV_CHUNK_SIZE);
	}
	c = swv_pool.chunks;
	c->next = NULL;
	swv_pool.cur = (uint8_t *)c + SWV_CACHE_LINE;
	swv_pool.end = (uint8_t *)c + SWV_CHUNK_SIZE;
	for (i = 0; i < SWV_POOL_CLASSES; i++)
		swv_pool.free[i] = NULL;
}

/*
 * Retired objects, freed after the next grace period (swv_lock). A rule is
 * entered with its low bit set (objects are 8-byte aligned) and goes back
 * to the pool, its tally folded into its counters object first; anything
 * else was malloc()ed.
 *
 * retire() only enters an object: it never frees, so the update that
 * retires an object may go on reading it (sub_rehash() reads the old array
 * it has just retired). Objects are freed only by retire_flush(), which
 * runs at the end of an update (retire_done()) or when nothing is in use
 * (a device's steering freed): never while an update holds pointers into
 * what it retired. The list is a fixed array: an update retires at most
 * SWV_RETIRE_PER_OP objects, and the list is flushed at the end of any
 * update that leaves SWV_RETIRE_BATCH or more, so entering one can neither
 * fail nor need memory.
 */
#define SWV_RETIRED_RULE ((uintptr_t)1)
#define SWV_RETIRE_PER_OP 8

static void *swv_retired[SWV_RETIRE_BATCH + SWV_RETIRE_PER_OP];
static size_t swv_nretired;
static bool swv_retired_big;	/**< a huge slot array waits in the list */

static void
release(void *p)
{
	struct swv_flow *f;

	if (!((uintptr_t)p & SWV_RETIRED_RULE)) {
		free(p);
		return;
	}
	f = (struct swv_flow *)((uintptr_t)p & ~SWV_RETIRED_RULE);
	if (f->cnt != NULL)
		swv_counters_release(f->cnt, f);
	swv_pool_free(f, SWV_POOL_RULE(f->nw, f->cnt != NULL));
}

/* Free everything retired: only where no update holds any of it. */
static void
retire_flush(void)
{
	size_t i;

	swv_retired_big = false;
	if (swv_nretired == 0)
		return;
	synchronize_rcu();
	for (i = 0; i < swv_nretired; i++)
		release(swv_retired[i]);
	swv_nretired = 0;
}

/* Free p once the engine cannot see it any more; p stays valid until the
 * update that retires it ends.
 */
static void
retire(void *p)
{
	if (p == NULL)
		return;
	assert(swv_nretired < sizeof(swv_retired) / sizeof(swv_retired[0]));
	swv_retired[swv_nretired++] = p;
}

/*
 * The end of an update (swv_lock): what it retired is no longer in use.
 * One grace period for a batch, or now for a huge array: that is worth a
 * grace period rather than staying mapped until the next batch (the engine
 * does not wait for it, and rehashes double: a handful per million
 * inserts).
 */
static void
retire_done(void)
{
	if (swv_nretired >= SWV_RETIRE_BATCH || swv_retired_big)
		retire_flush();
}

/* Return a rule to the pool once the engine cannot see it any more. */
static void
retire_rule(struct swv_flow *f)
{
	retire((void *)((uintptr_t)f | SWV_RETIRED_RULE));
}

/*
 * Slot arrays of 2 MB and more sit on transparent huge pages where the
 * kernel allows it (madvise mode): a lookup or insert at a random slot of a
 * 1M-rule table then costs a cache miss, not also a page walk that misses,
 * and the array faults in 512 times fewer pages. Freed with free().
 */
#define SWV_HUGE_SIZE (2u << 20)

static struct swv_slots *
slots_alloc(uint32_t n)
{
	size_t size = sizeof(struct swv_slots) +
		      (size_t)n * sizeof(struct swv_slot);
	struct swv_slots *sl;
	void *p;

	if (size < SWV_HUGE_SIZE) {
		sl = calloc(1, size);
	} else {
		size = (size + SWV_HUGE_SIZE - 1) & ~(size_t)(SWV_HUGE_SIZE - 1);
		if (posix_memalign(&p, SWV_HUGE_SIZE, size) != 0)
			return NULL;
		madvise(p, size, MADV_HUGEPAGE);	/* a hint */
		memset(p, 0, size);
		sl = p;
	}
	if (sl != NULL)
		sl->mask = n - 1;
	return sl;
}

/* Put a head in a table with no tombstone and no equal key. */
static void
slots_put(struct swv_slots *sl, struct swv_flow *f)
{
	uint32_t j;

	for (j = f->hash; sl->slot[j & sl->mask].f != NULL; j++)
		;
	sl->slot[j & sl->mask].hash = f->hash;
	sl->slot[j & sl->mask].f = f;
	sl->used++;
}

/* Put head f in slot at of a published table: hash first, then f. */
static inline void
slot_publish(struct swv_slot *s, struct swv_flow *f)
{
	SWV_STORE(&s->hash, f->hash);
	rcu_assign_pointer(s->f, f);
}

/* Rebuild the hash with room for @want keys; publish it. 0 or ENOMEM. */
static int
sub_rehash(struct swv_subtable *sub, uint32_t want)
{
	struct swv_slots *old = sub->slots, *sl;
	uint32_t n = 8, j;

	while (n < want * 2)
		n <<= 1;
	sl = slots_alloc(n);
	if (sl == NULL)
		return ENOMEM;
	for (j = 0; j <= old->mask; j++)
		if (old->slot[j].f != NULL && old->slot[j].f != SWV_SLOT_TOMB)
			slots_put(sl, old->slot[j].f);
	rcu_assign_pointer(sub->slots, sl);
	if ((size_t)(old->mask + 1) * sizeof(old->slot[0]) >= SWV_HUGE_SIZE)
		swv_retired_big = true;
	retire(old);
	return 0;
}

/* The slot index holding f's key, or -1. */
static int64_t
sub_find(const struct swv_subtable *sub, const struct swv_flow *f,
	 int64_t *tomb)
{
	const struct swv_slots *sl = sub->slots;
	struct swv_flow *s;
	uint32_t j;

	if (tomb != NULL)
		*tomb = -1;
	for (j = f->hash;; j++) {
		s = sl->slot[j & sl->mask].f;
		if (s == NULL)
			return -1;
		if (s == SWV_SLOT_TOMB) {
			if (tomb != NULL && *tomb < 0)
				*tomb = j & sl->mask;
			continue;
		}
		if (sl->slot[j & sl->mask].hash == f->hash &&
		    words_eq(s->key, f->key, sub->nw))
			return j & sl->mask;
	}
}

/* Insert f (sub, key, hash, rank set). 0 or ENOMEM. */
static int
sub_insert(struct swv_subtable *sub, struct swv_flow *f)
{
	struct swv_slots *sl;
	struct swv_flow *h, **pp;
	int64_t at, tomb;
	uint32_t j;

	at = sub_find(sub, f, &tomb);
	if (at >= 0) {
		sl = sub->slots;
		h = sl->slot[at].f;
		if (f->rank < h->rank) {
			f->same = h;
			rcu_assign_pointer(sl->slot[at].f, f);
			return 0;
		}
		/* Not the head: the engine never sees it until it is. */
		for (pp = &h->same; *pp != NULL && (*pp)->rank < f->rank;
		     pp = &(*pp)->same)
			;
		f->same = *pp;
		*pp = f;
		return 0;
	}
	sl = sub->slots;
	if (tomb < 0 && (sl->used + 1) * 4 > (sl->mask + 1) * 3) {
		if (sub_rehash(sub, sub->nkeys + 1) != 0)
			return ENOMEM;
		sl = sub->slots;
		for (j = f->hash; sl->slot[j & sl->mask].f != NULL; j++)
			;
		tomb = -1;
		at = j & sl->mask;
	} else if (tomb < 0) {
		for (j = f->hash; sl->slot[j & sl->mask].f != NULL; j++)
			;
		at = j & sl->mask;
	}
	f->same = NULL;
	if (tomb >= 0) {
		slot_publish(&sl->slot[tomb], f);
	} else {
		slot_publish(&sl->slot[at], f);
		sl->used++;
	}
	sub->nkeys++;
	return 0;
}

/* Remove f from its subtable; f itself is retired by the caller. */
static void
sub_remove(struct swv_subtable *sub, struct swv_flow *f)
{
	struct swv_slots *sl = sub->slots;
	struct swv_flow *h, **pp;
	int64_t at;

	at = sub_find(sub, f, NULL);
	if (at < 0)
		return;		/* cannot happen */
	h = sl->slot[at].f;
	if (h == f) {
		if (f->same != NULL) {
			rcu_assign_pointer(sl->slot[at].f, f->same);
			return;
		}
		rcu_assign_pointer(sl->slot[at].f, SWV_SLOT_TOMB);
		sub->nkeys--;
		/* Too many tombstones make misses long: clean up. */
		if (sl->used > 16 && sl->used > sub->nkeys * 2 +
		    (sl->mask + 1) / 8)
			sub_rehash(sub, sub->nkeys);
		return;
	}
	for (pp = &h->same; *pp != NULL && *pp != f; pp = &(*pp)->same)
		;
	if (*pp == f)
		*pp = f->same;
}

/* Count a rule's priority in its subtable; return the best base. */
static int
sub_prio_add(struct swv_subtable *sub, uint64_t base)
{
	struct swv_prio_count *p;
	uint32_t i;

	for (i = 0; i < sub->nprio && sub->prio[i].base < base; i++)
		;
	if (i < sub->nprio && sub->prio[i].base == base) {
		sub->prio[i].n++;
		return 0;
	}
	p = realloc(sub->prio, (sub->nprio + 1) * sizeof(*p));
	if (p == NULL)
		return ENOMEM;
	sub->prio = p;
	memmove(&p[i + 1], &p[i], (sub->nprio - i) * sizeof(*p));
	p[i].base = base;
	p[i].n = 1;
	sub->nprio++;
	return 0;
}

static void
sub_prio_del(struct swv_subtable *sub, uint64_t base)
{
	uint32_t i;

	for (i = 0; i < sub->nprio && sub->prio[i].base != base; i++)
		;
	if (i == sub->nprio)
		return;
	if (--sub->prio[i].n == 0) {
		memmove(&sub->prio[i], &sub->prio[i + 1],
			(sub->nprio - i - 1) * sizeof(sub->prio[0]));
		sub->nprio--;
	}
}

static void
sub_free(struct swv_subtable *sub)
{
	free(sub->slots);
	free(sub->prio);
	free(sub);
}

void
swv_steer_free(struct swv_steer *st)
{
	uint32_t i;

	retire_flush();
	if (st == NULL)
		return;
	for (i = 0; i < st->nsub; i++)
		sub_free(st->sub[i].sub);
	free(st);
}

static int
ent_cmp(const void *a, const void *b)
{
	const struct swv_steer_ent *x = a, *y = b;

	return x->base < y->base ? -1 : x->base > y->base ? 1 : 0;
}

/*
 * Publish dev's subtable array with: sub's base refreshed (or sub added when
 * absent), and drop (when not NULL) left out. 0 or ENOMEM.
 */
static int
steer_publish(struct swv_device *dev, struct swv_subtable *sub,
	      struct swv_subtable *drop)
{
	struct swv_steer *old = dev->steer, *st;
	uint32_t i, n = 0, nold = old == NULL ? 0 : old->nsub;
	bool found = false;

	st = malloc(sizeof(*st) + (nold + 1) * sizeof(st->sub[0]));
	if (st == NULL)
		return ENOMEM;
	for (i = 0; i < nold; i++) {
		struct swv_subtable *s = old->sub[i].sub;

		if (s == drop)
			continue;
		st->sub[n].sub = s;
		st->sub[n].base = s->prio[0].base;
		found |= s == sub;
		n++;
	}
	if (sub != NULL && !found) {
		st->sub[n].sub = sub;
		st->sub[n].base = sub->prio[0].base;
		n++;
	}
	st->nsub = n;
	qsort(st->sub, n, sizeof(st->sub[0]), ent_cmp);
	if (n == 0) {
		free(st);
		st = NULL;
	}
	rcu_assign_pointer(dev->steer, st);
	retire(old);
	return 0;
}

/* The subtable of a mask, or NULL. */
static struct swv_subtable *
steer_find_sub(const struct swv_device *dev, uint32_t nw, const uint8_t *idx,
	       const uint64_t *mask)
{
	const struct swv_steer *st = dev->steer;
	uint32_t i;

	if (st == NULL)
		return NULL;
	for (i = 0; i < st->nsub; i++) {
		struct swv_subtable *s = st->sub[i].sub;

		if (s->nw == nw && memcmp(s->idx, idx, nw) == 0 &&
		    words_eq(s->mask, mask, nw))
			return s;
	}
	return NULL;
}

/* Add f (key and hash set) to dev's table (swv_lock). 0 or ENOMEM. */
static int
steer_add(struct swv_device *dev, struct swv_flow *f, uint32_t nw,
	  const uint8_t *idx, const uint64_t *mask)
{
	struct swv_subtable *sub;
	uint64_t base = f->rank & ~SWV_RANK_SEQ_MASK, best;
	bool fresh = false;
	int ret;

	sub = steer_find_sub(dev, nw, idx, mask);
	if (sub == NULL) {
		sub = calloc(1, sizeof(*sub));
		if (sub == NULL)
			return ENOMEM;
		sub->slots = slots_alloc(8);
		if (sub->slots == NULL) {
			free(sub);
			return ENOMEM;
		}
		sub->nw = nw;
		memcpy(sub->idx, idx, nw);
		memcpy(sub->mask, mask, nw * sizeof(mask[0]));
		fresh = true;
	}
	best = sub->nprio > 0 ? sub->prio[0].base : UINT64_MAX;
	ret = sub_prio_add(sub, base);
	if (ret != 0)
		goto err;
	f->sub = sub;
	/* A better best first: the engine must not stop before sub. */
	if (fresh || base < best) {
		ret = steer_publish(dev, sub, NULL);
		if (ret != 0) {
			sub_prio_del(sub, base);
			goto err;
		}
	}
	ret = sub_insert(sub, f);
	if (ret != 0) {
		sub_prio_del(sub, base);
		if (fresh) {
			/* Not in a published array yet when it fails... */
			steer_publish(dev, NULL, sub);
			retire(sub->slots);
			free(sub->prio);
			retire(sub);
		} else if (base < best) {
			steer_publish(dev, sub, NULL);
		}
		return ret;
	}
	return 0;
err:
	if (fresh)
		sub_free(sub);
	return ret;
}

/* Remove f from dev's table (swv_lock); f is retired by the caller. */
static void
steer_del(struct swv_device *dev, struct swv_flow *f)
{
	struct swv_subtable *sub = f->sub;
	uint64_t base = f->rank & ~SWV_RANK_SEQ_MASK, best;

	sub_remove(sub, f);
	best = sub->prio[0].base;
	sub_prio_del(sub, base);
	if (sub->nprio == 0) {
		/* Empty: out of the array, then gone after a grace period. */
		if (steer_publish(dev, NULL, sub) != 0) {
			/* Keep it (empty) rather than fail a destroy. */
			return;
		}
		retire(sub->slots);
		free(sub->prio);
		retire(sub);
	} else if (sub->prio[0].base != best) {
		/* A worse best: harmless if this fails (the walk goes on). */
		steer_publish(dev, sub, NULL);
	}
}

/*
 * ibv_create_flow / ibv_destroy_flow.
 */

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
		/* mlx5: any VLAN mask asks for a C-tag (fs.c, cvlan_tag). */
		if (b->strict && e->mask.vlan_tag != 0) {
			hv->cvlan = 1;
			hm->cvlan = 0xff;
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
		hv->ipflags = ip->val.flags & 7;
		hm->ipflags = ip->mask.flags & 7;
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
	retire(old);
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
 * mlx5 merges a rule with an equal match at the same priority into one
 * entry, and refuses (EEXIST, fs_core.c check_conflicting_ftes) one whose
 * action disagrees: drop against forward, or another tag. Counting is not
 * an action that conflicts. swv_lock held.
 */
static int
steer_conflict(const struct swv_device *dev, const struct swv_flow *f,
	       uint32_t nw, const uint8_t *idx, const uint64_t *mask)
{
	const struct swv_subtable *sub = steer_find_sub(dev, nw, idx, mask);
	uint64_t base = f->rank & ~SWV_RANK_SEQ_MASK;
	const struct swv_flow *o;
	int64_t at;

	if (sub == NULL)
		return 0;
	at = sub_find(sub, f, NULL);
	if (at < 0)
		return 0;
	for (o = sub->slots->slot[at].f; o != NULL; o = o->same) {
		if ((o->rank & ~SWV_RANK_SEQ_MASK) != base)
			continue;
		if (((o->actions ^ f->actions) & SWV_ACT_DROP) != 0 ||
		    o->tag != f->tag)
			return EEXIST;
	}
	return 0;
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
	bool sniffer = false;
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
	f = swv_pool_alloc(SWV_POOL_RULE(nw, b.cnt != NULL));
	if (f == NULL) {
		ret = ENOMEM;
		goto err;
	}
	memset(f, 0, sizeof(*f));
	for (i = 0; i < nw; i++)
		f->key[i] = b.v.w[idx[i]] & mask[i];
	f->nw = (uint8_t)nw;
	f->hash = words_hash(f->key, nw);
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
		f->rank = (cls << SWV_RANK_CLASS_SHIFT) |
			  ((uint64_t)prio << SWV_RANK_PRIO_SHIFT) |
			  (dev->flow_seq & SWV_RANK_SEQ_MASK);
		ret = dev->strict ? steer_conflict(dev, f, nw, idx, mask) : 0;
		if (ret == 0)
			ret = steer_add(dev, f, nw, idx, mask);
	}
	if (ret != 0)
		goto err_unbind;
	dev->nflows++;
	qp->flows++;
	to_swv_ctx(ibqp->context)->objs++;
	retire_done();
	pthread_mutex_unlock(&swv_lock);
	return &f->ibv_flow;
err_unbind:
	if (f->cnt != NULL)
		swv_counters_unbind(f->cnt, f, false);
	swv_pool_free(f, SWV_POOL_RULE(nw, f->cnt != NULL));
err:
	retire_done();
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
	if (f->sub == NULL)
		ret = sniff_update(dev, f->qp, false);
	else
		steer_del(dev, f);
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
	retire_rule(f);
	/* No rule left on the device: nothing it retired is needed. */
	if (dev->nflows == 0)
		retire_flush();
	else
		retire_done();
	pthread_mutex_unlock(&swv_lock);
	return 0;
}
