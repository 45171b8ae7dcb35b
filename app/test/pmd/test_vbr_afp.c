/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * net/vbr on af_packet (or af_xdp) wires, over a veth pair whose far end
 * lives in a network namespace this program creates and removes: the
 * removal event and rebinding when the interface is deleted and made again,
 * one port per interface unless share_wire=1 (af_xdp: one per queue, no
 * sharing), short frames padded to 60 bytes both ways, the MTU set on the
 * interface (or refused by it, or by the wire).
 * usage: test-vbr-afp <librte_net_vbr.so> [af_packet|af_xdp]. Needs root
 * and `ip netns` (exit 77 otherwise, and for af_xdp on a kernel without
 * AF_XDP).
 */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "test.h"
#include "vbr_netns.h"
#include "vbr_test_port.h"

#define NB_MBUF 4095
#define NB_DESC 256
#define WAIT_MS 3000
#define T_TYPE 0x88b5

static struct rte_mempool *mp;
static const char *t_kind = "af_packet";	/* the wire kind under test */
static char t_a[IF_NAMESIZE], t_b[IF_NAMESIZE], t_ns[IF_NAMESIZE];
static bool t_created;
static int t_peer = -1;		/* raw socket on t_b, in t_ns */
static const struct rte_ether_addr port_mac = {
	.addr_bytes = { 0x02, 0x76, 0x62, 0x61, 0x00, 0x01 } };
static const uint8_t peer_src[6] = { 0x02, 0x76, 0x62, 0x61, 0x00, 0x02 };

static bool
is_xdp(void)
{
	return strcmp(t_kind, "af_xdp") == 0;
}

static void
cleanup(void)
{
	if (t_peer >= 0) {
		close(t_peer);
		t_peer = -1;
	}
	if (!t_created)
		return;
	t_created = false;
	vbr_sh("ip link del %s >/dev/null 2>&1", t_a);
	vbr_sh("ip netns del %s >/dev/null 2>&1", t_ns);
}

static void
on_signal(int sig)
{
	cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int
peer_open(void)
{
	if (t_peer >= 0)
		close(t_peer);
	t_peer = vbr_ns_peer_socket(t_ns, t_b);
	return t_peer < 0 ? -1 : 0;
}

/* A frame from the peer to the port: @len bytes, byte 14 = @seq. */
static int
peer_send(uint32_t len, uint8_t seq)
{
	uint8_t f[9100];
	uint32_t i;

	memcpy(f, port_mac.addr_bytes, 6);
	memcpy(f + 6, peer_src, 6);
	f[12] = T_TYPE >> 8;
	f[13] = T_TYPE & 0xff;
	for (i = 14; i < len; i++)
		f[i] = (uint8_t)(seq + i);
	return send(t_peer, f, len, 0) == (ssize_t)len ? 0 : -1;
}

/*
 * The next frame the peer receives from the port into @buf (@size bytes at
 * most); its length, 0 after ms.
 */
static int
peer_recv(uint8_t *buf, size_t size, unsigned int ms)
{
	uint64_t end = rte_get_timer_cycles() + ms * rte_get_timer_hz() / 1000;
	struct pollfd pfd = { t_peer, POLLIN, 0 };
	struct sockaddr_ll sll;
	socklen_t sl;
	ssize_t n;

	while (rte_get_timer_cycles() < end) {
		sl = sizeof(sll);
		n = recvfrom(t_peer, buf, size, MSG_DONTWAIT,
			     (struct sockaddr *)&sll, &sl);
		if (n < 0) {
			poll(&pfd, 1, 5);
			continue;
		}
		if (sll.sll_pkttype != PACKET_OUTGOING && n >= 14 &&
		    memcmp(buf + 6, port_mac.addr_bytes, 6) == 0)
			return (int)n;
	}
	return 0;
}

/* Length of the next frame the peer receives from the port; 0 after ms. */
static int
peer_recv_len(unsigned int ms)
{
	static uint8_t buf[16384];

	return peer_recv(buf, sizeof(buf), ms);
}

/*
 * Receive on the port for ms, or until @want frames came; lengths into
 * lens[], return the count.
 */
static unsigned int
port_recv_for(uint16_t port, uint32_t *lens, unsigned int max,
	      unsigned int want, unsigned int ms)
{
	uint64_t end = rte_get_timer_cycles() + ms * rte_get_timer_hz() / 1000;
	struct rte_mbuf *m[32];
	unsigned int n = 0;
	uint16_t i, k;

	while (n < want && rte_get_timer_cycles() < end) {
		k = rte_eth_rx_burst(port, 0, m, 32);
		for (i = 0; i < k; i++) {
			if (n < max)
				lens[n++] = m[i]->pkt_len;
			rte_pktmbuf_free(m[i]);
		}
		if (k == 0)
			rte_delay_us_sleep(1000);
	}
	return n;
}

/* Receive on the port for ms; lengths into lens[], return the count. */
static unsigned int
port_recv(uint16_t port, uint32_t *lens, unsigned int max, unsigned int ms)
{
	return port_recv_for(port, lens, max, UINT_MAX, ms);
}

/* How long one frame too many has to show up after the wanted ones. */
#define EXTRA_MS 200

/*
 * The @want frames the peer sent: wait for them up to WAIT_MS (a loaded
 * machine, a sanitizer build, may be slow to bring them), then EXTRA_MS
 * more for one too many. Lengths into lens[], return the count.
 */
static unsigned int
port_recv_want(uint16_t port, uint32_t *lens, unsigned int max,
	       unsigned int want)
{
	unsigned int n = port_recv_for(port, lens, max, want, WAIT_MS);

	return n + port_recv(port, lens + n, max - n, EXTRA_MS);
}

static uint32_t rmv_events, lsc_events;

static int
event_cb(uint16_t port, enum rte_eth_event_type type, void *arg, void *ret)
{
	RTE_SET_USED(port);
	RTE_SET_USED(arg);
	RTE_SET_USED(ret);
	if (type == RTE_ETH_EVENT_INTR_RMV)
		__atomic_fetch_add(&rmv_events, 1, __ATOMIC_RELAXED);
	else if (type == RTE_ETH_EVENT_INTR_LSC)
		__atomic_fetch_add(&lsc_events, 1, __ATOMIC_RELAXED);
	return 0;
}

static int
wait_link(uint16_t port, uint16_t status)
{
	struct rte_eth_link link;
	int i;

	for (i = 0; i < WAIT_MS / 10; i++) {
		if (rte_eth_link_get_nowait(port, &link) == 0 &&
		    link.link_status == status)
			return 0;
		rte_delay_ms(10);
	}
	return -1;
}

/* Probe net_vbr<n> on t_a with extra devargs; its port id, or -1. */
static int
port_make(const char *name, const char *extra, uint16_t *port)
{
	char args[128];
	int ret;

	snprintf(args, sizeof(args), "wire=%s:%s,mac="
		 RTE_ETHER_ADDR_PRT_FMT "%s", t_kind, t_a,
		 RTE_ETHER_ADDR_BYTES(&port_mac), extra);
	ret = vbr_test_vdev_init(name, args);
	if (ret != 0)
		return ret;
	return rte_eth_dev_get_port_by_name(name, port);
}

static int
port_go(uint16_t port, bool multiseg)
{
	struct rte_eth_conf conf = { 0 };
	int ret;

	conf.intr_conf.lsc = 1;
	conf.intr_conf.rmv = 1;
	conf.rxmode.offloads = RTE_ETH_RX_OFFLOAD_SCATTER;
	if (multiseg)
		conf.txmode.offloads = RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	ret = vbr_test_port_config(port, &conf, 1, NB_DESC, NB_DESC, mp);
	if (ret == 0)
		ret = rte_eth_dev_start(port);
	if (ret == 0)
		ret = wait_link(port, RTE_ETH_LINK_UP);
	return ret;
}

static void
port_drop(const char *name, uint16_t port)
{
	rte_eth_dev_stop(port);
	rte_eth_dev_close(port);
	rte_vdev_uninit(name);
}

/*
 * Finding 3: the interface is deleted: link down and the removal event;
 * start refuses while no interface has the name; once it is made again,
 * stop/start binds it and frames flow.
 */
static int
test_removal(void)
{
	uint32_t lens[8];
	uint16_t p;
	int ret;
	unsigned int i;

	TEST_ASSERT_SUCCESS(port_make("net_vbr_rm", "", &p), "probe");
	rte_eth_dev_callback_register(p, RTE_ETH_EVENT_INTR_RMV, event_cb,
				      NULL);
	TEST_ASSERT_SUCCESS(port_go(p, false), "start");
	TEST_ASSERT_SUCCESS(peer_send(100, 1), "");
	TEST_ASSERT_EQUAL(port_recv_want(p, lens, 8, 1), 1, "before");
	rmv_events = 0;
	close(t_peer);
	t_peer = -1;
	TEST_ASSERT_SUCCESS(vbr_sh("ip link del %s", t_a), "");
	TEST_ASSERT_SUCCESS(wait_link(p, RTE_ETH_LINK_DOWN), "link up");
	for (i = 0; i < WAIT_MS / 10 &&
	     __atomic_load_n(&rmv_events, __ATOMIC_RELAXED) == 0; i++)
		rte_delay_ms(10);
	TEST_ASSERT_EQUAL(rmv_events, 1, "removal events");
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(p), "stop");
	ret = rte_eth_dev_start(p);
	TEST_ASSERT_EQUAL(ret, -ENODEV, "start with no interface");
	TEST_ASSERT_SUCCESS(vbr_veth_make(t_a, t_b, t_ns), "veth again");
	TEST_ASSERT_SUCCESS(peer_open(), "peer");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(p), "start on the new one");
	TEST_ASSERT_SUCCESS(wait_link(p, RTE_ETH_LINK_UP), "link down");
	TEST_ASSERT_SUCCESS(peer_send(200, 2), "");
	TEST_ASSERT_EQUAL(port_recv_want(p, lens, 8, 1), 1, "after rebind");
	TEST_ASSERT_EQUAL(lens[0], 200, "");
	TEST_ASSERT_EQUAL(rmv_events, 1, "removal events");
	port_drop("net_vbr_rm", p);
	return TEST_SUCCESS;
}

/* Frames of 100 bytes from the port to the peer: n of them, or none. */
static unsigned int
port_send_some(uint16_t port, unsigned int n)
{
	struct rte_mbuf *m[32];
	unsigned int i, k;
	uint16_t sent;
	uint8_t *d;

	k = n < RTE_DIM(m) ? n : RTE_DIM(m);
	if (rte_pktmbuf_alloc_bulk(mp, m, k) != 0)
		return 0;
	for (i = 0; i < k; i++) {
		d = (uint8_t *)rte_pktmbuf_append(m[i], 100);
		memset(d, 0x3c, 100);
		memcpy(d, peer_src, 6);
		memcpy(d + 6, port_mac.addr_bytes, 6);
		d[12] = T_TYPE >> 8;
		d[13] = T_TYPE & 0xff;
	}
	sent = rte_eth_tx_burst(port, 0, m, (uint16_t)k);
	for (i = sent; i < k; i++)
		rte_pktmbuf_free(m[i]);
	return sent;
}

/*
 * The interface is deleted under traffic on a port without the removal
 * interrupt (as testpmd --no-rmv-interrupt runs): every send fails, and
 * the Tx queue must not recover again and again: once the device says it
 * is gone the queue stops sending (bursts return 0), the recoveries before
 * that back off, so tx_q0_recoveries stays small whatever the number of
 * bursts; what the ring held is counted in oerrors; stop and close
 * succeed. The interface is made again for the next cases.
 */
static int
test_removal_under_traffic(void)
{
	struct rte_eth_conf conf = { 0 };
	uint64_t rec, deferred, end;
	unsigned int bursts = 0, after = 0;
	struct rte_eth_stats st;
	uint16_t p;
	int ret;

	TEST_ASSERT_SUCCESS(port_make("net_vbr_rmt", "", &p), "probe");
	conf.intr_conf.lsc = 1;
	ret = vbr_test_port_config(p, &conf, 1, NB_DESC, NB_DESC, mp);
	if (ret == 0)
		ret = rte_eth_dev_start(p);
	if (ret == 0)
		ret = wait_link(p, RTE_ETH_LINK_UP);
	TEST_ASSERT_SUCCESS(ret, "start");
	VBR_TEST_NEED_XSTAT(p, "tx_q0_recoveries");
	for (end = 0; end < 200; end++)
		port_send_some(p, 32);
	close(t_peer);
	t_peer = -1;
	TEST_ASSERT_SUCCESS(vbr_sh("ip link del %s", t_a), "");
	/* Bursts for a while, as a forwarding loop would make them. */
	end = rte_get_timer_cycles() + rte_get_timer_hz() * 3 / 2;
	while (rte_get_timer_cycles() < end) {
		after += port_send_some(p, 32);
		bursts++;
		rte_eth_rx_burst(p, 0, (struct rte_mbuf *[1]){ NULL }, 0);
	}
	rec = vbr_test_xstat(p, "tx_q0_recoveries");
	deferred = vbr_test_xstat(p, "tx_q0_recoveries_deferred");
	TEST_ASSERT_SUCCESS(rte_eth_stats_get(p, &st), "stats");
	printf("    %u bursts after the delete (%u frames taken): %" PRIu64
	       " recoveries, %" PRIu64 " deferred, oerrors %" PRIu64 "\n",
	       bursts, after, rec, deferred, st.oerrors);
	ret = rte_eth_dev_stop(p);
	TEST_ASSERT_SUCCESS(vbr_veth_make(t_a, t_b, t_ns), "veth again");
	TEST_ASSERT_SUCCESS(peer_open(), "peer");
	TEST_ASSERT_SUCCESS(ret, "stop with the device gone");
	TEST_ASSERT(rec <= 16, "%" PRIu64 " recoveries of a queue whose "
		    "device is gone", rec);
	TEST_ASSERT(bursts > 1000, "only %u bursts: the test proves nothing",
		    bursts);
	TEST_ASSERT_SUCCESS(rte_eth_dev_close(p), "close");
	TEST_ASSERT_SUCCESS(rte_vdev_uninit("net_vbr_rmt"), "uninit");
	return TEST_SUCCESS;
}

/* Part of finding 6: one port per interface, unless share_wire=1. */
static int
test_same_interface(void)
{
	uint16_t p, q;

	if (is_xdp()) {
		/* One socket per queue (the kernel's rule); no sharing. */
		TEST_ASSERT_SUCCESS(port_make("net_vbr_s0", "", &p), "first");
		TEST_ASSERT_EQUAL(port_make("net_vbr_s1", "", &q), -EBUSY,
				  "second on the queue");
		TEST_ASSERT_EQUAL(port_make("net_vbr_s1", ",share_wire=1", &q),
				  -EINVAL, "share_wire=1");
		rte_vdev_uninit("net_vbr_s0");
		TEST_ASSERT_SUCCESS(port_make("net_vbr_s1", "", &q),
				    "the queue is free again");
		rte_vdev_uninit("net_vbr_s1");
		return TEST_SUCCESS;
	}
	TEST_ASSERT_SUCCESS(port_make("net_vbr_s0", "", &p), "first");
	TEST_ASSERT_EQUAL(port_make("net_vbr_s1", "", &q), -EBUSY, "second");
	TEST_ASSERT_EQUAL(port_make("net_vbr_s1", ",share_wire=1", &q), -EBUSY,
			  "the first does not share");
	rte_vdev_uninit("net_vbr_s0");
	TEST_ASSERT_SUCCESS(port_make("net_vbr_s0", ",share_wire=1", &p), "");
	TEST_ASSERT_SUCCESS(port_make("net_vbr_s1", ",share_wire=1", &q), "");
	TEST_ASSERT(p != q, "");
	rte_vdev_uninit("net_vbr_s1");
	rte_vdev_uninit("net_vbr_s0");
	return TEST_SUCCESS;
}

/*
 * Frames under 60 bytes (the kernel's 42-byte ARP frames on a veth) are
 * padded as the sender's MAC would: they arrive as 60 bytes, their own
 * bytes first, zeros after, counted as good frames (no Rx error, no runt);
 * frames the port sends under 60 bytes leave padded the same way, as a
 * ConnectX pads them.
 */
static struct rte_mbuf *make_big(uint32_t len);

static int
test_short_padded(void)
{
	static const uint32_t sizes[] = { 60, 14, 42, 59, 61 };
	uint8_t f[128];
	struct rte_mbuf *m[32];
	struct rte_eth_stats st;
	uint64_t e0, e1, r0, r1, end;
	unsigned int i, n = 0, k;
	uint32_t len, want, b;
	uint16_t p;

	TEST_ASSERT_SUCCESS(port_make("net_vbr_rt", "", &p), "probe");
	TEST_ASSERT_SUCCESS(port_go(p, false), "start");
	e0 = vbr_test_xstat(p, "rx_error_completions");
	r0 = vbr_test_xstat(p, "rx_runt_frames");
	for (i = 0; i < RTE_DIM(sizes); i++)
		TEST_ASSERT_SUCCESS(peer_send(sizes[i], (uint8_t)i), "");
	end = rte_get_timer_cycles() + WAIT_MS * rte_get_timer_hz() / 1000;
	while (n < RTE_DIM(sizes) && rte_get_timer_cycles() < end) {
		k = rte_eth_rx_burst(p, 0, m, 32);
		for (i = 0; i < k; i++, n++) {
			len = rte_pktmbuf_pkt_len(m[i]);
			want = n < RTE_DIM(sizes) ? sizes[n] : 0;
			if (len != RTE_MAX(want, 60u) || len > sizeof(f)) {
				rte_pktmbuf_free_bulk(&m[i], k - i);
				port_drop("net_vbr_rt", p);
				TEST_ASSERT(false, "frame %u of %u bytes: %u",
					    n, want, len);
			}
			memcpy(f, rte_pktmbuf_read(m[i], 0, len, f), len);
			rte_pktmbuf_free(m[i]);
			for (b = 14; b < len; b++)
				if (f[b] != (b < want ? (uint8_t)(n + b) : 0))
					break;
			TEST_ASSERT_EQUAL(b, len, "frame %u of %u bytes: byte %u",
					  n, want, b);
		}
		if (k == 0)
			rte_delay_us_sleep(1000);
	}
	e1 = vbr_test_xstat(p, "rx_error_completions");
	r1 = vbr_test_xstat(p, "rx_runt_frames");
	TEST_ASSERT_EQUAL(n, RTE_DIM(sizes), "delivered");
	TEST_ASSERT_EQUAL(e1 - e0, 0, "Rx errors");
	TEST_ASSERT_EQUAL(r1 - r0, 0, "runts");
	TEST_ASSERT_SUCCESS(rte_eth_stats_get(p, &st), "");
	TEST_ASSERT_EQUAL(st.ierrors, 0, "ierrors");
	TEST_ASSERT_EQUAL(st.ipackets, RTE_DIM(sizes), "ipackets");
	/* Tx: 42 bytes of 0x5a after the header, 60 on the wire. */
	m[0] = make_big(42);
	TEST_ASSERT_NOT_NULL(m[0], "");
	TEST_ASSERT_EQUAL(vbr_test_tx_all(p, m, 1, WAIT_MS), 1, "tx");
	len = (uint32_t)peer_recv(f, sizeof(f), WAIT_MS);
	port_drop("net_vbr_rt", p);
	TEST_ASSERT_EQUAL(len, 60, "peer got a padded frame");
	for (b = 14; b < len; b++)
		TEST_ASSERT_EQUAL(f[b], b < 42 ? 0x5a : 0, "byte %u", b);
	return TEST_SUCCESS;
}

/*
 * rx_wire_dropped and, read after it, imissed, once both held still over
 * one read: the kernel may still be dropping frames the peer sent (veth
 * hands them over from a softirq), so a count read alone may trail the
 * imissed read after it. imissed is those drops and rx_out_of_buffer:
 * frames the device took with no buffer posted. An inline port is pulled
 * while unpolled too, 64 frames every 100 ms, by its link watch
 * (vbr_glue_sw.c: the alarm's port query runs the device's work): when
 * sending takes longer than 8 watches (a sanitizer build, a loaded
 * machine), its 512 buffers fill and the rest counts out of buffer.
 * 0, or -1 when they never settle in 2 s.
 */
static int
wire_drops_settled(uint16_t p, uint64_t *w, uint64_t *oob,
		   struct rte_eth_stats *st)
{
	uint64_t deadline = rte_get_timer_cycles() + rte_get_timer_hz() * 2;
	uint64_t a, b, o;

	do {
		a = vbr_test_xstat(p, "rx_wire_dropped");
		o = vbr_test_xstat(p, "rx_out_of_buffer");
		if (rte_eth_stats_get(p, st) != 0)
			return -1;
		b = vbr_test_xstat(p, "rx_wire_dropped");
		if (a == b && o == vbr_test_xstat(p, "rx_out_of_buffer") &&
		    st->imissed == b + o) {
			*w = b;
			*oob = o;
			return 0;
		}
		rte_delay_ms(10);
	} while (rte_get_timer_cycles() < deadline);
	*w = b;
	*oob = o;
	return -1;
}

static int
wire_drops_run(uint16_t p)
{
	/* More than an af_packet ring (16 x 256 KiB blocks) holds of 60 B. */
	const unsigned int n = is_xdp() ? 8192 : 65536;
	static uint32_t kept[65536];
	struct rte_eth_stats st;
	uint64_t w0, w1 = 0, w2, oob = 0;
	uint32_t lens[4];
	unsigned int i, got;
	int settled;

	TEST_ASSERT_SUCCESS(port_go(p, false), "start");
	VBR_TEST_NEED_XSTAT(p, "rx_wire_dropped");
	TEST_ASSERT_SUCCESS(rte_eth_stats_reset(p), "reset");
	w0 = vbr_test_xstat(p, "rx_wire_dropped");
	TEST_ASSERT_EQUAL(w0, 0, "rx_wire_dropped after reset");
	for (i = 0; i < n; i++)
		TEST_ASSERT_SUCCESS(peer_send(60, (uint8_t)i), "send %u", i);
	settled = wire_drops_settled(p, &w1, &oob, &st);
	printf("    %u frames sent unpolled: %" PRIu64 " dropped by the "
	       "kernel, %" PRIu64 " out of buffer, imissed %" PRIu64 "\n", n,
	       w1, oob, st.imissed);
	TEST_ASSERT(w1 > 0 && w1 < n, "kernel drops counted: %" PRIu64, w1);
	TEST_ASSERT_SUCCESS(settled, "imissed %" PRIu64 " holds the %" PRIu64
			    " drops and %" PRIu64 " out of buffer once they "
			    "stop", st.imissed, w1, oob);
	/* What the ring kept comes in; nothing was dropped twice. */
	got = port_recv(p, kept, RTE_DIM(kept), 1000);
	w2 = vbr_test_xstat(p, "rx_wire_dropped");
	TEST_ASSERT_SUCCESS(rte_eth_stats_get(p, &st), "stats");
	printf("    then received %u, out of buffer %" PRIu64 "\n", got,
	       vbr_test_xstat(p, "rx_out_of_buffer"));
	TEST_ASSERT(got > 0, "frames the ring kept are received");
	TEST_ASSERT(got + w2 + vbr_test_xstat(p, "rx_out_of_buffer") <= n + 16,
		    "no frame counted twice");
	TEST_ASSERT(w2 >= w1, "the count never goes back");
	TEST_ASSERT_SUCCESS(rte_eth_stats_reset(p), "reset");
	TEST_ASSERT_EQUAL(vbr_test_xstat(p, "rx_wire_dropped"), 0, "after reset");
	TEST_ASSERT_SUCCESS(peer_send(60, 1), "send");
	TEST_ASSERT_EQUAL(port_recv_want(p, lens, 4, 1), 1, "the port goes on");
	return TEST_SUCCESS;
}

/*
 * Frames the kernel drops before the port sees them are counted where the
 * user looks: an inline port (only its link watch pulls its wire, 64
 * frames every 100 ms, while the application does not poll) gets more
 * frames than its kernel ring holds; the ring's
 * drops show in the xstat rx_wire_dropped and in imissed, both from the
 * last reset; the frames the ring kept are received; the port goes on.
 * The port goes away however the case ends: a port left behind holds the
 * interface, and the next cases could not bind it (EBUSY).
 */
static int
test_wire_drops(void)
{
	uint16_t p;
	int ret;

	TEST_ASSERT_SUCCESS(port_make("net_vbr_wd", ",progress=inline", &p),
			    "probe");
	ret = wire_drops_run(p);
	port_drop("net_vbr_wd", p);
	return ret;
}

/*
 * A frame the wire cannot carry (af_packet: over swverbs' 16 KiB limit, with both
 * interfaces' MTUs raised under the port) is dropped by the wire and
 * counted in rx_wire_errors and ierrors, not in rx_wire_dropped; the
 * port goes on receiving. af_xdp's UMEM frame keeps such frames off the
 * wire: nothing to test there.
 */
static int
test_wire_errors(void)
{
	static uint8_t big[17000];	/* over swverbs' 16 KiB frame limit */
	struct rte_eth_stats st;
	uint32_t lens[4];
	uint16_t p;
	int ret;

	if (is_xdp()) {
		printf("    (af_packet only)\n");
		return TEST_SUCCESS;
	}
	TEST_ASSERT_SUCCESS(port_make("net_vbr_we", ",progress=inline", &p),
			    "probe");
	TEST_ASSERT_SUCCESS(port_go(p, false), "start");
	VBR_TEST_NEED_XSTAT(p, "rx_wire_errors");
	ret = vbr_sh("ip link set %s mtu 20000 && "
		     "ip -n %s link set %s mtu 20000", t_a, t_ns, t_b);
	if (ret != 0)
		port_drop("net_vbr_we", p);
	TEST_ASSERT_SUCCESS(ret, "MTU 20000 on the veth");
	TEST_ASSERT_SUCCESS(rte_eth_stats_reset(p), "reset");
	memcpy(big, port_mac.addr_bytes, 6);
	memcpy(big + 6, peer_src, 6);
	big[12] = T_TYPE >> 8;
	big[13] = T_TYPE & 0xff;
	ret = send(t_peer, big, sizeof(big), 0) == (ssize_t)sizeof(big) ?
		0 : -1;
	if (ret == 0)
		ret = peer_send(100, 3);
	if (ret == 0 && port_recv_want(p, lens, 4, 1) != 1)
		ret = -1;
	rte_eth_stats_get(p, &st);
	printf("    rx_wire_errors %" PRIu64 ", ierrors %" PRIu64
	       ", rx_wire_dropped %" PRIu64 "\n", vbr_test_xstat(p, "rx_wire_errors"),
	       st.ierrors, vbr_test_xstat(p, "rx_wire_dropped"));
	vbr_sh("ip link set %s mtu 1500; ip -n %s link set %s mtu 1500", t_a,
	       t_ns, t_b);
	TEST_ASSERT_SUCCESS(ret, "the big frame sent, the next one received");
	TEST_ASSERT_EQUAL(lens[0], 100, "the next frame is the one received");
	TEST_ASSERT_EQUAL(vbr_test_xstat(p, "rx_wire_errors"), 1, "the big frame");
	TEST_ASSERT_EQUAL(st.ierrors, 1, "ierrors holds it");
	TEST_ASSERT_EQUAL(vbr_test_xstat(p, "rx_wire_dropped"), 0, "no ring drop");
	TEST_ASSERT_EQUAL(st.ipackets, 1, "ipackets");
	TEST_ASSERT_SUCCESS(rte_eth_stats_reset(p), "reset");
	TEST_ASSERT_EQUAL(vbr_test_xstat(p, "rx_wire_errors"), 0, "after reset");
	port_drop("net_vbr_we", p);
	return TEST_SUCCESS;
}

/* A counter of the interface's, from sysfs; UINT64_MAX if unread. */
static uint64_t
if_stat(const char *ifname, const char *name)
{
	char path[128];
	unsigned long long v;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/%s",
		 ifname, name);
	f = fopen(path, "r");
	if (f == NULL)
		return UINT64_MAX;
	n = fscanf(f, "%llu", &v);
	fclose(f);
	return n == 1 ? v : UINT64_MAX;
}

/*
 * dev_configure makes the port's MTU the interface's, as mlx5 sets its
 * netdev's (mlx5_dev_configure() -> mlx5_dev_set_mtu()): on a veth of MTU
 * 9000 (3000 on af_xdp), a port configured without rxmode.mtu has
 * ethdev's 1500, and so has the veth then; a frame within 1500 + 18 comes
 * in, the kernel drops the longer ones (the veth's rx_dropped), none
 * reaches the device (rx_mtu_dropped unchanged).
 */
static int
test_configure_sets_mtu(void)
{
	uint32_t big = is_xdp() ? 3000 : 9000;
	uint32_t lens[4] = { 0 };
	unsigned int got = 0;
	uint16_t p, mtu = 0;
	uint64_t d0, d1, k0, k1, end;
	int ret;

	TEST_ASSERT_SUCCESS(vbr_sh("ip link set %s mtu %u && "
				   "ip -n %s link set %s mtu %u", t_a, big,
				   t_ns, t_b, big), "veth MTU %u", big);
	ret = port_make("net_vbr_km", "", &p);
	if (ret == 0)
		ret = port_go(p, false);
	if (ret == 0 && (vbr_if_mtu(t_a) != 1500 ||
			 rte_eth_dev_get_mtu(p, &mtu) != 0 || mtu != 1500))
		ret = -1;
	d0 = vbr_test_xstat(p, "rx_mtu_dropped");
	k0 = if_stat(t_a, "rx_dropped");
	d1 = d0;
	k1 = k0;
	if (ret == 0) {
		ret = peer_send(1518, 1);
		/* the veth drops them: the sender's send() says ENOBUFS */
		(void)peer_send(1519, 2);
		(void)peer_send(2000, 3);
	}
	/*
	 * Until the frame in and the two above the MTU dropped by the
	 * kernel, or WAIT_MS; then EXTRA_MS more for one too many.
	 */
	end = rte_get_timer_cycles() + WAIT_MS * rte_get_timer_hz() / 1000;
	while (ret == 0 && (got < 1 || k1 - k0 < 2) &&
	       rte_get_timer_cycles() < end) {
		got += port_recv_for(p, lens + got, RTE_DIM(lens) - got, 1, 10);
		k1 = if_stat(t_a, "rx_dropped");
	}
	if (ret == 0)
		got += port_recv(p, lens + got, RTE_DIM(lens) - got, EXTRA_MS);
	if (ret == 0 && got != 1)
		ret = -2;
	d1 = vbr_test_xstat(p, "rx_mtu_dropped");
	k1 = if_stat(t_a, "rx_dropped");
	printf("    interface MTU %u, port MTU %u, received %u frame(s), the "
	       "first of %u bytes, rx_mtu_dropped +%" PRIu64 ", the "
	       "interface's rx_dropped +%" PRIu64 " (rx_wire_frames %" PRIu64
	       ", rx_wire_errors %" PRIu64 ", rx_no_match %" PRIu64 ")\n",
	       vbr_if_mtu(t_a), mtu, got, lens[0], d1 - d0, k1 - k0,
	       vbr_test_xstat(p, "rx_wire_frames"),
	       vbr_test_xstat(p, "rx_wire_errors"),
	       vbr_test_xstat(p, "rx_no_match"));
	port_drop("net_vbr_km", p);
	vbr_sh("ip link set %s mtu 1500; ip -n %s link set %s mtu 1500", t_a,
	       t_ns, t_b);
	TEST_ASSERT_EQUAL(ret, 0, "configure set the interface's MTU %u to "
			  "the port's 1500, one frame in", big);
	TEST_ASSERT_EQUAL(lens[0], 1518, "the frame within MTU + 18");
	TEST_ASSERT_EQUAL(k1 - k0, 2, "the two above it dropped by the kernel");
	TEST_ASSERT_EQUAL(d1 - d0, 0, "none reached the device");
	return TEST_SUCCESS;
}

/* A frame of @len bytes to the peer, in 2000-byte segments. */
static struct rte_mbuf *
make_big(uint32_t len)
{
	struct rte_mbuf *head = NULL, *m;
	uint32_t left = len, seg;
	uint8_t *d;

	while (left > 0) {
		m = rte_pktmbuf_alloc(mp);
		if (m == NULL) {
			rte_pktmbuf_free(head);
			return NULL;
		}
		seg = left < 2000 ? left : 2000;
		d = (uint8_t *)rte_pktmbuf_append(m, seg);
		memset(d, 0x5a, seg);
		if (head == NULL) {
			memcpy(d, peer_src, 6);
			memcpy(d + 6, port_mac.addr_bytes, 6);
			d[12] = T_TYPE >> 8;
			d[13] = T_TYPE & 0xff;
			head = m;
		} else if (rte_pktmbuf_chain(head, m) != 0) {
			rte_pktmbuf_free(m);
			rte_pktmbuf_free(head);
			return NULL;
		}
		left -= seg;
	}
	return head;
}

/*
 * Finding 4: the port's MTU is the interface's: mtu_set 9000 sets it, and
 * an 8000-byte frame goes out; an MTU the interface refuses is refused.
 * af_xdp: 9000 is more than a UMEM frame carries, refused; 3000 is set and
 * a 2000-byte frame goes out.
 */
static int
test_mtu(void)
{
	uint16_t mtu = is_xdp() ? 3000 : 9000, len = mtu - 1000;
	struct rte_eth_stats st;
	struct rte_mbuf *m;
	char vx[IF_NAMESIZE], args[96];
	uint16_t p;
	int ret;

	TEST_ASSERT_SUCCESS(vbr_sh("ip -n %s link set %s mtu 9000", t_ns, t_b),
			    "");
	TEST_ASSERT_SUCCESS(port_make("net_vbr_mt", "", &p), "probe");
	TEST_ASSERT_SUCCESS(port_go(p, true), "start");
	/* Stopped: the Rx queues take more buffers per frame at start. */
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(p), "stop");
	if (is_xdp()) {
		ret = rte_eth_dev_set_mtu(p, 9000);
		if (ret != -EINVAL)
			port_drop("net_vbr_mt", p);
		TEST_ASSERT_EQUAL(ret, -EINVAL, "mtu 9000 on af_xdp");
		TEST_ASSERT_EQUAL(vbr_if_mtu(t_a), 1500, "interface MTU");
	}
	ret = rte_eth_dev_set_mtu(p, mtu);
	if (ret != 0)
		port_drop("net_vbr_mt", p);
	TEST_ASSERT_SUCCESS(ret, "mtu %u", mtu);
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(p), "start");
	TEST_ASSERT_SUCCESS(wait_link(p, RTE_ETH_LINK_UP), "link");
	TEST_ASSERT_EQUAL(vbr_if_mtu(t_a), mtu, "interface MTU");
	rte_eth_stats_reset(p);
	m = make_big(len);
	TEST_ASSERT_NOT_NULL(m, "");
	TEST_ASSERT_EQUAL(vbr_test_tx_all(p, &m, 1, WAIT_MS), 1, "tx");
	TEST_ASSERT_EQUAL(peer_recv_len(WAIT_MS), len, "peer got it");
	rte_delay_ms(50);
	rte_eth_stats_get(p, &st);
	TEST_ASSERT_EQUAL(st.oerrors, 0, "oerrors");
	TEST_ASSERT_SUCCESS(rte_eth_dev_set_mtu(p, 1500), "mtu 1500");
	TEST_ASSERT_EQUAL(vbr_if_mtu(t_a), 1500, "interface MTU");
	port_drop("net_vbr_mt", p);
	vbr_sh("ip -n %s link set %s mtu 1500", t_ns, t_b);
	/* VXLAN over the veth: at most 1500 - 50. */
	snprintf(vx, sizeof(vx), "%.12sx", t_a);
	TEST_ASSERT_SUCCESS(vbr_sh("ip link add %s type vxlan id 7 dev %s "
				   "dstport 4789", vx, t_a), "");
	vbr_sh("ip link set %s up", vx);
	snprintf(args, sizeof(args), "wire=%s:%s", t_kind, vx);
	ret = vbr_test_vdev_init("net_vbr_vx", args);
	if (ret == 0) {
		struct rte_eth_conf conf = { 0 };
		int r0 = 0, r1 = 0, r2 = 0;

		ret = rte_eth_dev_get_port_by_name("net_vbr_vx", &p);
		/*
		 * Configure makes the port's MTU the interface's: ethdev's
		 * 1500 is more than the VXLAN carries, refused (as mlx5
		 * refuses a configure whose MTU its netdev does not take);
		 * the VXLAN's own 1450 is taken.
		 */
		if (ret == 0) {
			r0 = vbr_test_port_config(p, &conf, 1, NB_DESC,
						  NB_DESC, mp);
			conf.rxmode.mtu = 1450;
			ret = vbr_test_port_config(p, &conf, 1, NB_DESC,
						   NB_DESC, mp);
			if (r0 != -EINVAL)
				ret = -1;
		}
		if (ret == 0) {
			r1 = rte_eth_dev_set_mtu(p, 1460);
			r2 = rte_eth_dev_set_mtu(p, 1400);
			printf("    vxlan: configure at 1500: %d; mtu 1460: "
			       "%d, 1400: %d, now %u\n", r0, r1, r2,
			       vbr_if_mtu(vx));
			ret = r1 == -EINVAL && r2 == 0 &&
				vbr_if_mtu(vx) == 1400 ? 0 : -1;
		}
		rte_eth_dev_close(p);
		rte_vdev_uninit("net_vbr_vx");
	}
	vbr_sh("ip link del %s", vx);
	TEST_ASSERT_SUCCESS(ret, "configure at MTU 1500 and MTU 1460 refused, "
			    "1450 and 1400 taken, on VXLAN");
	return TEST_SUCCESS;
}

static int
suite_setup(void)
{
	int pid = (int)getpid();

	if (geteuid() != 0)
		TEST_SKIP("not root");
	if (vbr_sh("ip netns list >/dev/null 2>&1") != 0)
		TEST_SKIP("no `ip netns`");
	snprintf(t_a, sizeof(t_a), "vba%da", pid);
	snprintf(t_b, sizeof(t_b), "vba%db", pid);
	snprintf(t_ns, sizeof(t_ns), "vba%d", pid);
	if (vbr_sh("ip netns add %s", t_ns) != 0)
		TEST_SKIP("cannot create a network namespace");
	t_created = true;
	atexit(cleanup);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	if (vbr_veth_make(t_a, t_b, t_ns) != 0 || peer_open() != 0) {
		printf("cannot set the veth pair up\n");
		return TEST_FAILED;
	}
	return TEST_SUCCESS;
}

static void
suite_teardown(void)
{
	cleanup();
}

static struct unit_test_suite suite_afp = {
	.name = "vbr af_packet ports",
	.setup = suite_setup,
	.teardown = suite_teardown,
	.cases = {
		TEST_CASE(test_same_interface),
		TEST_CASE(test_short_padded),
		TEST_CASE(test_mtu),
		TEST_CASE(test_configure_sets_mtu),
		TEST_CASE(test_wire_drops),
		TEST_CASE(test_wire_errors),
		TEST_CASE(test_removal_under_traffic),
		TEST_CASE(test_removal),
		TEST_CASES_END(),
	},
};

int
main(int argc, char **argv)
{
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && (strcmp(argv[2], "af_packet") == 0 ||
			  strcmp(argv[2], "af_xdp") == 0))
		t_kind = argv[2];
	else if (argc != 2) {
		fprintf(stderr, "usage: %s <librte_net_vbr.so> "
			"[af_packet|af_xdp]\n", argv[0]);
		return 2;
	}
	if (geteuid() != 0) {
		printf("SKIP: not root\n");
		return TEST_SKIPPED;
	}
	if (is_xdp()) {
		if (!vbr_has_af_xdp()) {
			printf("SKIP: the kernel has no AF_XDP\n");
			return TEST_SKIPPED;
		}
		suite_afp.name = "vbr af_xdp ports";
	}
	if (vbr_test_eal_init(argv[0], argv[1], "pmd.net.vbr:info", NULL,
			      NULL) != 0)
		return 1;
	mp = vbr_test_pool("vbr_afp", NB_MBUF);
	if (mp == NULL)
		return 1;
	ret = unit_test_suite_runner(&suite_afp);
	vbr_test_fini(mp);
	return ret;
}
