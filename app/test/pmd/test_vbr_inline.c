/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * progress=inline with several lcores: the ports' swverbs devices have no
 * engine thread; the lcores' own burst calls do their work.
 *
 *   mq        lcores 1-2 send on port 0 Tx queues 0-1, lcores 3-4 poll
 *             port 1 Rx queues 0-1 and 2-3 (RSS): every frame arrives
 *             once, on the queue the Toeplitz reference gives, and the
 *             counters are exact.
 *   bidir     both ports send and receive at once, one lcore per port and
 *             direction: each send needs the device of the other port,
 *             which another lcore holds at times (backpressure: the WQEs
 *             stay posted and go later); nothing is lost.
 *   lifecycle stop/start/close/reprobe of inline ports with traffic (run it
 *             under ASan for the leaks).
 *   rcu       a flow rule change on the main lcore finishes while an lcore
 *             that polled the port sleeps.
 *   devargs   both ends of a cable on one model, or the probe fails.
 *
 * EAL: --lcores 0@0,1@0,2@1,3@0,4@1: five lcores on the machine's two
 * CPUs (0 and 1, or CPU 0 twice on a one-CPU machine). No timing
 * assertion: deadlines only end a test that would hang.
 */

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_flow.h>
#include <rte_ip.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "test.h"
#include "vbr_test_port.h"

#define NB_MBUF 16383
#define NB_RXD 1024
#define NB_TXD 512
#define NQ_RX 4
#define NQ_TX 2
#define PER_SENDER 20000	/* frames each sender sends */
#define WINDOW 256		/* frames in flight at most, all queues */
#define DEADLINE_S 60		/* a hung test ends, it does not time */
#define RSS_KEY_LEN 40
#define BURST 32

static struct rte_mempool *mp;
static uint16_t port0, port1;

static const uint8_t rss_key[RSS_KEY_LEN] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
	0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
	0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

/* The frame id's layout: sender (2 bits), then the sender's index. */
#define ID_SHIFT 20
#define NB_ID (4u << ID_SHIFT)

struct run {
	/* written by senders */
	uint32_t sent[4];
	/* written by receivers */
	uint32_t recv_total;
	uint32_t wrong_queue;
	uint32_t bad_frame;
	uint32_t stop;
	uint16_t *seen;			/* per id: times received */
	uint16_t *queue_of;		/* per id: queue it came on */
	uint32_t per_queue[2][NQ_RX];	/* [port][queue] frames polled */
	uint16_t reta[2][512];
	uint16_t reta_size[2];
	uint64_t deadline;
};

static struct run run;

static bool
past_deadline(void)
{
	return rte_get_timer_cycles() > run.deadline;
}

/* UDP/IPv4 frame from port src to port dst with id in its addresses. */
static struct rte_mbuf *
frame(uint16_t src, uint16_t dst, uint32_t id)
{
	struct rte_ether_hdr *eh;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;
	struct rte_mbuf *m;
	uint32_t *tail;

	m = rte_pktmbuf_alloc(mp);
	if (m == NULL)
		return NULL;
	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, sizeof(*eh) +
		sizeof(*ip) + sizeof(*udp) + sizeof(*tail));
	if (eh == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	rte_eth_macaddr_get(src, &eh->src_addr);
	rte_eth_macaddr_get(dst, &eh->dst_addr);
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip = (struct rte_ipv4_hdr *)(eh + 1);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->total_length = rte_cpu_to_be_16(sizeof(*ip) + sizeof(*udp) +
					    sizeof(*tail));
	ip->src_addr = rte_cpu_to_be_32(0x0a000000u | (id * 2654435761u >> 8));
	ip->dst_addr = rte_cpu_to_be_32(0xc0a80000u | (id & 0xffff));
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp = (struct rte_udp_hdr *)(ip + 1);
	udp->src_port = rte_cpu_to_be_16((uint16_t)(1024 + (id >> 4)));
	udp->dst_port = rte_cpu_to_be_16(4789);
	udp->dgram_len = rte_cpu_to_be_16(sizeof(*udp) + sizeof(*tail));
	udp->dgram_cksum = 0;
	tail = (uint32_t *)(udp + 1);
	memcpy(tail, &id, sizeof(id));	/* not 4-byte aligned */
	return m;
}

/* The Rx queue the reference says port p puts a frame on. */
static uint16_t
ref_queue(unsigned int p, const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eh =
		rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_ipv4_hdr *ip = (const void *)(eh + 1);
	const struct rte_udp_hdr *udp = (const void *)(ip + 1);
	uint8_t in[12];
	uint32_t h;

	memcpy(in, &ip->src_addr, 4);
	memcpy(in + 4, &ip->dst_addr, 4);
	memcpy(in + 8, &udp->src_port, 2);
	memcpy(in + 10, &udp->dst_port, 2);
	h = vbr_test_toeplitz(rss_key, RSS_KEY_LEN, in, sizeof(in));
	return run.reta[p][h % run.reta_size[p]];
}

/* The id a frame carries, or UINT32_MAX if it is not one of ours. */
static uint32_t
frame_id(const struct rte_mbuf *m)
{
	uint32_t id;

	if (m->pkt_len != sizeof(struct rte_ether_hdr) +
	    sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr) + 4)
		return UINT32_MAX;
	memcpy(&id, rte_pktmbuf_mtod_offset(m, const uint8_t *,
					    m->pkt_len - 4), 4);
	return id < NB_ID ? id : UINT32_MAX;
}

static uint32_t
in_flight(void)
{
	uint32_t s = 0, i;

	for (i = 0; i < 4; i++)
		s += __atomic_load_n(&run.sent[i], __ATOMIC_ACQUIRE);
	return s - __atomic_load_n(&run.recv_total, __ATOMIC_ACQUIRE);
}

struct sender {
	uint16_t port, peer, queue;
	unsigned int idx;		/* 0-3: the id's top bits */
	unsigned int n;
};

struct receiver {
	uint16_t port;
	unsigned int p;			/* 0: port0, 1: port1 */
	uint16_t first, nq;
	uint32_t want;			/* frames all receivers expect */
};

static int
sender_main(void *arg)
{
	const struct sender *s = arg;
	struct rte_mbuf *b[BURST];
	unsigned int i = 0, k, n, sent;

	while (i < s->n && !past_deadline()) {
		if (in_flight() + BURST > WINDOW) {
			/* still polls its port: its CQ drives nothing else */
			rte_eth_tx_burst(s->port, s->queue, b, 0);
			continue;
		}
		n = RTE_MIN((unsigned int)BURST, s->n - i);
		for (k = 0; k < n; k++) {
			b[k] = frame(s->port, s->peer,
				     (s->idx << ID_SHIFT) | (i + k));
			if (b[k] == NULL)
				break;
		}
		n = k;
		sent = 0;
		while (sent < n && !past_deadline())
			sent += rte_eth_tx_burst(s->port, s->queue, b + sent,
						 (uint16_t)(n - sent));
		rte_pktmbuf_free_bulk(b + sent, n - sent);
		i += sent;
		__atomic_fetch_add(&run.sent[s->idx], sent, __ATOMIC_RELEASE);
	}
	return i == s->n ? 0 : -1;
}

static int
receiver_main(void *arg)
{
	const struct receiver *r = arg;
	struct rte_mbuf *b[BURST];
	uint16_t q, n, k;
	uint32_t id;

	while (!__atomic_load_n(&run.stop, __ATOMIC_ACQUIRE) &&
	       !past_deadline()) {
		for (q = r->first; q < r->first + r->nq; q++) {
			n = rte_eth_rx_burst(r->port, q, b, BURST);
			for (k = 0; k < n; k++) {
				id = frame_id(b[k]);
				if (id == UINT32_MAX) {
					__atomic_fetch_add(&run.bad_frame, 1,
							   __ATOMIC_RELAXED);
					continue;
				}
				run.seen[id]++;	/* one queue, one lcore */
				run.queue_of[id] = q;
				if (ref_queue(r->p, b[k]) != q)
					__atomic_fetch_add(&run.wrong_queue,
							   1,
							   __ATOMIC_RELAXED);
			}
			run.per_queue[r->p][q] += n;
			rte_pktmbuf_free_bulk(b, n);
			if (n > 0)
				__atomic_fetch_add(&run.recv_total, n,
						   __ATOMIC_RELEASE);
		}
	}
	return 0;
}

static int
port_setup(uint16_t port, uint16_t nrx, uint16_t ntx)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_rss_reta_entry64 reta[512 / RTE_ETH_RETA_GROUP_SIZE];
	struct rte_eth_dev_info info;
	unsigned int p = port == port0 ? 0 : 1, i;
	uint16_t q;

	conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
	conf.rx_adv_conf.rss_conf.rss_key = (uint8_t *)(uintptr_t)rss_key;
	conf.rx_adv_conf.rss_conf.rss_key_len = RSS_KEY_LEN;
	conf.rx_adv_conf.rss_conf.rss_hf = RTE_ETH_RSS_NONFRAG_IPV4_UDP;
	TEST_ASSERT_SUCCESS(rte_eth_dev_configure(port, nrx, ntx, &conf),
			    "configure %u", port);
	for (q = 0; q < nrx; q++)
		TEST_ASSERT_SUCCESS(rte_eth_rx_queue_setup(port, q, NB_RXD,
				    SOCKET_ID_ANY, NULL, mp), "rxq %u", q);
	for (q = 0; q < ntx; q++)
		TEST_ASSERT_SUCCESS(rte_eth_tx_queue_setup(port, q, NB_TXD,
				    SOCKET_ID_ANY, NULL), "txq %u", q);
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port), "start %u", port);
	TEST_ASSERT_SUCCESS(rte_eth_dev_info_get(port, &info), "info");
	TEST_ASSERT(info.reta_size > 0 && info.reta_size <= 512,
		    "reta size %u", info.reta_size);
	memset(reta, 0, sizeof(reta));
	for (i = 0; i < info.reta_size / RTE_ETH_RETA_GROUP_SIZE; i++)
		reta[i].mask = UINT64_MAX;
	TEST_ASSERT_SUCCESS(rte_eth_dev_rss_reta_query(port, reta,
			    info.reta_size), "reta query");
	for (i = 0; i < info.reta_size; i++)
		run.reta[p][i] = reta[i / RTE_ETH_RETA_GROUP_SIZE].
			reta[i % RTE_ETH_RETA_GROUP_SIZE];
	run.reta_size[p] = info.reta_size;
	return TEST_SUCCESS;
}

static int
ports_make(void)
{
	TEST_ASSERT_SUCCESS(rte_vdev_init("net_vbr0",
			    "wire=pair:inl,progress=inline"), "vdev 0");
	TEST_ASSERT_SUCCESS(rte_vdev_init("net_vbr1",
			    "wire=pair:inl,progress=inline"), "vdev 1");
	TEST_ASSERT_SUCCESS(vbr_test_pair_ports(&port0, &port1), "ports");
	return TEST_SUCCESS;
}

static void
ports_drop(void)
{
	rte_eth_dev_stop(port0);
	rte_eth_dev_stop(port1);
	rte_eth_dev_close(port0);
	rte_eth_dev_close(port1);
	rte_vdev_uninit("net_vbr0");
	rte_vdev_uninit("net_vbr1");
}

static int
run_reset(void)
{
	free(run.seen);
	free(run.queue_of);
	memset(&run, 0, sizeof(run));
	run.seen = calloc(NB_ID, sizeof(*run.seen));
	run.queue_of = calloc(NB_ID, sizeof(*run.queue_of));
	TEST_ASSERT(run.seen != NULL && run.queue_of != NULL, "calloc");
	run.deadline = rte_get_timer_cycles() + rte_get_timer_hz() *
		       DEADLINE_S;
	return TEST_SUCCESS;
}

/* Wait for the receivers to count want frames, then stop them. */
static void
wait_received(uint32_t want)
{
	while (__atomic_load_n(&run.recv_total, __ATOMIC_ACQUIRE) < want &&
	       !past_deadline())
		rte_delay_us_sleep(1000);
	/* a late duplicate would show in seen[] and the totals */
	rte_delay_us_sleep(20000);
	__atomic_store_n(&run.stop, 1, __ATOMIC_RELEASE);
}

/* Every id of senders [first, first + n) seen once. */
static int
check_once(unsigned int first, unsigned int n, unsigned int per)
{
	unsigned int s, i, missing = 0, dup = 0;

	for (s = first; s < first + n; s++)
		for (i = 0; i < per; i++) {
			uint16_t c = run.seen[(s << ID_SHIFT) | i];

			missing += c == 0;
			dup += c > 1;
		}
	TEST_ASSERT_EQUAL(missing, 0, "frames never received");
	TEST_ASSERT_EQUAL(dup, 0, "frames received twice");
	return TEST_SUCCESS;
}

static int
test_mq(void)
{
	static struct sender snd[NQ_TX];
	static struct receiver rcv[2];
	const unsigned int total = NQ_TX * PER_SENDER;
	struct rte_eth_stats s0, s1;
	unsigned int i, q;
	int ret = 0;

	TEST_ASSERT_SUCCESS(run_reset(), "reset");
	TEST_ASSERT_SUCCESS(ports_make(), "ports");
	TEST_ASSERT_SUCCESS(port_setup(port0, 1, NQ_TX), "port 0");
	TEST_ASSERT_SUCCESS(port_setup(port1, NQ_RX, 1), "port 1");
	for (i = 0; i < NQ_TX; i++)
		snd[i] = (struct sender){ .port = port0, .peer = port1,
					  .queue = i, .idx = i,
					  .n = PER_SENDER };
	for (i = 0; i < 2; i++)
		rcv[i] = (struct receiver){ .port = port1, .p = 1,
					    .first = 2 * i, .nq = 2 };
	rte_eal_remote_launch(receiver_main, &rcv[0], 3);
	rte_eal_remote_launch(receiver_main, &rcv[1], 4);
	rte_eal_remote_launch(sender_main, &snd[0], 1);
	rte_eal_remote_launch(sender_main, &snd[1], 2);
	ret |= rte_eal_wait_lcore(1);
	ret |= rte_eal_wait_lcore(2);
	wait_received(total);
	rte_eal_wait_lcore(3);
	rte_eal_wait_lcore(4);
	TEST_ASSERT_EQUAL(ret, 0, "a sender did not send all its frames");
	printf("  received %u of %u, wrong queue %u, per queue %u %u %u %u\n",
	       run.recv_total, total, run.wrong_queue, run.per_queue[1][0],
	       run.per_queue[1][1], run.per_queue[1][2], run.per_queue[1][3]);
	TEST_ASSERT_EQUAL(run.bad_frame, 0, "frames not ours");
	TEST_ASSERT_SUCCESS(check_once(0, NQ_TX, PER_SENDER), "once");
	TEST_ASSERT_EQUAL(run.wrong_queue, 0, "frames on another queue than "
			  "the Toeplitz reference's");
	TEST_ASSERT_SUCCESS(rte_eth_stats_get(port0, &s0), "stats 0");
	TEST_ASSERT_SUCCESS(rte_eth_stats_get(port1, &s1), "stats 1");
	TEST_ASSERT_EQUAL(s0.opackets, total, "port 0 opackets");
	TEST_ASSERT_EQUAL(s0.oerrors, 0, "port 0 oerrors");
	TEST_ASSERT_EQUAL(s1.ipackets, total, "port 1 ipackets");
	TEST_ASSERT_EQUAL(s1.imissed, 0, "port 1 imissed");
	TEST_ASSERT_EQUAL(s1.ierrors, 0, "port 1 ierrors");
	for (q = 0; q < NQ_RX; q++) {
		TEST_ASSERT_EQUAL(vbr_test_qstat(port1, &s1,
						 VBR_TEST_Q_IPACKETS, q),
				  run.per_queue[1][q], "port 1 q_ipackets[%u]",
				  q);
		TEST_ASSERT(run.per_queue[1][q] > 0, "queue %u got none", q);
	}
	for (q = 0; q < NQ_TX; q++)
		TEST_ASSERT_EQUAL(vbr_test_qstat(port0, &s0,
						 VBR_TEST_Q_OPACKETS, q),
				  PER_SENDER, "port 0 q_opackets[%u]", q);
	ports_drop();
	return TEST_SUCCESS;
}

static int
test_bidir(void)
{
	static struct sender snd[2];
	static struct receiver rcv[2];
	const unsigned int per = PER_SENDER;
	struct rte_eth_stats s0, s1;
	int ret = 0;

	TEST_ASSERT_SUCCESS(run_reset(), "reset");
	TEST_ASSERT_SUCCESS(ports_make(), "ports");
	TEST_ASSERT_SUCCESS(port_setup(port0, 2, 1), "port 0");
	TEST_ASSERT_SUCCESS(port_setup(port1, 2, 1), "port 1");
	/* sender ids 0: port 0 -> 1, 1: port 1 -> 0 */
	snd[0] = (struct sender){ .port = port0, .peer = port1, .queue = 0,
				  .idx = 0, .n = per };
	snd[1] = (struct sender){ .port = port1, .peer = port0, .queue = 0,
				  .idx = 1, .n = per };
	rcv[0] = (struct receiver){ .port = port1, .p = 1, .first = 0,
				    .nq = 2 };
	rcv[1] = (struct receiver){ .port = port0, .p = 0, .first = 0,
				    .nq = 2 };
	rte_eal_remote_launch(receiver_main, &rcv[0], 3);
	rte_eal_remote_launch(receiver_main, &rcv[1], 4);
	rte_eal_remote_launch(sender_main, &snd[0], 1);
	rte_eal_remote_launch(sender_main, &snd[1], 2);
	ret |= rte_eal_wait_lcore(1);
	ret |= rte_eal_wait_lcore(2);
	wait_received(2 * per);
	rte_eal_wait_lcore(3);
	rte_eal_wait_lcore(4);
	TEST_ASSERT_EQUAL(ret, 0, "a sender did not send all its frames");
	printf("  received %u of %u\n", run.recv_total, 2 * per);
	TEST_ASSERT_EQUAL(run.bad_frame, 0, "frames not ours");
	TEST_ASSERT_SUCCESS(check_once(0, 2, per), "once");
	TEST_ASSERT_EQUAL(run.wrong_queue, 0, "wrong queue");
	TEST_ASSERT_SUCCESS(rte_eth_stats_get(port0, &s0), "stats 0");
	TEST_ASSERT_SUCCESS(rte_eth_stats_get(port1, &s1), "stats 1");
	TEST_ASSERT_EQUAL(s0.opackets, per, "port 0 opackets");
	TEST_ASSERT_EQUAL(s1.opackets, per, "port 1 opackets");
	TEST_ASSERT_EQUAL(s0.ipackets, per, "port 0 ipackets");
	TEST_ASSERT_EQUAL(s1.ipackets, per, "port 1 ipackets");
	TEST_ASSERT_EQUAL(s0.imissed + s1.imissed, 0, "imissed");
	ports_drop();
	return TEST_SUCCESS;
}

/* Send n frames port0 -> port1 from this lcore and get them back. */
static int
roundtrip(unsigned int n, uint32_t base)
{
	struct rte_mbuf *b[BURST];
	unsigned int got = 0, sent = 0, k, m;
	uint16_t q, r;

	while (got < n && !past_deadline()) {
		if (sent < n) {
			m = RTE_MIN((unsigned int)BURST, n - sent);
			for (k = 0; k < m; k++) {
				b[k] = frame(port0, port1, base + sent + k);
				TEST_ASSERT_NOT_NULL(b[k], "alloc");
			}
			k = rte_eth_tx_burst(port0, 0, b, (uint16_t)m);
			rte_pktmbuf_free_bulk(b + k, m - k);
			sent += k;
		}
		for (q = 0; q < 2; q++) {
			r = rte_eth_rx_burst(port1, q, b, BURST);
			got += r;
			rte_pktmbuf_free_bulk(b, r);
		}
	}
	TEST_ASSERT_EQUAL(got, n, "received");
	return TEST_SUCCESS;
}

/* Wait (bounded) for a port's link to show status. */
static int
wait_link(uint16_t port, uint16_t status)
{
	struct rte_eth_link link;

	while (!past_deadline()) {
		if (rte_eth_link_get_nowait(port, &link) == 0 &&
		    link.link_status == status)
			return 0;
		rte_delay_us_sleep(10000);
	}
	return -1;
}

static int
test_lifecycle(void)
{
	unsigned int round;

	TEST_ASSERT_SUCCESS(run_reset(), "reset");
	for (round = 0; round < 3; round++) {
		TEST_ASSERT_SUCCESS(ports_make(), "probe, round %u", round);
		TEST_ASSERT_SUCCESS(port_setup(port0, 1, 1), "port 0");
		TEST_ASSERT_SUCCESS(port_setup(port1, 2, 1), "port 1");
		TEST_ASSERT_SUCCESS(wait_link(port0, RTE_ETH_LINK_UP), "up");
		TEST_ASSERT_SUCCESS(roundtrip(1000, 0), "traffic");
		/* stop and start, traffic again */
		TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop 1");
		TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port0), "stop 0");
		TEST_ASSERT_SUCCESS(rte_eth_dev_start(port0), "start 0");
		TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start 1");
		TEST_ASSERT_SUCCESS(roundtrip(1000, 1000), "after restart");
		/* one end goes away: the other's link goes down */
		TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop 1");
		TEST_ASSERT_SUCCESS(rte_eth_dev_close(port1), "close 1");
		TEST_ASSERT_SUCCESS(rte_vdev_uninit("net_vbr1"), "uninit 1");
		TEST_ASSERT_SUCCESS(wait_link(port0, RTE_ETH_LINK_DOWN),
				    "link of the end left");
		TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port0), "stop 0");
		TEST_ASSERT_SUCCESS(rte_eth_dev_close(port0), "close 0");
		TEST_ASSERT_SUCCESS(rte_vdev_uninit("net_vbr0"), "uninit 0");
	}
	return TEST_SUCCESS;
}

/*
 * The rcu group: lcore 3 polls port 1 until it got its frames, then
 * sleeps without a call; the control path meanwhile changes rules (enough
 * to free them after a grace period) and restarts port 0 (which waits for
 * one): it must not wait for the sleeping lcore.
 */
#define RCU_RULES 5000		/* more than swverbs' retire batch */

static uint32_t rcu_phase;	/* 1: the reader sleeps, 2: it may end */

static int
rcu_reader(void *arg)
{
	struct rte_mbuf *b[BURST];
	unsigned int got = 0;
	uint16_t q, n;

	(void)arg;
	while (got < 100 && !past_deadline())
		for (q = 0; q < 2; q++) {
			n = rte_eth_rx_burst(port1, q, b, BURST);
			got += n;
			rte_pktmbuf_free_bulk(b, n);
		}
	__atomic_store_n(&rcu_phase, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&rcu_phase, __ATOMIC_ACQUIRE) == 1 &&
	       !past_deadline())
		rte_delay_us_sleep(1000);	/* no call on any port */
	return got == 100 ? 0 : -1;
}

static uint32_t rcu_done;
static int rcu_result;

/* The control path's work, on a thread of its own (it may hang). */
static void *
rcu_control(void *arg)
{
	struct rte_flow_attr attr = { .ingress = 1 };
	struct rte_flow_item_ipv4 spec = { 0 }, mask = { 0 };
	struct rte_flow_item pattern[] = {
		{ .type = RTE_FLOW_ITEM_TYPE_ETH },
		{ .type = RTE_FLOW_ITEM_TYPE_IPV4, .spec = &spec,
		  .mask = &mask },
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	struct rte_flow_action_queue queue = { .index = 1 };
	struct rte_flow_action actions[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &queue },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	struct rte_flow_error err;
	struct rte_flow *f;
	unsigned int i;

	(void)arg;
	mask.hdr.dst_addr = RTE_BE32(0xffffffff);
	rcu_result = -1;
	for (i = 0; i < RCU_RULES; i++) {
		spec.hdr.dst_addr = rte_cpu_to_be_32(0x0b000000u + i);
		f = rte_flow_create(port1, &attr, pattern, actions, &err);
		if (f == NULL) {
			printf("rule %u: %s\n", i, err.message != NULL ?
			       err.message : "no message");
			goto out;
		}
		if (rte_flow_destroy(port1, f, &err) != 0)
			goto out;
	}
	if (rte_eth_dev_stop(port0) != 0 || rte_eth_dev_start(port0) != 0)
		goto out;
	rcu_result = 0;
out:
	__atomic_store_n(&rcu_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int
test_rcu(void)
{
	struct rte_mbuf *b[BURST];
	unsigned int sent = 0, k;
	pthread_t th;

	TEST_ASSERT_SUCCESS(run_reset(), "reset");
	TEST_ASSERT_SUCCESS(ports_make(), "ports");
	TEST_ASSERT_SUCCESS(port_setup(port0, 1, 1), "port 0");
	TEST_ASSERT_SUCCESS(port_setup(port1, 2, 1), "port 1");
	rcu_phase = 0;
	rcu_done = 0;
	rte_eal_remote_launch(rcu_reader, NULL, 3);
	while (sent < 100 && !past_deadline()) {
		for (k = 0; k < 10; k++) {
			b[k] = frame(port0, port1, sent + k);
			TEST_ASSERT_NOT_NULL(b[k], "alloc");
		}
		k = rte_eth_tx_burst(port0, 0, b, 10);
		rte_pktmbuf_free_bulk(b + k, 10 - k);
		sent += k;
	}
	while (__atomic_load_n(&rcu_phase, __ATOMIC_ACQUIRE) != 1 &&
	       !past_deadline())
		rte_delay_us_sleep(1000);
	TEST_ASSERT_EQUAL(rcu_phase, 1, "the reader got its frames");
	TEST_ASSERT_SUCCESS(pthread_create(&th, NULL, rcu_control, NULL),
			    "thread");
	while (!__atomic_load_n(&rcu_done, __ATOMIC_ACQUIRE) &&
	       !past_deadline())
		rte_delay_us_sleep(1000);
	if (!__atomic_load_n(&rcu_done, __ATOMIC_ACQUIRE)) {
		printf("the rule changes wait for the sleeping lcore\n");
		fflush(stdout);
		_exit(1);	/* the control thread hangs in a grace period */
	}
	pthread_join(th, NULL);
	TEST_ASSERT_EQUAL(rcu_result, 0, "rule changes and port restart");
	__atomic_store_n(&rcu_phase, 2, __ATOMIC_RELEASE);
	TEST_ASSERT_EQUAL(rte_eal_wait_lcore(3), 0, "reader");
	ports_drop();
	return TEST_SUCCESS;
}

/*
 * The ring sizes a port suggests (dev_info), which testpmd takes without
 * --rxd/--txd: 256, the mlx5 PMD's for up to two queues, within the limits.
 */
static int
check_default_rings(const char *name)
{
	struct rte_eth_dev_info info;
	uint16_t port;

	TEST_ASSERT_SUCCESS(rte_eth_dev_get_port_by_name(name, &port), "%s",
			    name);
	TEST_ASSERT_SUCCESS(rte_eth_dev_info_get(port, &info), "dev_info");
	TEST_ASSERT_EQUAL(info.default_rxportconf.ring_size, 256,
			  "default Rx ring %u", info.default_rxportconf.ring_size);
	TEST_ASSERT_EQUAL(info.default_txportconf.ring_size, 256,
			  "default Tx ring %u", info.default_txportconf.ring_size);
	TEST_ASSERT(info.rx_desc_lim.nb_min <= 256 &&
		    info.rx_desc_lim.nb_max >= 256 &&
		    info.tx_desc_lim.nb_min <= 256 &&
		    info.tx_desc_lim.nb_max >= 256,
		    "256 outside the descriptor limits");
	return TEST_SUCCESS;
}

/*
 * The ends of a cable run one model: an inline end and a thread end are
 * refused at probe (the second one); engine_cpu= belongs to thread. No
 * progress= is inline, the default; engine_cpu= alone is thread.
 */
static int
test_devargs(void)
{
	TEST_ASSERT_SUCCESS(rte_vdev_init("net_vbr0",
			    "wire=pair:inl-x,progress=inline"), "inline end");
	TEST_ASSERT_SUCCESS(check_default_rings("net_vbr0"), "ring sizes");
	TEST_ASSERT(rte_vdev_init("net_vbr1",
				  "wire=pair:inl-x,progress=thread") != 0,
		    "a thread end joined an inline end's cable");
	TEST_ASSERT(rte_vdev_init("net_vbr1", "wire=pair:inl-x,engine_cpu=0")
		    != 0, "engine_cpu= alone (thread) joined an inline cable");
	TEST_ASSERT(rte_vdev_init("net_vbr1",
				  "wire=pair:inl-x,progress=service") != 0,
		    "a service end joined an inline end's cable");
	TEST_ASSERT_SUCCESS(rte_vdev_init("net_vbr1", "wire=pair:inl-x"),
			    "a default (inline) peer");
	TEST_ASSERT_SUCCESS(rte_vdev_uninit("net_vbr1"), "uninit 1");
	TEST_ASSERT_SUCCESS(rte_vdev_uninit("net_vbr0"), "uninit 0");
	TEST_ASSERT_SUCCESS(rte_vdev_init("net_vbr0",
			    "wire=pair:inl-y,engine_cpu=0"), "engine_cpu= end");
	TEST_ASSERT(rte_vdev_init("net_vbr1", "wire=pair:inl-y") != 0,
		    "a default (inline) end joined a thread end's cable");
	TEST_ASSERT_SUCCESS(rte_vdev_init("net_vbr1",
			    "wire=pair:inl-y,progress=thread"), "thread peer");
	TEST_ASSERT_SUCCESS(rte_vdev_uninit("net_vbr1"), "uninit 1");
	TEST_ASSERT_SUCCESS(rte_vdev_uninit("net_vbr0"), "uninit 0");
	TEST_ASSERT(rte_vdev_init("net_vbr0",
				  "wire=loop,progress=inline,engine_cpu=0") != 0,
		    "engine_cpu= with progress=inline");
	return TEST_SUCCESS;
}

/* A suite of one case, a group of its own. */
#define INL_SUITE(var, title, fn) \
	static const struct unit_test_suite var = { \
		.name = title, \
		.cases = { TEST_CASE(fn), TEST_CASES_END() }, \
	}

INL_SUITE(suite_devargs, "vbr inline devargs", test_devargs);
INL_SUITE(suite_mq, "vbr inline mq", test_mq);
INL_SUITE(suite_bidir, "vbr inline bidir", test_bidir);
INL_SUITE(suite_lifecycle, "vbr inline lifecycle", test_lifecycle);
INL_SUITE(suite_rcu, "vbr inline rcu", test_rcu);

int
main(int argc, char **argv)
{
	static const struct {
		const char *name;
		const struct unit_test_suite *suite;
	} groups[] = {
		{ "mq", &suite_mq },
		{ "bidir", &suite_bidir },
		{ "lifecycle", &suite_lifecycle },
		{ "rcu", &suite_rcu },
		{ "devargs", &suite_devargs },
	};
	char prefix[64];
	char *eal[16];
	unsigned int g;
	int n = 0, ret;

	ret = VBR_TEST_GROUP(argc, argv, groups);
	if (ret < 0)
		return 2;
	g = (unsigned int)ret;
	if (vbr_test_dev() != NULL) {
		printf("SKIP: progress=inline is a swverbs model (VBR_TEST_DEV "
		       "set)\n");
		return 77;
	}
	snprintf(prefix, sizeof(prefix), "--file-prefix=vbr-inl-%d",
		 (int)getpid());
	eal[n++] = argv[0];
	eal[n++] = (char *)(uintptr_t)"--no-huge";
	eal[n++] = (char *)(uintptr_t)"--no-pci";
	eal[n++] = (char *)(uintptr_t)"-m";
	eal[n++] = (char *)(uintptr_t)"256";
	eal[n++] = prefix;
	eal[n++] = (char *)(uintptr_t)"--lcores";
	eal[n++] = (char *)(uintptr_t)(sysconf(_SC_NPROCESSORS_ONLN) > 1 ?
		"0@0,1@0,2@1,3@0,4@1" : "0@0,1@0,2@0,3@0,4@0");
	eal[n++] = (char *)(uintptr_t)"-d";
	eal[n++] = argv[1];
	eal[n] = NULL;
	if (rte_eal_init(n, eal) < 0) {
		printf("rte_eal_init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	mp = vbr_test_pool("vbr_inl", NB_MBUF);
	if (mp == NULL)
		return 1;
	ret = unit_test_suite_runner(groups[g].suite);
	free(run.seen);
	free(run.queue_of);
	vbr_test_fini(mp);
	return ret;
}
