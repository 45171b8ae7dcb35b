/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * swverbs counters objects: ibv_create_counters(3),
 * ibv_attach_counters_point_flow(3), ibv_read_counters(3) and their errno
 * values; binding by IBV_FLOW_SPEC_ACTION_COUNT, counts of delivered,
 * dropped and out-of-buffer frames exact in packets and bytes, flows
 * accumulating into one object, late points, reads from another thread
 * while the engine counts, counted rules churning under traffic, attaches
 * racing a bind, a shared object's flow destroyed under traffic.
 */

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#include "swv_test_util.h"

static int
test_create_destroy(void)
{
	struct ibv_counters_init_attr ia;
	struct ibv_counters *c;
	struct ibv_context *ctx;
	int i;

	TEST_ASSERT_SUCCESS(swv_device_create("c0", "loop", NULL), "");
	ctx = t_open("c0");
	TEST_ASSERT_NOT_NULL(ctx, "");
	memset(&ia, 0, sizeof(ia));
	errno = 0;
	TEST_ASSERT_NULL(swv_create_counters(NULL, &ia), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "NULL context");
	errno = 0;
	TEST_ASSERT_NULL(swv_create_counters(ctx, NULL), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "NULL init_attr");
	ia.comp_mask = 1;
	errno = 0;
	TEST_ASSERT_NULL(swv_create_counters(ctx, &ia), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "comp_mask");
	c = t_counters(ctx);
	TEST_ASSERT_NOT_NULL(c, "errno %d", errno);
	TEST_ASSERT(c->context == ctx, "counters->context");
	TEST_ASSERT_EQUAL(swv_close_device(ctx), EBUSY, "counters still exist");
	TEST_ASSERT_EQUAL(swv_destroy_counters(NULL), EINVAL, "");
	TEST_ASSERT_SUCCESS(swv_destroy_counters(c), "");
	/* Many objects, each with points, all freed. */
	for (i = 0; i < 1000; i++) {
		c = t_counters(ctx);
		TEST_ASSERT_NOT_NULL(c, "");
		TEST_ASSERT_SUCCESS(t_attach(c, IBV_COUNTER_BYTES, i % 64),
				    "");
		TEST_ASSERT_SUCCESS(swv_destroy_counters(c), "");
	}
	TEST_ASSERT_SUCCESS(swv_close_device(ctx), "");
	TEST_ASSERT_SUCCESS(swv_device_destroy("c0"), "");
	return TEST_SUCCESS;
}

static int
test_attach_errors(void)
{
	struct ibv_counter_attach_attr a;
	struct ibv_counters *c;
	struct ibv_flow *flow;
	struct tdev d;

	TEST_ASSERT_SUCCESS(t_setup_full(&d, "c1", "loop"), "");
	c = t_counters(d.ctx);
	TEST_ASSERT_NOT_NULL(c, "");
	memset(&a, 0, sizeof(a));
	a.counter_desc = IBV_COUNTER_PACKETS;
	TEST_ASSERT_EQUAL(swv_attach_counters_point_flow(NULL, &a, NULL),
			  EINVAL, "");
	TEST_ASSERT_EQUAL(swv_attach_counters_point_flow(c, NULL, NULL),
			  EINVAL, "");
	a.comp_mask = 1;
	TEST_ASSERT_EQUAL(swv_attach_counters_point_flow(c, &a, NULL), EINVAL,
			  "comp_mask");
	a.comp_mask = 0;
	a.index = SWV_MAX_COUNTERS;
	TEST_ASSERT_EQUAL(swv_attach_counters_point_flow(c, &a, NULL), EINVAL,
			  "index");
	a.index = UINT32_MAX;
	TEST_ASSERT_EQUAL(swv_attach_counters_point_flow(c, &a, NULL), EINVAL,
			  "index");
	TEST_ASSERT_EQUAL(t_attach(c, IBV_COUNTER_BYTES + 1, 0), ENOTSUP,
			  "unknown description");
	TEST_ASSERT_EQUAL(t_attach(c, 1000, 0), ENOTSUP, "");
	TEST_ASSERT_EQUAL(t_attach(c, -1, 0), ENOTSUP, "");
	/* Dynamic attach to an existing flow. */
	flow = t_flow_eth(d.rqp, d.mac, 0);
	TEST_ASSERT_NOT_NULL(flow, "");
	a.index = 0;
	TEST_ASSERT_EQUAL(swv_attach_counters_point_flow(c, &a, flow),
			  ENOTSUP, "flow != NULL");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(flow), "");
	/* The valid extremes. */
	TEST_ASSERT_SUCCESS(t_attach(c, IBV_COUNTER_PACKETS, 0), "");
	TEST_ASSERT_SUCCESS(t_attach(c, IBV_COUNTER_BYTES,
				     SWV_MAX_COUNTERS - 1), "");
	TEST_ASSERT_SUCCESS(swv_destroy_counters(c), "");
	t_teardown(&d);
	return TEST_SUCCESS;
}

static int
test_read(void)
{
	uint64_t v[SWV_MAX_COUNTERS + 8];
	struct ibv_counters *c;
	struct ibv_context *ctx;
	unsigned int i;

	TEST_ASSERT_SUCCESS(swv_device_create_flags("c2", "loop", NULL,
						    SWV_DEVICE_PROFILE_FULL), "");
	ctx = t_open("c2");
	TEST_ASSERT_NOT_NULL(ctx, "");
	c = t_counters(ctx);
	TEST_ASSERT_NOT_NULL(c, "");
	TEST_ASSERT_EQUAL(swv_read_counters(NULL, v, 1, 0), EINVAL, "");
	TEST_ASSERT_EQUAL(swv_read_counters(c, NULL, 1, 0), EINVAL, "");
	TEST_ASSERT_EQUAL(swv_read_counters(c, v, 1, 2), EINVAL, "flags");
	TEST_ASSERT_EQUAL(swv_read_counters(c, v, 1, 0x80000000u), EINVAL,
			  "flags");
	TEST_ASSERT_SUCCESS(swv_read_counters(c, NULL, 0, 0), "nothing");
	/* No point yet: every index reads 0. */
	memset(v, 0xa5, sizeof(v));
	TEST_ASSERT_SUCCESS(swv_read_counters(c, v, 8, 0), "");
	for (i = 0; i < 8; i++)
		TEST_ASSERT_EQUAL(v[i], 0, "index %u", i);
	TEST_ASSERT_SUCCESS(t_attach(c, IBV_COUNTER_PACKETS, 0), "");
	TEST_ASSERT_SUCCESS(t_attach(c, IBV_COUNTER_BYTES, 1), "");
	TEST_ASSERT_SUCCESS(t_attach(c, IBV_COUNTER_PACKETS, 1), "same index");
	TEST_ASSERT_SUCCESS(t_attach(c, IBV_COUNTER_PACKETS, 0), "twice");
	TEST_ASSERT_SUCCESS(t_attach(c, IBV_COUNTER_BYTES, 40), "far, grows");
	/* Values cleared at creation, with or without PREFER_CACHED, any
	 * ncounters: fewer than attached, and beyond the last index (0).
	 */
	memset(v, 0xa5, sizeof(v));
	TEST_ASSERT_SUCCESS(swv_read_counters(c, v, SWV_MAX_COUNTERS + 8, 0),
			    "");
	for (i = 0; i < SWV_MAX_COUNTERS + 8; i++)
		TEST_ASSERT_EQUAL(v[i], 0, "index %u", i);
	memset(v, 0xa5, sizeof(v));
	TEST_ASSERT_SUCCESS(swv_read_counters(c, v, 1,
			IBV_READ_COUNTERS_ATTR_PREFER_CACHED), "");
	TEST_ASSERT_EQUAL(v[0], 0, "");
	TEST_ASSERT_EQUAL(v[1], 0xa5a5a5a5a5a5a5a5ull, "ncounters respected");
	TEST_ASSERT_SUCCESS(swv_destroy_counters(c), "");
	TEST_ASSERT_SUCCESS(swv_close_device(ctx), "");
	TEST_ASSERT_SUCCESS(swv_device_destroy("c2"), "");
	return TEST_SUCCESS;
}

/*
 * Bound counters: traffic over a loop wire.
 */
#define TX_SLOTS 4
#define TX_BUF 2048
#define NRX 256

static uint8_t txbufs[TX_SLOTS][TX_BUF];
static uint8_t rxarea[NRX * TX_BUF];

static const uint8_t mac1[6] = { 0x02, 0, 0, 0, 0xc0, 1 };
static const uint8_t mac2[6] = { 0x02, 0, 0, 0, 0xc0, 2 };
static const uint8_t mac3[6] = { 0x02, 0, 0, 0, 0xc0, 3 };
static const uint8_t mac_src[6] = { 0x02, 0, 0, 0, 0xc0, 0xff };

/* A loop device with its MRs (no rule), frames in the slots, receives. */
static int
t_cnt_setup_flags(struct tport *t, const char *name, unsigned int flags)
{
	struct swv_device_attr attr = { .flags = flags, .engine = NULL };
	int i, ret;

	ret = t_port_setup(t, name, "loop", &attr, txbufs, sizeof(txbufs),
			   rxarea, sizeof(rxarea), false);
	if (ret != 0)
		return ret;
	t_frame(txbufs[0], TX_BUF, t->d.mac, mac_src, 0);
	t_frame(txbufs[1], TX_BUF, mac1, mac_src, 1);
	t_frame(txbufs[2], TX_BUF, mac2, mac_src, 2);
	t_frame(txbufs[3], TX_BUF, mac3, mac_src, 3);
	for (i = 0; i < NRX; i++) {
		ret = t_recv(t->d.rqp, t->rmr, rxarea + i * TX_BUF, TX_BUF,
			     i);
		if (ret != 0)
			return ret;
	}
	return 0;
}

/* t_cnt_setup_flags() on the default (mlx5) profile. */
static int
t_cnt_setup(struct tport *t, const char *name)
{
	return t_cnt_setup_flags(t, name, SWV_DEVICE_PROFILE_MLX5);
}

/*
 * Send n frames from slot (0: to the device's MAC, 1-3: mac1-mac3) with
 * lengths len(i), and wait until the port received them all.
 */
static int
t_send_frames(struct tport *t, int slot, uint32_t n, uint32_t (*len)(uint32_t),
	      uint64_t *bytes)
{
	struct swv_port_counters c0, c1;
	struct ibv_wc wc[64];
	uint32_t i, out = 0;
	int r;

	swv_query_port_counters(t->d.ctx, &c0);
	for (i = 0; i < n; i++) {
		while (out >= 128) {
			r = ibv_poll_cq(t->d.scq, 64, wc);
			if (r < 0)
				return -1;
			out -= r;
		}
		if (t_send(t->d.sqp, t->tmr, txbufs[slot], len(i), i) != 0)
			return -1;
		*bytes += len(i);
		out++;
	}
	while (out > 0) {
		r = t_poll(t->d.scq, wc, out < 64 ? out : 64, 5000);
		if (r <= 0)
			return -1;
		out -= r;
	}
	T_WAIT((swv_query_port_counters(t->d.ctx, &c1),
		c1.rx_frames >= c0.rx_frames + n));
	return c1.rx_frames == c0.rx_frames + n ? 0 : -1;
}

static uint32_t
len_var(uint32_t i)
{
	return 60 + (i * 37) % 1455;	/* 60 .. 1514 */
}

static uint32_t
len_64(uint32_t i)
{
	(void)i;
	return 64;
}

/* Specs packed one after the other, as ibv_create_flow(3) reads them. */
struct t_rule {
	union {
		struct ibv_flow_attr attr;
		uint8_t b[512];
	} u;
};

static void
t_rule_init(struct t_rule *r, enum ibv_flow_attr_type type)
{
	memset(r, 0, sizeof(*r));
	r->u.attr.type = type;
	r->u.attr.size = sizeof(r->u.attr);
	r->u.attr.port = 1;
}

static void
t_rule_add(struct t_rule *r, const void *spec, uint16_t size)
{
	memcpy(r->u.b + r->u.attr.size, spec, size);
	r->u.attr.size += size;
	r->u.attr.num_of_specs++;
}

static void
t_rule_count(struct t_rule *r, struct ibv_counters *c)
{
	struct ibv_flow_spec_counter_action s;

	memset(&s, 0, sizeof(s));
	s.type = IBV_FLOW_SPEC_ACTION_COUNT;
	s.size = sizeof(s);
	s.counters = c;
	t_rule_add(r, &s, sizeof(s));
}

/* A NORMAL rule on dmac with COUNT, and DROP if asked. */
static struct ibv_flow *
t_flow_cnt(struct ibv_qp *qp, const uint8_t *dmac, struct ibv_counters *c,
	   bool drop)
{
	struct ibv_flow_spec_action_drop sd;
	struct ibv_flow_spec_eth eth;
	struct t_rule r;

	t_rule_init(&r, IBV_FLOW_ATTR_NORMAL);
	memset(&eth, 0, sizeof(eth));
	eth.type = IBV_FLOW_SPEC_ETH;
	eth.size = sizeof(eth);
	memcpy(eth.val.dst_mac, dmac, 6);
	memset(eth.mask.dst_mac, 0xff, 6);
	t_rule_add(&r, &eth, sizeof(eth));
	t_rule_count(&r, c);
	if (drop) {
		memset(&sd, 0, sizeof(sd));
		sd.type = IBV_FLOW_SPEC_ACTION_DROP;
		sd.size = sizeof(sd);
		t_rule_add(&r, &sd, sizeof(sd));
	}
	return swv_create_flow(qp, &r.u.attr);
}

/* packets at 0, bytes at 1 */
static struct ibv_counters *
t_counters_pb(struct ibv_context *ctx)
{
	struct ibv_counters *c = t_counters(ctx);

	if (c == NULL)
		return NULL;
	if (t_attach(c, IBV_COUNTER_PACKETS, 0) != 0 ||
	    t_attach(c, IBV_COUNTER_BYTES, 1) != 0) {
		swv_destroy_counters(c);
		return NULL;
	}
	return c;
}

static int
test_bind_errors(void)
{
	struct ibv_flow_spec_counter_action bad;
	struct t_rule r;
	struct ibv_counters *c, *other;
	struct ibv_context *octx;
	struct ibv_flow *f1, *f2, *fd;
	struct tport t;

	TEST_ASSERT_SUCCESS(t_cnt_setup_flags(&t, "c3", SWV_DEVICE_PROFILE_FULL), "");
	TEST_ASSERT_SUCCESS(swv_device_create("c3o", "loop", NULL), "");
	octx = t_open("c3o");
	TEST_ASSERT_NOT_NULL(octx, "");
	c = t_counters_pb(t.d.ctx);
	TEST_ASSERT_NOT_NULL(c, "");
	other = t_counters_pb(octx);
	TEST_ASSERT_NOT_NULL(other, "");
	/* Bad COUNT specs. */
	errno = 0;
	TEST_ASSERT_NULL(t_flow_cnt(t.d.rqp, mac1, NULL, false), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "NULL counters");
	errno = 0;
	TEST_ASSERT_NULL(t_flow_cnt(t.d.rqp, mac1, other, false), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "counters of another device");
	t_rule_init(&r, IBV_FLOW_ATTR_ALL_DEFAULT);
	t_rule_count(&r, c);
	t_rule_count(&r, c);
	errno = 0;
	TEST_ASSERT_NULL(swv_create_flow(t.d.rqp, &r.u.attr), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "two COUNT specs");
	t_rule_init(&r, IBV_FLOW_ATTR_SNIFFER);
	t_rule_count(&r, c);
	errno = 0;
	TEST_ASSERT_NULL(swv_create_flow(t.d.rqp, &r.u.attr), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "COUNT on a SNIFFER rule");
	memset(&bad, 0, sizeof(bad));
	bad.type = IBV_FLOW_SPEC_ACTION_COUNT;
	bad.size = sizeof(bad) - 1;
	bad.counters = c;
	t_rule_init(&r, IBV_FLOW_ATTR_ALL_DEFAULT);
	t_rule_add(&r, &bad, sizeof(bad) - 1);
	errno = 0;
	TEST_ASSERT_NULL(swv_create_flow(t.d.rqp, &r.u.attr), "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "COUNT spec size");
	/* A failed create binds nothing. */
	TEST_ASSERT_SUCCESS(t_attach(c, IBV_COUNTER_PACKETS, 2), "");
	/* Bound: static attach and destroy are refused. */
	f1 = t_flow_cnt(t.d.rqp, mac1, c, false);
	TEST_ASSERT_NOT_NULL(f1, "errno %d", errno);
	TEST_ASSERT_EQUAL(t_attach(c, IBV_COUNTER_PACKETS, 3), EBUSY, "");
	TEST_ASSERT_EQUAL(swv_destroy_counters(c), EBUSY, "");
	/* A default rule may count too; all of them bind c. */
	t_rule_init(&r, IBV_FLOW_ATTR_ALL_DEFAULT);
	t_rule_count(&r, c);
	fd = swv_create_flow(t.d.rqp, &r.u.attr);
	TEST_ASSERT_NOT_NULL(fd, "errno %d", errno);
	f2 = t_flow_cnt(t.d.rqp, mac2, c, true);
	TEST_ASSERT_NOT_NULL(f2, "errno %d", errno);
	TEST_ASSERT_SUCCESS(swv_destroy_flow(f1), "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fd), "");
	TEST_ASSERT_EQUAL(t_attach(c, IBV_COUNTER_PACKETS, 3), EBUSY,
			  "still bound by f2");
	TEST_ASSERT_EQUAL(swv_destroy_counters(c), EBUSY, "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(f2), "");
	/* Unbound again. */
	TEST_ASSERT_SUCCESS(t_attach(c, IBV_COUNTER_PACKETS, 3), "");
	/* The man page's order: destroy the flow, then at once the counters. */
	f1 = t_flow_cnt(t.d.rqp, mac1, c, false);
	TEST_ASSERT_NOT_NULL(f1, "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(f1), "");
	TEST_ASSERT_SUCCESS(swv_destroy_counters(c), "");
	TEST_ASSERT_SUCCESS(swv_destroy_counters(other), "");
	TEST_ASSERT_SUCCESS(swv_close_device(octx), "");
	TEST_ASSERT_SUCCESS(swv_device_destroy("c3o"), "");
	t_port_teardown(&t);
	return TEST_SUCCESS;
}

/*
 * Two flows, one object: they accumulate. Points: packets at 0, bytes at 1,
 * packets + bytes at 2, packets twice at 3. A third flow with its own object
 * counts apart, and a flow without COUNT changes nothing.
 */
static int
test_accumulate(void)
{
	struct ibv_flow *f1, *f2, *f3, *f0;
	struct ibv_counters *c, *c3;
	uint64_t v[5], w[2], b1 = 0, b2 = 0, b3 = 0, b0 = 0;
	struct tport t;

	TEST_ASSERT_SUCCESS(t_cnt_setup_flags(&t, "c4", SWV_DEVICE_PROFILE_FULL), "");
	c = t_counters_pb(t.d.ctx);
	c3 = t_counters_pb(t.d.ctx);
	TEST_ASSERT_NOT_NULL(c, "");
	TEST_ASSERT_NOT_NULL(c3, "");
	TEST_ASSERT_SUCCESS(t_attach(c, IBV_COUNTER_PACKETS, 2), "");
	TEST_ASSERT_SUCCESS(t_attach(c, IBV_COUNTER_BYTES, 2), "");
	TEST_ASSERT_SUCCESS(t_attach(c, IBV_COUNTER_PACKETS, 3), "");
	TEST_ASSERT_SUCCESS(t_attach(c, IBV_COUNTER_PACKETS, 3), "");
	f1 = t_flow_cnt(t.d.rqp, mac1, c, false);
	f2 = t_flow_cnt(t.d.rqp, mac2, c, false);
	f3 = t_flow_cnt(t.d.rqp, mac3, c3, false);
	f0 = t_flow_eth(t.d.rqp, t.d.mac, 0);
	TEST_ASSERT(f1 != NULL && f2 != NULL && f3 != NULL && f0 != NULL,
		    "errno %d", errno);
	TEST_ASSERT_SUCCESS(t_send_frames(&t, 1, 300, len_var, &b1), "");
	TEST_ASSERT_SUCCESS(t_send_frames(&t, 2, 200, len_var, &b2), "");
	TEST_ASSERT_SUCCESS(t_send_frames(&t, 3, 7, len_64, &b3), "");
	TEST_ASSERT_SUCCESS(t_send_frames(&t, 0, 11, len_64, &b0), "");
	memset(v, 0xa5, sizeof(v));
	TEST_ASSERT_SUCCESS(swv_read_counters(c, v, 5, 0), "");
	TEST_ASSERT_EQUAL(v[0], 500, "packets of both flows");
	TEST_ASSERT_EQUAL(v[1], b1 + b2, "bytes of both flows");
	TEST_ASSERT_EQUAL(v[2], 500 + b1 + b2, "two descriptions at 2");
	TEST_ASSERT_EQUAL(v[3], 1000, "one description twice at 3");
	TEST_ASSERT_EQUAL(v[4], 0, "nothing at 4");
	TEST_ASSERT_SUCCESS(swv_read_counters(c3, w, 2,
			IBV_READ_COUNTERS_ATTR_PREFER_CACHED), "");
	TEST_ASSERT_EQUAL(w[0], 7, "");
	TEST_ASSERT_EQUAL(w[1], 7 * 64, "");
	TEST_ASSERT(t_counters_ok(t.d.ctx), "port counters invariant");
	/* Unbind, attach late: the new point starts from 0, old ones keep. */
	TEST_ASSERT_SUCCESS(swv_destroy_flow(f1), "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(f2), "");
	TEST_ASSERT_SUCCESS(t_attach(c, IBV_COUNTER_BYTES, 4), "");
	TEST_ASSERT_SUCCESS(swv_read_counters(c, v, 5, 0), "");
	TEST_ASSERT_EQUAL(v[0], 500, "");
	TEST_ASSERT_EQUAL(v[1], b1 + b2, "");
	TEST_ASSERT_EQUAL(v[4], 0, "late point starts from 0");
	/* Frames to no counting flow change nothing; rebind counts again. */
	f1 = t_flow_cnt(t.d.rqp, mac1, c, false);
	TEST_ASSERT_NOT_NULL(f1, "");
	b1 = 0;
	TEST_ASSERT_SUCCESS(t_send_frames(&t, 2, 5, len_64, &b2), "");
	TEST_ASSERT_SUCCESS(t_send_frames(&t, 1, 3, len_var, &b1), "");
	TEST_ASSERT_SUCCESS(swv_read_counters(c, v, 5, 0), "");
	TEST_ASSERT_EQUAL(v[0], 503, "");
	TEST_ASSERT_EQUAL(v[4], b1, "late point: frames since");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(f1), "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(f3), "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(f0), "");
	TEST_ASSERT_SUCCESS(swv_destroy_counters(c), "");
	TEST_ASSERT_SUCCESS(swv_destroy_counters(c3), "");
	TEST_ASSERT(t_counters_ok(t.d.ctx), "port counters invariant");
	t_port_teardown(&t);
	return TEST_SUCCESS;
}

/*
 * Specs packed back to back sit at any 4-byte offset: the COUNT spec (with
 * its 8-byte counters pointer) right after the 20-byte attr and 40-byte eth
 * spec is at 4 modulo 8, after a 12-byte TAG spec at 0 modulo 8. The device
 * reads both (a sanitizer build fails on a misaligned read).
 */
static int
test_spec_offsets(void)
{
	struct ibv_flow_spec_action_tag tag;
	struct ibv_flow_spec_counter_action sc;
	struct ibv_flow_spec_eth eth;
	struct ibv_counters *c[2];
	struct ibv_flow *f[2];
	uint64_t v[2], bytes[2] = { 0, 0 };
	struct t_rule r;
	unsigned int i;
	struct tport t;

	TEST_ASSERT_SUCCESS(t_cnt_setup(&t, "c10"), "");
	for (i = 0; i < 2; i++) {
		c[i] = t_counters_pb(t.d.ctx);
		TEST_ASSERT_NOT_NULL(c[i], "");
		t_rule_init(&r, IBV_FLOW_ATTR_NORMAL);
		memset(&eth, 0, sizeof(eth));
		eth.type = IBV_FLOW_SPEC_ETH;
		eth.size = sizeof(eth);
		memcpy(eth.val.dst_mac, i == 0 ? mac1 : mac2, 6);
		memset(eth.mask.dst_mac, 0xff, 6);
		t_rule_add(&r, &eth, sizeof(eth));
		if (i == 1) {
			memset(&tag, 0, sizeof(tag));
			tag.type = IBV_FLOW_SPEC_ACTION_TAG;
			tag.size = sizeof(tag);
			tag.tag_id = 7;
			t_rule_add(&r, &tag, sizeof(tag));
		}
		TEST_ASSERT_EQUAL(r.u.attr.size % 8, i == 0 ? 4 : 0,
				  "COUNT spec offset");
		memset(&sc, 0, sizeof(sc));
		sc.type = IBV_FLOW_SPEC_ACTION_COUNT;
		sc.size = sizeof(sc);
		sc.counters = c[i];
		t_rule_add(&r, &sc, sizeof(sc));
		f[i] = swv_create_flow(t.d.rqp, &r.u.attr);
		TEST_ASSERT_NOT_NULL(f[i], "rule %u: errno %d", i, errno);
	}
	TEST_ASSERT_SUCCESS(t_send_frames(&t, 1, 5, len_var, &bytes[0]), "");
	TEST_ASSERT_SUCCESS(t_send_frames(&t, 2, 9, len_64, &bytes[1]), "");
	for (i = 0; i < 2; i++) {
		TEST_ASSERT_SUCCESS(swv_read_counters(c[i], v, 2, 0), "");
		TEST_ASSERT_EQUAL(v[0], i == 0 ? 5 : 9, "rule %u packets", i);
		TEST_ASSERT_EQUAL(v[1], bytes[i], "rule %u bytes", i);
		TEST_ASSERT_SUCCESS(swv_destroy_flow(f[i]), "");
		TEST_ASSERT_SUCCESS(swv_destroy_counters(c[i]), "");
	}
	t_port_teardown(&t);
	return TEST_SUCCESS;
}

/* DROP + COUNT counts the dropped frames; so do frames out of buffer. */
static int
test_drop_count(void)
{
	struct swv_port_counters p0, p1;
	struct ibv_flow *fdrop, *fnobuf;
	struct ibv_counters *c, *cn;
	uint64_t v[2], bd = 0, bn = 0, bl = 0;
	struct ibv_wc wc[64];
	struct tport t;
	int got = 0, r, i;

	TEST_ASSERT_SUCCESS(t_cnt_setup(&t, "c5"), "");
	c = t_counters_pb(t.d.ctx);
	cn = t_counters_pb(t.d.ctx);
	TEST_ASSERT(c != NULL && cn != NULL, "");
	fdrop = t_flow_cnt(t.d.rqp, mac1, c, true);
	fnobuf = t_flow_cnt(t.d.rqp, mac2, cn, false);
	TEST_ASSERT(fdrop != NULL && fnobuf != NULL, "errno %d", errno);
	swv_query_port_counters(t.d.ctx, &p0);
	TEST_ASSERT_SUCCESS(t_send_frames(&t, 1, 1000, len_var, &bd), "");
	/* 256 WQEs posted: 400 frames, 144 of them out of buffer. */
	TEST_ASSERT_SUCCESS(t_send_frames(&t, 2, 400, len_var, &bn), "");
	swv_query_port_counters(t.d.ctx, &p1);
	TEST_ASSERT_EQUAL(p1.rx_dropped - p0.rx_dropped, 1000, "");
	TEST_ASSERT_EQUAL(p1.rx_delivered - p0.rx_delivered, NRX, "");
	TEST_ASSERT_EQUAL(p1.rx_out_of_buffer - p0.rx_out_of_buffer,
			  400 - NRX, "");
	TEST_ASSERT_SUCCESS(swv_read_counters(c, v, 2, 0), "");
	TEST_ASSERT_EQUAL(v[0], 1000, "dropped frames counted");
	TEST_ASSERT_EQUAL(v[1], bd, "");
	TEST_ASSERT_SUCCESS(swv_read_counters(cn, v, 2, 0), "");
	TEST_ASSERT_EQUAL(v[0], 400, "delivered and out of buffer counted");
	TEST_ASSERT_EQUAL(v[1], bn, "");
	TEST_ASSERT(t_counters_ok(t.d.ctx), "port counters invariant");
	/* The length counted is the completions' byte_len. */
	bn = 0;
	while (got < NRX) {
		r = t_poll(t.d.rcq, wc, NRX - got < 64 ? NRX - got : 64, 2000);
		TEST_ASSERT(r > 0, "");
		for (i = 0; i < r; i++)
			bn += wc[i].byte_len;
		got += r;
	}
	for (i = 0; i < NRX; i++)
		bl += len_var(i);
	TEST_ASSERT_EQUAL(bn, bl, "byte_len of the delivered frames");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fdrop), "");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fnobuf), "");
	TEST_ASSERT_SUCCESS(swv_destroy_counters(c), "");
	TEST_ASSERT_SUCCESS(swv_destroy_counters(cn), "");
	t_port_teardown(&t);
	return TEST_SUCCESS;
}

/*
 * Reads from another thread while the engine counts: never torn, never
 * decreasing, packets and bytes of the same frames.
 */
struct reader {
	struct ibv_counters *c;
	uint64_t min_len;	/**< of the frames counted */
	uint64_t max_len;
	uint32_t stop;
	uint64_t reads;
	uint64_t bad;		/**< reads that broke a rule */
	char why[160];
};

static void *
reader_main(void *arg)
{
	struct reader *r = arg;
	uint64_t v[2], pk = 0, by = 0;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		if (swv_read_counters(r->c, v, 2, r->reads & 1 ?
				      IBV_READ_COUNTERS_ATTR_PREFER_CACHED :
				      0) != 0) {
			r->bad++;
			snprintf(r->why, sizeof(r->why), "read failed");
			continue;
		}
		/* read by the sender while it sends */
		__atomic_store_n(&r->reads, r->reads + 1, __ATOMIC_RELAXED);
		if (v[0] < pk || v[1] < by) {
			r->bad++;
			snprintf(r->why, sizeof(r->why),
				 "went back: %" PRIu64 "/%" PRIu64 " after %"
				 PRIu64 "/%" PRIu64, v[0], v[1], pk, by);
		}
		if (v[1] < v[0] * r->min_len || v[1] > v[0] * r->max_len) {
			r->bad++;
			snprintf(r->why, sizeof(r->why),
				 "%" PRIu64 " packets, %" PRIu64 " bytes",
				 v[0], v[1]);
		}
		pk = v[0];
		by = v[1];
	}
	return NULL;
}

static int
test_concurrent_read(void)
{
	struct swv_port_counters p0, p1;
	struct ibv_counters *c;
	struct ibv_flow *f;
	struct reader rd;
	pthread_t th;
	uint64_t v[2], b = 0;
	struct tport t;
	int round;

	TEST_ASSERT_SUCCESS(t_cnt_setup(&t, "c6"), "");
	c = t_counters_pb(t.d.ctx);
	TEST_ASSERT_NOT_NULL(c, "");
	f = t_flow_cnt(t.d.rqp, mac1, c, true);
	TEST_ASSERT_NOT_NULL(f, "");
	memset(&rd, 0, sizeof(rd));
	rd.c = c;
	/* One length: a read mixing two instants would break bytes == 64 *
	 * packets.
	 */
	rd.min_len = 64;
	rd.max_len = 64;
	TEST_ASSERT_SUCCESS(pthread_create(&th, NULL, reader_main, &rd), "");
	swv_query_port_counters(t.d.ctx, &p0);
	/*
	 * 20 rounds, and more until the reader has read while frames were
	 * counted: on a busy machine it may not be scheduled for a while.
	 */
	for (round = 0; round < 20 || (round < 2000 &&
	     __atomic_load_n(&rd.reads, __ATOMIC_RELAXED) <= 100); round++)
		if (t_send_frames(&t, 1, 10000, len_64, &b) != 0)
			break;
	__atomic_store_n(&rd.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	TEST_ASSERT(b == (uint64_t)round * 10000 * 64, "traffic");
	swv_query_port_counters(t.d.ctx, &p1);
	printf("  %" PRIu64 " reads during %" PRIu64 " frames\n", rd.reads,
	       p1.rx_frames - p0.rx_frames);
	TEST_ASSERT_EQUAL(rd.bad, 0, "%s", rd.why);
	TEST_ASSERT(rd.reads > 100, "the reader ran");
	TEST_ASSERT_SUCCESS(swv_read_counters(c, v, 2, 0), "");
	TEST_ASSERT_EQUAL(v[0], (uint64_t)round * 10000, "");
	TEST_ASSERT_EQUAL(v[1], b, "");
	TEST_ASSERT(t_counters_ok(t.d.ctx), "port counters invariant");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(f), "");
	TEST_ASSERT_SUCCESS(swv_destroy_counters(c), "");
	t_port_teardown(&t);
	return TEST_SUCCESS;
}

/*
 * Counted rules and their objects created and destroyed in a loop while
 * another counted rule takes traffic: its counts stay exact, nothing leaks
 * (the context closes at the end).
 */
struct churn {
	struct tport *t;
	uint32_t stop;
	uint64_t loops;
	int err;
};

static void *
churn_main(void *arg)
{
	struct churn *ch = arg;
	struct ibv_counters *c;
	struct ibv_flow *f;

	while (!__atomic_load_n(&ch->stop, __ATOMIC_ACQUIRE)) {
		c = t_counters_pb(ch->t->d.ctx);
		if (c == NULL) {
			ch->err = errno;
			break;
		}
		f = t_flow_cnt(ch->t->d.rqp, mac2, c, ch->loops & 1);
		if (f == NULL) {
			ch->err = errno;
			break;
		}
		if (swv_destroy_flow(f) != 0 || swv_destroy_counters(c) != 0) {
			ch->err = EBUSY;
			break;
		}
		__atomic_store_n(&ch->loops, ch->loops + 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static int
test_churn(void)
{
	struct ibv_counters *c;
	struct ibv_flow *f;
	struct churn ch;
	pthread_t th;
	uint64_t v[2], b = 0, other = 0;
	bool failed = false;
	struct tport t;
	int round;

	TEST_ASSERT_SUCCESS(t_cnt_setup(&t, "c7"), "");
	c = t_counters_pb(t.d.ctx);
	TEST_ASSERT_NOT_NULL(c, "");
	f = t_flow_cnt(t.d.rqp, mac1, c, true);
	TEST_ASSERT_NOT_NULL(f, "");
	memset(&ch, 0, sizeof(ch));
	ch.t = &t;
	TEST_ASSERT_SUCCESS(pthread_create(&th, NULL, churn_main, &ch), "");
	/* 10 rounds, and more until the churn thread has run during them */
	for (round = 0; round < 10 || (round < 1000 &&
	     __atomic_load_n(&ch.loops, __ATOMIC_RELAXED) == 0); round++) {
		/* Frames to the churning rule: counted or not, never here. */
		if (t_send_frames(&t, 1, 5000, len_var, &b) != 0 ||
		    t_send_frames(&t, 2, 100, len_64, &other) != 0) {
			failed = true;
			break;
		}
	}
	__atomic_store_n(&ch.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	TEST_ASSERT(!failed, "traffic");
	TEST_ASSERT_SUCCESS(ch.err, "churn");
	printf("  %" PRIu64 " counted rules created and destroyed\n",
	       ch.loops);
	TEST_ASSERT(ch.loops > 0, "");
	TEST_ASSERT_SUCCESS(swv_read_counters(c, v, 2, 0), "");
	TEST_ASSERT_EQUAL(v[0], (uint64_t)round * 5000, "");
	TEST_ASSERT_EQUAL(v[1], b, "");
	TEST_ASSERT(t_counters_ok(t.d.ctx), "port counters invariant");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(f), "");
	TEST_ASSERT_SUCCESS(swv_destroy_counters(c), "");
	t_port_teardown(&t);
	return TEST_SUCCESS;
}

/*
 * An attach racing a flow that binds the same object, from two threads:
 * every attach either lands before the bind (and its point counts every
 * frame after it) or fails with EBUSY, and once one has failed none
 * succeeds: the object's one writer is the attach, then the engine.
 */
struct attach_race {
	struct ibv_counters *c;
	uint32_t ready;
	uint32_t go;
	int ok[SWV_MAX_COUNTERS];
	int err;
};

static void *
attach_race_main(void *arg)
{
	struct attach_race *ar = arg;
	bool busy = false;
	uint32_t i;
	int r;

	__atomic_store_n(&ar->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&ar->go, __ATOMIC_ACQUIRE))
		;
	for (i = 2; i < SWV_MAX_COUNTERS; i++) {
		r = t_attach(ar->c, IBV_COUNTER_PACKETS, i);
		if (r == 0 && !busy) {
			ar->ok[i] = 1;
		} else if (r == EBUSY) {
			busy = true;
		} else {
			ar->err = r != 0 ? r : EINVAL;
			break;
		}
	}
	return NULL;
}

static int
test_attach_race(void)
{
	uint64_t v[SWV_MAX_COUNTERS], b = 0;
	struct attach_race ar;
	struct ibv_flow *f;
	unsigned int n_ok = 0, round, i;
	pthread_t th;
	struct tport t;

	TEST_ASSERT_SUCCESS(t_cnt_setup(&t, "c8"), "");
	for (round = 0; round < 50; round++) {
		memset(&ar, 0, sizeof(ar));
		ar.c = t_counters_pb(t.d.ctx);
		TEST_ASSERT_NOT_NULL(ar.c, "");
		TEST_ASSERT_SUCCESS(pthread_create(&th, NULL,
						   attach_race_main, &ar), "");
		while (!__atomic_load_n(&ar.ready, __ATOMIC_ACQUIRE))
			sched_yield();
		__atomic_store_n(&ar.go, 1, __ATOMIC_RELEASE);
		/* Let the attaches get going in some rounds, not in others. */
		for (i = 0; i < round * 20; i++)
			__asm__ volatile("" ::: "memory");
		f = t_flow_cnt(t.d.rqp, mac1, ar.c, false);
		TEST_ASSERT_NOT_NULL(f, "round %u", round);
		pthread_join(th, NULL);
		TEST_ASSERT_SUCCESS(ar.err, "round %u", round);
		b = 0;
		TEST_ASSERT_SUCCESS(t_send_frames(&t, 1, 20, len_64, &b), "");
		TEST_ASSERT_SUCCESS(swv_read_counters(ar.c, v,
						      SWV_MAX_COUNTERS, 0), "");
		TEST_ASSERT_EQUAL(v[0], 20, "round %u", round);
		TEST_ASSERT_EQUAL(v[1], b, "round %u", round);
		for (i = 2; i < SWV_MAX_COUNTERS; i++) {
			TEST_ASSERT_EQUAL(v[i], ar.ok[i] ? 20u : 0u,
					  "round %u index %u", round, i);
			n_ok += ar.ok[i];
		}
		TEST_ASSERT_SUCCESS(swv_destroy_flow(f), "");
		TEST_ASSERT_SUCCESS(swv_destroy_counters(ar.c), "");
	}
	printf("  %u of %u racing attaches landed before the bind\n", n_ok,
	       50 * (SWV_MAX_COUNTERS - 2));
	t_port_teardown(&t);
	return TEST_SUCCESS;
}

/*
 * A flow destroyed under traffic, its object shared with another flow and
 * read from a third thread: the frames the engine counted through the
 * dying flow are kept (every frame a rule dropped is counted, exactly),
 * and reads never go back across the destroy.
 */
struct sender {
	struct tport *t;
	uint32_t stop;
	uint64_t bytes;
	int err;
};

static void *
sender_main(void *arg)
{
	struct sender *sd = arg;

	while (!__atomic_load_n(&sd->stop, __ATOMIC_ACQUIRE))
		if (t_send_frames(sd->t, 1, 1000, len_64, &sd->bytes) != 0) {
			sd->err = EIO;
			break;
		}
	return NULL;
}

static int
test_destroy_under_traffic(void)
{
	struct swv_port_counters p0, p1;
	struct ibv_flow *f1, *f2;
	struct ibv_counters *c;
	struct reader rd;
	struct sender sd;
	pthread_t rth, sth;
	uint64_t v[2], b = 0;
	struct tport t;

	TEST_ASSERT_SUCCESS(t_cnt_setup(&t, "c9"), "");
	c = t_counters_pb(t.d.ctx);
	TEST_ASSERT_NOT_NULL(c, "");
	f1 = t_flow_cnt(t.d.rqp, mac1, c, true);
	f2 = t_flow_cnt(t.d.rqp, mac2, c, true);
	TEST_ASSERT(f1 != NULL && f2 != NULL, "");
	memset(&rd, 0, sizeof(rd));
	rd.c = c;
	rd.min_len = 64;
	rd.max_len = 64;
	memset(&sd, 0, sizeof(sd));
	sd.t = &t;
	swv_query_port_counters(t.d.ctx, &p0);
	TEST_ASSERT_SUCCESS(pthread_create(&rth, NULL, reader_main, &rd), "");
	TEST_ASSERT_SUCCESS(pthread_create(&sth, NULL, sender_main, &sd), "");
	/* Until f1 has counted some of the sender's frames. */
	T_WAIT((swv_read_counters(c, v, 2, 0) == 0 && v[0] > 100));
	/* Frames to f1 are in flight through the engine. */
	TEST_ASSERT_SUCCESS(swv_destroy_flow(f1), "");
	/* Until the sender's frames go unmatched. */
	T_WAIT((swv_query_port_counters(t.d.ctx, &p1),
		p1.rx_no_match > p0.rx_no_match + 1000));
	__atomic_store_n(&sd.stop, 1, __ATOMIC_RELEASE);
	pthread_join(sth, NULL);
	TEST_ASSERT_SUCCESS(sd.err, "traffic");
	TEST_ASSERT_SUCCESS(t_send_frames(&t, 2, 100, len_64, &b), "");
	__atomic_store_n(&rd.stop, 1, __ATOMIC_RELEASE);
	pthread_join(rth, NULL);
	TEST_ASSERT_EQUAL(rd.bad, 0, "%s", rd.why);
	swv_query_port_counters(t.d.ctx, &p1);
	TEST_ASSERT_SUCCESS(swv_read_counters(c, v, 2, 0), "");
	printf("  %" PRIu64 " frames counted, %" PRIu64 " unmatched after "
	       "the destroy, %" PRIu64 " reads\n", v[0],
	       p1.rx_no_match - p0.rx_no_match, rd.reads);
	TEST_ASSERT_EQUAL(v[0], p1.rx_dropped - p0.rx_dropped,
			  "every frame a rule dropped, counted");
	TEST_ASSERT_EQUAL(v[1], 64 * v[0], "");
	TEST_ASSERT(v[0] > 100, "f1 counted before its destroy");
	TEST_ASSERT(p1.rx_no_match > p0.rx_no_match, "f1 gone");
	/* Destroyed while f1 may be dying: freed with it, never used. */
	TEST_ASSERT_SUCCESS(swv_destroy_flow(f2), "");
	TEST_ASSERT_SUCCESS(swv_destroy_counters(c), "");
	TEST_ASSERT(t_counters_ok(t.d.ctx), "port counters invariant");
	t_port_teardown(&t);
	return TEST_SUCCESS;
}

static const struct unit_test_suite counters_suite = {
	.name = "swverbs counters",
	.cases = {
		TEST_CASE(test_create_destroy),
		TEST_CASE(test_attach_errors),
		TEST_CASE(test_read),
		TEST_CASE(test_bind_errors),
		TEST_CASE(test_accumulate),
		TEST_CASE(test_spec_offsets),
		TEST_CASE(test_drop_count),
		TEST_CASE(test_concurrent_read),
		TEST_CASE(test_churn),
		TEST_CASE(test_attach_race),
		TEST_CASE(test_destroy_under_traffic),
		TEST_CASES_END(),
	},
};

int
main(void)
{
	return unit_test_suite_runner(&counters_suite);
}
