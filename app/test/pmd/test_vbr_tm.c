/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Tx rate limits through the C APIs: rte_eth_set_queue_rate_limit() up to
 * the link speed (the wire's, never raised to the pacing maximum) and the
 * device's pacing maximum, whichever is lower, the
 * PMD's rte_pmd_vbr_set_queue_rate_limit() / _get_ with every refusal,
 * limits kept for queues that do not exist yet, and rte_tm errors that
 * testpmd cannot send (NULL arguments, a commit's clear_on_fail = 0).
 * The PMD is loaded with -d, so its own API is found with dlsym().
 *
 * qp (swverbs only): what is on the Tx queue's QP, read with
 * swv_qp_pace_stats() (this program's own swverbs code reading the PMD's
 * QP; same build, same layout): a limit set while stopped goes on at
 * start, stays over stop/start and over the recovery of a queue in ERR
 * (which passes through RESET, where the QP loses it), a limit removed
 * while stopped is gone after start, a set on a started queue is there at
 * once, and an rte_tm leaf's profile arrives as kbit/s (bytes/s / 125,
 * rounded down) and bucket.
 *
 * pace (swverbs only): what a ConnectX refuses that verbs cannot announce.
 * On a port of the mlx5-noburst profile (no burst pacing) an rte_tm peak
 * size is dropped and the rate goes on alone, at commit, on a later leaf
 * and at a start; an explicit max_burst_sz through the PMD's API is
 * refused. On the mlx5 profile's rate table (127 entries), a 128th
 * distinct limit is refused with ENOSPC, through the PMD's API, ethdev
 * and rte_tm, whose message names the rate table.
 *
 * usage: test-vbr-tm <librte_net_vbr.so> api|qp|pace
 */

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_tm.h>

#include "rte_pmd_vbr.h"
#include "swverbs.h"
#include "vbr.h"
#include "vbr_test_port.h"
#include "vbr_test_sym.h"

#define NB_MBUF 2048

static struct rte_mempool *mp;
static uint16_t port0, port1;
static uint32_t kmin, kmax;	/* packet_pacing_caps, kbit/s */

static __typeof__(rte_pmd_vbr_set_queue_rate_limit) *set_limit;
static __typeof__(rte_pmd_vbr_get_queue_rate_limit) *get_limit;
static __typeof__(rte_pmd_vbr_pace_window) *pace_window;

static int
tm_setup(void)
{
	struct rte_tm_capabilities cap;
	struct rte_tm_error err;

	TEST_ASSERT_SUCCESS(vbr_test_pair_ports(&port0, &port1), "ports");
	TEST_ASSERT_SUCCESS(rte_tm_capabilities_get(port0, &cap, &err),
			    "tm caps: %s", err.message);
	if (cap.shaper_private_n_max == 0)
		TEST_SKIP("the device does not pace");
	kmin = (uint32_t)(cap.shaper_private_rate_min / 125);
	kmax = (uint32_t)(cap.shaper_private_rate_max / 125);
	TEST_ASSERT_SUCCESS(vbr_test_port_config(port0, &(struct rte_eth_conf){
		0 }, 1, 256, 256, mp), "port 0");
	TEST_ASSERT_SUCCESS(vbr_test_port_config(port1, &(struct rte_eth_conf){
		0 }, 1, 256, 256, mp), "port 1");
	return vbr_test_pair_start(port0, port1);
}

/*
 * The link speed is the wire's (a pair cable's nominal 100 Gbit/s), never
 * the device's pacing maximum: ethdev takes a rate up to the lower of the
 * two and refuses one above the link.
 */
static int
test_ethdev_range(void)
{
	uint64_t end = rte_get_timer_cycles() + rte_get_timer_hz() * 5;
	struct rte_eth_dev_info info;
	struct rte_eth_link link;
	uint32_t top;

	/* the engine (progress=thread) brings the link up after start */
	do {
		TEST_ASSERT_SUCCESS(rte_eth_link_get_nowait(port0, &link),
				    "link");
	} while (link.link_status != RTE_ETH_LINK_UP &&
		 rte_get_timer_cycles() < end && usleep(10000) == 0);
	TEST_ASSERT(link.link_status == RTE_ETH_LINK_UP &&
		    link.link_speed != 0 &&
		    link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN,
		    "link up with a speed: %u Mbit/s", link.link_speed);
	if (vbr_test_dev() == NULL)
		TEST_ASSERT_EQUAL(link.link_speed, RTE_ETH_SPEED_NUM_100G,
				  "a pair cable's speed, not the pacing "
				  "maximum (%u kbit/s)", kmax);
	top = RTE_MIN(link.link_speed, kmax / 1000);
	TEST_ASSERT_SUCCESS(rte_eth_set_queue_rate_limit(port0, 0, top),
			    "%u Mbit/s: the link and the device take it", top);
	TEST_ASSERT_EQUAL(rte_eth_set_queue_rate_limit(port0, 0,
						       link.link_speed + 1),
			  -EINVAL, "above the link speed");
	if (kmax / 1000 < link.link_speed)
		TEST_ASSERT_EQUAL(rte_eth_set_queue_rate_limit(port0, 0,
							       kmax / 1000 + 1),
				  -EINVAL, "above the pacing maximum");
	TEST_ASSERT_SUCCESS(rte_eth_dev_info_get(port0, &info), "info");
	/* ethdev lets queue == max_tx_queues through: the PMD refuses it. */
	TEST_ASSERT_EQUAL(rte_eth_set_queue_rate_limit(port0,
						       info.max_tx_queues,
						       100),
			  -EINVAL, "queue %u", info.max_tx_queues);
	TEST_ASSERT_SUCCESS(rte_eth_set_queue_rate_limit(port0, 0, 0),
			    "0 removes the limit");
	return TEST_SUCCESS;
}

static int
test_pmd_api(void)
{
	struct rte_eth_dev_info info;
	uint32_t rate, burst;
	uint16_t pkt;

	TEST_ASSERT_SUCCESS(rte_eth_dev_info_get(port0, &info), "info");
	TEST_ASSERT_EQUAL(set_limit(RTE_MAX_ETHPORTS - 1, 0, 1000, 0, 0),
			  -ENODEV, "not a port");
	TEST_ASSERT_EQUAL(set_limit(port0, info.max_tx_queues, 1000, 0, 0),
			  -EINVAL, "queue id");
	TEST_ASSERT_EQUAL(set_limit(port0, 0, kmax + 1, 0, 0), -EINVAL,
			  "above the device maximum");
	if (kmin > 1)
		TEST_ASSERT_EQUAL(set_limit(port0, 0, kmin - 1, 0, 0),
				  -EINVAL, "below the device minimum");
	TEST_ASSERT_EQUAL(set_limit(port0, 0, 0, 4096, 0), -EINVAL,
			  "burst with rate 0");
	TEST_ASSERT_EQUAL(set_limit(port0, 0, 0, 0, 512), -EINVAL,
			  "packet size with rate 0");
	TEST_ASSERT_EQUAL(set_limit(port0, 0, 1000, 0, UINT16_MAX), -EINVAL,
			  "packet size above the largest frame");
	/* on the started queue: the device takes it */
	TEST_ASSERT_SUCCESS(set_limit(port0, 0, 1000, 4096, 512), "txq 0");
	TEST_ASSERT_SUCCESS(get_limit(port0, 0, &rate, &burst, &pkt), "get");
	TEST_ASSERT(rate == 1000 && burst == 4096 && pkt == 512,
		    "txq 0 reads %u %u %u", rate, burst, pkt);
	/* a queue the port does not have (yet): kept */
	TEST_ASSERT_SUCCESS(set_limit(port0, 7, kmax, 0, 0), "txq 7");
	TEST_ASSERT_SUCCESS(get_limit(port0, 7, &rate, &burst, &pkt), "get");
	TEST_ASSERT(rate == kmax && burst == 0 && pkt == 0,
		    "txq 7 reads %u %u %u", rate, burst, pkt);
	/* a refused call leaves the limit as it was */
	TEST_ASSERT_EQUAL(set_limit(port0, 0, kmax + 1, 0, 0), -EINVAL,
			  "refused");
	TEST_ASSERT_SUCCESS(get_limit(port0, 0, &rate, &burst, &pkt), "get");
	TEST_ASSERT_EQUAL(rate, 1000u, "txq 0 kept its limit");
	/* ethdev's call sets the same limit, with device defaults */
	TEST_ASSERT_SUCCESS(rte_eth_set_queue_rate_limit(port0, 0, 3), "3M");
	TEST_ASSERT_SUCCESS(get_limit(port0, 0, &rate, &burst, &pkt), "get");
	TEST_ASSERT(rate == 3000 && burst == 0 && pkt == 0,
		    "txq 0 reads %u %u %u after ethdev's", rate, burst, pkt);
	TEST_ASSERT_EQUAL(get_limit(port0, 0, NULL, &burst, &pkt), -EINVAL,
			  "NULL");
	TEST_ASSERT_SUCCESS(set_limit(port0, 0, 0, 0, 0), "removed");
	TEST_ASSERT_SUCCESS(set_limit(port0, 7, 0, 0, 0), "removed");
	/* kept over stop/start: the start sets it on the QP again */
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port0), "stop");
	TEST_ASSERT_SUCCESS(set_limit(port0, 0, 2000, 0, 0), "stopped");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port0), "start");
	TEST_ASSERT_SUCCESS(get_limit(port0, 0, &rate, &burst, &pkt), "get");
	TEST_ASSERT_EQUAL(rate, 2000u, "txq 0 after start");
	TEST_ASSERT_SUCCESS(set_limit(port0, 0, 0, 0, 0), "removed");
	return TEST_SUCCESS;
}

/* What testpmd cannot send: NULL arguments, a failed commit kept. */
static int
test_tm_api(void)
{
	struct rte_tm_node_params np = {
		.shaper_profile_id = RTE_TM_SHAPER_PROFILE_ID_NONE,
		.nonleaf = { .n_sp_priorities = 1 },
	};
	struct rte_tm_node_params lp = {
		.shaper_profile_id = RTE_TM_SHAPER_PROFILE_ID_NONE,
		.leaf = { .cman = RTE_TM_CMAN_TAIL_DROP,
			  .wred = { .wred_profile_id =
					RTE_TM_WRED_PROFILE_ID_NONE } },
	};
	struct rte_tm_error err;
	int is_leaf;

	memset(&err, 0, sizeof(err));
	TEST_ASSERT_EQUAL(rte_tm_node_add(port1, 100, RTE_TM_NODE_ID_NULL, 0,
					  1, 0, NULL, &err), -EINVAL,
			  "NULL params");
	TEST_ASSERT_EQUAL(err.type, RTE_TM_ERROR_TYPE_NODE_PARAMS, "type");
	TEST_ASSERT_EQUAL(rte_tm_shaper_profile_add(port1, 1, NULL, &err),
			  -EINVAL, "NULL profile");
	TEST_ASSERT_EQUAL(err.type, RTE_TM_ERROR_TYPE_SHAPER_PROFILE, "type");
	/* a commit with no root fails; clear_on_fail 0 keeps the nodes */
	TEST_ASSERT_EQUAL(rte_tm_hierarchy_commit(port1, 0, &err), -EINVAL,
			  "commit without a root");
	TEST_ASSERT(err.message != NULL && strstr(err.message, "no root"),
		    "message: %s", err.message);
	TEST_ASSERT_SUCCESS(rte_tm_node_add(port1, 100, RTE_TM_NODE_ID_NULL,
					    0, 1, 0, &np, &err),
			    "root: %s", err.message);
	TEST_ASSERT_SUCCESS(rte_tm_node_add(port1, 0, 100, 0, 1, 1, &lp,
					    &err), "leaf: %s", err.message);
	TEST_ASSERT_SUCCESS(rte_tm_node_type_get(port1, 0, &is_leaf, &err),
			    "type");
	TEST_ASSERT_EQUAL(is_leaf, 1, "leaf");
#if VBR_TEST_NULL_OUT_ARGS
	TEST_ASSERT_EQUAL(rte_tm_node_type_get(port1, 0, NULL, &err), -EINVAL,
			  "NULL is_leaf");
#endif
	TEST_ASSERT_SUCCESS(rte_tm_hierarchy_commit(port1, 0, &err),
			    "commit: %s", err.message);
	TEST_ASSERT_SUCCESS(rte_tm_node_delete(port1, 0, &err), "leaf delete");
	TEST_ASSERT_SUCCESS(rte_tm_node_delete(port1, 100, &err),
			    "root delete");
	return TEST_SUCCESS;
}

/* The limit on the QP of port0's Tx queue 0. */
static int
qp_limit(uint32_t *rate, uint32_t *burst)
{
	struct vbr_txq *txq = rte_eth_devices[port0].data->tx_queues[0];
	struct swv_qp_pace_stats st;

	TEST_ASSERT_NOT_NULL(txq, "txq 0");
	TEST_ASSERT_SUCCESS(swv_qp_pace_stats(txq->qp, &st), "pace stats");
	*rate = st.rate_limit;
	*burst = st.max_burst_sz;
	return TEST_SUCCESS;
}

#define QP_LIMIT_IS(want_rate, what) do { \
	uint32_t r_, b_; \
	TEST_ASSERT_SUCCESS(qp_limit(&r_, &b_), "%s", what); \
	TEST_ASSERT_EQUAL(r_, (uint32_t)(want_rate), \
			  "%s: QP rate %u kbit/s", what, r_); \
} while (0)

/* A 64-byte frame from port 0 to port 1 into *m. */
static int
frame64(struct rte_mbuf **m)
{
	struct rte_ether_hdr *eh;

	*m = rte_pktmbuf_alloc(mp);
	TEST_ASSERT_NOT_NULL(*m, "alloc");
	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(*m, 64);
	memset(eh, 0, 64);
	rte_eth_macaddr_get(port1, &eh->dst_addr);
	rte_eth_macaddr_get(port0, &eh->src_addr);
	eh->ether_type = rte_cpu_to_be_16(0x88b5);
	return TEST_SUCCESS;
}

/* One 64-byte frame from port 0 to port 1, received. */
static int
cross(void)
{
	uint64_t end = rte_get_timer_cycles() + rte_get_timer_hz() * 2;
	struct rte_mbuf *m, *r[8];
	uint16_t got = 0;

	TEST_ASSERT_SUCCESS(frame64(&m), "");
	TEST_ASSERT_EQUAL(vbr_test_tx_all(port0, &m, 1, 2000), 1, "tx");
	while (got == 0 && rte_get_timer_cycles() < end) {
		got = rte_eth_rx_burst(port1, 0, r, RTE_DIM(r));
		rte_eth_tx_burst(port0, 0, NULL, 0);	/* completions */
	}
	rte_pktmbuf_free_bulk(r, got);
	TEST_ASSERT(got > 0, "frame received");
	return TEST_SUCCESS;
}

/*
 * ethdev takes a rate only up to the link speed it reads, 0 until the link
 * is up: after a start, wait for it (the engine thread brings a pair
 * cable's link up on its own time).
 */
static int
link_up(uint16_t port)
{
	uint64_t end = rte_get_timer_cycles() + rte_get_timer_hz() * 10;
	struct rte_eth_link l;

	do {
		if (rte_eth_link_get_nowait(port, &l) == 0 &&
		    l.link_status == RTE_ETH_LINK_UP)
			return TEST_SUCCESS;
		rte_delay_ms(10);
	} while (rte_get_timer_cycles() < end);
	return TEST_FAILED;
}

static int
test_qp_start_stop(void)
{
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port0), "stop");
	TEST_ASSERT_SUCCESS(set_limit(port0, 0, 8000, 20000, 0), "stopped");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port0), "start");
	QP_LIMIT_IS(8000, "set while stopped, after start");
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port0), "stop");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port0), "start");
	QP_LIMIT_IS(8000, "after stop/start");
	TEST_ASSERT_SUCCESS(link_up(port0), "link up after start");
	TEST_ASSERT_SUCCESS(rte_eth_set_queue_rate_limit(port0, 0, 50), "50M");
	QP_LIMIT_IS(50000, "set on the started queue");
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port0), "stop");
	TEST_ASSERT_SUCCESS(rte_eth_set_queue_rate_limit(port0, 0, 0), "0");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port0), "start");
	QP_LIMIT_IS(0, "removed while stopped, after start");
	return TEST_SUCCESS;
}

/* A queue taken out of ERR (RESET -> RTS) gets its limit back. */
static int
test_qp_recovery(void)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct vbr_txq *txq = rte_eth_devices[port0].data->tx_queues[0];
	uint64_t rec = txq->recoveries;

	TEST_ASSERT_SUCCESS(set_limit(port0, 0, 90000, 0, 0), "90M");
	TEST_ASSERT_SUCCESS(txq->priv->glue->modify_qp(txq->qp, &attr,
						       IBV_QP_STATE), "ERR");
	TEST_ASSERT_SUCCESS(cross(), "through the recovery");
	TEST_ASSERT_EQUAL(txq->recoveries, rec + 1, "recovered");
	QP_LIMIT_IS(90000, "after the recovery");
	TEST_ASSERT_SUCCESS(set_limit(port0, 0, 0, 0, 0), "removed");
	QP_LIMIT_IS(0, "removed");
	return TEST_SUCCESS;
}

/*
 * A limit set while the queue's QP is in ERR (before the datapath's
 * recovery) is taken: the device takes limits in RTS only, and the
 * recovery puts it on the QP.
 */
static int
test_qp_set_in_err(void)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct vbr_txq *txq = rte_eth_devices[port0].data->tx_queues[0];
	uint64_t rec = txq->recoveries;

	TEST_ASSERT_SUCCESS(txq->priv->glue->modify_qp(txq->qp, &attr,
						       IBV_QP_STATE), "ERR");
	TEST_ASSERT_SUCCESS(set_limit(port0, 0, 70000, 0, 0),
			    "70M while in ERR");
	TEST_ASSERT_SUCCESS(cross(), "through the recovery");
	TEST_ASSERT_EQUAL(txq->recoveries, rec + 1, "recovered");
	QP_LIMIT_IS(70000, "after the recovery");
	TEST_ASSERT_SUCCESS(set_limit(port0, 0, 0, 0, 0), "removed");
	QP_LIMIT_IS(0, "removed");
	return TEST_SUCCESS;
}

/* The test's hook in vbr_tm_txq_ready(): one control-path set, once. */
static void (**ready_hook)(struct vbr_txq *txq);
static bool hook_armed;

static void
set_in_recovery(struct vbr_txq *txq)
{
	if (!hook_armed)
		return;
	hook_armed = false;
	/* the QP is in RTS already: this limit goes on it at once */
	if (set_limit(txq->port_id, txq->queue_id, 80000, 0, 0) != 0)
		printf("set in the recovery failed\n");
}

/*
 * A limit set by the control path while the datapath's recovery puts the
 * older one on the QP: the newer one ends on the QP (the recovery reads
 * the wanted limit again after its call).
 */
static int
test_qp_set_racing_recovery(void)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct vbr_txq *txq = rte_eth_devices[port0].data->tx_queues[0];
	uint64_t rec = txq->recoveries;
	int ret;

	TEST_ASSERT_SUCCESS(set_limit(port0, 0, 40000, 0, 0), "40M");
	TEST_ASSERT_SUCCESS(txq->priv->glue->modify_qp(txq->qp, &attr,
						       IBV_QP_STATE), "ERR");
	hook_armed = true;
	*ready_hook = set_in_recovery;
	ret = cross();
	*ready_hook = NULL;
	TEST_ASSERT_SUCCESS(ret, "through the recovery");
	TEST_ASSERT(!hook_armed, "the set ran inside the recovery");
	TEST_ASSERT_EQUAL(txq->recoveries, rec + 1, "recovered");
	QP_LIMIT_IS(80000, "the newer limit after the recovery");
	TEST_ASSERT_SUCCESS(set_limit(port0, 0, 0, 0, 0), "removed");
	return TEST_SUCCESS;
}

/*
 * A device that refuses a limit on a QP in RTS (EINVAL: the glue's
 * modify_qp_rate_limit swapped for one that says so): the set fails with
 * -EINVAL and the wanted limit stays the old one, not kept for a
 * recovery that will never come. The QP's state is read, not guessed
 * from the errno.
 */
static struct vbr_glue refusing_glue;

static int
refuse_rate_limit(struct ibv_qp *qp, struct ibv_qp_rate_limit_attr *attr)
{
	(void)qp;
	(void)attr;
	return EINVAL;
}

static int
test_qp_refused_in_rts(void)
{
	struct vbr_txq *txq = rte_eth_devices[port0].data->tx_queues[0];
	const struct vbr_glue *glue = txq->priv->glue;
	uint32_t rate, burst;
	uint16_t pkt;
	int ret;

	TEST_ASSERT_SUCCESS(set_limit(port0, 0, 30000, 0, 0), "30M");
	QP_LIMIT_IS(30000, "30M on the QP");
	refusing_glue = *glue;
	refusing_glue.modify_qp_rate_limit = refuse_rate_limit;
	txq->priv->glue = &refusing_glue;
	ret = set_limit(port0, 0, 60000, 0, 0);
	txq->priv->glue = glue;
	TEST_ASSERT_EQUAL(ret, -EINVAL, "refused in RTS: %d", ret);
	TEST_ASSERT_SUCCESS(get_limit(port0, 0, &rate, &burst, &pkt), "get");
	TEST_ASSERT_EQUAL(rate, 30000, "the wanted limit is the old one: %u",
			  rate);
	QP_LIMIT_IS(30000, "the old limit on the QP");
	TEST_ASSERT_SUCCESS(set_limit(port0, 0, 0, 0, 0), "removed");
	QP_LIMIT_IS(0, "removed");
	return TEST_SUCCESS;
}

/* A leaf's profile on the QP: 12500124 bytes/s is 100000 kbit/s. */
static int
test_qp_tm_leaf(void)
{
	struct rte_tm_shaper_params sp = {
		.peak = { .rate = 12500124, .size = 30000 },
	};
	struct rte_tm_node_params np = {
		.shaper_profile_id = RTE_TM_SHAPER_PROFILE_ID_NONE,
		.nonleaf = { .n_sp_priorities = 1 },
	};
	struct rte_tm_node_params lp = {
		.shaper_profile_id = 7,
		.leaf = { .cman = RTE_TM_CMAN_TAIL_DROP,
			  .wred = { .wred_profile_id =
					RTE_TM_WRED_PROFILE_ID_NONE } },
	};
	struct rte_tm_error err;
	uint32_t rate, burst;

	TEST_ASSERT_SUCCESS(rte_tm_shaper_profile_add(port0, 7, &sp, &err),
			    "profile: %s", err.message);
	TEST_ASSERT_SUCCESS(rte_tm_node_add(port0, 50, RTE_TM_NODE_ID_NULL,
					    0, 1, 0, &np, &err),
			    "root: %s", err.message);
	TEST_ASSERT_SUCCESS(rte_tm_node_add(port0, 0, 50, 0, 1, 1, &lp,
					    &err), "leaf: %s", err.message);
	QP_LIMIT_IS(0, "before the commit");
	TEST_ASSERT_SUCCESS(rte_tm_hierarchy_commit(port0, 0, &err),
			    "commit: %s", err.message);
	TEST_ASSERT_SUCCESS(qp_limit(&rate, &burst), "QP");
	TEST_ASSERT(rate == 100000 && burst == 30000,
		    "leaf on the QP: %u kbit/s, %u bytes", rate, burst);
	TEST_ASSERT_SUCCESS(rte_tm_node_delete(port0, 0, &err), "leaf delete");
	QP_LIMIT_IS(0, "leaf deleted");
	TEST_ASSERT_SUCCESS(rte_tm_node_delete(port0, 50, &err),
			    "root delete");
	TEST_ASSERT_SUCCESS(rte_tm_shaper_profile_delete(port0, 7, &err),
			    "profile delete");
	return TEST_SUCCESS;
}

/* tx_q<N>_pace_bytes / _pace_full_ns: the pacer's counts, from a reset. */
static int
test_qp_pace_xstats(void)
{
	unsigned int i;

	TEST_ASSERT_SUCCESS(set_limit(port0, 0, 100000, 0, 0), "limit");
	TEST_ASSERT_SUCCESS(rte_eth_xstats_reset(port0), "reset");
	TEST_ASSERT_EQUAL(vbr_test_xstat(port0, "tx_q0_pace_bytes"), 0,
			  "pace bytes after a reset");
	TEST_ASSERT(vbr_test_xstat(port0, "tx_q0_pace_full_ns") != UINT64_MAX,
		    "no tx_q0_pace_full_ns");
	for (i = 0; i < 3; i++)
		TEST_ASSERT_SUCCESS(cross(), "frame %u", i);
	TEST_ASSERT_EQUAL(vbr_test_xstat(port0, "tx_q0_pace_bytes"), 3 * 64,
			  "pace bytes of three 64-byte frames");
	TEST_ASSERT_SUCCESS(set_limit(port0, 0, 0, 0, 0), "no limit");
	TEST_ASSERT_SUCCESS(cross(), "unpaced frame");
	TEST_ASSERT_EQUAL(vbr_test_xstat(port0, "tx_q0_pace_bytes"), 3 * 64,
			  "an unpaced frame is not the pacer's");
	TEST_ASSERT_SUCCESS(rte_eth_xstats_reset(port0), "reset");
	TEST_ASSERT_EQUAL(vbr_test_xstat(port0, "tx_q0_pace_bytes"), 0,
			  "pace bytes after the second reset");
	return TEST_SUCCESS;
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define PW_FRAMES 8
#define PW_FRAME_NS 512000ull	/* 64 bytes at 1 Mbit/s */

/*
 * rte_pmd_vbr_pace_window(): on a port served inline whose paced queue
 * holds frames, the earliest departure and the earliest full bucket, both
 * ahead and within the frames' schedule; nothing once they left. On a
 * port whose engine releases them itself (thread, service), nothing at
 * any time. The frames arrive either way.
 */
static int
test_qp_pace_window(void)
{
	const char *model = vbr_test_progress();
	bool inl = model == NULL || strcmp(model, "inline") == 0;
	struct rte_mbuf *m[PW_FRAMES], *r[PW_FRAMES];
	uint64_t due, latest, now, end;
	unsigned int i, got = 0;

	TEST_ASSERT_EQUAL(pace_window(port0, NULL, &latest), -EINVAL, "");
	TEST_ASSERT_EQUAL(pace_window(port0, &due, NULL), -EINVAL, "");
	TEST_ASSERT_EQUAL(pace_window(RTE_MAX_ETHPORTS - 1, &due, &latest),
			  -ENODEV, "");
	TEST_ASSERT_SUCCESS(pace_window(port0, &due, &latest), "");
	TEST_ASSERT(due == UINT64_MAX && latest == UINT64_MAX,
		    "nothing waits: due %" PRIu64, due);
	/* 1 Mbit/s, a bucket of two frames: six wait 512 us each. */
	TEST_ASSERT_SUCCESS(set_limit(port0, 0, 1000, 128, 0), "limit");
	for (i = 0; i < PW_FRAMES; i++)
		TEST_ASSERT_SUCCESS(frame64(&m[i]), "");
	TEST_ASSERT_EQUAL(vbr_test_tx_all(port0, m, PW_FRAMES, 2000),
			  PW_FRAMES, "tx");
	now = mono_ns();
	TEST_ASSERT_SUCCESS(pace_window(port0, &due, &latest), "");
	if (inl) {
		TEST_ASSERT(due != UINT64_MAX, "frames wait, none due");
		TEST_ASSERT(due <= now + PW_FRAMES * PW_FRAME_NS,
			    "due %" PRIu64 " ns from now", due - now);
		TEST_ASSERT(latest != UINT64_MAX && latest >= due,
			    "latest %" PRIu64 " before due %" PRIu64, latest,
			    due);
	} else {
		TEST_ASSERT(due == UINT64_MAX && latest == UINT64_MAX,
			    "%s: the engine releases them, due %" PRIu64,
			    model, due);
	}
	end = now + 5000000000ull;
	while (got < PW_FRAMES && mono_ns() < end) {
		got += rte_eth_rx_burst(port1, 0, r + got, PW_FRAMES - got);
		rte_eth_tx_burst(port0, 0, NULL, 0);	/* completions */
	}
	rte_pktmbuf_free_bulk(r, got);
	TEST_ASSERT_EQUAL(got, PW_FRAMES, "frames received");
	/* The frames took their time: the queue was paced. */
	TEST_ASSERT(mono_ns() - now >= (PW_FRAMES - 3) * PW_FRAME_NS,
		    "8 frames in %" PRIu64 " ns at 1 Mbit/s", mono_ns() - now);
	TEST_ASSERT_SUCCESS(pace_window(port0, &due, &latest), "");
	TEST_ASSERT(due == UINT64_MAX && latest == UINT64_MAX,
		    "all left, due %" PRIu64, due);
	TEST_ASSERT_SUCCESS(set_limit(port0, 0, 0, 0, 0), "no limit");
	return TEST_SUCCESS;
}

static void tm_teardown(void);

/* pace: two more ports on loop wires, made by the group itself. */
static uint16_t port_nb;	/* mlx5-noburst */
static uint16_t port_rt;	/* mlx5, 128 Tx queues */
#define RT_TXQ (127 + 1)

static int
pace_port(const char *name, const char *args, uint16_t nb_txq, uint16_t *port)
{
	struct rte_eth_conf conf = { 0 };
	uint16_t q;

	TEST_ASSERT_SUCCESS(vbr_test_vdev_init(name, args), "%s", name);
	TEST_ASSERT_SUCCESS(rte_eth_dev_get_port_by_name(name, port), "%s",
			    name);
	TEST_ASSERT_SUCCESS(rte_eth_dev_configure(*port, 1, nb_txq, &conf),
			    "configure %s", name);
	TEST_ASSERT_SUCCESS(rte_eth_rx_queue_setup(*port, 0, 256,
						   SOCKET_ID_ANY, NULL, mp),
			    "rxq");
	for (q = 0; q < nb_txq; q++)
		TEST_ASSERT_SUCCESS(rte_eth_tx_queue_setup(*port, q,
							   VBR_MIN_DESC,
							   SOCKET_ID_ANY,
							   NULL),
				    "txq %u", q);
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(*port), "start %s", name);
	return link_up(*port);
}

static int
pace_setup(void)
{
	TEST_ASSERT_SUCCESS(tm_setup(), "pair");
	TEST_ASSERT_SUCCESS(pace_port("net_vbr2",
				      "wire=loop,profile=mlx5-noburst", 1,
				      &port_nb), "mlx5-noburst port");
	return pace_port("net_vbr3", "wire=loop,profile=mlx5", RT_TXQ,
			 &port_rt);
}

static void
pace_teardown(void)
{
	rte_eth_dev_stop(port_nb);
	rte_eth_dev_stop(port_rt);
	rte_eth_dev_close(port_nb);
	rte_eth_dev_close(port_rt);
	tm_teardown();
}

/* The limit on the QP of Tx queue q of port. */
static int
qp_limit_of(uint16_t port, uint16_t q, uint32_t *rate, uint32_t *burst)
{
	struct vbr_txq *txq = rte_eth_devices[port].data->tx_queues[q];
	struct swv_qp_pace_stats st;

	TEST_ASSERT_NOT_NULL(txq, "txq %u", q);
	TEST_ASSERT_SUCCESS(swv_qp_pace_stats(txq->qp, &st), "pace stats");
	*rate = st.rate_limit;
	*burst = st.max_burst_sz;
	return TEST_SUCCESS;
}

/* A root (id 1000) and a leaf per queue of qs[n] with profile prof. */
static int
tm_tree(uint16_t port, const uint16_t *qs, unsigned int n, uint32_t prof,
	struct rte_tm_error *err)
{
	struct rte_tm_node_params np = {
		.shaper_profile_id = RTE_TM_SHAPER_PROFILE_ID_NONE,
		.nonleaf = { .n_sp_priorities = 1 },
	};
	struct rte_tm_node_params lp = {
		.shaper_profile_id = prof,
		.leaf = { .cman = RTE_TM_CMAN_TAIL_DROP,
			  .wred = { .wred_profile_id =
					RTE_TM_WRED_PROFILE_ID_NONE } },
	};
	unsigned int i;

	TEST_ASSERT_SUCCESS(rte_tm_node_add(port, 1000, RTE_TM_NODE_ID_NULL,
					    0, 1, 0, &np, err),
			    "root: %s", err->message);
	for (i = 0; i < n; i++)
		TEST_ASSERT_SUCCESS(rte_tm_node_add(port, qs[i], 1000, 0, 1, 1,
						    &lp, err),
				    "leaf %u: %s", qs[i], err->message);
	return TEST_SUCCESS;
}

/*
 * No burst pacing: a profile's peak size is tried, refused (EINVAL, the
 * QP in RTS) and dropped; the commit succeeds with the rate alone on the
 * QP and its own bucket, as do the next change and a restart. The PMD's
 * own call with an explicit burst is refused.
 */
static int
test_pace_no_burst(void)
{
	struct rte_tm_shaper_params sp = {
		.peak = { .rate = 12500000, .size = 65536 },	/* 100M */
	};
	struct rte_tm_shaper_params sp2 = {
		.peak = { .rate = 6250000, .size = 32768 },	/* 50M */
	};
	static const uint16_t q0 = 0;
	struct rte_tm_error err;
	uint32_t rate, burst;

	memset(&err, 0, sizeof(err));
	TEST_ASSERT_EQUAL(set_limit(port_nb, 0, 1000, 4096, 0), -EINVAL,
			  "an explicit burst on a device without burst "
			  "pacing");
	TEST_ASSERT_EQUAL(set_limit(port_nb, 0, 1000, 0, 512), -EINVAL,
			  "an explicit packet size");
	TEST_ASSERT_SUCCESS(set_limit(port_nb, 0, 1000, 0, 0), "rate alone");
	TEST_ASSERT_SUCCESS(rte_tm_shaper_profile_add(port_nb, 1, &sp, &err),
			    "profile: %s", err.message);
	TEST_ASSERT_SUCCESS(rte_tm_shaper_profile_add(port_nb, 2, &sp2, &err),
			    "profile 2: %s", err.message);
	TEST_ASSERT_SUCCESS(tm_tree(port_nb, &q0, 1, 1, &err), "tree");
	TEST_ASSERT_SUCCESS(rte_tm_hierarchy_commit(port_nb, 0, &err),
			    "commit with a peak size the device cannot take: "
			    "%s", err.message);
	TEST_ASSERT_SUCCESS(qp_limit_of(port_nb, 0, &rate, &burst), "QP");
	TEST_ASSERT(rate == 100000 && burst != 65536 && burst != 0,
		    "the rate alone, the device's bucket: %u kbit/s, %u "
		    "bytes", rate, burst);
	TEST_ASSERT_SUCCESS(rte_tm_node_shaper_update(port_nb, 0, 2, &err),
			    "a new profile on the running leaf: %s",
			    err.message);
	TEST_ASSERT_SUCCESS(qp_limit_of(port_nb, 0, &rate, &burst), "QP");
	TEST_ASSERT(rate == 50000 && burst != 32768,
		    "50M alone: %u kbit/s, %u bytes", rate, burst);
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port_nb), "stop");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port_nb), "start");
	TEST_ASSERT_SUCCESS(qp_limit_of(port_nb, 0, &rate, &burst), "QP");
	TEST_ASSERT(rate == 50000 && burst != 32768,
		    "after a restart: %u kbit/s, %u bytes", rate, burst);
	TEST_ASSERT_SUCCESS(rte_tm_node_delete(port_nb, 0, &err), "leaf");
	TEST_ASSERT_SUCCESS(rte_tm_node_delete(port_nb, 1000, &err), "root");
	TEST_ASSERT_SUCCESS(qp_limit_of(port_nb, 0, &rate, &burst), "QP");
	TEST_ASSERT_EQUAL(rate, 0, "leaf deleted: no limit");
	return TEST_SUCCESS;
}

/*
 * The rate table: 127 distinct limits fill it; a 128th is refused with
 * ENOSPC by the PMD's call, ethdev's and an rte_tm commit (whose message
 * names the table), while an equal limit shares an entry.
 */
static int
test_pace_rate_table(void)
{
	struct rte_tm_shaper_params sp = {
		.peak = { .rate = 125 * 9000, .size = 0 },	/* 9 Mbit/s */
	};
	static const uint16_t last = RT_TXQ - 1;
	struct rte_tm_error err;
	uint16_t q;

	memset(&err, 0, sizeof(err));
	for (q = 0; q < RT_TXQ - 1; q++)
		TEST_ASSERT_SUCCESS(set_limit(port_rt, q, 10000 + q, 0, 0),
				    "distinct limit %u", q);
	TEST_ASSERT_EQUAL(set_limit(port_rt, last, 5000, 0, 0), -ENOSPC,
			  "a 128th distinct limit");
	TEST_ASSERT_SUCCESS(set_limit(port_rt, last, 10000, 0, 0),
			    "a limit another queue has");
	TEST_ASSERT_EQUAL(rte_eth_set_queue_rate_limit(port_rt, last, 9),
			  -ENOSPC, "ethdev, 9 Mbit/s");
	TEST_ASSERT_SUCCESS(rte_tm_shaper_profile_add(port_rt, 1, &sp, &err),
			    "profile: %s", err.message);
	TEST_ASSERT_SUCCESS(tm_tree(port_rt, &last, 1, 1, &err), "tree");
	TEST_ASSERT_EQUAL(rte_tm_hierarchy_commit(port_rt, 1, &err),
			  -ENOSPC, "commit");
	TEST_ASSERT(err.message != NULL &&
		    strstr(err.message, "rate table is full") != NULL,
		    "the message names the rate table: %s", err.message);
	for (q = 0; q < RT_TXQ; q++)
		TEST_ASSERT_SUCCESS(set_limit(port_rt, q, 0, 0, 0),
				    "removed %u", q);
	TEST_ASSERT_SUCCESS(tm_tree(port_rt, &last, 1, 1, &err), "tree");
	TEST_ASSERT_SUCCESS(rte_tm_hierarchy_commit(port_rt, 1, &err),
			    "commit once entries are free: %s", err.message);
	return TEST_SUCCESS;
}

static void
tm_teardown(void)
{
	rte_eth_dev_stop(port0);
	rte_eth_dev_stop(port1);
}

static struct unit_test_suite suite_api = {
	.name = "vbr tm api",
	.setup = tm_setup,
	.teardown = tm_teardown,
	.cases = {
		TEST_CASE(test_ethdev_range),
		TEST_CASE(test_pmd_api),
		TEST_CASE(test_tm_api),
		TEST_CASES_END(),
	},
};

static struct unit_test_suite suite_pace = {
	.name = "vbr tm pace",
	.setup = pace_setup,
	.teardown = pace_teardown,
	.cases = {
		TEST_CASE(test_pace_no_burst),
		TEST_CASE(test_pace_rate_table),
		TEST_CASES_END(),
	},
};

static struct unit_test_suite suite_qp = {
	.name = "vbr tm qp",
	.setup = tm_setup,
	.teardown = tm_teardown,
	.cases = {
		TEST_CASE(test_qp_start_stop),
		TEST_CASE(test_qp_recovery),
		TEST_CASE(test_qp_set_in_err),
		TEST_CASE(test_qp_set_racing_recovery),
		TEST_CASE(test_qp_refused_in_rts),
		TEST_CASE(test_qp_tm_leaf),
		TEST_CASE(test_qp_pace_xstats),
		TEST_CASE(test_qp_pace_window),
		TEST_CASES_END(),
	},
};

int
main(int argc, char **argv)
{
	static const struct {
		const char *name;
		const struct unit_test_suite *suite;
		const char *sw_only;	/* why it cannot run on VBR_TEST_DEV */
	} groups[] = {
		{ "api", &suite_api, NULL },
		{ "qp", &suite_qp, "reads the QP's limit with swverbs' own call" },
		{ "pace", &suite_pace, "needs swverbs' profiles" },
	};
	unsigned int g;
	void *pmd;
	int ret;

	ret = VBR_TEST_GROUP(argc, argv, groups);
	if (ret < 0)
		return 2;
	g = (unsigned int)ret;
	if (groups[g].sw_only != NULL && vbr_test_dev() != NULL) {
		printf("SKIP: group %s on %s: it %s\n", groups[g].name,
		       vbr_test_dev(), groups[g].sw_only);
		return 77;
	}
	ret = vbr_test_eal_init(argv[0], argv[1], "pmd.net.vbr:info", "tm",
				NULL);
	if (ret != 0)
		return vbr_test_init_status(ret);
	/* the PMD EAL loaded: its own API */
	pmd = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
	if (pmd == NULL) {
		printf("dlopen %s: %s\n", argv[1], dlerror());
		return 1;
	}
	set_limit = (__typeof__(set_limit))dlsym(pmd,
		"rte_pmd_vbr_set_queue_rate_limit");
	get_limit = (__typeof__(get_limit))dlsym(pmd,
		"rte_pmd_vbr_get_queue_rate_limit");
	pace_window = (__typeof__(pace_window))dlsym(pmd,
		"rte_pmd_vbr_pace_window");
	ready_hook = (__typeof__(ready_hook))vbr_test_sym(pmd,
							  "vbr_tm_ready_hook");
	if (set_limit == NULL || get_limit == NULL || pace_window == NULL ||
	    ready_hook == NULL) {
		printf("rte_pmd_vbr_*_queue_rate_limit, rte_pmd_vbr_pace_window "
		       "not exported, or vbr_tm_ready_hook not found\n");
		return 1;
	}
	mp = vbr_test_pool("vbr_tm", NB_MBUF);
	if (mp == NULL)
		return 1;
	ret = unit_test_suite_runner(groups[g].suite);
	rte_eth_dev_close(port0);
	rte_eth_dev_close(port1);
	vbr_test_fini(mp);
	dlclose(pmd);
	return ret;
}
