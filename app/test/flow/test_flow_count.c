/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Flow counters on vbr: COUNT, indirect COUNT, query with reset, AGE.
 *
 * First the translation (vbr_flow.c is built into this program; no EAL):
 * where the IBV_FLOW_SPEC_ACTION_COUNT spec goes and which rules are
 * refused. Then packets: two vbr ports joined by a swverbs pair wire; port 0
 * sends UDP frames of known sizes, port 1 (2 Rx queues) holds the rules and
 * every count is compared with what was sent, exactly. Bytes are the length
 * of the frame as received (Ethernet header to the end of the payload, no
 * FCS): the test checks them against the pkt_len of the frames port 1
 * receives.
 *
 * usage: test-flow-count <librte_net_vbr.so>
 */

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_flow.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_udp.h>

#include "test.h"
#include "vbr_test_port.h"
#include "vbr_flow.h"

#define NB_RXQ 2
#define RING_SIZE 512
#define BURST 32
#define WAIT_MS 10000		/* the most a count or a frame is waited for */
#define STRESS_RULES 1000000
#define STRESS_LEAK_MAX (2u << 20)	/* heap growth allowed, bytes */

#define IP4(a, b, c, d) \
	(((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | \
	 ((uint32_t)(c) << 8) | (uint32_t)(d))
#define SRC(n) IP4(10, 0, 0, n)

#define ITEM(t, s, m) \
	{ .type = RTE_FLOW_ITEM_TYPE_##t, .spec = (s), .mask = (m) }
#define ITEM_END { .type = RTE_FLOW_ITEM_TYPE_END }
#define ACT(t, c) { .type = RTE_FLOW_ACTION_TYPE_##t, .conf = (c) }
#define ACT_END { .type = RTE_FLOW_ACTION_TYPE_END }

/* Frame lengths used, without FCS: 64 to 1514. */
static const uint16_t sizes[] = { 64, 128, 333, 1000, 1514, 90, 777 };

static struct rte_mempool *mp;
static uint16_t port0, port1;
static struct rte_ether_addr mac0, mac1;
static uint64_t rx_frames, rx_bytes;	/* port 1, since the last drain */
static uint16_t udp_sport = 1000;
static bool port1_stopped;	/* no Rx burst on a stopped port */

/*
 * Translation.
 */

static const struct rte_flow_attr ing = { .ingress = 1 };
static const struct rte_flow_item pat_eth[] = {
	ITEM(ETH, NULL, NULL), ITEM_END };
static const struct rte_flow_action_queue q0 = { .index = 0 };
static const struct rte_flow_action_count cnt_conf = { .id = 0 };
static const struct rte_flow_action_age age_1 = { .timeout = 1 };
static const struct rte_flow_action_age age_0 = { .timeout = 0 };

static int
prepare(const struct rte_flow_action *actions, struct vbr_flow_desc *d,
	struct rte_flow_error *err)
{
	static const struct vbr_flow_caps caps = { .nb_rx_queues = 4 };

	memset(err, 0, sizeof(*err));
	return vbr_flow_prepare(&caps, &ing, pat_eth, actions, d, err);
}

/*
 * A copy of the spec at index i of the attr of d, or NULL. Specs are
 * packed back to back after the 20-byte attr, so one may start at 4 mod 8
 * where its 64-bit fields want 8: read through a copy (UBSan: misaligned
 * access otherwise). The copy is the next call's too.
 */
static struct ibv_flow_spec spec_copy;

/* The offset of the spec at index i in d's buffer, or 0 (none). */
static size_t
spec_off(const struct vbr_flow_desc *d, unsigned int i)
{
	size_t off = sizeof(d->u.attr);
	__typeof__(spec_copy.hdr) hdr;
	unsigned int k;

	for (k = 0; k < d->u.attr.num_of_specs; k++) {
		if (k == i)
			return off;
		memcpy(&hdr, d->u.buf + off, sizeof(hdr));
		off += hdr.size;
	}
	return 0;
}

static const struct ibv_flow_spec *
spec_at(const struct vbr_flow_desc *d, unsigned int i)
{
	size_t off = spec_off(d, i);
	__typeof__(spec_copy.hdr) hdr;

	if (off == 0)
		return NULL;
	memcpy(&hdr, d->u.buf + off, sizeof(hdr));
	memset(&spec_copy, 0, sizeof(spec_copy));
	memcpy(&spec_copy, d->u.buf + off,
	       RTE_MIN((size_t)hdr.size, sizeof(spec_copy)));
	return &spec_copy;
}

static int
test_translate_count(void)
{
	static struct vbr_flow_desc d;
	const struct rte_flow_action count_q[] = {
		ACT(COUNT, &cnt_conf), ACT(QUEUE, &q0), ACT_END };
	const struct rte_flow_action count_null_drop[] = {
		ACT(COUNT, NULL), ACT(DROP, NULL), ACT_END };
	const struct rte_flow_action age_q[] = {
		ACT(AGE, &age_1), ACT(QUEUE, &q0), ACT_END };
	const struct rte_flow_action age_count_q[] = {
		ACT(QUEUE, &q0), ACT(AGE, &age_1), ACT(COUNT, NULL), ACT_END };
	const struct rte_flow_action indirect_q[] = {
		ACT(INDIRECT, (const void *)&d), ACT(QUEUE, &q0), ACT_END };
	const struct rte_flow_action plain_q[] = {
		ACT(QUEUE, &q0), ACT_END };
	const struct ibv_flow_spec *s;
	struct rte_flow_error err;

	/* COUNT: eth spec, then the count spec with no object yet */
	TEST_ASSERT_SUCCESS(prepare(count_q, &d, &err), "count: %s",
			    err.message);
	TEST_ASSERT_EQUAL(d.count, VBR_FLOW_COUNT_RULE, "count kind");
	TEST_ASSERT_EQUAL(d.u.attr.num_of_specs, 2, "specs");
	s = spec_at(&d, 1);
	TEST_ASSERT_EQUAL(s->hdr.type, IBV_FLOW_SPEC_ACTION_COUNT, "type");
	TEST_ASSERT_EQUAL(s->hdr.size,
			  sizeof(struct ibv_flow_spec_counter_action), "size");
	TEST_ASSERT_NULL(s->flow_count.counters, "object set at creation");
	TEST_ASSERT_EQUAL(spec_off(&d, 1), d.count_off, "count_off");
	TEST_ASSERT_EQUAL(d.attr_size, sizeof(d.u.attr) +
			  sizeof(struct ibv_flow_spec_eth) +
			  sizeof(struct ibv_flow_spec_counter_action), "size");
	TEST_ASSERT(!d.age, "no age");
	/* COUNT with no conf, on a drop rule: count before drop */
	TEST_ASSERT_SUCCESS(prepare(count_null_drop, &d, &err), "drop: %s",
			    err.message);
	TEST_ASSERT_EQUAL(d.fate, VBR_FLOW_FATE_DROP, "fate");
	TEST_ASSERT_EQUAL(spec_at(&d, 1)->hdr.type,
			  IBV_FLOW_SPEC_ACTION_COUNT, "count spec");
	TEST_ASSERT_EQUAL(spec_at(&d, 2)->hdr.type,
			  IBV_FLOW_SPEC_ACTION_DROP, "drop spec");
	/* AGE alone: a hidden counter */
	TEST_ASSERT_SUCCESS(prepare(age_q, &d, &err), "age: %s", err.message);
	TEST_ASSERT_EQUAL(d.count, VBR_FLOW_COUNT_HIDDEN, "hidden counter");
	TEST_ASSERT(d.age && d.age_timeout == 1 && d.age_context == NULL,
		    "age conf");
	TEST_ASSERT_EQUAL(spec_at(&d, 1)->hdr.type,
			  IBV_FLOW_SPEC_ACTION_COUNT, "count spec");
	/* AGE and COUNT: one counter, the rule's */
	TEST_ASSERT_SUCCESS(prepare(age_count_q, &d, &err), "age+count: %s",
			    err.message);
	TEST_ASSERT_EQUAL(d.count, VBR_FLOW_COUNT_RULE, "count kind");
	TEST_ASSERT_EQUAL(d.u.attr.num_of_specs, 2, "one count spec");
	/* INDIRECT: the handle is passed on */
	TEST_ASSERT_SUCCESS(prepare(indirect_q, &d, &err), "indirect: %s",
			    err.message);
	TEST_ASSERT_EQUAL(d.count, VBR_FLOW_COUNT_INDIRECT, "kind");
	TEST_ASSERT(d.indirect == (const void *)&d, "handle");
	/* no counter action: no spec, nothing left from before */
	TEST_ASSERT_SUCCESS(prepare(plain_q, &d, &err), "plain");
	TEST_ASSERT_EQUAL(d.count, VBR_FLOW_COUNT_NONE, "no count");
	TEST_ASSERT(!d.age && d.indirect == NULL, "no age, no handle");
	TEST_ASSERT_EQUAL(d.u.attr.num_of_specs, 1, "specs");
	return TEST_SUCCESS;
}

struct bad_case {
	const char *name;
	const struct rte_flow_action *actions;
	int err;
	const char *msg;
};

static int
test_translate_rejected(void)
{
	const struct rte_flow_action two_counts[] = {
		ACT(COUNT, NULL), ACT(COUNT, NULL), ACT(QUEUE, &q0), ACT_END };
	const struct rte_flow_action count_indirect[] = {
		ACT(COUNT, NULL), ACT(INDIRECT, (const void *)&q0),
		ACT(QUEUE, &q0), ACT_END };
	const struct rte_flow_action indirect_null[] = {
		ACT(INDIRECT, NULL), ACT(QUEUE, &q0), ACT_END };
	const struct rte_flow_action two_ages[] = {
		ACT(AGE, &age_1), ACT(AGE, &age_1), ACT(QUEUE, &q0), ACT_END };
	const struct rte_flow_action age_zero[] = {
		ACT(AGE, &age_0), ACT(QUEUE, &q0), ACT_END };
	const struct rte_flow_action age_null[] = {
		ACT(AGE, NULL), ACT(QUEUE, &q0), ACT_END };
	const struct rte_flow_action count_only[] = {
		ACT(COUNT, NULL), ACT_END };
	const struct bad_case cases[] = {
		{ "two counts", two_counts, ENOTSUP,
		  "binds one counters object" },
		{ "count and indirect", count_indirect, ENOTSUP,
		  "binds one counters object" },
		{ "indirect without handle", indirect_null, EINVAL,
		  "indirect action: no handle" },
		{ "two ages", two_ages, ENOTSUP, "one age action per rule" },
		{ "age timeout 0", age_zero, EINVAL, "timeout 0" },
		{ "age without conf", age_null, EINVAL, "no configuration" },
		{ "count without fate", count_only, EINVAL,
		  "a fate action" },
	};
	struct vbr_flow_desc *d = malloc(sizeof(*d));
	struct rte_flow_error err;
	unsigned int i;
	int ret;

	TEST_ASSERT_NOT_NULL(d, "malloc");
	for (i = 0; i < RTE_DIM(cases); i++) {
		ret = prepare(cases[i].actions, d, &err);
		if (ret != -cases[i].err || err.message == NULL ||
		    strstr(err.message, cases[i].msg) == NULL) {
			printf("%s: %d (%s), want %d (%s)\n", cases[i].name,
			       ret, err.message != NULL ? err.message : "-",
			       -cases[i].err, cases[i].msg);
			free(d);
			return TEST_FAILED;
		}
	}
	free(d);
	return TEST_SUCCESS;
}

static const struct unit_test_suite translate_suite = {
	.name = "vbr flow counters: translation",
	.cases = {
		TEST_CASE(test_translate_count),
		TEST_CASE(test_translate_rejected),
		TEST_CASES_END(),
	},
};

/*
 * Traffic.
 */

/* Drain port 1; add what came to rx_frames and rx_bytes. */
static void
drain(void)
{
	struct rte_mbuf *r[BURST];
	uint16_t q, n, k;

	if (port1_stopped)
		return;
	for (q = 0; q < NB_RXQ; q++) {
		do {
			n = rte_eth_rx_burst(port1, q, r, RTE_DIM(r));
			for (k = 0; k < n; k++) {
				rx_frames++;
				rx_bytes += r[k]->pkt_len;
				rte_pktmbuf_free(r[k]);
			}
		} while (n > 0);
	}
}

/*
 * Drain port 1 until want frames have come since the last reset (or
 * WAIT_MS passed), then once more 20 ms later so that a frame too many
 * is seen too; return rx_frames. With the thread and service models a
 * frame is delivered by the engine some time after the frames before it
 * were counted, so a count reached does not mean every frame is in.
 */
static uint64_t
expect_rx(uint64_t want)
{
	uint64_t deadline = rte_get_timer_cycles() +
			    rte_get_timer_hz() * WAIT_MS / 1000;

	do {
		drain();
	} while (rx_frames < want && rte_get_timer_cycles() < deadline);
	rte_delay_ms(20);
	drain();
	return rx_frames;
}

/* A UDP frame from 10.0.0.src to port 1, len bytes (no FCS). */
static struct rte_mbuf *
mk_frame(uint32_t src, uint16_t len)
{
	return vbr_test_udp4(mp, &mac1, &mac0, src, IP4(10, 0, 1, 1),
			     udp_sport++, 53, len);
}

/*
 * Send n frames from src, lengths cycling over sizes[]; drain port 1 on
 * the way. Return the bytes sent, or 0 when sending failed.
 */
static uint64_t
send_frames(uint32_t src, unsigned int n)
{
	struct rte_mbuf *pkts[BURST];
	uint64_t bytes = 0, deadline;
	unsigned int i = 0, k, b, sent;

	while (i < n) {
		b = RTE_MIN(n - i, (unsigned int)BURST);
		for (k = 0; k < b; k++) {
			pkts[k] = mk_frame(src, sizes[(i + k) % RTE_DIM(sizes)]);
			if (pkts[k] == NULL) {
				rte_pktmbuf_free_bulk(pkts, k);
				return 0;
			}
			bytes += pkts[k]->pkt_len;
		}
		sent = 0;
		deadline = rte_get_timer_cycles() + rte_get_timer_hz();
		while (sent < b && rte_get_timer_cycles() < deadline) {
			sent += rte_eth_tx_burst(port0, 0, pkts + sent,
						 b - sent);
			drain();
		}
		if (sent < b) {
			rte_pktmbuf_free_bulk(pkts + sent, b - sent);
			return 0;
		}
		i += b;
	}
	return bytes;
}

/* The bytes send_frames(n) sends. */
static uint64_t
bytes_of(unsigned int n)
{
	uint64_t b = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		b += sizes[i % RTE_DIM(sizes)];
	return b;
}

static int
query(struct rte_flow *f, bool reset, uint64_t *hits, uint64_t *bytes)
{
	struct rte_flow_action a = ACT(COUNT, NULL);
	struct rte_flow_query_count q = { .reset = reset };
	struct rte_flow_error err = { 0 };
	int ret;

	ret = rte_flow_query(port1, f, &a, &q, &err);
	if (ret != 0) {
		printf("query: %d %s\n", ret, err.message != NULL ?
		       err.message : "no message");
		return ret;
	}
	if (!q.hits_set || !q.bytes_set)
		return -EINVAL;
	*hits = q.hits;
	*bytes = q.bytes;
	return 0;
}

static int
query_handle(struct rte_flow_action_handle *h, bool reset, uint64_t *hits,
	     uint64_t *bytes)
{
	struct rte_flow_query_count q = { .reset = reset };
	struct rte_flow_error err = { 0 };
	int ret;

	ret = rte_flow_action_handle_query(port1, h, &q, &err);
	if (ret != 0) {
		printf("handle query: %d %s\n", ret, err.message != NULL ?
		       err.message : "no message");
		return ret;
	}
	*hits = q.hits;
	*bytes = q.bytes;
	return 0;
}

/*
 * Wait until the counter of f (or h) reaches hits, then check that it is
 * exactly hits and bytes, and (settle) stays so 20 ms later: no frame
 * counted twice.
 */
static int
expect_count(const char *what, struct rte_flow *f,
	     struct rte_flow_action_handle *h, uint64_t hits, uint64_t bytes,
	     bool settle)
{
	uint64_t deadline = rte_get_timer_cycles() +
			    rte_get_timer_hz() * WAIT_MS / 1000;
	uint64_t gh = 0, gb = 0;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		do {
			drain();
			if (f != NULL)
				TEST_ASSERT_SUCCESS(query(f, false, &gh, &gb),
						    "%s: query", what);
			else
				TEST_ASSERT_SUCCESS(query_handle(h, false,
						    &gh, &gb), "%s: query",
						    what);
		} while (gh < hits && rte_get_timer_cycles() < deadline);
		if (!settle)
			break;
		rte_delay_ms(20);
	}
	TEST_ASSERT_EQUAL(gh, hits, "%s: hits", what);
	TEST_ASSERT_EQUAL(gb, bytes, "%s: bytes", what);
	return TEST_SUCCESS;
}

#define EXPECT_COUNT(what, f, hits, bytes) \
	TEST_ASSERT_SUCCESS(expect_count(what, f, NULL, hits, bytes, true), \
			    "see above")
#define EXPECT_HANDLE(what, h, hits, bytes) \
	TEST_ASSERT_SUCCESS(expect_count(what, NULL, h, hits, bytes, true), \
			    "see above")

/* Rules: eth / ipv4 src is 10.0.0.src / udp, with the actions given. */
static struct rte_flow *
rule(uint32_t src, const struct rte_flow_action *actions)
{
	struct rte_flow_item_ipv4 ip = { .hdr.src_addr = 0 };
	struct rte_flow_item_ipv4 ipm = {
		.hdr.src_addr = RTE_BE32(0xffffffff) };
	struct rte_flow_item pat[] = {
		ITEM(ETH, NULL, NULL), ITEM(IPV4, &ip, &ipm),
		ITEM(UDP, NULL, NULL), ITEM_END };
	struct rte_flow_attr attr = { .ingress = 1 };
	struct rte_flow_error err = { 0 };
	struct rte_flow *f;

	ip.hdr.src_addr = rte_cpu_to_be_32(src);
	f = rte_flow_create(port1, &attr, pat, actions, &err);
	if (f == NULL)
		printf("create: %s (rte_errno %d)\n", err.message != NULL ?
		       err.message : "no message", rte_errno);
	return f;
}

#define RULE(var, src, act) do { \
	(var) = rule(src, act); \
	TEST_ASSERT_NOT_NULL(var, "rule %s", #act); \
} while (0)

#define DESTROY(f) \
	TEST_ASSERT_SUCCESS(vbr_test_flow_destroy(port1, f), "destroy " #f)

static const struct rte_flow_action_queue queue_1 = { .index = 1 };
static const uint16_t rss_queues[] = { 0, 1 };
static const struct rte_flow_action_rss rss_01 = {
	.types = RTE_ETH_RSS_NONFRAG_IPV4_UDP,
	.queue_num = 2,
	.queue = rss_queues,
};
static const struct rte_flow_action count_q1[] = {
	ACT(COUNT, NULL), ACT(QUEUE, &queue_1), ACT_END };
static const struct rte_flow_action count_drop[] = {
	ACT(COUNT, NULL), ACT(DROP, NULL), ACT_END };
static const struct rte_flow_action count_rss[] = {
	ACT(RSS, &rss_01), ACT(COUNT, NULL), ACT_END };
static const struct rte_flow_action plain_q1[] = {
	ACT(QUEUE, &queue_1), ACT_END };

static int
clean_state(void)
{
	struct rte_flow_error err;

	TEST_ASSERT_SUCCESS(rte_flow_flush(port1, &err), "flush");
	rte_delay_ms(20);
	drain();
	rx_frames = 0;
	rx_bytes = 0;
	return TEST_SUCCESS;
}

#define CLEAN() TEST_ASSERT_SUCCESS(clean_state(), "clean state")

/* N frames of known sizes: exact hits, bytes = the frames' pkt_len. */
static int
test_count_exact(void)
{
	struct rte_flow *f;
	uint64_t b;

	CLEAN();
	RULE(f, SRC(1), count_q1);
	EXPECT_COUNT("new rule", f, 0, 0);
	b = send_frames(SRC(1), 70);
	TEST_ASSERT_EQUAL(b, bytes_of(70), "sent");
	/* frames of another source do not count */
	TEST_ASSERT_NOT_EQUAL(send_frames(SRC(9), 10), 0, "send");
	EXPECT_COUNT("70 frames", f, 70, b);
	/* bytes: what the port received, Ethernet header on, no FCS */
	TEST_ASSERT_EQUAL(expect_rx(80), 80, "frames received");
	TEST_ASSERT_EQUAL(rx_bytes, b + bytes_of(10), "bytes received");
	DESTROY(f);
	return TEST_SUCCESS;
}

static int
test_count_reset(void)
{
	struct rte_flow *f;
	uint64_t h, b, b1, b2;

	CLEAN();
	RULE(f, SRC(1), count_q1);
	b1 = send_frames(SRC(1), 25);
	EXPECT_COUNT("before reset", f, 25, b1);
	TEST_ASSERT_SUCCESS(query(f, true, &h, &b), "query reset");
	TEST_ASSERT(h == 25 && b == b1, "reset returns the values: %" PRIu64
		    " %" PRIu64, h, b);
	EXPECT_COUNT("after reset", f, 0, 0);
	b2 = send_frames(SRC(1), 11);
	EXPECT_COUNT("since reset", f, 11, b2);
	TEST_ASSERT_SUCCESS(query(f, true, &h, &b), "query reset");
	TEST_ASSERT_SUCCESS(query(f, true, &h, &b), "query reset");
	TEST_ASSERT(h == 0 && b == 0, "second reset in a row: 0");
	DESTROY(f);
	return TEST_SUCCESS;
}

static int
test_count_drop(void)
{
	struct rte_flow *f;
	uint64_t b;

	CLEAN();
	RULE(f, SRC(2), count_drop);
	b = send_frames(SRC(2), 33);
	EXPECT_COUNT("drop rule", f, 33, b);
	TEST_ASSERT_EQUAL(rx_frames, 0, "dropped frames received");
	DESTROY(f);
	return TEST_SUCCESS;
}

static int
test_count_rss(void)
{
	struct rte_flow *f;
	uint64_t b;

	CLEAN();
	RULE(f, SRC(3), count_rss);
	b = send_frames(SRC(3), 64);
	EXPECT_COUNT("rss rule", f, 64, b);
	TEST_ASSERT_EQUAL(expect_rx(64), 64, "received");
	TEST_ASSERT_EQUAL(rx_bytes, b, "bytes received");
	DESTROY(f);
	return TEST_SUCCESS;
}

static struct rte_flow_action_handle *
handle_create(void)
{
	const struct rte_flow_indir_action_conf conf = { .ingress = 1 };
	const struct rte_flow_action a = ACT(COUNT, NULL);
	struct rte_flow_error err = { 0 };
	struct rte_flow_action_handle *h;

	h = rte_flow_action_handle_create(port1, &conf, &a, &err);
	if (h == NULL)
		printf("handle create: %s\n", err.message != NULL ?
		       err.message : "no message");
	return h;
}

/* One indirect counter on an rss rule and a drop rule: the sum. */
static int
test_indirect_shared(void)
{
	struct rte_flow_action_handle *h;
	struct rte_flow_error err;
	struct rte_flow *fa, *fb;
	uint64_t ba, bb, hh, hb;
	int ret;

	CLEAN();
	h = handle_create();
	TEST_ASSERT_NOT_NULL(h, "handle");
	{
		const struct rte_flow_action ind_rss[] = {
			ACT(INDIRECT, h), ACT(RSS, &rss_01), ACT_END };
		const struct rte_flow_action ind_drop[] = {
			ACT(INDIRECT, h), ACT(DROP, NULL), ACT_END };

		RULE(fa, SRC(1), ind_rss);
		RULE(fb, SRC(2), ind_drop);
	}
	ba = send_frames(SRC(1), 20);
	bb = send_frames(SRC(2), 15);
	EXPECT_HANDLE("shared", h, 35, ba + bb);
	TEST_ASSERT_EQUAL(expect_rx(20), 20,
			  "rss rule delivered, drop did not");
	/* a rule's COUNT query reads the counters it binds: the shared ones */
	EXPECT_COUNT("query through a rule", fa, 35, ba + bb);
	/* destroying the handle while rules use it */
	memset(&err, 0, sizeof(err));
	ret = rte_flow_action_handle_destroy(port1, h, &err);
	TEST_ASSERT_EQUAL(ret, -EBUSY, "destroy a used handle");
	TEST_ASSERT(err.message != NULL && strstr(err.message, "used by 2")
		    != NULL, "message: %s", err.message);
	/* reset through the handle */
	TEST_ASSERT_SUCCESS(query_handle(h, true, &hh, &hb), "reset");
	TEST_ASSERT(hh == 35 && hb == ba + bb, "reset returns the values");
	EXPECT_HANDLE("after reset", h, 0, 0);
	DESTROY(fb);
	ret = rte_flow_action_handle_destroy(port1, h, &err);
	TEST_ASSERT_EQUAL(ret, -EBUSY, "still used by one");
	ba = send_frames(SRC(1), 7);
	EXPECT_HANDLE("one rule left", h, 7, ba);
	DESTROY(fa);
	TEST_ASSERT_SUCCESS(rte_flow_action_handle_destroy(port1, h, &err),
			    "destroy the unused handle");
	return TEST_SUCCESS;
}

static int
test_indirect_errors(void)
{
	const struct rte_flow_indir_action_conf egress = { .egress = 1 };
	const struct rte_flow_indir_action_conf ingress = { .ingress = 1 };
	const struct rte_flow_action cnt = ACT(COUNT, NULL);
	const struct rte_flow_action drop = ACT(DROP, NULL);
	struct rte_flow_action_handle *h;
	struct rte_flow_error err;
	struct rte_flow_query_count q;
	int dummy = 0;

	CLEAN();
	memset(&err, 0, sizeof(err));
	h = rte_flow_action_handle_create(port1, &egress, &cnt, &err);
	TEST_ASSERT(h == NULL && rte_errno == ENOTSUP, "egress handle");
	h = rte_flow_action_handle_create(port1, &ingress, &drop, &err);
	TEST_ASSERT(h == NULL && rte_errno == ENOTSUP &&
		    strstr(err.message, "only count") != NULL,
		    "drop handle: %s", err.message);
	h = handle_create();
	TEST_ASSERT_NOT_NULL(h, "handle");
	TEST_ASSERT_EQUAL(rte_flow_action_handle_update(port1, h, &cnt,
							&err), -ENOTSUP,
			  "update");
	/* a handle of port 1 on port 0 */
	TEST_ASSERT_EQUAL(rte_flow_action_handle_query(port0, h, &q, &err),
			  -EINVAL, "query on another port");
	TEST_ASSERT(strstr(err.message, "another port") != NULL, "%s",
		    err.message);
	/* a pointer that is no handle, in a rule */
	{
		const struct rte_flow_action bogus[] = {
			ACT(INDIRECT, &dummy), ACT(QUEUE, &queue_1), ACT_END };
		const struct rte_flow_attr attr = { .ingress = 1 };
		const struct rte_flow_item pat[] = {
			ITEM(ETH, NULL, NULL), ITEM_END };

		TEST_ASSERT_EQUAL(rte_flow_validate(port1, &attr, pat, bogus,
						    &err), -EINVAL,
				  "validate with a bogus handle");
		TEST_ASSERT_NULL(rte_flow_create(port1, &attr, pat, bogus,
						 &err), "create");
		TEST_ASSERT_EQUAL(rte_errno, EINVAL, "create errno");
	}
	TEST_ASSERT_SUCCESS(rte_flow_action_handle_destroy(port1, h, &err),
			    "destroy");
	return TEST_SUCCESS;
}

static int
test_query_errors(void)
{
	struct rte_flow_action a_count = ACT(COUNT, NULL);
	struct rte_flow_action a_age = ACT(AGE, NULL);
	struct rte_flow_action a_rss = ACT(RSS, NULL);
	struct rte_flow_action age_q1[] = {
		ACT(AGE, &age_1), ACT(QUEUE, &queue_1), ACT_END };
	struct rte_flow_query_count qc;
	struct rte_flow_query_age qa;
	struct rte_flow_error err;
	struct rte_flow *f, *g;

	CLEAN();
	RULE(f, SRC(1), plain_q1);
	memset(&err, 0, sizeof(err));
	TEST_ASSERT_EQUAL(rte_flow_query(port1, f, &a_count, &qc, &err),
			  -EINVAL, "count query, no count");
	TEST_ASSERT(strstr(err.message, "has no count action") != NULL, "%s",
		    err.message);
	TEST_ASSERT_EQUAL(rte_flow_query(port1, f, &a_age, &qa, &err),
			  -EINVAL, "age query, no age");
	TEST_ASSERT(strstr(err.message, "has no age action") != NULL, "%s",
		    err.message);
	TEST_ASSERT_EQUAL(rte_flow_query(port1, f, &a_rss, &qc, &err),
			  -ENOTSUP, "rss query");
	TEST_ASSERT(strstr(err.message, "only count and age") != NULL, "%s",
		    err.message);
	/* AGE alone: its counter is hidden, COUNT cannot be queried */
	RULE(g, SRC(2), age_q1);
	TEST_ASSERT_EQUAL(rte_flow_query(port1, g, &a_count, &qc, &err),
			  -EINVAL, "count query on an age rule");
	TEST_ASSERT_SUCCESS(rte_flow_query(port1, g, &a_age, &qa, &err),
			    "age query");
	TEST_ASSERT(!qa.aged && qa.sec_since_last_hit_valid, "fresh rule");
	DESTROY(g);
	DESTROY(f);
	return TEST_SUCCESS;
}

/* Counters and their values (and reset baseline) survive stop/start. */
static int
test_stop_start(void)
{
	struct rte_flow_action_handle *h;
	struct rte_flow *f, *g;
	uint64_t b1, b2, b3, hh, hb;

	CLEAN();
	h = handle_create();
	TEST_ASSERT_NOT_NULL(h, "handle");
	RULE(f, SRC(1), count_q1);
	{
		const struct rte_flow_action ind_drop[] = {
			ACT(INDIRECT, h), ACT(DROP, NULL), ACT_END };

		RULE(g, SRC(2), ind_drop);
	}
	b1 = send_frames(SRC(1), 10);
	b2 = send_frames(SRC(2), 4);
	EXPECT_COUNT("before stop", f, 10, b1);
	EXPECT_HANDLE("before stop", h, 4, b2);
	TEST_ASSERT_SUCCESS(query_handle(h, true, &hh, &hb), "reset");
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	port1_stopped = true;
	EXPECT_COUNT("stopped", f, 10, b1);
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
	port1_stopped = false;
	EXPECT_COUNT("started", f, 10, b1);
	EXPECT_HANDLE("started, reset kept", h, 0, 0);
	b3 = send_frames(SRC(1), 5);
	b2 = send_frames(SRC(2), 6);
	EXPECT_COUNT("after start", f, 15, b1 + b3);
	EXPECT_HANDLE("after start", h, 6, b2);
	DESTROY(f);
	DESTROY(g);
	TEST_ASSERT_SUCCESS(rte_flow_action_handle_destroy(port1, h, NULL),
			    "destroy handle");
	return TEST_SUCCESS;
}

static volatile unsigned int aged_events;

static int
aged_cb(uint16_t port, enum rte_eth_event_type type, void *arg, void *ret)
{
	RTE_SET_USED(arg);
	RTE_SET_USED(ret);
	if (port == port1 && type == RTE_ETH_EVENT_FLOW_AGED)
		__atomic_add_fetch(&aged_events, 1, __ATOMIC_RELAXED);
	return 0;
}

static int
age_query(struct rte_flow *f, struct rte_flow_query_age *q)
{
	struct rte_flow_action a = ACT(AGE, NULL);
	struct rte_flow_error err = { 0 };

	memset(q, 0, sizeof(*q));
	return rte_flow_query(port1, f, &a, q, &err);
}

/*
 * Keep traffic on rule src, a few frames each 200 ms, for ms milliseconds
 * and then on until the idle rules x and y are aged (at most WAIT_MS
 * more): the alarm ticks that age them come as late as the EAL alarm
 * thread runs. Their AGE query, unlike rte_flow_get_aged_flows(), does
 * not re-arm the aged event.
 */
static int
keep_busy(uint32_t src, unsigned int ms, struct rte_flow *x,
	  struct rte_flow *y)
{
	struct rte_flow_query_age qx, qy;
	unsigned int t;

	for (t = 0; t < ms + WAIT_MS; t += 200) {
		if (t >= ms && age_query(x, &qx) == 0 &&
		    age_query(y, &qy) == 0 && qx.aged && qy.aged)
			break;
		if (send_frames(src, 2) == 0)
			return -1;
		rte_delay_ms(200);
		drain();
	}
	return 0;
}

/* Wait up to ms for want rules aged; return how many are. */
static int
aged_wait(int want, unsigned int ms)
{
	struct rte_flow_error err;
	unsigned int t;
	int n = 0;

	for (t = 0; t <= ms; t += 100) {
		n = rte_flow_get_aged_flows(port1, NULL, 0, &err);
		if (n >= want)
			break;
		rte_delay_ms(100);
	}
	return n;
}

/*
 * AGE: exactly the idle rules are reported; one event per batch. The busy
 * rule a ages after 4 s idle: frames every 200 ms keep it busy even when
 * a loaded machine (a sanitizer build, CI) runs this thread a second or
 * two late, which aged a 1 s rule while its traffic went on.
 */
static int
test_age(void)
{
	static int ctx_a, ctx_c;
	const struct rte_flow_action_age age_a = {
		.timeout = 4, .context = &ctx_a };
	const struct rte_flow_action_age age_s = { .timeout = 1 };
	const struct rte_flow_action_age age_b = { .timeout = 1 };
	const struct rte_flow_action_age age_c = {
		.timeout = 2, .context = &ctx_c };
	const struct rte_flow_action act_a[] = {
		ACT(AGE, &age_a), ACT(QUEUE, &queue_1), ACT_END };
	const struct rte_flow_action act_b[] = {
		ACT(AGE, &age_b), ACT(DROP, NULL), ACT_END };
	const struct rte_flow_action act_c[] = {
		ACT(COUNT, NULL), ACT(AGE, &age_c), ACT(QUEUE, &queue_1),
		ACT_END };
	const struct rte_flow_action act_s[] = {
		ACT(AGE, &age_s), ACT(QUEUE, &queue_1), ACT_END };
	struct rte_flow_query_age qa;
	struct rte_flow *fa, *fb, *fc;
	struct rte_flow_error err;
	void *ctx[8];
	int n, i;
	bool seen_b = false, seen_c = false;

	CLEAN();
	aged_events = 0;
	/* nothing aged, and the event armed */
	TEST_ASSERT_EQUAL(rte_flow_get_aged_flows(port1, NULL, 0, &err), 0,
			  "no aged rule");
	RULE(fa, SRC(1), act_a);
	RULE(fb, SRC(2), act_b);
	RULE(fc, SRC(3), act_c);
	TEST_ASSERT_SUCCESS(keep_busy(SRC(1), 3600, fb, fc), "traffic on a");
	n = rte_flow_get_aged_flows(port1, NULL, 0, &err);
	TEST_ASSERT_EQUAL(n, 2, "aged rules: b and c");
	n = rte_flow_get_aged_flows(port1, ctx, RTE_DIM(ctx), &err);
	TEST_ASSERT_EQUAL(n, 2, "contexts");
	for (i = 0; i < n; i++) {
		TEST_ASSERT(ctx[i] != &ctx_a, "busy rule a reported aged");
		seen_b |= ctx[i] == (void *)fb;
		seen_c |= ctx[i] == &ctx_c;
	}
	TEST_ASSERT(seen_b, "b reported by its rule pointer (no context)");
	TEST_ASSERT(seen_c, "c reported by its context");
	TEST_ASSERT_EQUAL(aged_events, 1, "one event for the batch");
	TEST_ASSERT_SUCCESS(age_query(fa, &qa), "query a");
	TEST_ASSERT(!qa.aged && qa.sec_since_last_hit_valid &&
		    qa.sec_since_last_hit <= 1, "a: aged %u, %u s",
		    qa.aged, qa.sec_since_last_hit);
	TEST_ASSERT_SUCCESS(age_query(fb, &qa), "query b");
	TEST_ASSERT(qa.aged && qa.sec_since_last_hit >= 1, "b: aged %u, %u s",
		    qa.aged, qa.sec_since_last_hit);
	/* traffic does not bring an aged rule back; only destroy does */
	TEST_ASSERT_NOT_EQUAL(send_frames(SRC(2), 3), 0, "send to b");
	rte_delay_ms(1100);
	TEST_ASSERT_SUCCESS(age_query(fb, &qa), "query b");
	TEST_ASSERT(qa.aged && qa.sec_since_last_hit <= 1, "b: aged %u, %u s",
		    qa.aged, qa.sec_since_last_hit);
	/* a goes idle; its ageing is a new batch: a second event */
	TEST_ASSERT_EQUAL(aged_wait(3, 10000), 3, "a aged once idle");
	n = rte_flow_get_aged_flows(port1, ctx, RTE_DIM(ctx), &err);
	TEST_ASSERT_EQUAL(n, 3, "all three aged");
	for (i = 0; i < 500 && aged_events < 2; i++)
		rte_delay_ms(10);	/* the event's callback may come later */
	TEST_ASSERT_EQUAL(aged_events, 2, "second event");
	DESTROY(fb);
	TEST_ASSERT_EQUAL(rte_flow_get_aged_flows(port1, NULL, 0, &err), 2,
			  "destroyed rule no longer reported");
	/* ageing goes on across stop/start: a rule made while stopped */
	DESTROY(fa);
	DESTROY(fc);
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	port1_stopped = true;
	RULE(fa, SRC(1), act_s);
	/*
	 * Its 1 s ages at the second tick of an alarm chain of any phase,
	 * each tick as late as the EAL alarm thread: wait for it, not for a
	 * fixed 2 s, and before the start so that it aged while stopped.
	 */
	TEST_ASSERT_EQUAL(aged_wait(1, 10000), 1,
			  "aged while the port was stopped");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
	port1_stopped = false;
	TEST_ASSERT_EQUAL(rte_flow_get_aged_flows(port1, NULL, 0, &err), 1,
			  "still aged after the start");
	DESTROY(fa);
	TEST_ASSERT_EQUAL(rte_flow_get_aged_flows(port1, NULL, 0, &err), 0,
			  "none left");
	return TEST_SUCCESS;
}

static size_t
heap_used(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/*
 * Create and destroy counted rules in a loop while traffic runs: one
 * long-lived counted rule receives traffic the whole time and its count is
 * exact at the end; the rules of the loop match traffic too; the heap is
 * back to where it was.
 */
static int
test_stress(void)
{
	struct rte_flow *live, *f;
	uint64_t sent_bytes = 0, sent = 0, t0 = 0, h, b;
	size_t base = 0, after;
	unsigned int i, warm = 5000;
	double secs;

	CLEAN();
	RULE(live, SRC(1), count_q1);
	for (i = 0; i < warm + STRESS_RULES; i++) {
		if (i == warm) {
			rte_delay_ms(50);
			malloc_trim(0);
			base = heap_used();
			t0 = rte_get_timer_cycles();
		}
		f = rule(SRC(2), (i & 1) ? count_drop : count_rss);
		TEST_ASSERT_NOT_NULL(f, "rule %u", i);
		if (i % 500 == 0) {
			b = send_frames(SRC(1), 8);
			TEST_ASSERT_NOT_EQUAL(b, 0, "send");
			sent_bytes += b;
			sent += 8;
			b = send_frames(SRC(2), 8);
			TEST_ASSERT_NOT_EQUAL(b, 0, "send");
			TEST_ASSERT_SUCCESS(expect_count("loop rule", f, NULL,
					    8, b, false), "see above");
			TEST_ASSERT_SUCCESS(query(f, true, &h, &b), "reset");
			TEST_ASSERT_SUCCESS(query(f, false, &h, &b), "query");
			TEST_ASSERT(h == 0 && b == 0, "after reset");
		}
		DESTROY(f);
	}
	secs = (double)(rte_get_timer_cycles() - t0) / rte_get_timer_hz();
	EXPECT_COUNT("live rule", live, sent, sent_bytes);
	DESTROY(live);
	CLEAN();
	rte_delay_ms(100);
	malloc_trim(0);
	after = heap_used();
	printf("  stress: %u counted rules created and destroyed in %.2f s "
	       "(%.0f/s), heap %zu -> %zu bytes\n", STRESS_RULES, secs,
	       STRESS_RULES / secs, base, after);
	TEST_ASSERT(after < base + STRESS_LEAK_MAX, "heap grew by %zu bytes",
		    after - base);
	return TEST_SUCCESS;
}

static int
port_setup(uint16_t port, uint16_t nb_rxq)
{
	struct rte_eth_conf conf = { 0 };

	conf.rxmode.mq_mode = RTE_ETH_MQ_RX_NONE;
	return vbr_test_port_config(port, &conf, nb_rxq, RING_SIZE, RING_SIZE,
				    mp);
}

static int
setup(void)
{
	TEST_ASSERT_SUCCESS(vbr_test_pair_ports(&port0, &port1), "ports");
	TEST_ASSERT_SUCCESS(port_setup(port0, 1), "setup port 0");
	TEST_ASSERT_SUCCESS(port_setup(port1, NB_RXQ), "setup port 1");
	TEST_ASSERT_SUCCESS(rte_eth_dev_callback_register(port1,
			    RTE_ETH_EVENT_FLOW_AGED, aged_cb, NULL),
			    "event callback");
	TEST_ASSERT_SUCCESS(vbr_test_pair_start(port0, port1), "start");
	TEST_ASSERT_SUCCESS(rte_eth_promiscuous_disable(port1), "promisc");
	TEST_ASSERT_SUCCESS(rte_eth_macaddr_get(port0, &mac0), "mac 0");
	TEST_ASSERT_SUCCESS(rte_eth_macaddr_get(port1, &mac1), "mac 1");
	rte_delay_ms(50);
	return TEST_SUCCESS;
}

static const struct unit_test_suite packet_suite = {
	.name = "vbr flow counters: packets",
	.setup = setup,
	.cases = {
		TEST_CASE(test_count_exact),
		TEST_CASE(test_count_reset),
		TEST_CASE(test_count_drop),
		TEST_CASE(test_count_rss),
		TEST_CASE(test_indirect_shared),
		TEST_CASE(test_indirect_errors),
		TEST_CASE(test_query_errors),
		TEST_CASE(test_stop_start),
		TEST_CASE(test_age),
		TEST_CASE(test_stress),
		TEST_CASES_END(),
	},
};

int
main(int argc, char **argv)
{
	int ret, ret2;

	if (argc != 2) {
		fprintf(stderr, "usage: %s <librte_net_vbr.so>\n", argv[0]);
		return 2;
	}
	ret = unit_test_suite_runner(&translate_suite);
	ret2 = vbr_test_eal_init(argv[0], argv[1], "pmd.net.vbr:notice",
				 "fcnt", NULL);
	if (ret2 != 0)	/* the translation part ran: its result */
		return ret2 == TEST_SKIPPED ? ret : 1;
	mp = vbr_test_pool("cnt_pkts", 4095);
	if (mp == NULL)
		return 1;
	ret2 = unit_test_suite_runner(&packet_suite);
	vbr_test_pair_fini(port0, port1, mp);
	if (ret == 1 || ret2 == 1)
		return 1;
	return ret2;
}
