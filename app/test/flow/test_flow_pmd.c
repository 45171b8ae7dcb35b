/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * rte_flow on two vbr ports joined by a swverbs pair wire: port 0 sends,
 * port 1 (4 Rx queues) holds the rules; each check looks at the queue the
 * packets arrive on. Covers what swverbs steers today (Ethernet specs,
 * QUEUE/RSS fates): eth dst / eth type rules, priorities over the default
 * rules, stop/start, queue reconfiguration, isolated mode, promiscuous mode
 * next to user rules, destroy and flush.
 * usage: test-flow-pmd <librte_net_vbr.so>
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_flow.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "test.h"
#include "vbr_test_port.h"

#define NB_RXQ 4
#define NB_PKTS 16
#define TYPE_A 0x88b5
#define TYPE_B 0x88b6
#define WAIT_MS 300

static struct rte_mempool *mp;
static uint16_t port0, port1;
static struct rte_ether_addr mac1;

static const struct rte_ether_addr foreign_mac = {
	.addr_bytes = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x99 } };

static int
port_setup(uint16_t port, uint16_t nb_rxq)
{
	struct rte_eth_conf conf = { 0 };

	return vbr_test_port_config(port, &conf, nb_rxq, 256, 256, mp);
}

/* Send n frames of an EtherType to dst; count arrivals per queue of port1. */
static int
send_count(const struct rte_ether_addr *dst, uint16_t type,
	   uint32_t per_queue[NB_RXQ])
{
	struct rte_mbuf *pkts[NB_PKTS];
	uint64_t deadline;
	unsigned int i, sent, got = 0;
	uint16_t q;

	memset(per_queue, 0, NB_RXQ * sizeof(per_queue[0]));
	for (i = 0; i < NB_PKTS; i++) {
		struct rte_ether_hdr *eh;

		pkts[i] = rte_pktmbuf_alloc(mp);
		if (pkts[i] == NULL)
			return -1;
		eh = (struct rte_ether_hdr *)rte_pktmbuf_append(pkts[i], 64);
		memset(eh, 0, 64);
		eh->dst_addr = *dst;
		rte_eth_macaddr_get(port0, &eh->src_addr);
		eh->ether_type = rte_cpu_to_be_16(type);
	}
	sent = vbr_test_tx_all(port0, pkts, NB_PKTS, 1000);
	if (sent != NB_PKTS)
		return -1;
	deadline = rte_get_timer_cycles() +
		   rte_get_timer_hz() * WAIT_MS / 1000;
	while (rte_get_timer_cycles() < deadline) {
		struct rte_mbuf *r[32];
		uint16_t n, k;

		for (q = 0; q < NB_RXQ; q++) {
			n = rte_eth_rx_burst(port1, q, r, 32);
			for (k = 0; k < n; k++)
				rte_pktmbuf_free(r[k]);
			per_queue[q] += n;
			got += n;
		}
	}
	return got;
}

static struct rte_flow *
rule(const struct rte_ether_addr *dst, uint16_t type, uint32_t prio,
     uint16_t queue, struct rte_flow_error *err)
{
	struct rte_flow_attr attr = { .ingress = 1, .priority = prio };
	struct rte_flow_item_eth spec = { 0 }, mask = { 0 };
	struct rte_flow_action_queue q = { .index = queue };
	struct rte_flow_item pattern[] = {
		{ .type = RTE_FLOW_ITEM_TYPE_ETH, .spec = &spec,
		  .mask = &mask },
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	struct rte_flow_action actions[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &q },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};

	if (dst != NULL) {
		spec.dst = *dst;
		memset(&mask.dst, 0xff, sizeof(mask.dst));
	}
	if (type != 0) {
		spec.type = rte_cpu_to_be_16(type);
		mask.type = RTE_BE16(0xffff);
	}
	memset(err, 0x5a, sizeof(*err));
	return rte_flow_create(port1, &attr, pattern, actions, err);
}

#define EXPECT(dst, type, q, n) do { \
	uint32_t pq_[NB_RXQ]; \
	int got_ = send_count(dst, type, pq_); \
	TEST_ASSERT_EQUAL(got_, (n) < 0 ? 0 : NB_PKTS, \
			  "frames received (queues %u %u %u %u)", \
			  pq_[0], pq_[1], pq_[2], pq_[3]); \
	if ((n) > 0) \
		TEST_ASSERT_EQUAL(pq_[q], NB_PKTS, "on queue %u (%u %u %u %u)", \
				  (unsigned int)(q), pq_[0], pq_[1], pq_[2], \
				  pq_[3]); \
} while (0)

static int
test_queue_rules(void)
{
	struct rte_flow_error err;
	struct rte_flow *ft, *fd, *fp;
	uint64_t fake[32];

	/* default: our MAC reaches queue 0 (no RSS), foreign MAC dropped */
	EXPECT(&mac1, TYPE_A, 0, 1);
	EXPECT(&foreign_mac, TYPE_A, 0, -1);
	ft = rule(NULL, TYPE_A, 0, 2, &err);
	TEST_ASSERT_NOT_NULL(ft, "type rule: %s", err.message);
	EXPECT(&mac1, TYPE_A, 2, 1);
	EXPECT(&mac1, TYPE_B, 0, 1);
	/* a rule for a MAC the port does not own receives it */
	fd = rule(&foreign_mac, 0, 1, 3, &err);
	TEST_ASSERT_NOT_NULL(fd, "dst rule: %s", err.message);
	EXPECT(&foreign_mac, TYPE_B, 3, 1);
	/* both match: priority 0 (type) beats priority 1 (dst) */
	EXPECT(&foreign_mac, TYPE_A, 2, 1);
	/* a priority 0 rule on our MAC beats the internal MAC rule */
	fp = rule(&mac1, 0, 0, 1, &err);
	TEST_ASSERT_NOT_NULL(fp, "mac rule: %s", err.message);
	EXPECT(&mac1, TYPE_B, 1, 1);
	TEST_ASSERT_SUCCESS(rte_flow_destroy(port1, fp, &err), "destroy");
	EXPECT(&mac1, TYPE_B, 0, 1);
	/* promiscuous mode (internal ALL_DEFAULT) stays below user rules */
	TEST_ASSERT_SUCCESS(rte_eth_promiscuous_enable(port1), "promisc");
	EXPECT(&foreign_mac, TYPE_B, 3, 1);
	TEST_ASSERT_SUCCESS(rte_flow_destroy(port1, fd, &err), "destroy");
	EXPECT(&foreign_mac, TYPE_B, 0, 1);
	TEST_ASSERT_SUCCESS(rte_eth_promiscuous_disable(port1), "promisc off");
	EXPECT(&foreign_mac, TYPE_B, 0, -1);
	/* a handle that is not a rule of the port is an error with a message
	 * (a destroyed handle is freed memory: not checked, as in rte_flow)
	 */
	memset(&fake, 0, sizeof(fake));
	memset(&err, 0x5a, sizeof(err));
	TEST_ASSERT(rte_flow_destroy(port1, (struct rte_flow *)fake, &err) != 0,
		    "foreign handle destroyed");
	TEST_ASSERT(err.message != NULL &&
		    strstr(err.message, "no such rule") != NULL, "message");
	memset(&err, 0x5a, sizeof(err));
	TEST_ASSERT(rte_flow_destroy(port0, ft, &err) != 0,
		    "rule of port 1 destroyed through port 0");
	TEST_ASSERT(err.message != NULL &&
		    strstr(err.message, "no such rule") != NULL, "message");
	TEST_ASSERT_SUCCESS(rte_flow_flush(port1, &err), "flush");
	EXPECT(&mac1, TYPE_A, 0, 1);
	RTE_SET_USED(ft);
	return TEST_SUCCESS;
}

static int
test_rss_rule(void)
{
	struct rte_flow_error err;
	struct rte_flow_attr attr = { .ingress = 1 };
	struct rte_flow_item_eth spec = { .type = RTE_BE16(TYPE_A) };
	struct rte_flow_item_eth mask = { .type = RTE_BE16(0xffff) };
	uint16_t queues[] = { 3, 1, 2 };
	struct rte_flow_action_rss rss = {
		.queue_num = RTE_DIM(queues), .queue = queues,
	};
	struct rte_flow_item pattern[] = {
		{ .type = RTE_FLOW_ITEM_TYPE_ETH, .spec = &spec,
		  .mask = &mask },
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	struct rte_flow_action actions[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_RSS, .conf = &rss },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	struct rte_flow *f;

	memset(&err, 0x5a, sizeof(err));
	f = rte_flow_create(port1, &attr, pattern, actions, &err);
	TEST_ASSERT_NOT_NULL(f, "rss rule: %s", err.message);
	/* non-IP frames hash to 0: table entry 0, the first queue listed */
	EXPECT(&mac1, TYPE_A, 3, 1);
	TEST_ASSERT_SUCCESS(rte_flow_destroy(port1, f, &err), "destroy");
	return TEST_SUCCESS;
}

static int
test_drop_waits_for_device(void)
{
	struct rte_flow_error err;
	struct rte_flow_attr attr = { .ingress = 1 };
	struct rte_flow_item_eth spec = { .type = RTE_BE16(TYPE_B) };
	struct rte_flow_item_eth mask = { .type = RTE_BE16(0xffff) };
	struct rte_flow_item pattern[] = {
		{ .type = RTE_FLOW_ITEM_TYPE_ETH, .spec = &spec,
		  .mask = &mask },
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	struct rte_flow_action actions[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_DROP },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	struct rte_flow *f;

	memset(&err, 0x5a, sizeof(err));
	TEST_ASSERT_SUCCESS(rte_flow_validate(port1, &attr, pattern, actions,
					      &err), "validate drop");
	memset(&err, 0x5a, sizeof(err));
	f = rte_flow_create(port1, &attr, pattern, actions, &err);
	if (f == NULL) {
		/* swverbs without the drop action: a clean failure */
		TEST_ASSERT_EQUAL(err.type, RTE_FLOW_ERROR_TYPE_HANDLE,
				  "type (%s)", err.message);
		TEST_ASSERT(strstr(err.message, "ibv_create_flow") != NULL &&
			    strstr(err.message, "errno") != NULL,
			    "message: %s", err.message);
		EXPECT(&mac1, TYPE_B, 0, 1);
		return TEST_SUCCESS;
	}
	EXPECT(&mac1, TYPE_B, 0, -1);
	EXPECT(&mac1, TYPE_A, 0, 1);
	TEST_ASSERT_SUCCESS(rte_flow_destroy(port1, f, &err), "destroy");
	return TEST_SUCCESS;
}

static int
test_keep_and_reconfigure(void)
{
	struct rte_flow_error err;
	struct rte_flow *f;
	struct rte_eth_dev_info info;

	TEST_ASSERT_SUCCESS(rte_eth_dev_info_get(port1, &info), "info");
	TEST_ASSERT(info.dev_capa & RTE_ETH_DEV_CAPA_FLOW_RULE_KEEP,
		    "FLOW_RULE_KEEP not advertised");
	f = rule(NULL, TYPE_A, 0, 3, &err);
	TEST_ASSERT_NOT_NULL(f, "rule: %s", err.message);
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
	EXPECT(&mac1, TYPE_A, 3, 1);
	/* created while stopped: on the device at start */
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	TEST_ASSERT_SUCCESS(rte_flow_destroy(port1, f, &err), "destroy");
	f = rule(NULL, TYPE_A, 0, 1, &err);
	TEST_ASSERT_NOT_NULL(f, "rule while stopped: %s", err.message);
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
	EXPECT(&mac1, TYPE_A, 1, 1);
	/* fewer queues: the rule's queue is gone, start fails loudly */
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	TEST_ASSERT_SUCCESS(port_setup(port1, 1), "reconfigure to 1 queue");
	TEST_ASSERT(rte_eth_dev_start(port1) != 0,
		    "start with a rule on a missing queue");
	TEST_ASSERT_SUCCESS(rte_flow_destroy(port1, f, &err), "destroy");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start without it");
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	TEST_ASSERT_SUCCESS(port_setup(port1, NB_RXQ), "reconfigure");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
	EXPECT(&mac1, TYPE_A, 0, 1);
	return TEST_SUCCESS;
}

static int
test_isolate(void)
{
	struct rte_flow_error err;
	struct rte_flow *f;

	memset(&err, 0x5a, sizeof(err));
	TEST_ASSERT(rte_flow_isolate(port1, 1, &err) != 0,
		    "isolate while started");
	TEST_ASSERT(err.message != NULL &&
		    strstr(err.message, "stop the port") != NULL, "message");
	f = rule(NULL, TYPE_A, 0, 2, &err);
	TEST_ASSERT_NOT_NULL(f, "rule: %s", err.message);
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	TEST_ASSERT_SUCCESS(rte_flow_isolate(port1, 1, &err), "isolate");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
	EXPECT(&mac1, TYPE_A, 2, 1);
	EXPECT(&mac1, TYPE_B, 0, -1);
	TEST_ASSERT_SUCCESS(rte_eth_promiscuous_enable(port1), "promisc");
	EXPECT(&foreign_mac, TYPE_B, 0, -1);
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	TEST_ASSERT_SUCCESS(rte_flow_isolate(port1, 0, &err), "isolate off");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
	EXPECT(&foreign_mac, TYPE_B, 0, 1);
	TEST_ASSERT_SUCCESS(rte_eth_promiscuous_disable(port1), "promisc");
	EXPECT(&mac1, TYPE_B, 0, 1);
	EXPECT(&mac1, TYPE_A, 2, 1);
	TEST_ASSERT_SUCCESS(rte_flow_flush(port1, &err), "flush");
	return TEST_SUCCESS;
}

static int
setup(void)
{
	TEST_ASSERT_SUCCESS(vbr_test_pair_ports(&port0, &port1), "ports");
	TEST_ASSERT_SUCCESS(port_setup(port0, 1), "setup port 0");
	TEST_ASSERT_SUCCESS(port_setup(port1, NB_RXQ), "setup port 1");
	TEST_ASSERT_SUCCESS(vbr_test_pair_start(port0, port1), "start");
	TEST_ASSERT_SUCCESS(rte_eth_promiscuous_disable(port1), "promisc");
	TEST_ASSERT_SUCCESS(rte_eth_macaddr_get(port1, &mac1), "mac");
	rte_delay_ms(100);
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite = {
	.name = "vbr rte_flow packets",
	.setup = setup,
	.cases = {
		TEST_CASE(test_queue_rules),
		TEST_CASE(test_rss_rule),
		TEST_CASE(test_drop_waits_for_device),
		TEST_CASE(test_keep_and_reconfigure),
		TEST_CASE(test_isolate),
		TEST_CASES_END(),
	},
};

int
main(int argc, char **argv)
{
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: %s <librte_net_vbr.so>\n", argv[0]);
		return 2;
	}
	ret = vbr_test_eal_init(argv[0], argv[1], "pmd.net.vbr:info", "flow",
				NULL);
	if (ret != 0)
		return vbr_test_init_status(ret);
	mp = vbr_test_pool("flow_test", 4095);
	if (mp == NULL)
		return 1;
	ret = unit_test_suite_runner(&suite);
	vbr_test_pair_fini(port0, port1, mp);
	return ret;
}
