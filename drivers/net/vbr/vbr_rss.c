/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Hash QPs that flow rules point at: an indirection table over the WQs of
 * some Rx queues and a RAW_PACKET QP hashing with a Toeplitz key over some
 * fields. One object per distinct (queues, key, fields), shared by every rule
 * that asks for it and destroyed with its last rule. A queue list of any
 * length is spread over a table of the next power of two entries, filled
 * round-robin: with 3 queues, entries 0-3 are queues q0 q1 q2 q0.
 */

#include <errno.h>
#include <string.h>

#include <rte_malloc.h>

#include "vbr.h"
#include "vbr_utils.h"

/** A shared hash QP. */
struct vbr_rss {
	LIST_ENTRY(vbr_rss) next;	/**< in vbr_priv.rss_objs */
	uint32_t refcnt;		/**< rules using it */
	uint64_t fields;		/**< IBV_RX_HASH_* */
	uint8_t key[VBR_RSS_KEY_LEN];	/**< Toeplitz key */
	struct ibv_rwq_ind_table *ind_table; /**< WQs of the queues */
	struct ibv_qp *qp;		/**< the hash QP */
	uint16_t nb_queues;		/**< entries of queues */
	uint16_t queues[];		/**< queue list as given */
};

static void
vbr_rss_free(struct vbr_priv *priv, struct vbr_rss *rss)
{
	int ret;

	if (rss->qp != NULL) {
		ret = priv->glue->destroy_qp(rss->qp);
		if (ret != 0)
			VBR_LOG(ERR, "port %u: destroy hash QP: %s",
				priv->dev->data->port_id, strerror(ret));
	}
	if (rss->ind_table != NULL) {
		ret = priv->glue->destroy_rwq_ind_table(rss->ind_table);
		if (ret != 0)
			VBR_LOG(ERR, "port %u: destroy indirection table: %s",
				priv->dev->data->port_id, strerror(ret));
	}
	rte_free(rss);
}

static struct vbr_rss *
vbr_rss_create(struct vbr_priv *priv, const uint16_t *queues,
	       uint16_t nb_queues, const uint8_t *key, uint64_t fields)
{
	struct rte_eth_dev *dev = priv->dev;
	struct ibv_rwq_ind_table_init_attr ind_attr = { 0 };
	struct ibv_qp_init_attr_ex qp_attr = { 0 };
	uint32_t max = priv->attr.rss_caps.max_rwq_indirection_table_size;
	struct ibv_wq **wqs = NULL;
	struct vbr_rss *rss;
	unsigned int log = 0, i;
	int err;

	while ((1u << log) < nb_queues)
		log++;
	if (max != 0 && (1u << log) > max) {
		VBR_LOG(ERR, "port %u: %u queues need an indirection table of "
			"%u entries: the device has at most %u",
			dev->data->port_id, nb_queues, 1u << log, max);
		errno = ENOTSUP;
		return NULL;
	}
	rss = rte_zmalloc("vbr_rss", sizeof(*rss) +
			  nb_queues * sizeof(rss->queues[0]), 0);
	wqs = rte_calloc("vbr_rss_wqs", 1u << log, sizeof(*wqs), 0);
	if (rss == NULL || wqs == NULL) {
		err = ENOMEM;
		goto error;
	}
	rss->refcnt = 1;
	rss->fields = fields;
	memcpy(rss->key, key, VBR_RSS_KEY_LEN);
	rss->nb_queues = nb_queues;
	memcpy(rss->queues, queues, nb_queues * sizeof(rss->queues[0]));
	for (i = 0; i < (1u << log); i++) {
		uint16_t q = queues[i % nb_queues];
		struct vbr_rxq *rxq = q < dev->data->nb_rx_queues ?
				      dev->data->rx_queues[q] : NULL;

		if (rxq == NULL) {
			VBR_LOG(ERR, "port %u: rxq %u is not set up",
				dev->data->port_id, q);
			err = EINVAL;
			goto error;
		}
		wqs[i] = rxq->wq;
	}
	ind_attr.log_ind_tbl_size = log;
	ind_attr.ind_tbl = wqs;
	rss->ind_table = priv->glue->create_rwq_ind_table(priv->ctx,
							  &ind_attr);
	if (rss->ind_table == NULL) {
		err = errno;
		VBR_LOG(ERR, "port %u: create_rwq_ind_table (%u entries): %s",
			dev->data->port_id, 1u << log, strerror(err));
		goto error;
	}
	qp_attr.qp_type = IBV_QPT_RAW_PACKET;
	qp_attr.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			    IBV_QP_INIT_ATTR_RX_HASH;
	qp_attr.pd = priv->pd;
	qp_attr.rwq_ind_tbl = rss->ind_table;
	qp_attr.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	qp_attr.rx_hash_conf.rx_hash_key_len = VBR_RSS_KEY_LEN;
	qp_attr.rx_hash_conf.rx_hash_key = rss->key;
	qp_attr.rx_hash_conf.rx_hash_fields_mask = fields;
	rss->qp = priv->glue->create_qp_ex(priv->ctx, &qp_attr);
	if (rss->qp == NULL) {
		err = errno;
		VBR_LOG(ERR, "port %u: create hash QP (fields 0x%" PRIx64
			"): %s", dev->data->port_id, fields, strerror(err));
		goto error;
	}
	rte_free(wqs);
	return rss;
error:
	rte_free(wqs);
	if (rss != NULL)
		vbr_rss_free(priv, rss);
	errno = err;
	return NULL;
}

/**
 * A hash QP over queues (in this order, repeated round-robin), with key and
 * fields: an existing one with one more reference, or a new one. Return NULL
 * with errno set on failure. Caller holds flow_lock.
 */
struct vbr_rss *
vbr_rss_get(struct vbr_priv *priv, const uint16_t *queues, uint16_t nb_queues,
	    const uint8_t *key, uint64_t fields)
{
	struct vbr_rss *rss;

	LIST_FOREACH(rss, &priv->rss_objs, next) {
		if (rss->fields == fields && rss->nb_queues == nb_queues &&
		    memcmp(rss->key, key, VBR_RSS_KEY_LEN) == 0 &&
		    memcmp(rss->queues, queues,
			   nb_queues * sizeof(queues[0])) == 0) {
			rss->refcnt++;
			return rss;
		}
	}
	rss = vbr_rss_create(priv, queues, nb_queues, key, fields);
	if (rss != NULL)
		LIST_INSERT_HEAD(&priv->rss_objs, rss, next);
	return rss;
}

/** Drop a reference; the last one destroys the QP and its table. */
void
vbr_rss_put(struct vbr_priv *priv, struct vbr_rss *rss)
{
	if (rss == NULL || --rss->refcnt > 0)
		return;
	LIST_REMOVE(rss, next);
	vbr_rss_free(priv, rss);
}

struct ibv_qp *
vbr_rss_qp(const struct vbr_rss *rss)
{
	return rss->qp;
}
