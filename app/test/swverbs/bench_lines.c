/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Cache lines per packet between the application and the device (the
 * swverbs engine): two ports on a pair cable, queues as the vbr PMD makes
 * them (one SGE per WQE, a send signaled every 32, Rx CQ with byte_len and
 * flow tag, Tx CQ with nothing extra), bursts of 32 sent by port A and
 * received by port B, receives posted again per burst.
 *
 * A line counts when one side writes it and the other reads it:
 *   entries   WQE slots (posted by the application, read by the device),
 *             the wr_id side array of compact rings (read only for the
 *             WQEs that complete: every receive, signaled sends), CQEs
 *             (written by the device, read by the application);
 *   indices   each publication of a ring head, ring tail, CQ head or CQ
 *             tail, counted by swverbs (the npub/epub counters); an upper
 *             bound, as a reader looks at the other side's index only when
 *             its own copy says empty or full.
 * The same counts priced with the entries of 8d93f69 (32-byte WQEs with
 * the wr_id inside, 32-byte CQEs) give the figure before the compact
 * formats. With the inline engine nothing crosses cores (one thread is
 * application and device): the figures then say what the one core touches.
 *
 * usage: bench_swverbs_lines [packets (1000000)] [thread|inline|both]
 * Not a test: prints figures, no pass/fail.
 */

#include <stdio.h>

#include "swv_priv.h"
#include "swv_test_util.h"

#define B_DEPTH 512
#define B_BURST 32
#define B_SIGNAL 32
#define B_FRAME 64
#define B_OLD_WQE 32.0	/* 8d93f69: header + one SGE */
#define B_OLD_CQE 32.0

struct bport {
	char name[SWV_NAME_MAX];
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
};

static int
b_port(struct bport *p, const char *name, const char *wire,
       struct swv_engine *eng, bool rx)
{
	struct swv_device_attr attr = {
		.flags = SWV_DEVICE_PROFILE_MLX5, .engine = eng,
	};
	struct ibv_cq_init_attr_ex ca;
	struct ibv_qp_init_attr qa;
	size_t len = (size_t)B_DEPTH * 2048;

	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	if (swv_device_create_attr(name, wire, NULL, &attr) != 0)
		return -1;
	p->ctx = t_open(name);
	if (p->ctx == NULL)
		return -1;
	p->pd = swv_alloc_pd(p->ctx);
	p->buf = calloc(1, len);
	if (p->pd == NULL || p->buf == NULL)
		return -1;
	p->mr = swv_reg_mr(p->pd, p->buf, len, IBV_ACCESS_LOCAL_WRITE);
	memset(&ca, 0, sizeof(ca));
	ca.cqe = B_DEPTH;
	ca.wc_flags = rx ? IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_FLOW_TAG :
		      0;
	p->cq = swv_create_cq_ex(p->ctx, &ca);
	if (p->mr == NULL || p->cq == NULL)
		return -1;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = ibv_cq_ex_to_cq(p->cq);
	qa.recv_cq = ibv_cq_ex_to_cq(p->cq);
	qa.qp_type = IBV_QPT_RAW_PACKET;
	qa.cap.max_send_wr = rx ? 1 : B_DEPTH;
	qa.cap.max_recv_wr = rx ? B_DEPTH : 0;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	p->qp = swv_create_qp(p->pd, &qa);
	if (p->qp == NULL)
		return -1;
	return t_qp_to(p->qp, rx ? IBV_QPS_RTR : IBV_QPS_RTS);
}

static void
b_close(struct bport *p)
{
	if (p->qp != NULL)
		swv_destroy_qp(p->qp);
	if (p->cq != NULL)
		swv_destroy_cq(ibv_cq_ex_to_cq(p->cq));
	if (p->mr != NULL)
		swv_dereg_mr(p->mr);
	if (p->pd != NULL)
		swv_dealloc_pd(p->pd);
	if (p->ctx != NULL)
		swv_close_device(p->ctx);
	swv_device_destroy(p->name);
	free(p->buf);
}

/* Post receives for slots [first, first + n) of the ring of buffers. */
static int
b_recv(struct bport *p, uint32_t first, uint32_t n)
{
	struct ibv_recv_wr wr[B_DEPTH], *bad;
	struct ibv_sge sge[B_DEPTH];
	uint32_t i, s;

	for (i = 0; i < n; i++) {
		s = (first + i) % B_DEPTH;
		sge[i].addr = (uintptr_t)p->buf + (size_t)s * 2048;
		sge[i].length = 2048;
		sge[i].lkey = p->mr->lkey;
		wr[i].wr_id = s;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	return n == 0 ? 0 : swv_post_recv(p->qp, wr, &bad);
}

struct bcount {
	uint64_t pkts, sent, signaled, tx_cqes, rx_cqes;
};

static int
b_run(struct bport *a, struct bport *b, uint64_t total, struct bcount *c)
{
	struct ibv_poll_cq_attr pa = { .comp_mask = 0 };
	struct ibv_send_wr wr[B_BURST], *bad;
	struct ibv_sge sge[B_BURST];
	uint64_t head = 0, tail = 0, end = t_now_ms() + 60000;
	uint32_t i, n, got;

	memset(c, 0, sizeof(*c));
	memset(a->buf, 0x5a, B_FRAME);
	swv_query_port_mac(b->ctx, a->buf);	/* to port B's MAC */
	if (b_recv(b, 0, B_DEPTH) != 0)
		return -1;
	while (c->pkts < total) {
		if (t_now_ms() > end) {
			fprintf(stderr, "stuck at %" PRIu64 " packets\n",
				c->pkts);
			return -1;
		}
		/* Port A: completions free slots, then a burst. */
		if (ibv_start_poll(a->cq, &pa) == 0) {
			do {
				if (a->cq->status != IBV_WC_SUCCESS)
					return -1;
				tail = a->cq->wr_id + 1;
				c->tx_cqes++;
			} while (ibv_next_poll(a->cq) == 0);
			ibv_end_poll(a->cq);
		}
		/* Room in A's send queue and B's posted receives. */
		n = B_DEPTH - (uint32_t)(head - tail);
		if (B_DEPTH - (uint32_t)(c->sent - c->pkts) < n)
			n = B_DEPTH - (uint32_t)(c->sent - c->pkts);
		n = n < B_BURST ? n : B_BURST;
		for (i = 0; i < n && c->sent < total; i++) {
			sge[i].addr = (uintptr_t)a->buf;
			sge[i].length = B_FRAME;
			sge[i].lkey = a->mr->lkey;
			memset(&wr[i], 0, sizeof(wr[i]));
			wr[i].wr_id = head;
			wr[i].sg_list = &sge[i];
			wr[i].num_sge = 1;
			wr[i].opcode = IBV_WR_SEND;
			if (++head % B_SIGNAL == 0 || c->sent + 1 == total) {
				wr[i].send_flags = IBV_SEND_SIGNALED;
				c->signaled++;
			}
			wr[i].next = &wr[i + 1];
			c->sent++;
		}
		if (i > 0) {
			wr[i - 1].next = NULL;
			if (swv_post_send(a->qp, wr, &bad) != 0)
				return -1;
		}
		/* Port B: a burst of receives, posted again as one list. */
		got = 0;
		if (ibv_start_poll(b->cq, &pa) == 0) {
			uint32_t first = (uint32_t)b->cq->wr_id;

			do {
				if (b->cq->status != IBV_WC_SUCCESS)
					return -1;
				got++;
			} while (got < B_BURST && ibv_next_poll(b->cq) == 0);
			ibv_end_poll(b->cq);
			c->rx_cqes += got;
			c->pkts += got;
			if (b_recv(b, first, got) != 0)
				return -1;
		}
	}
	return 0;
}

static void
b_report(const char *model, struct bport *a, struct bport *b,
	 const struct bcount *c)
{
	const struct swv_wq_ring *sq = &to_swv_qp(a->qp)->sq;
	const struct swv_wq_ring *rq = &to_swv_qp(b->qp)->rq.ring;
	const struct swv_cq *scq = to_swv_cq_ex(a->cq);
	const struct swv_cq *rcq = to_swv_cq_ex(b->cq);
	double p = (double)c->pkts, sl = SWV_CACHE_LINE;
	double wqe_tx = sq->stride, wqe_rx = rq->stride;
	double cqe_tx = 1u << scq->shift, cqe_rx = 1u << rcq->shift;
	double e_new, e_old, idx, wrid;
	uint64_t pubs;

	/*
	 * wr_id side arrays: every receive's is read (contiguous, 8 a line);
	 * a signaled send's is read alone (1 in B_SIGNAL: a line each).
	 */
	wrid = (rq->compact ? c->rx_cqes * 8.0 / sl : 0) +
	       (sq->compact ? (double)c->tx_cqes : 0);
	e_new = (c->sent * wqe_tx + c->rx_cqes * wqe_rx +
		 c->tx_cqes * cqe_tx + c->rx_cqes * cqe_rx) / sl + wrid;
	e_old = (c->sent * B_OLD_WQE + c->rx_cqes * B_OLD_WQE +
		 c->tx_cqes * B_OLD_CQE + c->rx_cqes * B_OLD_CQE) / sl;
	pubs = sq->npub + sq->epub + rq->npub + rq->epub + scq->npub +
	       scq->epub + rcq->npub + rcq->epub;
	idx = (double)pubs;
	printf("%s: %" PRIu64 " packets of %u B, bursts of %u, a send in %u "
	       "signaled\n", model, c->pkts, B_FRAME, B_BURST, B_SIGNAL);
	printf("  entries: Tx WQE %.0f B, Rx WQE %.0f B (wr_id aside: %s), "
	       "Tx CQE %.0f B, Rx CQE %.0f B\n", wqe_tx, wqe_rx,
	       rq->compact ? "yes" : "no", cqe_tx, cqe_rx);
	printf("  publications per packet: SQ head %.3f tail %.3f, RQ head "
	       "%.3f tail %.3f, Tx CQ head %.3f tail %.3f, Rx CQ head %.3f "
	       "tail %.3f\n", sq->npub / p, sq->epub / p, rq->npub / p,
	       rq->epub / p, scq->epub / p, scq->npub / p, rcq->epub / p,
	       rcq->npub / p);
	printf("  lines/packet  %-12s entries %.3f  indices <= %.3f  total "
	       "<= %.3f\n", "this build", e_new / p, idx / p,
	       (e_new + idx) / p);
	printf("  lines/packet  %-12s entries %.3f  indices <= %.3f  total "
	       "<= %.3f\n", "8d93f69", e_old / p, idx / p, (e_old + idx) / p);
	printf("  ratio this build / 8d93f69: %.2fx\n",
	       (e_new + idx) / (e_old + idx));
	fflush(stdout);
}

static int
b_model(const char *model, struct swv_engine *eng, uint64_t total)
{
	struct ibv_flow *fl = NULL;
	struct bport a, b;
	struct bcount c;
	char wire[64], na[32], nb[32];
	int ret = -1;

	snprintf(wire, sizeof(wire), "pair:bl%d%s", (int)getpid(), model);
	snprintf(na, sizeof(na), "bl%d%sa", (int)getpid(), model);
	snprintf(nb, sizeof(nb), "bl%d%sb", (int)getpid(), model);
	if (b_port(&a, na, wire, eng, false) == 0 &&
	    b_port(&b, nb, wire, eng, true) == 0 &&
	    (fl = t_flow_default(b.qp, IBV_FLOW_ATTR_ALL_DEFAULT, 0)) != NULL &&
	    b_run(&a, &b, total, &c) == 0) {
		b_report(model, &a, &b, &c);
		ret = 0;
	} else {
		fprintf(stderr, "%s: setup or run failed: %s\n", model,
			strerror(errno));
	}
	if (fl != NULL)
		swv_destroy_flow(fl);
	b_close(&b);
	b_close(&a);
	return ret;
}

int
main(int argc, char **argv)
{
	uint64_t total = argc > 1 ? strtoull(argv[1], NULL, 0) : 1000000;
	const char *which = argc > 2 ? argv[2] : "both";
	int ret = 0;

	if (total == 0) {
		fprintf(stderr, "usage: %s [packets] [thread|inline|both]\n",
			argv[0]);
		return 2;
	}
	if (strcmp(which, "inline") != 0)
		ret |= b_model("thread", NULL, total);
	if (strcmp(which, "thread") != 0)
		ret |= b_model("inline", swv_engine_inline(), total);
	return ret == 0 ? 0 : 1;
}
