/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The offloads verbs carries, through ethdev on a pair of vbr ports: what
 * dev_infos_get advertises (and what it must not: RSS hash, VLAN insert,
 * packet types), Rx checksum status (exactly GOOD, BAD, NONE or UNKNOWN:
 * the mlx5 profile's WQs never report it, vbr checks in software), Tx
 * checksums (IBV_SEND_IP_CSUM) and tx_prepare, VLAN strip per queue and
 * by vlan_offload_set with the VLAN filter in front of it, Rx timestamps
 * in the dynamic field and read_clock (monotonic, between two clock
 * reads, the wall clock's pace within generous bounds).
 */

#include <time.h>

#include <rte_mbuf_dyn.h>
#include <rte_tcp.h>

#include "vbr_test_port.h"

#define NB_MBUF 4096
#define WAIT_MS 2000
#define VID 10

static struct rte_mempool *mp;
static uint16_t port0, port1;

#define RX_CSUM (RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | \
		 RTE_ETH_RX_OFFLOAD_UDP_CKSUM | RTE_ETH_RX_OFFLOAD_TCP_CKSUM)
#define TX_CSUM (RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | \
		 RTE_ETH_TX_OFFLOAD_UDP_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM)

/* Stop both, configure port0 with txol and port1 with rxol, start. */
static int
cfg(uint64_t rxol, uint64_t txol)
{
	struct rte_eth_conf c0 = { .txmode.offloads = txol };
	struct rte_eth_conf c1 = { .rxmode.offloads = rxol };

	rte_eth_dev_stop(port0);
	rte_eth_dev_stop(port1);
	TEST_ASSERT_SUCCESS(vbr_test_port_config(port0, &c0, 1, 256, 256, mp),
			    "port 0");
	TEST_ASSERT_SUCCESS(vbr_test_port_config(port1, &c1, 1, 256, 256, mp),
			    "port 1");
	TEST_ASSERT_SUCCESS(vbr_test_pair_start(port0, port1), "");
	return TEST_SUCCESS;
}

/* Receive n frames on port1 (or fewer by the deadline). */
static uint16_t
recv_n(struct rte_mbuf **pkts, uint16_t n, unsigned int wait_ms)
{
	uint64_t end = rte_get_timer_cycles() +
		       rte_get_timer_hz() * wait_ms / 1000;
	uint16_t got = 0;

	while (got < n && rte_get_timer_cycles() < end)
		got += rte_eth_rx_burst(port1, 0, pkts + got, n - got);
	return got;
}

/*
 * A frame from port0 to port1: Ethernet (tagged with vid >= 0), IPv4 or
 * IPv6, TCP or UDP, checksums right.
 */
static struct rte_mbuf *
frame(int v6, int tcp, int vid, uint16_t plen)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	uint16_t l2 = sizeof(struct rte_ether_hdr) + (vid >= 0 ? 4 : 0);
	uint16_t l3 = v6 ? sizeof(struct rte_ipv6_hdr) :
		      sizeof(struct rte_ipv4_hdr);
	uint16_t l4 = tcp ? sizeof(struct rte_tcp_hdr) :
		      sizeof(struct rte_udp_hdr);
	struct rte_ether_hdr *eh;
	uint8_t *p, *ip, *seg;
	uint16_t i;

	if (m == NULL)
		return NULL;
	p = (uint8_t *)rte_pktmbuf_append(m, l2 + l3 + l4 + plen);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(p, 0, l2 + l3 + l4 + plen);
	eh = (struct rte_ether_hdr *)p;
	rte_eth_macaddr_get(port1, &eh->dst_addr);
	rte_eth_macaddr_get(port0, &eh->src_addr);
	if (vid >= 0) {
		struct rte_vlan_hdr *vh = (struct rte_vlan_hdr *)(eh + 1);

		eh->ether_type = RTE_BE16(RTE_ETHER_TYPE_VLAN);
		vh->vlan_tci = rte_cpu_to_be_16((uint16_t)(0x6000 | vid));
		vh->eth_proto = rte_cpu_to_be_16(v6 ? RTE_ETHER_TYPE_IPV6 :
						 RTE_ETHER_TYPE_IPV4);
	} else {
		eh->ether_type = rte_cpu_to_be_16(v6 ? RTE_ETHER_TYPE_IPV6 :
						  RTE_ETHER_TYPE_IPV4);
	}
	ip = p + l2;
	seg = ip + l3;
	for (i = 0; i < plen; i++)
		seg[l4 + i] = (uint8_t)(i * 31 + 1);
	if (tcp) {
		struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)seg;

		th->src_port = RTE_BE16(1234);
		th->dst_port = RTE_BE16(80);
		th->data_off = 0x50;
		th->tcp_flags = RTE_TCP_ACK_FLAG;
	} else {
		struct rte_udp_hdr *uh = (struct rte_udp_hdr *)seg;

		uh->src_port = RTE_BE16(1234);
		uh->dst_port = RTE_BE16(53);
		uh->dgram_len = rte_cpu_to_be_16(l4 + plen);
	}
	if (v6) {
		struct rte_ipv6_hdr *h = (struct rte_ipv6_hdr *)ip;

		h->vtc_flow = RTE_BE32(0x60000000);
		h->payload_len = rte_cpu_to_be_16(l4 + plen);
		h->proto = tcp ? IPPROTO_TCP : IPPROTO_UDP;
		h->hop_limits = 64;
		VBR_TEST_IPV6_BYTES(h->src_addr)[0] = 0x20;
		VBR_TEST_IPV6_BYTES(h->src_addr)[15] = 1;
		VBR_TEST_IPV6_BYTES(h->dst_addr)[0] = 0x20;
		VBR_TEST_IPV6_BYTES(h->dst_addr)[15] = 2;
		if (tcp)
			((struct rte_tcp_hdr *)seg)->cksum =
				rte_ipv6_udptcp_cksum(h, seg);
		else
			((struct rte_udp_hdr *)seg)->dgram_cksum =
				rte_ipv6_udptcp_cksum(h, seg);
	} else {
		struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;

		h->version_ihl = RTE_IPV4_VHL_DEF;
		h->total_length = rte_cpu_to_be_16(l3 + l4 + plen);
		h->time_to_live = 64;
		h->next_proto_id = tcp ? IPPROTO_TCP : IPPROTO_UDP;
		h->src_addr = RTE_BE32(0x0a000001);
		h->dst_addr = RTE_BE32(0x0a000002);
		h->hdr_checksum = rte_ipv4_cksum(h);
		if (tcp)
			((struct rte_tcp_hdr *)seg)->cksum =
				rte_ipv4_udptcp_cksum(h, seg);
		else
			((struct rte_udp_hdr *)seg)->dgram_cksum =
				rte_ipv4_udptcp_cksum(h, seg);
	}
	m->l2_len = l2;
	m->l3_len = l3;
	return m;
}

/* The L4 checksum field of a frame made by frame(). */
static uint8_t *
l4_csum(struct rte_mbuf *m, int tcp)
{
	uint8_t *seg = rte_pktmbuf_mtod_offset(m, uint8_t *,
					       m->l2_len + m->l3_len);

	return seg + (tcp ? 16 : 6);
}

/* Send m on port0, return what port1 got (NULL: nothing). */
static struct rte_mbuf *
xfer(struct rte_mbuf *m)
{
	struct rte_mbuf *r = NULL;

	if (m == NULL || vbr_test_tx_all(port0, &m, 1, WAIT_MS) != 1)
		return NULL;
	if (recv_n(&r, 1, WAIT_MS) != 1)
		return NULL;
	return r;
}

static int
test_capa(void)
{
	struct rte_eth_dev_info info;
	uint32_t ptypes[16];

	TEST_ASSERT_SUCCESS(rte_eth_dev_info_get(port1, &info), "");
	/* swverbs reports what a ConnectX does. */
	TEST_ASSERT_EQUAL(info.rx_offload_capa & RX_CSUM, RX_CSUM,
			  "Rx checksums");
	TEST_ASSERT(info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_VLAN_STRIP, "");
	TEST_ASSERT(info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP, "");
	TEST_ASSERT(info.rx_queue_offload_capa &
		    RTE_ETH_RX_OFFLOAD_VLAN_STRIP, "per queue strip");
	TEST_ASSERT_EQUAL(info.tx_offload_capa & TX_CSUM, TX_CSUM,
			  "Tx checksums");
	TEST_ASSERT(info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE,
		    "");
	/* What verbs cannot give is not claimed. */
	TEST_ASSERT_EQUAL(info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_RSS_HASH,
			  0, "no per-packet RSS hash in verbs");
	TEST_ASSERT_EQUAL(info.tx_offload_capa &
			  (RTE_ETH_TX_OFFLOAD_VLAN_INSERT |
			   RTE_ETH_TX_OFFLOAD_SCTP_CKSUM), 0,
			  "no VLAN insert, no SCTP in verbs");
	TEST_ASSERT(rte_eth_dev_get_supported_ptypes(port1, RTE_PTYPE_ALL_MASK,
						     ptypes, 16) <= 0,
		    "packet types claimed");
	return TEST_SUCCESS;
}

/* Spoil a frame made by frame() as an Rx checksum case says. */
enum spoil {
	OK,		/* as made: every checksum right */
	BAD_IP,		/* the IPv4 header checksum wrong */
	BAD_L4,		/* the TCP or UDP checksum wrong */
	UDP_NONE,	/* UDP over IPv4 with checksum 0: none */
	FRAG,		/* IPv4 MF set (a first fragment), header right */
	ICMP,		/* IPv4 protocol 1, header right */
	NOT_IP,		/* ether type ARP */
	LONG_IP,	/* IPv4 length past the frame, header right */
};

static void
spoil(struct rte_mbuf *m, int tcp, enum spoil how)
{
	struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ipv4_hdr *h = rte_pktmbuf_mtod_offset(m,
		struct rte_ipv4_hdr *, m->l2_len);

	switch (how) {
	case BAD_IP:
		h->hdr_checksum ^= RTE_BE16(0x1000);
		return;
	case BAD_L4:
		l4_csum(m, tcp)[1] ^= 0x01;
		return;
	case UDP_NONE:
		l4_csum(m, tcp)[0] = 0;
		l4_csum(m, tcp)[1] = 0;
		return;
	case FRAG:
		h->fragment_offset = RTE_BE16(RTE_IPV4_HDR_MF_FLAG);
		break;
	case ICMP:
		h->next_proto_id = IPPROTO_ICMP;
		break;
	case NOT_IP:
		eh->ether_type = RTE_BE16(RTE_ETHER_TYPE_ARP);
		return;
	case LONG_IP:
		h->total_length = rte_cpu_to_be_16(
			rte_be_to_cpu_16(h->total_length) + 100);
		break;
	default:
		return;
	}
	h->hdr_checksum = 0;
	h->hdr_checksum = rte_ipv4_cksum(h);
}

#define IP_GOOD RTE_MBUF_F_RX_IP_CKSUM_GOOD
#define IP_BAD RTE_MBUF_F_RX_IP_CKSUM_BAD
#define L4_GOOD RTE_MBUF_F_RX_L4_CKSUM_GOOD
#define L4_BAD RTE_MBUF_F_RX_L4_CKSUM_BAD
#define L4_NONE RTE_MBUF_F_RX_L4_CKSUM_NONE

/*
 * Rx checksum status, offload on and off, on the mlx5 profile (whose WQ
 * completions never say IBV_WC_IP_CSUM_OK, as mlx5's: vbr checks every
 * frame) or the full profile (which marks the right IPv4 TCP/UDP frames
 * IBV_WC_IP_CSUM_OK: vbr checks the others): with the offload,
 * exactly GOOD or BAD per header, NONE for a UDP/IPv4 checksum of 0,
 * UNKNOWN (0) where nothing is checked (IPv6 has no header checksum,
 * fragments and other protocols no L4 one, non-IP frames none, lengths
 * past the frame); without it, never a flag.
 */
static int
test_rx_csum(void)
{
	static const struct {
		const char *what;
		int v6, tcp, vid;
		enum spoil how;
		uint64_t want;
	} c[] = {
		{ "ipv4 udp", 0, 0, -1, OK, IP_GOOD | L4_GOOD },
		{ "ipv4 tcp", 0, 1, -1, OK, IP_GOOD | L4_GOOD },
		{ "ipv4 udp vlan", 0, 0, VID, OK, IP_GOOD | L4_GOOD },
		{ "ipv4 udp bad ip", 0, 0, -1, BAD_IP, IP_BAD | L4_GOOD },
		{ "ipv4 tcp bad ip", 0, 1, -1, BAD_IP, IP_BAD | L4_GOOD },
		{ "ipv4 udp bad l4", 0, 0, -1, BAD_L4, IP_GOOD | L4_BAD },
		{ "ipv4 tcp bad l4", 0, 1, -1, BAD_L4, IP_GOOD | L4_BAD },
		{ "ipv4 tcp vlan bad l4", 0, 1, VID, BAD_L4, IP_GOOD | L4_BAD },
		{ "ipv4 udp no checksum", 0, 0, -1, UDP_NONE,
		  IP_GOOD | L4_NONE },
		{ "ipv4 udp fragment", 0, 0, -1, FRAG, IP_GOOD },
		{ "ipv4 icmp", 0, 0, -1, ICMP, IP_GOOD },
		{ "ipv4 tcp length past the frame", 0, 1, -1, LONG_IP,
		  IP_GOOD },
		{ "ipv6 udp", 1, 0, -1, OK, L4_GOOD },
		{ "ipv6 tcp", 1, 1, -1, OK, L4_GOOD },
		{ "ipv6 udp bad l4", 1, 0, -1, BAD_L4, L4_BAD },
		{ "ipv6 tcp bad l4", 1, 1, -1, BAD_L4, L4_BAD },
		{ "not ip", 0, 0, -1, NOT_IP, 0 },
	};
	const uint64_t mask = RTE_MBUF_F_RX_IP_CKSUM_MASK |
			      RTE_MBUF_F_RX_L4_CKSUM_MASK;
	struct rte_mbuf *m, *r;
	unsigned int i, on;

	for (on = 0; on < 2; on++) {
		TEST_ASSERT_SUCCESS(cfg(on ? RX_CSUM : 0, 0), "");
		for (i = 0; i < RTE_DIM(c); i++) {
			m = frame(c[i].v6, c[i].tcp, c[i].vid, 40 + i);
			TEST_ASSERT_NOT_NULL(m, "");
			spoil(m, c[i].tcp, c[i].how);
			r = xfer(m);
			TEST_ASSERT_NOT_NULL(r, "%s: not received", c[i].what);
			TEST_ASSERT_EQUAL(r->ol_flags & mask,
					  on ? c[i].want : 0,
					  "%s (offload %s): flags %#" PRIx64,
					  c[i].what, on ? "on" : "off",
					  r->ol_flags);
			rte_pktmbuf_free(r);
		}
	}
	return TEST_SUCCESS;
}

/*
 * Scattered Rx: frames of 3000 bytes in chains of 2048-byte buffers (MTU
 * 9000), the L4 data across the segments: the same exact flags.
 */
static int
test_rx_csum_scatter(void)
{
	static const struct {
		int v6, tcp;
		enum spoil how;
		uint64_t want;
	} c[] = {
		{ 0, 0, OK, IP_GOOD | L4_GOOD },
		{ 0, 1, BAD_L4, IP_GOOD | L4_BAD },
		{ 1, 1, OK, L4_GOOD },
		{ 1, 0, BAD_L4, L4_BAD },
	};
	const uint64_t mask = RTE_MBUF_F_RX_IP_CKSUM_MASK |
			      RTE_MBUF_F_RX_L4_CKSUM_MASK;
	struct rte_eth_conf c0 = {
		.rxmode.mtu = 9000,
		.rxmode.offloads = RTE_ETH_RX_OFFLOAD_SCATTER,
	};
	struct rte_eth_conf c1 = {
		.rxmode.mtu = 9000,
		.rxmode.offloads = RX_CSUM | RTE_ETH_RX_OFFLOAD_SCATTER,
	};
	struct rte_mempool *big, *keep = mp;
	struct rte_mbuf *m, *r;
	unsigned int i;

	big = rte_pktmbuf_pool_create("vbr_offl_big", 64, 0, 0,
				      RTE_PKTMBUF_HEADROOM + 4096,
				      SOCKET_ID_ANY);
	TEST_ASSERT_NOT_NULL(big, "pool");
	rte_eth_dev_stop(port0);
	rte_eth_dev_stop(port1);
	TEST_ASSERT_SUCCESS(vbr_test_port_config(port0, &c0, 1, 256, 256, mp),
			    "port 0");
	TEST_ASSERT_SUCCESS(vbr_test_port_config(port1, &c1, 1, 256, 256, mp),
			    "port 1");
	TEST_ASSERT_SUCCESS(vbr_test_pair_start(port0, port1), "");
	for (i = 0; i < RTE_DIM(c); i++) {
		mp = big;	/* frame() takes its mbuf from mp */
		m = frame(c[i].v6, c[i].tcp, -1, 2900);
		mp = keep;
		TEST_ASSERT_NOT_NULL(m, "");
		spoil(m, c[i].tcp, c[i].how);
		r = xfer(m);
		TEST_ASSERT_NOT_NULL(r, "case %u: not received", i);
		TEST_ASSERT(r->nb_segs > 1, "case %u: one segment", i);
		TEST_ASSERT_EQUAL(r->ol_flags & mask, c[i].want,
				  "case %u: flags %#" PRIx64, i, r->ol_flags);
		rte_pktmbuf_free(r);
	}
	rte_mempool_free(big);
	return TEST_SUCCESS;
}

/* Tx checksums filled by the device; tx_prepare's answers. */
static int
test_tx_csum(void)
{
	static const struct {
		int v6, tcp, vid;
	} c[] = {
		{ 0, 0, -1 }, { 0, 1, -1 }, { 1, 0, -1 }, { 1, 1, -1 },
		{ 0, 1, VID },
	};
	struct rte_mbuf *m, *r;
	unsigned int i;

	/* Off: tx_prepare refuses a checksum request. */
	TEST_ASSERT_SUCCESS(cfg(RX_CSUM, 0), "");
	m = frame(0, 0, -1, 10);
	TEST_ASSERT_NOT_NULL(m, "");
	m->ol_flags = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
	TEST_ASSERT_EQUAL(rte_eth_tx_prepare(port0, 0, &m, 1), 0,
			  "checksum on a queue without the offload");
	TEST_ASSERT_EQUAL(rte_errno, ENOTSUP, "");
	rte_pktmbuf_free(m);
	TEST_ASSERT_SUCCESS(cfg(RX_CSUM, TX_CSUM), "");
	m = frame(0, 0, -1, 10);
	TEST_ASSERT_NOT_NULL(m, "");
	m->ol_flags = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_SCTP_CKSUM;
	TEST_ASSERT_EQUAL(rte_eth_tx_prepare(port0, 0, &m, 1), 0, "SCTP");
	TEST_ASSERT_EQUAL(rte_errno, ENOTSUP, "");
	m->ol_flags = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM |
		      RTE_MBUF_F_TX_UDP_CKSUM;
	TEST_ASSERT_EQUAL(rte_eth_tx_prepare(port0, 0, &m, 1), 1, "UDP");
	rte_pktmbuf_free(m);
	for (i = 0; i < RTE_DIM(c); i++) {
		uint16_t l2, l3;
		uint8_t *ip;

		m = frame(c[i].v6, c[i].tcp, c[i].vid, 100 + i);
		TEST_ASSERT_NOT_NULL(m, "");
		l2 = m->l2_len;
		l3 = m->l3_len;
		/* Wrong sums on purpose: the device fills them. */
		l4_csum(m, c[i].tcp)[0] ^= 0x5a;
		ip = rte_pktmbuf_mtod_offset(m, uint8_t *, l2);
		if (!c[i].v6)
			ip[10] ^= 0xa5;
		m->ol_flags = (c[i].v6 ? RTE_MBUF_F_TX_IPV6 :
			       RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM) |
			      (c[i].tcp ? RTE_MBUF_F_TX_TCP_CKSUM :
			       RTE_MBUF_F_TX_UDP_CKSUM);
		r = xfer(m);
		TEST_ASSERT_NOT_NULL(r, "case %u: not received", i);
		ip = rte_pktmbuf_mtod_offset(r, uint8_t *, l2);
		if (c[i].v6) {
			TEST_ASSERT_SUCCESS(rte_ipv6_udptcp_cksum_verify(
				(struct rte_ipv6_hdr *)ip, ip + l3),
				"case %u: L4 checksum", i);
		} else {
			TEST_ASSERT_EQUAL(rte_ipv4_cksum(
				(struct rte_ipv4_hdr *)ip), 0,
				"case %u: IPv4 checksum", i);
			TEST_ASSERT_SUCCESS(rte_ipv4_udptcp_cksum_verify(
				(struct rte_ipv4_hdr *)ip, ip + l3),
				"case %u: L4 checksum", i);
			TEST_ASSERT_EQUAL(r->ol_flags &
					  RTE_MBUF_F_RX_L4_CKSUM_MASK,
					  RTE_MBUF_F_RX_L4_CKSUM_GOOD,
					  "case %u: the receiver agrees", i);
		}
		rte_pktmbuf_free(r);
	}
	/* Without the mbuf flags, the frame goes as it is. */
	m = frame(0, 0, -1, 10);
	TEST_ASSERT_NOT_NULL(m, "");
	l4_csum(m, 0)[0] ^= 0x5a;
	r = xfer(m);
	TEST_ASSERT_NOT_NULL(r, "");
	TEST_ASSERT_EQUAL(r->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK,
			  RTE_MBUF_F_RX_L4_CKSUM_BAD, "sent as it was");
	rte_pktmbuf_free(r);
	return TEST_SUCCESS;
}

/* A tagged frame must come out stripped: flags, TCI, bytes. */
static int
check_stripped(struct rte_mbuf *r, uint16_t sent_len, bool stripped)
{
	struct rte_ether_hdr *eh;

	TEST_ASSERT_NOT_NULL(r, "not received");
	eh = rte_pktmbuf_mtod(r, struct rte_ether_hdr *);
	if (!stripped) {
		TEST_ASSERT_EQUAL(r->pkt_len, sent_len, "length");
		TEST_ASSERT_EQUAL(r->ol_flags & (RTE_MBUF_F_RX_VLAN |
				  RTE_MBUF_F_RX_VLAN_STRIPPED), 0, "flags");
		TEST_ASSERT_EQUAL(eh->ether_type, RTE_BE16(RTE_ETHER_TYPE_VLAN),
				  "the tag is gone");
		rte_pktmbuf_free(r);
		return TEST_SUCCESS;
	}
	TEST_ASSERT_EQUAL(r->pkt_len, sent_len - 4u, "length");
	TEST_ASSERT_EQUAL(r->ol_flags & (RTE_MBUF_F_RX_VLAN |
			  RTE_MBUF_F_RX_VLAN_STRIPPED),
			  RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED,
			  "flags %#" PRIx64, r->ol_flags);
	TEST_ASSERT_EQUAL(r->vlan_tci, 0x6000 | VID, "TCI %#x", r->vlan_tci);
	TEST_ASSERT_EQUAL(eh->ether_type, RTE_BE16(RTE_ETHER_TYPE_IPV4),
			  "ether type after the strip");
	rte_pktmbuf_free(r);
	return TEST_SUCCESS;
}

static int
test_vlan_strip(void)
{
	struct rte_eth_rxconf rxc = { .offloads = 0 };
	struct rte_mbuf *m;
	uint16_t len;

	/* Port-wide at configure. */
	TEST_ASSERT_SUCCESS(cfg(RTE_ETH_RX_OFFLOAD_VLAN_STRIP, 0), "");
	m = frame(0, 1, VID, 60);
	TEST_ASSERT_NOT_NULL(m, "");
	len = (uint16_t)m->pkt_len;
	TEST_ASSERT_SUCCESS(check_stripped(xfer(m), len, true), "configure");
	/* Untagged frames: nothing stripped, no flags. */
	m = frame(0, 1, -1, 60);
	TEST_ASSERT_NOT_NULL(m, "");
	len = (uint16_t)m->pkt_len;
	m = xfer(m);
	TEST_ASSERT_NOT_NULL(m, "");
	TEST_ASSERT_EQUAL(m->pkt_len, len, "");
	TEST_ASSERT_EQUAL(m->ol_flags & RTE_MBUF_F_RX_VLAN, 0, "untagged");
	rte_pktmbuf_free(m);
	/* The VLAN filter matches the tag before the strip. */
	TEST_ASSERT_SUCCESS(rte_eth_dev_set_vlan_offload(port1,
			    RTE_ETH_VLAN_STRIP_OFFLOAD |
			    RTE_ETH_VLAN_FILTER_OFFLOAD), "filter on");
	TEST_ASSERT_SUCCESS(rte_eth_dev_vlan_filter(port1, VID, 1), "");
	m = frame(0, 1, VID, 60);
	TEST_ASSERT_NOT_NULL(m, "");
	TEST_ASSERT_SUCCESS(check_stripped(xfer(m), len + 4, true),
			    "filtered in");
	m = frame(0, 1, VID + 1, 60);
	TEST_ASSERT_NOT_NULL(m, "");
	TEST_ASSERT_NULL(xfer(m), "VLAN %u passed the filter", VID + 1);
	TEST_ASSERT_SUCCESS(rte_eth_dev_vlan_filter(port1, VID, 0), "");
	/* Off and on again while started (the queue's CQ has the VLAN). */
	TEST_ASSERT_SUCCESS(rte_eth_dev_set_vlan_offload(port1, 0), "off");
	m = frame(0, 1, VID, 60);
	TEST_ASSERT_NOT_NULL(m, "");
	TEST_ASSERT_SUCCESS(check_stripped(xfer(m), len + 4, false), "off");
	TEST_ASSERT_SUCCESS(rte_eth_dev_set_vlan_offload(port1,
			    RTE_ETH_VLAN_STRIP_OFFLOAD), "on");
	m = frame(0, 1, VID, 60);
	TEST_ASSERT_NOT_NULL(m, "");
	TEST_ASSERT_SUCCESS(check_stripped(xfer(m), len + 4, true), "on");
	/*
	 * A queue set up without it: refused while started (its CQ has no
	 * VLAN), set up again when stopped.
	 */
	TEST_ASSERT_SUCCESS(cfg(0, 0), "");
	TEST_ASSERT_EQUAL(rte_eth_dev_set_vlan_offload(port1,
			  RTE_ETH_VLAN_STRIP_OFFLOAD), -EBUSY, "started");
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "");
	TEST_ASSERT_SUCCESS(rte_eth_dev_set_vlan_offload(port1,
			    RTE_ETH_VLAN_STRIP_OFFLOAD), "stopped");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "");
	m = frame(0, 1, VID, 60);
	TEST_ASSERT_NOT_NULL(m, "");
	TEST_ASSERT_SUCCESS(check_stripped(xfer(m), len + 4, true),
			    "after a stopped set");
	/* Per queue. */
	rte_eth_dev_stop(port1);
	TEST_ASSERT_SUCCESS(rte_eth_dev_set_vlan_offload(port1, 0), "");
	rxc.offloads = RTE_ETH_RX_OFFLOAD_VLAN_STRIP;
	TEST_ASSERT_SUCCESS(rte_eth_rx_queue_setup(port1, 0, 256,
						   SOCKET_ID_ANY, &rxc, mp),
			    "queue strip");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "");
	m = frame(0, 1, VID, 60);
	TEST_ASSERT_NOT_NULL(m, "");
	TEST_ASSERT_SUCCESS(check_stripped(xfer(m), len + 4, true),
			    "per queue");
	return TEST_SUCCESS;
}

/*
 * vlan_offload_set over several queues: refused while started because of
 * queue 1 (no VLAN in its CQ), it changes no queue (queue 0 could strip at
 * once); set up again while stopped, a queue keeps its deferred start.
 */
static int
test_vlan_strip_queues(void)
{
	struct rte_eth_rxconf rxc = { .offloads = 0 };
	struct rte_eth_conf c1 = { .rxmode.offloads = 0 };
	struct rte_eth_rxq_info qi;

	rte_eth_dev_stop(port1);
	TEST_ASSERT_SUCCESS(vbr_test_port_config(port1, &c1, 2, 256, 256, mp),
			    "");
	/* Queue 0 with the VLAN in its CQ but not stripping, queue 1 not. */
	TEST_ASSERT_SUCCESS(rte_eth_dev_set_vlan_offload(port1,
			    RTE_ETH_VLAN_STRIP_OFFLOAD), "on, stopped");
	TEST_ASSERT_SUCCESS(rte_eth_dev_set_vlan_offload(port1, 0), "off");
	TEST_ASSERT_SUCCESS(rte_eth_rx_queue_setup(port1, 1, 256,
						   SOCKET_ID_ANY, &rxc, mp),
			    "");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "");
	TEST_ASSERT_EQUAL(rte_eth_dev_set_vlan_offload(port1,
			  RTE_ETH_VLAN_STRIP_OFFLOAD), -EBUSY, "started");
	TEST_ASSERT_SUCCESS(rte_eth_rx_queue_info_get(port1, 0, &qi), "");
	TEST_ASSERT_EQUAL(qi.conf.offloads & RTE_ETH_RX_OFFLOAD_VLAN_STRIP, 0,
			  "queue 0 strips after a refused set");
	TEST_ASSERT_EQUAL(rte_eth_dev_get_vlan_offload(port1) &
			  RTE_ETH_VLAN_STRIP_OFFLOAD, 0, "");
	/* Set up again when stopped: the deferred start stays. */
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "");
	rxc.rx_deferred_start = 1;
	TEST_ASSERT_SUCCESS(rte_eth_rx_queue_setup(port1, 1, 256,
						   SOCKET_ID_ANY, &rxc, mp),
			    "");
	TEST_ASSERT_SUCCESS(rte_eth_dev_set_vlan_offload(port1,
			    RTE_ETH_VLAN_STRIP_OFFLOAD), "on, stopped");
	TEST_ASSERT_SUCCESS(rte_eth_rx_queue_info_get(port1, 1, &qi), "");
	TEST_ASSERT(qi.conf.offloads & RTE_ETH_RX_OFFLOAD_VLAN_STRIP, "");
	TEST_ASSERT_EQUAL(qi.conf.rx_deferred_start, 1,
			  "the set up again lost rx_deferred_start");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "");
	TEST_ASSERT_SUCCESS(rte_eth_rx_queue_info_get(port1, 1, &qi), "");
	TEST_ASSERT_EQUAL(qi.queue_state, RTE_ETH_QUEUE_STATE_STOPPED,
			  "a deferred queue started");
	return TEST_SUCCESS;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Rx timestamps: flagged, monotonic, between two read_clock()s. */
static int
test_timestamp(void)
{
	struct rte_mbuf *pkts[32], *r[32];
	uint64_t c0, c1, w0, w1, last = 0, ts, flag;
	unsigned int round, i;
	int off, bit;
	uint16_t got;

	TEST_ASSERT_SUCCESS(cfg(RTE_ETH_RX_OFFLOAD_TIMESTAMP, 0), "");
	off = rte_mbuf_dynfield_lookup(RTE_MBUF_DYNFIELD_TIMESTAMP_NAME, NULL);
	bit = rte_mbuf_dynflag_lookup(RTE_MBUF_DYNFLAG_RX_TIMESTAMP_NAME,
				      NULL);
	TEST_ASSERT(off >= 0 && bit >= 0, "dynamic field not registered");
	flag = UINT64_C(1) << bit;
	TEST_ASSERT_SUCCESS(rte_eth_read_clock(port1, &c0), "read_clock");
	for (round = 0; round < 4; round++) {
		for (i = 0; i < 8; i++) {
			pkts[i] = frame(0, 0, -1, 20);
			TEST_ASSERT_NOT_NULL(pkts[i], "");
		}
		TEST_ASSERT_EQUAL(vbr_test_tx_all(port0, pkts, 8, WAIT_MS), 8,
				  "");
		got = recv_n(r, 8, WAIT_MS);
		TEST_ASSERT_EQUAL(got, 8, "received %u", got);
		for (i = 0; i < got; i++) {
			TEST_ASSERT(r[i]->ol_flags & flag, "no timestamp flag");
			ts = *RTE_MBUF_DYNFIELD(r[i], off,
						rte_mbuf_timestamp_t *);
			TEST_ASSERT(ts >= last, "timestamps went back: %"
				    PRIu64 " after %" PRIu64, ts, last);
			TEST_ASSERT(ts >= c0, "timestamp %" PRIu64 " before "
				    "the clock read first (%" PRIu64 ")", ts,
				    c0);
			last = ts;
		}
		rte_pktmbuf_free_bulk(r, got);
		rte_delay_ms(2);
	}
	TEST_ASSERT_SUCCESS(rte_eth_read_clock(port1, &c1), "read_clock");
	TEST_ASSERT(last <= c1, "timestamp %" PRIu64 " after the clock read "
		    "last (%" PRIu64 ")", last, c1);
	/* The device clock keeps the wall clock's pace (generous bounds). */
	w0 = now_ns();
	TEST_ASSERT_SUCCESS(rte_eth_read_clock(port1, &c0), "");
	rte_delay_ms(100);
	TEST_ASSERT_SUCCESS(rte_eth_read_clock(port1, &c1), "");
	w1 = now_ns();
	TEST_ASSERT(c1 - c0 <= (w1 - w0) * 2 && c1 - c0 >= (w1 - w0) / 2,
		    "device clock %" PRIu64 " ns over %" PRIu64 " ns",
		    c1 - c0, w1 - w0);
	/* Off: no flag. */
	TEST_ASSERT_SUCCESS(cfg(0, 0), "");
	r[0] = xfer(frame(0, 0, -1, 20));
	TEST_ASSERT_NOT_NULL(r[0], "");
	TEST_ASSERT_EQUAL(r[0]->ol_flags & flag, 0, "timestamp without it");
	rte_pktmbuf_free(r[0]);
	return TEST_SUCCESS;
}

static int
setup(void)
{
	return vbr_test_pair_ports(&port0, &port1);
}

static const struct unit_test_suite suite = {
	.name = "vbr offloads",
	.setup = setup,
	.cases = {
		TEST_CASE(test_capa),
		TEST_CASE(test_rx_csum),
		TEST_CASE(test_rx_csum_scatter),
		TEST_CASE(test_tx_csum),
		TEST_CASE(test_vlan_strip),
		TEST_CASE(test_vlan_strip_queues),
		TEST_CASE(test_timestamp),
		TEST_CASES_END(),
	},
};

int
main(int argc, char **argv)
{
	bool full;
	int ret;

	if (argc != 2 && !(argc == 3 && strcmp(argv[2], "full") == 0)) {
		fprintf(stderr, "usage: %s <librte_net_vbr.so> [full]\n",
			argv[0]);
		return 2;
	}
	/*
	 * full: swverbs' full profile, whose WQs do set IBV_WC_IP_CSUM_OK:
	 * the same flags, the right IPv4 frames marked by the device.
	 */
	full = argc == 3;
	if (full && vbr_test_dev() != NULL) {
		printf("SKIP: the full profile is swverbs', not a NIC's\n");
		return 77;
	}
	/* the cable name ends the wire= devarg: the profile follows it */
	ret = vbr_test_eal_init(argv[0], argv[1], NULL,
				full ? "c0,profile=full" : "c0", NULL);
	if (ret != 0)
		return vbr_test_init_status(ret);
	mp = vbr_test_pool("vbr_offl", NB_MBUF);
	if (mp == NULL)
		return 1;
	ret = unit_test_suite_runner(&suite);
	vbr_test_pair_fini(port0, port1, mp);
	return ret;
}
