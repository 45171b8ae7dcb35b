/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * swverbs packet pacing: packet_pacing_caps, every errno of
 * ibv_modify_qp_rate_limit() and of ibv_modify_qp() with IBV_QP_RATE_LIMIT
 * (mlx5's rules), the defaults; then traffic on a pair wire in each
 * progress model (thread, service: this thread's swv_engine_run_once(),
 * inline: this thread's polls), checked on the receiving side:
 *
 *   - nothing lost, the order kept, with a rate applied, changed and
 *     removed under traffic;
 *   - conformance from the receiver's completion timestamps: the frames
 *     pass a token bucket of max_burst_sz bytes filled at the rate, so
 *     that in every interval [t0, t1] of arrivals, bytes <= max_burst_sz
 *     + rate * (t1 - t0). A paced frame's completions carry the pacer's
 *     clock read of its release, so the slack is one frame, for the ns
 *     rounding. This upper bound is the pacer's own property and holds
 *     under any load;
 *   - the long-run rate from below, without a timing assumption: the
 *     pacer counts the time a backlogged QP's bucket sat full (full_ns:
 *     the engine descheduled longer than the bucket lasts), and with
 *     frames always posted, bytes >= rate * (t_last - t_first - full_ns)
 *     - max_burst_sz - 2 frames must hold whatever the load. The 0.5 %
 *     accuracy figure on a quiet machine is devtools/bench-pacing.sh's;
 *   - 1,024 paced QPs on one device, each conforming, none starved;
 *   - the engine thread sleeps between departures (its passes stay far
 *     below a spinning engine's, and it counts pace_sleeps).
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "swv_priv.h"
#include "swv_test_util.h"
#include "vbr_netns.h"

static int
rate_limit(struct ibv_qp *qp, uint32_t rate, uint32_t burst, uint16_t typ)
{
	struct ibv_qp_rate_limit_attr a;

	memset(&a, 0, sizeof(a));
	a.rate_limit = rate;
	a.max_burst_sz = burst;
	a.typical_pkt_sz = typ;
	/* verbs.h's inline call, through the context's verbs ops */
	return ibv_modify_qp_rate_limit(qp, &a);
}

/* The threads of this process. */
static unsigned int
nthreads(void)
{
	unsigned int n = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "Threads: %u", &n) == 1)
			break;
	fclose(f);
	return n;
}

/*
 * A replaced limit is freed on the spot, after a grace period, never
 * handed to liburcu's call_rcu thread (which could run it after the PMD
 * .so is dlclosed): limits set, changed and removed start no thread. The
 * suite's first case, before anything in the process used call_rcu().
 */
static int
test_no_call_rcu(void)
{
	unsigned int n0, n1;
	struct tdev d;

	TEST_ASSERT_SUCCESS(t_setup(&d, "pcr", "loop"), "setup");
	n0 = nthreads();
	TEST_ASSERT(n0 > 0, "/proc/self/status");
	TEST_ASSERT_SUCCESS(rate_limit(d.sqp, 1000, 0, 0), "set");
	TEST_ASSERT_SUCCESS(rate_limit(d.sqp, 2000, 4096, 0), "changed");
	TEST_ASSERT_SUCCESS(rate_limit(d.sqp, 0, 0, 0), "removed");
	TEST_ASSERT_SUCCESS(rate_limit(d.sqp, 1000, 0, 0), "set again");
	TEST_ASSERT_SUCCESS(t_qp_modify(d.sqp, IBV_QPS_RESET, IBV_QP_STATE, 0),
			    "reset");
	n1 = nthreads();
	TEST_ASSERT_EQUAL(n1, n0, "%u threads, %u before the limits: a "
			  "call_rcu thread", n1, n0);
	t_teardown(&d);
	return TEST_SUCCESS;
}

static int
test_caps(void)
{
	struct ibv_device_attr_ex a;
	struct tdev d;

	TEST_ASSERT_SUCCESS(t_setup(&d, "pc0", "loop"), "setup");
	memset(&a, 0, sizeof(a));
	TEST_ASSERT_SUCCESS(swv_query_device_ex(d.ctx, NULL, &a), "");
	TEST_ASSERT_EQUAL(a.packet_pacing_caps.qp_rate_limit_min, 1, "kbit/s");
	TEST_ASSERT_EQUAL(a.packet_pacing_caps.qp_rate_limit_max, 100000000,
			  "100 Gbit/s");
	TEST_ASSERT_EQUAL(a.packet_pacing_caps.supported_qpts,
			  1u << IBV_QPT_RAW_PACKET, "");
	t_teardown(&d);
	return TEST_SUCCESS;
}

/*
 * The mlx5 profile's rate table: 127 entries, one per distinct (rate,
 * burst, packet size) as given, shared by equal limits, free again when
 * no QP holds it; a limit that needs a new entry on a full table gets
 * ENOSPC (the kernel's mlx5_rl_add_rate()), and a QP alone on its entry
 * cannot move to a new limit then (the new entry is taken first). The
 * full profile has no table.
 */
#define RL_QPS (SWV_RL_TABLE_SIZE + 2)

static int
rate_table(bool strict)
{
	struct ibv_qp *qp[RL_QPS];
	unsigned int i;
	struct tdev d;
	int want;

	TEST_ASSERT_SUCCESS(strict ? t_setup(&d, "prt", "loop") :
			    t_setup_full(&d, "prf", "loop"), "setup");
	for (i = 0; i < RL_QPS; i++) {
		qp[i] = t_raw_qp(&d, 4, 0, 1, 1);
		TEST_ASSERT_NOT_NULL(qp[i], "qp %u", i);
		TEST_ASSERT_SUCCESS(t_qp_to(qp[i], IBV_QPS_RTS), "qp %u", i);
	}
	/* 127 distinct limits fill the table; an equal one shares. */
	for (i = 0; i < SWV_RL_TABLE_SIZE; i++)
		TEST_ASSERT_SUCCESS(rate_limit(qp[i], 1000 + i, 0, 0),
				    "limit %u", i);
	TEST_ASSERT_SUCCESS(rate_limit(qp[i], 1000, 0, 0),
			    "an equal limit shares its entry");
	want = strict ? ENOSPC : 0;
	TEST_ASSERT_EQUAL(rate_limit(qp[i + 1], 5000, 0, 0), want,
			  "a new rate, table full");
	TEST_ASSERT_EQUAL(rate_limit(qp[i + 1], 1000, 4096, 0), want,
			  "the same rate with another burst is another entry");
	TEST_ASSERT_EQUAL(rate_limit(qp[i + 1], 1000, 0, 512), want,
			  "... and with another packet size");
	TEST_ASSERT_EQUAL(rate_limit(qp[1], 6000, 0, 0), want,
			  "a QP alone on its entry, to a new limit");
	TEST_ASSERT_SUCCESS(rate_limit(qp[1], 1001, 0, 0),
			    "its own limit again");
	TEST_ASSERT_SUCCESS(rate_limit(qp[1], 1002, 0, 0),
			    "to a limit another QP holds");
	/* qp[1]'s old entry is free: one new limit fits, not two. */
	TEST_ASSERT_SUCCESS(rate_limit(qp[i + 1], 5000, 0, 0),
			    "a new rate in the entry let go");
	TEST_ASSERT_EQUAL(rate_limit(qp[1], 6000, 0, 0), want,
			  "full again");
	/* Removed, reset or destroyed: the entry is free. */
	TEST_ASSERT_SUCCESS(rate_limit(qp[i + 1], 0, 0, 0), "removed");
	TEST_ASSERT_SUCCESS(rate_limit(qp[1], 6000, 0, 0), "after a removal");
	TEST_ASSERT_SUCCESS(t_qp_modify(qp[1], IBV_QPS_RESET, IBV_QP_STATE, 0),
			    "reset");
	TEST_ASSERT_SUCCESS(t_qp_to(qp[1], IBV_QPS_RTS), "back to RTS");
	TEST_ASSERT_SUCCESS(t_qp_modify(qp[i + 1], IBV_QPS_RTS,
					IBV_QP_STATE | IBV_QP_RATE_LIMIT, 7000),
			    "modify_qp's limit after a reset");
	TEST_ASSERT_EQUAL(rate_limit(qp[1], 8000, 0, 0), want, "full");
	TEST_ASSERT_SUCCESS(swv_destroy_qp(qp[2]), "destroy");
	TEST_ASSERT_SUCCESS(rate_limit(qp[1], 8000, 0, 0),
			    "after a destroy");
	for (i = 0; i < RL_QPS; i++)
		if (i != 2)
			TEST_ASSERT_SUCCESS(swv_destroy_qp(qp[i]), "qp %u", i);
	t_teardown(&d);
	return TEST_SUCCESS;
}

static int
test_rate_table(void)
{
	if (rate_table(true) != TEST_SUCCESS)
		return TEST_FAILED;
	return rate_table(false);
}

/*
 * The mlx5-noburst profile: a ConnectX without the burst pacing caps.
 * A burst or packet size gives EINVAL (the mlx5 provider's check of
 * MLX5_IB_PP_SUPPORT_BURST); a rate alone is taken. The full profile
 * takes no such flag.
 */
static int
test_no_burst(void)
{
	struct ibv_device_attr_ex a;
	unsigned int flag;
	struct tdev d;

	TEST_ASSERT_SUCCESS(swv_profile_parse("mlx5-noburst", &flag), "");
	TEST_ASSERT_EQUAL(flag, SWV_DEVICE_PACE_NO_BURST, "profile flags");
	TEST_ASSERT_EQUAL(swv_device_create_flags("pnf", "loop", NULL,
						  SWV_DEVICE_PROFILE_FULL |
						  SWV_DEVICE_PACE_NO_BURST),
			  EINVAL, "full profile without burst");
	TEST_ASSERT_SUCCESS(t_setup_flags(&d, "pnb", "loop", flag), "setup");
	memset(&a, 0, sizeof(a));
	TEST_ASSERT_SUCCESS(swv_query_device_ex(d.ctx, NULL, &a), "");
	TEST_ASSERT_EQUAL(a.packet_pacing_caps.qp_rate_limit_max, 100000000,
			  "the same caps: verbs cannot tell");
	TEST_ASSERT(strstr(a.orig_attr.fw_ver, "mlx5-noburst") != NULL,
		    "fw_ver %s", a.orig_attr.fw_ver);
	TEST_ASSERT_EQUAL(rate_limit(d.sqp, 1000, 4096, 0), EINVAL, "burst");
	TEST_ASSERT_EQUAL(rate_limit(d.sqp, 1000, 0, 512), EINVAL,
			  "packet size");
	TEST_ASSERT_SUCCESS(rate_limit(d.sqp, 1000, 0, 0), "rate alone");
	TEST_ASSERT_SUCCESS(rate_limit(d.sqp, 0, 0, 0), "removed");
	t_teardown(&d);
	return TEST_SUCCESS;
}

/* A hash QP over a 1-entry table of one WQ. */
static struct ibv_qp *
hash_qp(struct tdev *d, struct ibv_wq **wq, struct ibv_rwq_ind_table **tbl)
{
	static uint8_t key[40] = { 1 };
	struct ibv_rwq_ind_table_init_attr ta;
	struct ibv_qp_init_attr_ex qa;
	struct ibv_wq_init_attr wa;

	memset(&wa, 0, sizeof(wa));
	wa.wq_type = IBV_WQT_RQ;
	wa.max_wr = 16;
	wa.max_sge = 1;
	wa.pd = d->pd;
	wa.cq = d->rcq;
	*wq = swv_create_wq(d->ctx, &wa);
	if (*wq == NULL)
		return NULL;
	memset(&ta, 0, sizeof(ta));
	ta.log_ind_tbl_size = 0;
	ta.ind_tbl = wq;
	*tbl = swv_create_rwq_ind_table(d->ctx, &ta);
	if (*tbl == NULL)
		return NULL;
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RAW_PACKET;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
		       IBV_QP_INIT_ATTR_RX_HASH;
	qa.pd = d->pd;
	qa.rwq_ind_tbl = *tbl;
	qa.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	qa.rx_hash_conf.rx_hash_key_len = 40;
	qa.rx_hash_conf.rx_hash_key = key;
	return swv_create_qp_ex(d->ctx, &qa);
}

/* The limit in force on qp, as swv_qp_pace_stats() reads it. */
static int
limit_is(struct ibv_qp *qp, uint32_t rate, uint32_t burst, uint32_t typ)
{
	struct swv_qp_pace_stats st;

	TEST_ASSERT_SUCCESS(swv_qp_pace_stats(qp, &st), "");
	TEST_ASSERT_EQUAL(st.rate_limit, rate, "rate");
	if (rate == 0)
		return TEST_SUCCESS;
	TEST_ASSERT_EQUAL(st.max_burst_sz, burst, "max_burst_sz");
	TEST_ASSERT_EQUAL(st.typical_pkt_sz, typ, "typical_pkt_sz");
	return TEST_SUCCESS;
}

#define LIMIT_IS(qp, rate, burst, typ) \
	TEST_ASSERT_SUCCESS(limit_is(qp, rate, burst, typ), "limit in force")

/*
 * The engine moves a QP to ERR (a send with an unknown lkey) between the
 * state swv_modify_qp() read and its move (a hook holds the modify there
 * until the QP is in ERR): RTS -> RTS with a rate limit is refused, sets
 * no limit, and the QP stays in ERR, as a device refuses ERR -> RTS.
 * Before, the modify's store put it back in RTS.
 */
static struct ibv_mr *err_mr;
static uint8_t err_buf[128];
static int err_hook_ret = -1;

static void
err_in_modify(struct ibv_qp *qp)
{
	struct ibv_sge sge = {
		(uintptr_t)err_buf, 60, err_mr->lkey ^ 0x40000,
	};
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND,
	}, *bad;
	uint64_t end = t_now_ms() + 2000;

	swv_modify_qp_hook = NULL;
	err_hook_ret = ibv_post_send(qp, &wr, &bad);
	while (err_hook_ret == 0 &&
	       __atomic_load_n(&to_swv_qp(qp)->state, __ATOMIC_ACQUIRE) !=
	       IBV_QPS_ERR &&
	       t_now_ms() < end)
		usleep(100);
}

static int
test_modify_after_engine_err(void)
{
	struct ibv_wc wc;
	struct tdev d;
	int st_rl = IBV_QP_STATE | IBV_QP_RATE_LIMIT;
	int ret;

	TEST_ASSERT_SUCCESS(t_setup(&d, "pce", "loop"), "setup");
	err_mr = swv_reg_mr(d.pd, err_buf, sizeof(err_buf), 0);
	TEST_ASSERT_NOT_NULL(err_mr, "");
	TEST_ASSERT_EQUAL(d.sqp->state, IBV_QPS_RTS, "");
	swv_modify_qp_hook = err_in_modify;
	ret = t_qp_modify(d.sqp, IBV_QPS_RTS, st_rl, 1000);
	swv_modify_qp_hook = NULL;
	TEST_ASSERT_SUCCESS(err_hook_ret, "the bad send posted");
	TEST_ASSERT_EQUAL(t_poll(d.scq, &wc, 1, 2000), 1, "its completion");
	TEST_ASSERT_EQUAL(wc.status, IBV_WC_LOC_PROT_ERR, "");
	TEST_ASSERT_EQUAL(ret, EINVAL, "RTS -> RTS on a QP the engine moved "
			  "to ERR meanwhile");
	/* The mlx5 profile leaves the device's ERR out of ibv_qp.state. */
	TEST_ASSERT_EQUAL(d.sqp->state, IBV_QPS_RTS, "ibv_qp.state");
	TEST_ASSERT_EQUAL(to_swv_qp(d.sqp)->state, IBV_QPS_ERR,
			  "the QP stays in ERR");
	LIMIT_IS(d.sqp, 0, 0, 0);	/* a refused call sets no limit */
	TEST_ASSERT_SUCCESS(t_qp_modify(d.sqp, IBV_QPS_RESET, IBV_QP_STATE, 0),
			    "");
	TEST_ASSERT_EQUAL(d.sqp->state, IBV_QPS_RESET, "");
	TEST_ASSERT_SUCCESS(swv_dereg_mr(err_mr), "");
	t_teardown(&d);
	return TEST_SUCCESS;
}

static int
errnos(bool strict)
{
	struct ibv_qp_rate_limit_attr a;
	struct swv_qp_pace_stats st;
	struct ibv_rwq_ind_table *tbl;
	struct ibv_qp *qp, *hqp;
	struct ibv_wq *wq;
	struct tdev d;
	int st_rl = IBV_QP_STATE | IBV_QP_RATE_LIMIT;

	TEST_ASSERT_SUCCESS(t_setup_flags(&d, "pc1", "loop", strict ?
					  SWV_DEVICE_PROFILE_MLX5 :
					  SWV_DEVICE_PROFILE_FULL), "setup");
	qp = d.sqp;
	/* arguments */
	TEST_ASSERT_EQUAL(swv_modify_qp_rate_limit(qp, NULL), EINVAL, "NULL");
	memset(&a, 0, sizeof(a));
	TEST_ASSERT_EQUAL(swv_modify_qp_rate_limit(NULL, &a), EINVAL, "NULL");
	a.rate_limit = 1000;
	a.comp_mask = 1;
	TEST_ASSERT_EQUAL(ibv_modify_qp_rate_limit(qp, &a), EINVAL,
			  "comp_mask");
	TEST_ASSERT_EQUAL(rate_limit(qp, 100000001, 0, 0), EINVAL,
			  "above qp_rate_limit_max");
	TEST_ASSERT_EQUAL(rate_limit(qp, UINT32_MAX, 0, 0), EINVAL, "");
	TEST_ASSERT_EQUAL(rate_limit(qp, 0, 4096, 0), EINVAL,
			  "burst with no rate");
	TEST_ASSERT_EQUAL(rate_limit(qp, 0, 0, 1500), EINVAL,
			  "typical_pkt_sz with no rate");
	TEST_ASSERT_EQUAL(rate_limit(qp, 1000, 0, SWV_MAX_FRAME + 1), EINVAL,
			  "typical_pkt_sz above the largest frame");
	LIMIT_IS(qp, 0, 0, 0);	/* nothing was set by the refusals */
	/* the range's ends, and the defaults */
	TEST_ASSERT_SUCCESS(rate_limit(qp, 1, 0, 0), "qp_rate_limit_min");
	TEST_ASSERT_SUCCESS(rate_limit(qp, 100000000, 0, 0),
			    "qp_rate_limit_max");
	LIMIT_IS(qp, 100000000, 12500000, 1500);	/* 1 ms, the MTU */
	TEST_ASSERT_SUCCESS(rate_limit(qp, 1000, 0, 0), "1 Mbit/s");
	/* two frames of the default packet: the MTU plus the header */
	LIMIT_IS(qp, 1000, 3028, 1500);
	TEST_ASSERT_SUCCESS(rate_limit(qp, 1000, 0, 256), "");
	LIMIT_IS(qp, 1000, 512, 256);	/* two packets of the size given */
	TEST_ASSERT_SUCCESS(rate_limit(qp, 5000, 65536, 256), "");
	LIMIT_IS(qp, 5000, 65536, 256);
	TEST_ASSERT_SUCCESS(rate_limit(qp, 0, 0, 0), "removed");
	LIMIT_IS(qp, 0, 0, 0);
	/* a QP not in RTS; a reset removes the limit */
	TEST_ASSERT_SUCCESS(rate_limit(qp, 1000, 0, 0), "");
	TEST_ASSERT_SUCCESS(t_qp_modify(qp, IBV_QPS_ERR, IBV_QP_STATE, 0), "");
	TEST_ASSERT_EQUAL(rate_limit(qp, 1000, 0, 0), EINVAL, "ERR");
	TEST_ASSERT_SUCCESS(t_qp_modify(qp, IBV_QPS_RESET, IBV_QP_STATE, 0), "");
	LIMIT_IS(qp, 0, 0, 0);	/* a reset removes the limit */
	TEST_ASSERT_EQUAL(rate_limit(qp, 1000, 0, 0), EINVAL, "RESET");
	TEST_ASSERT_SUCCESS(t_qp_modify(qp, IBV_QPS_INIT,
				     IBV_QP_STATE | IBV_QP_PORT, 0), "");
	TEST_ASSERT_EQUAL(rate_limit(qp, 1000, 0, 0), EINVAL, "INIT");
	TEST_ASSERT_EQUAL(t_qp_modify(qp, IBV_QPS_RTR, st_rl, 1000), EINVAL,
			  "IBV_QP_RATE_LIMIT on INIT -> RTR");
	TEST_ASSERT_SUCCESS(t_qp_modify(qp, IBV_QPS_RTR, IBV_QP_STATE, 0), "");
	TEST_ASSERT_EQUAL(rate_limit(qp, 1000, 0, 0), EINVAL, "RTR");
	/* ibv_modify_qp(IBV_QP_RATE_LIMIT): the caps, then the defaults */
	TEST_ASSERT_EQUAL(t_qp_modify(qp, IBV_QPS_RTS, st_rl, 100000001), EINVAL,
			  "RTR -> RTS above the caps");
	TEST_ASSERT_EQUAL(qp->state, IBV_QPS_RTR, "refused: no transition");
	TEST_ASSERT_SUCCESS(t_qp_modify(qp, IBV_QPS_RTS, st_rl, 20000),
			    "RTR -> RTS at 20 Mbit/s");
	LIMIT_IS(qp, 20000, 3028, 1500);	/* the defaults */
	TEST_ASSERT_SUCCESS(t_qp_modify(qp, IBV_QPS_RTS, st_rl, 0),
			    "RTS -> RTS: removed");
	LIMIT_IS(qp, 0, 0, 0);
	/* a QP type without pacing: a hash QP */
	hqp = hash_qp(&d, &wq, &tbl);
	TEST_ASSERT_NOT_NULL(hqp, "hash QP: %d", errno);
	TEST_ASSERT_EQUAL(rate_limit(hqp, 1000, 0, 0), EINVAL, "hash QP");
	TEST_ASSERT_EQUAL(swv_qp_pace_stats(hqp, &st), EINVAL, "hash QP");
	TEST_ASSERT_SUCCESS(swv_destroy_qp(hqp), "");
	TEST_ASSERT_SUCCESS(swv_destroy_rwq_ind_table(tbl), "");
	TEST_ASSERT_SUCCESS(swv_destroy_wq(wq), "");
	/* a paced QP can be destroyed */
	TEST_ASSERT_SUCCESS(rate_limit(qp, 1000, 0, 0), "");
	t_teardown(&d);
	return TEST_SUCCESS;
}

static int
test_errnos(void)
{
	if (errnos(true) != TEST_SUCCESS)
		return TEST_FAILED;
	return errnos(false);
}

/*
 * Traffic. A sender device (nq paced QPs) and a receiver device on a pair
 * cable; the receiver's CQ has completion timestamps.
 */
#define TQ_MAXQ 1024
#define TQ_RQ 4096
#define TQ_SLOT 9216
#define TQ_TXMEM (4u << 20)

struct trec {
	uint64_t ts;
	uint32_t len;
	uint16_t q;
	uint32_t seq;
};

struct tq {
	struct swv_engine *eng;	/**< service: driven here; else NULL */
	char na[32], nb[32];
	struct ibv_context *ca, *cb;
	struct ibv_pd *pa, *pb;
	struct ibv_cq *scq, *bscq;
	struct ibv_cq_ex *rcq;
	struct ibv_qp *qp[TQ_MAXQ];
	struct ibv_qp *rqp;
	struct ibv_flow *fl;
	struct ibv_mr *tmr, *rmr;
	uint8_t mac_b[6];
	unsigned int nq, depth;
	uint8_t *tx;		/**< TQ_TXMEM */
	uint8_t *rx;		/**< TQ_RQ * TQ_SLOT */
	uint32_t posted[TQ_MAXQ], done[TQ_MAXQ], rseq[TQ_MAXQ];
	struct trec *rec;
	unsigned int nrec, maxrec;
	bool bad_order;
	/*
	 * Over a veth (af_packet wires): rec holds the departures, from the
	 * send CQ's timestamps (the pacer's clock at each release), as the
	 * receiver's timestamps carry the kernel's and its engine's delays;
	 * the receiver checks that all arrive, in order.
	 */
	struct ibv_cq_ex *scqx;
	uint32_t len;		/**< of the frames posted */
};

/* The veth's two ends when the suite runs over one (--veth), else NULL. */
static const char *veth_a, *veth_b;

static struct ibv_qp *
tq_qp(struct ibv_pd *pd, struct ibv_cq *scq,
      struct ibv_cq *rcq, uint32_t swr, uint32_t rwr)
{
	struct ibv_qp_init_attr a;
	struct ibv_qp *qp;

	memset(&a, 0, sizeof(a));
	a.send_cq = scq;
	a.recv_cq = rcq;
	a.qp_type = IBV_QPT_RAW_PACKET;
	a.sq_sig_all = 1;
	a.cap.max_send_wr = swr;
	a.cap.max_recv_wr = rwr;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	qp = swv_create_qp(pd, &a);
	if (qp != NULL && t_qp_to(qp, rwr > 0 ? IBV_QPS_RTR : IBV_QPS_RTS)) {
		swv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

static int
tq_recv(struct tq *t, unsigned int slot)
{
	return t_recv(t->rqp, t->rmr, t->rx + (size_t)slot * TQ_SLOT, TQ_SLOT,
		      slot);
}

static void
tq_teardown(struct tq *t)
{
	unsigned int i;

	if (t->fl != NULL)
		swv_destroy_flow(t->fl);
	for (i = 0; i < t->nq; i++)
		if (t->qp[i] != NULL)
			swv_destroy_qp(t->qp[i]);
	if (t->rqp != NULL)
		swv_destroy_qp(t->rqp);
	if (t->scq != NULL)
		swv_destroy_cq(t->scq);
	if (t->bscq != NULL)
		swv_destroy_cq(t->bscq);
	if (t->rcq != NULL)
		swv_destroy_cq(ibv_cq_ex_to_cq(t->rcq));
	if (t->tmr != NULL)
		swv_dereg_mr(t->tmr);
	if (t->rmr != NULL)
		swv_dereg_mr(t->rmr);
	if (t->pa != NULL)
		swv_dealloc_pd(t->pa);
	if (t->pb != NULL)
		swv_dealloc_pd(t->pb);
	if (t->ca != NULL)
		swv_close_device(t->ca);
	if (t->cb != NULL)
		swv_close_device(t->cb);
	swv_device_destroy(t->na);
	swv_device_destroy(t->nb);
	if (t->eng != NULL)
		swv_engine_destroy(t->eng);
	free(t->tx);
	free(t->rx);
	free(t->rec);
	memset(t, 0, sizeof(*t));
}

static int
tq_build(struct tq *t, const char *model, unsigned int nq,
	 unsigned int depth, unsigned int maxrec)
{
	static unsigned int runs;
	struct swv_device_attr attr = { .flags = SWV_DEVICE_PROFILE_MLX5 };
	struct ibv_cq_init_attr_ex ca;
	char wire[48];
	unsigned int i;

	memset(t, 0, sizeof(*t));
	if (strcmp(model, "service") == 0) {
		t->eng = swv_engine_create();
		TEST_ASSERT_NOT_NULL(t->eng, "engine");
		attr.engine = t->eng;
	} else if (strcmp(model, "inline") == 0) {
		attr.engine = swv_engine_inline();
	}
	runs++;
	snprintf(t->na, sizeof(t->na), "pa%u", runs);
	snprintf(t->nb, sizeof(t->nb), "pb%u", runs);
	snprintf(wire, sizeof(wire), "pair:pace-%d-%u", (int)getpid(), runs);
	if (veth_a != NULL)
		snprintf(wire, sizeof(wire), "af_packet:%s", veth_a);
	TEST_ASSERT_SUCCESS(swv_device_create_attr(t->na, wire, NULL, &attr),
			    "sender");
	if (veth_b != NULL)
		snprintf(wire, sizeof(wire), "af_packet:%s", veth_b);
	TEST_ASSERT_SUCCESS(swv_device_create_attr(t->nb, wire, NULL, &attr),
			    "receiver");
	t->ca = t_open(t->na);
	t->cb = t_open(t->nb);
	TEST_ASSERT(t->ca != NULL && t->cb != NULL, "open");
	/*
	 * Jumbo frames in some cases: a receiver MTU that takes them (1500
	 * drops them); the sender's stays, as typical_pkt_sz defaults to it.
	 */
	TEST_ASSERT_SUCCESS(swv_set_port_mtu(t->cb, SWV_MAX_FRAME - 22), "");
	swv_query_port_mac(t->cb, t->mac_b);
	t->pa = swv_alloc_pd(t->ca);
	t->pb = swv_alloc_pd(t->cb);
	t->tx = calloc(1, TQ_TXMEM);
	t->rx = calloc(TQ_RQ, TQ_SLOT);
	t->rec = calloc(maxrec, sizeof(*t->rec));
	TEST_ASSERT(t->pa != NULL && t->pb != NULL && t->tx != NULL &&
		    t->rx != NULL && t->rec != NULL, "alloc");
	t->maxrec = maxrec;
	t->tmr = swv_reg_mr(t->pa, t->tx, TQ_TXMEM, 0);
	t->rmr = swv_reg_mr(t->pb, t->rx, (size_t)TQ_RQ * TQ_SLOT,
			    IBV_ACCESS_LOCAL_WRITE);
	memset(&ca, 0, sizeof(ca));
	if (veth_a != NULL) {
		ca.cqe = 8192;
		ca.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
		t->scqx = swv_create_cq_ex(t->ca, &ca);
		if (t->scqx != NULL)
			t->scq = ibv_cq_ex_to_cq(t->scqx);
	} else {
		t->scq = swv_create_cq(t->ca, 8192, NULL, NULL, 0);
	}
	t->bscq = swv_create_cq(t->cb, 16, NULL, NULL, 0);
	memset(&ca, 0, sizeof(ca));
	ca.cqe = 8192;
	ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN |
		      IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	t->rcq = swv_create_cq_ex(t->cb, &ca);
	TEST_ASSERT(t->tmr != NULL && t->rmr != NULL && t->scq != NULL &&
		    t->bscq != NULL && t->rcq != NULL, "mr, cq");
	t->rqp = tq_qp(t->pb, t->bscq, ibv_cq_ex_to_cq(t->rcq), 1, TQ_RQ);
	TEST_ASSERT_NOT_NULL(t->rqp, "receiver qp: %d", errno);
	t->fl = t_flow_eth(t->rqp, t->mac_b, 0);
	TEST_ASSERT_NOT_NULL(t->fl, "rule");
	for (i = 0; i < TQ_RQ; i++)
		TEST_ASSERT_SUCCESS(tq_recv(t, i), "recv");
	t->nq = nq;
	t->depth = depth;
	for (i = 0; i < nq; i++) {
		t->qp[i] = tq_qp(t->pa, t->scq, NULL, depth, 0);
		TEST_ASSERT_NOT_NULL(t->qp[i], "qp %u: %d", i, errno);
	}
	return TEST_SUCCESS;
}

/*
 * Devices on model's engine ("thread", "service" or "inline"), nq sender
 * QPs of depth WQEs, room for maxrec arrivals; all undone on a failure.
 */
static int
tq_setup(struct tq *t, const char *model, unsigned int nq,
	 unsigned int depth, unsigned int maxrec)
{
	int ret = tq_build(t, model, nq, depth, maxrec);

	if (ret != TEST_SUCCESS)
		tq_teardown(t);
	return ret;
}

/* Post the next frame of QP q (len bytes); its seq in the payload. */
static int
tq_post(struct tq *t, unsigned int q, uint32_t len)
{
	size_t per = TQ_TXMEM / t->nq / t->depth;
	uint32_t seq = t->posted[q];
	uint8_t *buf = t->tx + ((size_t)q * t->depth + seq % t->depth) * per;
	uint16_t q16 = (uint16_t)q;

	if (len > per)
		return EINVAL;
	t_frame(buf, len, t->mac_b, t->mac_b, 0);
	memcpy(buf + 14, &q16, sizeof(q16));
	memcpy(buf + 16, &seq, sizeof(seq));
	t->posted[q]++;
	t->len = len;
	return t_send(t->qp[q], t->tmr, buf, len, ((uint64_t)q << 32) | seq);
}

/* The send completions, recorded as departures (veth). */
static void
tq_departures(struct tq *t)
{
	struct ibv_poll_cq_attr pa = { .comp_mask = 0 };
	struct trec *r;
	uint64_t id;

	if (ibv_start_poll(t->scqx, &pa) != 0)
		return;
	do {
		id = t->scqx->wr_id;
		t->done[id >> 32]++;
		if (t->scqx->status == IBV_WC_SUCCESS && t->nrec < t->maxrec) {
			r = &t->rec[t->nrec++];
			r->ts = ibv_wc_read_completion_ts(t->scqx);
			r->len = t->len;
			r->q = (uint16_t)(id >> 32);
			r->seq = (uint32_t)id;
		}
	} while (ibv_next_poll(t->scqx) == 0);
	ibv_end_poll(t->scqx);
}

/* A frame received over the veth: counted, in order. */
static void
tq_arrival(struct tq *t, uint32_t slot)
{
	uint32_t seq;
	uint16_t q16;

	memcpy(&q16, t->rx + (size_t)slot * TQ_SLOT + 14, sizeof(q16));
	memcpy(&seq, t->rx + (size_t)slot * TQ_SLOT + 16, sizeof(seq));
	if (q16 >= t->nq || seq != t->rseq[q16])
		t->bad_order = true;
	else
		t->rseq[q16]++;
}

/*
 * One turn of the loop: the service pass, send completions, receive
 * completions (recorded, their slots posted again), and new sends while
 * a QP has fewer than depth in flight and frames left (total[q]).
 */
static void
tq_turn(struct tq *t, const uint32_t *total, uint32_t len)
{
	struct ibv_poll_cq_attr pa = { .comp_mask = 0 };
	struct ibv_wc wc[64];
	struct trec *r;
	unsigned int q;
	uint32_t slot;
	uint16_t q16;
	int i, n;

	if (t->eng != NULL)
		swv_engine_run_once(t->eng);
	if (t->scqx != NULL) {
		tq_departures(t);
	} else {
		n = ibv_poll_cq(t->scq, 64, wc);
		for (i = 0; i < n; i++)
			t->done[wc[i].wr_id >> 32]++;
	}
	if (ibv_start_poll(t->rcq, &pa) == 0) {
		do {
			slot = (uint32_t)t->rcq->wr_id;
			if (t->rcq->status == IBV_WC_SUCCESS &&
			    t->scqx != NULL) {
				tq_arrival(t, slot);
			} else if (t->rcq->status == IBV_WC_SUCCESS &&
				   t->nrec < t->maxrec) {
				r = &t->rec[t->nrec++];
				r->ts = ibv_wc_read_completion_ts(t->rcq);
				r->len = ibv_wc_read_byte_len(t->rcq);
				memcpy(&q16, t->rx + (size_t)slot * TQ_SLOT +
				       14, sizeof(q16));
				memcpy(&r->seq, t->rx + (size_t)slot *
				       TQ_SLOT + 16, sizeof(r->seq));
				r->q = q16;
				if (q16 >= t->nq || r->seq != t->rseq[q16])
					t->bad_order = true;
				else
					t->rseq[q16]++;
			}
			tq_recv(t, slot);
		} while (ibv_next_poll(t->rcq) == 0);
		ibv_end_poll(t->rcq);
	}
	for (q = 0; q < t->nq; q++)
		while (t->posted[q] < total[q] &&
		       t->posted[q] - t->done[q] < t->depth)
			if (tq_post(t, q, len) != 0)
				break;
}

/* Run until every QP's total arrived or ms passed. */
static bool
tq_run(struct tq *t, const uint32_t *total, uint32_t len, uint64_t ms)
{
	uint64_t end = t_now_ms() + ms;
	unsigned int q;
	bool all;

	do {
		tq_turn(t, total, len);
		all = true;
		for (q = 0; q < t->nq && all; q++)
			all = t->rseq[q] >= total[q];
	} while (!all && !t->bad_order && t_now_ms() < end);
	return all;
}

/*
 * The arrivals of QP q from record i0 on (ts after from, when not 0) pass a
 * token bucket of burst + slack bytes at rate kbit/s, full at the start.
 * In units of bytes * 8e6 (= kbit/s * ns): exact integers.
 */
static int
tq_conform(const struct tq *t, unsigned int q, uint64_t from, uint64_t to,
	   uint32_t rate, uint32_t burst, uint32_t slack)
{
	const int64_t unit = 8000000;
	int64_t depth = ((int64_t)burst + slack) * unit, tok = depth;
	uint64_t last = 0;
	unsigned int i, n = 0;

	for (i = 0; i < t->nrec; i++) {
		const struct trec *r = &t->rec[i];

		if (r->q != q || r->ts < from || (to != 0 && r->ts >= to))
			continue;
		if (n > 0) {
			tok += (int64_t)rate * (int64_t)(r->ts - last);
			if (tok > depth)
				tok = depth;
		}
		last = r->ts;
		tok -= (int64_t)r->len * unit;
		n++;
		TEST_ASSERT(tok >= 0, "q %u: frame %u (seq %u) at %" PRIu64
			    " ns is over the bucket of %u + %u bytes at %u "
			    "kbit/s by %" PRId64 " bytes", q, n, r->seq, r->ts,
			    burst, slack, rate, -tok / unit);
	}
	return TEST_SUCCESS;
}

/* First and last arrival of QP q, its bytes. */
static void
tq_span(const struct tq *t, unsigned int q, uint64_t *t0, uint64_t *t1,
	uint64_t *bytes)
{
	unsigned int i;

	*t0 = 0;
	*t1 = 0;
	*bytes = 0;
	for (i = 0; i < t->nrec; i++) {
		if (t->rec[i].q != q)
			continue;
		if (*t0 == 0)
			*t0 = t->rec[i].ts;
		else
			*bytes += t->rec[i].len;	/* after the first */
		*t1 = t->rec[i].ts;
	}
}

static int
tq_rate_limit(struct tq *t, unsigned int q, uint32_t rate, uint32_t burst)
{
	return rate_limit(t->qp[q], rate, burst, 0);
}

/* One sender QP of 256 WQEs on model's engine, limited to rate, burst. */
static int
tq_setup_one(struct tq *t, const char *model, unsigned int maxrec,
	     uint32_t rate, uint32_t burst)
{
	int ret = tq_setup(t, model, 1, 256, maxrec);

	if (ret != TEST_SUCCESS)
		return ret;
	ret = tq_rate_limit(t, 0, rate, burst);
	if (ret != 0)
		tq_teardown(t);
	TEST_ASSERT_SUCCESS(ret, "%s: limit %u kbit/s, bucket %u", model,
			    rate, burst);
	return TEST_SUCCESS;
}

/*
 * The engine thread's paced sleeps that their timeouts ended, seen from
 * swv_engine_pace_late_hook: how many, how late the longest ended (before
 * what the hook adds), how many were planned to end less than late_add
 * before their departure after the first (the engine had had a sample of
 * late_add by then). The hook sleeps late_add more, standing for a host
 * that wakes the thread late; with late_add, the run-delay hook tells the
 * engine it never waited to run (the CPU not contended here), else the
 * engine measures its run-queue waits.
 */
/* Wake-ups later than this make the engine spin a 60th of a 12 ms wait. */
#define TQ_QUIET_NS 200000ull

static struct {
	uint64_t add;		/* ns each sleep lasts more */
	uint64_t max;		/* the latest end seen, ns */
	uint64_t est;		/* the largest estimate the engine used */
	unsigned int calls;
	unsigned int shrt;
	unsigned int after;	/* paced sleeps planned after the first */
	bool busy;		/* the lateness was all run-queue wait */
	uint64_t rq;		/* the run-queue wait the engine is told */
} late_rec;

static void
late_hook(struct swv_engine *eng, uint64_t wake, uint64_t due,
	  uint64_t late)
{
	uint64_t now = swv_now_ns(), add;
	struct timespec ts;

	if (eng != swv_engine_default())
		return;
	if (late > late_rec.est)
		__atomic_store_n(&late_rec.est, late, __ATOMIC_RELAXED);
	add = __atomic_load_n(&late_rec.add, __ATOMIC_RELAXED);
	if (now > wake && now - wake > late_rec.max)
		__atomic_store_n(&late_rec.max, now - wake, __ATOMIC_RELAXED);
	if (late_rec.calls > 0 && due < wake + add)
		__atomic_store_n(&late_rec.shrt, late_rec.shrt + 1,
				 __ATOMIC_RELAXED);
	__atomic_store_n(&late_rec.calls, late_rec.calls + 1,
			 __ATOMIC_RELAXED);
	if (add == 0)
		return;	/* a record: the host as it is */
	ts.tv_sec = 0;
	ts.tv_nsec = (long)add;
	nanosleep(&ts, NULL);
	/* busy: all of it (and a ms more) spent waiting to run */
	if (late_rec.busy)
		__atomic_store_n(&late_rec.rq, late_rec.rq + swv_now_ns() -
				 wake + 1000000, __ATOMIC_RELAXED);
}

/*
 * The engine thread's run-queue wait: none (a CPU nobody else wants), or
 * with busy, the lateness of its sleeps and nothing else (a CPU that other
 * threads of this machine keep).
 */
static uint64_t
fake_run_delay(struct swv_engine *eng)
{
	(void)eng;
	return __atomic_load_n(&late_rec.rq, __ATOMIC_RELAXED);
}

/* Paced sleeps the engine thread planned after the first late one. */
static void
late_sleep_hook(struct swv_engine *eng, bool paced)
{
	if (paced && eng == swv_engine_default() &&
	    __atomic_load_n(&late_rec.calls, __ATOMIC_RELAXED) > 0)
		__atomic_store_n(&late_rec.after, late_rec.after + 1,
				 __ATOMIC_RELAXED);
}

/* Record the engine's paced sleeps from now on, each add ns longer. */
static void
late_start(uint64_t add)
{
	swv_engine_sleep_hook = NULL;
	swv_engine_pace_late_hook = NULL;
	swv_engine_run_delay_hook = NULL;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	usleep(1000);	/* a call of the hook in progress ends */
	late_rec.max = 0;
	late_rec.est = 0;
	late_rec.calls = 0;
	late_rec.shrt = 0;
	late_rec.after = 0;
	late_rec.rq = 1;	/* 0 would be the engine's first read */
	__atomic_store_n(&late_rec.add, add, __ATOMIC_RELEASE);
	swv_engine_pace_late_hook = late_hook;
	if (add > 0) {
		swv_engine_run_delay_hook = fake_run_delay;
		swv_engine_sleep_hook = late_sleep_hook;
	}
}

static void
late_stop(void)
{
	swv_engine_sleep_hook = NULL;
	swv_engine_pace_late_hook = NULL;
	swv_engine_run_delay_hook = NULL;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	usleep(1000);
}

/*
 * One QP at rate kbit/s, frames of len, for about ms of traffic: no loss,
 * order, conformance, the long-run rate from below by the pacer's account.
 */
static int
conformance(const char *model, uint32_t rate, uint32_t burst, uint32_t len,
	    unsigned int ms)
{
	uint64_t bits = (uint64_t)rate * ms;	/* kbit/s * ms = bits */
	uint32_t total = (uint32_t)(bits / 8 / len) + 1;
	struct swv_engine_stats e0, e1;
	struct swv_qp_pace_stats st;
	uint64_t t0, t1, bytes, span, lo, late;
	struct tq t;
	int ret;

	ret = tq_setup_one(&t, model, total, rate, burst);
	if (ret != TEST_SUCCESS)
		return ret;
	swv_engine_get_stats(swv_engine_default(), &e0);
	if (swv_engine_pace_late_hook == NULL)
		late_start(0);	/* a record only */
	if (!tq_run(&t, &total, len, 30000ull + ms * 10)) {
		printf("%s %u kbit/s: %u of %u frames, order %s\n", model,
		       rate, t.rseq[0], total, t.bad_order ? "broken" : "ok");
		tq_teardown(&t);
		return TEST_FAILED;
	}
	swv_engine_get_stats(swv_engine_default(), &e1);
	TEST_ASSERT_SUCCESS(swv_qp_pace_stats(t.qp[0], &st), "");
	if (burst == 0)
		burst = st.max_burst_sz;
	ret = tq_conform(&t, 0, 0, 0, rate, burst, len);
	tq_span(&t, 0, &t0, &t1, &bytes);
	span = t1 - t0;
	lo = span > st.full_ns ? (span - st.full_ns) * rate / 8000000 : 0;
	printf("  %s %u kbit/s, %u-byte frames: %u frames in %.3f s, "
	       "%.4f of the rate; bucket full %.3f ms, waits %" PRIu64
	       ", latest %.1f us, engine passes %" PRIu64 ", pace sleeps %"
	       PRIu64 "\n", model, rate, len, total, span / 1e9,
	       span > 0 ? bytes * 8e6 / ((double)rate * span) : 0.0,
	       st.full_ns / 1e6, st.waits, st.late_max_ns / 1e3,
	       e1.passes - e0.passes, e1.pace_sleeps - e0.pace_sleeps);
	if (ret == TEST_SUCCESS && !(bytes + burst + 2ull * len >= lo)) {
		printf("long-run: %" PRIu64 " bytes, below %" PRIu64 "\n",
		       bytes, lo);
		ret = TEST_FAILED;
	}
	TEST_ASSERT_EQUAL(st.frames, total, "the pacer counted each frame");
	TEST_ASSERT(st.waits > 0, "the QP waited");
	/* the largest estimate of its lateness the engine used */
	late = e0.pace_late_ns > late_rec.est ? e0.pace_late_ns :
	       late_rec.est;
	if (late < e1.pace_late_ns)
		late = e1.pace_late_ns;
	if (late_rec.add == 0)
		late_stop();
	if (strcmp(model, "thread") == 0 && rate <= 1000 &&
	    late > TQ_QUIET_NS) {
		/*
		 * The host woke the engine late: it spins that much before
		 * each departure, as it should (test_late_wake checks it).
		 */
		printf("  %s: wake-ups expected up to %.3f ms late, the sleep "
		       "check needs under %.3f ms: not made\n", model,
		       late / 1e6, TQ_QUIET_NS / 1e6);
	} else if (strcmp(model, "thread") == 0 && rate <= 1000) {
		/*
		 * 1 Mbit/s: a spinning engine would make millions of passes
		 * a second; a sleeping one a few per departure, and a spin
		 * for the estimate of its lateness before each (under
		 * TQ_QUIET_NS, a 60th of the wait).
		 */
		TEST_ASSERT(e1.pace_sleeps > e0.pace_sleeps, "no pace sleep");
		TEST_ASSERT((e1.passes - e0.passes) * 1e9 / span < 300000,
			    "%" PRIu64 " passes in %.3f s: the engine spins",
			    e1.passes - e0.passes, span / 1e9);
	}
	tq_teardown(&t);
	return ret;
}

static int
test_conformance_thread(void)
{
	if (conformance("thread", 1000, 0, 250, 1000) != TEST_SUCCESS ||
	    conformance("thread", 50000, 16384, 1000, 600) != TEST_SUCCESS)
		return TEST_FAILED;
	return conformance("thread", 3000000, 0, 8000, 500);
}

static int
test_conformance_service(void)
{
	if (conformance("service", 1000, 0, 250, 600) != TEST_SUCCESS)
		return TEST_FAILED;
	return conformance("service", 2000000, 65536, 1500, 400);
}

static int
test_conformance_inline(void)
{
	if (conformance("inline", 1000, 0, 250, 600) != TEST_SUCCESS)
		return TEST_FAILED;
	return conformance("inline", 2000000, 65536, 1500, 400);
}

/*
 * On an engine thread a backlogged QP waits for half its bucket, not for
 * one frame: at 100 Mbit/s with a bucket of 16 frames, each wait ends with
 * 8 frames or more let go at once (more when the wake-up was late), so the
 * pacer's waits are at most an eighth of its frames (a sixth asserted:
 * the bucket's first burst and the run's ends). A pacer that woke per
 * frame would wait about once a frame, less only when its wake-ups are
 * late by several frames' time. Counts, not times: no assumption on the
 * load. Polled engines (service, inline) wait per frame: their callers'
 * calls release what conforms, a batch would only take slack; there the
 * run checks conformance.
 */
static int
batches(const char *model)
{
	const uint32_t len = 1514, burst = 16 * len, rate = 100000;
	uint32_t total = 2400;
	struct swv_qp_pace_stats st;
	struct tq t;
	int ret;

	ret = tq_setup_one(&t, model, total, rate, burst);
	if (ret != TEST_SUCCESS)
		return ret;
	if (!tq_run(&t, &total, len, 30000)) {
		printf("%s: %u of %u frames\n", model, t.rseq[0], total);
		tq_teardown(&t);
		return TEST_FAILED;
	}
	TEST_ASSERT_SUCCESS(swv_qp_pace_stats(t.qp[0], &st), "");
	printf("  %s: %" PRIu64 " frames, %" PRIu64 " waits, %.1f frames "
	       "a wait\n", model, st.frames, st.waits,
	       st.waits > 0 ? (double)st.frames / st.waits : 0.0);
	ret = tq_conform(&t, 0, 0, 0, rate, burst, len);
	tq_teardown(&t);
	TEST_ASSERT_SUCCESS(ret, "conformance");
	TEST_ASSERT(st.waits > 0, "%s: the QP waited", model);
	TEST_ASSERT(strcmp(model, "thread") != 0 ||
		    st.frames >= 6 * st.waits,
		    "%s: %" PRIu64 " waits for %" PRIu64 " frames: not "
		    "batched", model, st.waits, st.frames);
	return TEST_SUCCESS;
}

static int
test_batches(void)
{
	if (batches("thread") != TEST_SUCCESS ||
	    batches("service") != TEST_SUCCESS)
		return TEST_FAILED;
	return batches("inline");
}

/*
 * Under traffic: 2 Mbit/s, then 8 Mbit/s, then no limit. Nothing lost,
 * order kept; the first stretch conforms to 2 Mbit/s, everything before
 * the removal to 8 Mbit/s; the second stretch carries more than 2 Mbit/s
 * allows (unless the pacer says its bucket sat full: then it only says
 * so); after the removal the rest goes at once.
 */
static int
change(const char *model)
{
	const uint32_t len = 1000, burst = 4000, total = 100000;
	uint64_t tc, tr, t0, b2 = 0, full0;
	struct swv_qp_pace_stats st;
	unsigned int i;
	struct tq t;
	int ret;

	ret = tq_setup_one(&t, model, total, 2000, burst);
	if (ret != TEST_SUCCESS)
		return ret;
	tq_run(&t, &total, len, 300);
	TEST_ASSERT(!t.bad_order, "order");
	TEST_ASSERT_SUCCESS(swv_qp_pace_stats(t.qp[0], &st), "");
	full0 = st.full_ns;
	tc = t_now_ns();
	TEST_ASSERT_SUCCESS(tq_rate_limit(&t, 0, 8000, burst), "8 Mbit/s");
	tq_run(&t, &total, len, 300);
	TEST_ASSERT(!t.bad_order, "order");
	TEST_ASSERT_SUCCESS(swv_qp_pace_stats(t.qp[0], &st), "");
	tr = t_now_ns();
	TEST_ASSERT_SUCCESS(tq_rate_limit(&t, 0, 0, 0), "removed");
	TEST_ASSERT(tq_run(&t, &total, len, 20000), "%u of %u frames after "
		    "the removal", t.rseq[0], total);
	TEST_ASSERT(!t.bad_order, "order");
	TEST_ASSERT_EQUAL(t.nrec, total, "every frame, once");
	ret = tq_conform(&t, 0, 0, tc, 2000, burst, len);
	if (ret == TEST_SUCCESS)
		ret = tq_conform(&t, 0, 0, tr, 8000, burst, len);
	for (i = 0, t0 = 0; i < t.nrec; i++) {
		if (t.rec[i].ts < tc || t.rec[i].ts >= tr)
			continue;
		if (t0 == 0)
			t0 = t.rec[i].ts;
		b2 += t.rec[i].len;
	}
	printf("  %s: 2 -> 8 Mbit/s: %" PRIu64 " bytes in %.3f s (%.2f "
	       "Mbit/s), bucket full %.3f ms\n", model, b2,
	       (tr - tc) / 1e9, b2 * 8e3 / (double)(tr - tc),
	       (st.full_ns - full0) / 1e6);
	if (ret == TEST_SUCCESS && st.full_ns - full0 < (tr - tc) / 4)
		TEST_ASSERT(b2 > burst + 2000ull * (tr - tc) / 8000000,
			    "8 Mbit/s not applied: %" PRIu64 " bytes", b2);
	tq_teardown(&t);
	return ret;
}

/*
 * A change reaches a QP that waits on the wheel: at 1 kbit/s with a
 * 1000-byte bucket, the second 1000-byte frame is due 8 s after the
 * first; raised to 100 Mbit/s (or removed), it goes at once: well before
 * that (the test gives it 4 s, a margin no load takes away).
 */
static int
waiting(const char *model, uint32_t to_rate)
{
	uint32_t total = 2;
	struct tq t;
	int ret;

	ret = tq_setup(&t, model, 1, 4, total);
	if (ret != TEST_SUCCESS)
		return ret;
	TEST_ASSERT_SUCCESS(tq_rate_limit(&t, 0, 1, 1000), "1 kbit/s");
	total = 1;
	TEST_ASSERT(tq_run(&t, &total, 1000, 4000), "the first frame");
	total = 2;
	tq_run(&t, &total, 1000, 50);
	TEST_ASSERT_EQUAL(t.rseq[0], 1, "the second frame waits");
	TEST_ASSERT_SUCCESS(tq_rate_limit(&t, 0, to_rate, 0), "change");
	TEST_ASSERT(tq_run(&t, &total, 1000, 4000),
		    "%s: the waiting frame did not follow the change to %u "
		    "kbit/s", model, to_rate);
	TEST_ASSERT(!t.bad_order, "order");
	tq_teardown(&t);
	return TEST_SUCCESS;
}

static int
test_change_waiting(void)
{
	if (waiting("thread", 100000) != TEST_SUCCESS ||
	    waiting("thread", 0) != TEST_SUCCESS ||
	    waiting("service", 100000) != TEST_SUCCESS)
		return TEST_FAILED;
	return waiting("inline", 0);
}

static int
test_change_thread(void)
{
	return change("thread");
}

static int
test_change_inline(void)
{
	return change("inline");
}

/* Each slot of dev's wheel has its bit set exactly when QPs wait in it. */
static int
wheel_consistent(struct swv_device *dev, const char *when)
{
	struct swv_wheel *w = dev->wheel;
	unsigned int s;
	bool bit;

	TEST_ASSERT_NOT_NULL(w, "a wheel");
	for (s = 0; s < SWV_WHEEL_SLOTS; s++) {
		bit = (w->bits[s / 64] >> (s % 64)) & 1;
		TEST_ASSERT_EQUAL(bit, !cds_list_empty(&w->slot[s]),
				  "%s: slot %u's bit %d, its list %s", when, s,
				  bit, bit ? "empty" : "not empty");
	}
	return TEST_SUCCESS;
}

/*
 * A QP taken off the wheel by a change (pace_apply) or a reset
 * (swv_pace_reset) clears its slot's bit when it leaves the slot empty.
 * Service model: nothing but this thread's passes touches the wheel, so
 * the wheel is checked right after the one pass that applies the change.
 */
/*
 * Two QPs on the service model, at 1 and 10 kbit/s with 1000-byte buckets,
 * each with its second 1000-byte frame waiting on the wheel: due 8 s and
 * 0.8 s after the first.
 */
static int
two_waiting(struct tq *t, uint32_t *total)
{
	int ret;

	ret = tq_setup(t, "service", 2, 4, 8);
	if (ret != TEST_SUCCESS)
		return ret;
	total[0] = total[1] = 1;
	TEST_ASSERT_SUCCESS(tq_rate_limit(t, 0, 1, 1000), "1 kbit/s");
	TEST_ASSERT_SUCCESS(tq_rate_limit(t, 1, 10, 1000), "10 kbit/s");
	TEST_ASSERT(tq_run(t, total, 1000, 4000), "the first frames");
	total[0] = total[1] = 2;
	tq_run(t, total, 1000, 50);
	TEST_ASSERT(to_swv_qp(t->qp[0])->pace_parked &&
		    to_swv_qp(t->qp[1])->pace_parked, "both wait");
	return TEST_SUCCESS;
}

static int
test_wheel_del_bit(void)
{
	struct swv_device *dev;
	uint32_t total[2];
	struct tq t;
	int ret;

	ret = two_waiting(&t, total);
	if (ret != TEST_SUCCESS)
		return ret;
	dev = to_swv_qp(t.qp[0])->dev;
	TEST_ASSERT_SUCCESS(wheel_consistent(dev, "parked"), "");
	TEST_ASSERT_SUCCESS(tq_rate_limit(&t, 1, 0, 0), "removed");
	swv_engine_run_once(t.eng);
	TEST_ASSERT(!to_swv_qp(t.qp[1])->pace_parked, "the removal applied");
	TEST_ASSERT_SUCCESS(wheel_consistent(dev, "removal"), "");
	TEST_ASSERT_SUCCESS(t_qp_modify(t.qp[0], IBV_QPS_RESET, IBV_QP_STATE,
					0), "reset");
	TEST_ASSERT(!to_swv_qp(t.qp[0])->pace_parked, "the reset applied");
	TEST_ASSERT_SUCCESS(wheel_consistent(dev, "reset"), "");
	TEST_ASSERT_EQUAL(dev->wheel->n, 0, "an empty wheel");
	TEST_ASSERT_EQUAL(swv_pace_next(dev), UINT64_MAX, "no departure");
	tq_teardown(&t);
	return TEST_SUCCESS;
}

/*
 * The next departure of QPs due a turn of the wheel or more away (about
 * 4 ms: 8 s and 0.8 s here) is their due time, not the time of their
 * slot in this turn: a sleeper that spins for its wake-up lateness before
 * the departure it is told would spin through the whole wait. Through
 * swv_engine_next_departure() too. Then a QP due in this turn (a limit
 * that lets its frame go 1 ms after the first) comes first. Service
 * model: nothing but this thread's passes moves the wheel.
 */
static int
test_next_far(void)
{
	uint64_t due, d0, d1;
	struct swv_device *dev;
	uint32_t total[2];
	unsigned int i;
	struct tq t;
	int ret;

	ret = two_waiting(&t, total);
	if (ret != TEST_SUCCESS)
		return ret;
	dev = to_swv_qp(t.qp[0])->dev;
	d0 = to_swv_qp(t.qp[0])->pace.due;
	d1 = to_swv_qp(t.qp[1])->pace.due;
	TEST_ASSERT(d1 < d0, "QP 1 first");
	TEST_ASSERT_EQUAL(swv_pace_next(dev), d1, "QP 1's due, %" PRIu64
			  " ns after the wheel's slot time", d1 -
			  (dev->wheel->tick << SWV_WHEEL_SHIFT));
	TEST_ASSERT_SUCCESS(swv_engine_next_departure(t.eng, &due), "");
	TEST_ASSERT_EQUAL(due, d1, "the engine's next departure");
	TEST_ASSERT_EQUAL(swv_engine_next_departure(NULL, &due), EINVAL, "");
	/* 8000 kbit/s: QP 1's next frame is due in this turn */
	TEST_ASSERT_SUCCESS(tq_rate_limit(&t, 1, 8000, 1000), "8 Mbit/s");
	total[1] = 100;
	tq_run(&t, total, 1000, 5);
	/*
	 * 4 posted, a frame a ms: a pass leaves a backlog waiting. Not
	 * always the next one: after this thread was kept from its CPU for
	 * a ms, the frames the drain knew of may all be due, and the QP
	 * waits only once a pass meets the WQEs posted since.
	 */
	for (i = 0; i < 1000 && !to_swv_qp(t.qp[1])->pace_parked; i++)
		tq_run(&t, total, 1000, 1);
	TEST_ASSERT(to_swv_qp(t.qp[0])->pace_parked, "QP 0 waits still");
	TEST_ASSERT(to_swv_qp(t.qp[1])->pace_parked, "QP 1 waits again");
	d1 = to_swv_qp(t.qp[1])->pace.due;
	TEST_ASSERT(d1 < d0, "QP 1 first");
	TEST_ASSERT_EQUAL(swv_pace_next(dev), d1, "in this turn");
	tq_teardown(&t);
	return TEST_SUCCESS;
}

/*
 * swv_engine_pace_window(): the earliest departure and the earliest full
 * bucket of the QPs that wait, which need not be the same QP's. Service
 * model, 1000-byte frames, both QPs sending their bucket at once and then
 * waiting: QP 1 at 2 kbit/s with a 3000-byte bucket waits for one frame
 * (or typical_pkt_sz) but is full only 3000 bytes after its last frame;
 * QP 0 at 1 kbit/s with a 1000-byte bucket is full when due (8 s), after
 * QP 1's due (at most 6 s) and before QP 1 is full (12 s). Waits of
 * seconds: a test thread kept from its CPU meanwhile changes nothing.
 */
static int
test_pace_window(void)
{
	struct swv_qp *q0, *q1;
	uint64_t due, latest, x;
	uint32_t total[2];
	struct tq t;
	int ret;

	ret = tq_setup(&t, "service", 2, 8, 16);
	if (ret != TEST_SUCCESS)
		return ret;
	q0 = to_swv_qp(t.qp[0]);
	q1 = to_swv_qp(t.qp[1]);
	TEST_ASSERT_SUCCESS(swv_engine_pace_window(t.eng, &due, &latest), "");
	TEST_ASSERT(due == UINT64_MAX && latest == UINT64_MAX, "none waits");
	TEST_ASSERT_SUCCESS(tq_rate_limit(&t, 0, 1, 1000), "1 kbit/s");
	TEST_ASSERT_SUCCESS(tq_rate_limit(&t, 1, 2, 3000), "2 kbit/s");
	total[0] = 1;
	total[1] = 3;
	TEST_ASSERT(tq_run(&t, total, 1000, 4000), "the buckets' frames");
	total[0] = 2;
	total[1] = 4;
	tq_run(&t, total, 1000, 50);
	TEST_ASSERT(q0->pace_parked && q1->pace_parked, "both wait");
	TEST_ASSERT_EQUAL(swv_pace_full_at(q0), q0->pace.due, "QP 0 full when due");
	x = q1->pace.typical > 1000 ? q1->pace.typical : 1000;
	TEST_ASSERT(x < 3000, "typical_pkt_sz %u", q1->pace.typical);
	TEST_ASSERT(swv_pace_full_at(q1) - q1->pace.due <= (3000 - x) * 4000000 +
		    1 && swv_pace_full_at(q1) - q1->pace.due + 1 >=
		    (3000 - x) * 4000000,
		    "QP 1 full %" PRIu64 " ns after due", swv_pace_full_at(q1) -
		    q1->pace.due);
	TEST_ASSERT(q1->pace.due < q0->pace.due &&
		    swv_pace_full_at(q0) < swv_pace_full_at(q1), "the order");
	TEST_ASSERT_SUCCESS(swv_engine_pace_window(t.eng, &due, &latest), "");
	TEST_ASSERT_EQUAL(due, q1->pace.due, "QP 1's departure first");
	TEST_ASSERT_EQUAL(latest, swv_pace_full_at(q0), "QP 0's full bucket first");
	TEST_ASSERT_EQUAL(swv_engine_pace_window(t.eng, &due, NULL), EINVAL,
			  "");
	tq_teardown(&t);
	return TEST_SUCCESS;
}

/*
 * Inline model: after a nap past the queue's full bucket, one poll of the
 * sender's CQ, which holds CQEs already, lets the frames due go (what
 * rte_pmd_vbr_pace_window() promises a napping application): 1 Mbit/s, a
 * bucket of two 1000-byte frames; four posted, two leave at once, two
 * wait 8 ms each; after 40 ms one poll for one CQE, and the receiver's CQ
 * holds all four, read without polling it (a poll there would do the
 * work as well).
 */
static int
test_inline_one_call(void)
{
	const volatile uint32_t *head;
	uint32_t pending, tail;
	struct ibv_wc wc;
	unsigned int i;
	struct tq t;
	int ret;

	ret = tq_setup(&t, "inline", 1, 8, 16);
	if (ret != TEST_SUCCESS)
		return ret;
	TEST_ASSERT_SUCCESS(rate_limit(t.qp[0], 1000, 2000, 1000), "limit");
	for (i = 0; i < 4; i++)
		TEST_ASSERT_SUCCESS(tq_post(&t, 0, 1000), "post %u", i);
	TEST_ASSERT_SUCCESS(swv_cq_peek(t.rcq, &pending, &head, &tail), "");
	TEST_ASSERT_EQUAL(pending, 2, "the bucket's frames at once");
	usleep(40000);
	TEST_ASSERT_EQUAL(ibv_poll_cq(t.scq, 1, &wc), 1, "one send CQE");
	TEST_ASSERT_EQUAL(wc.status, IBV_WC_SUCCESS, "");
	TEST_ASSERT_SUCCESS(swv_cq_peek(t.rcq, &pending, &head, &tail), "");
	TEST_ASSERT_EQUAL(pending, 4, "the frames due left in that one call");
	tq_teardown(&t);
	return TEST_SUCCESS;
}

/*
 * A pass visits the QPs that may send, not the ones waiting on the wheel:
 * 1,024 backlogged QPs, all waiting (QP 0 for 0.8 s, the others for 8 s),
 * leave none in the device's visit set (dev->run); the wheel puts QP 0
 * back when it is due, and a limit removed on a waiting QP brings that one
 * back at once. Service model: this thread's passes are the only ones.
 * The teardown destroys QPs that wait.
 */
static int
test_pass_skips_waiting(void)
{
	static uint32_t total[TQ_MAXQ];
	struct swv_device *dev;
	unsigned int q;
	struct tq t;
	int ret;

	ret = tq_setup(&t, "service", TQ_MAXQ, 4, TQ_MAXQ * 2 + 8);
	if (ret != TEST_SUCCESS)
		return ret;
	dev = to_swv_qp(t.qp[0])->dev;
	for (q = 0; q < TQ_MAXQ; q++) {
		total[q] = 1;
		TEST_ASSERT_SUCCESS(tq_rate_limit(&t, q, q == 0 ? 10 : 1,
						  1000), "qp %u", q);
	}
	TEST_ASSERT(tq_run(&t, total, 1000, 20000), "the first frames");
	for (q = 0; q < TQ_MAXQ; q++)
		total[q] = 2;
	tq_run(&t, total, 1000, 50);
	for (q = 0; q < TQ_MAXQ; q++)
		TEST_ASSERT(to_swv_qp(t.qp[q])->pace_parked, "qp %u waits", q);
	printf("  %u QPs waiting: %u in the visit set\n", TQ_MAXQ,
	       dev->nrun);
	TEST_ASSERT_EQUAL(dev->nrun, 0, "the pass visits waiting QPs");
	/* the others' second frames stay posted: not waited for here */
	for (q = 1; q < TQ_MAXQ; q++)
		total[q] = 1;
	TEST_ASSERT(tq_run(&t, total, 1000, 5000),
		    "QP 0's second frame, due after 0.8 s");
	TEST_ASSERT_EQUAL(t.rseq[0], 2, "the wheel put QP 0 back");
	TEST_ASSERT_SUCCESS(tq_rate_limit(&t, 1, 0, 0), "removed");
	total[1] = 2;
	TEST_ASSERT(tq_run(&t, total, 1000, 1000), "QP 1's frame");
	TEST_ASSERT_EQUAL(t.rseq[1], 2, "the removal brought QP 1 back");
	TEST_ASSERT(dev->nrun >= 1 && dev->nrun < 8,
		    "%u QPs in the visit set", dev->nrun);
	tq_teardown(&t);
	return TEST_SUCCESS;
}

/*
 * The window between the engine thread's last pass and its asleep flag:
 * 1 armed, 2 the thread waits in it (at_post read), 3 posted (released),
 * 4 the thread's next sleep (after read). Driven by the test thread.
 */
static int race_state;
static struct swv_engine_stats race_at_post, race_after;

static void
race_hook(struct swv_engine *eng, bool paced)
{
	int st = __atomic_load_n(&race_state, __ATOMIC_ACQUIRE);
	unsigned int i;

	if (eng != swv_engine_default())
		return;
	if (st == 1 && !paced) {
		swv_engine_get_stats(eng, &race_at_post);
		__atomic_store_n(&race_state, 2, __ATOMIC_RELEASE);
		for (i = 0; i < 20000 && __atomic_load_n(&race_state,
		     __ATOMIC_ACQUIRE) == 2; i++)
			usleep(100);
	} else if (st == 3) {
		swv_engine_get_stats(eng, &race_after);
		__atomic_store_n(&race_state, 4, __ATOMIC_RELEASE);
	}
}

/*
 * A frame posted in the window before the engine thread's deep sleep (its
 * post rings no doorbell) that the last look parks on the wheel: the
 * thread must sleep until its departure, not a deep sleep (100 ms, with
 * nothing to wake it). 10 kbit/s, a 1000-byte bucket, 1000-byte frames:
 * the second is due 0.8 s after the first (a post later than that, on a
 * loaded machine, would find the bucket full). Checked without a clock: the
 * thread's next sleep after the post is a paced one (no deep sleep ended
 * in between), and the frame arrives.
 */
static int
test_park_before_sleep(void)
{
	struct swv_qp_pace_stats st;
	uint32_t total = 1;
	uint64_t t_end;
	struct tq t;
	int ret;

	ret = tq_setup(&t, "thread", 1, 4, 2);
	if (ret != TEST_SUCCESS)
		return ret;
	TEST_ASSERT_SUCCESS(tq_rate_limit(&t, 0, 10, 1000), "10 kbit/s");
	TEST_ASSERT(tq_run(&t, &total, 1000, 4000), "the first frame");
	swv_engine_sleep_hook = race_hook;
	__atomic_store_n(&race_state, 1, __ATOMIC_RELEASE);
	t_end = t_now_ms() + 4000;
	while (__atomic_load_n(&race_state, __ATOMIC_ACQUIRE) != 2 &&
	       t_now_ms() < t_end)
		usleep(100);
	TEST_ASSERT_EQUAL(race_state, 2, "the engine thread never slept");
	TEST_ASSERT_SUCCESS(tq_post(&t, 0, 1000), "the second frame");
	__atomic_store_n(&race_state, 3, __ATOMIC_RELEASE);
	total = 2;
	TEST_ASSERT(tq_run(&t, &total, 1000, 4000), "the second frame");
	while (__atomic_load_n(&race_state, __ATOMIC_ACQUIRE) != 4 &&
	       t_now_ms() < t_end)
		usleep(100);
	swv_engine_sleep_hook = NULL;
	TEST_ASSERT_EQUAL(race_state, 4, "no sleep after the post");
	TEST_ASSERT_SUCCESS(swv_qp_pace_stats(t.qp[0], &st), "");
	TEST_ASSERT(st.waits >= 1, "the second frame waited on the wheel");
	TEST_ASSERT_EQUAL(race_after.deep_sleeps - race_after.pace_sleeps,
			  race_at_post.deep_sleeps - race_at_post.pace_sleeps,
			  "a deep sleep with a QP parked: the frame left late");
	tq_teardown(&t);
	return TEST_SUCCESS;
}

/*
 * A host that wakes the engine thread late. The hook stands for it: every
 * paced sleep that its timeout ends lasts LATE_NS more (the hook sleeps
 * on). The engine must learn it: after the first such sleep, each paced
 * sleep is planned to end LATE_NS or more before its departure (the
 * engine's estimate covers the lateness), and the departures keep the
 * token-bucket bound and the long-run credit (conformance()). 8 Mbit/s,
 * 500-byte frames, 5 ms late (more than a turn of the wheel):
 *   - a 100,000-byte bucket: a QP waits 50 ms, with 50 ms of slack; the
 *     engine sleeps, 5 ms short of each departure, and spins the rest
 *     (unless the host itself wakes it later than the wait);
 *   - a 4,000-byte bucket: 2 ms waits and 2 ms of slack, below the
 *     lateness: each departure is nearer than the estimate, so after its
 *     first late sleep the engine spins, and its paced sleeps stay a few
 *     (a probe a second or two at most) where a QP waits every 2 ms;
 *   - the same, the lateness all spent on the run queue (the run-delay
 *     hook says so): spinning would not save it, the engine sleeps.
 * Counts and the engine's own plan, no assumption on the clock or load.
 */
#define LATE_NS 5000000ull

/*
 * One run of conformance() at 8 Mbit/s, 500-byte frames, bucket bytes,
 * LATE_NS added to each sleep. *sleeps: the engine's paced sleeps in it;
 * *late: the largest estimate of its lateness the engine used (at the
 * start, at each late sleep, at the end).
 */
static int
late_wake(uint32_t burst, uint64_t *sleeps, uint64_t *late)
{
	struct swv_engine_stats e0, e1;
	int ret;

	swv_engine_get_stats(swv_engine_default(), &e0);
	late_start(LATE_NS);
	ret = conformance("thread", 8000, burst, 500, 600);
	late_stop();
	swv_engine_get_stats(swv_engine_default(), &e1);
	*sleeps = e1.pace_sleeps - e0.pace_sleeps;
	*late = late_rec.est > e0.pace_late_ns ? late_rec.est :
		e0.pace_late_ns;
	if (*late < e1.pace_late_ns)
		*late = e1.pace_late_ns;
	printf("  bucket %u: %u late sleeps (the latest %.3f ms before the "
	       "hook's %.1f ms), %u planned nearer than that to their "
	       "departure; %" PRIu64 " pace sleeps, %u after the first late "
	       "one; estimate %.3f ms at the start, %.3f ms at the end\n",
	       burst, late_rec.calls, late_rec.max / 1e6, LATE_NS / 1e6,
	       late_rec.shrt, *sleeps, late_rec.after,
	       e0.pace_late_ns / 1e6, e1.pace_late_ns / 1e6);
	return ret;
}

static int
test_late_wake(void)
{
	const uint64_t wait = 50000000;	/* 100,000 bytes at 8 Mbit/s / 2 */
	uint64_t sleeps, late;
	int ret;

	/*
	 * The engine's estimates forget what it measured before (the
	 * run-queue waits of this loaded machine, above all): two windows
	 * pass with no paced QP, so no sample.
	 */
	usleep((useconds_t)(2 * SWV_LATE_WIN_NS / 1000 + 100000));
	TEST_ASSERT_SUCCESS(late_wake(100000, &sleeps, &late),
			    "100000-byte bucket: conformance");
	TEST_ASSERT_EQUAL(late_rec.shrt, 0, "%u of %u sleeps aimed at less "
			  "than the lateness before their departure",
			  late_rec.shrt, late_rec.calls);
	if (late + TQ_QUIET_NS < wait)
		TEST_ASSERT(late_rec.calls >= 2, "%u late sleeps, wake-ups "
			    "%.3f ms late for 50 ms waits: the engine did not "
			    "sleep", late_rec.calls, late / 1e6);
	else
		printf("  the host wakes the engine %.3f ms late, the QP "
		       "waits 50 ms: the engine spins, sleeps not checked\n",
		       late / 1e6);
	TEST_ASSERT_SUCCESS(late_wake(4000, &sleeps, &late),
			    "4000-byte bucket: conformance");
	TEST_ASSERT_EQUAL(late_rec.shrt, 0, "%u of %u sleeps aimed at less "
			  "than the lateness before their departure",
			  late_rec.shrt, late_rec.calls);
	/*
	 * 1,200 frames, a wait each 4 (2,000 bytes): about 300 waits. A
	 * sleep each after the first late one, without the estimate; with
	 * it, the probes of a window that forgot it, each a sleep or a few
	 * a post's doorbell ends before the one that is late.
	 */
	TEST_ASSERT(late_rec.after <= 30, "%u paced sleeps after a late one, "
		    "with departures nearer than the lateness: the engine did "
		    "not spin", late_rec.after);
	/*
	 * The same lateness, all of it spent on the run queue (other
	 * threads had the CPU): a spin would not save it, so the engine
	 * sleeps to each departure: a sleep (or more) a wait, about 300.
	 */
	usleep((useconds_t)(2 * SWV_LATE_WIN_NS / 1000 + 100000));
	late_rec.busy = true;
	ret = late_wake(4000, &sleeps, &late);
	late_rec.busy = false;
	TEST_ASSERT_SUCCESS(ret, "4000-byte bucket, busy CPU: conformance");
	TEST_ASSERT(late_rec.after >= 60, "%u paced sleeps after a late one, "
		    "the lateness all run-queue wait: the engine spun",
		    late_rec.after);
	return TEST_SUCCESS;
}

/*
 * 1,024 paced QPs on one device, 100 kbit/s each with a 250-byte bucket:
 * 4 frames of 200 bytes each, so that each QP waits 3 times (16 ms a
 * wait): all arrive, each QP in order and conforming.
 */
static int
test_many_qps(void)
{
	static uint32_t total[TQ_MAXQ];
	struct swv_qp_pace_stats st;
	uint64_t waits = 0;
	unsigned int q, idle = 0;
	struct tq t;
	int ret;

	ret = tq_setup(&t, "thread", TQ_MAXQ, 4, TQ_MAXQ * 4);
	if (ret != TEST_SUCCESS)
		return ret;
	for (q = 0; q < TQ_MAXQ; q++) {
		total[q] = 4;
		TEST_ASSERT_SUCCESS(tq_rate_limit(&t, q, 100, 250), "qp %u", q);
	}
	TEST_ASSERT(tq_run(&t, total, 200, 60000), "all frames");
	TEST_ASSERT(!t.bad_order, "order");
	for (q = 0; q < TQ_MAXQ; q++) {
		if (tq_conform(&t, q, 0, 0, 100, 250, 200) != TEST_SUCCESS)
			return TEST_FAILED;
		TEST_ASSERT_SUCCESS(swv_qp_pace_stats(t.qp[q], &st), "");
		waits += st.waits;
		idle += st.waits == 0;
	}
	printf("  1024 QPs: %u frames, %" PRIu64 " waits on the wheel\n",
	       t.nrec, waits);
	/*
	 * Each QP waited: 3 times when its 4 posts came at once; a frame
	 * posted over 2 ms after the one before (this thread descheduled)
	 * may find the bucket refilled, but not all three.
	 */
	TEST_ASSERT_EQUAL(idle, 0, "%u QPs never waited", idle);
	tq_teardown(&t);
	return TEST_SUCCESS;
}

/*
 * The lateness estimate (swv_clock.h): the largest sample of the last one
 * or two windows but for one in SWV_LATE_RARE of them, taken as the
 * largest of its power-of-two class; with fewer samples than that, the
 * largest. Times are made up, windows rolled by hand.
 */
static int
test_late_estimate(void)
{
	const uint64_t t0 = 1000000000ull, w = SWV_LATE_WIN_NS;
	struct swv_late l;
	unsigned int i;

	memset(&l, 0, sizeof(l));
	/* few samples, one odd one: it counts (the engine's few sleeps) */
	for (i = 0; i < 10; i++)
		swv_late_add(&l, t0 + i, t0 + i + 50000);
	swv_late_add(&l, t0 + 10, t0 + 10 + 2000000);
	TEST_ASSERT_EQUAL(swv_late_get(&l, t0 + 20), 2000000ull, "");
	/* the same window, 20,000 samples more: the odd one is left out */
	for (i = 0; i < 20000; i++)
		swv_late_add(&l, t0 + 100 + i, t0 + 100 + i + 40000);
	TEST_ASSERT_EQUAL(swv_late_get(&l, t0 + 30000), 50000ull,
			  "one odd wake-up in 20,011 is left out");
	/* 20 more odd ones: 21 in 20,031, 20 left out at most */
	for (i = 0; i < 20; i++)
		swv_late_add(&l, t0 + 30001 + i, t0 + 30001 + i + 1200000);
	TEST_ASSERT_EQUAL(swv_late_get(&l, t0 + 40000), 2000000ull,
			  "odd wake-ups that are not rare count (as the "
			  "largest of their class, 2^20 to 2^21 ns)");
	/* the next window: the last one's samples still count */
	swv_late_add(&l, t0 + w + 1, t0 + w + 1 + 10000);
	TEST_ASSERT_EQUAL(swv_late_get(&l, t0 + w + 100000), 2000000ull, "");
	/* a window with no sample after the current one: all forgotten */
	TEST_ASSERT_EQUAL(swv_late_get(&l, t0 + 3 * w + 200000), 0ull, "");
	/* a sample past SWV_LATE_MAX_NS counts as it */
	swv_late_add(&l, t0 + 3 * w + 300000, t0 + 4 * w);
	TEST_ASSERT_EQUAL(swv_late_get(&l, t0 + 4 * w), SWV_LATE_MAX_NS, "");
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite = {
	.name = "swverbs pacing",
	.cases = {
		TEST_CASE(test_no_call_rcu),
		TEST_CASE(test_caps),
		TEST_CASE(test_rate_table),
		TEST_CASE(test_no_burst),
		TEST_CASE(test_errnos),
		TEST_CASE(test_modify_after_engine_err),
		TEST_CASE(test_conformance_thread),
		TEST_CASE(test_conformance_service),
		TEST_CASE(test_conformance_inline),
		TEST_CASE(test_batches),
		TEST_CASE(test_late_estimate),
		TEST_CASE(test_late_wake),
		TEST_CASE(test_change_thread),
		TEST_CASE(test_change_inline),
		TEST_CASE(test_change_waiting),
		TEST_CASE(test_park_before_sleep),
		TEST_CASE(test_wheel_del_bit),
		TEST_CASE(test_next_far),
		TEST_CASE(test_pace_window),
		TEST_CASE(test_inline_one_call),
		TEST_CASE(test_pass_skips_waiting),
		TEST_CASE(test_many_qps),
		TEST_CASES_END(),
	},
};

/*
 * Over a veth (--veth): the sender and the receiver on af_packet wires,
 * one on each end of a veth pair that lives, with this process, in a
 * network namespace of the test's own. Rates from 1 Mbit/s up to what a
 * veth carries here; departures checked against the bucket and the
 * long-run rate, arrivals counted and in order.
 */
static int
test_veth_thread(void)
{
	if (conformance("thread", 1000, 0, 250, 600) != TEST_SUCCESS ||
	    conformance("thread", 100000, 0, 1000, 400) != TEST_SUCCESS)
		return TEST_FAILED;
	return conformance("thread", 500000, 65536, 1500, 300);
}

static int
test_veth_inline(void)
{
	if (conformance("inline", 1000, 0, 250, 600) != TEST_SUCCESS)
		return TEST_FAILED;
	return conformance("inline", 200000, 65536, 1500, 300);
}

static const struct unit_test_suite suite_veth = {
	.name = "swverbs pacing over a veth",
	.cases = {
		TEST_CASE(test_veth_thread),
		TEST_CASE(test_veth_inline),
		TEST_CASES_END(),
	},
};

/* The namespace vbrpace<pid> with both ends, this process in it. */
static int
veth_setup(void)
{
	static char a[16], b[16];
	int ret;

	snprintf(a, sizeof(a), "vpa%d", (int)getpid());
	snprintf(b, sizeof(b), "vpb%d", (int)getpid());
	ret = vbr_netns_enter("vbrpace", a, b);
	if (ret == 0) {
		veth_a = a;
		veth_b = b;
	}
	return ret;
}

int
main(int argc, char **argv)
{
	int ret;

	if (argc > 1 && strcmp(argv[1], "--veth") == 0) {
		ret = veth_setup();
		if (ret != 0)
			return ret;
		ret = unit_test_suite_runner(&suite_veth);
		vbr_netns_remove();
		return ret;
	}
	return unit_test_suite_runner(&suite);
}
