/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * swverbs receive path: the cases fuzz-rx (app/fuzz/fuzz_rx.c) found where
 * the device and the verbs semantics disagreed, one case each. One device
 * on a loop wire; a frame's outcome is read from the port counters.
 */

#include <arpa/inet.h>
#include <netinet/in.h>

#if defined(__SANITIZE_ADDRESS__)
#define T_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_LSAN 1
#endif
#endif
#ifdef T_LSAN
#include <sanitizer/lsan_interface.h>
#endif

#include "swv_test_util.h"

static struct tdev d;
static struct ibv_mr *tmr, *rmr;
static uint8_t txbuf[2048];
static uint8_t rxbuf[64 * 2048];

enum outcome { O_ERR = -1, O_NOMATCH, O_DELIVERED };

/* Send a frame; tell whether the rule on d.rqp took it. */
static int
outcome(const uint8_t *frame, uint32_t len)
{
	struct swv_port_counters c0, c1;
	struct ibv_wc wc;

	memcpy(txbuf, frame, len);
	swv_query_port_counters(d.ctx, &c0);
	if (t_recv(d.rqp, rmr, rxbuf, 2048, 1) != 0 ||
	    t_send(d.sqp, tmr, txbuf, len, 0) != 0 ||
	    t_poll(d.scq, &wc, 1, 2000) != 1)
		return O_ERR;
	swv_query_port_counters(d.ctx, &c1);
	if (c1.rx_frames != c0.rx_frames + 1)
		return O_ERR;
	if (c1.rx_delivered == c0.rx_delivered + 1)
		return t_poll(d.rcq, &wc, 1, 2000) == 1 ? O_DELIVERED : O_ERR;
	/* the posted WQE stays for the next frame */
	return c1.rx_no_match == c0.rx_no_match + 1 ? O_NOMATCH : O_ERR;
}

/* A rule of nspec specs (len bytes) on d.rqp. */
static struct ibv_flow *
rule(const void *specs, size_t len, uint8_t nspec)
{
	uint8_t buf[sizeof(struct ibv_flow_attr) + 256]
		__attribute__((aligned(8)));
	struct ibv_flow_attr *a = (struct ibv_flow_attr *)buf;

	memset(buf, 0, sizeof(buf));
	a->type = IBV_FLOW_ATTR_NORMAL;
	a->port = 1;
	a->num_of_specs = nspec;
	memcpy(buf + sizeof(*a), specs, len);
	a->size = (uint16_t)(sizeof(*a) + len);
	return swv_create_flow(d.rqp, a);
}

/* Ethernet + outer IPv4 (protocol proto) at f; returns the length. */
static uint32_t
eth_ipv4(uint8_t *f, uint8_t proto, uint16_t plen)
{
	static const uint8_t hdr[34] = {
		0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00,
		0x45, 0, 0, 0, 0, 0, 0, 0, 64, 0, 0, 0,
		10, 0, 0, 1, 10, 0, 0, 2,
	};
	uint16_t tl = htons((uint16_t)(20 + plen));

	memcpy(f, hdr, sizeof(hdr));
	memcpy(f + 16, &tl, 2);
	f[23] = proto;
	return sizeof(hdr);
}

/*
 * GRE says what it carries in its protocol field: an IPv6 payload
 * (0x86dd) whose first byte reads 0x45 is a broken IPv6 header, not an
 * IPv4 one, and must not match an inner IPv4 rule; the same bytes with
 * protocol 0x0800 do.
 */
static int
test_gre_inner_by_protocol(void)
{
	struct {
		struct ibv_flow_spec_gre gre;
		struct ibv_flow_spec_ipv4 ip;
	} s;
	static const uint8_t inner[20] = {
		0x45, 0, 0, 20, 0, 0, 0, 0, 64, 17, 0, 0,
		10, 1, 1, 1, 10, 1, 1, 2,
	};
	struct ibv_flow *fl;
	uint8_t f[128];
	uint32_t n;

	memset(&s, 0, sizeof(s));
	s.gre.type = IBV_FLOW_SPEC_GRE;
	s.gre.size = sizeof(s.gre);
	s.ip.type = IBV_FLOW_SPEC_IPV4 | IBV_FLOW_SPEC_INNER;
	s.ip.size = sizeof(s.ip);
	s.ip.val.dst_ip = htonl(0x0a010102);
	s.ip.mask.dst_ip = 0xffffffff;
	fl = rule(&s, sizeof(s), 2);
	TEST_ASSERT_NOT_NULL(fl, "gre + inner ipv4 rule: %d", errno);
	n = eth_ipv4(f, IPPROTO_GRE, 24);
	f[n] = 0;
	f[n + 1] = 0;
	f[n + 2] = 0x08;	/* IPv4 */
	f[n + 3] = 0x00;
	memcpy(f + n + 4, inner, sizeof(inner));
	TEST_ASSERT_EQUAL(outcome(f, n + 24), O_DELIVERED,
			  "GRE 0x0800 carrying IPv4");
	f[n + 2] = 0x86;	/* IPv6, yet the bytes are IPv4's */
	f[n + 3] = 0xdd;
	TEST_ASSERT_EQUAL(outcome(f, n + 24), O_NOMATCH,
			  "GRE 0x86dd carrying bytes of an IPv4 header");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fl), "");
	return TEST_SUCCESS;
}

/*
 * Under LeakSanitizer (an ASan build): a live counters object with a point
 * past the inline ones holds its points array from pool memory, which LSan
 * must scan, or the array is reported as leaked (fuzz-rx's first finding:
 * libFuzzer checks leaks after each input). Skipped in other builds.
 */
static int
test_lsan_sees_pool(void)
{
#ifdef T_LSAN
	struct ibv_counters_init_attr ia = { 0 };
	struct ibv_counter_attach_attr a;
	struct ibv_counters *c;

	c = swv_create_counters(d.ctx, &ia);
	TEST_ASSERT_NOT_NULL(c, "");
	memset(&a, 0, sizeof(a));
	a.counter_desc = IBV_COUNTER_PACKETS;
	a.index = 3;
	TEST_ASSERT_SUCCESS(swv_attach_counters_point_flow(c, &a, NULL), "");
	TEST_ASSERT_EQUAL(__lsan_do_recoverable_leak_check(), 0,
			  "LeakSanitizer reports a live object's memory");
	TEST_ASSERT_SUCCESS(swv_destroy_counters(c), "");
	return TEST_SUCCESS;
#else
	TEST_SKIP("not an AddressSanitizer build");
#endif
}

static int
setup(void)
{
	TEST_ASSERT_SUCCESS(t_setup(&d, "rxedge", "loop"), "device");
	tmr = swv_reg_mr(d.pd, txbuf, sizeof(txbuf), 0);
	rmr = swv_reg_mr(d.pd, rxbuf, sizeof(rxbuf), IBV_ACCESS_LOCAL_WRITE);
	TEST_ASSERT(tmr != NULL && rmr != NULL, "mr: %d", errno);
	return TEST_SUCCESS;
}

static void
teardown(void)
{
	swv_dereg_mr(tmr);
	swv_dereg_mr(rmr);
	t_teardown(&d);
}

static const struct unit_test_suite suite = {
	.name = "swverbs rx edges",
	.setup = setup,
	.teardown = teardown,
	.cases = {
		TEST_CASE(test_gre_inner_by_protocol),
		TEST_CASE(test_lsan_sees_pool),
		TEST_CASES_END(),
	},
};

int
main(void)
{
	return unit_test_suite_runner(&suite);
}
