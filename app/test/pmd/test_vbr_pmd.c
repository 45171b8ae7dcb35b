/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * net/vbr on swverbs pair wires: traffic, filters, imissed, RSS, lifecycle
 * and devargs. usage: test-vbr-pmd <librte_net_vbr.so> <group>
 * Each group runs in its own process (EAL starts once per process).
 */

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_udp.h>

#include "test.h"

#define NB_MBUF 8191
#define NB_RXD 512
#define NB_TXD 512
#define ETHERTYPE_TEST 0x88b5
#define WAIT_MS 2000

static struct rte_mempool *mp;
static uint16_t port0, port1;

static const struct rte_ether_addr foreign_mac = {
	.addr_bytes = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x99 } };

static int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the DIR's own fd */
}

static int
port_by_name(const char *name, uint16_t *port)
{
	return rte_eth_dev_get_port_by_name(name, port);
}

static int
wait_link_up(uint16_t port)
{
	struct rte_eth_link link;
	int i;

	for (i = 0; i < WAIT_MS / 10; i++) {
		if (rte_eth_link_get_nowait(port, &link) == 0 &&
		    link.link_status == RTE_ETH_LINK_UP)
			return 0;
		rte_delay_ms(10);
	}
	return -1;
}

/* Configure and start a port. */
static int
port_start(uint16_t port, uint16_t nb_rxq, uint16_t nb_rxd, bool rss)
{
	struct rte_eth_conf conf = { 0 };
	uint16_t q;
	int ret;

	conf.rxmode.mtu = 9000;
	conf.rxmode.offloads = RTE_ETH_RX_OFFLOAD_SCATTER;
	conf.txmode.offloads = RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	if (rss) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf = RTE_ETH_RSS_IP |
						   RTE_ETH_RSS_UDP;
	}
	ret = rte_eth_dev_configure(port, nb_rxq, 1, &conf);
	if (ret != 0) {
		printf("configure port %u: %d\n", port, ret);
		return ret;
	}
	for (q = 0; q < nb_rxq; q++) {
		ret = rte_eth_rx_queue_setup(port, q, nb_rxd, SOCKET_ID_ANY,
					     NULL, mp);
		if (ret != 0) {
			printf("rxq %u setup port %u: %d\n", q, port, ret);
			return ret;
		}
	}
	ret = rte_eth_tx_queue_setup(port, 0, NB_TXD, SOCKET_ID_ANY, NULL);
	if (ret != 0) {
		printf("txq setup port %u: %d\n", port, ret);
		return ret;
	}
	ret = rte_eth_dev_start(port);
	if (ret != 0) {
		printf("start port %u: %d\n", port, ret);
		return ret;
	}
	if (wait_link_up(port) != 0) {
		printf("port %u: link down\n", port);
		return -1;
	}
	return 0;
}

/* Fill a (possibly chained) mbuf of len bytes: header, then a pattern. */
static struct rte_mbuf *
make_pkt(const struct rte_ether_addr *dst, uint16_t src_port, uint32_t len,
	 uint32_t seq)
{
	struct rte_mbuf *head = NULL, *last = NULL;
	struct rte_ether_hdr eh;
	uint32_t off = 0;

	rte_eth_macaddr_get(src_port, &eh.src_addr);
	eh.dst_addr = *dst;
	eh.ether_type = rte_cpu_to_be_16(ETHERTYPE_TEST);
	while (off < len) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
		uint32_t n = RTE_MIN(len - off,
				     (uint32_t)rte_pktmbuf_tailroom(m));
		uint8_t *p;
		uint32_t i;

		if (m == NULL) {
			rte_pktmbuf_free(head);
			return NULL;
		}
		p = (uint8_t *)rte_pktmbuf_append(m, n);
		for (i = 0; i < n; i++) {
			uint32_t o = off + i;

			if (o < sizeof(eh))
				p[i] = ((uint8_t *)&eh)[o];
			else
				p[i] = (uint8_t)(o * 7 + seq);
		}
		if (head == NULL) {
			head = m;
		} else {
			last->next = m;
			head->nb_segs++;
			head->pkt_len += n;
		}
		last = m;
		off += n;
	}
	return head;
}

static int
same_bytes(const struct rte_mbuf *a, const struct rte_mbuf *b)
{
	static uint8_t ba[16384], bb[16384];
	const void *pa, *pb;

	if (a->pkt_len != b->pkt_len)
		return 0;
	pa = rte_pktmbuf_read(a, 0, a->pkt_len, ba);
	pb = rte_pktmbuf_read(b, 0, b->pkt_len, bb);
	return memcmp(pa, pb, a->pkt_len) == 0;
}

static uint16_t
send_all(uint16_t port, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t sent = 0;
	uint64_t deadline = rte_get_timer_cycles() +
			    rte_get_timer_hz() * WAIT_MS / 1000;

	while (sent < n && rte_get_timer_cycles() < deadline)
		sent += rte_eth_tx_burst(port, 0, pkts + sent, n - sent);
	return sent;
}

/* Receive up to n packets on all queues of port, within the wait time. */
static uint16_t
recv_n(uint16_t port, uint16_t nb_rxq, struct rte_mbuf **pkts, uint16_t n,
       unsigned int wait_ms, uint32_t *per_queue)
{
	uint64_t deadline = rte_get_timer_cycles() +
			    rte_get_timer_hz() * wait_ms / 1000;
	uint16_t got = 0, q, r;

	while (rte_get_timer_cycles() < deadline) {
		for (q = 0; q < nb_rxq; q++) {
			r = rte_eth_rx_burst(port, q, pkts + got,
					     RTE_MIN(32, n - got));
			got += r;
			if (per_queue != NULL)
				per_queue[q] += r;
			if (got == n)
				return got;
		}
	}
	return got;
}

static void
free_pkts(struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i;

	for (i = 0; i < n; i++)
		rte_pktmbuf_free(pkts[i]);
}

/* Send one frame to dst from port0; return whether port1 received it. */
static int
deliver_one(const struct rte_ether_addr *dst, unsigned int wait_ms)
{
	struct rte_mbuf *m = make_pkt(dst, port0, 100, 1), *r;
	uint16_t got;

	if (m == NULL || send_all(port0, &m, 1) != 1)
		return -1;
	got = recv_n(port1, 1, &r, 1, wait_ms, NULL);
	free_pkts(&r, got);
	return got;
}

/*
 * Group "traffic": frames of 60 to 9000 bytes cross the pair unchanged and
 * the stats count them exactly.
 */
static int
test_traffic_sizes(void)
{
	static const uint32_t sizes[] = { 60, 64, 65, 128, 511, 1000, 1514,
					  1515, 2000, 2048, 2049, 4000, 6000,
					  8191, 9000 };
	enum { N = 300 };
	struct rte_mbuf *tx[N], *ref[N], *rx[N];
	struct rte_eth_stats s0, s1;
	struct rte_ether_addr dst;
	uint64_t bytes = 0;
	uint16_t i, sent, got;

	rte_eth_macaddr_get(port1, &dst);
	TEST_ASSERT_SUCCESS(rte_eth_stats_reset(port0), "reset");
	TEST_ASSERT_SUCCESS(rte_eth_stats_reset(port1), "reset");
	for (i = 0; i < N; i++) {
		uint32_t len = sizes[i % RTE_DIM(sizes)];

		tx[i] = make_pkt(&dst, port0, len, i);
		ref[i] = make_pkt(&dst, port0, len, i);
		TEST_ASSERT(tx[i] != NULL && ref[i] != NULL, "alloc %u", i);
		bytes += len;
	}
	sent = 0;
	got = 0;
	while (sent < N) {
		uint16_t b = RTE_MIN(32, N - sent);

		sent += send_all(port0, tx + sent, b);
		got += recv_n(port1, 1, rx + got, N - got, 1, NULL);
	}
	got += recv_n(port1, 1, rx + got, N - got, WAIT_MS, NULL);
	TEST_ASSERT_EQUAL(got, N, "frames received");
	for (i = 0; i < N; i++) {
		TEST_ASSERT(same_bytes(rx[i], ref[i]),
			    "frame %u (%u bytes, got %u in %u segs) differs", i,
			    ref[i]->pkt_len, rx[i]->pkt_len, rx[i]->nb_segs);
		TEST_ASSERT_EQUAL(rx[i]->port, port1, "mbuf port");
	}
	TEST_ASSERT_SUCCESS(rte_eth_stats_get(port0, &s0), "stats");
	TEST_ASSERT_SUCCESS(rte_eth_stats_get(port1, &s1), "stats");
	TEST_ASSERT_EQUAL(s0.opackets, N, "opackets");
	TEST_ASSERT_EQUAL(s0.obytes, bytes, "obytes");
	TEST_ASSERT_EQUAL(s1.ipackets, N, "ipackets");
	TEST_ASSERT_EQUAL(s1.ibytes, bytes, "ibytes");
	TEST_ASSERT_EQUAL(s1.q_ipackets[0], N, "q_ipackets");
	TEST_ASSERT_EQUAL(s1.imissed, 0, "imissed");
	TEST_ASSERT_EQUAL(s1.ierrors + s0.oerrors, 0, "errors");
	free_pkts(rx, N);
	free_pkts(ref, N);
	TEST_ASSERT_SUCCESS(rte_eth_stats_reset(port0), "reset");
	TEST_ASSERT_SUCCESS(rte_eth_stats_get(port0, &s0), "stats");
	TEST_ASSERT_EQUAL(s0.opackets + s0.obytes, 0, "stats after reset");
	return TEST_SUCCESS;
}

/* Stop and start keep the port working, and return every Tx mbuf. */
static int
test_restart(void)
{
	struct rte_ether_addr dst;

	rte_eth_macaddr_get(port1, &dst);
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port0), "stop");
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port0), "start");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
	TEST_ASSERT_SUCCESS(wait_link_up(port0), "link");
	TEST_ASSERT_EQUAL(deliver_one(&dst, WAIT_MS), 1, "after restart");
	return TEST_SUCCESS;
}

/* Group "filter": unicast, promiscuous, broadcast, extra MAC, allmulti. */
static int
test_unicast_filter(void)
{
	struct rte_ether_addr dst, bcast, mcast = {
		.addr_bytes = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 } };

	memset(&bcast, 0xff, sizeof(bcast));
	rte_eth_macaddr_get(port1, &dst);
	TEST_ASSERT_EQUAL(deliver_one(&dst, WAIT_MS), 1, "own MAC");
	TEST_ASSERT_EQUAL(deliver_one(&foreign_mac, 200), 0,
			  "foreign MAC without promiscuous");
	TEST_ASSERT_EQUAL(deliver_one(&bcast, WAIT_MS), 1, "broadcast");
	TEST_ASSERT_EQUAL(deliver_one(&mcast, 200), 0, "multicast");
	TEST_ASSERT_SUCCESS(rte_eth_promiscuous_enable(port1), "promisc on");
	TEST_ASSERT_EQUAL(deliver_one(&foreign_mac, WAIT_MS), 1,
			  "foreign MAC in promiscuous mode");
	TEST_ASSERT_SUCCESS(rte_eth_promiscuous_disable(port1), "promisc off");
	TEST_ASSERT_EQUAL(deliver_one(&foreign_mac, 200), 0,
			  "foreign MAC after promiscuous off");
	TEST_ASSERT_SUCCESS(rte_eth_allmulticast_enable(port1), "allmulti");
	TEST_ASSERT_EQUAL(deliver_one(&mcast, WAIT_MS), 1, "allmulticast");
	TEST_ASSERT_SUCCESS(rte_eth_allmulticast_disable(port1), "allmulti");
	TEST_ASSERT_EQUAL(deliver_one(&mcast, 200), 0, "allmulticast off");
	TEST_ASSERT_SUCCESS(rte_eth_dev_set_mc_addr_list(port1, &mcast, 1),
			    "mc list");
	TEST_ASSERT_EQUAL(deliver_one(&mcast, WAIT_MS), 1, "mc list");
	TEST_ASSERT_SUCCESS(rte_eth_dev_set_mc_addr_list(port1, NULL, 0),
			    "mc list");
	TEST_ASSERT_SUCCESS(rte_eth_dev_mac_addr_add(port1,
			    (struct rte_ether_addr *)(uintptr_t)&foreign_mac,
			    0), "mac add");
	TEST_ASSERT_EQUAL(deliver_one(&foreign_mac, WAIT_MS), 1, "added MAC");
	TEST_ASSERT_SUCCESS(rte_eth_dev_mac_addr_remove(port1,
			    (struct rte_ether_addr *)(uintptr_t)&foreign_mac),
			    "mac remove");
	TEST_ASSERT_EQUAL(deliver_one(&foreign_mac, 200), 0, "removed MAC");
	/* A new default MAC replaces the old one. */
	TEST_ASSERT_SUCCESS(rte_eth_dev_default_mac_addr_set(port1,
			    (struct rte_ether_addr *)(uintptr_t)&foreign_mac),
			    "mac set");
	TEST_ASSERT_EQUAL(deliver_one(&foreign_mac, WAIT_MS), 1, "new MAC");
	TEST_ASSERT_EQUAL(deliver_one(&dst, 200), 0, "old MAC");
	TEST_ASSERT_SUCCESS(rte_eth_dev_default_mac_addr_set(port1, &dst),
			    "mac set back");
	/* Rules survive stop/start. */
	TEST_ASSERT_SUCCESS(rte_eth_promiscuous_enable(port1), "promisc on");
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
	TEST_ASSERT_EQUAL(deliver_one(&foreign_mac, WAIT_MS), 1,
			  "promiscuous after restart");
	TEST_ASSERT_SUCCESS(rte_eth_promiscuous_disable(port1), "promisc off");
	TEST_ASSERT_EQUAL(deliver_one(&dst, WAIT_MS), 1, "own MAC at end");
	return TEST_SUCCESS;
}

/* Group "imissed": frames beyond the posted Rx buffers are counted. */
static int
test_imissed(void)
{
	enum { N = 200 };
	struct rte_mbuf *tx[N], *rx[N];
	struct rte_eth_stats s;
	struct rte_ether_addr dst;
	uint16_t i, got;

	rte_eth_macaddr_get(port1, &dst);
	TEST_ASSERT_SUCCESS(rte_eth_stats_reset(port1), "reset");
	for (i = 0; i < N; i++) {
		tx[i] = make_pkt(&dst, port0, 64, i);
		TEST_ASSERT_NOT_NULL(tx[i], "alloc");
	}
	TEST_ASSERT_EQUAL(send_all(port0, tx, N), N, "sent");
	rte_delay_ms(300);
	TEST_ASSERT_SUCCESS(rte_eth_stats_get(port1, &s), "stats");
	/* port1 has VBR_MIN_DESC (64) Rx buffers posted. */
	TEST_ASSERT_EQUAL(s.imissed, N - 64, "imissed");
	got = recv_n(port1, 1, rx, N, 300, NULL);
	TEST_ASSERT_EQUAL(got, 64, "received");
	free_pkts(rx, got);
	TEST_ASSERT_SUCCESS(rte_eth_stats_get(port1, &s), "stats");
	TEST_ASSERT_EQUAL(s.ipackets, 64, "ipackets");
	TEST_ASSERT_SUCCESS(rte_eth_stats_reset(port1), "reset");
	TEST_ASSERT_SUCCESS(rte_eth_stats_get(port1, &s), "stats");
	TEST_ASSERT_EQUAL(s.imissed, 0, "imissed after reset");
	TEST_ASSERT_EQUAL(s.ipackets, 0, "ipackets after reset");
	/* Buffers were replenished: traffic flows again. */
	TEST_ASSERT_EQUAL(deliver_one(&dst, WAIT_MS), 1, "after drain");
	return TEST_SUCCESS;
}

/* Group "rss": 4 Rx queues, UDP flows spread over several of them. */
static int
test_rss(void)
{
	enum { N = 400, NQ = 4 };
	struct rte_mbuf *tx[N], *rx[N];
	uint32_t per_q[NQ] = { 0 };
	struct rte_eth_stats s;
	struct rte_ether_addr dst;
	unsigned int used = 0, q;
	uint16_t i, got;

	rte_eth_macaddr_get(port1, &dst);
	TEST_ASSERT_SUCCESS(rte_eth_stats_reset(port1), "reset");
	for (i = 0; i < N; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
		struct rte_ether_hdr *eh;
		struct rte_ipv4_hdr *ip;
		struct rte_udp_hdr *udp;

		TEST_ASSERT_NOT_NULL(m, "alloc");
		eh = (void *)rte_pktmbuf_append(m, sizeof(*eh) + sizeof(*ip) +
						sizeof(*udp) + 18);
		memset(eh, 0, m->pkt_len);
		eh->dst_addr = dst;
		rte_eth_macaddr_get(port0, &eh->src_addr);
		eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
		ip = (struct rte_ipv4_hdr *)(eh + 1);
		ip->version_ihl = RTE_IPV4_VHL_DEF;
		ip->total_length = rte_cpu_to_be_16(sizeof(*ip) +
						    sizeof(*udp) + 18);
		ip->time_to_live = 64;
		ip->next_proto_id = IPPROTO_UDP;
		ip->src_addr = rte_cpu_to_be_32(0x0a000001 + i * 7919);
		ip->dst_addr = rte_cpu_to_be_32(0x0a010001);
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		udp = (struct rte_udp_hdr *)(ip + 1);
		udp->src_port = rte_cpu_to_be_16(1024 + i);
		udp->dst_port = rte_cpu_to_be_16(4789);
		udp->dgram_len = rte_cpu_to_be_16(sizeof(*udp) + 18);
		tx[i] = m;
	}
	TEST_ASSERT_EQUAL(send_all(port0, tx, N), N, "sent");
	got = recv_n(port1, NQ, rx, N, WAIT_MS, per_q);
	TEST_ASSERT_EQUAL(got, N, "received");
	free_pkts(rx, got);
	for (q = 0; q < NQ; q++) {
		printf("  rxq %u: %u packets\n", q, per_q[q]);
		if (per_q[q] > 0)
			used++;
	}
	TEST_ASSERT(used >= 2, "RSS used %u queue(s)", used);
	TEST_ASSERT_SUCCESS(rte_eth_stats_get(port1, &s), "stats");
	TEST_ASSERT_EQUAL(s.ipackets, N, "ipackets");
	for (q = 0; q < NQ; q++)
		TEST_ASSERT_EQUAL(s.q_ipackets[q], per_q[q], "q_ipackets[%u]",
				  q);
	return TEST_SUCCESS;
}

/* Groups with the two ports of the command line. */
static int
setup_pair(uint16_t nb_rxq1, uint16_t nb_rxd1, bool rss)
{
	if (port_by_name("net_vbr0", &port0) != 0 ||
	    port_by_name("net_vbr1", &port1) != 0) {
		printf("ports net_vbr0/net_vbr1 missing\n");
		return TEST_FAILED;
	}
	if (port_start(port0, 1, NB_RXD, false) != 0 ||
	    port_start(port1, nb_rxq1, nb_rxd1, rss) != 0)
		return TEST_FAILED;
	return TEST_SUCCESS;
}

static int
setup_traffic(void)
{
	return setup_pair(1, NB_RXD, false);
}

static int
setup_imissed(void)
{
	return setup_pair(1, 64, false);
}

static int
setup_rss(void)
{
	return setup_pair(4, 128, true);
}

static void
teardown_pair(void)
{
	rte_eth_dev_stop(port0);
	rte_eth_dev_stop(port1);
	rte_eth_dev_close(port0);
	rte_eth_dev_close(port1);
}

static const struct unit_test_suite suite_traffic = {
	.name = "vbr traffic",
	.setup = setup_traffic,
	.teardown = teardown_pair,
	.cases = {
		TEST_CASE(test_traffic_sizes),
		TEST_CASE(test_restart),
		TEST_CASE(test_traffic_sizes),
		TEST_CASES_END(),
	},
};

static const struct unit_test_suite suite_filter = {
	.name = "vbr filter",
	.setup = setup_traffic,
	.teardown = teardown_pair,
	.cases = {
		TEST_CASE(test_unicast_filter),
		TEST_CASES_END(),
	},
};

static const struct unit_test_suite suite_imissed = {
	.name = "vbr imissed",
	.setup = setup_imissed,
	.teardown = teardown_pair,
	.cases = {
		TEST_CASE(test_imissed),
		TEST_CASES_END(),
	},
};

static const struct unit_test_suite suite_rss = {
	.name = "vbr rss",
	.setup = setup_rss,
	.teardown = teardown_pair,
	.cases = {
		TEST_CASE(test_rss),
		TEST_CASES_END(),
	},
};

/*
 * Group "lifecycle": ports made and unmade at run time leak no mbuf and no
 * file descriptor.
 */
static int
one_cycle(bool close_first)
{
	struct rte_ether_addr dst;
	int ret;

	TEST_ASSERT_SUCCESS(rte_vdev_init("net_vbr0", "wire=pair:lc"), "init");
	TEST_ASSERT_SUCCESS(rte_vdev_init("net_vbr1", "wire=pair:lc"), "init");
	TEST_ASSERT_SUCCESS(port_by_name("net_vbr0", &port0), "port0");
	TEST_ASSERT_SUCCESS(port_by_name("net_vbr1", &port1), "port1");
	TEST_ASSERT_SUCCESS(port_start(port0, 1, NB_RXD, false), "start0");
	TEST_ASSERT_SUCCESS(port_start(port1, 1, NB_RXD, false), "start1");
	rte_eth_macaddr_get(port1, &dst);
	TEST_ASSERT_EQUAL(deliver_one(&dst, WAIT_MS), 1, "traffic");
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port0), "stop");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port0), "start");
	TEST_ASSERT_EQUAL(deliver_one(&dst, WAIT_MS), 1, "traffic");
	/* Frames left in flight and unpolled must be reclaimed too. */
	dst = foreign_mac;
	rte_eth_promiscuous_enable(port1);
	TEST_ASSERT_EQUAL(deliver_one(&dst, WAIT_MS), 1, "traffic");
	{
		struct rte_mbuf *m = make_pkt(&dst, port0, 1500, 0);

		TEST_ASSERT_EQUAL(send_all(port0, &m, 1), 1, "tx");
	}
	rte_delay_ms(20);
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port0), "stop");
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	if (close_first) {
		TEST_ASSERT_SUCCESS(rte_eth_dev_close(port0), "close");
		TEST_ASSERT_SUCCESS(rte_eth_dev_close(port1), "close");
	}
	ret = rte_vdev_uninit("net_vbr0");
	TEST_ASSERT_SUCCESS(ret, "uninit");
	ret = rte_vdev_uninit("net_vbr1");
	TEST_ASSERT_SUCCESS(ret, "uninit");
	TEST_ASSERT(!rte_eth_dev_is_valid_port(port0), "port0 still valid");
	return TEST_SUCCESS;
}

static int
test_lifecycle_no_leak(void)
{
	unsigned int in_use;
	int fds, i;

	/* A first cycle lets lazily made process-wide resources appear. */
	TEST_ASSERT_SUCCESS(one_cycle(true), "warm-up cycle");
	in_use = rte_mempool_in_use_count(mp);
	fds = count_fds();
	for (i = 0; i < 4; i++) {
		TEST_ASSERT_SUCCESS(one_cycle(i % 2 == 0), "cycle %d", i);
		TEST_ASSERT_EQUAL(rte_mempool_in_use_count(mp), in_use,
				  "mbufs in use after cycle %d", i);
		TEST_ASSERT_EQUAL(count_fds(), fds, "fds after cycle %d", i);
	}
	TEST_ASSERT_EQUAL(in_use, 0, "mbufs in use at all");
	return TEST_SUCCESS;
}

/* Each bad devargs string fails the probe and leaves nothing behind. */
static int
test_bad_devargs(void)
{
	static const char * const bad[] = {
		"",				/* neither dev nor wire */
		"foo=1,wire=loop",		/* unknown key */
		"dev=mlx5_0,wire=loop",		/* both */
		"wire=loop,mac=zz:zz",		/* malformed mac */
		"wire=loop,mac=01:00:5e:00:00:01", /* multicast mac */
		"wire=ether:eth0",		/* unknown wire kind */
		"wire=pair:",			/* no cable name */
		"wire=af_packet:vbrnosuch0",	/* no such interface */
		"wire=pair:full",		/* third end of a cable */
		"wire=loop,engine_cpu=abc",	/* bad cpu */
		"dev=vbr_no_such_dev",		/* no hardware device */
		"dev=x,engine_cpu=0",		/* engine_cpu with dev */
	};
	uint16_t before;
	unsigned int i;
	int fds;

	TEST_ASSERT_SUCCESS(rte_vdev_init("net_vbr7", "wire=pair:full"), "a");
	TEST_ASSERT_SUCCESS(rte_vdev_init("net_vbr8", "wire=pair:full"), "b");
	before = rte_eth_dev_count_avail();
	fds = count_fds();
	for (i = 0; i < RTE_DIM(bad); i++) {
		printf("  devargs '%s'\n", bad[i]);
		TEST_ASSERT(rte_vdev_init("net_vbr9", bad[i]) < 0,
			    "'%s' was accepted", bad[i]);
		TEST_ASSERT_EQUAL(rte_eth_dev_count_avail(), before,
				  "ports after '%s'", bad[i]);
	}
	TEST_ASSERT_EQUAL(count_fds(), fds, "fds after bad probes");
	/* The name is free again, and mac= is honoured. */
	TEST_ASSERT_SUCCESS(rte_vdev_init("net_vbr9",
					  "wire=loop,mac=02:11:22:33:44:55"),
			    "good devargs");
	{
		struct rte_ether_addr mac, want = { .addr_bytes =
			{ 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 } };
		uint16_t p;

		TEST_ASSERT_SUCCESS(port_by_name("net_vbr9", &p), "port");
		TEST_ASSERT_SUCCESS(rte_eth_macaddr_get(p, &mac), "mac");
		TEST_ASSERT(rte_is_same_ether_addr(&mac, &want), "mac=");
	}
	TEST_ASSERT_SUCCESS(rte_vdev_uninit("net_vbr9"), "uninit");
	TEST_ASSERT_SUCCESS(rte_vdev_uninit("net_vbr8"), "uninit");
	TEST_ASSERT_SUCCESS(rte_vdev_uninit("net_vbr7"), "uninit");
	return TEST_SUCCESS;
}

/* A loop wire sends a port's frames back to itself. */
static int
test_loop_wire(void)
{
	struct rte_ether_addr dst;
	struct rte_mbuf *m, *r;
	uint16_t p, got;

	TEST_ASSERT_SUCCESS(rte_vdev_init("net_vbr5", "wire=loop"), "init");
	TEST_ASSERT_SUCCESS(port_by_name("net_vbr5", &p), "port");
	TEST_ASSERT_SUCCESS(port_start(p, 1, NB_RXD, false), "start");
	rte_eth_macaddr_get(p, &dst);
	m = make_pkt(&dst, p, 3000, 5);
	TEST_ASSERT_NOT_NULL(m, "alloc");
	TEST_ASSERT_EQUAL(send_all(p, &m, 1), 1, "tx");
	got = recv_n(p, 1, &r, 1, WAIT_MS, NULL);
	TEST_ASSERT_EQUAL(got, 1, "looped back");
	TEST_ASSERT_EQUAL(r->pkt_len, 3000, "length");
	rte_pktmbuf_free(r);
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(p), "stop");
	TEST_ASSERT_SUCCESS(rte_eth_dev_close(p), "close");
	TEST_ASSERT_SUCCESS(rte_vdev_uninit("net_vbr5"), "uninit after close");
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite_lifecycle = {
	.name = "vbr lifecycle",
	.cases = {
		TEST_CASE(test_lifecycle_no_leak),
		TEST_CASE(test_loop_wire),
		TEST_CASES_END(),
	},
};

static const struct unit_test_suite suite_devargs = {
	.name = "vbr devargs",
	.cases = {
		TEST_CASE(test_bad_devargs),
		TEST_CASES_END(),
	},
};

int
main(int argc, char **argv)
{
	static const struct {
		const char *name;
		const struct unit_test_suite *suite;
		bool pair;
	} groups[] = {
		{ "traffic", &suite_traffic, true },
		{ "filter", &suite_filter, true },
		{ "imissed", &suite_imissed, true },
		{ "rss", &suite_rss, true },
		{ "lifecycle", &suite_lifecycle, false },
		{ "devargs", &suite_devargs, false },
	};
	char *eal[32];
	unsigned int g;
	int n = 0, ret;

	if (argc != 3) {
		fprintf(stderr, "usage: %s <librte_net_vbr.so> <group>\n",
			argv[0]);
		return 2;
	}
	for (g = 0; g < RTE_DIM(groups); g++)
		if (strcmp(argv[2], groups[g].name) == 0)
			break;
	if (g == RTE_DIM(groups)) {
		fprintf(stderr, "unknown group %s\n", argv[2]);
		return 2;
	}
	eal[n++] = argv[0];
	eal[n++] = (char *)"--no-huge";
	eal[n++] = (char *)"--no-shconf";
	eal[n++] = (char *)"--no-pci";
	eal[n++] = (char *)"-l";
	eal[n++] = (char *)"0";
	eal[n++] = (char *)"--log-level=pmd.net.vbr:info";
	eal[n++] = (char *)"-d";
	eal[n++] = argv[1];
	if (groups[g].pair) {
		eal[n++] = (char *)"--vdev";
		eal[n++] = (char *)"net_vbr0,wire=pair:c0";
		eal[n++] = (char *)"--vdev";
		eal[n++] = (char *)"net_vbr1,wire=pair:c0";
	}
	eal[n] = NULL;
	ret = rte_eal_init(n, eal);
	if (ret < 0) {
		printf("rte_eal_init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	mp = rte_pktmbuf_pool_create("vbr_test", NB_MBUF, 256, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (mp == NULL) {
		printf("mempool: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	ret = unit_test_suite_runner(groups[g].suite);
	rte_mempool_free(mp);
	rte_eal_cleanup();
	return ret;
}
