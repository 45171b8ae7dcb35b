/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * rte_flow packet tests through the vbr PMD: two vbr ports joined by a
 * swverbs pair wire, port 0 sends hand-built frames, port 1 (4 Rx queues,
 * mq_mode NONE) holds the rules and every check looks at the queue each
 * frame arrives on, its content and its FDIR flags.
 *
 * Default traffic: with mq_mode NONE the port's hash QP hashes no field, so
 * everything the internal rules accept (the port's MAC, broadcast) lands on
 * queue 0; frames no rule accepts are not received. A check sends NB_PKTS
 * copies of a frame and expects all of them on one queue, or none at all.
 *
 * Items: each rule steers to queue 2; frames that match go to queue 2, frames
 * that differ in exactly the matched field go to queue 0, and once the rule
 * is destroyed the matching frames are back on queue 0. Actions: queue, RSS
 * (every flow on the queue a Toeplitz reference computed here picks, through
 * the table the PMD fills round-robin over the queue list, next power of two
 * entries), drop, mark, flag. Then priorities, same-priority overlap (the
 * older rule wins, as design.rst says), stop/start, destroy, flush and isolated
 * mode.
 *
 * Each frame carries a check number in its payload: a frame of an earlier
 * check that arrives late is not counted for the current one but is counted
 * as late, and the last case fails if any came (a "nothing arrives" check
 * would then have stopped waiting too early).
 *
 * The ports use swverbs' default (mlx5) profile; with "full" they use the
 * full profile. Matches a ConnectX refuses (IPv6 hop limit, GRE C/K/S bits,
 * MPLS, ESP) run on full only; on mlx5 the same cases check the exact
 * refusal of validate and create. A user rule on the multicast bit of the
 * destination is multicast-only: on mlx5 it is placed after every priority
 * and broadcast frames stay with the port's broadcast rule.
 *
 * usage: test-flow-packets <librte_net_vbr.so> [full]
 */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_esp.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_flow.h>
#include <rte_gre.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_mpls.h>
#include <rte_tcp.h>
#include <rte_udp.h>
#include <rte_vxlan.h>

#include "test.h"
#include "vbr_test_port.h"

#define NB_RXQ 4
#define NB_PKTS 8
#define RING_SIZE 256
#define FRAME_MAX 256
#define MAX_FRAMES 64
#define Q_NONE (-1)
#define WAIT_MS 10000		/* the most a check waits for its frames */
#define NONE_MS 150		/* how long "nothing arrives" is watched */
#define QUIET_MS 20		/* watched for strays after the last frame */
#define TYPE_A 0x88b5
#define TYPE_B 0x88b6
#define RSS_KEY_LEN 40
#define VXLAN_PORT 4789
#define MPLS_UDP_PORT 6635

/* Expected mark of received frames. */
#define MARK_NONE UINT64_MAX	/* neither FDIR flag */
#define MARK_FLAG (UINT64_MAX - 1)	/* RTE_MBUF_F_RX_FDIR only */

#define IP4(a, b, c, d) \
	(((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | \
	 ((uint32_t)(c) << 8) | (uint32_t)(d))

static struct rte_mempool *mp;
static uint16_t port0, port1;
static struct rte_ether_addr mac0, mac1;
static bool isolated;
static uint32_t check_id;	/* stamped in every frame of a check */
static uint64_t late_frames;	/* frames of an earlier check */

static const struct rte_ether_addr foreign_mac = {
	.addr_bytes = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x99 } };
static const struct rte_ether_addr bcast_mac = {
	.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };
static const struct rte_ether_addr src_a = {
	.addr_bytes = { 0x02, 0x00, 0x00, 0x00, 0x0a, 0x01 } };
static const struct rte_ether_addr src_b = {
	.addr_bytes = { 0x02, 0x00, 0x00, 0x00, 0x0a, 0x02 } };
static const struct rte_ether_addr inner_a = {
	.addr_bytes = { 0x02, 0x00, 0x00, 0x00, 0x0b, 0x01 } };
static const struct rte_ether_addr inner_b = {
	.addr_bytes = { 0x02, 0x00, 0x00, 0x00, 0x0b, 0x02 } };

/* Port 1's key (set at configure) and a key given in RSS actions. */
static uint8_t port_key[RSS_KEY_LEN] = {
	0x3a, 0x51, 0x0c, 0x97, 0x28, 0xe4, 0x6b, 0x1d,
	0x90, 0x47, 0xf2, 0x35, 0x8e, 0x19, 0xc6, 0x73,
	0x04, 0xbd, 0x5f, 0xa8, 0x62, 0x2e, 0xd9, 0x81,
	0x17, 0x4c, 0xe0, 0x9b, 0x36, 0x7a, 0x05, 0xcf,
	0x58, 0x23, 0xae, 0x6d, 0x91, 0x0f, 0xb4, 0x42,
};
static const uint8_t action_key[RSS_KEY_LEN] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
	0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
	0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

/*
 * Frames.
 */

/** A frame being built: headers appended in order, lengths fixed at end. */
struct frame {
	uint8_t b[FRAME_MAX];
	uint16_t len;
	uint16_t stamp_off;	/**< where the check number goes */
	uint16_t ip_off[2];	/**< IP headers, for their lengths */
	uint8_t ip_ver[2];
	uint16_t udp_off[2];	/**< UDP headers, for their lengths */
	uint8_t nip, nudp;
};

static void *
put(struct frame *f, size_t n)
{
	void *p = f->b + f->len;

	memset(p, 0, n);
	f->len += n;
	return p;
}

static void
frame_init(struct frame *f)
{
	memset(f, 0, sizeof(*f));
}

static void
put_eth(struct frame *f, const struct rte_ether_addr *dst,
	const struct rte_ether_addr *src, uint16_t type)
{
	struct rte_ether_hdr *eh = put(f, sizeof(*eh));

	eh->dst_addr = *dst;
	eh->src_addr = *src;
	eh->ether_type = rte_cpu_to_be_16(type);
}

static void
put_vlan(struct frame *f, uint16_t tci, uint16_t type)
{
	struct rte_vlan_hdr *vh = put(f, sizeof(*vh));

	vh->vlan_tci = rte_cpu_to_be_16(tci);
	vh->eth_proto = rte_cpu_to_be_16(type);
}

static void
put_ipv4(struct frame *f, uint32_t src, uint32_t dst, uint8_t proto,
	 uint8_t tos)
{
	struct rte_ipv4_hdr *ip;

	f->ip_off[f->nip] = f->len;
	f->ip_ver[f->nip++] = 4;
	ip = put(f, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = tos;
	ip->time_to_live = 64;
	ip->next_proto_id = proto;
	ip->src_addr = rte_cpu_to_be_32(src);
	ip->dst_addr = rte_cpu_to_be_32(dst);
}

static void
put_ipv6(struct frame *f, const uint8_t *src, const uint8_t *dst,
	 uint8_t proto, uint8_t tc, uint32_t flow, uint8_t hop)
{
	struct rte_ipv6_hdr *ip;

	f->ip_off[f->nip] = f->len;
	f->ip_ver[f->nip++] = 6;
	ip = put(f, sizeof(*ip));
	ip->vtc_flow = rte_cpu_to_be_32((6u << 28) | ((uint32_t)tc << 20) |
					(flow & 0xfffff));
	ip->proto = proto;
	ip->hop_limits = hop;
	memcpy(VBR_TEST_IPV6_BYTES(ip->src_addr), src, 16);
	memcpy(VBR_TEST_IPV6_BYTES(ip->dst_addr), dst, 16);
}

static void
put_udp(struct frame *f, uint16_t sport, uint16_t dport)
{
	struct rte_udp_hdr *u;

	f->udp_off[f->nudp++] = f->len;
	u = put(f, sizeof(*u));
	u->src_port = rte_cpu_to_be_16(sport);
	u->dst_port = rte_cpu_to_be_16(dport);
}

static void
put_tcp(struct frame *f, uint16_t sport, uint16_t dport)
{
	struct rte_tcp_hdr *t = put(f, sizeof(*t));

	t->src_port = rte_cpu_to_be_16(sport);
	t->dst_port = rte_cpu_to_be_16(dport);
	t->data_off = 5 << 4;
	t->tcp_flags = RTE_TCP_ACK_FLAG;
	t->rx_win = RTE_BE16(8192);
}

static void
put_vxlan(struct frame *f, uint32_t vni)
{
	struct rte_vxlan_hdr *v = put(f, sizeof(*v));

	v->vx_flags = RTE_BE32(0x08000000);
	v->vx_vni = rte_cpu_to_be_32(vni << 8);
}

/* GRE with flags (C 0x8000, K 0x2000, S 0x1000) and their optional words. */
static void
put_gre(struct frame *f, uint16_t flags, uint16_t proto, uint32_t key)
{
	struct rte_gre_hdr *g = put(f, sizeof(*g));
	rte_be16_t fl = rte_cpu_to_be_16(flags);
	rte_be32_t w;

	/* headers follow the 14-byte Ethernet one: 32-bit words by memcpy */
	memcpy(g, &fl, sizeof(fl));
	g->proto = rte_cpu_to_be_16(proto);
	if (flags & 0x8000)
		put(f, 4);
	if (flags & 0x2000) {
		w = rte_cpu_to_be_32(key);
		memcpy(put(f, 4), &w, 4);
	}
	if (flags & 0x1000) {
		w = RTE_BE32(1);
		memcpy(put(f, 4), &w, 4);
	}
}

static void
put_mpls(struct frame *f, uint32_t label, uint8_t tc, bool bos)
{
	rte_be32_t w = rte_cpu_to_be_32((label << 12) |
					((uint32_t)(tc & 7) << 9) |
					((uint32_t)bos << 8) | 64);

	memcpy(put(f, sizeof(struct rte_mpls_hdr)), &w, sizeof(w));
}

static void
put_esp(struct frame *f, uint32_t spi, uint32_t seq)
{
	struct rte_esp_hdr *e = put(f, sizeof(*e));

	e->spi = rte_cpu_to_be_32(spi);
	e->seq = rte_cpu_to_be_32(seq);
}

/* Payload (check number and a pattern), lengths, checksums, padding. */
static void
frame_finish(struct frame *f)
{
	uint8_t *pl;
	unsigned int i;
	uint16_t end;

	f->stamp_off = f->len;
	pl = put(f, 20);
	for (i = 4; i < 20; i++)
		pl[i] = (uint8_t)(0xa0 + i);
	end = f->len;
	for (i = 0; i < f->nip; i++) {
		uint8_t *h = f->b + f->ip_off[i];

		if (f->ip_ver[i] == 4) {
			struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)h;

			ip->total_length =
				rte_cpu_to_be_16(end - f->ip_off[i]);
			ip->hdr_checksum = 0;
			ip->hdr_checksum = rte_ipv4_cksum(ip);
		} else {
			struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)h;

			ip->payload_len = rte_cpu_to_be_16(end - f->ip_off[i] -
							   sizeof(*ip));
		}
	}
	for (i = 0; i < f->nudp; i++) {
		struct rte_udp_hdr *u =
			(struct rte_udp_hdr *)(f->b + f->udp_off[i]);

		u->dgram_len = rte_cpu_to_be_16(end - f->udp_off[i]);
	}
	if (f->len < RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN)
		put(f, RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN - f->len);
}

/* A frame of an EtherType with no L3 header. */
static void
mk_l2(struct frame *f, const struct rte_ether_addr *dst,
      const struct rte_ether_addr *src, uint16_t type)
{
	frame_init(f);
	put_eth(f, dst, src, type);
	frame_finish(f);
}

/** What a plain IPv4/IPv6 frame holds. */
struct l34 {
	uint32_t src4, dst4;
	uint8_t src6[16], dst6[16];
	uint8_t proto;		/**< UDP and TCP get a header with ports */
	uint8_t tos;		/**< IPv4 TOS, IPv6 traffic class */
	uint8_t hop;		/**< IPv6 hop limit */
	uint32_t flow;		/**< IPv6 flow label */
	uint16_t sport, dport;
};

static const struct l34 l34_default = {
	.src4 = IP4(10, 1, 1, 1),
	.dst4 = IP4(10, 2, 2, 2),
	.src6 = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x01 },
	.dst6 = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x02 },
	.proto = IPPROTO_UDP,
	.hop = 64,
	.sport = 1000,
	.dport = 2000,
};

static void
put_l4(struct frame *f, const struct l34 *p)
{
	if (p->proto == IPPROTO_UDP)
		put_udp(f, p->sport, p->dport);
	else if (p->proto == IPPROTO_TCP)
		put_tcp(f, p->sport, p->dport);
}

/* eth (to the port's MAC) / ipv4 / udp or tcp, from p. */
static void
mk_ipv4(struct frame *f, const struct l34 *p)
{
	frame_init(f);
	put_eth(f, &mac1, &mac0, RTE_ETHER_TYPE_IPV4);
	put_ipv4(f, p->src4, p->dst4, p->proto, p->tos);
	put_l4(f, p);
	frame_finish(f);
}

/*
 * As mk_ipv4(), but a non-first fragment (offset 185 * 8): what follows the
 * IPv4 header is not an L4 header, whatever its bytes look like.
 */
static void
mk_ipv4_frag(struct frame *f, const struct l34 *p)
{
	struct rte_ipv4_hdr *ip;

	mk_ipv4(f, p);
	ip = (struct rte_ipv4_hdr *)(f->b + sizeof(struct rte_ether_hdr));
	ip->fragment_offset = RTE_BE16(185);
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
}

static void
mk_ipv6(struct frame *f, const struct l34 *p)
{
	frame_init(f);
	put_eth(f, &mac1, &mac0, RTE_ETHER_TYPE_IPV6);
	put_ipv6(f, p->src6, p->dst6, p->proto, p->tos, p->flow, p->hop);
	put_l4(f, p);
	frame_finish(f);
}

/*
 * Sending and receiving.
 */

/** What one check received. */
struct rx_result {
	uint32_t q[NB_RXQ];	/**< frames per queue */
	uint32_t got;		/**< frames of this check */
	uint32_t mark_ok;	/**< with the FDIR flags and id expected */
	uint32_t bad;		/**< content differs from every frame sent */
	uint32_t split;		/**< copies of a frame on different queues */
	int fq[MAX_FRAMES];	/**< queue of each frame, Q_NONE: not seen */
	uint32_t fn[MAX_FRAMES]; /**< copies of each frame received */
	uint64_t first_flags;	/**< FDIR flags of the first frame */
	uint32_t first_hi;	/**< its hash.fdir.hi */
};

static bool
mark_matches(const struct rte_mbuf *m, uint64_t want)
{
	uint64_t fl = m->ol_flags &
		      (RTE_MBUF_F_RX_FDIR | RTE_MBUF_F_RX_FDIR_ID);

	if (want == MARK_NONE)
		return fl == 0;
	if (want == MARK_FLAG)
		return fl == RTE_MBUF_F_RX_FDIR;
	return fl == (RTE_MBUF_F_RX_FDIR | RTE_MBUF_F_RX_FDIR_ID) &&
	       m->hash.fdir.hi == want;
}

/* One received mbuf: which frame it is, where it came, its flags. */
static void
rx_account(struct rte_mbuf *m, uint16_t q, const struct frame *frames,
	   unsigned int nf, uint64_t want, struct rx_result *r)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	unsigned int i;
	uint32_t id;

	if (m->data_len < frames[0].stamp_off + 4) {
		r->bad++;
		return;
	}
	memcpy(&id, d + frames[0].stamp_off, 4);
	if (id != check_id) {
		late_frames++;
		return;
	}
	for (i = 0; i < nf; i++) {
		const struct frame *f = &frames[i];

		if (m->pkt_len == f->len && m->data_len == f->len &&
		    memcmp(d, f->b, f->stamp_off) == 0 &&
		    memcmp(d + f->stamp_off + 4, f->b + f->stamp_off + 4,
			   f->len - f->stamp_off - 4) == 0)
			break;
	}
	if (i == nf) {
		r->bad++;
		return;
	}
	if (r->got == 0) {
		r->first_flags = m->ol_flags &
				 (RTE_MBUF_F_RX_FDIR | RTE_MBUF_F_RX_FDIR_ID);
		r->first_hi = m->hash.fdir.hi;
	}
	r->got++;
	r->q[q]++;
	if (r->fq[i] == Q_NONE)
		r->fq[i] = q;
	else if (r->fq[i] != q)
		r->split++;
	r->fn[i]++;
	if (mark_matches(m, want))
		r->mark_ok++;
}

/* Drop whatever port 1 holds (frames of earlier checks). */
static void
drain(void)
{
	struct rte_mbuf *r[32];
	uint16_t q, n, k;

	for (q = 0; q < NB_RXQ; q++) {
		do {
			n = rte_eth_rx_burst(port1, q, r, RTE_DIM(r));
			for (k = 0; k < n; k++) {
				late_frames++;
				rte_pktmbuf_free(r[k]);
			}
		} while (n > 0);
	}
}

/*
 * Send copies of each of nf frames from port 0 and gather what port 1
 * receives: until all expected frames came (then QUIET_MS more for strays),
 * or NONE_MS when none is expected, WAIT_MS at most. Return 0, or -1 when
 * sending failed.
 */
static int
xfer(const struct frame *frames, unsigned int nf, unsigned int copies,
     unsigned int expect, uint64_t want, struct rx_result *r)
{
	struct rte_mbuf *pkts[MAX_FRAMES * NB_PKTS];
	unsigned int i, n = nf * copies, sent = 0;
	uint64_t hz = rte_get_timer_hz(), now, deadline;
	bool quiet = false;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < MAX_FRAMES; i++)
		r->fq[i] = Q_NONE;
	if (nf == 0 || nf > MAX_FRAMES || copies > NB_PKTS)
		return -1;
	drain();
	check_id++;
	for (i = 0; i < n; i++) {
		const struct frame *f = &frames[i % nf];
		uint8_t *d;

		pkts[i] = rte_pktmbuf_alloc(mp);
		if (pkts[i] == NULL) {
			rte_pktmbuf_free_bulk(pkts, i);
			return -1;
		}
		d = (uint8_t *)rte_pktmbuf_append(pkts[i], f->len);
		memcpy(d, f->b, f->len);
		memcpy(d + f->stamp_off, &check_id, 4);
	}
	sent = vbr_test_tx_all(port0, pkts, n, WAIT_MS);
	if (sent != n) {
		rte_pktmbuf_free_bulk(pkts + sent, n - sent);
		return -1;
	}
	now = rte_get_timer_cycles();
	deadline = now + hz * (expect == 0 ? NONE_MS : WAIT_MS) / 1000;
	while ((now = rte_get_timer_cycles()) < deadline) {
		struct rte_mbuf *rx[32];
		uint16_t q, k, nb;

		for (q = 0; q < NB_RXQ; q++) {
			nb = rte_eth_rx_burst(port1, q, rx, RTE_DIM(rx));
			for (k = 0; k < nb; k++) {
				rx_account(rx[k], q, frames, nf, want, r);
				rte_pktmbuf_free(rx[k]);
			}
		}
		if (!quiet && expect != 0 && r->got >= expect) {
			quiet = true;
			deadline = now + hz * QUIET_MS / 1000;
		}
	}
	return 0;
}

/*
 * NB_PKTS copies of f: all on queue q with the mark expected (q >= 0), or
 * none received (q == Q_NONE).
 */
static int
expect_mark(const char *what, const struct frame *f, int q, uint64_t want)
{
	struct rx_result r;

	TEST_ASSERT_SUCCESS(xfer(f, 1, NB_PKTS, q == Q_NONE ? 0 : NB_PKTS,
				 want, &r), "%s: send", what);
	TEST_ASSERT_EQUAL(r.bad, 0, "%s: frames that were not sent", what);
	if (q == Q_NONE) {
		TEST_ASSERT_EQUAL(r.got, 0, "%s: expected no frame, got them "
				  "on queues %u %u %u %u", what, r.q[0],
				  r.q[1], r.q[2], r.q[3]);
		return TEST_SUCCESS;
	}
	TEST_ASSERT_EQUAL(r.q[q], NB_PKTS, "%s: frames on queue %d (per "
			  "queue %u %u %u %u)", what, q, r.q[0], r.q[1],
			  r.q[2], r.q[3]);
	TEST_ASSERT_EQUAL(r.got, NB_PKTS, "%s: frames received", what);
	TEST_ASSERT_EQUAL(r.mark_ok, NB_PKTS, "%s: FDIR flags/id (first "
			  "frame: flags 0x%" PRIx64 " fdir.hi %u)", what,
			  r.first_flags, r.first_hi);
	return TEST_SUCCESS;
}

static int
expect_q(const char *what, const struct frame *f, int q)
{
	return expect_mark(what, f, q, MARK_NONE);
}

#define EXPECT_Q(what, f, q) \
	TEST_ASSERT_SUCCESS(expect_q(what, f, q), "see above")
#define EXPECT_MARK(what, f, q, m) \
	TEST_ASSERT_SUCCESS(expect_mark(what, f, q, m), "see above")

/*
 * Rules.
 */

#define ITEM(t, s, m) \
	{ .type = RTE_FLOW_ITEM_TYPE_##t, .spec = (s), .mask = (m) }
#define ITEM_END { .type = RTE_FLOW_ITEM_TYPE_END }
#define ACT(t, c) { .type = RTE_FLOW_ACTION_TYPE_##t, .conf = (c) }
#define ACT_END { .type = RTE_FLOW_ACTION_TYPE_END }

static const struct rte_flow_action_queue queue_1 = { .index = 1 };
static const struct rte_flow_action_queue queue_2 = { .index = 2 };
static const struct rte_flow_action_queue queue_3 = { .index = 3 };
static const struct rte_flow_action to_q1[] = {
	ACT(QUEUE, &queue_1), ACT_END };
static const struct rte_flow_action to_q2[] = {
	ACT(QUEUE, &queue_2), ACT_END };
static const struct rte_flow_action to_q3[] = {
	ACT(QUEUE, &queue_3), ACT_END };
static const struct rte_flow_action to_drop[] = {
	ACT(DROP, NULL), ACT_END };

/* Validate, then create; on failure print why and return NULL. */
static struct rte_flow *
rule(uint32_t prio, const struct rte_flow_item *pattern,
     const struct rte_flow_action *actions)
{
	struct rte_flow_attr attr = { .ingress = 1, .priority = prio };
	struct rte_flow_error err;
	struct rte_flow *f;
	int ret;

	memset(&err, 0, sizeof(err));
	ret = rte_flow_validate(port1, &attr, pattern, actions, &err);
	if (ret != 0) {
		printf("validate: %d (%s)\n", ret,
		       err.message != NULL ? err.message : "no message");
		return NULL;
	}
	memset(&err, 0, sizeof(err));
	f = rte_flow_create(port1, &attr, pattern, actions, &err);
	if (f == NULL)
		printf("create: %s (rte_errno %d)\n",
		       err.message != NULL ? err.message : "no message",
		       rte_errno);
	return f;
}

#define RULE(var, prio, pat, act) do { \
	(var) = rule(prio, pat, act); \
	TEST_ASSERT_NOT_NULL(var, "rule %s", #pat); \
} while (0)

#define DESTROY(f) \
	TEST_ASSERT_SUCCESS(vbr_test_flow_destroy(port1, f), "destroy " #f)

/* Port set-up and state between cases. */
static int
port_setup(uint16_t port, uint16_t nb_rxq, uint8_t *key)
{
	struct rte_eth_conf conf = { 0 };

	conf.rxmode.mq_mode = RTE_ETH_MQ_RX_NONE;
	conf.rx_adv_conf.rss_conf.rss_key = key;
	conf.rx_adv_conf.rss_conf.rss_key_len = key != NULL ? RSS_KEY_LEN : 0;
	return vbr_test_port_config(port, &conf, nb_rxq, RING_SIZE, RING_SIZE,
				    mp);
}

/* No user rule, not isolated, started: where each case begins. */
static int
clean_state(void)
{
	struct rte_flow_error err;

	TEST_ASSERT_SUCCESS(rte_flow_flush(port1, &err), "flush");
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop port 1");
	if (isolated) {
		TEST_ASSERT_SUCCESS(rte_flow_isolate(port1, 0, &err),
				    "isolate off");
		isolated = false;
	}
	TEST_ASSERT_SUCCESS(rte_eth_promiscuous_disable(port1), "promisc");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start port 1");
	drain();
	return TEST_SUCCESS;
}

#define CLEAN() TEST_ASSERT_SUCCESS(clean_state(), "clean state")

/*
 * An item case: a rule (pattern → queue 2) at priority 0; every hit frame
 * on queue 2, every miss frame on queue 0 (it differs from a hit in exactly
 * the matched field); the rule destroyed, every hit frame on queue 0 again.
 */
static int
item_case(const char *what, const struct rte_flow_item *pattern,
	  const struct frame *hits, unsigned int nhits,
	  const struct frame *misses, unsigned int nmiss)
{
	struct rte_flow *f;
	char buf[96];
	unsigned int i;

	f = rule(0, pattern, to_q2);
	TEST_ASSERT_NOT_NULL(f, "%s: rule", what);
	for (i = 0; i < nhits; i++) {
		snprintf(buf, sizeof(buf), "%s: matching frame %u", what, i);
		if (expect_q(buf, &hits[i], 2) != TEST_SUCCESS) {
			vbr_test_flow_destroy(port1, f);
			return TEST_FAILED;
		}
	}
	for (i = 0; i < nmiss; i++) {
		snprintf(buf, sizeof(buf), "%s: non-matching frame %u", what,
			 i);
		if (expect_q(buf, &misses[i], 0) != TEST_SUCCESS) {
			vbr_test_flow_destroy(port1, f);
			return TEST_FAILED;
		}
	}
	TEST_ASSERT_SUCCESS(vbr_test_flow_destroy(port1, f), "%s: destroy",
			    what);
	for (i = 0; i < nhits; i++) {
		snprintf(buf, sizeof(buf), "%s: matching frame %u, rule "
			 "destroyed", what, i);
		EXPECT_Q(buf, &hits[i], 0);
	}
	return TEST_SUCCESS;
}

#define ITEM_CASE(what, pat, hits, misses) \
	TEST_ASSERT_SUCCESS(item_case(what, pat, hits, RTE_DIM(hits), \
				      misses, RTE_DIM(misses)), "%s", what)

/* The ports run swverbs' full profile (argument "full"). */
static bool full_profile;

/*
 * A rule the mlx5 profile refuses: validate and create both fail with
 * ENOTSUP, error type type, a message naming why; nothing is created.
 */
static int
refused_case(const char *what, const struct rte_flow_item *pattern,
	     enum rte_flow_error_type type, const char *why)
{
	struct rte_flow_attr attr = { .ingress = 1 };
	struct rte_flow_error err;
	struct rte_flow *f;
	int ret;

	memset(&err, 0, sizeof(err));
	ret = rte_flow_validate(port1, &attr, pattern, to_q2, &err);
	TEST_ASSERT_EQUAL(ret, -ENOTSUP, "%s: validate: %d", what, ret);
	TEST_ASSERT_EQUAL(err.type, type, "%s: validate: error type %d", what,
			  err.type);
	TEST_ASSERT(err.message != NULL && strstr(err.message, why) != NULL,
		    "%s: validate: message \"%s\"", what,
		    err.message != NULL ? err.message : "");
	memset(&err, 0, sizeof(err));
	f = rte_flow_create(port1, &attr, pattern, to_q2, &err);
	TEST_ASSERT_NULL(f, "%s: created", what);
	TEST_ASSERT_EQUAL(rte_errno, ENOTSUP, "%s: create: rte_errno %d",
			  what, rte_errno);
	TEST_ASSERT_EQUAL(err.type, type, "%s: create: error type %d", what,
			  err.type);
	TEST_ASSERT(err.message != NULL && strstr(err.message, why) != NULL,
		    "%s: create: message \"%s\"", what,
		    err.message != NULL ? err.message : "");
	return TEST_SUCCESS;
}

/* An item case on the full profile, its exact refusal on mlx5. */
#define ITEM_CASE_FULL(what, pat, hits, misses, type, why) do { \
	if (full_profile) \
		ITEM_CASE(what, pat, hits, misses); \
	else \
		TEST_ASSERT_SUCCESS(refused_case(what, pat, \
			RTE_FLOW_ERROR_TYPE_##type, why), "%s", what); \
	} while (0)

/* Hash input of an IPv4 frame: addresses, then ports when with_l4. */
static uint32_t
hash_ipv4(const uint8_t *key, uint32_t src, uint32_t dst, uint16_t sport,
	  uint16_t dport, bool with_l4)
{
	uint8_t in[12];

	in[0] = src >> 24; in[1] = src >> 16; in[2] = src >> 8; in[3] = src;
	in[4] = dst >> 24; in[5] = dst >> 16; in[6] = dst >> 8; in[7] = dst;
	in[8] = sport >> 8; in[9] = sport;
	in[10] = dport >> 8; in[11] = dport;
	return vbr_test_toeplitz(key, RSS_KEY_LEN, in, with_l4 ? 12 : 8);
}

/*
 * Hash of a frame's outer IPv4 or IPv6 header (and the UDP/TCP ports after
 * it when with_l4), read from the frame's bytes.
 */
static uint32_t
hash_frame(const uint8_t *key, const struct frame *f, bool with_l4)
{
	const struct rte_ether_hdr *eh = (const void *)f->b;
	const uint8_t *l3 = f->b + sizeof(*eh);
	uint8_t in[36];
	unsigned int n, alen, l4off;

	if (eh->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV4)) {
		alen = 4;
		memcpy(in, l3 + offsetof(struct rte_ipv4_hdr, src_addr), 8);
		l4off = sizeof(struct rte_ipv4_hdr);
	} else {
		alen = 16;
		memcpy(in, l3 + offsetof(struct rte_ipv6_hdr, src_addr), 32);
		l4off = sizeof(struct rte_ipv6_hdr);
	}
	n = 2 * alen;
	if (with_l4) {
		memcpy(in + n, l3 + l4off, 4);
		n += 4;
	}
	return vbr_test_toeplitz(key, RSS_KEY_LEN, in, n);
}

/*
 * The queue of a hash: the PMD's table has the next power of two entries
 * filled round-robin over the list (vbr_rss.c, design.rst), the device takes
 * the low bits of the hash.
 */
static uint16_t
rss_queue(uint32_t hash, const uint16_t *queues, unsigned int n)
{
	unsigned int size = 1;

	while (size < n)
		size <<= 1;
	return queues[(hash & (size - 1)) % n];
}

/*
 * Cases.
 */

static int
test_toeplitz_reference(void)
{
	/* RSS specification verification suite (IPv4), first two rows. */
	TEST_ASSERT_EQUAL(hash_ipv4(action_key, IP4(66, 9, 149, 187),
				    IP4(161, 142, 100, 80), 2794, 1766,
				    false), 0x323e8fc2, "ipv4 row 1");
	TEST_ASSERT_EQUAL(hash_ipv4(action_key, IP4(66, 9, 149, 187),
				    IP4(161, 142, 100, 80), 2794, 1766,
				    true), 0x51ccc178, "ipv4/tcp row 1");
	TEST_ASSERT_EQUAL(hash_ipv4(action_key, IP4(199, 92, 111, 2),
				    IP4(65, 69, 140, 83), 14230, 4739,
				    false), 0xd718262a, "ipv4 row 2");
	TEST_ASSERT_EQUAL(hash_ipv4(action_key, IP4(199, 92, 111, 2),
				    IP4(65, 69, 140, 83), 14230, 4739,
				    true), 0xc626b0ea, "ipv4/tcp row 2");
	{
		static const uint16_t q[] = { 1, 2, 3 };

		/* 3 queues: 4 entries, q1 q2 q3 q1 */
		TEST_ASSERT_EQUAL(rss_queue(0, q, 3), 1, "entry 0");
		TEST_ASSERT_EQUAL(rss_queue(2, q, 3), 3, "entry 2");
		TEST_ASSERT_EQUAL(rss_queue(7, q, 3), 1, "entry 3");
	}
	return TEST_SUCCESS;
}

/* Default traffic: mq_mode NONE puts everything the port accepts on 0. */
static int
test_default_queue(void)
{
	struct frame f;
	struct l34 p = l34_default;
	unsigned int i;

	CLEAN();
	mk_l2(&f, &mac1, &mac0, TYPE_A);
	EXPECT_Q("own MAC, non-IP", &f, 0);
	mk_l2(&f, &bcast_mac, &mac0, TYPE_A);
	EXPECT_Q("broadcast", &f, 0);
	mk_l2(&f, &foreign_mac, &mac0, TYPE_A);
	EXPECT_Q("foreign MAC (no promiscuous mode)", &f, Q_NONE);
	for (i = 0; i < 4; i++) {
		p.sport = 1000 + 7 * i;
		p.src4 = IP4(10, 1, 1, 1 + i);
		mk_ipv4(&f, &p);
		EXPECT_Q("ipv4/udp flows", &f, 0);
	}
	p.proto = IPPROTO_TCP;
	mk_ipv6(&f, &p);
	EXPECT_Q("ipv6/tcp", &f, 0);
	return TEST_SUCCESS;
}

static int
test_item_eth(void)
{
	struct rte_flow_item_eth s = { 0 }, m = { 0 };
	struct rte_flow_item pat[] = { ITEM(ETH, &s, &m), ITEM_END };
	struct frame hit[2], miss[2];

	CLEAN();
	/* dst: the port's MAC at priority 0 beats the internal MAC rule */
	s.dst = mac1;
	memset(&m.dst, 0xff, sizeof(m.dst));
	mk_l2(&hit[0], &mac1, &mac0, TYPE_A);
	mk_l2(&hit[1], &mac1, &src_a, TYPE_B);
	mk_l2(&miss[0], &bcast_mac, &mac0, TYPE_A);
	mk_l2(&miss[1], &bcast_mac, &src_a, TYPE_B);
	ITEM_CASE("eth dst", pat, hit, miss);
	/* dst partial mask: the multicast bit (only broadcast reaches us) */
	memset(&s, 0, sizeof(s));
	memset(&m, 0, sizeof(m));
	s.dst.addr_bytes[0] = 0x01;
	m.dst.addr_bytes[0] = 0x01;
	mk_l2(&hit[0], &bcast_mac, &mac0, TYPE_A);
	mk_l2(&hit[1], &bcast_mac, &src_b, TYPE_B);
	mk_l2(&miss[0], &mac1, &mac0, TYPE_A);
	mk_l2(&miss[1], &mac1, &src_b, TYPE_B);
	/*
	 * Multicast-only: mlx5 would move it behind the port's broadcast
	 * rule; vbr keeps it at its priority on both profiles.
	 */
	ITEM_CASE("eth dst multicast bit", pat, hit, miss);
	/* src */
	memset(&s, 0, sizeof(s));
	memset(&m, 0, sizeof(m));
	s.src = src_a;
	memset(&m.src, 0xff, sizeof(m.src));
	mk_l2(&hit[0], &mac1, &src_a, TYPE_A);
	mk_l2(&hit[1], &bcast_mac, &src_a, TYPE_B);
	mk_l2(&miss[0], &mac1, &src_b, TYPE_A);
	mk_l2(&miss[1], &bcast_mac, &src_b, TYPE_B);
	ITEM_CASE("eth src", pat, hit, miss);
	/* type */
	memset(&s, 0, sizeof(s));
	memset(&m, 0, sizeof(m));
	s.type = RTE_BE16(TYPE_A);
	m.type = RTE_BE16(0xffff);
	mk_l2(&hit[0], &mac1, &mac0, TYPE_A);
	mk_l2(&hit[1], &bcast_mac, &src_b, TYPE_A);
	mk_l2(&miss[0], &mac1, &mac0, TYPE_B);
	mk_l2(&miss[1], &bcast_mac, &src_b, TYPE_B);
	ITEM_CASE("eth type", pat, hit, miss);
	return TEST_SUCCESS;
}

/* A VLAN-tagged frame to the port: tci, then inner type (IPv4: +UDP). */
static void
mk_vlan(struct frame *f, uint16_t tci, uint16_t type)
{
	struct l34 p = l34_default;

	frame_init(f);
	put_eth(f, &mac1, &mac0, RTE_ETHER_TYPE_VLAN);
	put_vlan(f, tci, type);
	if (type == RTE_ETHER_TYPE_IPV4) {
		put_ipv4(f, p.src4, p.dst4, p.proto, 0);
		put_l4(f, &p);
	} else if (type == RTE_ETHER_TYPE_IPV6) {
		put_ipv6(f, p.src6, p.dst6, p.proto, 0, 0, 64);
		put_l4(f, &p);
	}
	frame_finish(f);
}

static int
test_item_vlan(void)
{
	struct rte_flow_item_vlan s = { 0 }, m = { 0 };
	struct rte_flow_item pat[] = {
		ITEM(ETH, NULL, NULL), ITEM(VLAN, &s, &m), ITEM_END };
	struct frame hit[2], miss[3];

	CLEAN();
	/* VID 100 (priority bits not matched) */
	s.tci = RTE_BE16(100);
	m.tci = RTE_BE16(0x0fff);
	mk_vlan(&hit[0], 100, TYPE_A);
	mk_vlan(&hit[1], (5 << 13) | 100, RTE_ETHER_TYPE_IPV4);
	mk_vlan(&miss[0], 101, TYPE_A);
	mk_vlan(&miss[1], (5 << 13) | 101, RTE_ETHER_TYPE_IPV4);
	mk_l2(&miss[2], &mac1, &mac0, TYPE_A);	/* untagged */
	ITEM_CASE("vlan vid", pat, hit, miss);
	/* the whole TCI: priority 5 */
	s.tci = RTE_BE16((5 << 13) | 100);
	m.tci = RTE_BE16(0xffff);
	mk_vlan(&hit[0], (5 << 13) | 100, TYPE_A);
	mk_vlan(&hit[1], (5 << 13) | 100, RTE_ETHER_TYPE_IPV6);
	mk_vlan(&miss[0], (4 << 13) | 100, TYPE_A);
	mk_vlan(&miss[1], 100, RTE_ETHER_TYPE_IPV6);
	mk_vlan(&miss[2], (5 << 13) | 99, TYPE_A);
	ITEM_CASE("vlan tci", pat, hit, miss);
	/* VID and inner type */
	s.tci = RTE_BE16(100);
	m.tci = RTE_BE16(0x0fff);
	s.inner_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	m.inner_type = RTE_BE16(0xffff);
	mk_vlan(&hit[0], 100, RTE_ETHER_TYPE_IPV4);
	mk_vlan(&hit[1], (3 << 13) | 100, RTE_ETHER_TYPE_IPV4);
	mk_vlan(&miss[0], 100, RTE_ETHER_TYPE_IPV6);
	mk_vlan(&miss[1], 100, TYPE_A);
	mk_ipv4(&miss[2], &l34_default);	/* untagged IPv4 */
	ITEM_CASE("vlan vid + inner_type", pat, hit, miss);
	return TEST_SUCCESS;
}

static int
test_item_ipv4(void)
{
	struct rte_flow_item_ipv4 s = { 0 }, m = { 0 };
	struct rte_flow_item pat[] = {
		ITEM(ETH, NULL, NULL), ITEM(IPV4, &s, &m), ITEM_END };
	struct frame hit[2], miss[2];
	struct l34 p = l34_default;

	CLEAN();
	/* src */
	s.hdr.src_addr = RTE_BE32(IP4(10, 1, 1, 1));
	m.hdr.src_addr = RTE_BE32(0xffffffff);
	mk_ipv4(&hit[0], &p);
	p.proto = IPPROTO_TCP;
	mk_ipv4(&hit[1], &p);
	p.src4 = IP4(10, 1, 1, 2);
	mk_ipv4(&miss[0], &p);
	p.src4 = IP4(11, 1, 1, 1);
	p.proto = IPPROTO_UDP;
	mk_ipv4(&miss[1], &p);
	ITEM_CASE("ipv4 src", pat, hit, miss);
	/* dst */
	memset(&s, 0, sizeof(s));
	memset(&m, 0, sizeof(m));
	s.hdr.dst_addr = RTE_BE32(IP4(10, 2, 2, 2));
	m.hdr.dst_addr = RTE_BE32(0xffffffff);
	p = l34_default;
	mk_ipv4(&hit[0], &p);
	p.src4 = IP4(192, 168, 1, 1);
	mk_ipv4(&hit[1], &p);
	p.dst4 = IP4(10, 2, 2, 3);
	mk_ipv4(&miss[0], &p);
	p = l34_default;
	p.dst4 = IP4(10, 2, 3, 2);
	mk_ipv4(&miss[1], &p);
	ITEM_CASE("ipv4 dst", pat, hit, miss);
	/* dst, partial mask: 10.0.0.0/8 */
	s.hdr.dst_addr = RTE_BE32(IP4(10, 0, 0, 0));
	m.hdr.dst_addr = RTE_BE32(0xff000000);
	p = l34_default;
	p.dst4 = IP4(10, 200, 3, 4);
	mk_ipv4(&hit[0], &p);
	p.dst4 = IP4(10, 0, 0, 1);
	mk_ipv4(&hit[1], &p);
	p.dst4 = IP4(11, 200, 3, 4);
	mk_ipv4(&miss[0], &p);
	p.dst4 = IP4(138, 0, 0, 1);	/* 10 | 0x80 in the first byte */
	mk_ipv4(&miss[1], &p);
	ITEM_CASE("ipv4 dst 10.0.0.0/8", pat, hit, miss);
	/* proto */
	memset(&s, 0, sizeof(s));
	memset(&m, 0, sizeof(m));
	s.hdr.next_proto_id = IPPROTO_UDP;
	m.hdr.next_proto_id = 0xff;
	p = l34_default;
	mk_ipv4(&hit[0], &p);
	p.dst4 = IP4(172, 16, 0, 1);
	mk_ipv4(&hit[1], &p);
	p.proto = IPPROTO_TCP;
	mk_ipv4(&miss[0], &p);
	p.proto = IPPROTO_ICMP;
	mk_ipv4(&miss[1], &p);
	ITEM_CASE("ipv4 proto", pat, hit, miss);
	/* tos */
	memset(&s, 0, sizeof(s));
	memset(&m, 0, sizeof(m));
	s.hdr.type_of_service = 0x28;
	m.hdr.type_of_service = 0xff;
	p = l34_default;
	p.tos = 0x28;
	mk_ipv4(&hit[0], &p);
	p.proto = IPPROTO_TCP;
	mk_ipv4(&hit[1], &p);
	p.tos = 0x29;
	mk_ipv4(&miss[0], &p);
	p.tos = 0;
	mk_ipv4(&miss[1], &p);
	ITEM_CASE("ipv4 tos", pat, hit, miss);
	/* tos, partial mask: DSCP only (ECN bits ignored) */
	s.hdr.type_of_service = 0x28;
	m.hdr.type_of_service = 0xfc;
	p = l34_default;
	p.tos = 0x2b;
	mk_ipv4(&hit[0], &p);
	p.tos = 0x29;
	mk_ipv4(&hit[1], &p);
	p.tos = 0x2c;
	mk_ipv4(&miss[0], &p);
	p.tos = 0x08;
	mk_ipv4(&miss[1], &p);
	ITEM_CASE("ipv4 dscp", pat, hit, miss);
	return TEST_SUCCESS;
}

static int
test_item_ipv6(void)
{
	struct rte_flow_item_ipv6 s = { 0 }, m = { 0 };
	struct rte_flow_item pat[] = {
		ITEM(ETH, NULL, NULL), ITEM(IPV6, &s, &m), ITEM_END };
	struct frame hit[2], miss[2];
	struct l34 p = l34_default;

	CLEAN();
	/* src */
	memcpy(VBR_TEST_IPV6_BYTES(s.hdr.src_addr), p.src6, 16);
	memset(VBR_TEST_IPV6_BYTES(m.hdr.src_addr), 0xff, 16);
	mk_ipv6(&hit[0], &p);
	p.proto = IPPROTO_TCP;
	mk_ipv6(&hit[1], &p);
	p.src6[15] = 0x03;
	mk_ipv6(&miss[0], &p);
	p = l34_default;
	p.src6[0] = 0x30;
	mk_ipv6(&miss[1], &p);
	ITEM_CASE("ipv6 src", pat, hit, miss);
	/* dst */
	memset(&s, 0, sizeof(s));
	memset(&m, 0, sizeof(m));
	p = l34_default;
	memcpy(VBR_TEST_IPV6_BYTES(s.hdr.dst_addr), p.dst6, 16);
	memset(VBR_TEST_IPV6_BYTES(m.hdr.dst_addr), 0xff, 16);
	mk_ipv6(&hit[0], &p);
	p.src6[7] = 0x55;
	mk_ipv6(&hit[1], &p);
	p.dst6[15] = 0x12;
	mk_ipv6(&miss[0], &p);
	p = l34_default;
	p.dst6[8] = 0x80;
	mk_ipv6(&miss[1], &p);
	ITEM_CASE("ipv6 dst", pat, hit, miss);
	/* dst, partial mask: 2001:db8::/32 */
	memset(VBR_TEST_IPV6_BYTES(m.hdr.dst_addr), 0, 16);
	memset(VBR_TEST_IPV6_BYTES(m.hdr.dst_addr), 0xff, 4);
	p = l34_default;
	p.dst6[15] = 0x77;
	p.dst6[5] = 0x01;
	mk_ipv6(&hit[0], &p);
	p.dst6[4] = 0xff;
	mk_ipv6(&hit[1], &p);
	p.dst6[3] = 0xb9;
	mk_ipv6(&miss[0], &p);
	p = l34_default;
	p.dst6[0] = 0xfe;
	mk_ipv6(&miss[1], &p);
	ITEM_CASE("ipv6 dst 2001:db8::/32", pat, hit, miss);
	/* proto (next header) */
	memset(&s, 0, sizeof(s));
	memset(&m, 0, sizeof(m));
	s.hdr.proto = IPPROTO_TCP;
	m.hdr.proto = 0xff;
	p = l34_default;
	p.proto = IPPROTO_TCP;
	mk_ipv6(&hit[0], &p);
	p.dport = 443;
	mk_ipv6(&hit[1], &p);
	p.proto = IPPROTO_UDP;
	mk_ipv6(&miss[0], &p);
	p.proto = IPPROTO_ICMPV6;
	mk_ipv6(&miss[1], &p);
	ITEM_CASE("ipv6 proto", pat, hit, miss);
	/* traffic class */
	memset(&s, 0, sizeof(s));
	memset(&m, 0, sizeof(m));
	s.hdr.vtc_flow = RTE_BE32(0xb8u << 20);
	m.hdr.vtc_flow = RTE_BE32(0xffu << 20);
	p = l34_default;
	p.tos = 0xb8;
	mk_ipv6(&hit[0], &p);
	p.flow = 0x12345;
	mk_ipv6(&hit[1], &p);
	p.tos = 0xb9;
	mk_ipv6(&miss[0], &p);
	p.tos = 0x38;
	mk_ipv6(&miss[1], &p);
	ITEM_CASE("ipv6 traffic class", pat, hit, miss);
	/* flow label */
	s.hdr.vtc_flow = RTE_BE32(0x12345);
	m.hdr.vtc_flow = RTE_BE32(0xfffff);
	p = l34_default;
	p.flow = 0x12345;
	mk_ipv6(&hit[0], &p);
	p.tos = 0xb8;
	mk_ipv6(&hit[1], &p);
	p.flow = 0x12344;
	mk_ipv6(&miss[0], &p);
	p.flow = 0x92345;
	mk_ipv6(&miss[1], &p);
	ITEM_CASE("ipv6 flow label", pat, hit, miss);
	/* hop limit */
	memset(&s, 0, sizeof(s));
	memset(&m, 0, sizeof(m));
	s.hdr.hop_limits = 7;
	m.hdr.hop_limits = 0xff;
	p = l34_default;
	p.hop = 7;
	mk_ipv6(&hit[0], &p);
	p.proto = IPPROTO_TCP;
	mk_ipv6(&hit[1], &p);
	p.hop = 8;
	mk_ipv6(&miss[0], &p);
	p.hop = 64;
	mk_ipv6(&miss[1], &p);
	ITEM_CASE_FULL("ipv6 hop limit", pat, hit, miss, ITEM_MASK,
		       "ipv6 item: field hop cannot be matched by this device");
	return TEST_SUCCESS;
}

static int
test_item_tcp(void)
{
	struct rte_flow_item_tcp s = { 0 }, m = { 0 };
	struct rte_flow_item pat4[] = {
		ITEM(ETH, NULL, NULL), ITEM(IPV4, NULL, NULL),
		ITEM(TCP, &s, &m), ITEM_END };
	struct rte_flow_item pat6[] = {
		ITEM(ETH, NULL, NULL), ITEM(IPV6, NULL, NULL),
		ITEM(TCP, &s, &m), ITEM_END };
	struct frame hit[2], miss[3];
	struct l34 p = l34_default;

	CLEAN();
	/* dst port */
	s.hdr.dst_port = RTE_BE16(443);
	m.hdr.dst_port = RTE_BE16(0xffff);
	p.proto = IPPROTO_TCP;
	p.dport = 443;
	mk_ipv4(&hit[0], &p);
	p.sport = 5555;
	mk_ipv4(&hit[1], &p);
	p.dport = 444;
	mk_ipv4(&miss[0], &p);
	p.dport = 443 + 256;
	mk_ipv4(&miss[1], &p);
	p.proto = IPPROTO_UDP;	/* UDP to port 443 */
	p.dport = 443;
	mk_ipv4(&miss[2], &p);
	ITEM_CASE("ipv4/tcp dst", pat4, hit, miss);
	/* src port */
	memset(&s, 0, sizeof(s));
	memset(&m, 0, sizeof(m));
	s.hdr.src_port = RTE_BE16(40000);
	m.hdr.src_port = RTE_BE16(0xffff);
	p = l34_default;
	p.proto = IPPROTO_TCP;
	p.sport = 40000;
	mk_ipv4(&hit[0], &p);
	p.dport = 80;
	mk_ipv4(&hit[1], &p);
	p.sport = 40001;
	mk_ipv4(&miss[0], &p);
	p.sport = 80;		/* ports swapped */
	p.dport = 40000;
	mk_ipv4(&miss[1], &p);
	p.sport = 40000;
	p.dport = 80;
	p.proto = IPPROTO_UDP;
	mk_ipv4(&miss[2], &p);
	ITEM_CASE("ipv4/tcp src", pat4, hit, miss);
	/* over IPv6 (the issue's example) */
	memset(&s, 0, sizeof(s));
	memset(&m, 0, sizeof(m));
	s.hdr.dst_port = RTE_BE16(443);
	m.hdr.dst_port = RTE_BE16(0xffff);
	p = l34_default;
	p.proto = IPPROTO_TCP;
	p.dport = 443;
	mk_ipv6(&hit[0], &p);
	p.src6[3] = 0x42;
	mk_ipv6(&hit[1], &p);
	p.dport = 442;
	mk_ipv6(&miss[0], &p);
	p.dport = 443;
	mk_ipv4(&miss[1], &p);	/* IPv4/TCP 443: not ipv6 */
	p.proto = IPPROTO_UDP;
	mk_ipv6(&miss[2], &p);
	ITEM_CASE("ipv6/tcp dst", pat6, hit, miss);
	return TEST_SUCCESS;
}

static int
test_item_udp(void)
{
	struct rte_flow_item_udp s = { 0 }, m = { 0 };
	struct rte_flow_item pat[] = {
		ITEM(ETH, NULL, NULL), ITEM(IPV4, NULL, NULL),
		ITEM(UDP, &s, &m), ITEM_END };
	struct frame hit[2], miss[4];
	struct l34 p = l34_default;

	CLEAN();
	s.hdr.dst_port = RTE_BE16(53);
	m.hdr.dst_port = RTE_BE16(0xffff);
	p.dport = 53;
	mk_ipv4(&hit[0], &p);
	p.sport = 33333;
	mk_ipv4(&hit[1], &p);
	p.dport = 54;
	mk_ipv4(&miss[0], &p);
	p.dport = 53 << 8;
	mk_ipv4(&miss[1], &p);
	p.dport = 53;
	p.proto = IPPROTO_TCP;
	mk_ipv4(&miss[2], &p);
	p.proto = IPPROTO_UDP;
	mk_ipv4_frag(&miss[3], &p);
	ITEM_CASE("udp dst", pat, hit, miss);
	memset(&s, 0, sizeof(s));
	memset(&m, 0, sizeof(m));
	s.hdr.src_port = RTE_BE16(5353);
	m.hdr.src_port = RTE_BE16(0xffff);
	p = l34_default;
	p.sport = 5353;
	mk_ipv4(&hit[0], &p);
	p.dport = 9;
	mk_ipv4(&hit[1], &p);
	p.sport = 5354;
	mk_ipv4(&miss[0], &p);
	p.sport = 9;
	p.dport = 5353;
	mk_ipv4(&miss[1], &p);
	p.sport = 5353;
	p.dport = 9;
	p.proto = IPPROTO_TCP;
	mk_ipv4(&miss[2], &p);
	p.proto = IPPROTO_UDP;
	mk_ipv4_frag(&miss[3], &p);
	ITEM_CASE("udp src", pat, hit, miss);
	/* both ports, upper byte of dst masked only */
	s.hdr.src_port = RTE_BE16(5353);
	m.hdr.src_port = RTE_BE16(0xffff);
	s.hdr.dst_port = RTE_BE16(0x1200);
	m.hdr.dst_port = RTE_BE16(0xff00);
	p = l34_default;
	p.sport = 5353;
	p.dport = 0x1234;
	mk_ipv4(&hit[0], &p);
	p.dport = 0x12ff;
	mk_ipv4(&hit[1], &p);
	p.dport = 0x1334;
	mk_ipv4(&miss[0], &p);
	p.dport = 0x1234;
	p.sport = 5352;
	mk_ipv4(&miss[1], &p);
	p.sport = 5353;
	p.proto = IPPROTO_TCP;
	mk_ipv4(&miss[2], &p);
	p.proto = IPPROTO_UDP;
	mk_ipv4_frag(&miss[3], &p);
	ITEM_CASE("udp src + dst/8", pat, hit, miss);
	return TEST_SUCCESS;
}

/* VXLAN: outer eth/ipv4/udp(4789), inner eth/ipv4/udp. */
static void
mk_vxlan(struct frame *f, uint16_t outer_sport, uint16_t outer_dport,
	 uint32_t vni, const struct rte_ether_addr *idst, uint32_t idst4,
	 uint16_t idport)
{
	frame_init(f);
	put_eth(f, &mac1, &mac0, RTE_ETHER_TYPE_IPV4);
	put_ipv4(f, IP4(10, 1, 1, 1), IP4(10, 0, 0, 2), IPPROTO_UDP, 0);
	put_udp(f, outer_sport, outer_dport);
	put_vxlan(f, vni);
	put_eth(f, idst, &inner_b, RTE_ETHER_TYPE_IPV4);
	put_ipv4(f, IP4(192, 168, 0, 1), idst4, IPPROTO_UDP, 0);
	put_udp(f, 1234, idport);
	frame_finish(f);
}

static int
test_item_vxlan(void)
{
	struct rte_flow_item_udp udp_s = {
		.hdr.dst_port = RTE_BE16(VXLAN_PORT) };
	struct rte_flow_item_udp udp_m = { .hdr.dst_port = RTE_BE16(0xffff) };
	struct rte_flow_item_vxlan vx_s = { .vni = { 0, 0, 42 } };
	struct rte_flow_item_vxlan vx_m = { .vni = { 0xff, 0xff, 0xff } };
	struct rte_flow_item pat_vni[] = {
		ITEM(ETH, NULL, NULL), ITEM(IPV4, NULL, NULL),
		ITEM(UDP, &udp_s, &udp_m), ITEM(VXLAN, &vx_s, &vx_m),
		ITEM_END };
	struct rte_flow_item_eth ie_s = { .dst = inner_a };
	struct rte_flow_item_eth ie_m = {
		.dst.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };
	struct rte_flow_item_ipv4 i4_s = {
		.hdr.dst_addr = RTE_BE32(IP4(192, 168, 0, 2)) };
	struct rte_flow_item_ipv4 i4_m = {
		.hdr.dst_addr = RTE_BE32(0xffffffff) };
	struct rte_flow_item_udp iu_s = { .hdr.dst_port = RTE_BE16(53) };
	struct rte_flow_item_udp iu_m = { .hdr.dst_port = RTE_BE16(0xffff) };
	struct rte_flow_item pat_inner[] = {
		ITEM(ETH, NULL, NULL), ITEM(IPV4, NULL, NULL),
		ITEM(UDP, NULL, NULL), ITEM(VXLAN, NULL, NULL),
		ITEM(ETH, &ie_s, &ie_m), ITEM(IPV4, &i4_s, &i4_m),
		ITEM(UDP, &iu_s, &iu_m), ITEM_END };
	struct frame hit[2], miss[4];
	const uint32_t i4 = IP4(192, 168, 0, 2);

	CLEAN();
	mk_vxlan(&hit[0], 50000, VXLAN_PORT, 42, &inner_a, i4, 53);
	mk_vxlan(&hit[1], 50001, VXLAN_PORT, 42, &inner_b, IP4(1, 2, 3, 4),
		 99);
	mk_vxlan(&miss[0], 50000, VXLAN_PORT, 43, &inner_a, i4, 53);
	mk_vxlan(&miss[1], 50000, VXLAN_PORT, 42 << 8, &inner_a, i4, 53);
	mk_vxlan(&miss[2], 50000, VXLAN_PORT, 42 << 16, &inner_a, i4, 53);
	mk_vxlan(&miss[3], 50000, VXLAN_PORT + 1, 42, &inner_a, i4, 53);
	ITEM_CASE("vxlan vni", pat_vni, hit, miss);
	/* inner eth dst / ipv4 dst / udp dst, any VNI */
	mk_vxlan(&hit[0], 50000, VXLAN_PORT, 42, &inner_a, i4, 53);
	mk_vxlan(&hit[1], 50002, VXLAN_PORT, 7, &inner_a, i4, 53);
	mk_vxlan(&miss[0], 50000, VXLAN_PORT, 42, &inner_b, i4, 53);
	mk_vxlan(&miss[1], 50000, VXLAN_PORT, 42, &inner_a,
		 IP4(192, 168, 0, 3), 53);
	mk_vxlan(&miss[2], 50000, VXLAN_PORT, 42, &inner_a, i4, 54);
	/* the inner headers' values in the outer headers, no tunnel */
	frame_init(&miss[3]);
	put_eth(&miss[3], &mac1, &mac0, RTE_ETHER_TYPE_IPV4);
	put_ipv4(&miss[3], IP4(10, 1, 1, 1), i4, IPPROTO_UDP, 0);
	put_udp(&miss[3], 1234, 53);
	frame_finish(&miss[3]);
	ITEM_CASE("vxlan inner eth/ipv4/udp", pat_inner, hit, miss);
	return TEST_SUCCESS;
}

/* GRE over IPv4: flags, protocol, key; then an IPv4/UDP or MPLS payload. */
static void
mk_gre(struct frame *f, uint16_t flags, uint16_t proto, uint32_t key,
       uint32_t inner_dst)
{
	frame_init(f);
	put_eth(f, &mac1, &mac0, RTE_ETHER_TYPE_IPV4);
	put_ipv4(f, IP4(10, 1, 1, 1), IP4(10, 0, 0, 9), IPPROTO_GRE, 0);
	put_gre(f, flags, proto, key);
	if (proto == RTE_ETHER_TYPE_IPV4) {
		put_ipv4(f, IP4(172, 16, 0, 1), inner_dst, IPPROTO_UDP, 0);
		put_udp(f, 1, 2);
	} else if (proto == RTE_ETHER_TYPE_IPV6) {
		put_ipv6(f, l34_default.src6, l34_default.dst6, IPPROTO_UDP,
			 0, 0, 64);
		put_udp(f, 1, 2);
	} else if (proto == RTE_ETHER_TYPE_MPLS) {
		put_mpls(f, inner_dst, 0, true);
		put_ipv4(f, IP4(172, 16, 0, 1), IP4(172, 16, 0, 2),
			 IPPROTO_UDP, 0);
		put_udp(f, 1, 2);
	}
	frame_finish(f);
}

static int
test_item_gre(void)
{
	struct rte_flow_item_gre s = { 0 }, m = { 0 };
	struct rte_flow_item pat[] = {
		ITEM(ETH, NULL, NULL), ITEM(IPV4, NULL, NULL),
		ITEM(GRE, &s, &m), ITEM_END };
	struct rte_flow_item_ipv4 i4_s = {
		.hdr.dst_addr = RTE_BE32(IP4(172, 16, 0, 2)) };
	struct rte_flow_item_ipv4 i4_m = {
		.hdr.dst_addr = RTE_BE32(0xffffffff) };
	struct rte_flow_item pat_inner[] = {
		ITEM(ETH, NULL, NULL), ITEM(IPV4, NULL, NULL),
		ITEM(GRE, NULL, NULL), ITEM(IPV4, &i4_s, &i4_m), ITEM_END };
	rte_be32_t gre_key = RTE_BE32(5);
	struct rte_flow_item pat_key[] = {
		ITEM(ETH, NULL, NULL), ITEM(IPV4, NULL, NULL),
		ITEM(GRE, NULL, NULL), ITEM(GRE_KEY, &gre_key, NULL),
		ITEM_END };
	struct rte_flow_attr attr = { .ingress = 1 };
	struct rte_flow_error err;
	struct frame hit[2], miss[2];
	const uint32_t i4 = IP4(172, 16, 0, 2);

	CLEAN();
	/* protocol */
	s.protocol = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	m.protocol = RTE_BE16(0xffff);
	mk_gre(&hit[0], 0, RTE_ETHER_TYPE_IPV4, 0, i4);
	mk_gre(&hit[1], 0x2000, RTE_ETHER_TYPE_IPV4, 77, i4);
	mk_gre(&miss[0], 0, RTE_ETHER_TYPE_IPV6, 0, i4);
	mk_gre(&miss[1], 0x2000, RTE_ETHER_TYPE_IPV6, 77, i4);
	ITEM_CASE("gre protocol", pat, hit, miss);
	/* K bit set */
	memset(&s, 0, sizeof(s));
	memset(&m, 0, sizeof(m));
	s.c_rsvd0_ver = RTE_BE16(0x2000);
	m.c_rsvd0_ver = RTE_BE16(0x2000);
	mk_gre(&hit[0], 0x2000, RTE_ETHER_TYPE_IPV4, 77, i4);
	mk_gre(&hit[1], 0xb000, RTE_ETHER_TYPE_IPV4, 1, i4);
	mk_gre(&miss[0], 0, RTE_ETHER_TYPE_IPV4, 0, i4);
	mk_gre(&miss[1], 0x9000, RTE_ETHER_TYPE_IPV4, 0, i4);
	ITEM_CASE_FULL("gre K bit", pat, hit, miss, ITEM_MASK,
		       "gre item: field c_rsvd0_ver (the C, K and S bits) "
		       "cannot be matched by this device");
	/* C, K and S all given: C and S clear, K set */
	s.c_rsvd0_ver = RTE_BE16(0x2000);
	m.c_rsvd0_ver = RTE_BE16(0xb000);
	mk_gre(&hit[0], 0x2000, RTE_ETHER_TYPE_IPV4, 77, i4);
	mk_gre(&hit[1], 0x2000, RTE_ETHER_TYPE_IPV6, 8, i4);
	mk_gre(&miss[0], 0xa000, RTE_ETHER_TYPE_IPV4, 77, i4);
	mk_gre(&miss[1], 0x3000, RTE_ETHER_TYPE_IPV4, 77, i4);
	ITEM_CASE_FULL("gre C/K/S", pat, hit, miss, ITEM_MASK,
		       "gre item: field c_rsvd0_ver (the C, K and S bits) "
		       "cannot be matched by this device");
	/* inner IPv4 dst after GRE */
	mk_gre(&hit[0], 0, RTE_ETHER_TYPE_IPV4, 0, i4);
	mk_gre(&hit[1], 0x2000, RTE_ETHER_TYPE_IPV4, 3, i4);
	mk_gre(&miss[0], 0, RTE_ETHER_TYPE_IPV4, 0, IP4(172, 16, 0, 3));
	mk_gre(&miss[1], 0x2000, RTE_ETHER_TYPE_IPV4, 3, IP4(172, 16, 1, 2));
	ITEM_CASE("gre / inner ipv4 dst", pat_inner, hit, miss);
	/* the key value (gre_key item): refused, never widened */
	memset(&err, 0, sizeof(err));
	TEST_ASSERT(rte_flow_validate(port1, &attr, pat_key, to_q2, &err) != 0,
		    "gre_key item accepted (the PMD does not match the key)");
	TEST_ASSERT_NOT_NULL(err.message, "gre_key rejection message");
	return TEST_SUCCESS;
}

/* MPLS over UDP (6635): outer eth/ipv4/udp, label stack, inner IPv4. */
static void
mk_mpls_udp(struct frame *f, uint16_t dport, uint32_t label, uint8_t tc)
{
	frame_init(f);
	put_eth(f, &mac1, &mac0, RTE_ETHER_TYPE_IPV4);
	put_ipv4(f, IP4(10, 1, 1, 1), IP4(10, 0, 0, 7), IPPROTO_UDP, 0);
	put_udp(f, 40000, dport);
	put_mpls(f, label, tc, true);
	put_ipv4(f, IP4(172, 16, 0, 1), IP4(172, 16, 0, 2), IPPROTO_UDP, 0);
	put_udp(f, 1, 2);
	frame_finish(f);
}

static int
test_item_mpls(void)
{
	struct rte_flow_item_mpls s = { 0 }, m = { 0 };
	struct rte_flow_item pat_udp[] = {
		ITEM(ETH, NULL, NULL), ITEM(IPV4, NULL, NULL),
		ITEM(UDP, NULL, NULL), ITEM(MPLS, &s, &m), ITEM_END };
	struct rte_flow_item pat_gre[] = {
		ITEM(ETH, NULL, NULL), ITEM(IPV4, NULL, NULL),
		ITEM(GRE, NULL, NULL), ITEM(MPLS, &s, &m), ITEM_END };
	struct frame hit[2], miss[3];

	CLEAN();
	/* label 100 = 0x00064: label_tc_s bytes 00 06 4x */
	s.label_tc_s[0] = 0x00;
	s.label_tc_s[1] = 0x06;
	s.label_tc_s[2] = 0x40;
	m.label_tc_s[0] = 0xff;
	m.label_tc_s[1] = 0xff;
	m.label_tc_s[2] = 0xf0;
	mk_mpls_udp(&hit[0], MPLS_UDP_PORT, 100, 0);
	mk_mpls_udp(&hit[1], MPLS_UDP_PORT, 100, 5);
	mk_mpls_udp(&miss[0], MPLS_UDP_PORT, 101, 0);
	mk_mpls_udp(&miss[1], MPLS_UDP_PORT, 100 | 0x80000, 0);
	mk_mpls_udp(&miss[2], MPLS_UDP_PORT + 1, 100, 0);
	ITEM_CASE_FULL("udp / mpls label", pat_udp, hit, miss, ITEM,
		       "mpls item cannot be matched by this device");
	if (!full_profile)
		return TEST_SUCCESS;
	/* label and TC */
	s.label_tc_s[2] = 0x40 | (5 << 1);
	m.label_tc_s[2] = 0xfe;
	mk_mpls_udp(&hit[0], MPLS_UDP_PORT, 100, 5);
	mk_mpls_udp(&hit[1], MPLS_UDP_PORT, 100, 5);
	mk_mpls_udp(&miss[0], MPLS_UDP_PORT, 100, 4);
	mk_mpls_udp(&miss[1], MPLS_UDP_PORT, 100, 0);
	mk_mpls_udp(&miss[2], MPLS_UDP_PORT, 36, 5);
	ITEM_CASE("udp / mpls label + tc", pat_udp, hit, miss);
	/* over GRE */
	s.label_tc_s[2] = 0x40;
	m.label_tc_s[2] = 0xf0;
	mk_gre(&hit[0], 0, RTE_ETHER_TYPE_MPLS, 0, 100);
	mk_gre(&hit[1], 0x2000, RTE_ETHER_TYPE_MPLS, 9, 100);
	mk_gre(&miss[0], 0, RTE_ETHER_TYPE_MPLS, 0, 99);
	mk_gre(&miss[1], 0x2000, RTE_ETHER_TYPE_MPLS, 9, 1100);
	mk_mpls_udp(&miss[2], MPLS_UDP_PORT, 101, 0);
	ITEM_CASE("gre / mpls label", pat_gre, hit, miss);
	return TEST_SUCCESS;
}

static void
mk_esp(struct frame *f, uint32_t spi, uint32_t seq)
{
	frame_init(f);
	put_eth(f, &mac1, &mac0, RTE_ETHER_TYPE_IPV4);
	put_ipv4(f, IP4(10, 1, 1, 1), IP4(10, 0, 0, 5), IPPROTO_ESP, 0);
	put_esp(f, spi, seq);
	frame_finish(f);
}

static int
test_item_esp(void)
{
	struct rte_flow_item_esp s = { .hdr.spi = RTE_BE32(0x1000) };
	struct rte_flow_item_esp m = { .hdr.spi = RTE_BE32(0xffffffff) };
	struct rte_flow_item pat[] = {
		ITEM(ETH, NULL, NULL), ITEM(IPV4, NULL, NULL),
		ITEM(ESP, &s, &m), ITEM_END };
	struct frame hit[2], miss[3];

	CLEAN();
	mk_esp(&hit[0], 0x1000, 1);
	mk_esp(&hit[1], 0x1000, 99);
	mk_esp(&miss[0], 0x1001, 1);
	mk_esp(&miss[1], 0x80001000, 1);
	/* the SPI's bytes as UDP ports */
	frame_init(&miss[2]);
	put_eth(&miss[2], &mac1, &mac0, RTE_ETHER_TYPE_IPV4);
	put_ipv4(&miss[2], IP4(10, 1, 1, 1), IP4(10, 0, 0, 5), IPPROTO_UDP,
		 0);
	put_udp(&miss[2], 0, 0x1000);
	frame_finish(&miss[2]);
	ITEM_CASE_FULL("esp spi", pat, hit, miss, ITEM,
		       "esp item cannot be matched by this device");
	return TEST_SUCCESS;
}

/*
 * RSS: nflows IPv4/UDP flows (outer ones for VXLAN) sent through an RSS
 * rule over queues; each flow must land, all copies, on the queue the
 * reference picks.
 */
struct rss_run {
	const uint8_t *key;	/**< key the device must use */
	bool with_l4;		/**< ipv4-udp (else ipv4: addresses) */
	bool vxlan;		/**< VXLAN frames (outer headers hashed) */
	bool v6;		/**< IPv6/UDP frames */
	uint64_t mark;		/**< expected mark */
	const uint16_t *queues;
	unsigned int nq;
};

static int
rss_check(const char *what, const struct rss_run *run)
{
	static struct frame frames[MAX_FRAMES];
	struct rx_result r;
	uint32_t per_q[NB_RXQ] = { 0 };
	unsigned int i, n = MAX_FRAMES;

	for (i = 0; i < n; i++) {
		uint32_t src = IP4(10, 1, (i * 37) & 0xff, 1 + i);
		uint16_t sport = 1024 + i * 977;
		struct l34 p = l34_default;

		if (run->vxlan) {
			mk_vxlan(&frames[i], sport, VXLAN_PORT, 42, &inner_a,
				 IP4(192, 168, 0, 2), 53);
			continue;
		}
		if (run->v6) {
			p.src6[14] = (uint8_t)(i * 37);
			p.src6[15] = (uint8_t)(1 + i);
			p.sport = sport;
			p.dport = 4000 + i;
			mk_ipv6(&frames[i], &p);
			continue;
		}
		p.src4 = src;
		p.sport = sport;
		p.dst4 = IP4(10, 0, 0, 2);
		p.dport = 4000 + i;
		mk_ipv4(&frames[i], &p);
	}
	TEST_ASSERT_SUCCESS(xfer(frames, n, 2, 2 * n, run->mark, &r),
			    "%s: send", what);
	TEST_ASSERT_EQUAL(r.bad, 0, "%s: frames that were not sent", what);
	TEST_ASSERT_EQUAL(r.got, 2 * n, "%s: frames received (%u %u %u %u)",
			  what, r.q[0], r.q[1], r.q[2], r.q[3]);
	TEST_ASSERT_EQUAL(r.split, 0, "%s: a flow on two queues", what);
	TEST_ASSERT_EQUAL(r.mark_ok, r.got, "%s: FDIR flags (first: 0x%"
			  PRIx64 " hi %u)", what, r.first_flags, r.first_hi);
	for (i = 0; i < n; i++) {
		uint32_t h = hash_frame(run->key, &frames[i], run->with_l4);
		uint16_t want = rss_queue(h, run->queues, run->nq);

		TEST_ASSERT_EQUAL(r.fn[i], 2, "%s: flow %u copies", what, i);
		TEST_ASSERT_EQUAL(r.fq[i], want, "%s: flow %u (hash 0x%08x) "
				  "on queue %d, reference says %u", what, i,
				  h, r.fq[i], want);
		per_q[want]++;
	}
	printf("  %s: %u flows on queues %u %u %u %u, as the reference\n",
	       what, n, per_q[0], per_q[1], per_q[2], per_q[3]);
	for (i = 0; i < run->nq; i++)
		TEST_ASSERT(per_q[run->queues[i]] > 0,
			    "%s: queue %u unused: inputs do not spread", what,
			    run->queues[i]);
	return TEST_SUCCESS;
}

/* How many of the flows rss_check() sends pick another queue with k2. */
static unsigned int
rss_differ(const uint8_t *k1, const uint8_t *k2, const uint16_t *q,
	   unsigned int nq)
{
	unsigned int i, n = 0;

	for (i = 0; i < MAX_FRAMES; i++) {
		uint32_t src = IP4(10, 1, (i * 37) & 0xff, 1 + i);
		uint16_t sport = 1024 + i * 977;
		uint32_t dst = IP4(10, 0, 0, 2);
		uint16_t dport = 4000 + i;

		if (rss_queue(hash_ipv4(k1, src, dst, sport, dport, true),
			      q, nq) !=
		    rss_queue(hash_ipv4(k2, src, dst, sport, dport, true),
			      q, nq))
			n++;
	}
	return n;
}

static int
test_action_rss(void)
{
	static const uint16_t q123[] = { 1, 2, 3 };
	static const uint16_t q3120[] = { 3, 1, 2, 0 };
	struct rte_flow_item_udp u_s = { 0 }, u_m = { 0 };
	struct rte_flow_item pat[] = {
		ITEM(ETH, NULL, NULL), ITEM(IPV4, NULL, NULL),
		ITEM(UDP, &u_s, &u_m), ITEM_END };
	struct rte_flow_item pat6[] = {
		ITEM(ETH, NULL, NULL), ITEM(IPV6, NULL, NULL),
		ITEM(UDP, NULL, NULL), ITEM_END };
	struct rte_flow_action_rss rss = {
		.types = RTE_ETH_RSS_NONFRAG_IPV4_UDP,
		.queue_num = RTE_DIM(q123), .queue = q123,
	};
	struct rte_flow_action act[] = { ACT(RSS, &rss), ACT_END };
	struct rss_run run = {
		.key = port_key, .with_l4 = true, .mark = MARK_NONE,
		.queues = q123, .nq = RTE_DIM(q123),
	};
	struct rte_eth_rss_conf conf;
	uint8_t got_key[RSS_KEY_LEN];
	struct rte_flow *f;
	int ret;

	CLEAN();
	/* the port's key: the one given at configure */
	memset(&conf, 0, sizeof(conf));
	conf.rss_key = got_key;
	conf.rss_key_len = sizeof(got_key);
	ret = rte_eth_dev_rss_hash_conf_get(port1, &conf);
	if (ret == -ENOTSUP)
		printf("  note: rss_hash_conf_get not supported; the port "
		       "key is the one configured\n");
	else
		TEST_ASSERT(ret == 0 && memcmp(got_key, port_key,
					       RSS_KEY_LEN) == 0,
			    "rss_hash_conf_get: %d, or not the configured key",
			    ret);
	TEST_ASSERT(rss_differ(port_key, action_key, q123, 3) > 8,
		    "the two keys must spread the flows differently");
	/* ipv4-udp over 1 2 3, the port's key */
	RULE(f, 0, pat, act);
	TEST_ASSERT_SUCCESS(rss_check("rss 1,2,3 ipv4-udp, port key", &run),
			    "see above");
	DESTROY(f);
	/* the key in the action */
	rss.key = action_key;
	rss.key_len = RSS_KEY_LEN;
	run.key = action_key;
	RULE(f, 0, pat, act);
	TEST_ASSERT_SUCCESS(rss_check("rss 1,2,3 ipv4-udp, action key", &run),
			    "see above");
	DESTROY(f);
	/* ipv4 only: addresses hashed, ports not */
	rss.types = RTE_ETH_RSS_IPV4;
	run.with_l4 = false;
	RULE(f, 0, pat, act);
	TEST_ASSERT_SUCCESS(rss_check("rss 1,2,3 ipv4, action key", &run),
			    "see above");
	DESTROY(f);
	/* four queues listed out of order: table 3 1 2 0 */
	rss.types = RTE_ETH_RSS_NONFRAG_IPV4_UDP;
	rss.queue = q3120;
	rss.queue_num = RTE_DIM(q3120);
	run.with_l4 = true;
	run.queues = q3120;
	run.nq = RTE_DIM(q3120);
	RULE(f, 0, pat, act);
	TEST_ASSERT_SUCCESS(rss_check("rss 3,1,2,0 ipv4-udp, action key",
				      &run), "see above");
	DESTROY(f);
	/* IPv6/UDP: 16-byte addresses and the ports */
	rss.types = RTE_ETH_RSS_NONFRAG_IPV6_UDP;
	run.v6 = true;
	RULE(f, 0, pat6, act);
	TEST_ASSERT_SUCCESS(rss_check("rss 3,1,2,0 ipv6-udp, action key",
				      &run), "see above");
	DESTROY(f);
	return TEST_SUCCESS;
}

/* The issue's rule: vxlan vni 42 / eth / ipv4 → rss 0-3 ipv4-udp + mark 7 */
static int
test_action_rss_mark_vxlan(void)
{
	static const uint16_t q0123[] = { 0, 1, 2, 3 };
	struct rte_flow_item_ipv4 o4_s = {
		.hdr.dst_addr = RTE_BE32(IP4(10, 0, 0, 2)) };
	struct rte_flow_item_ipv4 o4_m = {
		.hdr.dst_addr = RTE_BE32(0xffffffff) };
	struct rte_flow_item_udp udp_s = {
		.hdr.dst_port = RTE_BE16(VXLAN_PORT) };
	struct rte_flow_item_udp udp_m = { .hdr.dst_port = RTE_BE16(0xffff) };
	struct rte_flow_item_vxlan vx_s = { .vni = { 0, 0, 42 } };
	struct rte_flow_item_vxlan vx_m = { .vni = { 0xff, 0xff, 0xff } };
	struct rte_flow_item pat[] = {
		ITEM(ETH, NULL, NULL), ITEM(IPV4, &o4_s, &o4_m),
		ITEM(UDP, &udp_s, &udp_m), ITEM(VXLAN, &vx_s, &vx_m),
		ITEM(ETH, NULL, NULL), ITEM(IPV4, NULL, NULL), ITEM_END };
	struct rte_flow_action_rss rss = {
		.types = RTE_ETH_RSS_NONFRAG_IPV4_UDP,
		.queue_num = RTE_DIM(q0123), .queue = q0123,
	};
	struct rte_flow_action_mark mark = { .id = 7 };
	struct rte_flow_action act[] = {
		ACT(RSS, &rss), ACT(MARK, &mark), ACT_END };
	struct rss_run run = {
		.key = port_key, .with_l4 = true, .vxlan = true, .mark = 7,
		.queues = q0123, .nq = RTE_DIM(q0123),
	};
	struct rte_flow *f;
	struct frame miss;

	CLEAN();
	RULE(f, 0, pat, act);
	TEST_ASSERT_SUCCESS(rss_check("vxlan 42 rss 0-3 + mark 7", &run),
			    "see above");
	mk_vxlan(&miss, 50000, VXLAN_PORT, 43, &inner_a, IP4(1, 1, 1, 1), 53);
	EXPECT_Q("vxlan 43: not marked, queue 0", &miss, 0);
	DESTROY(f);
	return TEST_SUCCESS;
}

/* Read an xstat by name; -1 when the port has none of that name. */
static int64_t
xstat(const char *name)
{
	uint64_t id, v;

	if (rte_eth_xstats_get_id_by_name(port1, name, &id) != 0)
		return -1;
	if (rte_eth_xstats_get_by_id(port1, &id, &v, 1) != 1)
		return -1;
	return (int64_t)v;
}

/*
 * Read xstat name until it reaches want (WAIT_MS at most), then once more
 * QUIET_MS later, for a frame counted twice. The thread and service models
 * count a drop when the engine gets to the frame, which may be after a
 * check's NONE_MS of "nothing arrives".
 */
static int64_t
xstat_wait(const char *name, int64_t want)
{
	uint64_t deadline = rte_get_timer_cycles() +
			    rte_get_timer_hz() * WAIT_MS / 1000;

	do {
		if (xstat(name) >= want)
			break;
		rte_delay_ms(1);
	} while (rte_get_timer_cycles() < deadline);
	rte_delay_ms(QUIET_MS);
	return xstat(name);
}

/* The first xstat whose name has "drop" in it and is not a queue's. */
static bool
drop_xstat(char name[RTE_ETH_XSTATS_NAME_SIZE])
{
	struct rte_eth_xstat_name names[256];
	int n, i;

	n = rte_eth_xstats_get_names(port1, names, RTE_DIM(names));
	for (i = 0; i < n && i < (int)RTE_DIM(names); i++) {
		if (strstr(names[i].name, "drop") != NULL &&
		    strstr(names[i].name, "_q") == NULL) {
			memcpy(name, names[i].name, RTE_ETH_XSTATS_NAME_SIZE);
			name[RTE_ETH_XSTATS_NAME_SIZE - 1] = '\0';
			return true;
		}
	}
	return false;
}

static int
test_action_drop(void)
{
	struct rte_flow_item_eth s = { .type = RTE_BE16(TYPE_B) };
	struct rte_flow_item_eth m = { .type = RTE_BE16(0xffff) };
	struct rte_flow_item pat[] = { ITEM(ETH, &s, &m), ITEM_END };
	struct rte_flow_item_eth s2 = { .dst = mac1 };
	struct rte_flow_item_eth m2 = {
		.dst.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };
	struct rte_flow_item pat_dst[] = { ITEM(ETH, &s2, &m2), ITEM_END };
	struct rte_eth_stats st0, st1;
	struct frame fb, fa;
	struct rte_flow *fd, *fq;
	int64_t nm0, nm1, dr0 = -1, dr1;
	char dname[RTE_ETH_XSTATS_NAME_SIZE];
	const char *dn = NULL;

	CLEAN();
	mk_l2(&fb, &mac1, &mac0, TYPE_B);
	mk_l2(&fa, &mac1, &mac0, TYPE_A);
	RULE(fd, 0, pat, to_drop);
	if (drop_xstat(dname)) {
		dn = dname;
		dr0 = xstat(dn);
	}
	nm0 = xstat("rx_no_match");
	TEST_ASSERT_SUCCESS(rte_eth_stats_get(port1, &st0), "stats");
	EXPECT_Q("dropped type", &fb, Q_NONE);
	EXPECT_Q("other type", &fa, 0);
	TEST_ASSERT_SUCCESS(rte_eth_stats_get(port1, &st1), "stats");
	nm1 = xstat("rx_no_match");
	/* received: only the other type's frames; nothing counted missed */
	TEST_ASSERT_EQUAL(st1.ipackets - st0.ipackets, NB_PKTS, "ipackets");
	TEST_ASSERT_EQUAL(st1.imissed - st0.imissed, 0, "imissed");
	TEST_ASSERT_EQUAL(st1.ierrors - st0.ierrors, 0, "ierrors");
	if (nm0 >= 0)
		TEST_ASSERT_EQUAL(nm1 - nm0, 0, "rx_no_match moved: the "
				  "frames were not dropped by the rule");
	if (dn != NULL) {
		dr1 = xstat_wait(dn, dr0 + NB_PKTS);
		TEST_ASSERT_EQUAL(dr1 - dr0, NB_PKTS, "xstat %s", dn);
	} else {
		printf("  note: no xstat counts rule drops (xstats: %s)\n",
		       nm0 >= 0 ? "rx_no_match and others" : "none");
	}
	/* a drop rule beats a lower-priority queue rule on the same frames */
	RULE(fq, 1, pat, to_q2);
	EXPECT_Q("drop (prio 0) over queue (prio 1)", &fb, Q_NONE);
	DESTROY(fq);
	/* ...and loses to a higher-priority one; the drop rule at 1 now */
	DESTROY(fd);
	RULE(fd, 1, pat, to_drop);
	RULE(fq, 0, pat_dst, to_q3);
	EXPECT_Q("queue (prio 0) over drop (prio 1)", &fb, 3);
	DESTROY(fq);
	EXPECT_Q("drop rule again", &fb, Q_NONE);
	DESTROY(fd);
	EXPECT_Q("drop rule destroyed", &fb, 0);
	return TEST_SUCCESS;
}

static int
test_action_mark_flag(void)
{
	struct rte_flow_item_eth s = { .type = RTE_BE16(TYPE_A) };
	struct rte_flow_item_eth m = { .type = RTE_BE16(0xffff) };
	struct rte_flow_item pat[] = { ITEM(ETH, &s, &m), ITEM_END };
	struct rte_flow_item_ipv4 i4_s = {
		.hdr.dst_addr = RTE_BE32(IP4(10, 2, 2, 2)) };
	struct rte_flow_item_ipv4 i4_m = {
		.hdr.dst_addr = RTE_BE32(0xffffffff) };
	struct rte_flow_item pat4[] = {
		ITEM(ETH, NULL, NULL), ITEM(IPV4, &i4_s, &i4_m), ITEM_END };
	struct rte_flow_action_mark mark = { .id = 7 };
	struct rte_flow_action act_mark[] = {
		ACT(QUEUE, &queue_2), ACT(MARK, &mark), ACT_END };
	struct rte_flow_action act_flag[] = {
		ACT(FLAG, NULL), ACT(QUEUE, &queue_1), ACT_END };
	struct frame fa, fb, f4;
	struct rte_flow *f, *g;

	CLEAN();
	mk_l2(&fa, &mac1, &mac0, TYPE_A);
	mk_l2(&fb, &mac1, &mac0, TYPE_B);
	mk_ipv4(&f4, &l34_default);
	/* mark 7 */
	RULE(f, 0, pat, act_mark);
	EXPECT_MARK("mark 7", &fa, 2, 7);
	EXPECT_MARK("other type: no flags", &fb, 0, MARK_NONE);
	EXPECT_MARK("ipv4: no flags", &f4, 0, MARK_NONE);
	DESTROY(f);
	EXPECT_MARK("mark rule destroyed: no flags", &fa, 0, MARK_NONE);
	/* mark 0 and the largest id */
	mark.id = 0;
	RULE(f, 0, pat, act_mark);
	EXPECT_MARK("mark 0", &fa, 2, 0);
	DESTROY(f);
	mark.id = 0xfffffd;
	RULE(f, 0, pat, act_mark);
	EXPECT_MARK("mark 0xfffffd", &fa, 2, 0xfffffd);
	/* flag next to it: each rule's own tag */
	RULE(g, 0, pat4, act_flag);
	EXPECT_MARK("flag", &f4, 1, MARK_FLAG);
	EXPECT_MARK("mark 0xfffffd next to a flag rule", &fa, 2, 0xfffffd);
	EXPECT_MARK("no rule: no flags", &fb, 0, MARK_NONE);
	DESTROY(g);
	DESTROY(f);
	/* the winning rule's tag: an unmarked priority-0 rule over a marked
	 * priority-1 rule
	 */
	mark.id = 9;
	RULE(f, 1, pat, act_mark);
	RULE(g, 0, pat, to_q3);
	EXPECT_MARK("unmarked rule wins", &fa, 3, MARK_NONE);
	DESTROY(g);
	EXPECT_MARK("marked rule alone", &fa, 2, 9);
	DESTROY(f);
	/* out of range: refused */
	mark.id = 0xfffffe;
	TEST_ASSERT_NULL(rule(0, pat, act_mark), "mark 0xfffffe accepted");
	return TEST_SUCCESS;
}

/* Priority 0 beats priority 1 on overlapping matches, either order. */
static int
test_priorities(void)
{
	struct rte_flow_item_eth t_s = {
		.type = RTE_BE16(RTE_ETHER_TYPE_IPV4) };
	struct rte_flow_item_eth t_m = { .type = RTE_BE16(0xffff) };
	struct rte_flow_item pat_type[] = { ITEM(ETH, &t_s, &t_m), ITEM_END };
	unsigned int lowest;
	struct rte_flow_item_ipv4 d_s = {
		.hdr.dst_addr = RTE_BE32(IP4(10, 9, 9, 9)) };
	struct rte_flow_item_ipv4 d_m = {
		.hdr.dst_addr = RTE_BE32(0xffffffff) };
	struct rte_flow_item pat_dst[] = {
		ITEM(ETH, NULL, NULL), ITEM(IPV4, &d_s, &d_m), ITEM_END };
	struct rte_flow_item_eth mac_s = { .dst = mac1 };
	struct rte_flow_item_eth mac_m = {
		.dst.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };
	struct rte_flow_item pat_mac[] = {
		ITEM(ETH, &mac_s, &mac_m), ITEM_END };
	struct frame both, type_only;
	struct l34 p = l34_default;
	struct rte_flow *a, *b;
	int order;

	CLEAN();
	p.dst4 = IP4(10, 9, 9, 9);
	mk_ipv4(&both, &p);
	p.dst4 = IP4(10, 9, 9, 8);
	mk_ipv4(&type_only, &p);
	for (order = 0; order < 2; order++) {
		/* different masks */
		if (order == 0) {
			RULE(a, 1, pat_type, to_q1);
			RULE(b, 0, pat_dst, to_q2);
		} else {
			RULE(b, 0, pat_dst, to_q2);
			RULE(a, 1, pat_type, to_q1);
		}
		EXPECT_Q(order == 0 ? "prio 0 (newer) wins" :
			 "prio 0 (older) wins", &both, 2);
		EXPECT_Q("only the prio 1 rule matches", &type_only, 1);
		DESTROY(b);
		EXPECT_Q("prio 0 rule destroyed", &both, 1);
		DESTROY(a);
		EXPECT_Q("both destroyed", &both, 0);
		/* the same mask and value */
		if (order == 0) {
			RULE(a, 1, pat_type, to_q1);
			RULE(b, 0, pat_type, to_q2);
		} else {
			RULE(b, 0, pat_type, to_q2);
			RULE(a, 1, pat_type, to_q1);
		}
		EXPECT_Q("same match: prio 0 wins", &type_only, 2);
		DESTROY(b);
		EXPECT_Q("same match: prio 1 left", &type_only, 1);
		DESTROY(a);
		EXPECT_Q("same match: both destroyed", &type_only, 0);
	}
	/*
	 * The lowest user priority (15 on full; 2 on mlx5, whose 16 verbs
	 * priorities hold 3 levels and the port's rules) still beats the
	 * internal MAC rule, and the next one does not exist.
	 */
	lowest = full_profile ? 15 : 2;
	RULE(a, lowest, pat_mac, to_q3);
	EXPECT_Q("lowest prio over the internal MAC rule", &type_only, 3);
	DESTROY(a);
	TEST_ASSERT_NULL(rule(lowest + 1, pat_mac, to_q3),
			 "priority %u accepted", lowest + 1);
	return TEST_SUCCESS;
}

/* A rule's number as testpmd and vbr's messages give it, -1: none. */
static int
rule_number(struct rte_flow *flow)
{
	struct rte_flow_error err;
	char *buf = NULL, *p;
	size_t len = 0;
	int n = -1;
	FILE *f;

	f = open_memstream(&buf, &len);
	if (f == NULL)
		return -1;
	if (rte_flow_dev_dump(port1, flow, f, &err) != 0)
		n = -1;
	fclose(f);
	p = buf != NULL ? strstr(buf, "vbr rule ") : NULL;
	if (p != NULL)
		n = atoi(p + strlen("vbr rule "));
	free(buf);
	return n;
}

/*
 * A rule with the same pattern and priority as rule first: validate and
 * create refuse it with EEXIST and a message naming first's number.
 */
static int
same_match_refused(struct rte_flow *first, uint32_t prio,
		   const struct rte_flow_item *pattern,
		   const struct rte_flow_action *actions)
{
	const struct rte_flow_attr attr = { .ingress = 1, .priority = prio };
	struct rte_flow_error err;
	struct rte_flow *f;
	char needle[64];
	int ret;

	memset(&err, 0, sizeof(err));
	ret = rule_number(first);
	TEST_ASSERT(ret >= 0, "number of the first rule");
	snprintf(needle, sizeof(needle), "rule %d (priority %u) has this "
		 "rule's pattern", ret, prio);
	ret = rte_flow_validate(port1, &attr, pattern, actions, &err);
	TEST_ASSERT_EQUAL(ret, -EEXIST, "validate: %d", ret);
	TEST_ASSERT(err.message != NULL && strstr(err.message, needle) != NULL,
		    "validate: message \"%s\" lacks \"%s\"",
		    err.message != NULL ? err.message : "", needle);
	memset(&err, 0, sizeof(err));
	f = rte_flow_create(port1, &attr, pattern, actions, &err);
	if (f != NULL)
		vbr_test_flow_destroy(port1, f);
	TEST_ASSERT_NULL(f, "created");
	TEST_ASSERT_EQUAL(rte_errno, EEXIST, "create: rte_errno %d", rte_errno);
	TEST_ASSERT(err.message != NULL && strstr(err.message, needle) != NULL,
		    "create: message \"%s\" lacks \"%s\"",
		    err.message != NULL ? err.message : "", needle);
	return TEST_SUCCESS;
}

/*
 * Same priority: the same match is refused; overlapping matches (other
 * masks): design.rst says the older rule wins.
 */
static int
test_same_priority(void)
{
	struct rte_flow_item_eth t_s = {
		.type = RTE_BE16(RTE_ETHER_TYPE_IPV4) };
	struct rte_flow_item_eth t_m = { .type = RTE_BE16(0xffff) };
	struct rte_flow_item pat_type[] = { ITEM(ETH, &t_s, &t_m), ITEM_END };
	struct rte_flow_item_ipv4 d_s = {
		.hdr.dst_addr = RTE_BE32(IP4(10, 2, 2, 2)) };
	struct rte_flow_item_ipv4 d_m = {
		.hdr.dst_addr = RTE_BE32(0xffffffff) };
	struct rte_flow_item pat_dst[] = {
		ITEM(ETH, NULL, NULL), ITEM(IPV4, &d_s, &d_m), ITEM_END };
	struct frame f;
	struct rte_flow *a, *b;

	CLEAN();
	mk_ipv4(&f, &l34_default);
	/*
	 * The same mask and value: one flow table entry to a ConnectX,
	 * which would duplicate frames or refuse it with EEXIST. vbr
	 * refuses the second rule first, naming the first.
	 */
	RULE(a, 2, pat_type, to_q1);
	TEST_ASSERT_SUCCESS(same_match_refused(a, 2, pat_type, to_q2),
			    "same match, same priority");
	TEST_ASSERT_SUCCESS(same_match_refused(a, 2, pat_type, to_q1),
			    "same match, same priority, same queue");
	EXPECT_Q("the first rule keeps its frames", &f, 1);
	/* Another priority: another entry, the better one wins. */
	RULE(b, 1, pat_type, to_q2);
	EXPECT_Q("same match, better priority", &f, 2);
	DESTROY(b);
	DESTROY(a);
	RULE(b, 2, pat_type, to_q2);
	EXPECT_Q("the first destroyed: the same match is taken", &f, 2);
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	TEST_ASSERT_SUCCESS(same_match_refused(b, 2, pat_type, to_q1),
			    "same match while stopped");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
	EXPECT_Q("after stop/start", &f, 2);
	DESTROY(b);
	/* different masks */
	RULE(a, 2, pat_type, to_q1);
	RULE(b, 2, pat_dst, to_q2);
	EXPECT_Q("different masks: older (type) wins", &f, 1);
	DESTROY(a);
	DESTROY(b);
	RULE(b, 2, pat_dst, to_q2);
	RULE(a, 2, pat_type, to_q1);
	EXPECT_Q("different masks: older (dst) wins", &f, 2);
	DESTROY(a);
	DESTROY(b);
	return TEST_SUCCESS;
}

/* Rules survive stop/start; rules made or destroyed while stopped. */
static int
test_stop_start(void)
{
	struct rte_flow_item_eth s = { .type = RTE_BE16(TYPE_A) };
	struct rte_flow_item_eth m = { .type = RTE_BE16(0xffff) };
	struct rte_flow_item pat[] = { ITEM(ETH, &s, &m), ITEM_END };
	struct rte_flow_item_eth sb = { .type = RTE_BE16(TYPE_B) };
	struct rte_flow_item pat_b[] = { ITEM(ETH, &sb, &m), ITEM_END };
	struct rte_flow_item_udp u_s = { .hdr.dst_port = RTE_BE16(53) };
	struct rte_flow_item_udp u_m = { .hdr.dst_port = RTE_BE16(0xffff) };
	struct rte_flow_item pat_udp[] = {
		ITEM(ETH, NULL, NULL), ITEM(IPV4, NULL, NULL),
		ITEM(UDP, &u_s, &u_m), ITEM_END };
	struct rte_flow_action_mark mark = { .id = 7 };
	struct rte_flow_action act_mark[] = {
		ACT(QUEUE, &queue_3), ACT(MARK, &mark), ACT_END };
	struct rte_eth_dev_info info;
	struct frame fa, fb, fu, fv;
	struct l34 p = l34_default;
	struct rte_flow *f1, *f2, *f3, *f4;
	int i;

	CLEAN();
	TEST_ASSERT_SUCCESS(rte_eth_dev_info_get(port1, &info), "info");
	TEST_ASSERT(info.dev_capa & RTE_ETH_DEV_CAPA_FLOW_RULE_KEEP,
		    "FLOW_RULE_KEEP not advertised");
	mk_l2(&fa, &mac1, &mac0, TYPE_A);
	mk_l2(&fb, &mac1, &mac0, TYPE_B);
	p.dport = 53;
	mk_ipv4(&fu, &p);
	mk_vxlan(&fv, 50000, VXLAN_PORT, 42, &inner_a, IP4(1, 1, 1, 1), 53);
	RULE(f1, 0, pat, to_q2);
	RULE(f2, 0, pat_b, to_drop);
	RULE(f3, 1, pat_udp, act_mark);
	for (i = 0; i < 2; i++) {
		TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
		TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
		EXPECT_Q("queue rule after restart", &fa, 2);
		EXPECT_Q("drop rule after restart", &fb, Q_NONE);
		EXPECT_MARK("mark rule after restart", &fu, 3, 7);
		EXPECT_Q("vxlan (outer udp 4789): default", &fv, 0);
	}
	/* while stopped: destroy one, create one */
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	DESTROY(f2);
	RULE(f4, 0, pat_b, to_q1);
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
	EXPECT_Q("destroyed while stopped", &fb, 1);
	EXPECT_Q("queue rule kept", &fa, 2);
	EXPECT_MARK("mark rule kept", &fu, 3, 7);
	DESTROY(f1);
	DESTROY(f3);
	DESTROY(f4);
	EXPECT_Q("all destroyed", &fa, 0);
	EXPECT_Q("all destroyed", &fb, 0);
	return TEST_SUCCESS;
}

/* destroy one of several; flush. */
static int
test_destroy_flush(void)
{
	struct rte_flow_item_eth sa = { .type = RTE_BE16(TYPE_A) };
	struct rte_flow_item_eth sb = { .type = RTE_BE16(TYPE_B) };
	struct rte_flow_item_eth m = { .type = RTE_BE16(0xffff) };
	struct rte_flow_item pat_a[] = { ITEM(ETH, &sa, &m), ITEM_END };
	struct rte_flow_item pat_b[] = { ITEM(ETH, &sb, &m), ITEM_END };
	struct rte_flow_item_ipv4 i4_s = {
		.hdr.dst_addr = RTE_BE32(IP4(10, 2, 2, 2)) };
	struct rte_flow_item_ipv4 i4_m = {
		.hdr.dst_addr = RTE_BE32(0xffffffff) };
	struct rte_flow_item pat4[] = {
		ITEM(ETH, NULL, NULL), ITEM(IPV4, &i4_s, &i4_m), ITEM_END };
	struct rte_flow_error err;
	struct frame fa, fb, f4;
	struct rte_flow *a, *b, *c;

	CLEAN();
	mk_l2(&fa, &mac1, &mac0, TYPE_A);
	mk_l2(&fb, &mac1, &mac0, TYPE_B);
	mk_ipv4(&f4, &l34_default);
	RULE(a, 0, pat_a, to_q1);
	RULE(b, 0, pat_b, to_q2);
	RULE(c, 0, pat4, to_q3);
	EXPECT_Q("a", &fa, 1);
	EXPECT_Q("b", &fb, 2);
	EXPECT_Q("c", &f4, 3);
	DESTROY(b);
	EXPECT_Q("b destroyed", &fb, 0);
	EXPECT_Q("a kept", &fa, 1);
	EXPECT_Q("c kept", &f4, 3);
	RULE(b, 0, pat_b, to_q2);
	EXPECT_Q("b again", &fb, 2);
	TEST_ASSERT_SUCCESS(rte_flow_flush(port1, &err), "flush");
	EXPECT_Q("flushed", &fa, 0);
	EXPECT_Q("flushed", &fb, 0);
	EXPECT_Q("flushed", &f4, 0);
	TEST_ASSERT_SUCCESS(rte_flow_flush(port1, &err), "flush, no rule");
	RULE(a, 0, pat_a, to_q3);
	EXPECT_Q("rule after flush", &fa, 3);
	DESTROY(a);
	RTE_SET_USED(c);
	return TEST_SUCCESS;
}

/* Isolated mode: only what user rules match is received. */
static int
test_isolate(void)
{
	struct rte_flow_item pat4[] = {
		ITEM(ETH, NULL, NULL), ITEM(IPV4, NULL, NULL), ITEM_END };
	struct rte_flow_error err;
	struct frame f4, f4_foreign, fa, fbc;
	struct rte_flow *f;

	CLEAN();
	mk_ipv4(&f4, &l34_default);
	frame_init(&f4_foreign);
	put_eth(&f4_foreign, &foreign_mac, &mac0, RTE_ETHER_TYPE_IPV4);
	put_ipv4(&f4_foreign, IP4(1, 1, 1, 1), IP4(2, 2, 2, 2), IPPROTO_UDP,
		 0);
	put_udp(&f4_foreign, 1, 2);
	frame_finish(&f4_foreign);
	mk_l2(&fa, &mac1, &mac0, TYPE_A);
	mk_l2(&fbc, &bcast_mac, &mac0, TYPE_A);
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	TEST_ASSERT_SUCCESS(rte_flow_isolate(port1, 1, &err), "isolate: %s",
			    err.message);
	isolated = true;
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
	EXPECT_Q("isolated, no rule: own MAC", &fa, Q_NONE);
	EXPECT_Q("isolated, no rule: broadcast", &fbc, Q_NONE);
	EXPECT_Q("isolated, no rule: ipv4", &f4, Q_NONE);
	RULE(f, 0, pat4, to_q2);
	EXPECT_Q("isolated: ipv4 rule", &f4, 2);
	EXPECT_Q("isolated: ipv4 rule, any MAC", &f4_foreign, 2);
	EXPECT_Q("isolated: non-matching, own MAC", &fa, Q_NONE);
	EXPECT_Q("isolated: non-matching, broadcast", &fbc, Q_NONE);
	TEST_ASSERT_SUCCESS(rte_eth_promiscuous_enable(port1), "promisc");
	EXPECT_Q("isolated + promiscuous: non-matching", &fa, Q_NONE);
	TEST_ASSERT_SUCCESS(rte_eth_promiscuous_disable(port1), "promisc");
	/* back to normal: the rule stays, default traffic returns */
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	TEST_ASSERT_SUCCESS(rte_flow_isolate(port1, 0, &err), "isolate off");
	isolated = false;
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
	EXPECT_Q("not isolated: own MAC", &fa, 0);
	EXPECT_Q("not isolated: broadcast", &fbc, 0);
	EXPECT_Q("not isolated: ipv4 rule kept", &f4, 2);
	EXPECT_Q("not isolated: ipv4 rule, foreign MAC", &f4_foreign, 2);
	DESTROY(f);
	EXPECT_Q("not isolated: foreign MAC, no rule", &f4_foreign, Q_NONE);
	return TEST_SUCCESS;
}

/*
 * Open vSwitch's partial offload (netdev-offload-dpdk): every megaflow a
 * rule "eth src/dst/type has_vlan / ipv4 fragment_offset or ipv6
 * has_frag_ext / ... -> mark, rss". OVS trusts the mark: a frame outside
 * the megaflow must never carry it. Frames it excludes (tagged, fragments,
 * IPv6 extension headers) arrive unmarked where they would arrive without
 * the rule: here the port's address, so queue 0.
 */
static const struct rte_flow_action_rss ovs_rss = {
	.types = RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP | RTE_ETH_RSS_TCP,
	.queue_num = 1, .queue = (const uint16_t []){ 2 },
};
static const struct rte_flow_item_eth ovs_eth_m = {
	.src.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
	.dst.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
	.type = RTE_BE16(0xffff), .has_vlan = 1,
};

static struct rte_flow *
ovs_rule(const struct rte_flow_item *pattern, uint32_t id)
{
	const struct rte_flow_action_mark mark = { .id = id };
	const struct rte_flow_action actions[] = {
		ACT(MARK, &mark), ACT(RSS, &ovs_rss), ACT_END,
	};

	return rule(0, pattern, actions);
}

/* eth / ipv4 / udp with IPv4 flags and offset (host order) given. */
static void
mk_ipv4_fo(struct frame *f, uint16_t fo, bool tagged, uint16_t tpid)
{
	struct l34 p = l34_default;
	struct rte_ipv4_hdr *ip;

	frame_init(f);
	put_eth(f, &mac1, &mac0, tagged ? tpid : RTE_ETHER_TYPE_IPV4);
	if (tagged)
		put_vlan(f, 100, RTE_ETHER_TYPE_IPV4);
	ip = (struct rte_ipv4_hdr *)(f->b + f->len);
	put_ipv4(f, p.src4, p.dst4, p.proto, 0);
	put_l4(f, &p);
	frame_finish(f);
	ip->fragment_offset = rte_cpu_to_be_16(fo);
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
}

/* eth / ipv6 / next header nh (an 8-byte extension) / udp. */
static void
mk_ipv6_ext(struct frame *f, uint8_t nh)
{
	struct l34 p = l34_default;
	uint8_t *ext;

	frame_init(f);
	put_eth(f, &mac1, &mac0, RTE_ETHER_TYPE_IPV6);
	put_ipv6(f, p.src6, p.dst6, nh, 0, 0, 64);
	ext = put(f, nh == IPPROTO_AH ? 12 : 8);
	ext[0] = IPPROTO_UDP;
	if (nh == IPPROTO_AH)
		ext[1] = 1;		/* (1 + 2) * 4 bytes, no ICV */
	if (nh == IPPROTO_FRAGMENT)
		ext[3] = 1;		/* offset 0, M 1: a first fragment */
	put_udp(f, p.sport, p.dport);
	frame_finish(f);
}

/*
 * Whether the port's rte_flow dump holds needle. The dump lists a rule's
 * verbs flows in vf[] order, the order vbr creates them in (and destroys
 * them in reverse).
 */
static bool
dump_has(const char *needle)
{
	struct rte_flow_error err;
	char *buf = NULL;
	size_t len = 0;
	bool has;
	FILE *f;

	f = open_memstream(&buf, &len);
	if (f == NULL)
		return false;
	has = rte_flow_dev_dump(port1, NULL, f, &err) == 0;
	fclose(f);
	has = has && buf != NULL && strstr(buf, needle) != NULL;
	free(buf);
	return has;
}

static int
test_ovs_partial_offload(void)
{
	struct rte_flow_item_eth e4 = {
		.src = mac0, .dst = mac1, .type = RTE_BE16(0x0800),
	}, e6 = e4;
	struct rte_flow_item_ipv4 nofrag = { .hdr.fragment_offset = 0 };
	struct rte_flow_item_ipv4 first = {
		.hdr.fragment_offset = RTE_BE16(RTE_IPV4_HDR_MF_FLAG),
	};
	struct rte_flow_item_ipv4 fragm = {
		.hdr.fragment_offset = RTE_BE16(0x3fff),
	};
	struct rte_flow_item_ipv6 v6 = { .has_frag_ext = 0 };
	struct rte_flow_item_ipv6 v6m = { .has_frag_ext = 1 };
	struct rte_flow_item p_eth[] = {
		ITEM(ETH, &e4, &ovs_eth_m), ITEM_END };
	struct rte_flow_item p_nofrag[] = {
		ITEM(ETH, &e4, &ovs_eth_m), ITEM(IPV4, &nofrag, &fragm),
		ITEM_END };
	struct rte_flow_item p_first[] = {
		ITEM(ETH, &e4, &ovs_eth_m), ITEM(IPV4, &first, &fragm),
		ITEM_END };
	struct rte_flow_item p_v6[] = {
		ITEM(ETH, &e6, &ovs_eth_m), ITEM(IPV6, &v6, &v6m), ITEM_END };
	struct rte_flow_item_eth ev = e4;
	struct rte_flow_item_vlan vid100 = {
		.tci = RTE_BE16(100), .inner_type = RTE_BE16(0x0800),
	};
	struct rte_flow_item_vlan vidm = {
		.tci = RTE_BE16(0xefff), .inner_type = RTE_BE16(0xffff),
	};
	struct rte_flow_item p_vlan[] = {
		ITEM(ETH, &ev, &ovs_eth_m), ITEM(VLAN, &vid100, &vidm),
		ITEM_END };
	struct rte_flow_error err;
	struct frame plain, c100, c101, stag, later, frag1, v6plain, v6frag,
		     v6hop, v6ah;
	struct rte_flow *f;

	CLEAN();
	e6.type = RTE_BE16(0x86dd);
	mk_ipv4_fo(&plain, 0, false, 0);
	mk_ipv4_fo(&c100, 0, true, RTE_ETHER_TYPE_VLAN);
	mk_vlan(&c101, 101, RTE_ETHER_TYPE_IPV4);
	mk_ipv4_fo(&stag, 0, true, RTE_ETHER_TYPE_QINQ);
	mk_ipv4_fo(&later, 185, false, 0);
	mk_ipv4_fo(&frag1, RTE_IPV4_HDR_MF_FLAG, false, 0);
	/* untagged only: two companions take the C-tagged frames */
	f = ovs_rule(p_eth, 11);
	TEST_ASSERT_NOT_NULL(f, "eth has_vlan 0 rule");
	/* Companions first: on the device before any own flow. */
	TEST_ASSERT(dump_has("3 verbs flows (companion accept ipv4 at 0, "
			     "companion accept ipv4 at 0, ipv4 at 2)"),
		    "companions created first");
	EXPECT_MARK("has_vlan 0: untagged", &plain, 2, 11);
	EXPECT_MARK("has_vlan 0: VID 100 (bit 0 clear)", &c100, 0, MARK_NONE);
	EXPECT_MARK("has_vlan 0: VID 101 (bit 0 set)", &c101, 0, MARK_NONE);
	/* A ConnectX through verbs tells C-tags only (mlx5's cvlan_tag). */
	if (full_profile)
		EXPECT_MARK("has_vlan 0: S-tag", &stag, 0, MARK_NONE);
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
	EXPECT_MARK("has_vlan 0 after stop/start: untagged", &plain, 2, 11);
	EXPECT_MARK("has_vlan 0 after stop/start: tagged", &c101, 0,
		    MARK_NONE);
	DESTROY(f);
	EXPECT_Q("has_vlan 0 rule destroyed: untagged", &plain, 0);
	EXPECT_Q("has_vlan 0 rule destroyed: tagged", &c101, 0);
	/*
	 * Tagged: eth type 0x8100 has_vlan 1 / vlan 100. A C-tag only
	 * device says it exactly; one whose VLAN match takes any TPID
	 * (full) refuses it. Either way an S-tag never carries the mark.
	 */
	ev.type = RTE_BE16(RTE_ETHER_TYPE_VLAN);
	ev.has_vlan = 1;
	memset(&err, 0, sizeof(err));
	f = rte_flow_create(port1, &(struct rte_flow_attr){ .ingress = 1 },
			    p_vlan, (const struct rte_flow_action []){
				ACT(MARK, &(struct rte_flow_action_mark){ 15 }),
				ACT(RSS, &ovs_rss), ACT_END }, &err);
	if (full_profile) {
		TEST_ASSERT_NULL(f, "0x8100 / vlan on full: refused");
		TEST_ASSERT(err.message != NULL &&
			    strstr(err.message, "any TPID") != NULL,
			    "0x8100 / vlan on full: \"%s\"",
			    err.message != NULL ? err.message : "");
	} else {
		TEST_ASSERT_NOT_NULL(f, "eth 0x8100 has_vlan 1 / vlan rule: %s",
				     err.message != NULL ? err.message : "");
		EXPECT_MARK("has_vlan 1: C-tag VID 100", &c100, 2, 15);
		EXPECT_MARK("has_vlan 1: untagged", &plain, 0, MARK_NONE);
	}
	EXPECT_MARK("has_vlan 1: S-tag VID 100", &stag, 0, MARK_NONE);
	if (f != NULL)
		DESTROY(f);
	if (!full_profile) {
		/* Kept in software only on the port's own queues: see
		 * test_ovs_frag_sw().
		 */
		TEST_ASSERT_SUCCESS(refused_case("ipv4 not a fragment",
			p_nofrag, RTE_FLOW_ERROR_TYPE_ITEM,
			"ipv4 item: fragment_offset: the device cannot match "
			"fragments; only a mark with the port's own RSS can "
			"be kept exact in software"),
			"ipv4 fragment_offset on mlx5, queue 2");
		return refused_case("ipv6 has_frag_ext 0", p_v6,
				    RTE_FLOW_ERROR_TYPE_ITEM,
				    "ipv6 item: has_frag_ext: the device "
				    "cannot match fragments");
	}
	/* not a fragment: natively (ipv4_ext flags), no companion for it */
	f = ovs_rule(p_nofrag, 12);
	TEST_ASSERT_NOT_NULL(f, "not-a-fragment rule");
	EXPECT_MARK("not a fragment: whole datagram", &plain, 2, 12);
	EXPECT_MARK("not a fragment: later fragment", &later, 0, MARK_NONE);
	EXPECT_MARK("not a fragment: first fragment", &frag1, 0, MARK_NONE);
	EXPECT_MARK("not a fragment: tagged", &c100, 0, MARK_NONE);
	DESTROY(f);
	f = ovs_rule(p_first, 13);
	TEST_ASSERT_NOT_NULL(f, "first-fragment rule");
	EXPECT_MARK("first fragment: first fragment", &frag1, 2, 13);
	EXPECT_MARK("first fragment: whole datagram", &plain, 0, MARK_NONE);
	EXPECT_MARK("first fragment: later fragment", &later, 0, MARK_NONE);
	DESTROY(f);
	/* IPv6 has_frag_ext 0, any next header: five more companions */
	mk_ipv6(&v6plain, &l34_default);
	mk_ipv6_ext(&v6frag, IPPROTO_FRAGMENT);
	mk_ipv6_ext(&v6hop, IPPROTO_HOPOPTS);
	mk_ipv6_ext(&v6ah, IPPROTO_AH);
	f = ovs_rule(p_v6, 14);
	TEST_ASSERT_NOT_NULL(f, "ipv6 has_frag_ext 0 rule");
	EXPECT_MARK("has_frag_ext 0: no extension", &v6plain, 2, 14);
	EXPECT_MARK("has_frag_ext 0: fragment header", &v6frag, 0, MARK_NONE);
	EXPECT_MARK("has_frag_ext 0: hop-by-hop header", &v6hop, 0,
		    MARK_NONE);
	/* OVS walks AH too: IPv6/AH/fragment is a fragment to it */
	EXPECT_MARK("has_frag_ext 0: AH header", &v6ah, 0, MARK_NONE);
	DESTROY(f);
	return TEST_SUCCESS;
}

/* eth (to dst, from mac0) / [802.1Q tci] / ipv4 / udp; tci < 0: untagged. */
static void
mk_ovs4(struct frame *f, const struct rte_ether_addr *dst, int tci)
{
	struct l34 p = l34_default;

	frame_init(f);
	put_eth(f, dst, &mac0, tci < 0 ? RTE_ETHER_TYPE_IPV4 :
		RTE_ETHER_TYPE_VLAN);
	if (tci >= 0)
		put_vlan(f, tci, RTE_ETHER_TYPE_IPV4);
	put_ipv4(f, p.src4, p.dst4, p.proto, 0);
	put_l4(f, &p);
	frame_finish(f);
}

/* rte_flow_create() must refuse, with a message holding needle. */
static int
ovs_refused(uint32_t prio, const struct rte_flow_item *pattern,
	    const struct rte_flow_action *actions, const char *needle)
{
	const struct rte_flow_attr attr = { .ingress = 1, .priority = prio };
	struct rte_flow_error err;
	struct rte_flow *f;
	int ret;

	/* Validate refuses what create refuses, for the same reason. */
	memset(&err, 0, sizeof(err));
	ret = rte_flow_validate(port1, &attr, pattern, actions, &err);
	TEST_ASSERT(ret != 0, "validate refuses it (\"%s\")", needle);
	TEST_ASSERT(err.message != NULL && strstr(err.message, needle) != NULL,
		    "validate's message \"%s\" holds \"%s\"",
		    err.message != NULL ? err.message : "", needle);
	memset(&err, 0, sizeof(err));
	f = rte_flow_create(port1, &attr, pattern, actions, &err);
	if (f != NULL)
		vbr_test_flow_destroy(port1, f);
	TEST_ASSERT_NULL(f, "refused (\"%s\")", needle);
	TEST_ASSERT(err.message != NULL && strstr(err.message, needle) != NULL,
		    "message \"%s\" holds \"%s\"",
		    err.message != NULL ? err.message : "", needle);
	return TEST_SUCCESS;
}

/* The frames xstat counts while f's copies are sent and none arrives. */
#define EXPECT_DROPPED(what, f, name) do { \
	int64_t n0_ = xstat(name); \
	EXPECT_Q(what, f, Q_NONE); \
	TEST_ASSERT_EQUAL(xstat_wait(name, n0_ + NB_PKTS) - n0_, NB_PKTS, \
			  "%s: %s", what, name); \
} while (0)

/*
 * The frames a has_vlan 0 rule's companions catch go exactly where they
 * go without the rule: each case first sends them with no rule, then
 * with it, then changes the port's state under the live rule. A user rule
 * below it that would lose frames to them is refused, in both orders.
 */
static int
test_ovs_companion_fate(void)
{
	static const struct rte_ether_addr foreign = {
		.addr_bytes = { 0x02, 0, 0, 0, 0x99, 0x01 },
	};
	static const struct rte_ether_addr mcast = {
		.addr_bytes = { 0x01, 0, 0x5e, 0, 0, 0x42 },
	};
	static const struct rte_flow_action_mark mark30 = { .id = 30 };
	static const struct rte_flow_action ovs_acts[] = {
		ACT(MARK, &mark30), ACT(RSS, &ovs_rss), ACT_END,
	};
	struct rte_flow_item_eth e = { .type = RTE_BE16(0x0800) };
	struct rte_flow_item_eth any_dst = ovs_eth_m;
	struct rte_flow_item p[] = { ITEM(ETH, &e, &ovs_eth_m), ITEM_END };
	struct rte_flow_item p_any[] = { ITEM(ETH, &e, &any_dst), ITEM_END };
	struct rte_flow_item_vlan v100 = { .tci = RTE_BE16(100) };
	struct rte_flow_item_vlan vm = { .tci = RTE_BE16(0x0fff) };
	struct rte_flow_item p_low[] = {
		ITEM(ETH, NULL, NULL), ITEM(VLAN, &v100, &vm), ITEM_END };
	struct rte_flow_item_eth e6 = { .type = RTE_BE16(0x86dd) };
	struct rte_flow_item_eth e6m = { .type = RTE_BE16(0xffff) };
	struct rte_flow_item p_v6[] = { ITEM(ETH, &e6, &e6m), ITEM_END };
	struct rte_flow_error err;
	struct frame u, t100, t101, t0, far_u, far_t, mc_t;
	struct rte_flow *f, *g;
	int64_t fd;

	/*
	 * The frames the companions drop are told by the device's counts
	 * (swverbs'; a NIC through libibverbs has no such xstat).
	 */
	if (xstat("rx_no_match") < 0 || xstat("rx_vlan_filtered") < 0)
		TEST_SKIP("the device counts no rx_no_match or "
			  "rx_vlan_filtered (no such xstat): the companions' "
			  "drops cannot be told from other losses");
	CLEAN();
	e.src = mac0;
	e.dst = mac1;
	memset(&any_dst.dst, 0, sizeof(any_dst.dst));
	mk_ovs4(&u, &mac1, -1);
	mk_ovs4(&t100, &mac1, 100);
	mk_ovs4(&t101, &mac1, 101);
	mk_ovs4(&t0, &mac1, 5 << 13);	/* priority tag: PCP 5, VID 0 */
	mk_ovs4(&far_u, &foreign, -1);
	mk_ovs4(&far_t, &foreign, 100);

	/* The port's address: accepted on the port's queue 0, unmarked. */
	EXPECT_Q("no rule: tagged to the port's address", &t101, 0);
	f = ovs_rule(p, 21);
	TEST_ASSERT_NOT_NULL(f, "rule to the port's address");
	EXPECT_MARK("own dst: untagged", &u, 2, 21);
	EXPECT_MARK("own dst: tagged", &t101, 0, MARK_NONE);
	DESTROY(f);

	/* A dst the port does not take: dropped, counted as unmatched. */
	EXPECT_DROPPED("no rule: tagged to a foreign address", &far_t,
		       "rx_no_match");
	e.dst = foreign;
	f = ovs_rule(p, 22);
	TEST_ASSERT_NOT_NULL(f, "rule to a foreign address");
	EXPECT_MARK("foreign dst: untagged", &far_u, 2, 22);
	fd = xstat("rx_flow_dropped");
	EXPECT_DROPPED("foreign dst: tagged", &far_t, "rx_no_match");
	TEST_ASSERT_EQUAL(xstat("rx_flow_dropped"), fd,
			  "not counted as a rule's drop");
	TEST_ASSERT(dump_has("companion unmatched"), "dump: unmatched");
	/* The port's state changes under the live rule. */
	TEST_ASSERT_SUCCESS(rte_eth_promiscuous_enable(port1), "promisc");
	EXPECT_MARK("foreign dst, promiscuous: tagged", &far_t, 0, MARK_NONE);
	EXPECT_MARK("foreign dst, promiscuous: untagged", &far_u, 2, 22);
	TEST_ASSERT_SUCCESS(rte_eth_promiscuous_disable(port1), "promisc");
	EXPECT_DROPPED("foreign dst, promiscuous off: tagged", &far_t,
		       "rx_no_match");
	TEST_ASSERT_SUCCESS(rte_eth_dev_mac_addr_add(port1,
			    (struct rte_ether_addr *)&foreign, 0), "mac add");
	EXPECT_MARK("foreign dst, now an address: tagged", &far_t, 0,
		    MARK_NONE);
	TEST_ASSERT_SUCCESS(rte_eth_dev_mac_addr_remove(port1,
			    (struct rte_ether_addr *)&foreign), "mac rm");
	EXPECT_DROPPED("foreign dst, address removed: tagged", &far_t,
		       "rx_no_match");
	DESTROY(f);

	/* A multicast dst: all-multicast, then the multicast list, take it. */
	e.dst = mcast;
	mk_ovs4(&mc_t, &mcast, 100);
	EXPECT_DROPPED("no rule: tagged multicast", &mc_t, "rx_no_match");
	f = ovs_rule(p, 28);
	TEST_ASSERT_NOT_NULL(f, "rule to a multicast address");
	EXPECT_DROPPED("multicast: tagged", &mc_t, "rx_no_match");
	TEST_ASSERT_SUCCESS(rte_eth_allmulticast_enable(port1), "allmulti");
	EXPECT_MARK("multicast, all-multicast: tagged", &mc_t, 0, MARK_NONE);
	TEST_ASSERT_SUCCESS(rte_eth_allmulticast_disable(port1), "allmulti");
	EXPECT_DROPPED("multicast, all-multicast off: tagged", &mc_t,
		       "rx_no_match");
	TEST_ASSERT_SUCCESS(rte_eth_dev_set_mc_addr_list(port1,
			    (struct rte_ether_addr *)&mcast, 1), "mc list");
	EXPECT_MARK("multicast, listed: tagged", &mc_t, 0, MARK_NONE);
	TEST_ASSERT_SUCCESS(rte_eth_dev_set_mc_addr_list(port1, NULL, 0),
			    "mc list");
	EXPECT_DROPPED("multicast, unlisted: tagged", &mc_t, "rx_no_match");
	DESTROY(f);

	/* VLAN filter: accepted VIDs and VID 0 taken, the others filtered. */
	TEST_ASSERT_SUCCESS(rte_eth_dev_set_vlan_offload(port1,
			    RTE_ETH_VLAN_FILTER_OFFLOAD), "filter on");
	TEST_ASSERT_SUCCESS(rte_eth_dev_vlan_filter(port1, 100, 1), "vid");
	EXPECT_Q("filter, no rule: VID 100", &t100, 0);
	EXPECT_DROPPED("filter, no rule: VID 101", &t101, "rx_vlan_filtered");
	EXPECT_Q("filter, no rule: priority tag", &t0, 0);
	e.dst = mac1;
	f = ovs_rule(p, 23);
	TEST_ASSERT_NOT_NULL(f, "rule under the VLAN filter");
	EXPECT_MARK("filter: untagged", &u, 2, 23);
	EXPECT_MARK("filter: VID 100", &t100, 0, MARK_NONE);
	EXPECT_DROPPED("filter: VID 101", &t101, "rx_vlan_filtered");
	EXPECT_MARK("filter: priority tag", &t0, 0, MARK_NONE);
	TEST_ASSERT(dump_has("companion vlan-filtered"), "dump: filtered");
	TEST_ASSERT_SUCCESS(rte_eth_dev_vlan_filter(port1, 101, 1), "vid");
	EXPECT_MARK("filter, VID 101 added: VID 101", &t101, 0, MARK_NONE);
	TEST_ASSERT_SUCCESS(rte_eth_dev_vlan_filter(port1, 101, 0), "vid");
	EXPECT_DROPPED("filter, VID 101 removed: VID 101", &t101,
		       "rx_vlan_filtered");
	TEST_ASSERT_SUCCESS(rte_eth_dev_vlan_filter(port1, 100, 0), "vid");
	TEST_ASSERT_SUCCESS(rte_eth_dev_set_vlan_offload(port1, 0), "off");
	EXPECT_MARK("filter off: VID 101", &t101, 0, MARK_NONE);
	EXPECT_MARK("filter off: untagged", &u, 2, 23);

	DESTROY(f);
	if (full_profile) {
		/* has_frag_ext 0 under the VLAN filter: not exact. */
		struct rte_flow_item_eth ev6 = e;
		struct rte_flow_item_ipv6 nx = { .has_frag_ext = 0 };
		struct rte_flow_item_ipv6 nxm = { .has_frag_ext = 1 };
		struct rte_flow_item p6[] = {
			ITEM(ETH, &ev6, &ovs_eth_m), ITEM(IPV6, &nx, &nxm),
			ITEM_END };

		ev6.type = RTE_BE16(0x86dd);
		f = ovs_rule(p6, 27);
		TEST_ASSERT_NOT_NULL(f, "ipv6 has_frag_ext 0, filter off");
		TEST_ASSERT(rte_eth_dev_set_vlan_offload(port1,
			    RTE_ETH_VLAN_FILTER_OFFLOAD) != 0,
			    "VLAN filter on under has_frag_ext 0: refused");
		DESTROY(f);
		TEST_ASSERT_SUCCESS(rte_eth_dev_set_vlan_offload(port1,
				    RTE_ETH_VLAN_FILTER_OFFLOAD), "filter on");
		TEST_ASSERT_SUCCESS(ovs_refused(0, p6, ovs_acts,
				    "has_frag_ext 0 on a port whose VLAN "
				    "filter is on"), "has_frag_ext 0, filter");
		TEST_ASSERT_SUCCESS(rte_eth_dev_set_vlan_offload(port1, 0),
				    "filter off");
	}

	/* A lower rule the companions would take frames from: refused. */
	RULE(g, 1, p_low, to_q1);
	TEST_ASSERT_SUCCESS(ovs_refused(0, p, ovs_acts,
			    "(priority 1) may match 802.1Q-tagged frames (eth "
			    "has_vlan 0) that this rule excludes"),
			    "companions over a lower rule");
	EXPECT_Q("the lower rule keeps its frames", &t100, 1);
	/* Disjoint from the companions' frames: taken. */
	RULE(f, 1, p_v6, to_q3);
	DESTROY(f);
	DESTROY(g);
	f = ovs_rule(p, 24);
	TEST_ASSERT_NOT_NULL(f, "rule with no lower rule");
	TEST_ASSERT_SUCCESS(ovs_refused(1, p_low, to_q1, "excludes: that "
			    "rule's companions catch them first"),
			    "a lower rule under companions");
	RULE(g, 1, p_v6, to_q3);
	EXPECT_MARK("after the refusal: tagged", &t100, 0, MARK_NONE);
	DESTROY(g);
	DESTROY(f);

	/* Not promiscuous, any dst: refused; promiscuous: taken. */
	TEST_ASSERT_SUCCESS(ovs_refused(0, p_any, ovs_acts,
			    "for one eth dst only"), "any dst");
	TEST_ASSERT_SUCCESS(rte_eth_promiscuous_enable(port1), "promisc");
	f = ovs_rule(p_any, 25);
	TEST_ASSERT_NOT_NULL(f, "any dst, promiscuous");
	EXPECT_MARK("any dst, promiscuous: tagged", &far_t, 0, MARK_NONE);
	EXPECT_MARK("any dst, promiscuous: untagged", &far_u, 2, 25);
	/* a state in which the rule is not exact: refused */
	TEST_ASSERT(rte_eth_promiscuous_disable(port1) != 0,
		    "promiscuous off under an any-dst rule: refused");
	TEST_ASSERT_EQUAL(rte_eth_promiscuous_get(port1), 1, "still on");
	EXPECT_MARK("promiscuous kept: tagged", &far_t, 0, MARK_NONE);
	DESTROY(f);
	TEST_ASSERT_SUCCESS(rte_eth_promiscuous_disable(port1), "promisc");

	/* Isolated: no internal rule takes what the rule excludes. */
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	TEST_ASSERT_SUCCESS(rte_flow_isolate(port1, 1, &err), "isolate");
	isolated = true;
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
	EXPECT_DROPPED("isolated, no rule: tagged", &t101, "rx_no_match");
	f = ovs_rule(p, 26);
	TEST_ASSERT_NOT_NULL(f, "isolated rule");
	EXPECT_MARK("isolated: untagged", &u, 2, 26);
	EXPECT_DROPPED("isolated: tagged", &t101, "rx_no_match");
	DESTROY(f);
	return TEST_SUCCESS;
}

/* The queue every copy of f arrives on, unmarked; Q_NONE: not so. */
static int
where(const struct frame *f)
{
	struct rx_result r;
	int q;

	if (xfer(f, 1, NB_PKTS, NB_PKTS, MARK_NONE, &r) != 0 ||
	    r.got != NB_PKTS || r.mark_ok != NB_PKTS)
		return Q_NONE;
	for (q = 0; q < NB_RXQ; q++)
		if (r.q[q] == NB_PKTS)
			return q;
	return Q_NONE;
}

/*
 * Under the port's RSS (mq_mode RSS over the 4 queues) the frames the
 * companions catch are spread as the port spreads them: each on the queue
 * it takes with no rule. A rule whose excluded frames the port would hash
 * by several packet types is refused, and so is an RSS change that would
 * make a live rule so.
 */
static int
test_ovs_companion_rss(void)
{
	enum { NF = 8 };
	static const struct rte_flow_action_mark mark31 = { .id = 31 };
	static const struct rte_flow_action ovs_acts[] = {
		ACT(MARK, &mark31), ACT(RSS, &ovs_rss), ACT_END,
	};
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_rss_conf rc = { .rss_key = NULL };
	struct rte_flow_item_eth e = { .type = RTE_BE16(0x0800) };
	struct rte_flow_item p_ip[] = {
		ITEM(ETH, &e, &ovs_eth_m), ITEM(IPV4, NULL, NULL), ITEM_END };
	struct rte_flow_item p_udp[] = {
		ITEM(ETH, &e, &ovs_eth_m), ITEM(IPV4, NULL, NULL),
		ITEM(UDP, NULL, NULL), ITEM_END };
	struct frame t[NF], u;
	int ref[NF], i, spread = 0;
	struct rte_flow *f;

	CLEAN();
	e.src = mac0;
	e.dst = mac1;
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
	conf.rx_adv_conf.rss_conf.rss_key = port_key;
	conf.rx_adv_conf.rss_conf.rss_key_len = RSS_KEY_LEN;
	conf.rx_adv_conf.rss_conf.rss_hf = RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP |
					   RTE_ETH_RSS_TCP;
	TEST_ASSERT_SUCCESS(vbr_test_port_config(port1, &conf, NB_RXQ,
			    RING_SIZE, RING_SIZE, mp), "mq_mode RSS");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
	for (i = 0; i < NF; i++) {
		struct l34 l = l34_default;

		l.sport = 1000 + 77 * i;
		frame_init(&t[i]);
		put_eth(&t[i], &mac1, &mac0, RTE_ETHER_TYPE_VLAN);
		put_vlan(&t[i], 100, RTE_ETHER_TYPE_IPV4);
		put_ipv4(&t[i], l.src4, l.dst4, l.proto, 0);
		put_l4(&t[i], &l);
		frame_finish(&t[i]);
		ref[i] = where(&t[i]);
		TEST_ASSERT(ref[i] != Q_NONE, "no rule: tagged frame %d", i);
		spread |= 1 << ref[i];
	}
	TEST_ASSERT(__builtin_popcount(spread) > 1, "the port's RSS spreads "
		    "the tagged frames (queues 0x%x)", spread);
	mk_ovs4(&u, &mac1, -1);
	TEST_ASSERT_SUCCESS(ovs_refused(0, p_ip, ovs_acts,
			    "by 3 packet types"), "ipv4, no L4, ip udp tcp");
	f = ovs_rule(p_udp, 31);
	TEST_ASSERT_NOT_NULL(f, "ipv4 udp rule");
	EXPECT_MARK("rss: untagged", &u, 2, 31);
	for (i = 0; i < NF; i++)
		EXPECT_MARK("rss: tagged, where the port's RSS sends it", &t[i],
			    ref[i], MARK_NONE);
	DESTROY(f);
	/* RSS on IP only: one packet type; back to L4 under it: refused. */
	rc.rss_hf = RTE_ETH_RSS_IP;
	TEST_ASSERT_SUCCESS(rte_eth_dev_rss_hash_update(port1, &rc), "ip");
	for (i = 0; i < NF; i++)
		ref[i] = where(&t[i]);
	f = ovs_rule(p_ip, 32);
	TEST_ASSERT_NOT_NULL(f, "ipv4 rule, RSS on ip");
	for (i = 0; i < NF; i++)
		EXPECT_MARK("rss ip: tagged, where the port's RSS sends it",
			    &t[i], ref[i], MARK_NONE);
	rc.rss_hf = RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP;
	TEST_ASSERT(rte_eth_dev_rss_hash_update(port1, &rc) != 0,
		    "RSS on udp under an ipv4 rule with companions: refused");
	TEST_ASSERT_SUCCESS(rte_eth_dev_rss_hash_conf_get(port1, &rc), "get");
	TEST_ASSERT_EQUAL(rc.rss_hf, RTE_ETH_RSS_IP, "RSS types kept");
	EXPECT_MARK("rss kept: untagged", &u, 2, 32);
	DESTROY(f);
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	TEST_ASSERT_SUCCESS(port_setup(port1, NB_RXQ, port_key), "mq none");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
	return TEST_SUCCESS;
}

/* eth (mac0 to mac1) / ipv4 (flags and offset fo) / udp from sport. */
static void
mk_frag4(struct frame *f, uint16_t sport, uint16_t fo)
{
	struct l34 l = l34_default;
	struct rte_ipv4_hdr *ip;

	l.sport = sport;
	frame_init(f);
	put_eth(f, &mac1, &mac0, RTE_ETHER_TYPE_IPV4);
	ip = (struct rte_ipv4_hdr *)(f->b + f->len);
	put_ipv4(f, l.src4, l.dst4, l.proto, 0);
	put_l4(f, &l);
	frame_finish(f);
	ip->fragment_offset = rte_cpu_to_be_16(fo);
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
}

/*
 * A device that cannot match fragments (the mlx5 profile, a ConnectX
 * through verbs): OVS's fragment conditions are kept in the Rx burst. The
 * rule's verbs flow also takes the frames the condition excludes (first
 * fragments under its UDP item on swverbs, whose parser reads their UDP
 * header; a ConnectX matches no header after IP in any fragment, so there
 * frag=first's first fragments would miss the rule too; later ones carry
 * no UDP header and never match it); those arrive unmarked on the queue the
 * port's RSS gives them,
 * which the rule's RSS (the port's queues, types and key) gives them too.
 * Anything that would act on the excluded frames is refused, and so is a
 * rule with the same match as the device sees it, and a port RSS change
 * that would make a live rule inexact.
 */
static int
test_ovs_frag_sw(void)
{
	enum { NF = 8 };
	static const uint16_t all[NB_RXQ] = { 0, 1, 2, 3 };
	static const struct rte_flow_action_rss port_rss = {
		.types = RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP | RTE_ETH_RSS_TCP,
		.queue_num = NB_RXQ, .queue = all,
	};
	static const struct rte_flow_action_mark m41 = { .id = 41 };
	static const struct rte_flow_action_mark m42 = { .id = 42 };
	static const struct rte_flow_action_mark m43 = { .id = 43 };
	static const struct rte_flow_action a41[] = {
		ACT(MARK, &m41), ACT(RSS, &port_rss), ACT_END };
	static const struct rte_flow_action a42[] = {
		ACT(MARK, &m42), ACT(RSS, &port_rss), ACT_END };
	static const struct rte_flow_action a43[] = {
		ACT(MARK, &m43), ACT(RSS, &port_rss), ACT_END };
	static const struct rte_flow_action a_q2[] = {
		ACT(MARK, &m41), ACT(RSS, &ovs_rss), ACT_END };
	static const struct rte_flow_action a_count[] = {
		ACT(MARK, &m41), ACT(COUNT, NULL), ACT(RSS, &port_rss),
		ACT_END };
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_rss_conf rc = { .rss_key = NULL };
	struct rte_flow_item_eth e4 = {
		.src = mac0, .dst = mac1, .type = RTE_BE16(0x0800),
	}, e6 = e4;
	struct rte_flow_item_ipv4 nofrag = { .hdr.next_proto_id = 17 };
	struct rte_flow_item_ipv4 first = {
		.hdr.next_proto_id = 17,
		.hdr.fragment_offset = RTE_BE16(RTE_IPV4_HDR_MF_FLAG),
	};
	struct rte_flow_item_ipv4 fragm = {
		.hdr.next_proto_id = 0xff,
		.hdr.fragment_offset = RTE_BE16(0x3fff),
	};
	struct rte_flow_item_ipv6 v6 = { .has_frag_ext = 0 };
	struct rte_flow_item_ipv6 v6m = { .has_frag_ext = 1 };
	struct rte_flow_item p_nofrag[] = {
		ITEM(ETH, &e4, &ovs_eth_m), ITEM(IPV4, &nofrag, &fragm),
		ITEM(UDP, NULL, NULL), ITEM_END };
	struct rte_flow_item p_first[] = {
		ITEM(ETH, &e4, &ovs_eth_m), ITEM(IPV4, &first, &fragm),
		ITEM(UDP, NULL, NULL), ITEM_END };
	/* Untagged too: its companions and frag=no's leave each other be. */
	struct rte_flow_item_eth untagged = { .has_vlan = 0 };
	struct rte_flow_item_eth untagged_m = {
		.dst.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
		.has_vlan = 1,
	};
	struct rte_flow_item p_udp[] = {
		ITEM(ETH, &untagged, &untagged_m), ITEM(IPV4, NULL, NULL),
		ITEM(UDP, NULL, NULL), ITEM_END };
	/* Any VLAN (no has_vlan): no companions, three packet types. */
	struct rte_flow_item_eth e6m = ovs_eth_m;
	struct rte_flow_item p_v6[] = {
		ITEM(ETH, &e6, &e6m), ITEM(IPV6, &v6, &v6m), ITEM_END };
	struct frame whole[NF], frag1[NF], later[NF], tagged, v6plain, v6frag,
		     v6hop;
	int rw[NF], rf[NF], rl[NF], r6[3], rt, i, spread = 0;
	struct rte_flow *f, *g;

	if (full_profile)
		TEST_SKIP("the full profile matches fragments itself "
			  "(test_ovs_partial_offload)");
	CLEAN();
	e6.type = RTE_BE16(0x86dd);
	e6m.has_vlan = 0;
	untagged.dst = mac1;
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
	conf.rx_adv_conf.rss_conf.rss_key = port_key;
	conf.rx_adv_conf.rss_conf.rss_key_len = RSS_KEY_LEN;
	conf.rx_adv_conf.rss_conf.rss_hf = port_rss.types;
	TEST_ASSERT_SUCCESS(vbr_test_port_config(port1, &conf, NB_RXQ,
			    RING_SIZE, RING_SIZE, mp), "mq_mode RSS");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
	/* Where each frame goes with no rule: the port's RSS. */
	for (i = 0; i < NF; i++) {
		mk_frag4(&whole[i], 1000 + 77 * i, 0);
		mk_frag4(&frag1[i], 1000 + 77 * i, RTE_IPV4_HDR_MF_FLAG);
		mk_frag4(&later[i], 1000 + 77 * i, 185);
		rw[i] = where(&whole[i]);
		rf[i] = where(&frag1[i]);
		rl[i] = where(&later[i]);
		TEST_ASSERT(rw[i] != Q_NONE && rf[i] != Q_NONE &&
			    rl[i] != Q_NONE, "no rule: frame %d", i);
		spread |= 1 << rw[i] | 1 << rl[i];
	}
	TEST_ASSERT(__builtin_popcount(spread) > 1, "the port's RSS spreads "
		    "the frames (queues 0x%x)", spread);
	mk_ovs4(&tagged, &mac1, 100);
	rt = where(&tagged);
	mk_ipv6(&v6plain, &l34_default);
	mk_ipv6_ext(&v6frag, IPPROTO_FRAGMENT);
	mk_ipv6_ext(&v6hop, IPPROTO_HOPOPTS);
	r6[0] = where(&v6plain);
	r6[1] = where(&v6frag);
	r6[2] = where(&v6hop);
	TEST_ASSERT(r6[0] != Q_NONE && r6[1] != Q_NONE && r6[2] != Q_NONE,
		    "no rule: ipv6 frames");

	/* Not a fragment (OVS frag=no): only whole datagrams are marked. */
	f = rule(0, p_nofrag, a41);
	TEST_ASSERT_NOT_NULL(f, "frag=no rule with the port's RSS");
	for (i = 0; i < NF; i++) {
		EXPECT_MARK("frag=no: whole datagram", &whole[i], rw[i], 41);
		EXPECT_MARK("frag=no: first fragment, unmarked", &frag1[i],
			    rf[i], MARK_NONE);
		EXPECT_MARK("frag=no: later fragment, unmarked", &later[i],
			    rl[i], MARK_NONE);
	}
	EXPECT_Q("frag=no: tagged (its companions)", &tagged, rt);
	/* frag=first has the same match as the device sees it. */
	TEST_ASSERT_SUCCESS(same_match_refused(f, 0, p_first, a42),
			    "frag=first over frag=no");
	TEST_ASSERT_SUCCESS(ovs_refused(0, p_first, a42, "(fragment "
			    "conditions are kept in software)"),
			    "frag=first: why");
	/* A worse rule its verbs flow would take fragments from: refused. */
	TEST_ASSERT_SUCCESS(ovs_refused(1, p_udp, to_q1, "excludes by its "
			    "ipv4 item: fragment_offset (kept in software"),
			    "a lower rule under frag=no");
	/* The port's RSS may not change under it. */
	rc.rss_hf = RTE_ETH_RSS_IP;
	TEST_ASSERT(rte_eth_dev_rss_hash_update(port1, &rc) != 0,
		    "RSS on ip only under a frag=no rule: refused");
	EXPECT_MARK("RSS kept: whole datagram", &whole[0], rw[0], 41);
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
	EXPECT_MARK("after stop/start: whole datagram", &whole[1], rw[1], 41);
	EXPECT_MARK("after stop/start: first fragment", &frag1[1], rf[1],
		    MARK_NONE);
	DESTROY(f);

	/* The other order: the lower rule first. */
	RULE(g, 1, p_udp, to_q1);
	TEST_ASSERT_SUCCESS(ovs_refused(0, p_nofrag, a41, "(priority 1) may "
			    "match frames this rule's ipv4 item: "
			    "fragment_offset excludes"), "frag=no over a rule");
	DESTROY(g);

	/* A first fragment (OVS frag=first). */
	f = rule(0, p_first, a42);
	TEST_ASSERT_NOT_NULL(f, "frag=first rule");
	for (i = 0; i < NF; i++) {
		EXPECT_MARK("frag=first: first fragment", &frag1[i], rf[i],
			    42);
		EXPECT_MARK("frag=first: whole datagram, unmarked", &whole[i],
			    rw[i], MARK_NONE);
		EXPECT_MARK("frag=first: later fragment, unmarked", &later[i],
			    rl[i], MARK_NONE);
	}
	DESTROY(f);

	/* IPv6 has_frag_ext 0: the Rx burst walks the extension headers. */
	f = rule(0, p_v6, a43);
	TEST_ASSERT_NOT_NULL(f, "ipv6 has_frag_ext 0 rule");
	EXPECT_MARK("has_frag_ext 0: no extension", &v6plain, r6[0], 43);
	EXPECT_MARK("has_frag_ext 0: fragment header, unmarked", &v6frag,
		    r6[1], MARK_NONE);
	EXPECT_MARK("has_frag_ext 0: hop-by-hop, no fragment", &v6hop, r6[2],
		    43);
	DESTROY(f);

	/* What would act on the excluded frames: refused, with why. */
	TEST_ASSERT_SUCCESS(ovs_refused(0, p_nofrag, a_q2, "ipv4 item: "
			    "fragment_offset: the device cannot match "
			    "fragments; only a mark with the port's own RSS "
			    "can be kept exact in software"), "queue 2");
	TEST_ASSERT_SUCCESS(ovs_refused(0, p_nofrag, a_count, "ipv4 item: "
			    "fragment_offset: the device cannot match "
			    "fragments; only a mark or flag with the port's "
			    "own RSS can be kept exact in software, not a "
			    "count action"), "count");
	TEST_ASSERT_SUCCESS(ovs_refused(0, p_nofrag, to_drop, "not a drop "
			    "action"), "drop");
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	TEST_ASSERT_SUCCESS(port_setup(port1, NB_RXQ, port_key), "mq none");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
	return TEST_SUCCESS;
}

/* Lines of the port's rte_flow dump that hold needle. */
static unsigned int
dump_count(const char *needle)
{
	struct rte_flow_error err;
	char *buf = NULL, *p;
	unsigned int n = 0;
	size_t len = 0;
	FILE *f;

	f = open_memstream(&buf, &len);
	if (f == NULL)
		return UINT_MAX;
	if (rte_flow_dev_dump(port1, NULL, f, &err) != 0)
		n = UINT_MAX;
	fclose(f);
	for (p = buf; n != UINT_MAX && (p = strstr(p, needle)) != NULL; p++)
		n++;
	free(buf);
	return n;
}

/*
 * OVS's revalidators create and destroy rules as megaflows come and go:
 * thousands of mark rules with companions, destroyed one by one or
 * flushed, leave no rule and no verbs flow of theirs; the port's own
 * traffic is as before.
 */
static int
test_ovs_rule_life(void)
{
	enum { N = 2000 };
	static struct rte_flow *flows[N];
	struct rte_flow_item_eth e = { .dst = mac1, .type = RTE_BE16(0x0806) };
	struct rte_flow_item p[] = { ITEM(ETH, &e, &ovs_eth_m), ITEM_END };
	struct frame plain;
	unsigned int i, round;
	uint64_t internal;

	CLEAN();
	mk_ipv4_fo(&plain, 0, false, 0);
	internal = vbr_test_xstat(port1, "flow_own_verbs_flows");
	TEST_ASSERT(internal > 0 && internal != UINT64_MAX,
		    "internal verbs flows: %" PRIu64, internal);
	TEST_ASSERT_EQUAL(vbr_test_xstat(port1, "flow_rules"), 0, "rules");
	for (round = 0; round < 2; round++) {
		for (i = 0; i < N; i++) {
			e.src.addr_bytes[0] = 0x02;
			e.src.addr_bytes[4] = (uint8_t)(i >> 8);
			e.src.addr_bytes[5] = (uint8_t)i;
			flows[i] = ovs_rule(p, i + 1);
			TEST_ASSERT_NOT_NULL(flows[i], "rule %u", i);
		}
		TEST_ASSERT_EQUAL(dump_count("companion"), 2u * N,
				  "companion verbs flows of %u rules", N);
		TEST_ASSERT_EQUAL(dump_count("), on the device"), (unsigned)N,
				  "rules on the device");
		/* each: its own flow and two companions */
		TEST_ASSERT_EQUAL(vbr_test_xstat(port1, "flow_rules"),
				  (uint64_t)N, "flow_rules xstat");
		TEST_ASSERT_EQUAL(vbr_test_xstat(port1, "flow_verbs_flows"),
				  3 * (uint64_t)N, "flow_verbs_flows xstat");
		if (round == 0) {
			for (i = 0; i < N; i++)
				DESTROY(flows[i]);
		} else {
			struct rte_flow_error err;

			TEST_ASSERT_SUCCESS(rte_flow_flush(port1, &err),
					    "flush");
		}
		TEST_ASSERT_EQUAL(dump_count(" 0 vbr rules"), 1u,
				  "rules left after round %u", round);
		TEST_ASSERT_EQUAL(dump_count("vbr rule "), 0u,
				  "user rules (and their verbs flows) left");
		TEST_ASSERT_EQUAL(vbr_test_xstat(port1, "flow_rules"), 0,
				  "flow_rules xstat after round %u", round);
		TEST_ASSERT_EQUAL(vbr_test_xstat(port1, "flow_verbs_flows"), 0,
				  "flow_verbs_flows xstat after round %u", round);
		TEST_ASSERT_EQUAL(vbr_test_xstat(port1,
						 "flow_own_verbs_flows"),
				  internal, "only the internal verbs flows");
		EXPECT_Q("after the rules: default queue", &plain, 0);
	}
	return TEST_SUCCESS;
}

/* No frame came after its check stopped waiting. */
static int
test_no_late_frames(void)
{
	rte_delay_ms(NONE_MS);
	drain();
	TEST_ASSERT_EQUAL(late_frames, 0, "frames arrived after their check "
			  "stopped waiting: a check of \"no frame\" may have "
			  "passed too early");
	return TEST_SUCCESS;
}

static int
setup(void)
{
	TEST_ASSERT_SUCCESS(vbr_test_pair_ports(&port0, &port1), "ports");
	TEST_ASSERT_SUCCESS(port_setup(port0, 1, NULL), "setup port 0");
	TEST_ASSERT_SUCCESS(port_setup(port1, NB_RXQ, port_key),
			    "setup port 1");
	TEST_ASSERT_SUCCESS(vbr_test_pair_start(port0, port1), "start");
	TEST_ASSERT_SUCCESS(rte_eth_promiscuous_disable(port1), "promisc");
	TEST_ASSERT_SUCCESS(rte_eth_allmulticast_disable(port1), "allmulti");
	TEST_ASSERT_SUCCESS(rte_eth_macaddr_get(port0, &mac0), "mac 0");
	TEST_ASSERT_SUCCESS(rte_eth_macaddr_get(port1, &mac1), "mac 1");
	rte_delay_ms(50);
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite = {
	.name = "vbr rte_flow packets per item and action",
	.setup = setup,
	.cases = {
		TEST_CASE(test_toeplitz_reference),
		TEST_CASE(test_default_queue),
		TEST_CASE(test_item_eth),
		TEST_CASE(test_item_vlan),
		TEST_CASE(test_item_ipv4),
		TEST_CASE(test_item_ipv6),
		TEST_CASE(test_item_tcp),
		TEST_CASE(test_item_udp),
		TEST_CASE(test_item_vxlan),
		TEST_CASE(test_item_gre),
		TEST_CASE(test_item_mpls),
		TEST_CASE(test_item_esp),
		TEST_CASE(test_action_rss),
		TEST_CASE(test_action_rss_mark_vxlan),
		TEST_CASE(test_action_drop),
		TEST_CASE(test_action_mark_flag),
		TEST_CASE(test_priorities),
		TEST_CASE(test_same_priority),
		TEST_CASE(test_stop_start),
		TEST_CASE(test_destroy_flush),
		TEST_CASE(test_isolate),
		TEST_CASE(test_ovs_partial_offload),
		TEST_CASE(test_ovs_companion_fate),
		TEST_CASE(test_ovs_companion_rss),
		TEST_CASE(test_ovs_frag_sw),
		TEST_CASE(test_ovs_rule_life),
		TEST_CASE(test_no_late_frames),
		TEST_CASES_END(),
	},
};

int
main(int argc, char **argv)
{
	int ret;

	if (argc != 2 && (argc != 3 || strcmp(argv[2], "full") != 0)) {
		fprintf(stderr, "usage: %s <librte_net_vbr.so> [full]\n",
			argv[0]);
		return 2;
	}
	full_profile = argc == 3;
	if (full_profile && vbr_test_dev() != NULL) {
		printf("SKIP: the full profile is swverbs', not a NIC's\n");
		return 77;
	}
	/* the cable name ends the wire= devarg: the profile follows it */
	ret = vbr_test_eal_init(argv[0], argv[1], "pmd.net.vbr:info",
				full_profile ? "fpk,profile=full" : "fpk", NULL);
	if (ret != 0)
		return vbr_test_init_status(ret);
	mp = vbr_test_pool("flow_pkts", 4095);
	if (mp == NULL)
		return 1;
	ret = unit_test_suite_runner(&suite);
	vbr_test_pair_fini(port0, port1, mp);
	return ret;
}
