/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The port: swv_query_port_ex() (its errno cases and fields), link control
 * (swv_set_port_link(): the peer of a pair cable loses carrier and raises
 * its event) and the MTU (frames above it dropped on receive, counted; the
 * engine's periodic MTU check never undoes an Rx MTU set meanwhile).
 */

#include <poll.h>
#include <pthread.h>
#include <stdio.h>

#include "swv_priv.h"
#include "swv_test_util.h"

static int
test_query_port_ex_errors(void)
{
	struct swv_port_attr_ex a;
	struct ibv_port_attr p;
	struct ibv_context *ctx;

	TEST_ASSERT_SUCCESS(swv_device_create("px", "loop", NULL), "");
	ctx = t_open("px");
	TEST_ASSERT_NOT_NULL(ctx, "");
	memset(&a, 0, sizeof(a));
	TEST_ASSERT_EQUAL(swv_query_port_ex(NULL, 1, &a), EINVAL, "");
	TEST_ASSERT_EQUAL(swv_query_port_ex(ctx, 1, NULL), EINVAL, "");
	TEST_ASSERT_EQUAL(swv_query_port_ex(ctx, 2, &a), EINVAL, "port 2");
	TEST_ASSERT_EQUAL(swv_query_port_ex(ctx, 0, &a), EINVAL, "port 0");
	/* A bit past the known ones, alone or with known ones. */
	a.comp_mask = SWV_QUERY_PORT_EX_MASK + 1;
	TEST_ASSERT_EQUAL(swv_query_port_ex(ctx, 1, &a), EINVAL, "");
	a.comp_mask = SWV_QUERY_PORT_EX_STATE | (1u << 31);
	TEST_ASSERT_EQUAL(swv_query_port_ex(ctx, 1, &a), EINVAL, "");
	TEST_ASSERT_EQUAL(a.comp_mask, SWV_QUERY_PORT_EX_STATE | (1u << 31),
			  "the mask is left as given");
	/* Standard bits only (0 too): the standard query. */
	TEST_ASSERT_SUCCESS(swv_query_port(ctx, 1, &p), "");
	memset(&a, 0xff, sizeof(a));
	a.comp_mask = 0;
	TEST_ASSERT_SUCCESS(swv_query_port_ex(ctx, 1, &a), "");
	TEST_ASSERT(memcmp(&a.std, &p, sizeof(p)) == 0, "as swv_query_port");
	TEST_ASSERT_EQUAL(a.eth_mtu, 0, "not asked: zero");
	TEST_ASSERT_EQUAL(a.speed_mbps, 0, "not asked: zero");
	a.comp_mask = SWV_QUERY_PORT_EX_STD_MASK;
	TEST_ASSERT_SUCCESS(swv_query_port_ex(ctx, 1, &a), "");
	TEST_ASSERT(memcmp(&a.std, &p, sizeof(p)) == 0, "as swv_query_port");
	TEST_ASSERT_EQUAL(a.comp_mask, SWV_QUERY_PORT_EX_STD_MASK, "");
	TEST_ASSERT_SUCCESS(swv_close_device(ctx), "");
	TEST_ASSERT_SUCCESS(swv_device_destroy("px"), "");
	return TEST_SUCCESS;
}

static int
test_query_port_ex_fields(void)
{
	struct swv_port_attr_ex a;
	struct ibv_context *ctx;

	TEST_ASSERT_SUCCESS(swv_device_create("pf", "loop", NULL), "");
	ctx = t_open("pf");
	TEST_ASSERT_NOT_NULL(ctx, "");
	memset(&a, 0, sizeof(a));
	a.comp_mask = SWV_QUERY_PORT_EX_MASK;
	TEST_ASSERT_SUCCESS(swv_query_port_ex(ctx, 1, &a), "");
	TEST_ASSERT_EQUAL(a.std.state, IBV_PORT_ACTIVE, "");
	TEST_ASSERT_EQUAL(a.std.phys_state, 5, "LinkUp");
	TEST_ASSERT_EQUAL(a.std.link_layer, IBV_LINK_LAYER_ETHERNET, "");
	TEST_ASSERT_EQUAL(a.eth_mtu, 1500, "the in-memory wire's default");
	/* An Ethernet header and a VLAN tag below the largest frame. */
	TEST_ASSERT_EQUAL(a.eth_max_mtu, SWV_MAX_FRAME - 18, "");
	TEST_ASSERT_EQUAL(a.speed_mbps, 100000, "in-memory wire");
	TEST_ASSERT_EQUAL(a.std.active_mtu, IBV_MTU_1024, "1500 - 96");
	TEST_ASSERT_EQUAL(a.std.max_mtu, IBV_MTU_4096, "");
	/* The MTU set shows; above the wire's largest: refused. */
	TEST_ASSERT_EQUAL(swv_set_port_mtu(ctx, SWV_MAX_FRAME - 17), EINVAL,
			  "");
	TEST_ASSERT_EQUAL(swv_set_port_mtu(ctx, 0), EINVAL, "");
	TEST_ASSERT_SUCCESS(swv_set_port_mtu(ctx, 1400), "");
	TEST_ASSERT_SUCCESS(swv_query_port_ex(ctx, 1, &a), "");
	TEST_ASSERT_EQUAL(a.eth_mtu, 1400, "");
	TEST_ASSERT_EQUAL(a.std.active_mtu, IBV_MTU_1024, "");
	TEST_ASSERT_SUCCESS(swv_set_port_mtu(ctx, 1000), "");
	TEST_ASSERT_SUCCESS(swv_query_port_ex(ctx, 1, &a), "");
	TEST_ASSERT_EQUAL(a.std.active_mtu, IBV_MTU_512, "1000 - 96");
	TEST_ASSERT_SUCCESS(swv_close_device(ctx), "");
	TEST_ASSERT_SUCCESS(swv_device_destroy("pf"), "");
	return TEST_SUCCESS;
}

/* The shm wire: its slot bounds the MTU (eth_max_mtu and set_port_mtu). */
static int
test_query_port_ex_shm(void)
{
	struct swv_port_attr_ex a;
	struct ibv_context *ctx;
	char cable[64];

	snprintf(cable, sizeof(cable), "shm:pex%d", (int)getpid());
	TEST_ASSERT_SUCCESS(swv_device_create("ps", cable, NULL), "");
	ctx = t_open("ps");
	TEST_ASSERT_NOT_NULL(ctx, "");
	memset(&a, 0, sizeof(a));
	a.comp_mask = SWV_QUERY_PORT_EX_ETH_MAX_MTU;
	TEST_ASSERT_SUCCESS(swv_query_port_ex(ctx, 1, &a), "");
	TEST_ASSERT_EQUAL(a.eth_max_mtu, 2048 - 18,
			  "a 2048-byte slot");
	TEST_ASSERT_EQUAL(swv_set_port_mtu(ctx, a.eth_max_mtu + 1), EINVAL,
			  "");
	TEST_ASSERT_SUCCESS(swv_set_port_mtu(ctx, a.eth_max_mtu), "");
	TEST_ASSERT_EQUAL(swv_set_port_link(ctx, false), EOPNOTSUPP,
			  "a shm cable has no plug");
	TEST_ASSERT_SUCCESS(swv_close_device(ctx), "");
	TEST_ASSERT_SUCCESS(swv_device_destroy("ps"), "");
	return TEST_SUCCESS;
}

static int
port_state(struct ibv_context *ctx)
{
	struct ibv_port_attr p;

	if (swv_query_port(ctx, 1, &p) != 0)
		return -1;
	return p.state;
}

/* The next async event of ctx, or -1 when none comes within 5 s. */
static int
next_event(struct ibv_context *ctx)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	if (poll(&pfd, 1, 5000) != 1 || swv_get_async_event(ctx, &ev) != 0)
		return -1;
	swv_ack_async_event(&ev);
	return ev.event_type;
}

/* Devices on the default engine, the mlx5 profile. */
static const struct swv_device_attr dattr;

static int
test_link_pair(void)
{
	static uint8_t tbuf[256], rbuf[256];
	struct swv_port_counters c0, c1;
	struct tport a, b;
	struct ibv_wc wc;

	TEST_ASSERT_SUCCESS(t_port_setup(&a, "la", "pair:lnk", &dattr, tbuf,
					 sizeof(tbuf), rbuf, sizeof(rbuf),
					 false), "");
	TEST_ASSERT_SUCCESS(t_port_setup(&b, "lb", "pair:lnk", &dattr, tbuf,
					 sizeof(tbuf), rbuf, sizeof(rbuf),
					 false), "");
	/* a was alone on the cable: up once b plugs in; b was up at once. */
	TEST_ASSERT_EQUAL(next_event(a.d.ctx), IBV_EVENT_PORT_ACTIVE, "");
	/* Unplug a's end: both sides lose carrier, b raises its event. */
	TEST_ASSERT_SUCCESS(swv_set_port_link(a.d.ctx, false), "");
	TEST_ASSERT_EQUAL(next_event(b.d.ctx), IBV_EVENT_PORT_ERR, "");
	TEST_ASSERT_EQUAL(next_event(a.d.ctx), IBV_EVENT_PORT_ERR, "");
	TEST_ASSERT_EQUAL(port_state(a.d.ctx), IBV_PORT_DOWN, "");
	TEST_ASSERT_EQUAL(port_state(b.d.ctx), IBV_PORT_DOWN, "");
	/* Frames sent meanwhile: dropped, counted as into a loose cable. */
	TEST_ASSERT_SUCCESS(swv_query_port_counters(a.d.ctx, &c0), "");
	t_frame(tbuf, 64, b.d.mac, a.d.mac, 1);
	TEST_ASSERT_SUCCESS(t_send(b.d.sqp, b.tmr, tbuf, 64, 1), "");
	TEST_ASSERT_EQUAL(t_poll(b.d.scq, &wc, 1, 2000), 1, "");
	TEST_ASSERT_SUCCESS(swv_query_port_counters(b.d.ctx, &c1), "");
	TEST_ASSERT_EQUAL(c1.tx_link_down, 1, "");
	TEST_ASSERT_SUCCESS(swv_query_port_counters(a.d.ctx, &c1), "");
	TEST_ASSERT_EQUAL(c1.rx_frames, c0.rx_frames, "a received nothing");
	/* b cannot plug a's end back; a can. */
	TEST_ASSERT_SUCCESS(swv_set_port_link(b.d.ctx, true), "");
	TEST_ASSERT_EQUAL(port_state(b.d.ctx), IBV_PORT_DOWN, "");
	TEST_ASSERT_SUCCESS(swv_set_port_link(a.d.ctx, true), "");
	TEST_ASSERT_EQUAL(next_event(b.d.ctx), IBV_EVENT_PORT_ACTIVE, "");
	TEST_ASSERT_EQUAL(next_event(a.d.ctx), IBV_EVENT_PORT_ACTIVE, "");
	TEST_ASSERT_EQUAL(port_state(a.d.ctx), IBV_PORT_ACTIVE, "");
	t_port_teardown(&b);
	t_port_teardown(&a);
	return TEST_SUCCESS;
}

static int
test_link_loop(void)
{
	struct ibv_context *ctx;

	TEST_ASSERT_SUCCESS(swv_device_create("ll", "loop", NULL), "");
	ctx = t_open("ll");
	TEST_ASSERT_NOT_NULL(ctx, "");
	TEST_ASSERT_EQUAL(swv_set_port_link(NULL, false), EINVAL, "");
	TEST_ASSERT_SUCCESS(swv_set_port_link(ctx, false), "");
	TEST_ASSERT_EQUAL(next_event(ctx), IBV_EVENT_PORT_ERR, "");
	TEST_ASSERT_EQUAL(port_state(ctx), IBV_PORT_DOWN, "");
	TEST_ASSERT_SUCCESS(swv_set_port_link(ctx, true), "");
	TEST_ASSERT_EQUAL(next_event(ctx), IBV_EVENT_PORT_ACTIVE, "");
	TEST_ASSERT_SUCCESS(swv_close_device(ctx), "");
	TEST_ASSERT_SUCCESS(swv_device_destroy("ll"), "");
	return TEST_SUCCESS;
}

/*
 * Receive side MTU: with MTU 1400, frames up to 1418 bytes (an Ethernet
 * header and one VLAN tag above it, as a ConnectX's port MTU) are delivered,
 * longer ones (1422: two tags) dropped and counted in rx_mtu_dropped and
 * rx_errors.
 */
static int
test_rx_mtu_drop(void)
{
	static uint8_t tbuf[4096], rbuf[4096];
	static const uint32_t lens[] = { 1414, 1418, 1419, 1422, 1500, 60 };
	static const bool kept[] = { true, true, false, false, false, true };
	struct swv_port_counters c0, c1;
	struct swv_port_attr_ex pa;
	struct tport a, b;
	struct ibv_wc wc;
	unsigned int i;

	TEST_ASSERT_SUCCESS(t_port_setup(&a, "ma", "pair:mtu", &dattr, tbuf,
					 sizeof(tbuf), rbuf, sizeof(rbuf),
					 false), "");
	TEST_ASSERT_SUCCESS(t_port_setup(&b, "mb", "pair:mtu", &dattr, tbuf,
					 sizeof(tbuf), rbuf, sizeof(rbuf),
					 true), "");
	TEST_ASSERT_SUCCESS(swv_set_port_mtu(b.d.ctx, 1400), "");
	T_WAIT(port_state(a.d.ctx) == IBV_PORT_ACTIVE);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		TEST_ASSERT_SUCCESS(swv_query_port_counters(b.d.ctx, &c0), "");
		TEST_ASSERT_SUCCESS(t_recv(b.d.rqp, b.rmr, rbuf, sizeof(rbuf),
					   i), "");
		t_frame(tbuf, lens[i], b.d.mac, a.d.mac, (uint8_t)i);
		TEST_ASSERT_SUCCESS(t_send(a.d.sqp, a.tmr, tbuf, lens[i], i),
				    "");
		TEST_ASSERT_EQUAL(t_poll(a.d.scq, &wc, 1, 2000), 1, "");
		TEST_ASSERT_EQUAL(wc.status, IBV_WC_SUCCESS, "");
		T_WAIT(swv_query_port_counters(b.d.ctx, &c1) == 0 &&
		       c1.rx_frames > c0.rx_frames);
		TEST_ASSERT_EQUAL(c1.rx_frames, c0.rx_frames + 1, "len %u",
				  lens[i]);
		TEST_ASSERT_EQUAL(c1.rx_mtu_dropped - c0.rx_mtu_dropped,
				  (kept[i] ? 0 : 1), "len %u", lens[i]);
		TEST_ASSERT_EQUAL(c1.rx_errors - c0.rx_errors,
				  (kept[i] ? 0 : 1), "len %u", lens[i]);
		TEST_ASSERT_EQUAL(c1.rx_delivered - c0.rx_delivered,
				  (kept[i] ? 1 : 0), "len %u", lens[i]);
		if (kept[i]) {
			TEST_ASSERT_EQUAL(t_poll(b.d.rcq, &wc, 1, 2000), 1,
					  "");
			TEST_ASSERT_EQUAL(wc.byte_len, lens[i], "");
		}
		TEST_ASSERT(t_counters_ok(b.d.ctx), "invariant");
	}
	/* The MTU raised again: the long frame passes. */
	TEST_ASSERT_SUCCESS(swv_set_port_mtu(b.d.ctx, 1500), "");
	TEST_ASSERT_SUCCESS(swv_query_port_counters(b.d.ctx, &c0), "");
	t_frame(tbuf, 1500, b.d.mac, a.d.mac, 9);
	TEST_ASSERT_SUCCESS(t_send(a.d.sqp, a.tmr, tbuf, 1500, 9), "");
	TEST_ASSERT_EQUAL(t_poll(b.d.rcq, &wc, 1, 2000), 1, "");
	TEST_ASSERT_EQUAL(wc.byte_len, 1500, "");
	TEST_ASSERT_SUCCESS(swv_query_port_counters(b.d.ctx, &c1), "");
	TEST_ASSERT_EQUAL(c1.rx_mtu_dropped, c0.rx_mtu_dropped, "");
	/* An Rx MTU of its own: 1419 bytes dropped, the wire's MTU kept. */
	TEST_ASSERT_SUCCESS(swv_set_port_rx_mtu(b.d.ctx, 1400), "");
	memset(&pa, 0, sizeof(pa));
	pa.comp_mask = SWV_QUERY_PORT_EX_ETH_MTU;
	TEST_ASSERT_SUCCESS(swv_query_port_ex(b.d.ctx, 1, &pa), "");
	TEST_ASSERT_EQUAL(pa.eth_mtu, 1500, "the wire's MTU stays");
	t_frame(tbuf, 1419, b.d.mac, a.d.mac, 10);
	TEST_ASSERT_SUCCESS(t_send(a.d.sqp, a.tmr, tbuf, 1419, 10), "");
	T_WAIT(swv_query_port_counters(b.d.ctx, &c0) == 0 &&
	       c0.rx_mtu_dropped == c1.rx_mtu_dropped + 1);
	TEST_ASSERT_EQUAL(c0.rx_mtu_dropped, c1.rx_mtu_dropped + 1,
			  "1419 bytes above Rx MTU 1400");
	/* swv_set_port_mtu puts the drop back on the wire's MTU. */
	TEST_ASSERT_SUCCESS(swv_set_port_mtu(b.d.ctx, 1500), "");
	t_frame(tbuf, 1419, b.d.mac, a.d.mac, 11);
	TEST_ASSERT_SUCCESS(t_send(a.d.sqp, a.tmr, tbuf, 1419, 11), "");
	TEST_ASSERT_EQUAL(t_poll(b.d.rcq, &wc, 1, 2000), 1, "");
	TEST_ASSERT_EQUAL(wc.byte_len, 1419, "");
	TEST_ASSERT_EQUAL(swv_set_port_rx_mtu(NULL, 1400), EINVAL, "");
	t_port_teardown(&b);
	t_port_teardown(&a);
	return TEST_SUCCESS;
}

/*
 * The engine's MTU check against the control path. The wire's ops are
 * wrapped: the engine's first mtu() call after arming stalls until the
 * control path has set an Rx MTU (300 ms at most: with the fix, the
 * control path waits for the engine instead), and the engine's next pass
 * is held in tx_flush() until the test has read the longest frame the
 * device takes. Without the lock, the engine's stale result (from the
 * wire's MTU) lands over the Rx MTU's.
 */
static const struct swv_wire_ops *mtu_real_ops;
static struct swv_wire_ops mtu_slow_ops;
static uint32_t mtu_armed, mtu_calls, mtu_set, mtu_back, mtu_held, mtu_read;

static void
mtu_wait(const uint32_t *flag, unsigned int ms)
{
	uint64_t end = t_now_ms() + ms;

	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE) && t_now_ms() < end)
		usleep(100);
}

static uint32_t
mtu_slow(struct swv_wire *w)
{
	if (__atomic_load_n(&mtu_armed, __ATOMIC_ACQUIRE) &&
	    __atomic_add_fetch(&mtu_calls, 1, __ATOMIC_ACQ_REL) == 1) {
		mtu_wait(&mtu_set, 300);
		__atomic_store_n(&mtu_back, 1, __ATOMIC_RELEASE);
	}
	return mtu_real_ops->mtu != NULL ? mtu_real_ops->mtu(w) : 0;
}

static void
mtu_hold_flush(struct swv_wire *w)
{
	if (__atomic_load_n(&mtu_back, __ATOMIC_ACQUIRE) &&
	    !__atomic_exchange_n(&mtu_held, 1, __ATOMIC_ACQ_REL))
		mtu_wait(&mtu_read, 2000);
	mtu_real_ops->tx_flush(w);
}

static int
test_mtu_check_keeps_rx_mtu(void)
{
	struct swv_device *dev;
	struct ibv_context *ctx;
	uint32_t got;

	TEST_ASSERT_SUCCESS(swv_device_create("pmtu", "loop", NULL), "");
	ctx = t_open("pmtu");
	TEST_ASSERT_NOT_NULL(ctx, "");
	dev = swv_ctx_dev(ctx);
	TEST_ASSERT_EQUAL(SWV_LOAD(&dev->rx_max_frame),
			  1500 + SWV_MTU_OVERHEAD, "the wire's MTU at first");
	mtu_real_ops = dev->wire->ops;
	mtu_slow_ops = *mtu_real_ops;
	mtu_slow_ops.mtu = mtu_slow;
	mtu_slow_ops.tx_flush = mtu_hold_flush;
	__atomic_store_n(&dev->wire->ops, &mtu_slow_ops, __ATOMIC_RELEASE);
	__atomic_store_n(&mtu_armed, 1, __ATOMIC_RELEASE);
	/* The engine is in its check, with rx_mtu 0 read. */
	T_WAIT(__atomic_load_n(&mtu_calls, __ATOMIC_ACQUIRE) >= 1);
	TEST_ASSERT(__atomic_load_n(&mtu_calls, __ATOMIC_ACQUIRE) >= 1,
		    "the engine checks the MTU");
	TEST_ASSERT_SUCCESS(swv_set_port_rx_mtu(ctx, 1400), "");
	__atomic_store_n(&mtu_set, 1, __ATOMIC_RELEASE);
	/* The engine's next pass has begun: the stalled check has stored. */
	T_WAIT(__atomic_load_n(&mtu_held, __ATOMIC_ACQUIRE));
	got = SWV_LOAD(&dev->rx_max_frame);
	__atomic_store_n(&mtu_read, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&mtu_armed, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&dev->wire->ops, mtu_real_ops, __ATOMIC_RELEASE);
	TEST_ASSERT(__atomic_load_n(&mtu_held, __ATOMIC_ACQUIRE),
		    "the engine's next pass");
	TEST_ASSERT_EQUAL(got, 1400 + SWV_MTU_OVERHEAD,
			  "the Rx MTU's frame size, not the wire's (%u)", got);
	swv_close_device(ctx);
	TEST_ASSERT_SUCCESS(swv_device_destroy("pmtu"), "");
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite = {
	.name = "swverbs port",
	.cases = {
		TEST_CASE(test_query_port_ex_errors),
		TEST_CASE(test_query_port_ex_fields),
		TEST_CASE(test_query_port_ex_shm),
		TEST_CASE(test_link_pair),
		TEST_CASE(test_link_loop),
		TEST_CASE(test_rx_mtu_drop),
		TEST_CASE(test_mtu_check_keeps_rx_mtu),
		TEST_CASES_END(),
	},
};

int
main(void)
{
	return unit_test_suite_runner(&suite);
}
