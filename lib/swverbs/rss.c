/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * RSS: the Toeplitz hash and the selection of the fields a hash QP hashes
 * (rx_hash_fields_mask), over a parsed frame's key.
 */

#include <netinet/in.h>
#include <string.h>

#include "swv_priv.h"

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
