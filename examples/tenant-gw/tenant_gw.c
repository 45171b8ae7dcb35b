/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * tenant-gw: a tenant gateway between two ports. Frames come in on the
 * ingress port (port 0), where one rte_flow rule per tenant (VLAN id and/or
 * destination prefix) counts them (COUNT), polices them (METER: the tenant's
 * srTCM or trTCM profile, a policy that passes green and yellow and drops
 * red) and steers them to the tenant's own Rx queue(s) (QUEUE, or RSS over
 * several). Each tenant's frames leave the egress port (port 1) on the
 * tenant's own Tx queue, paced at its rate (rte_eth_set_queue_rate_limit).
 * Frames no tenant matches go to queue 0 and out unpaced, or are dropped,
 * as configured; both counted. Frames from port 1 go back out of port 0.
 *
 * Threads: the main lcore is the control plane (signals, the view once a
 * second, reloads); worker lcores forward, each the queues of the tenants
 * it owns (a tenant's queues all on one lcore, so its paced Tx queue has
 * one writer). With no worker lcore the main lcore forwards too, between
 * its control steps.
 *
 * Reload (SIGHUP), make-before-break: a tenant whose match and queue count
 * are unchanged keeps its rule, meter and counters (a new rate or meter
 * profile is applied in place); a new or rematched tenant gets fresh queues,
 * meter and rule, created and polled before the old rule is destroyed; the
 * old queues are polled until the old rule is gone, then drained.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_flow.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mtr.h>
#include <rte_telemetry.h>
#include <rte_tm.h>

#include "tgw_compat.h"
#include "tgw_config.h"

#define TGW_BURST 32
#define TGW_RXD 1024
#define TGW_TXD 512
#define TGW_TX_RETRIES 4
#define TGW_POLICY_ID 1
#define TGW_DEFAULT_SLOT TGW_MAX_TENANTS	/* counters of unmatched frames */
#define TGW_MAX_QUEUES 64
#define TGW_DRAIN_MS 100
#define TGW_PACE_XSTATS 2	/* tx_q<N>_pace_bytes, tx_q<N>_pace_full_ns */
#define TGW_PACE_READ_NS 1000000	/* a read slower than this is retried */
#define TGW_PACE_CHECK_MS 3	/* the wait of the exactness check */
#define TGW_PACE_CHECKS 20	/* exactness checks per snapshot at most */

/* Datapath counters of one slot: written by its owner lcore only. */
struct tgw_dp_stats {
	uint64_t tx_pkts;
	uint64_t tx_bytes;
	uint64_t tx_dropped;	/**< Tx queue full after the retries */
} __rte_cache_aligned;

/* One live tenant (or the default row at TGW_DEFAULT_SLOT). */
struct tgw_slot {
	bool used;
	bool retiring;		/**< replaced or removed by a reload */
	struct tgw_tenant_conf conf;
	uint16_t rxq[TGW_MAX_RXQ_PER_TENANT];
	uint16_t txq;
	uint32_t mtr_id;	/**< 0: no meter */
	uint32_t prof_id;
	struct rte_flow *flow;
	uint32_t prio;		/**< its rule's priority: 0, or 1 beside */
				/**< a retiring rule of the same pattern */
	uint32_t shaper_id;	/**< rte_tm shaper profile, 0: unpaced */
};

/* What the view shows for a slot, refreshed once a second. */
struct tgw_row {
	char name[TGW_NAME_LEN];
	uint64_t packets, bytes;
	uint64_t green, yellow, red;
	uint64_t rx_missed;	/**< matched, never polled (Rx queue full) */
	uint64_t dropped;	/**< red + rx_missed + tx_dropped */
	uint64_t tx_pkts, tx_bytes, tx_dropped;
	uint64_t pace_bytes;	/**< what left the Tx queue (the pacer's count) */
	uint64_t pace_full_ns;	/**< time its bucket sat full */
	uint64_t pace_ns;	/**< when the two were read, ns since start */
	bool pace_exact;	/**< no stretch full pending at the read */
	bool paced;		/**< the four above are there */
	double tx_mbps;
	uint32_t rate_limit_mbps;
	bool metered;
};

/* One Rx queue an lcore polls and the Tx queue its frames leave on. */
struct tgw_fwd {
	uint16_t rx_port, rxq, tx_port, txq;
	uint16_t slot;		/**< counters; TGW_MAX_TENANTS + 1: none */
};

struct tgw_plan {
	unsigned int n;
	struct tgw_fwd fwd[];
};

static struct {
	struct tgw_config conf;
	const char *config_file;
	bool macswap;
	int view_json;		/**< 1 JSON lines, 0 table, -1 by isatty */
	unsigned int duration;
	uint16_t in_port, out_port;
	uint16_t nb_rxq, nb_txq;	/**< of the ingress / egress port */
	uint32_t link_mbps;
	struct rte_mempool *pool;
	struct tgw_slot slots[TGW_MAX_TENANTS + 1];
	struct tgw_dp_stats dp[TGW_MAX_TENANTS + 2];
	bool rxq_used[TGW_MAX_QUEUES];
	bool txq_used[TGW_MAX_QUEUES];
	uint32_t next_prof_id;
	uint32_t next_mtr_id;
	uint32_t next_shaper_id;
	unsigned int workers[RTE_MAX_LCORE];
	unsigned int n_workers;
	struct tgw_plan *plan[RTE_MAX_LCORE];	/**< per worker index */
	uint64_t plan_gen;
	uint64_t seen_gen[RTE_MAX_LCORE];
	uint64_t stale_freed;	/**< frames left in a retired queue */
	pthread_mutex_t view_lock;
	struct tgw_row rows[TGW_MAX_TENANTS + 1];
	unsigned int n_rows;
	uint64_t prev_tx_bytes[TGW_MAX_TENANTS + 1];
	uint64_t prev_tsc;
	/* the egress port's pacing xstats (vbr on swverbs), by Tx queue */
	bool pace;			/**< the port has them */
	uint64_t pace_id[TGW_MAX_QUEUES][TGW_PACE_XSTATS];
	uint64_t pace_base[TGW_MAX_TENANTS + 1][TGW_PACE_XSTATS];
	uint64_t pace_prev[TGW_MAX_TENANTS + 1][2];	/**< bytes, ns */
	uint64_t start_ns;		/**< CLOCK_MONOTONIC at start */
	uint64_t reloads, reload_errors;
	bool launched;		/**< the workers run */
} g = {
	.view_json = -1,
	.out_port = 1,
	.next_prof_id = 1,
	.next_mtr_id = 1,
	.next_shaper_id = 1,
	.view_lock = PTHREAD_MUTEX_INITIALIZER,
};

static volatile sig_atomic_t quit_flag;
static volatile sig_atomic_t reload_flag;
static volatile bool workers_stop;

static void
tgw_on_signal(int sig)
{
	if (sig == SIGHUP)
		reload_flag = 1;
	else
		quit_flag = 1;
}

/* ---- datapath ---- */

static void
tgw_macswap(struct rte_mbuf **pkts, uint16_t n)
{
	struct rte_ether_hdr *eh;
	struct rte_ether_addr a;
	uint16_t i;

	for (i = 0; i < n; i++) {
		eh = rte_pktmbuf_mtod(pkts[i], struct rte_ether_hdr *);
		rte_ether_addr_copy(&eh->dst_addr, &a);
		rte_ether_addr_copy(&eh->src_addr, &eh->dst_addr);
		rte_ether_addr_copy(&a, &eh->src_addr);
	}
}

static void
tgw_fwd_one(const struct tgw_fwd *f)
{
	struct rte_mbuf *pkts[TGW_BURST];
	struct tgw_dp_stats *st = &g.dp[f->slot];
	uint16_t n, sent = 0, i;
	uint64_t bytes = 0;
	int tries = 0;

	n = rte_eth_rx_burst(f->rx_port, f->rxq, pkts, TGW_BURST);
	if (n == 0)
		return;
	if (g.macswap)
		tgw_macswap(pkts, n);
	/* retry while the queue takes frames; a full (paced) queue drops */
	while (sent < n && tries++ <= TGW_TX_RETRIES) {
		uint16_t k = rte_eth_tx_burst(f->tx_port, f->txq, pkts + sent,
					      n - sent);

		if (k == 0)
			break;
		sent += k;
	}
	for (i = 0; i < sent; i++)
		bytes += rte_pktmbuf_pkt_len(pkts[i]);
	for (i = sent; i < n; i++)
		rte_pktmbuf_free(pkts[i]);
	__atomic_store_n(&st->tx_pkts, st->tx_pkts + sent, __ATOMIC_RELAXED);
	__atomic_store_n(&st->tx_bytes, st->tx_bytes + bytes, __ATOMIC_RELAXED);
	__atomic_store_n(&st->tx_dropped, st->tx_dropped + (n - sent),
			 __ATOMIC_RELAXED);
}

/* One pass over worker W's plan; returns the plan generation it saw. */
static void
tgw_poll_once(unsigned int w)
{
	uint64_t gen = __atomic_load_n(&g.plan_gen, __ATOMIC_ACQUIRE);
	struct tgw_plan *p = __atomic_load_n(&g.plan[w], __ATOMIC_ACQUIRE);
	unsigned int i;

	if (p != NULL)
		for (i = 0; i < p->n; i++)
			tgw_fwd_one(&p->fwd[i]);
	__atomic_store_n(&g.seen_gen[w], gen, __ATOMIC_RELEASE);
}

static int
tgw_worker(void *arg)
{
	unsigned int w = (unsigned int)(uintptr_t)arg;

	while (!__atomic_load_n(&workers_stop, __ATOMIC_RELAXED))
		tgw_poll_once(w);
	return 0;
}

/* Wait MS milliseconds, forwarding meanwhile when the main lcore is the
 * only forwarder. */
static void
tgw_wait_ms(unsigned int ms)
{
	uint64_t end = rte_get_tsc_cycles() + rte_get_tsc_hz() / 1000 * ms;

	if (g.n_workers > 0) {
		usleep(ms * 1000);
		return;
	}
	while (rte_get_tsc_cycles() < end)
		tgw_poll_once(0);
}

/* ---- egress departures: the pacer's counts ---- */

/*
 * What left a tenant's Tx queue, and when: the egress port's
 * tx_q<N>_pace_bytes and tx_q<N>_pace_full_ns xstats (vbr on swverbs),
 * read with the time of the read. What the Tx queue took (tx_bytes) is
 * not it: a paced queue holds up to TGW_TXD frames. Without those xstats
 * (a NIC whose driver does not show its pacer) the view's rates come
 * from tx_bytes.
 */
struct tgw_pace_sample {
	uint64_t v[TGW_PACE_XSTATS];	/**< bytes, full_ns (the xstats) */
	uint64_t ns;			/**< read at, ns since start */
	bool exact;
};

static uint64_t
tgw_now_ns(void)
{
	struct timespec ts;

	/* the pacer's clock (swverbs: CLOCK_MONOTONIC), not the TSC's */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void
tgw_pace_init(void)
{
	static const char *const names[TGW_PACE_XSTATS] = {
		"pace_bytes", "pace_full_ns",
	};
	char name[RTE_ETH_XSTATS_NAME_SIZE];
	unsigned int q, k;

	for (q = 0; q < g.nb_txq; q++)
		for (k = 0; k < TGW_PACE_XSTATS; k++) {
			snprintf(name, sizeof(name), "tx_q%u_%s", q, names[k]);
			if (rte_eth_xstats_get_id_by_name(g.out_port, name,
							  &g.pace_id[q][k]) != 0)
				return;
		}
	g.pace = true;
}

/* Read the pacing xstats of the N Tx queues TXQ[] into SP[]; a read that
 * the scheduler stretched (the time would not be the read's) is redone. */
static int
tgw_pace_read(const uint16_t *txq, unsigned int n, struct tgw_pace_sample *sp)
{
	uint64_t ids[(TGW_MAX_TENANTS + 1) * TGW_PACE_XSTATS];
	uint64_t v[(TGW_MAX_TENANTS + 1) * TGW_PACE_XSTATS];
	uint64_t a, b;
	unsigned int i, k, tries = 0;

	for (i = 0; i < n; i++)
		for (k = 0; k < TGW_PACE_XSTATS; k++)
			ids[i * TGW_PACE_XSTATS + k] = g.pace_id[txq[i]][k];
	do {
		a = tgw_now_ns();
		if (rte_eth_xstats_get_by_id(g.out_port, ids, v,
					     n * TGW_PACE_XSTATS) !=
		    (int)(n * TGW_PACE_XSTATS))
			return -1;
		b = tgw_now_ns();
	} while (b - a > TGW_PACE_READ_NS && ++tries < 8);
	for (i = 0; i < n; i++) {
		for (k = 0; k < TGW_PACE_XSTATS; k++)
			sp[i].v[k] = v[i * TGW_PACE_XSTATS + k];
		sp[i].ns = b - g.start_ns;
		sp[i].exact = false;
	}
	return 0;
}

/* Slot S's Tx queue. */
static uint16_t
tgw_slot_txq(unsigned int s)
{
	return s == TGW_DEFAULT_SLOT ? 0 : g.slots[s].txq;
}

/*
 * Every live slot's departures into SP[slot]. The pacer adds a stretch
 * its bucket sat full (the queue empty, or the pacer descheduled) to
 * full_ns at its next departure: a read within such a stretch has the
 * bytes short and the stretch not yet counted. So a read is exact once a
 * read TGW_PACE_CHECK_MS later shows the same full_ns and, for a paced
 * queue, more bytes (the pacer ran and had nothing pending); else the
 * later read is checked in turn, TGW_PACE_CHECKS times at most.
 */
static void
tgw_pace_snapshot(struct tgw_pace_sample *sp)
{
	struct tgw_pace_sample a[TGW_MAX_TENANTS + 1], b[TGW_MAX_TENANTS + 1];
	unsigned int slot[TGW_MAX_TENANTS + 1];
	uint16_t txq[TGW_MAX_TENANTS + 1];
	unsigned int s, n = 0, i, round, left;

	memset(sp, 0, sizeof(*sp) * (TGW_MAX_TENANTS + 1));
	if (!g.pace)
		return;
	for (s = 0; s <= TGW_MAX_TENANTS; s++) {
		if (s < TGW_MAX_TENANTS && !g.slots[s].used)
			continue;
		txq[n] = tgw_slot_txq(s);
		slot[n++] = s;
	}
	if (tgw_pace_read(txq, n, a) != 0)
		return;
	for (round = 0; round < TGW_PACE_CHECKS; round++) {
		tgw_wait_ms(TGW_PACE_CHECK_MS);
		if (tgw_pace_read(txq, n, b) != 0)
			break;
		for (i = 0, left = 0; i < n; i++) {
			bool paced = slot[i] != TGW_DEFAULT_SLOT &&
				g.slots[slot[i]].shaper_id != 0;

			if (a[i].exact)
				continue;
			if (b[i].v[1] == a[i].v[1] &&
			    (b[i].v[0] > a[i].v[0] || !paced))
				a[i].exact = true;
			else {
				a[i] = b[i];
				left++;
			}
		}
		if (left == 0)
			break;
	}
	for (i = 0; i < n; i++)
		sp[slot[i]] = a[i];
}

/* Slot S's counts start here (its Tx queue may have served another). */
static void
tgw_pace_base(unsigned int s)
{
	struct tgw_pace_sample now = { 0 };
	uint16_t q = tgw_slot_txq(s);

	if (g.pace && tgw_pace_read(&q, 1, &now) != 0)
		memset(&now, 0, sizeof(now));
	memcpy(g.pace_base[s], now.v, sizeof(now.v));
	g.pace_prev[s][0] = 0;
	g.pace_prev[s][1] = now.ns;
}

/* ---- plans ---- */

static unsigned int
tgw_owner(unsigned int slot)
{
	unsigned int n = g.n_workers > 0 ? g.n_workers : 1;

	return slot % n;
}

/*
 * A set of plans, one per forwarding lcore, is allocated whole before any
 * slot changes (a reload allocates the two it needs first, and is refused
 * when it cannot: the lcores keep running the plans they have), filled
 * from the slots, then published whole. Publishing cannot fail.
 */
static size_t
tgw_plan_size(void)
{
	return sizeof(struct tgw_plan) +
	       sizeof(((struct tgw_plan *)NULL)->fwd[0]) * (TGW_MAX_QUEUES + 2);
}

static void
tgw_plans_free(struct tgw_plan **set)
{
	unsigned int w;

	for (w = 0; w < RTE_MAX_LCORE; w++) {
		free(set[w]);
		set[w] = NULL;
	}
}

static int
tgw_plans_alloc(struct tgw_plan **set)
{
	unsigned int nw = g.n_workers > 0 ? g.n_workers : 1;
	unsigned int w;

	memset(set, 0, sizeof(*set) * RTE_MAX_LCORE);
	for (w = 0; w < nw; w++) {
		set[w] = calloc(1, tgw_plan_size());
		if (set[w] == NULL) {
			fprintf(stderr, "tenant-gw: no memory for the "
				"forwarding plans (%u of %zu bytes)\n", nw,
				tgw_plan_size());
			tgw_plans_free(set);
			return -ENOMEM;
		}
	}
	return 0;
}

/* Fill SET from the used slots: retiring ones too when WITH_RETIRING, none
 * that SKIP (may be NULL) names. */
static void
tgw_plans_fill(struct tgw_plan **set, bool with_retiring, const bool *skip)
{
	unsigned int nw = g.n_workers > 0 ? g.n_workers : 1;
	unsigned int w, s, q;
	struct tgw_plan *p;

	for (w = 0; w < nw; w++) {
		p = set[w];
		p->n = 0;
		if (w == 0) {
			/* default queue and the way back */
			p->fwd[p->n++] = (struct tgw_fwd){
				g.in_port, 0, g.out_port, 0, TGW_DEFAULT_SLOT };
			p->fwd[p->n++] = (struct tgw_fwd){
				g.out_port, 0, g.in_port, 0,
				TGW_MAX_TENANTS + 1 };
		}
		for (s = 0; s < TGW_MAX_TENANTS; s++) {
			struct tgw_slot *sl = &g.slots[s];

			if (!sl->used || tgw_owner(s) != w ||
			    (sl->retiring && !with_retiring) ||
			    (skip != NULL && skip[s]))
				continue;
			for (q = 0; q < sl->conf.rx_queues; q++)
				p->fwd[p->n++] = (struct tgw_fwd){
					g.in_port, sl->rxq[q], g.out_port,
					sl->txq, s };
		}
	}
}

/* Hand SET to the lcores, wait until each runs it, free the plans it
 * replaced; SET is left empty. */
static void
tgw_plans_publish(struct tgw_plan **set)
{
	unsigned int nw = g.n_workers > 0 ? g.n_workers : 1;
	struct tgw_plan *old[RTE_MAX_LCORE] = { NULL };
	unsigned int w;
	uint64_t gen;

	for (w = 0; w < nw; w++) {
		old[w] = g.plan[w];
		__atomic_store_n(&g.plan[w], set[w], __ATOMIC_RELEASE);
		set[w] = NULL;
	}
	gen = __atomic_add_fetch(&g.plan_gen, 1, __ATOMIC_ACQ_REL);
	if (g.n_workers == 0)
		tgw_poll_once(0);
	for (w = 0; w < nw && g.launched; w++)
		while (__atomic_load_n(&g.seen_gen[w], __ATOMIC_ACQUIRE) < gen)
			usleep(100);
	tgw_plans_free(old);
}

/* Build and publish every lcore's plan from the used slots, not the
 * retiring ones. */
static int
tgw_publish(void)
{
	struct tgw_plan *set[RTE_MAX_LCORE];

	if (tgw_plans_alloc(set) != 0)
		return -ENOMEM;
	tgw_plans_fill(set, false, NULL);
	tgw_plans_publish(set);
	return 0;
}

/* ---- rules, meters, rates ---- */

static int
tgw_policy_create(uint16_t port)
{
	static const struct rte_flow_action pass[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	static const struct rte_flow_action drop[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_DROP },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	struct rte_mtr_meter_policy_params pp = {
		.actions = { pass, pass, drop },
	};
	struct rte_mtr_error err = { 0 };
	int ret;

	ret = rte_mtr_meter_policy_add(port, TGW_POLICY_ID, &pp, &err);
	if (ret != 0)
		fprintf(stderr, "tenant-gw: meter policy: %s (%s)\n",
			err.message ? err.message : "", rte_strerror(-ret));
	return ret;
}

static int
tgw_profile_add(const struct tgw_meter_conf *mc, uint32_t *id)
{
	struct rte_mtr_meter_profile mp = { 0 };
	struct rte_mtr_error err = { 0 };
	int ret;

	if (mc->alg == TGW_METER_SRTCM) {
		mp.alg = RTE_MTR_SRTCM_RFC2697;
		mp.srtcm_rfc2697.cir = mc->cir_kbps * 125;
		mp.srtcm_rfc2697.cbs = mc->cbs;
		mp.srtcm_rfc2697.ebs = mc->ebs;
	} else {
		mp.alg = RTE_MTR_TRTCM_RFC2698;
		mp.trtcm_rfc2698.cir = mc->cir_kbps * 125;
		mp.trtcm_rfc2698.pir = mc->pir_kbps * 125;
		mp.trtcm_rfc2698.cbs = mc->cbs;
		mp.trtcm_rfc2698.pbs = mc->pbs;
	}
	*id = g.next_prof_id++;
	ret = rte_mtr_meter_profile_add(g.in_port, *id, &mp, &err);
	if (ret != 0)
		fprintf(stderr, "tenant-gw: meter profile: %s (%s)\n",
			err.message ? err.message : "", rte_strerror(-ret));
	return ret;
}

static int
tgw_meter_create(struct tgw_slot *sl)
{
	struct rte_mtr_params mp = { 0 };
	struct rte_mtr_error err = { 0 };
	int ret;

	if (sl->conf.meter.alg == TGW_METER_NONE)
		return 0;
	ret = tgw_profile_add(&sl->conf.meter, &sl->prof_id);
	if (ret != 0)
		return ret;
	mp.meter_profile_id = sl->prof_id;
	mp.meter_policy_id = TGW_POLICY_ID;
	mp.meter_enable = 1;
	mp.stats_mask = RTE_MTR_STATS_N_PKTS_GREEN | RTE_MTR_STATS_N_PKTS_YELLOW |
		RTE_MTR_STATS_N_PKTS_RED | RTE_MTR_STATS_N_PKTS_DROPPED |
		RTE_MTR_STATS_N_BYTES_GREEN | RTE_MTR_STATS_N_BYTES_YELLOW |
		RTE_MTR_STATS_N_BYTES_RED | RTE_MTR_STATS_N_BYTES_DROPPED;
	/* a fresh id each time: a frame in flight never finds a new meter */
	sl->mtr_id = g.next_mtr_id++;
	ret = rte_mtr_create(g.in_port, sl->mtr_id, &mp, 0, &err);
	if (ret != 0) {
		fprintf(stderr, "tenant-gw: %s: meter: %s (%s)\n", sl->conf.name,
			err.message ? err.message : "", rte_strerror(-ret));
		rte_mtr_meter_profile_delete(g.in_port, sl->prof_id, &err);
		sl->mtr_id = 0;
	}
	return ret;
}

static void
tgw_meter_destroy(struct tgw_slot *sl)
{
	struct rte_mtr_error err = { 0 };

	if (sl->mtr_id == 0)
		return;
	if (rte_mtr_destroy(g.in_port, sl->mtr_id, &err) != 0 ||
	    rte_mtr_meter_profile_delete(g.in_port, sl->prof_id, &err) != 0)
		fprintf(stderr, "tenant-gw: %s: meter delete: %s\n",
			sl->conf.name, err.message ? err.message : "");
	sl->mtr_id = 0;
}

/*
 * Egress pacing through rte_tm: a root node and one leaf per paced Tx
 * queue, each leaf a shaper (peak rate, peak size) that the PMD puts on the
 * queue's QP. rte_tm rather than rte_eth_set_queue_rate_limit(): it takes
 * byte/s rates and the bucket depth, and is refused neither while the link
 * is down (a shm cable with no other end yet) nor for the bucket. Queue 0
 * (unmatched traffic) is a leaf with no shaper, so the root always has a
 * leaf and the hierarchy stays committed.
 */
#define TGW_TM_ROOT 1000

static uint64_t
tgw_burst_bytes(const struct tgw_tenant_conf *t)
{
	uint64_t b = (uint64_t)t->rate_mbps * 125000 / 1000 * 20; /* 20 ms */

	if (t->burst_bytes != 0)
		return t->burst_bytes;
	return b < 2 * 1514 ? 2 * 1514 : b;
}

static int
tgw_tm_fail(const char *what, const char *name, int ret,
	    const struct rte_tm_error *err)
{
	fprintf(stderr, "tenant-gw: %s: %s: %s (%s)\n", name, what,
		err->message ? err->message : "", rte_strerror(-ret));
	return ret;
}

static int
tgw_tm_leaf(uint16_t txq, uint32_t prof, const char *name)
{
	struct rte_tm_node_params lp = {
		.shaper_profile_id = prof,
		.leaf = { .cman = RTE_TM_CMAN_TAIL_DROP,
			  .wred = { .wred_profile_id =
					RTE_TM_WRED_PROFILE_ID_NONE } },
	};
	struct rte_tm_error err = { 0 };
	int ret;

	ret = rte_tm_node_add(g.out_port, txq, TGW_TM_ROOT, 0, 1, 1, &lp, &err);
	return ret == 0 ? 0 : tgw_tm_fail("tm leaf", name, ret, &err);
}

static int
tgw_tm_root(void)
{
	struct rte_tm_node_params np = {
		.shaper_profile_id = RTE_TM_SHAPER_PROFILE_ID_NONE,
		.nonleaf = { .n_sp_priorities = 1 },
	};
	struct rte_tm_error err = { 0 };
	int ret;

	ret = rte_tm_node_add(g.out_port, TGW_TM_ROOT, RTE_TM_NODE_ID_NULL, 0,
			      1, 0, &np, &err);
	if (ret != 0)
		return tgw_tm_fail("tm root", "egress", ret, &err);
	return tgw_tm_leaf(0, RTE_TM_SHAPER_PROFILE_ID_NONE, "(unmatched)");
}

static int
tgw_tm_commit(void)
{
	struct rte_tm_error err = { 0 };
	int ret = rte_tm_hierarchy_commit(g.out_port, 0, &err);

	return ret == 0 ? 0 : tgw_tm_fail("tm commit", "egress", ret, &err);
}

static int
tgw_shaper_add(const struct tgw_tenant_conf *t, uint32_t *id)
{
	struct rte_tm_shaper_params sp = {
		.peak = { .rate = (uint64_t)t->rate_mbps * 125000,
			  .size = tgw_burst_bytes(t) },
	};
	struct rte_tm_error err = { 0 };
	int ret;

	*id = g.next_shaper_id++;
	ret = rte_tm_shaper_profile_add(g.out_port, *id, &sp, &err);
	return ret == 0 ? 0 : tgw_tm_fail("tm shaper profile", t->name, ret, &err);
}

/* Pace slot SL's Tx queue as T says (rate 0: unpaced). */
static int
tgw_rate_set(struct tgw_slot *sl, const struct tgw_tenant_conf *t)
{
	struct rte_tm_error err = { 0 };
	uint32_t prof = 0, old = sl->shaper_id;
	int ret;

	if (t->rate_mbps != 0 && tgw_shaper_add(t, &prof) != 0)
		return -EINVAL;
	if (old == 0 && prof != 0) {
		ret = tgw_tm_leaf(sl->txq, prof, t->name);
	} else if (old != 0 && prof != 0) {
		ret = rte_tm_node_shaper_update(g.out_port, sl->txq, prof, &err);
		if (ret != 0)
			tgw_tm_fail("tm shaper update", t->name, ret, &err);
	} else if (old != 0) {
		ret = rte_tm_node_delete(g.out_port, sl->txq, &err);
		if (ret != 0)
			tgw_tm_fail("tm leaf delete", t->name, ret, &err);
	} else {
		ret = 0;
	}
	if (ret != 0) {
		if (prof != 0)
			rte_tm_shaper_profile_delete(g.out_port, prof, &err);
		return ret;
	}
	if (old != 0)
		rte_tm_shaper_profile_delete(g.out_port, old, &err);
	sl->shaper_id = prof;
	return 0;
}

/* The rule of slot S: its match, COUNT, METER, QUEUE or RSS. */
static struct rte_flow *
tgw_rule_create(const struct tgw_slot *sl, struct rte_flow_error *error)
{
	const struct tgw_tenant_conf *t = &sl->conf;
	struct rte_flow_attr attr = { .ingress = 1, .priority = sl->prio };
	struct rte_flow_item pattern[4];
	struct rte_flow_action actions[5];
	struct rte_flow_item_vlan vlan = { 0 }, vlan_m = { 0 };
	struct rte_flow_item_ipv4 v4 = { 0 }, v4_m = { 0 };
	struct rte_flow_item_ipv6 v6 = { 0 }, v6_m = { 0 };
	struct rte_flow_action_count count = { 0 };
	struct rte_flow_action_meter meter = { .mtr_id = sl->mtr_id };
	struct rte_flow_action_queue queue = { .index = sl->rxq[0] };
	struct rte_flow_action_rss rss = {
		.types = RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP,
		.queue_num = t->rx_queues,
		.queue = sl->rxq,
	};
	unsigned int np = 0, na = 0, i;

	memset(pattern, 0, sizeof(pattern));
	memset(actions, 0, sizeof(actions));
	pattern[np++].type = RTE_FLOW_ITEM_TYPE_ETH;
	if (t->vlan >= 0) {
		vlan.tci = rte_cpu_to_be_16(t->vlan);
		vlan_m.tci = rte_cpu_to_be_16(0x0fff);
		pattern[np].type = RTE_FLOW_ITEM_TYPE_VLAN;
		pattern[np].spec = &vlan;
		pattern[np++].mask = &vlan_m;
	}
	if (t->family == AF_INET) {
		uint32_t m = t->plen == 0 ? 0 : ~0u << (32 - t->plen);

		memcpy(&v4.hdr.dst_addr, t->addr, 4);
		v4_m.hdr.dst_addr = rte_cpu_to_be_32(m);
		pattern[np].type = RTE_FLOW_ITEM_TYPE_IPV4;
		pattern[np].spec = &v4;
		pattern[np++].mask = &v4_m;
	} else if (t->family == AF_INET6) {
		uint8_t *dm = TGW_IPV6_BYTES(v6_m.hdr.dst_addr);

		memcpy(TGW_IPV6_BYTES(v6.hdr.dst_addr), t->addr, 16);
		for (i = 0; i < 16; i++) {
			unsigned int bit = i * 8;

			if (bit + 8 <= t->plen)
				dm[i] = 0xff;
			else if (bit < t->plen)
				dm[i] = 0xff << (8 - (t->plen - bit));
		}
		pattern[np].type = RTE_FLOW_ITEM_TYPE_IPV6;
		pattern[np].spec = &v6;
		pattern[np++].mask = &v6_m;
	}
	pattern[np].type = RTE_FLOW_ITEM_TYPE_END;
	actions[na].type = RTE_FLOW_ACTION_TYPE_COUNT;
	actions[na++].conf = &count;
	if (sl->mtr_id != 0) {
		actions[na].type = RTE_FLOW_ACTION_TYPE_METER;
		actions[na++].conf = &meter;
	}
	if (t->rx_queues > 1) {
		actions[na].type = RTE_FLOW_ACTION_TYPE_RSS;
		actions[na++].conf = &rss;
	} else {
		actions[na].type = RTE_FLOW_ACTION_TYPE_QUEUE;
		actions[na++].conf = &queue;
	}
	actions[na].type = RTE_FLOW_ACTION_TYPE_END;
	return rte_flow_create(g.in_port, &attr, pattern, actions, error);
}

/* Unmatched frames: COUNT and QUEUE 0 or DROP, below every tenant. */
static struct rte_flow *
tgw_default_rule(bool drop, struct rte_flow_error *error)
{
	struct rte_flow_attr attr = { .ingress = 1, .priority = 2 };
	struct rte_flow_item pattern[] = {
		{ .type = RTE_FLOW_ITEM_TYPE_ETH },
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	struct rte_flow_action_count count = { 0 };
	struct rte_flow_action_queue queue = { .index = 0 };
	struct rte_flow_action actions[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_COUNT, .conf = &count },
		{ .type = drop ? RTE_FLOW_ACTION_TYPE_DROP :
			RTE_FLOW_ACTION_TYPE_QUEUE, .conf = drop ? NULL : &queue },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};

	return rte_flow_create(g.in_port, &attr, pattern, actions, error);
}

static int
tgw_alloc_queues(struct tgw_slot *sl)
{
	unsigned int q, n = 0;

	for (q = 1; q < g.nb_rxq && n < sl->conf.rx_queues; q++)
		if (!g.rxq_used[q])
			sl->rxq[n++] = q;
	if (n < sl->conf.rx_queues) {
		fprintf(stderr, "tenant-gw: %s: no free Rx queue left "
			"(%u configured; raise spare_queues)\n", sl->conf.name,
			g.nb_rxq);
		return -ENOSPC;
	}
	for (q = 1; q < g.nb_txq && g.txq_used[q]; q++)
		;
	if (q == g.nb_txq) {
		fprintf(stderr, "tenant-gw: %s: no free Tx queue left "
			"(%u configured; raise spare_queues)\n", sl->conf.name,
			g.nb_txq);
		return -ENOSPC;
	}
	sl->txq = q;
	g.txq_used[q] = true;
	for (n = 0; n < sl->conf.rx_queues; n++)
		g.rxq_used[sl->rxq[n]] = true;
	return 0;
}

static void
tgw_free_queues(struct tgw_slot *sl)
{
	unsigned int n;

	for (n = 0; n < sl->conf.rx_queues; n++)
		g.rxq_used[sl->rxq[n]] = false;
	g.txq_used[sl->txq] = false;
}

/* Take a free slot for T with its queues, meter and rate (no rule yet). */
static int
tgw_slot_prepare(const struct tgw_tenant_conf *t)
{
	struct tgw_slot *sl;
	unsigned int s;

	for (s = 0; s < TGW_MAX_TENANTS && g.slots[s].used; s++)
		;
	if (s == TGW_MAX_TENANTS)
		return -ENOSPC;
	sl = &g.slots[s];
	memset(sl, 0, sizeof(*sl));
	sl->conf = *t;
	if (tgw_alloc_queues(sl) != 0)
		return -ENOSPC;
	if (tgw_meter_create(sl) != 0)
		goto fail;
	if (tgw_rate_set(sl, t) != 0) {
		tgw_meter_destroy(sl);
		goto fail;
	}
	memset(&g.dp[s], 0, sizeof(g.dp[s]));
	g.prev_tx_bytes[s] = 0;
	tgw_pace_base(s);
	sl->used = true;
	return s;
fail:
	tgw_free_queues(sl);
	return -EINVAL;
}

static void
tgw_slot_release(unsigned int s)
{
	struct tgw_slot *sl = &g.slots[s];
	struct rte_flow_error ferr = { 0 };

	if (sl->flow != NULL && rte_flow_destroy(g.in_port, sl->flow, &ferr) != 0)
		fprintf(stderr, "tenant-gw: %s: flow destroy: %s\n",
			sl->conf.name, ferr.message ? ferr.message : "");
	sl->flow = NULL;
	tgw_meter_destroy(sl);
	if (sl->shaper_id != 0) {
		struct tgw_tenant_conf unpaced = sl->conf;

		unpaced.rate_mbps = 0;
		tgw_rate_set(sl, &unpaced);
	}
	tgw_free_queues(sl);
	sl->used = false;
}

static int
tgw_slot_rule(unsigned int s)
{
	struct tgw_slot *sl = &g.slots[s];
	struct rte_flow_error ferr = { 0 };

	sl->flow = tgw_rule_create(sl, &ferr);
	if (sl->flow == NULL) {
		fprintf(stderr, "tenant-gw: %s: flow create: %s (%s)\n",
			sl->conf.name, ferr.message ? ferr.message : "",
			rte_strerror(rte_errno));
		return -EINVAL;
	}
	return 0;
}

/* Free what a retired queue still holds (its rule is gone). */
static void
tgw_drain(const struct tgw_slot *sl)
{
	struct rte_mbuf *pkts[TGW_BURST];
	unsigned int q;
	uint16_t n, i;

	for (q = 0; q < sl->conf.rx_queues; q++) {
		while ((n = rte_eth_rx_burst(g.in_port, sl->rxq[q], pkts,
					     TGW_BURST)) > 0) {
			for (i = 0; i < n; i++)
				rte_pktmbuf_free(pkts[i]);
			g.stale_freed += n;
		}
	}
}

/* ---- reload ---- */

static bool
tgw_meter_same(const struct tgw_meter_conf *a, const struct tgw_meter_conf *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

/*
 * The priority of fresh slot S's rule: 0, or the other of 0 and 1 when a
 * retiring slot has a rule of the same pattern. Both rules exist for a
 * moment (make before break), and a NIC takes no two rules of one pattern
 * at one priority: a ConnectX merges them (frames twice) or refuses the
 * second, and so does vbr.
 */
static uint32_t
tgw_fresh_prio(unsigned int s)
{
	const struct tgw_tenant_conf *a = &g.slots[s].conf, *b;
	unsigned int r;

	for (r = 0; r < TGW_MAX_TENANTS; r++) {
		if (r == s || !g.slots[r].used || !g.slots[r].retiring ||
		    g.slots[r].flow == NULL)
			continue;
		b = &g.slots[r].conf;
		if (a->vlan == b->vlan && a->family == b->family &&
		    a->plen == b->plen &&
		    memcmp(a->addr, b->addr, sizeof(a->addr)) == 0)
			return g.slots[r].prio ^ 1;
	}
	return 0;
}

static int
tgw_slot_of(const char *name)
{
	unsigned int s;

	for (s = 0; s < TGW_MAX_TENANTS; s++)
		if (g.slots[s].used && !g.slots[s].retiring &&
		    strcmp(g.slots[s].conf.name, name) == 0)
			return s;
	return -1;
}

/* In-place changes of a kept tenant: its rate and its meter profile. */
static int
tgw_update_kept(struct tgw_slot *sl, const struct tgw_tenant_conf *t)
{
	struct rte_mtr_error err = { 0 };
	uint32_t old_prof, new_prof;

	if (t->rate_mbps != sl->conf.rate_mbps ||
	    t->burst_bytes != sl->conf.burst_bytes) {
		if (tgw_rate_set(sl, t) != 0)
			return -EINVAL;
		sl->conf.rate_mbps = t->rate_mbps;
		sl->conf.burst_bytes = t->burst_bytes;
	}
	if (!tgw_meter_same(&t->meter, &sl->conf.meter)) {
		old_prof = sl->prof_id;
		if (tgw_profile_add(&t->meter, &new_prof) != 0)
			return -EINVAL;
		if (rte_mtr_meter_profile_update(g.in_port, sl->mtr_id,
						 new_prof, &err) != 0) {
			fprintf(stderr, "tenant-gw: %s: meter profile update: "
				"%s\n", t->name, err.message ? err.message : "");
			rte_mtr_meter_profile_delete(g.in_port, new_prof, &err);
			return -EINVAL;
		}
		rte_mtr_meter_profile_delete(g.in_port, old_prof, &err);
		sl->prof_id = new_prof;
		sl->conf.meter = t->meter;
	}
	return 0;
}

static void
tgw_reload(void)
{
	struct tgw_plan *make[RTE_MAX_LCORE], *brk[RTE_MAX_LCORE];
	struct tgw_config nc;
	bool fresh[TGW_MAX_TENANTS] = { false };
	bool published = false;
	char err[512];
	unsigned int i, s, kept = 0, added = 0, removed = 0;
	int r;

	if (tgw_config_load(g.config_file, g.link_mbps, &nc, err,
			    sizeof(err)) != 0) {
		fprintf(stderr, "tenant-gw: reload refused, the running "
			"configuration stays: %s\n", err);
		g.reload_errors++;
		return;
	}
	if (nc.default_drop != g.conf.default_drop) {
		/* the default rule and its counters stay as started */
		fprintf(stderr, "tenant-gw: reload: \"default\" changes at a "
			"restart only; it stays \"%s\"\n",
			g.conf.default_drop ? "drop" : "queue");
		nc.default_drop = g.conf.default_drop;
	}
	/* the two plan sets it publishes, before anything changes */
	if (tgw_plans_alloc(make) != 0) {
		fprintf(stderr, "tenant-gw: reload refused, the running "
			"configuration stays: out of memory\n");
		g.reload_errors++;
		return;
	}
	if (tgw_plans_alloc(brk) != 0) {
		tgw_plans_free(make);
		fprintf(stderr, "tenant-gw: reload refused, the running "
			"configuration stays: out of memory\n");
		g.reload_errors++;
		return;
	}
	/* which slots stay, which retire */
	for (s = 0; s < TGW_MAX_TENANTS; s++) {
		const struct tgw_tenant_conf *t;
		struct tgw_slot *sl = &g.slots[s];

		if (!sl->used)
			continue;
		t = tgw_config_find(&nc, sl->conf.name);
		if (t == NULL || !tgw_tenant_same_match(t, &sl->conf) ||
		    (t->meter.alg == TGW_METER_NONE) != (sl->mtr_id == 0))
			sl->retiring = true;
	}
	/* make: new slots, polled before their rules exist */
	for (i = 0; i < nc.n_tenants; i++) {
		if (tgw_slot_of(nc.tenants[i].name) >= 0) {
			kept++;
			continue;
		}
		r = tgw_slot_prepare(&nc.tenants[i]);
		if (r < 0)
			goto undo;
		fresh[r] = true;
		added++;
	}
	tgw_plans_fill(make, true, NULL);
	tgw_plans_publish(make);
	published = true;
	for (s = 0; s < TGW_MAX_TENANTS; s++) {
		if (!fresh[s])
			continue;
		g.slots[s].prio = tgw_fresh_prio(s);
		if (tgw_slot_rule(s) != 0)
			goto undo;
	}
	/* the kept tenants' new rates and profiles, in place, once the new
	 * rules exist (a failed reload above changed nothing running) */
	for (i = 0; i < nc.n_tenants; i++) {
		r = tgw_slot_of(nc.tenants[i].name);
		if (r >= 0 && !fresh[r] &&
		    tgw_update_kept(&g.slots[r], &nc.tenants[i]) != 0)
			g.reload_errors++;
	}
	/* break: the old rules, then their queues */
	for (s = 0; s < TGW_MAX_TENANTS; s++) {
		struct rte_flow_error ferr = { 0 };
		struct tgw_slot *sl = &g.slots[s];

		if (!sl->used || !sl->retiring || sl->flow == NULL)
			continue;
		if (rte_flow_destroy(g.in_port, sl->flow, &ferr) != 0)
			fprintf(stderr, "tenant-gw: %s: flow destroy: %s\n",
				sl->conf.name, ferr.message ? ferr.message : "");
		sl->flow = NULL;
	}
	tgw_wait_ms(TGW_DRAIN_MS);
	tgw_plans_fill(brk, false, NULL);
	tgw_plans_publish(brk);
	for (s = 0; s < TGW_MAX_TENANTS; s++) {
		if (!g.slots[s].used || !g.slots[s].retiring)
			continue;
		tgw_drain(&g.slots[s]);
		tgw_slot_release(s);
		removed++;
	}
	g.conf = nc;
	g.reloads++;
	fprintf(stderr, "tenant-gw: reloaded %s: %u kept, %u new, %u "
		"retired\n", g.config_file, kept, added, removed);
	return;
undo:
	fprintf(stderr, "tenant-gw: reload failed, the running configuration "
		"stays\n");
	g.reload_errors++;
	for (s = 0; s < TGW_MAX_TENANTS; s++)
		g.slots[s].retiring = false;
	/* the lcores stop polling the new slots before they go */
	if (published) {
		tgw_plans_fill(brk, false, fresh);
		tgw_plans_publish(brk);
	}
	for (s = 0; s < TGW_MAX_TENANTS; s++)
		if (fresh[s])
			tgw_slot_release(s);
	tgw_plans_free(make);
	tgw_plans_free(brk);
}

/* ---- view ---- */

static void
tgw_read_row(unsigned int s, struct tgw_row *r, double dt,
	     const struct tgw_pace_sample *ps)
{
	const struct tgw_slot *sl = &g.slots[s];
	const struct tgw_dp_stats *st = &g.dp[s];
	struct rte_flow_action_count cconf = { 0 };
	struct rte_flow_action qa = {
		.type = RTE_FLOW_ACTION_TYPE_COUNT, .conf = &cconf,
	};
	struct rte_flow_query_count qc = { 0 };
	struct rte_flow_error ferr = { 0 };
	struct rte_mtr_stats ms = { 0 };
	struct rte_mtr_error merr = { 0 };
	uint64_t mask = 0, seen;
	double prev_mbps = r->tx_mbps;

	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", sl->conf.name);
	if (sl->flow != NULL &&
	    rte_flow_query(g.in_port, sl->flow, &qa, &qc, &ferr) == 0) {
		r->packets = qc.hits;
		r->bytes = qc.bytes;
	}
	if (sl->mtr_id != 0 &&
	    rte_mtr_stats_read(g.in_port, sl->mtr_id, &ms, &mask, 0, &merr) == 0) {
		r->metered = true;
		r->green = ms.n_pkts[RTE_COLOR_GREEN];
		r->yellow = ms.n_pkts[RTE_COLOR_YELLOW];
		r->red = ms.n_pkts[RTE_COLOR_RED] + ms.n_pkts_dropped;
	}
	r->tx_pkts = __atomic_load_n(&st->tx_pkts, __ATOMIC_RELAXED);
	r->tx_bytes = __atomic_load_n(&st->tx_bytes, __ATOMIC_RELAXED);
	r->tx_dropped = __atomic_load_n(&st->tx_dropped, __ATOMIC_RELAXED);
	/* what the rule counted and neither the meter nor the forwarding
	 * saw: the Rx queue was full (or frames are still in it) */
	seen = r->metered ? r->green + r->yellow + r->red :
		r->tx_pkts + r->tx_dropped;
	if (sl->flow != NULL && !(s == TGW_DEFAULT_SLOT && g.conf.default_drop) &&
	    r->packets > seen)
		r->rx_missed = r->packets - seen;
	r->dropped = r->red + r->rx_missed + r->tx_dropped;
	if (s == TGW_DEFAULT_SLOT && g.conf.default_drop)
		r->dropped += r->packets;
	/* the pacer counts the frames of a paced queue only */
	r->paced = g.pace && ps->ns != 0 && sl->shaper_id != 0;
	if (r->paced) {
		r->pace_bytes = ps->v[0] - RTE_MIN(ps->v[0], g.pace_base[s][0]);
		r->pace_full_ns = ps->v[1] - RTE_MIN(ps->v[1], g.pace_base[s][1]);
		r->pace_ns = ps->ns;
		r->pace_exact = ps->exact;
	}
	if (dt > 0) {
		/* a paced queue: its departures over the time between the two
		 * reads; else what it took over the last second */
		if (r->paced)
			r->tx_mbps = ps->ns <= g.pace_prev[s][1] ? 0 :
				(double)(r->pace_bytes - g.pace_prev[s][0]) *
				8 * 1e3 / (double)(ps->ns - g.pace_prev[s][1]);
		else
			r->tx_mbps = (double)(r->tx_bytes -
				g.prev_tx_bytes[s]) * 8 / dt / 1e6;
		g.pace_prev[s][0] = r->pace_bytes;
		g.pace_prev[s][1] = ps->ns;
		g.prev_tx_bytes[s] = r->tx_bytes;
	} else {
		r->tx_mbps = prev_mbps;	/* the summary: the last second's */
	}
	r->rate_limit_mbps = sl->conf.rate_mbps;
}

/* Read every row; RATES: the Tx rates over the time since the last time
 * (else each row keeps the rate it had). */
static void
tgw_snapshot(bool rates)
{
	uint64_t now = rte_get_tsc_cycles();
	double dt = g.prev_tsc == 0 || !rates ? 0 :
		(double)(now - g.prev_tsc) / rte_get_tsc_hz();
	struct tgw_pace_sample ps[TGW_MAX_TENANTS + 1];
	struct tgw_row rows[TGW_MAX_TENANTS + 1];
	unsigned int s, n = 0, i;

	tgw_pace_snapshot(ps);
	for (s = 0; s < TGW_MAX_TENANTS + 1; s++) {
		if (s < TGW_MAX_TENANTS && !g.slots[s].used)
			continue;
		memset(&rows[n], 0, sizeof(rows[n]));
		for (i = 0; i < g.n_rows; i++)
			if (strcmp(g.rows[i].name, g.slots[s].conf.name) == 0)
				rows[n].tx_mbps = g.rows[i].tx_mbps;
		tgw_read_row(s, &rows[n++], dt, &ps[s]);
	}
	if (rates)
		g.prev_tsc = now;
	pthread_mutex_lock(&g.view_lock);
	memcpy(g.rows, rows, sizeof(rows[0]) * n);
	g.n_rows = n;
	pthread_mutex_unlock(&g.view_lock);
}

static void
tgw_print_json(const struct tgw_row *r, double t, bool summary)
{
	printf("{\"time\": %.3f, %s\"tenant\": \"%s\", \"packets\": %" PRIu64
	       ", \"bytes\": %" PRIu64 ", \"green\": %" PRIu64
	       ", \"yellow\": %" PRIu64 ", \"red\": %" PRIu64
	       ", \"rx_missed\": %" PRIu64
	       ", \"dropped\": %" PRIu64 ", \"tx_packets\": %" PRIu64
	       ", \"tx_bytes\": %" PRIu64 ", \"tx_dropped\": %" PRIu64
	       ", \"tx_mbps\": %.3f, \"rate_limit_mbps\": %" PRIu32,
	       t, summary ? "\"summary\": true, " : "", r->name, r->packets,
	       r->bytes, r->green, r->yellow, r->red, r->rx_missed,
	       r->dropped, r->tx_pkts,
	       r->tx_bytes, r->tx_dropped, r->tx_mbps, r->rate_limit_mbps);
	if (r->paced)
		printf(", \"tx_pace_bytes\": %" PRIu64 ", \"tx_pace_full_ns\": %"
		       PRIu64 ", \"tx_pace_time\": %.6f, \"tx_pace_exact\": %s",
		       r->pace_bytes, r->pace_full_ns, r->pace_ns / 1e9,
		       r->pace_exact ? "true" : "false");
	printf("}\n");
}

static void
tgw_print_table(double t, bool summary)
{
	unsigned int i;

	if (!summary)
		printf("\033[H\033[2J");
	printf("tenant-gw  %s  %.0f s  fwd %s  reloads %" PRIu64 "%s\n\n",
	       g.config_file, t, g.macswap ? "macswap" : "io", g.reloads,
	       summary ? "  (summary)" : "");
	printf("%-14s %12s %14s %11s %11s %11s %11s %9s %9s\n", "tenant",
	       "packets", "bytes", "green", "yellow", "red", "dropped",
	       "tx Mbit/s", "limit");
	for (i = 0; i < g.n_rows; i++) {
		const struct tgw_row *r = &g.rows[i];
		char lim[16];

		if (r->rate_limit_mbps != 0)
			snprintf(lim, sizeof(lim), "%" PRIu32, r->rate_limit_mbps);
		else
			snprintf(lim, sizeof(lim), "-");
		printf("%-14s %12" PRIu64 " %14" PRIu64 " %11" PRIu64 " %11"
		       PRIu64 " %11" PRIu64 " %11" PRIu64 " %9.2f %9s\n",
		       r->name, r->packets, r->bytes, r->green, r->yellow,
		       r->red, r->dropped, r->tx_mbps, lim);
	}
	fflush(stdout);
}

static void
tgw_show(double t, bool summary)
{
	unsigned int i;

	pthread_mutex_lock(&g.view_lock);
	if (g.view_json) {
		for (i = 0; i < g.n_rows; i++)
			tgw_print_json(&g.rows[i], t, summary);
		fflush(stdout);
	} else {
		tgw_print_table(t, summary);
	}
	pthread_mutex_unlock(&g.view_lock);
}

/* ---- telemetry: /tenant_gw/tenants, /tenant_gw/tenant,<name> ---- */

static int
tgw_tm_tenants(const char *cmd __rte_unused, const char *params __rte_unused,
	       struct rte_tel_data *d)
{
	unsigned int i;

	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	pthread_mutex_lock(&g.view_lock);
	for (i = 0; i < g.n_rows; i++)
		rte_tel_data_add_array_string(d, g.rows[i].name);
	pthread_mutex_unlock(&g.view_lock);
	return 0;
}

static int
tgw_tm_tenant(const char *cmd __rte_unused, const char *params,
	      struct rte_tel_data *d)
{
	const struct tgw_row *r = NULL;
	unsigned int i;
	int ret = -EINVAL;

	if (params == NULL)
		return -EINVAL;
	pthread_mutex_lock(&g.view_lock);
	for (i = 0; i < g.n_rows; i++)
		if (strcmp(g.rows[i].name, params) == 0)
			r = &g.rows[i];
	if (r != NULL) {
		rte_tel_data_start_dict(d);
		rte_tel_data_add_dict_string(d, "tenant", r->name);
		rte_tel_data_add_dict_uint(d, "packets", r->packets);
		rte_tel_data_add_dict_uint(d, "bytes", r->bytes);
		rte_tel_data_add_dict_uint(d, "green", r->green);
		rte_tel_data_add_dict_uint(d, "yellow", r->yellow);
		rte_tel_data_add_dict_uint(d, "red", r->red);
		rte_tel_data_add_dict_uint(d, "rx_missed", r->rx_missed);
		rte_tel_data_add_dict_uint(d, "dropped", r->dropped);
		rte_tel_data_add_dict_uint(d, "tx_packets", r->tx_pkts);
		rte_tel_data_add_dict_uint(d, "tx_bytes", r->tx_bytes);
		rte_tel_data_add_dict_uint(d, "tx_dropped", r->tx_dropped);
		rte_tel_data_add_dict_uint(d, "tx_kbps",
					   (uint64_t)(r->tx_mbps * 1000));
		rte_tel_data_add_dict_uint(d, "rate_limit_mbps",
					   r->rate_limit_mbps);
		if (r->paced) {
			rte_tel_data_add_dict_uint(d, "tx_pace_bytes",
						   r->pace_bytes);
			rte_tel_data_add_dict_uint(d, "tx_pace_full_ns",
						   r->pace_full_ns);
		}
		ret = 0;
	}
	pthread_mutex_unlock(&g.view_lock);
	return ret;
}

/* ---- setup ---- */

static uint32_t
tgw_capa_mbps(uint32_t capa)
{
	static const struct { uint32_t bit, mbps; } speeds[] = {
		{ RTE_ETH_LINK_SPEED_200G, 200000 },
		{ RTE_ETH_LINK_SPEED_100G, 100000 },
		{ RTE_ETH_LINK_SPEED_56G, 56000 },
		{ RTE_ETH_LINK_SPEED_50G, 50000 },
		{ RTE_ETH_LINK_SPEED_40G, 40000 },
		{ RTE_ETH_LINK_SPEED_25G, 25000 },
		{ RTE_ETH_LINK_SPEED_20G, 20000 },
		{ RTE_ETH_LINK_SPEED_10G, 10000 },
		{ RTE_ETH_LINK_SPEED_5G, 5000 },
		{ RTE_ETH_LINK_SPEED_2_5G, 2500 },
		{ RTE_ETH_LINK_SPEED_1G, 1000 },
	};
	unsigned int i;

	for (i = 0; i < RTE_DIM(speeds); i++)
		if (capa & speeds[i].bit)
			return speeds[i].mbps;
	return 0;
}

/* The egress port's speed, read before any port is configured: the link
 * speed if it is up, else the fastest speed the port can do. */
static uint32_t
tgw_link_mbps(uint16_t port)
{
	struct rte_eth_dev_info info;
	struct rte_eth_link link;

	if (rte_eth_link_get_nowait(port, &link) == 0 && link.link_status &&
	    link.link_speed != 0 && link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN)
		return link.link_speed;
	if (rte_eth_dev_info_get(port, &info) != 0)
		return 0;
	return tgw_capa_mbps(info.speed_capa);
}

static int
tgw_port_init(uint16_t port, uint16_t nb_rxq, uint16_t nb_txq)
{
	struct rte_eth_conf pc = { 0 };
	struct rte_eth_dev_info info;
	uint16_t q;
	int ret;

	ret = rte_eth_dev_info_get(port, &info);
	if (ret != 0)
		return ret;
	if (nb_rxq > info.max_rx_queues || nb_txq > info.max_tx_queues) {
		fprintf(stderr, "tenant-gw: port %u: needs %u Rx and %u Tx "
			"queues, has %u and %u\n", port, nb_rxq, nb_txq,
			info.max_rx_queues, info.max_tx_queues);
		return -EINVAL;
	}
	ret = rte_eth_dev_configure(port, nb_rxq, nb_txq, &pc);
	if (ret != 0)
		return ret;
	for (q = 0; q < nb_rxq; q++) {
		ret = rte_eth_rx_queue_setup(port, q, TGW_RXD,
					     rte_eth_dev_socket_id(port), NULL,
					     g.pool);
		if (ret != 0)
			return ret;
	}
	for (q = 0; q < nb_txq; q++) {
		ret = rte_eth_tx_queue_setup(port, q, TGW_TXD,
					     rte_eth_dev_socket_id(port), NULL);
		if (ret != 0)
			return ret;
	}
	return 0;
}

static void
tgw_usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [EAL options] -- --config FILE [--fwd io|macswap]\n"
		"       [--ports IN,OUT] [--view json|table] [--duration SECS]\n"
		"  --config FILE   tenants (JSON, see examples/tenant-gw/README.md)\n"
		"  --fwd MODE      io (default) or macswap\n"
		"  --ports IN,OUT  ingress and egress port ids (default 0,1)\n"
		"  --view V        json lines or a redrawn table (default: table\n"
		"                  on a terminal, json otherwise)\n"
		"  --duration S    exit after S seconds (default: at SIGINT)\n"
		"  --help          this text\n"
		"Ports: IN and OUT (two --vdev net_vbrN,wire=... or dev=...);\n"
		"every lcore of -l but the main one forwards. SIGHUP reloads\n"
		"FILE, SIGINT prints the summary and exits. Telemetry:\n"
		"/tenant_gw/tenants, /tenant_gw/tenant,NAME.\n",
		prog);
}

static int
tgw_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "fwd", required_argument, NULL, 'f' },
		{ "ports", required_argument, NULL, 'p' },
		{ "view", required_argument, NULL, 'v' },
		{ "duration", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int a, b;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			g.config_file = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "macswap") == 0)
				g.macswap = true;
			else if (strcmp(optarg, "io") != 0)
				goto bad;
			break;
		case 'p':
			if (sscanf(optarg, "%u,%u", &a, &b) != 2 || a == b ||
			    a >= RTE_MAX_ETHPORTS || b >= RTE_MAX_ETHPORTS)
				goto bad;
			g.in_port = a;
			g.out_port = b;
			break;
		case 'v':
			if (strcmp(optarg, "json") == 0)
				g.view_json = 1;
			else if (strcmp(optarg, "table") == 0)
				g.view_json = 0;
			else
				goto bad;
			break;
		case 'd':
			g.duration = strtoul(optarg, &end, 10);
			if (*end != '\0' || g.duration == 0)
				goto bad;
			break;
		case 'h':
			tgw_usage(stdout, argv[0]);
			return 1;
		default:
			tgw_usage(stderr, argv[0]);
			return -1;
		}
	}
	if (g.config_file == NULL || optind != argc) {
		fprintf(stderr, "tenant-gw: --config FILE is required\n");
		tgw_usage(stderr, argv[0]);
		return -1;
	}
	return 0;
bad:
	fprintf(stderr, "tenant-gw: bad value for --%s: %s\n",
		opts[c == 'f' ? 1 : c == 'p' ? 2 : c == 'v' ? 3 : 4].name, optarg);
	tgw_usage(stderr, argv[0]);
	return -1;
}

static void
tgw_cleanup(struct rte_flow *def)
{
	struct rte_flow_error ferr = { 0 };
	struct rte_mtr_error merr = { 0 };
	unsigned int s;

	for (s = 0; s < TGW_MAX_TENANTS; s++)
		if (g.slots[s].used)
			tgw_slot_release(s);
	if (def != NULL)
		rte_flow_destroy(g.in_port, def, &ferr);
	rte_mtr_meter_policy_delete(g.in_port, TGW_POLICY_ID, &merr);
	rte_eth_dev_stop(g.in_port);
	rte_eth_dev_stop(g.out_port);
	rte_eth_dev_close(g.in_port);
	rte_eth_dev_close(g.out_port);
}

int
main(int argc, char **argv)
{
	struct rte_flow_error ferr = { 0 };
	struct rte_flow *def = NULL;
	unsigned int s, i, lcore, nb_mbufs, rxq_need = 0;
	uint64_t start, next;
	char err[512];
	int ret;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "tenant-gw: EAL init failed: %s\n",
			rte_strerror(rte_errno));
		return 1;
	}
	argc -= ret;
	argv += ret;
	argv[0] = "tenant-gw";
	ret = tgw_args(argc, argv);
	if (ret == 1) {
		rte_eal_cleanup();
		return 0;
	}
	if (ret != 0)
		goto fail_eal;
	if (!rte_eth_dev_is_valid_port(g.in_port) ||
	    !rte_eth_dev_is_valid_port(g.out_port)) {
		fprintf(stderr, "tenant-gw: ports %u and %u must exist (%u "
			"ports; give two --vdev or devices)\n", g.in_port,
			g.out_port, rte_eth_dev_count_avail());
		goto fail_eal;
	}
	/* the whole config is checked before a port is touched */
	g.link_mbps = tgw_link_mbps(g.out_port);
	if (tgw_config_load(g.config_file, g.link_mbps, &g.conf, err,
			    sizeof(err)) != 0) {
		fprintf(stderr, "tenant-gw: %s\n", err);
		goto fail_eal;
	}
	if (g.view_json < 0)
		g.view_json = !isatty(STDOUT_FILENO);
	for (i = 0; i < g.conf.n_tenants; i++)
		rxq_need += g.conf.tenants[i].rx_queues;
	g.nb_rxq = 1 + rxq_need + g.conf.spare_queues * TGW_MAX_RXQ_PER_TENANT;
	g.nb_txq = 1 + g.conf.n_tenants + g.conf.spare_queues;
	if (g.nb_rxq > TGW_MAX_QUEUES || g.nb_txq > TGW_MAX_QUEUES) {
		fprintf(stderr, "tenant-gw: %u Rx queues needed, at most %d: "
			"lower spare_queues\n", g.nb_rxq, TGW_MAX_QUEUES);
		goto fail_eal;
	}
	RTE_LCORE_FOREACH_WORKER(lcore)
		g.workers[g.n_workers++] = lcore;
	nb_mbufs = (g.nb_rxq + 1) * TGW_RXD + (g.nb_txq + 1) * TGW_TXD +
		(g.n_workers + 1) * 2 * TGW_BURST + 1024;
	g.pool = rte_pktmbuf_pool_create("tgw_pool", nb_mbufs, 256, 0,
					 RTE_MBUF_DEFAULT_BUF_SIZE,
					 rte_socket_id());
	if (g.pool == NULL) {
		fprintf(stderr, "tenant-gw: mbuf pool of %u: %s\n", nb_mbufs,
			rte_strerror(rte_errno));
		goto fail_eal;
	}
	if (tgw_port_init(g.in_port, g.nb_rxq, 1) != 0 ||
	    tgw_port_init(g.out_port, 1, g.nb_txq) != 0)
		goto fail_ports;
	if (rte_eth_dev_start(g.in_port) != 0 ||
	    rte_eth_dev_start(g.out_port) != 0) {
		fprintf(stderr, "tenant-gw: port start failed\n");
		goto fail_ports;
	}
	rte_eth_promiscuous_enable(g.in_port);
	rte_eth_promiscuous_enable(g.out_port);
	g.start_ns = tgw_now_ns();
	tgw_pace_init();
	tgw_pace_base(TGW_DEFAULT_SLOT);
	snprintf(g.slots[TGW_DEFAULT_SLOT].conf.name, TGW_NAME_LEN,
		 "(unmatched)");
	g.slots[TGW_DEFAULT_SLOT].used = false;
	def = tgw_default_rule(g.conf.default_drop, &ferr);
	if (def == NULL) {
		fprintf(stderr, "tenant-gw: default rule: %s\n",
			ferr.message ? ferr.message : rte_strerror(rte_errno));
		goto fail_ports;
	}
	g.slots[TGW_DEFAULT_SLOT].flow = def;
	if (tgw_policy_create(g.in_port) != 0 || tgw_tm_root() != 0)
		goto fail_ports;
	for (i = 0; i < g.conf.n_tenants; i++) {
		ret = tgw_slot_prepare(&g.conf.tenants[i]);
		if (ret < 0 || tgw_slot_rule(ret) != 0)
			goto fail_ports;
	}
	if (tgw_tm_commit() != 0)
		goto fail_ports;
	if (tgw_publish() != 0)
		goto fail_ports;
	signal(SIGINT, tgw_on_signal);
	signal(SIGTERM, tgw_on_signal);
	signal(SIGHUP, tgw_on_signal);
	/* telemetry command names take letters, digits, '_' and '/' only */
	if (rte_telemetry_register_cmd("/tenant_gw/tenants", tgw_tm_tenants,
				       "Tenant names. No parameters") != 0 ||
	    rte_telemetry_register_cmd("/tenant_gw/tenant", tgw_tm_tenant,
				       "A tenant's counters. Parameters: "
				       "tenant name") != 0)
		fprintf(stderr, "tenant-gw: telemetry commands not registered\n");
	for (i = 0; i < g.n_workers; i++)
		rte_eal_remote_launch(tgw_worker, (void *)(uintptr_t)i,
				      g.workers[i]);
	g.launched = true;
	fprintf(stderr, "tenant-gw: %u tenants, %u forwarding lcore(s), "
		"egress %" PRIu32 " Mbit/s, ready\n", g.conf.n_tenants,
		g.n_workers > 0 ? g.n_workers : 1, g.link_mbps);
	start = rte_get_tsc_cycles();
	tgw_snapshot(true);
	next = start + rte_get_tsc_hz();
	while (!quit_flag) {
		double t;

		if (reload_flag) {
			reload_flag = 0;
			tgw_reload();
		}
		tgw_wait_ms(10);
		if (rte_get_tsc_cycles() < next)
			continue;
		next += rte_get_tsc_hz();
		t = (double)(rte_get_tsc_cycles() - start) / rte_get_tsc_hz();
		tgw_snapshot(true);
		tgw_show(t, false);
		if (g.duration != 0 && t >= g.duration)
			break;
	}
	__atomic_store_n(&workers_stop, true, __ATOMIC_RELAXED);
	rte_eal_mp_wait_lcore();
	/* the summary: totals since start, rates of the last second */
	tgw_snapshot(false);
	tgw_show((double)(rte_get_tsc_cycles() - start) / rte_get_tsc_hz(),
		 true);
	fprintf(stderr, "tenant-gw: exit: %" PRIu64 " reloads (%" PRIu64
		" refused), %" PRIu64 " stale frames freed\n", g.reloads,
		g.reload_errors, g.stale_freed);
	g.slots[TGW_DEFAULT_SLOT].flow = NULL;
	tgw_cleanup(def);
	for (s = 0; s < RTE_MAX_LCORE; s++)
		free(g.plan[s]);
	rte_eal_cleanup();
	return 0;
fail_ports:
	g.slots[TGW_DEFAULT_SLOT].flow = NULL;
	tgw_cleanup(def);
fail_eal:
	rte_eal_cleanup();
	return 1;
}
