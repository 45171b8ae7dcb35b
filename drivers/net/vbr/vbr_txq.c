/* SPDX-License-Identifier: BSD-3-Clause */

/* Tx queues: a RAW_PACKET QP (send side only) and its CQ each. */

#include <errno.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "vbr.h"
#include "vbr_utils.h"

/** Most segments a multi-segment packet may have. */
#define VBR_TX_MAX_SEGS 32

/* Free every mbuf still in the ring and forget all WQEs. */
static void
vbr_txq_flush(struct vbr_txq *txq)
{
	struct ibv_poll_cq_attr attr = { .comp_mask = 0 };
	uint32_t i;

	if (ibv_start_poll(txq->cq, &attr) == 0) {
		while (ibv_next_poll(txq->cq) == 0)
			;
		ibv_end_poll(txq->cq);
	}
	for (i = 0; i <= txq->mask; i++) {
		if (txq->elts[i] != NULL) {
			rte_pktmbuf_free(txq->elts[i]);
			txq->elts[i] = NULL;
		}
	}
	txq->head = 0;
	txq->tail = 0;
	txq->since_signal = 0;
}

static void
vbr_txq_free(struct vbr_txq *txq)
{
	const struct vbr_glue *glue = txq->priv->glue;
	int ret;

	if (txq->qp != NULL) {
		ret = glue->destroy_qp(txq->qp);
		if (ret != 0)
			VBR_LOG(ERR, "port %u txq %u: destroy_qp: %s",
				txq->port_id, txq->queue_id, strerror(ret));
	}
	if (txq->cq != NULL) {
		if (txq->elts != NULL)
			vbr_txq_flush(txq);
		ret = glue->destroy_cq(ibv_cq_ex_to_cq(txq->cq));
		if (ret != 0)
			VBR_LOG(ERR, "port %u txq %u: destroy_cq: %s",
				txq->port_id, txq->queue_id, strerror(ret));
	}
	rte_free(txq->elts);
	rte_free(txq->wrs);
	rte_free(txq->sges);
	rte_free(txq);
}

void
vbr_tx_queue_release(struct rte_eth_dev *dev, uint16_t idx)
{
	struct vbr_txq *txq = dev->data->tx_queues[idx];

	if (txq == NULL)
		return;
	vbr_txq_free(txq);
	dev->data->tx_queues[idx] = NULL;
}

int
vbr_tx_queue_setup(struct rte_eth_dev *dev, uint16_t idx, uint16_t desc,
		   unsigned int socket, const struct rte_eth_txconf *conf)
{
	struct vbr_priv *priv = dev->data->dev_private;
	uint64_t offloads = conf->offloads | dev->data->dev_conf.txmode.offloads;
	struct ibv_cq_init_attr_ex cq_attr = { .cqe = desc };
	struct ibv_qp_init_attr_ex qp_attr = { 0 };
	struct vbr_txq *txq;
	int ret;

	if (priv->started) {
		VBR_LOG(ERR, "port %u: stop the port to set txq %u up",
			dev->data->port_id, idx);
		return -EBUSY;
	}
	vbr_tx_queue_release(dev, idx);
	txq = rte_zmalloc_socket("vbr_txq", sizeof(*txq), RTE_CACHE_LINE_SIZE,
				 socket);
	if (txq == NULL)
		return -ENOMEM;
	txq->priv = priv;
	txq->desc = desc;
	/* Slots by index & mask; at most desc of them in use. */
	txq->mask = rte_align32pow2(desc) - 1;
	txq->max_sge = 1;
	if (offloads & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)
		txq->max_sge = RTE_MIN(VBR_TX_MAX_SEGS,
				       priv->attr.orig_attr.max_sge);
	txq->signal_interval = RTE_MIN(VBR_TX_SIGNAL_INTERVAL,
				       RTE_MAX(desc / 4, 1));
	txq->port_id = dev->data->port_id;
	txq->queue_id = idx;
	txq->elts = rte_calloc_socket("vbr_txq_elts", txq->mask + 1,
				      sizeof(*txq->elts), 0, socket);
	txq->wrs = rte_calloc_socket("vbr_txq_wrs", txq->mask + 1,
				     sizeof(*txq->wrs), 0, socket);
	txq->sges = rte_calloc_socket("vbr_txq_sges",
				      (size_t)(txq->mask + 1) * txq->max_sge,
				      sizeof(*txq->sges), 0, socket);
	if (txq->elts == NULL || txq->wrs == NULL || txq->sges == NULL) {
		ret = -ENOMEM;
		goto error;
	}
	txq->cq = priv->glue->create_cq_ex(priv->ctx, &cq_attr);
	if (txq->cq == NULL) {
		ret = -errno;
		VBR_LOG(ERR, "port %u txq %u: create_cq_ex: %s",
			txq->port_id, idx, strerror(errno));
		goto error;
	}
	qp_attr.qp_type = IBV_QPT_RAW_PACKET;
	qp_attr.send_cq = ibv_cq_ex_to_cq(txq->cq);
	qp_attr.recv_cq = ibv_cq_ex_to_cq(txq->cq);
	qp_attr.cap.max_send_wr = desc;
	qp_attr.cap.max_send_sge = txq->max_sge;
	qp_attr.sq_sig_all = 0;
	qp_attr.comp_mask = IBV_QP_INIT_ATTR_PD;
	qp_attr.pd = priv->pd;
	txq->qp = priv->glue->create_qp_ex(priv->ctx, &qp_attr);
	if (txq->qp == NULL) {
		ret = -errno;
		VBR_LOG(ERR, "port %u txq %u: create RAW_PACKET QP (%u WRs, "
			"%u SGEs): %s", txq->port_id, idx, desc, txq->max_sge,
			strerror(errno));
		goto error;
	}
	dev->data->tx_queues[idx] = txq;
	return 0;
error:
	vbr_txq_free(txq);
	return ret;
}

/** RESET -> INIT -> RTR -> RTS. */
int
vbr_txq_start(struct vbr_txq *txq)
{
	const struct vbr_glue *glue = txq->priv->glue;
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT,
				    .port_num = VBR_PORT_NUM };
	int ret;

	ret = glue->modify_qp(txq->qp, &attr, IBV_QP_STATE | IBV_QP_PORT);
	if (ret == 0) {
		attr = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
		ret = glue->modify_qp(txq->qp, &attr, IBV_QP_STATE);
	}
	if (ret == 0) {
		attr = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS };
		ret = glue->modify_qp(txq->qp, &attr, IBV_QP_STATE);
	}
	if (ret != 0) {
		VBR_LOG(ERR, "port %u txq %u: modify_qp to RTS: %s",
			txq->port_id, txq->queue_id, strerror(ret));
		vbr_txq_stop(txq);
		return -ret;
	}
	return 0;
}

/** Back to RESET; the ring's mbufs are freed. */
void
vbr_txq_stop(struct vbr_txq *txq)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RESET };
	int ret;

	vbr_txq_complete(txq);
	ret = txq->priv->glue->modify_qp(txq->qp, &attr, IBV_QP_STATE);
	if (ret != 0)
		VBR_LOG(ERR, "port %u txq %u: modify_qp to RESET: %s",
			txq->port_id, txq->queue_id, strerror(ret));
	vbr_txq_flush(txq);
}
