/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Flow steering and RSS.
 *
 * A rule is a value and a mask over the parsed-header key (struct
 * swv_flow_key) and a rank: (class, priority, creation order), lower wins;
 * NORMAL rules come before MC_DEFAULT, MC_DEFAULT before ALL_DEFAULT. Rules
 * are grouped by mask into subtables (tuple space search), each an
 * open-addressing hash of masked values that keeps the best-ranked rule per
 * value. Subtables are sorted by their best rank, so a lookup stops at the
 * first subtable that cannot beat what it found: its cost grows with the
 * number of distinct masks, not of rules.
 *
 * The table is immutable: every create or destroy builds a new one, publishes
 * it with rcu_assign_pointer() and frees the old one after a grace period,
 * so the engine never waits for the control path.
 */

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "swv_priv.h"

/* Rule classes, the top bits of a rank. */
#define SWV_CLASS_NORMAL 0ull
#define SWV_CLASS_MC 1ull
#define SWV_CLASS_ALL 2ull

/*
 * Parser.
 */
void
swv_parse(struct swv_pkt *pkt, const uint8_t *buf, uint32_t len)
{
	uint32_t off = 14, l4off;
	uint16_t type;

	pkt->l3 = 0;
	pkt->l4 = 0;
	pkt->src_ip = NULL;
	pkt->dst_ip = NULL;
	pkt->ports = NULL;
	if (SWV_UNLIKELY(len < 14)) {
		memset(&pkt->key, 0, sizeof(pkt->key));
		memcpy(pkt->key.k.dmac, buf, len < 6 ? len : 6);
		return;
	}
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	{
		/*
		 * Build the key words in registers: narrow stores into the
		 * key followed by the lookup's 8-byte loads would defeat
		 * store-to-load forwarding.
		 */
		const uint64_t m48 = (1ull << 48) - 1;

		_Static_assert(SWV_KEY_WORDS == 2, "key layout");
		uint64_t a, b, vlan = 0;

		memcpy(&a, buf, 8);		/* dmac, smac[0..1] */
		memcpy(&b, buf + 6, 8);		/* smac, type */
		type = (uint16_t)(b >> 48);
		if ((type == htons(0x8100) || type == htons(0x88a8)) &&
		    len >= 18) {
			uint16_t tci;

			memcpy(&tci, buf + 14, 2);
			memcpy(&type, buf + 16, 2);
			vlan = tci;
			off = 18;
		}
		pkt->key.w[0] = (a & m48) | (vlan << 48);
		pkt->key.w[1] = (b & m48) | ((uint64_t)type << 48);
	}
#else
	memcpy(pkt->key.k.dmac, buf, 6);
	memcpy(pkt->key.k.smac, buf + 6, 6);
	memcpy(&type, buf + 12, 2);
	if ((type == htons(0x8100) || type == htons(0x88a8)) && len >= 18) {
		memcpy(&pkt->key.k.vlan_tag, buf + 14, 2);
		memcpy(&type, buf + 16, 2);
		off = 18;
	}
	pkt->key.k.ether_type = type;
#endif
	if (type == htons(0x0800) && len >= off + 20) {
		const uint8_t *ip = buf + off;
		uint32_t ihl = (ip[0] & 0xf) * 4u;

		if ((ip[0] >> 4) != 4 || ihl < 20)
			return;
		pkt->l3 = 4;
		pkt->src_ip = ip + 12;
		pkt->dst_ip = ip + 16;
		/* Ports only in the first fragment. */
		if (((ip[6] & 0x1f) | ip[7]) != 0)
			return;
		pkt->l4 = ip[9];
		l4off = off + ihl;
	} else if (type == htons(0x86dd) && len >= off + 40) {
		const uint8_t *ip = buf + off;

		if ((ip[0] >> 4) != 6)
			return;
		pkt->l3 = 6;
		pkt->src_ip = ip + 8;
		pkt->dst_ip = ip + 24;
		pkt->l4 = ip[6];
		l4off = off + 40;
	} else {
		return;
	}
	if ((pkt->l4 == IPPROTO_TCP || pkt->l4 == IPPROTO_UDP) &&
	    len >= l4off + 4)
		pkt->ports = buf + l4off;
	else
		pkt->l4 = 0;
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
	uint64_t f = qp->hash_fields;
	uint8_t in[36];
	unsigned int n = 0, alen;

	if (pkt->l3 == 4) {
		alen = 4;
		f &= ~(uint64_t)(IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6);
	} else if (pkt->l3 == 6) {
		alen = 16;
		f &= ~(uint64_t)(IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4);
	} else {
		return 0;
	}
	if (f & (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_SRC_IPV6)) {
		memcpy(in + n, pkt->src_ip, alen);
		n += alen;
	}
	if (f & (IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_DST_IPV6)) {
		memcpy(in + n, pkt->dst_ip, alen);
		n += alen;
	}
	if (pkt->l4 == IPPROTO_TCP) {
		if (f & IBV_RX_HASH_SRC_PORT_TCP) {
			memcpy(in + n, pkt->ports, 2);
			n += 2;
		}
		if (f & IBV_RX_HASH_DST_PORT_TCP) {
			memcpy(in + n, pkt->ports + 2, 2);
			n += 2;
		}
	} else if (pkt->l4 == IPPROTO_UDP) {
		if (f & IBV_RX_HASH_SRC_PORT_UDP) {
			memcpy(in + n, pkt->ports, 2);
			n += 2;
		}
		if (f & IBV_RX_HASH_DST_PORT_UDP) {
			memcpy(in + n, pkt->ports + 2, 2);
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
static inline uint64_t
key_hash(const union swv_key *k)
{
	uint64_t h = 0;
	unsigned int i;

	/* The key is a few words: one multiply each, one final mix. */
	for (i = 0; i < SWV_KEY_WORDS; i++)
		h = (h ^ k->w[i]) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 32);
}

static inline void
key_and(union swv_key *out, const union swv_key *a, const union swv_key *m)
{
	unsigned int i;

	for (i = 0; i < SWV_KEY_WORDS; i++)
		out->w[i] = a->w[i] & m->w[i];
}

static inline bool
key_eq(const union swv_key *a, const union swv_key *b)
{
	unsigned int i;

	for (i = 0; i < SWV_KEY_WORDS; i++)
		if (a->w[i] != b->w[i])
			return false;
	return true;
}

struct swv_qp *
swv_steer_lookup(const struct swv_steer *st, const struct swv_pkt *pkt)
{
	const struct swv_subtable *sub;
	const struct swv_rule_slot *s;
	struct swv_qp *best_qp = NULL;
	uint64_t best = UINT64_MAX;
	union swv_key mk;
	uint32_t h;
	unsigned int i;

	if (st == NULL)
		return NULL;
	for (i = 0; i < st->nsub; i++) {
		sub = &st->sub[i];
		if (sub->best_rank >= best)
			break;
		key_and(&mk, &pkt->key, &sub->mask);
		if (SWV_LIKELY(sub->nrules == 1)) {
			/* One value: no hashing. Its rank is best_rank. */
			if (key_eq(&sub->one.key, &mk)) {
				best = sub->one.rank;
				best_qp = sub->one.qp;
			}
			continue;
		}
		for (h = (uint32_t)key_hash(&mk);; h++) {
			s = &sub->slots[h & sub->slot_mask];
			if (s->qp == NULL)
				break;
			if (key_eq(&s->key, &mk)) {
				if (s->rank < best) {
					best = s->rank;
					best_qp = s->qp;
				}
				break;
			}
		}
	}
	return best_qp;
}

void
swv_steer_free(struct swv_steer *st)
{
	unsigned int i;

	if (st == NULL)
		return;
	for (i = 0; i < st->nsub; i++)
		free(st->sub[i].slots);
	free(st);
}

static int
sub_cmp(const void *a, const void *b)
{
	const struct swv_subtable *x = a, *y = b;

	return x->best_rank < y->best_rank ? -1 :
	       x->best_rank > y->best_rank ? 1 : 0;
}

static void
sub_insert(struct swv_subtable *sub, const struct swv_flow *f)
{
	struct swv_rule_slot *s;
	uint32_t h;

	for (h = (uint32_t)key_hash(&f->value);; h++) {
		s = &sub->slots[h & sub->slot_mask];
		if (s->qp == NULL) {
			s->key = f->value;
			s->rank = f->rank;
			s->qp = f->qp;
			break;
		}
		if (key_eq(&s->key, &f->value)) {
			if (f->rank < s->rank) {
				s->rank = f->rank;
				s->qp = f->qp;
			}
			break;
		}
	}
	if (f->rank < sub->best_rank)
		sub->best_rank = f->rank;
}

int
swv_steer_rebuild(struct swv_device *dev)
{
	struct swv_steer *st, *old;
	struct swv_flow *f;
	unsigned int nsub = 0, i, nflows = 0;
	uint32_t *count;

	cds_list_for_each_entry(f, &dev->flows, node)
		nflows++;
	st = calloc(1, sizeof(*st) + nflows * sizeof(st->sub[0]));
	count = calloc(nflows + 1, sizeof(*count));
	if (st == NULL || count == NULL)
		goto err;
	/* Distinct masks, and how many rules each has. */
	cds_list_for_each_entry(f, &dev->flows, node) {
		for (i = 0; i < nsub; i++)
			if (key_eq(&st->sub[i].mask, &f->mask))
				break;
		if (i == nsub) {
			st->sub[nsub].mask = f->mask;
			st->sub[nsub].best_rank = UINT64_MAX;
			nsub++;
		}
		count[i]++;
	}
	for (i = 0; i < nsub; i++) {
		uint32_t size = 2;

		while (size < count[i] * 2)
			size <<= 1;
		st->sub[i].slot_mask = size - 1;
		st->sub[i].slots = calloc(size, sizeof(struct swv_rule_slot));
		if (st->sub[i].slots == NULL) {
			st->nsub = nsub;
			goto err;
		}
	}
	st->nsub = nsub;
	cds_list_for_each_entry(f, &dev->flows, node) {
		for (i = 0; i < nsub; i++)
			if (key_eq(&st->sub[i].mask, &f->mask))
				break;
		sub_insert(&st->sub[i], f);
	}
	/* Subtables that hold a single value are compared directly. */
	for (i = 0; i < nsub; i++) {
		struct swv_subtable *sub = &st->sub[i];
		uint32_t j;

		for (j = 0; j <= sub->slot_mask; j++) {
			if (sub->slots[j].qp == NULL)
				continue;
			if (sub->nrules++ == 0)
				sub->one = sub->slots[j];
		}
	}
	qsort(st->sub, nsub, sizeof(st->sub[0]), sub_cmp);
	free(count);
	old = dev->steer;
	rcu_assign_pointer(dev->steer, st);
	synchronize_rcu();
	swv_steer_free(old);
	return 0;
err:
	free(count);
	swv_steer_free(st);
	return ENOMEM;
}

/*
 * ibv_create_flow / ibv_destroy_flow.
 */

/* Fold one spec into the rule. 0, EINVAL or ENOTSUP. */
static int
flow_add_spec(struct swv_flow *f, const struct ibv_flow_spec *spec,
	      unsigned int *seen)
{
	const struct ibv_flow_spec_eth *eth;
	union swv_key v, m;

	switch (spec->hdr.type) {
	case IBV_FLOW_SPEC_ETH:
		if (spec->hdr.size != sizeof(struct ibv_flow_spec_eth))
			return EINVAL;
		if (*seen & 1)
			return EINVAL;
		*seen |= 1;
		eth = &spec->eth;
		memset(&v, 0, sizeof(v));
		memset(&m, 0, sizeof(m));
		memcpy(v.k.dmac, eth->val.dst_mac, 6);
		memcpy(v.k.smac, eth->val.src_mac, 6);
		v.k.ether_type = eth->val.ether_type;
		v.k.vlan_tag = eth->val.vlan_tag;
		memcpy(m.k.dmac, eth->mask.dst_mac, 6);
		memcpy(m.k.smac, eth->mask.src_mac, 6);
		m.k.ether_type = eth->mask.ether_type;
		m.k.vlan_tag = eth->mask.vlan_tag;
		key_and(&v, &v, &m);
		f->value = v;
		f->mask = m;
		return 0;
	default:
		/* IP, L4, tunnel and action specs are not implemented yet. */
		return ENOTSUP;
	}
}

struct ibv_flow *
swv_create_flow(struct ibv_qp *ibqp, struct ibv_flow_attr *attr)
{
	const uint8_t *p, *end;
	struct swv_device *dev;
	struct swv_flow *f;
	struct swv_qp *qp;
	unsigned int i, seen = 0;
	uint64_t cls;
	int ret;

	if (ibqp == NULL || attr == NULL || attr->comp_mask != 0 ||
	    attr->port != 1 || attr->size < sizeof(*attr)) {
		errno = EINVAL;
		return NULL;
	}
	qp = to_swv_qp(ibqp);
	if (!qp->is_hash && !qp->has_rq) {
		errno = EINVAL;
		return NULL;
	}
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
		errno = ENOTSUP;
		return NULL;
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
	if (cls != SWV_CLASS_NORMAL && attr->num_of_specs != 0) {
		errno = EINVAL;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (f == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (cls == SWV_CLASS_MC) {
		f->mask.k.dmac[0] = 0x01;
		f->value.k.dmac[0] = 0x01;
	}
	/* Walk the specs; their sizes must add up to attr->size exactly. */
	p = (const uint8_t *)(attr + 1);
	end = (const uint8_t *)attr + attr->size;
	for (i = 0; i < attr->num_of_specs; i++) {
		const struct ibv_flow_spec *spec =
			(const struct ibv_flow_spec *)p;

		if ((size_t)(end - p) < sizeof(spec->hdr) ||
		    spec->hdr.size < sizeof(spec->hdr) ||
		    spec->hdr.size > (size_t)(end - p)) {
			ret = EINVAL;
			goto err;
		}
		ret = flow_add_spec(f, spec, &seen);
		if (ret != 0)
			goto err;
		p += spec->hdr.size;
	}
	if (p != end) {
		ret = EINVAL;
		goto err;
	}
	f->qp = qp;
	f->ibv_flow.context = ibqp->context;
	dev = qp->dev;

	pthread_mutex_lock(&swv_lock);
	if (dev->nflows >= SWV_MAX_FLOWS) {
		pthread_mutex_unlock(&swv_lock);
		ret = ENOMEM;
		goto err;
	}
	f->rank = (cls << 56) | ((uint64_t)attr->priority << 32) |
		  dev->flow_seq++;
	cds_list_add_tail(&f->node, &dev->flows);
	ret = swv_steer_rebuild(dev);
	if (ret != 0) {
		cds_list_del(&f->node);
		pthread_mutex_unlock(&swv_lock);
		goto err;
	}
	dev->nflows++;
	f->ibv_flow.handle = dev->flow_seq;
	qp->flows++;
	to_swv_ctx(ibqp->context)->objs++;
	pthread_mutex_unlock(&swv_lock);
	return &f->ibv_flow;
err:
	free(f);
	errno = ret;
	return NULL;
}

int
swv_destroy_flow(struct ibv_flow *ibflow)
{
	struct swv_flow *f;
	struct swv_device *dev;
	int ret;

	if (ibflow == NULL)
		return EINVAL;
	f = container_of(ibflow, struct swv_flow, ibv_flow);
	dev = f->qp->dev;
	pthread_mutex_lock(&swv_lock);
	cds_list_del(&f->node);
	ret = swv_steer_rebuild(dev);
	if (ret != 0) {
		/* Put it back: the rank, not the list order, decides. */
		cds_list_add_tail(&f->node, &dev->flows);
		pthread_mutex_unlock(&swv_lock);
		return ret;
	}
	dev->nflows--;
	f->qp->flows--;
	to_swv_ctx(ibflow->context)->objs--;
	pthread_mutex_unlock(&swv_lock);
	free(f);
	return 0;
}
