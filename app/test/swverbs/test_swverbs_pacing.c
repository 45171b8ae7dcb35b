/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * swverbs packet pacing: packet_pacing_caps, every errno of
 * ibv_modify_qp_rate_limit() and of ibv_modify_qp() with IBV_QP_RATE_LIMIT
 * (mlx5's rules), the defaults.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "swv_test_util.h"

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

static int
state_to(struct ibv_qp *qp, enum ibv_qp_state s, int mask, uint32_t rate)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = s;
	a.port_num = 1;
	a.rate_limit = rate;
	return swv_modify_qp(qp, &a, mask);
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
	/* nothing was set by the refusals */
	TEST_ASSERT_SUCCESS(swv_qp_pace_stats(qp, &st), "");
	TEST_ASSERT_EQUAL(st.rate_limit, 0, "");
	/* the range's ends, and the defaults */
	TEST_ASSERT_SUCCESS(rate_limit(qp, 1, 0, 0), "qp_rate_limit_min");
	TEST_ASSERT_SUCCESS(rate_limit(qp, 100000000, 0, 0),
			    "qp_rate_limit_max");
	TEST_ASSERT_SUCCESS(swv_qp_pace_stats(qp, &st), "");
	TEST_ASSERT_EQUAL(st.rate_limit, 100000000, "");
	TEST_ASSERT_EQUAL(st.typical_pkt_sz, 1500, "the port MTU");
	TEST_ASSERT_EQUAL(st.max_burst_sz, 12500000, "1 ms at 100 Gbit/s");
	TEST_ASSERT_SUCCESS(rate_limit(qp, 1000, 0, 0), "1 Mbit/s");
	TEST_ASSERT_SUCCESS(swv_qp_pace_stats(qp, &st), "");
	TEST_ASSERT_EQUAL(st.max_burst_sz, 3000, "two typical frames");
	TEST_ASSERT_SUCCESS(rate_limit(qp, 5000, 65536, 256), "");
	TEST_ASSERT_SUCCESS(swv_qp_pace_stats(qp, &st), "");
	TEST_ASSERT_EQUAL(st.rate_limit, 5000, "");
	TEST_ASSERT_EQUAL(st.max_burst_sz, 65536, "");
	TEST_ASSERT_EQUAL(st.typical_pkt_sz, 256, "");
	TEST_ASSERT_SUCCESS(rate_limit(qp, 0, 0, 0), "removed");
	TEST_ASSERT_SUCCESS(swv_qp_pace_stats(qp, &st), "");
	TEST_ASSERT_EQUAL(st.rate_limit, 0, "");
	/* a QP not in RTS; a reset removes the limit */
	TEST_ASSERT_SUCCESS(rate_limit(qp, 1000, 0, 0), "");
	TEST_ASSERT_SUCCESS(state_to(qp, IBV_QPS_ERR, IBV_QP_STATE, 0), "");
	TEST_ASSERT_EQUAL(rate_limit(qp, 1000, 0, 0), EINVAL, "ERR");
	TEST_ASSERT_SUCCESS(state_to(qp, IBV_QPS_RESET, IBV_QP_STATE, 0), "");
	TEST_ASSERT_SUCCESS(swv_qp_pace_stats(qp, &st), "");
	TEST_ASSERT_EQUAL(st.rate_limit, 0, "a reset removes the limit");
	TEST_ASSERT_EQUAL(rate_limit(qp, 1000, 0, 0), EINVAL, "RESET");
	TEST_ASSERT_SUCCESS(state_to(qp, IBV_QPS_INIT,
				     IBV_QP_STATE | IBV_QP_PORT, 0), "");
	TEST_ASSERT_EQUAL(rate_limit(qp, 1000, 0, 0), EINVAL, "INIT");
	TEST_ASSERT_EQUAL(state_to(qp, IBV_QPS_RTR, st_rl, 1000), EINVAL,
			  "IBV_QP_RATE_LIMIT on INIT -> RTR");
	TEST_ASSERT_SUCCESS(state_to(qp, IBV_QPS_RTR, IBV_QP_STATE, 0), "");
	TEST_ASSERT_EQUAL(rate_limit(qp, 1000, 0, 0), EINVAL, "RTR");
	/* ibv_modify_qp(IBV_QP_RATE_LIMIT): the caps, then the defaults */
	TEST_ASSERT_EQUAL(state_to(qp, IBV_QPS_RTS, st_rl, 100000001), EINVAL,
			  "RTR -> RTS above the caps");
	TEST_ASSERT_EQUAL(qp->state, IBV_QPS_RTR, "refused: no transition");
	TEST_ASSERT_SUCCESS(state_to(qp, IBV_QPS_RTS, st_rl, 20000),
			    "RTR -> RTS at 20 Mbit/s");
	TEST_ASSERT_SUCCESS(swv_qp_pace_stats(qp, &st), "");
	TEST_ASSERT_EQUAL(st.rate_limit, 20000, "");
	TEST_ASSERT_EQUAL(st.max_burst_sz, 3000, "default");
	TEST_ASSERT_EQUAL(st.typical_pkt_sz, 1500, "default");
	TEST_ASSERT_SUCCESS(state_to(qp, IBV_QPS_RTS, st_rl, 0),
			    "RTS -> RTS: removed");
	TEST_ASSERT_SUCCESS(swv_qp_pace_stats(qp, &st), "");
	TEST_ASSERT_EQUAL(st.rate_limit, 0, "");
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

static const struct unit_test_suite suite = {
	.name = "swverbs pacing",
	.cases = {
		TEST_CASE(test_caps),
		TEST_CASE(test_errnos),
		TEST_CASES_END(),
	},
};

int
main(void)
{
	return unit_test_suite_runner(&suite);
}
