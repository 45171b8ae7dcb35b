/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Queue operations and Rx interrupts through ethdev: queue info, burst
 * modes, firmware version, descriptor status and queue count; Rx and Tx
 * queue stop/start under traffic (every mbuf back in its pool, frames
 * resume, the stopped queue's frames counted in imissed); deferred start;
 * an Rx interrupt waking a thread asleep in rte_epoll_wait(), as
 * l3fwd-power sleeps; get_monitor_addr's condition.
 *
 * Two ports on a pair wire, made here with the model VBR_TEST_PROGRESS
 * names when it takes Rx interrupts (thread, service), else (inline, the
 * default) with progress=thread: Rx interrupts need a device that runs
 * while its user sleeps; or on VBR_TEST_DEV and VBR_TEST_DEV_PEER (a NIC,
 * whose completion channels wake the sleeper: dev=, no progress model).
 * On swverbs, an inline port refuses Rx interrupts (EOPNOTSUPP) at queue
 * setup.
 */

#include <pthread.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_cpuflags.h>
#include <rte_epoll.h>
#include <rte_power_intrinsics.h>

#include "vbr_test_port.h"

#define NB_DESC 64
#define NB_MBUF 2048
#define FLEN 96

static struct rte_mempool *mp;
static uint16_t p0, p1;
static struct rte_ether_addr mac0, mac1;

/* Send n frames from port 1 to port 0. */
static int
send_to_p0(unsigned int n)
{
	struct rte_mbuf *pkts[64];
	unsigned int i;

	if (n > RTE_DIM(pkts))
		return -1;
	for (i = 0; i < n; i++) {
		pkts[i] = vbr_test_udp4(mp, &mac0, &mac1, 0x0a000001,
					0x0a000002, 1000 + i, 2000, FLEN);
		if (pkts[i] == NULL)
			return -1;
	}
	if (vbr_test_tx_all(p1, pkts, n, 2000) != n) {
		printf("port 1 sent fewer than %u\n", n);
		return -1;
	}
	return 0;
}

/* Receive up to n frames on port 0 queue 0 within 2 s; freed. */
static unsigned int
recv_p0(unsigned int n)
{
	uint64_t end = rte_get_timer_cycles() + 2 * rte_get_timer_hz();
	struct rte_mbuf *pkts[64];
	unsigned int got = 0;

	while (got < n && rte_get_timer_cycles() < end) {
		uint16_t k = rte_eth_rx_burst(p0, 0, pkts,
					      RTE_MIN(n - got, 64u));

		rte_pktmbuf_free_bulk(pkts, k);
		got += k;
		if (k == 0)
			rte_delay_us_sleep(100);
	}
	return got;
}

/* Wait until port 0's imissed reached v (2 s at most). */
static uint64_t
wait_imissed(uint64_t v)
{
	uint64_t end = rte_get_timer_cycles() + 2 * rte_get_timer_hz();
	struct rte_eth_stats st;

	do {
		if (rte_eth_stats_get(p0, &st) != 0)
			return 0;
		if (st.imissed >= v)
			break;
		rte_delay_us_sleep(1000);
	} while (rte_get_timer_cycles() < end);
	return st.imissed;
}

/*
 * Whether the ports' CQs can be looked into without polling them: not on
 * a NIC through libibverbs (backend (a) has no peek: queue count,
 * descriptor status and get_monitor_addr are -ENOTSUP there, checked).
 */
static bool
can_peek(void)
{
	return vbr_test_dev() == NULL;
}

/*
 * Wait until port 0 queue 0 holds n frames not polled (2 s at most).
 * Without a peek (can_peek()): give the frames 200 ms to arrive and
 * return n; the cases that use it still hold when a frame comes later.
 */
static int
wait_count(int n)
{
	uint64_t end = rte_get_timer_cycles() + 2 * rte_get_timer_hz();
	int c;

	if (!can_peek()) {
		TEST_ASSERT_EQUAL(rte_eth_rx_queue_count(p0, 0), -ENOTSUP,
				  "queue count without a CQ peek");
		rte_delay_us_sleep(200 * 1000);
		return n;
	}
	do {
		c = rte_eth_rx_queue_count(p0, 0);
		if (c >= n)
			break;
		rte_delay_us_sleep(100);
	} while (rte_get_timer_cycles() < end);
	return c;
}

/* Free what port 1's Tx queue still holds (sent, completion not seen). */
static int
flush_p1(void)
{
	if (rte_eth_dev_tx_queue_stop(p1, 0) != 0)
		return -1;
	return rte_eth_dev_tx_queue_start(p1, 0);
}

static int
setup_ports(uint32_t rxq_intr)
{
	struct rte_eth_conf conf = { 0 };

	/* A failed case may have left them started. */
	rte_eth_dev_stop(p0);
	rte_eth_dev_stop(p1);
	conf.intr_conf.rxq = rxq_intr;
	if (vbr_test_port_config(p0, &conf, 1, NB_DESC, NB_DESC, mp) != 0 ||
	    vbr_test_port_config(p1, &conf, 1, NB_DESC, NB_DESC, mp) != 0)
		return -1;
	if (rte_eth_dev_start(p0) != 0 || rte_eth_dev_start(p1) != 0)
		return -1;
	rte_eth_macaddr_get(p0, &mac0);
	rte_eth_macaddr_get(p1, &mac1);
	return 0;
}

static void
stop_ports(void)
{
	rte_eth_dev_stop(p0);
	rte_eth_dev_stop(p1);
}

static int
test_info(void)
{
	struct rte_eth_rxq_info rxi;
	struct rte_eth_txq_info txi;
	struct rte_eth_burst_mode bm;
	char fw[64];
	int n;

	TEST_ASSERT_SUCCESS(setup_ports(0), "");
	TEST_ASSERT_SUCCESS(rte_eth_rx_queue_info_get(p0, 0, &rxi), "");
	TEST_ASSERT_EQUAL(rxi.nb_desc, NB_DESC, "RX desc");
	TEST_ASSERT(rxi.mp == mp, "pool");
	TEST_ASSERT_EQUAL(rxi.scattered_rx, 0, "");
	TEST_ASSERT_EQUAL(rxi.rx_buf_size,
			  RTE_MBUF_DEFAULT_BUF_SIZE - RTE_PKTMBUF_HEADROOM, "");
	TEST_ASSERT_EQUAL(rxi.queue_state, RTE_ETH_QUEUE_STATE_STARTED, "");
	TEST_ASSERT_SUCCESS(rte_eth_tx_queue_info_get(p0, 0, &txi), "");
	TEST_ASSERT_EQUAL(txi.nb_desc, NB_DESC, "TX desc");
	TEST_ASSERT_EQUAL(txi.queue_state, RTE_ETH_QUEUE_STATE_STARTED, "");
	TEST_ASSERT_SUCCESS(rte_eth_rx_burst_mode_get(p0, 0, &bm), "");
	TEST_ASSERT(strstr(bm.info, "Scalar") != NULL, "%s", bm.info);
	TEST_ASSERT_SUCCESS(rte_eth_tx_burst_mode_get(p0, 0, &bm), "");
	TEST_ASSERT(strstr(bm.info, "Scalar") != NULL, "%s", bm.info);
	TEST_ASSERT_SUCCESS(rte_eth_dev_fw_version_get(p0, fw, sizeof(fw)),
			    "");
	printf("fw_version: %s\n", fw);
	TEST_ASSERT(strncmp(fw, "swverbs ", 8) == 0, "%s", fw);
	/* Too short a buffer: the size needed. */
	n = (int)strlen(fw) + 1;
	TEST_ASSERT_EQUAL(rte_eth_dev_fw_version_get(p0, fw, 4), n, "");
	stop_ports();
	return TEST_SUCCESS;
}

static int
test_desc_status(void)
{
	int i, full;

	TEST_ASSERT_SUCCESS(setup_ports(0), "");
	if (!can_peek()) {
		/* No CQ peek through libibverbs: refused, said so. */
		printf("no CQ peek (libibverbs): Rx queue count and "
		       "descriptor status are ENOTSUP\n");
		TEST_ASSERT_EQUAL(rte_eth_rx_queue_count(p0, 0), -ENOTSUP,
				  "");
		TEST_ASSERT_EQUAL(rte_eth_rx_descriptor_status(p0, 0, 0),
				  -ENOTSUP, "");
		TEST_ASSERT_SUCCESS(send_to_p0(5), "");
		TEST_ASSERT_EQUAL(recv_p0(5), 5, "");
	} else {
		TEST_ASSERT_EQUAL(rte_eth_rx_queue_count(p0, 0), 0, "");
		TEST_ASSERT_EQUAL(rte_eth_rx_descriptor_status(p0, 0, 0),
				  RTE_ETH_RX_DESC_AVAIL, "");
		TEST_ASSERT_EQUAL(rte_eth_rx_descriptor_status(p0, 0,
							       NB_DESC),
				  -EINVAL, "");
		TEST_ASSERT_SUCCESS(send_to_p0(5), "");
		TEST_ASSERT_EQUAL(wait_count(5), 5, "frames waiting");
		for (i = 0; i < 5; i++)
			TEST_ASSERT_EQUAL(rte_eth_rx_descriptor_status(p0, 0,
								       i),
					  RTE_ETH_RX_DESC_DONE, "slot %d", i);
		TEST_ASSERT_EQUAL(rte_eth_rx_descriptor_status(p0, 0, 5),
				  RTE_ETH_RX_DESC_AVAIL, "");
		TEST_ASSERT_EQUAL(recv_p0(5), 5, "");
		TEST_ASSERT_EQUAL(rte_eth_rx_queue_count(p0, 0), 0, "");
	}
	/*
	 * Tx: the free slots first (DONE), then the sends not known to be
	 * complete (FULL: sends are signalled every few WQEs), at most the 5.
	 */
	full = 0;
	for (i = 0; i < NB_DESC; i++) {
		int st = rte_eth_tx_descriptor_status(p1, 0, i);

		TEST_ASSERT(st == RTE_ETH_TX_DESC_DONE ||
			    st == RTE_ETH_TX_DESC_FULL, "slot %d: %d", i, st);
		if (st == RTE_ETH_TX_DESC_FULL)
			full++;
		else
			TEST_ASSERT_EQUAL(full, 0, "DONE after FULL at %d", i);
	}
	TEST_ASSERT(full <= 5, "%d in flight", full);
	TEST_ASSERT_EQUAL(rte_eth_tx_descriptor_status(p1, 0, NB_DESC),
			  -EINVAL, "");
	/* A stopped Tx queue: what it held was freed. */
	TEST_ASSERT_SUCCESS(rte_eth_dev_tx_queue_stop(p1, 0), "");
	TEST_ASSERT_EQUAL(rte_eth_tx_descriptor_status(p1, 0, 0),
			  RTE_ETH_TX_DESC_DONE, "");
	TEST_ASSERT_SUCCESS(rte_eth_dev_tx_queue_start(p1, 0), "");
	stop_ports();
	return TEST_SUCCESS;
}

static int
test_rxq_stop_start(void)
{
	struct rte_eth_rxq_info rxi;
	unsigned int before, stopped, round;
	struct rte_eth_stats st;
	struct rte_mbuf *m;
	uint64_t missed;

	TEST_ASSERT_SUCCESS(setup_ports(0), "");
	TEST_ASSERT_SUCCESS(send_to_p0(16), "");
	TEST_ASSERT_EQUAL(recv_p0(16), 16, "before the stop");
	for (round = 0; round < 3; round++) {
		TEST_ASSERT_SUCCESS(flush_p1(), "");
		before = rte_mempool_in_use_count(mp);
		TEST_ASSERT_SUCCESS(rte_eth_dev_rx_queue_stop(p0, 0), "");
		stopped = rte_mempool_in_use_count(mp);
		/* Every posted buffer back in the pool. */
		TEST_ASSERT_EQUAL(before - stopped, NB_DESC,
				  "mbufs returned by the stop");
		TEST_ASSERT_SUCCESS(rte_eth_rx_queue_info_get(p0, 0, &rxi),
				    "");
		TEST_ASSERT_EQUAL(rxi.queue_state,
				  RTE_ETH_QUEUE_STATE_STOPPED, "");
		TEST_ASSERT_EQUAL(rte_eth_rx_descriptor_status(p0, 0, 0),
				  can_peek() ? RTE_ETH_RX_DESC_UNAVAIL :
				  -ENOTSUP, "");
		/* Frames to a stopped queue: dropped, counted. */
		TEST_ASSERT_SUCCESS(rte_eth_stats_get(p0, &st), "");
		missed = st.imissed;
		TEST_ASSERT_SUCCESS(send_to_p0(8), "");
		TEST_ASSERT_EQUAL(wait_imissed(missed + 8), missed + 8,
				  "frames to the stopped queue in imissed");
		TEST_ASSERT_SUCCESS(flush_p1(), "");
		TEST_ASSERT_EQUAL(rte_mempool_in_use_count(mp), stopped,
				  "a stopped queue holds no mbuf");
		TEST_ASSERT_SUCCESS(rte_eth_dev_rx_queue_start(p0, 0), "");
		TEST_ASSERT_EQUAL(rte_mempool_in_use_count(mp), before,
				  "the start posts as many");
		/* Frames resume. */
		TEST_ASSERT_SUCCESS(send_to_p0(16), "");
		TEST_ASSERT_EQUAL(recv_p0(16), 16, "after the start");
	}
	/* Tx stop: a burst takes no mbuf. Start: the sends resume. */
	TEST_ASSERT_SUCCESS(rte_eth_dev_tx_queue_stop(p1, 0), "");
	m = vbr_test_udp4(mp, &mac0, &mac1, 1, 2, 3, 4, FLEN);
	TEST_ASSERT_NOT_NULL(m, "");
	before = rte_mempool_in_use_count(mp);
	TEST_ASSERT_EQUAL(rte_eth_tx_burst(p1, 0, &m, 1), 0,
			  "a stopped Tx queue took the mbuf");
	TEST_ASSERT_EQUAL(rte_mempool_in_use_count(mp), before, "");
	rte_pktmbuf_free(m);
	TEST_ASSERT_SUCCESS(rte_eth_dev_tx_queue_start(p1, 0), "");
	TEST_ASSERT_SUCCESS(send_to_p0(16), "");
	TEST_ASSERT_EQUAL(recv_p0(16), 16, "after the Tx restart");
	/* A stopped queue stays so across a port stop and start? No: */
	TEST_ASSERT_SUCCESS(rte_eth_dev_rx_queue_stop(p0, 0), "");
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(p0), "");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(p0), "");
	TEST_ASSERT_SUCCESS(send_to_p0(4), "");
	TEST_ASSERT_EQUAL(recv_p0(4), 4, "a port start starts the queue");
	stop_ports();
	return TEST_SUCCESS;
}

static int
test_deferred(void)
{
	struct rte_eth_rxconf rxc = { .rx_deferred_start = 1 };
	struct rte_eth_txconf txc = { .tx_deferred_start = 1 };
	struct rte_eth_rxq_info rxi;
	struct rte_eth_txq_info txi;
	uint64_t opackets, oerrors;
	struct rte_eth_stats st;
	unsigned int in_use;
	struct rte_mbuf *m;

	TEST_ASSERT_SUCCESS(setup_ports(0), "");
	stop_ports();
	TEST_ASSERT_SUCCESS(rte_eth_rx_queue_setup(p0, 0, NB_DESC,
						   SOCKET_ID_ANY, &rxc, mp),
			    "");
	TEST_ASSERT_SUCCESS(rte_eth_tx_queue_setup(p0, 0, NB_DESC,
						   SOCKET_ID_ANY, &txc), "");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(p0), "");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(p1), "");
	TEST_ASSERT_SUCCESS(rte_eth_rx_queue_info_get(p0, 0, &rxi), "");
	TEST_ASSERT_EQUAL(rxi.conf.rx_deferred_start, 1, "");
	TEST_ASSERT_EQUAL(rxi.queue_state, RTE_ETH_QUEUE_STATE_STOPPED, "");
	TEST_ASSERT_SUCCESS(rte_eth_tx_queue_info_get(p0, 0, &txi), "");
	TEST_ASSERT_EQUAL(txi.conf.tx_deferred_start, 1, "");
	TEST_ASSERT_EQUAL(txi.queue_state, RTE_ETH_QUEUE_STATE_STOPPED, "");
	/* Not receiving yet: counted. */
	TEST_ASSERT_SUCCESS(rte_eth_stats_get(p0, &st), "");
	TEST_ASSERT_SUCCESS(send_to_p0(4), "");
	TEST_ASSERT_EQUAL(wait_imissed(st.imissed + 4), st.imissed + 4, "");
	m = vbr_test_udp4(mp, &mac1, &mac0, 1, 2, 3, 4, FLEN);
	TEST_ASSERT_NOT_NULL(m, "");
	/*
	 * Not sending yet: the burst takes nothing (the mbuf stays ours, no
	 * counter moves), as mlx5 would post in RESET and send at the start.
	 */
	TEST_ASSERT_SUCCESS(rte_eth_stats_get(p0, &st), "");
	opackets = st.opackets;
	oerrors = st.oerrors;
	in_use = rte_mempool_in_use_count(mp);
	TEST_ASSERT_EQUAL(rte_eth_tx_burst(p0, 0, &m, 1), 0,
			  "a stopped Tx queue took the mbuf");
	TEST_ASSERT_EQUAL(rte_mempool_in_use_count(mp), in_use, "");
	TEST_ASSERT_SUCCESS(rte_eth_stats_get(p0, &st), "");
	TEST_ASSERT_EQUAL(st.opackets, opackets, "a deferred Tx queue sent");
	TEST_ASSERT_EQUAL(st.oerrors, oerrors, "");
	rte_pktmbuf_free(m);
	TEST_ASSERT_SUCCESS(rte_eth_dev_rx_queue_start(p0, 0), "");
	TEST_ASSERT_SUCCESS(rte_eth_dev_tx_queue_start(p0, 0), "");
	TEST_ASSERT_SUCCESS(send_to_p0(4), "");
	TEST_ASSERT_EQUAL(recv_p0(4), 4, "after the deferred start");
	m = vbr_test_udp4(mp, &mac1, &mac0, 1, 2, 3, 4, FLEN);
	TEST_ASSERT_NOT_NULL(m, "");
	TEST_ASSERT_EQUAL(vbr_test_tx_all(p0, &m, 1, 2000), 1, "");
	stop_ports();
	/* Back to plain queues for the next cases. */
	rxc.rx_deferred_start = 0;
	txc.tx_deferred_start = 0;
	TEST_ASSERT_SUCCESS(rte_eth_rx_queue_setup(p0, 0, NB_DESC,
						   SOCKET_ID_ANY, &rxc, mp),
			    "");
	TEST_ASSERT_SUCCESS(rte_eth_tx_queue_setup(p0, 0, NB_DESC,
						   SOCKET_ID_ANY, &txc), "");
	return TEST_SUCCESS;
}

/*
 * A queue setup that fails leaves no queue (ethdev releases the old one
 * first): the port start refuses it rather than let the burst find NULL,
 * also when isolated (no rule targets the queue to refuse it).
 */
static int
test_rxq_setup_failed(void)
{
	struct rte_mempool *small;
	struct rte_flow_error err;

	TEST_ASSERT_SUCCESS(setup_ports(0), "");
	stop_ports();
	TEST_ASSERT_SUCCESS(rte_flow_isolate(p0, 1, &err), "isolate");
	/* Fewer mbufs than the ring: the setup cannot post it. */
	small = rte_pktmbuf_pool_create("vbr_q_small", NB_DESC / 2, 0, 0,
					RTE_MBUF_DEFAULT_BUF_SIZE,
					SOCKET_ID_ANY);
	TEST_ASSERT_NOT_NULL(small, "");
	TEST_ASSERT(rte_eth_rx_queue_setup(p0, 0, NB_DESC, SOCKET_ID_ANY,
					   NULL, small) < 0, "");
	TEST_ASSERT_EQUAL(rte_eth_dev_start(p0), -EINVAL,
			  "started with rxq 0 not set up");
	TEST_ASSERT_SUCCESS(rte_eth_rx_queue_setup(p0, 0, NB_DESC,
						   SOCKET_ID_ANY, NULL, mp),
			    "");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(p0), "");
	stop_ports();
	TEST_ASSERT_SUCCESS(rte_flow_isolate(p0, 0, &err), "isolate off");
	return TEST_SUCCESS;
}

struct sender {
	pthread_t tid;
	unsigned int delay_us;
	int ret;
};

static void *
sender_main(void *arg)
{
	struct sender *s = arg;

	usleep(s->delay_us);
	s->ret = send_to_p0(1);
	return NULL;
}

static int
test_rx_intr(void)
{
	struct rte_epoll_event ev[2];
	struct sender s = { .delay_us = 100000, .ret = -2 };
	int n;

	TEST_ASSERT_SUCCESS(setup_ports(1), "");
	TEST_ASSERT_SUCCESS(rte_eth_dev_rx_intr_ctl_q(p0, 0,
						      RTE_EPOLL_PER_THREAD,
						      RTE_INTR_EVENT_ADD,
						      NULL), "");
	/* Armed on an empty queue: no wake-up without a frame. */
	TEST_ASSERT_SUCCESS(rte_eth_dev_rx_intr_enable(p0, 0), "");
	n = rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, RTE_DIM(ev), 50);
	TEST_ASSERT_EQUAL(n, 0, "woken with nothing received");
	/* Asleep, as l3fwd-power: a frame from another thread wakes us. */
	TEST_ASSERT_SUCCESS(pthread_create(&s.tid, NULL, sender_main, &s),
			    "");
	n = rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, RTE_DIM(ev), 5000);
	pthread_join(s.tid, NULL);
	TEST_ASSERT_SUCCESS(s.ret, "send");
	TEST_ASSERT_EQUAL(n, 1, "not woken by the frame");
	TEST_ASSERT_SUCCESS(rte_eth_dev_rx_intr_disable(p0, 0), "");
	TEST_ASSERT_EQUAL(recv_p0(1), 1, "");
	/* Disabled and read: the fd is quiet again. */
	n = rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, RTE_DIM(ev), 0);
	TEST_ASSERT_EQUAL(n, 0, "still readable after disable");
	/* A frame already there when arming wakes at once. */
	TEST_ASSERT_SUCCESS(send_to_p0(1), "");
	TEST_ASSERT_EQUAL(wait_count(1), 1, "");
	TEST_ASSERT_SUCCESS(rte_eth_dev_rx_intr_enable(p0, 0), "");
	n = rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, RTE_DIM(ev), 5000);
	TEST_ASSERT_EQUAL(n, 1, "a waiting frame did not wake");
	TEST_ASSERT_SUCCESS(rte_eth_dev_rx_intr_disable(p0, 0), "");
	TEST_ASSERT_EQUAL(recv_p0(1), 1, "");
	/* One wake-up per arm: a frame after it wakes nobody. */
	TEST_ASSERT_SUCCESS(send_to_p0(1), "");
	TEST_ASSERT_EQUAL(wait_count(1), 1, "");
	n = rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, RTE_DIM(ev), 0);
	TEST_ASSERT_EQUAL(n, 0, "woken without an arm");
	TEST_ASSERT_EQUAL(recv_p0(1), 1, "");
	TEST_ASSERT_SUCCESS(rte_eth_dev_rx_intr_ctl_q(p0, 0,
						      RTE_EPOLL_PER_THREAD,
						      RTE_INTR_EVENT_DEL,
						      NULL), "");
	stop_ports();
	return TEST_SUCCESS;
}

/* progress=inline: Rx interrupts refused at Rx queue setup, clearly. */
static int
test_rx_intr_inline(void)
{
	struct rte_eth_conf conf = { .intr_conf = { .rxq = 1 } };
	char args[96], name[32];
	uint16_t port;
	int ret;

	if (vbr_test_dev() != NULL)
		TEST_SKIP("on %s: no progress model", vbr_test_dev());
	snprintf(name, sizeof(name), "net_vbr%d", 7);
	snprintf(args, sizeof(args), "wire=loop,progress=inline");
	TEST_ASSERT_SUCCESS(rte_vdev_init(name, args), "inline port");
	TEST_ASSERT_SUCCESS(rte_eth_dev_get_port_by_name(name, &port), "");
	TEST_ASSERT_SUCCESS(rte_eth_dev_configure(port, 1, 1, &conf), "");
	ret = rte_eth_rx_queue_setup(port, 0, NB_DESC, SOCKET_ID_ANY, NULL,
				     mp);
	rte_eth_dev_close(port);
	rte_vdev_uninit(name);
	TEST_ASSERT_EQUAL(ret, -EOPNOTSUPP,
			  "Rx queue setup with interrupts on an inline port");
	return TEST_SUCCESS;
}

static int
test_monitor(void)
{
	struct rte_power_monitor_cond pmc;
	uint64_t v;

	TEST_ASSERT_SUCCESS(setup_ports(0), "");
	if (!can_peek()) {
		/* nothing in memory changes when a frame lands: refused */
		printf("no CQ peek (libibverbs): get_monitor_addr is "
		       "ENOTSUP\n");
		TEST_ASSERT_EQUAL(rte_eth_get_monitor_addr(p0, 0, &pmc),
				  -ENOTSUP, "");
		stop_ports();
		return TEST_SUCCESS;
	}
	TEST_ASSERT_SUCCESS(rte_eth_get_monitor_addr(p0, 0, &pmc), "");
	TEST_ASSERT_NOT_NULL(pmc.addr, "");
	TEST_ASSERT_EQUAL(pmc.size, 4, "");
	TEST_ASSERT_NOT_NULL(pmc.fn, "");
	v = *(volatile uint32_t *)pmc.addr;
	TEST_ASSERT_EQUAL(pmc.fn(v, pmc.opaque), 0, "idle: may sleep");
	TEST_ASSERT_SUCCESS(send_to_p0(1), "");
	TEST_ASSERT_EQUAL(wait_count(1), 1, "");
	/* The arrival wrote the word: the sleep is off. */
	v = *(volatile uint32_t *)pmc.addr;
	TEST_ASSERT_EQUAL(pmc.fn(v, pmc.opaque), -1, "a frame: no sleep");
	/* rte_power_monitor() returns at once with the frame there. */
	{
		struct rte_cpu_intrinsics intr;

		rte_cpu_get_intrinsics_support(&intr);
		if (intr.power_monitor)
			TEST_ASSERT_SUCCESS(rte_power_monitor(
				&pmc, rte_get_tsc_cycles() +
				rte_get_tsc_hz()), "");
	}
	TEST_ASSERT_EQUAL(recv_p0(1), 1, "");
	TEST_ASSERT_SUCCESS(rte_eth_get_monitor_addr(p0, 0, &pmc), "");
	v = *(volatile uint32_t *)pmc.addr;
	TEST_ASSERT_EQUAL(pmc.fn(v, pmc.opaque), 0, "polled: may sleep");
	stop_ports();
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite = {
	.name = "vbr queue operations",
	.cases = {
		TEST_CASE(test_info),
		TEST_CASE(test_desc_status),
		TEST_CASE(test_rxq_stop_start),
		TEST_CASE(test_deferred),
		TEST_CASE(test_rxq_setup_failed),
		TEST_CASE(test_rx_intr),
		TEST_CASE(test_rx_intr_inline),
		TEST_CASE(test_monitor),
		TEST_CASES_END(),
	},
};

int
main(int argc, char **argv)
{
	const char *dev = vbr_test_dev(), *peer = vbr_test_dev_peer();
	char args[128], args1[128];
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: %s <librte_net_vbr.so>\n", argv[0]);
		return 2;
	}
	if (dev != NULL && peer == NULL) {
		printf("SKIP: VBR_TEST_DEV=%s: a two-port suite needs "
		       "VBR_TEST_DEV_PEER=<the port cabled to it>\n", dev);
		return 77;
	}
	ret = vbr_test_eal_init(argv[0], argv[1], NULL, NULL, NULL);
	if (ret != 0)
		return vbr_test_init_status(ret);
	if (dev != NULL) {
		printf("device: %s, peer %s (VBR_TEST_DEV)\n", dev, peer);
		snprintf(args, sizeof(args), "dev=%s", dev);
		snprintf(args1, sizeof(args1), "dev=%s", peer);
	} else {
		const char *model = vbr_test_progress();

		if (model == NULL || strcmp(model, "inline") == 0)
			model = "thread";
		printf("ports: progress=%s\n", model);
		snprintf(args, sizeof(args), "wire=pair:vbrq%d,progress=%s",
			 (int)getpid(), model);
		snprintf(args1, sizeof(args1), "%s", args);
	}
	if (rte_vdev_init("net_vbr0", args) != 0 ||
	    rte_vdev_init("net_vbr1", args1) != 0 ||
	    vbr_test_pair_ports(&p0, &p1) != TEST_SUCCESS) {
		printf("cannot create the ports\n");
		return 1;
	}
	mp = vbr_test_pool("queue_pool", NB_MBUF);
	if (mp == NULL)
		return 1;
	ret = unit_test_suite_runner(&suite);
	rte_eth_dev_close(p0);
	rte_eth_dev_close(p1);
	vbr_test_fini(mp);
	return ret;
}
