/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * swverbs entry formats: 16-byte CQEs (a CQ that did not ask for
 * timestamps) and 16-byte WQEs (rings of one SGE at most) next to the full
 * ones. Every pairing of CQ format and ring format carries the same verbs
 * semantics: the 64 bits of wr_id, status, opcode, byte_len, qp_num and the
 * 24-bit flow tag through the ibv_cq_ex read functions and ibv_poll_cq();
 * unsignaled sends; error completions (no SGE, an SGE longer than its MR
 * that a compact slot cannot hold in place) and the flush that follows.
 * One device on a loop wire per engine kind: a thread, and inline.
 */

#include "swv_priv.h"
#include "swv_test_util.h"

#define T_TAG 0xfedcbau		/* 24 bits, the largest tags take */
#define T_BIG (1u << 30)	/* an SGE length a compact slot keeps aside */
#define T_FRAME 60u

static struct tdev d;
static struct ibv_mr *tmr, *rmr;
static uint8_t txbuf[2048];
static uint8_t rxbuf[16 * 2048];

/* wr_ids that use all 64 bits */
static uint64_t
t_wrid(unsigned int k)
{
	return 0x8badf00d00000000ull | (0x5a5a5a00u + k);
}

static struct ibv_cq_ex *
t_cq(uint64_t wc_flags)
{
	struct ibv_cq_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.cqe = 64;
	a.wc_flags = wc_flags;
	return swv_create_cq_ex(d.ctx, &a);
}

static struct ibv_qp *
t_qp(struct ibv_cq_ex *cq, uint32_t sge)
{
	struct ibv_qp_init_attr a;
	struct ibv_qp *qp;

	memset(&a, 0, sizeof(a));
	a.send_cq = ibv_cq_ex_to_cq(cq);
	a.recv_cq = ibv_cq_ex_to_cq(cq);
	a.qp_type = IBV_QPT_RAW_PACKET;
	a.cap.max_send_wr = 16;
	a.cap.max_recv_wr = 16;
	a.cap.max_send_sge = sge;
	a.cap.max_recv_sge = sge;
	qp = swv_create_qp(d.pd, &a);
	if (qp != NULL && t_qp_to(qp, IBV_QPS_RTS) != 0) {
		swv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

/* A rule for frames to the port's MAC: to qp, with flow tag T_TAG. */
static struct ibv_flow *
t_rule(struct ibv_qp *qp)
{
	return t_flow_eth_tag(qp, d.mac, T_TAG);
}

/* Post a receive of nsge SGEs (0, 1 or 2) over len bytes of slot k. */
static int
t_post_recv(struct ibv_qp *qp, unsigned int k, uint32_t nsge, uint32_t len)
{
	struct ibv_sge sge[2];
	struct ibv_recv_wr wr, *bad;

	sge[0].addr = (uintptr_t)&rxbuf[k * 2048];
	sge[0].lkey = rmr->lkey;
	sge[0].length = nsge == 2 ? 20 : len;
	sge[1].addr = sge[0].addr + 20;
	sge[1].lkey = rmr->lkey;
	sge[1].length = len - 20;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = t_wrid(k);
	wr.sg_list = sge;
	wr.num_sge = (int)nsge;
	return swv_post_recv(qp, &wr, &bad);
}

/* Post sends of T_FRAME bytes (len[i] overrides, nsge[i] SGEs) as a list. */
static int
t_post_send(struct ibv_qp *qp, unsigned int k0, unsigned int n,
	    const uint32_t *len, const uint32_t *nsge, const bool *sig)
{
	struct ibv_send_wr wr[4], *bad;
	struct ibv_sge sge[4][2];
	unsigned int i;

	for (i = 0; i < n; i++) {
		uint32_t l = len != NULL ? len[i] : T_FRAME;

		sge[i][0].addr = (uintptr_t)txbuf;
		sge[i][0].lkey = tmr->lkey;
		sge[i][0].length = nsge[i] == 2 ? 14 : l;
		sge[i][1].addr = (uintptr_t)txbuf + 14;
		sge[i][1].lkey = tmr->lkey;
		sge[i][1].length = l - 14;
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = t_wrid(k0 + i);
		wr[i].sg_list = sge[i];
		wr[i].num_sge = (int)nsge[i];
		wr[i].opcode = IBV_WR_SEND;
		wr[i].send_flags = sig[i] ? IBV_SEND_SIGNALED : 0;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	return swv_post_send(qp, wr, &bad);
}

struct t_wc {
	uint64_t wr_id;
	int status;
	int opcode;
	uint32_t len;
	uint32_t qpn;
	uint32_t tag;
	uint64_t ts;
};

/* Take up to n completions through the ibv_cq_ex interface (2 s). */
static int
t_poll_ex(struct ibv_cq_ex *cq, struct t_wc *wc, int n, bool ts)
{
	struct ibv_poll_cq_attr pa = { .comp_mask = 0 };
	uint64_t end = t_now_ms() + 2000;
	int got = 0, ret;

	while (got < n && t_now_ms() < end) {
		ret = ibv_start_poll(cq, &pa);
		if (ret == ENOENT) {
			usleep(50);
			continue;
		}
		if (ret != 0)
			return -1;
		do {
			wc[got].wr_id = cq->wr_id;
			wc[got].status = cq->status;
			wc[got].opcode = ibv_wc_read_opcode(cq);
			wc[got].len = ibv_wc_read_byte_len(cq);
			wc[got].qpn = ibv_wc_read_qp_num(cq);
			wc[got].tag = ibv_wc_read_flow_tag(cq);
			wc[got].ts = ts ? ibv_wc_read_completion_ts(cq) : 0;
			got++;
		} while (got < n && ibv_next_poll(cq) == 0);
		ibv_end_poll(cq);
	}
	return got;
}

/* The same through ibv_poll_cq() (no flow tag there). */
static int
t_poll_wc(struct ibv_cq_ex *cq, struct t_wc *out, int n)
{
	struct ibv_wc wc[8];
	int got, i;

	got = t_poll(ibv_cq_ex_to_cq(cq), wc, n, 2000);
	for (i = 0; i < got; i++) {
		out[i].wr_id = wc[i].wr_id;
		out[i].status = wc[i].status;
		out[i].opcode = wc[i].opcode;
		out[i].len = wc[i].byte_len;
		out[i].qpn = wc[i].qp_num;
		out[i].tag = 0;
		out[i].ts = 0;
	}
	return got;
}

static int
t_expect(const struct t_wc *w, uint64_t wr_id, int status, int opcode,
	 uint32_t len, uint32_t qpn, uint32_t tag, const char *what)
{
	TEST_ASSERT_EQUAL(w->wr_id, wr_id, "%s: wr_id", what);
	TEST_ASSERT_EQUAL(w->status, status, "%s: status", what);
	TEST_ASSERT_EQUAL(w->opcode, opcode, "%s: opcode", what);
	TEST_ASSERT_EQUAL(w->len, len, "%s: byte_len", what);
	TEST_ASSERT_EQUAL(w->qpn, qpn, "%s: qp_num", what);
	TEST_ASSERT_EQUAL(w->tag, tag, "%s: flow tag", what);
	return TEST_SUCCESS;
}

#define T_EXPECT(...) do { \
	if (t_expect(__VA_ARGS__) != TEST_SUCCESS) \
		return TEST_FAILED; \
} while (0)

/*
 * One CQ format (ts: full CQEs) and one ring format (sge 1: compact): good
 * traffic, then the error completions.
 */
static int
t_formats(bool ts, uint32_t sge)
{
	static const bool sig2[2] = { false, true };
	static const bool sig_yes[2] = { true, false };
	const uint32_t nsge[2] = { sge, sge };
	const uint32_t nosge[1] = { 0 };
	uint64_t flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM |
			 IBV_WC_EX_WITH_FLOW_TAG;
	uint32_t big[2] = { T_BIG, T_FRAME };
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp, *qp2;
	struct ibv_flow *fl;
	struct t_wc wc[8];
	uint32_t qpn;
	bool ok;
	int i, got;

	if (ts)
		flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	cq = t_cq(flags);
	TEST_ASSERT_NOT_NULL(cq, "cq: %d", errno);
	qp = t_qp(cq, sge);
	qp2 = t_qp(cq, sge);
	TEST_ASSERT(qp != NULL && qp2 != NULL, "qp: %d", errno);
	qpn = qp->qp_num;
	/* The formats: full CQEs only for timestamps, compact one-SGE rings. */
	TEST_ASSERT_EQUAL(to_swv_cq_ex(cq)->compact, !ts, "CQ format");
	TEST_ASSERT_EQUAL((size_t)1 << to_swv_cq_ex(cq)->shift,
			  ts ? sizeof(struct swv_cqe) :
			  sizeof(struct swv_cqe16), "CQE size");
	TEST_ASSERT_EQUAL(to_swv_qp(qp)->sq.compact, sge == 1, "SQ format");
	TEST_ASSERT_EQUAL(to_swv_qp(qp)->rq.ring.compact, sge == 1,
			  "RQ format");
	if (sge == 1)
		TEST_ASSERT_EQUAL(to_swv_qp(qp)->rq.ring.stride, 16, "slot");
	fl = t_rule(qp);
	TEST_ASSERT_NOT_NULL(fl, "rule: %d", errno);
	memset(txbuf, 0x33, sizeof(txbuf));
	memcpy(txbuf, d.mac, 6);

	/* An unsignaled send and a signaled one; two receives. */
	for (i = 0; i < 2; i++)
		TEST_ASSERT_SUCCESS(t_post_recv(qp, (unsigned int)i, sge, 2048),
				    "recv");
	TEST_ASSERT_SUCCESS(t_post_send(qp, 10, 2, NULL, nsge, sig2), "send");
	got = t_poll_ex(cq, wc, 3, ts);
	TEST_ASSERT_EQUAL(got, 3, "completions");
	/* The receives complete inside the send drain, before the send. */
	T_EXPECT(&wc[0], t_wrid(0), IBV_WC_SUCCESS, IBV_WC_RECV, T_FRAME, qpn,
		 T_TAG, "recv 0");
	T_EXPECT(&wc[1], t_wrid(1), IBV_WC_SUCCESS, IBV_WC_RECV, T_FRAME, qpn,
		 T_TAG, "recv 1");
	T_EXPECT(&wc[2], t_wrid(11), IBV_WC_SUCCESS, IBV_WC_SEND, T_FRAME,
		 qpn, 0, "signaled send");
	if (ts)
		TEST_ASSERT(wc[0].ts != 0 && wc[2].ts != 0, "timestamps");
	TEST_ASSERT(memcmp(rxbuf, txbuf, T_FRAME) == 0, "bytes");
	/* Written before the signaled one's, if it were. */
	{
		struct ibv_poll_cq_attr pa = { .comp_mask = 0 };

		TEST_ASSERT_EQUAL(ibv_start_poll(cq, &pa), ENOENT,
				  "the unsignaled send has no CQE");
	}

	/* The same through ibv_poll_cq(); a receive with no SGE. */
	TEST_ASSERT_SUCCESS(t_post_recv(qp, 2, 0, 0), "recv, no SGE");
	TEST_ASSERT_SUCCESS(t_post_recv(qp, 3, sge, 2048), "recv");
	TEST_ASSERT_SUCCESS(t_post_send(qp, 12, 2, NULL, nsge, sig_yes),
			    "send");
	got = t_poll_wc(cq, wc, 3);
	TEST_ASSERT_EQUAL(got, 3, "completions");
	T_EXPECT(&wc[0], t_wrid(2), IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, qpn,
		 0, "recv with no SGE");
	T_EXPECT(&wc[1], t_wrid(3), IBV_WC_SUCCESS, IBV_WC_RECV, T_FRAME, qpn,
		 0, "recv");
	T_EXPECT(&wc[2], t_wrid(12), IBV_WC_SUCCESS, IBV_WC_SEND, T_FRAME,
		 qpn, 0, "send");

	/*
	 * A receive SGE of 1 GiB over a 32 KiB MR: a protection error (its
	 * length counts whole), the QP goes to ERR, the receive behind it is
	 * flushed.
	 */
	{
		struct ibv_sge s = {
			.addr = (uintptr_t)rxbuf, .length = T_BIG,
			.lkey = rmr->lkey,
		};
		struct ibv_recv_wr wr = {
			.wr_id = t_wrid(4), .sg_list = &s, .num_sge = 1,
		}, *bad;

		TEST_ASSERT_SUCCESS(swv_post_recv(qp, &wr, &bad), "big recv");
	}
	TEST_ASSERT_SUCCESS(t_post_recv(qp, 5, sge, 2048), "recv");
	TEST_ASSERT_SUCCESS(t_post_send(qp, 14, 1, NULL, nsge, sig_yes),
			    "send");
	got = t_poll_ex(cq, wc, 3, ts);
	TEST_ASSERT_EQUAL(got, 3, "completions");
	ok = false;
	for (i = 0; i < got; i++) {
		if (wc[i].wr_id == t_wrid(4)) {
			T_EXPECT(&wc[i], t_wrid(4), IBV_WC_LOC_PROT_ERR,
				 IBV_WC_RECV, 0, qpn, 0, "1 GiB recv SGE");
			ok = true;
		} else if (wc[i].wr_id == t_wrid(5)) {
			T_EXPECT(&wc[i], t_wrid(5), IBV_WC_WR_FLUSH_ERR,
				 IBV_WC_RECV, 0, qpn, 0, "flushed recv");
		} else {
			T_EXPECT(&wc[i], t_wrid(14), IBV_WC_SUCCESS,
				 IBV_WC_SEND, T_FRAME, qpn, 0, "send");
		}
	}
	TEST_ASSERT(ok, "no protection error");

	/*
	 * On qp2 (no rule: its frames are not received): a send SGE of 1 GiB
	 * over a 2 KiB MR is a protection error, the unsignaled send behind
	 * it is flushed; then a send with no SGE on a fresh QP.
	 */
	TEST_ASSERT_SUCCESS(t_post_send(qp2, 20, 2, big, nsge, sig_yes),
			    "send");
	got = t_poll_wc(cq, wc, 2);
	TEST_ASSERT_EQUAL(got, 2, "completions");
	T_EXPECT(&wc[0], t_wrid(20), IBV_WC_LOC_PROT_ERR, IBV_WC_SEND, 0,
		 qp2->qp_num, 0, "1 GiB send SGE");
	T_EXPECT(&wc[1], t_wrid(21), IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND, 0,
		 qp2->qp_num, 0, "flushed send");
	TEST_ASSERT_SUCCESS(swv_destroy_qp(qp2), "");
	qp2 = t_qp(cq, sge);
	TEST_ASSERT_NOT_NULL(qp2, "qp: %d", errno);
	/* The mlx5 profile refuses it at the post, as mlx5's provider. */
	TEST_ASSERT_EQUAL(t_post_send(qp2, 22, 1, NULL, nosge, sig_yes),
			  EINVAL, "send, no SGE");
	{
		/* Refused before the device saw it: nothing can come. */
		struct ibv_poll_cq_attr pa = { .comp_mask = 0 };

		TEST_ASSERT_EQUAL(ibv_start_poll(cq, &pa), ENOENT,
				  "a refused send completes nothing");
	}

	TEST_ASSERT_SUCCESS(swv_destroy_flow(fl), "");
	TEST_ASSERT_SUCCESS(swv_destroy_qp(qp), "");
	TEST_ASSERT_SUCCESS(swv_destroy_qp(qp2), "");
	TEST_ASSERT_SUCCESS(swv_destroy_cq(ibv_cq_ex_to_cq(cq)), "");
	return TEST_SUCCESS;
}

static int
t_all_formats(void)
{
	bool ts;
	uint32_t sge;

	for (ts = false; ; ts = true) {
		for (sge = 1; sge <= 2; sge++) {
			printf("  CQEs %s, %s WQEs\n", ts ? "full" : "compact",
			       sge == 1 ? "compact" : "full");
			if (t_formats(ts, sge) != TEST_SUCCESS)
				return TEST_FAILED;
		}
		if (ts)
			break;
	}
	return TEST_SUCCESS;
}

/*
 * A legacy CQ (ibv_create_cq) has compact CQEs: qp_num and all. An
 * ibv_poll_cq() that finds nothing publishes no tail (the line stays).
 */
static int
t_legacy_cq(void)
{
	struct swv_cq *cq = to_swv_cq(d.rcq);
	struct ibv_wc wc;
	uint64_t npub = cq->npub;

	TEST_ASSERT_EQUAL(to_swv_cq(d.scq)->compact, 1, "legacy CQ format");
	TEST_ASSERT_EQUAL(cq->compact, 1, "legacy CQ format");
	TEST_ASSERT_EQUAL(ibv_poll_cq(d.rcq, 1, &wc), 0, "empty");
	TEST_ASSERT_EQUAL(cq->npub, npub, "an empty poll published a tail");
	return TEST_SUCCESS;
}

static int
t_run(struct swv_engine *eng, const char *name)
{
	struct swv_device_attr attr = {
		.flags = SWV_DEVICE_PROFILE_MLX5, .engine = eng,
	};
	int ret;

	TEST_ASSERT_SUCCESS(t_setup_attr(&d, name, "loop", &attr), "device");
	tmr = swv_reg_mr(d.pd, txbuf, sizeof(txbuf), 0);
	rmr = swv_reg_mr(d.pd, rxbuf, sizeof(rxbuf), IBV_ACCESS_LOCAL_WRITE);
	ret = tmr != NULL && rmr != NULL ? t_legacy_cq() : TEST_FAILED;
	if (ret == TEST_SUCCESS)
		ret = t_all_formats();
	if (tmr != NULL)
		swv_dereg_mr(tmr);
	if (rmr != NULL)
		swv_dereg_mr(rmr);
	t_teardown(&d);
	return ret;
}

static int
test_entries_thread(void)
{
	return t_run(NULL, "ent_thr");
}

static int
test_entries_inline(void)
{
	return t_run(swv_engine_inline(), "ent_inl");
}

/*
 * The compact info word: a failed receive reads back as failed, with its
 * status and no tag, whatever length its error path passed; a successful
 * one with its length and tag.
 */
static int
test_info_word(void)
{
	uint64_t w;

	w = swv_cqi_pack(IBV_WC_LOC_LEN_ERR, true, 100, 0x123, T_TAG);
	TEST_ASSERT_EQUAL(swv_cqi_status(w), IBV_WC_LOC_LEN_ERR, "status");
	TEST_ASSERT_EQUAL(swv_cqi_tag(w), 0, "no tag on a failure");
	TEST_ASSERT_EQUAL(swv_cqi_len(w), 0, "no length on a failure");
	TEST_ASSERT_EQUAL(swv_cqi_opcode(w), IBV_WC_RECV, "opcode");
	w = swv_cqi_pack(IBV_WC_SUCCESS, true, SWV_MAX_FRAME, 0xffffff, T_TAG);
	TEST_ASSERT_EQUAL(swv_cqi_status(w), IBV_WC_SUCCESS, "status");
	TEST_ASSERT_EQUAL(swv_cqi_tag(w), T_TAG, "tag");
	TEST_ASSERT_EQUAL(swv_cqi_len(w), SWV_MAX_FRAME, "length");
	w = swv_cqi_pack(IBV_WC_WR_FLUSH_ERR, false, 60, 0x124, 0);
	TEST_ASSERT_EQUAL(swv_cqi_status(w), IBV_WC_WR_FLUSH_ERR, "send");
	TEST_ASSERT_EQUAL(swv_cqi_opcode(w), IBV_WC_SEND, "send opcode");
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite = {
	.name = "swverbs entry formats",
	.cases = {
		TEST_CASE(test_info_word),
		TEST_CASE(test_entries_thread),
		TEST_CASE(test_entries_inline),
		TEST_CASES_END(),
	},
};

int
main(void)
{
	return unit_test_suite_runner(&suite);
}
