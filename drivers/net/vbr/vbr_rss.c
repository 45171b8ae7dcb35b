/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Queue sets that flow rules point at. One object per distinct (queues, key,
 * fields) of a port, shared and refcounted by the rules that name it from
 * their creation to their destruction: a rule keeps no queue list of its own.
 * While the port is started, an object in use also holds the device side: an
 * indirection table over the WQs of its Rx queues and a RAW_PACKET hash QP
 * with a Toeplitz key over its fields, made when the first rule goes on the
 * device and destroyed at stop or with the object. A queue list of any length
 * is spread over a table of the next power of two entries, filled
 * round-robin: with 3 queues, entries 0-3 are queues q0 q1 q2 q0.
 *
 * Rules find their object through a small hash table per port (chained, a
 * fixed number of buckets), so creating a rule costs the same with 1 or
 * 10,000 objects. The tables live here, indexed by port id, and are used
 * under the port's flow_lock like the rest of the port's flow state.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vbr.h"
#include "vbr_utils.h"

/** Hash buckets per port (a power of two). */
#define VBR_RSS_BUCKETS 256

/** A shared queue set and, while started, its hash QP. */
struct vbr_rss {
	LIST_ENTRY(vbr_rss) next;	/**< in vbr_priv.rss_objs */
	LIST_ENTRY(vbr_rss) chain;	/**< in its hash bucket */
	uint32_t hash;			/**< of (queues, key, fields) */
	uint32_t refcnt;		/**< rules using it */
	uint64_t fields;		/**< IBV_RX_HASH_* */
	uint8_t key[VBR_RSS_KEY_LEN];	/**< Toeplitz key, if has_key */
	unsigned int has_key:1;		/**< else the port's key */
	struct ibv_rwq_ind_table *ind_table; /**< WQs, while started */
	struct ibv_qp *qp;		/**< hash QP, while started */
	uint16_t nb_queues;		/**< entries of queues */
	uint16_t queues[];		/**< queue list as given */
};

/** The hash buckets of one port. */
struct vbr_rss_table {
	LIST_HEAD(, vbr_rss) bucket[VBR_RSS_BUCKETS]; /**< chains */
};

static struct vbr_rss_table *vbr_rss_tables[RTE_MAX_ETHPORTS];

/* FNV-1a, 32 bits. */
static uint32_t
vbr_rss_fnv(uint32_t h, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 16777619u;
	}
	return h;
}

static uint32_t
vbr_rss_hash(const uint16_t *queues, uint16_t nb_queues, const uint8_t *key,
	     uint64_t fields)
{
	uint32_t h = 2166136261u;

	h = vbr_rss_fnv(h, queues, nb_queues * sizeof(queues[0]));
	h = vbr_rss_fnv(h, &fields, sizeof(fields));
	if (key != NULL)
		h = vbr_rss_fnv(h, key, VBR_RSS_KEY_LEN);
	return h;
}

/* Destroy the device side (hash QP and table), keep the object. */
static void
vbr_rss_off(struct vbr_priv *priv, struct vbr_rss *rss)
{
	int ret;

	if (rss->qp != NULL) {
		ret = priv->glue->destroy_qp(rss->qp);
		if (ret != 0)
			VBR_LOG(ERR, "port %u: destroy hash QP: %s",
				priv->dev->data->port_id, strerror(ret));
		rss->qp = NULL;
	}
	if (rss->ind_table != NULL) {
		ret = priv->glue->destroy_rwq_ind_table(rss->ind_table);
		if (ret != 0)
			VBR_LOG(ERR, "port %u: destroy indirection table: %s",
				priv->dev->data->port_id, strerror(ret));
		rss->ind_table = NULL;
	}
}

/**
 * First queue of the set that the port does not have set up, or -1 when
 * all are there.
 */
int
vbr_rss_missing_queue(const struct vbr_priv *priv, const struct vbr_rss *rss)
{
	const struct rte_eth_dev_data *data = priv->dev->data;
	unsigned int i;

	for (i = 0; i < rss->nb_queues; i++)
		if (rss->queues[i] >= data->nb_rx_queues ||
		    data->rx_queues[rss->queues[i]] == NULL)
			return rss->queues[i];
	return -1;
}

/**
 * The hash QP of a queue set, made on first use. Return NULL with errno set
 * on failure (EINVAL: a queue is not set up). Caller holds flow_lock.
 */
struct ibv_qp *
vbr_rss_qp(struct vbr_priv *priv, struct vbr_rss *rss)
{
	struct rte_eth_dev *dev = priv->dev;
	struct ibv_rwq_ind_table_init_attr ind_attr = { 0 };
	struct ibv_qp_init_attr_ex qp_attr = { 0 };
	uint32_t max = priv->attr.rss_caps.max_rwq_indirection_table_size;
	struct ibv_wq **wqs;
	unsigned int log = 0, i;
	int err;

	if (rss->qp != NULL)
		return rss->qp;
	while ((1u << log) < rss->nb_queues)
		log++;
	if (max != 0 && (1u << log) > max) {
		VBR_LOG(ERR, "port %u: %u queues need an indirection table of "
			"%u entries: the device has at most %u",
			dev->data->port_id, rss->nb_queues, 1u << log, max);
		errno = ENOTSUP;
		return NULL;
	}
	if (vbr_rss_missing_queue(priv, rss) >= 0) {
		errno = EINVAL;
		return NULL;
	}
	wqs = calloc(1u << log, sizeof(*wqs));
	if (wqs == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < (1u << log); i++) {
		struct vbr_rxq *rxq =
			dev->data->rx_queues[rss->queues[i % rss->nb_queues]];

		wqs[i] = rxq->wq;
	}
	ind_attr.log_ind_tbl_size = log;
	ind_attr.ind_tbl = wqs;
	rss->ind_table = priv->glue->create_rwq_ind_table(priv->ctx,
							  &ind_attr);
	err = errno;
	free(wqs);
	if (rss->ind_table == NULL) {
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
	qp_attr.rx_hash_conf.rx_hash_key = rss->has_key ? rss->key :
					   priv->rss_key;
	qp_attr.rx_hash_conf.rx_hash_fields_mask = rss->fields;
	rss->qp = priv->glue->create_qp_ex(priv->ctx, &qp_attr);
	if (rss->qp == NULL) {
		err = errno;
		VBR_LOG(ERR, "port %u: create hash QP (fields 0x%" PRIx64
			"): %s", dev->data->port_id, rss->fields,
			strerror(err));
		goto error;
	}
	return rss->qp;
error:
	vbr_rss_off(priv, rss);
	errno = err != 0 ? err : EIO;
	return NULL;
}

/**
 * The queue set (queues in this order, key or NULL for the port's key,
 * fields): an existing one with one more reference, or a new one, not yet
 * on the device. Return NULL with errno set on failure. Caller holds
 * flow_lock.
 */
struct vbr_rss *
vbr_rss_get(struct vbr_priv *priv, const uint16_t *queues, uint16_t nb_queues,
	    const uint8_t *key, uint64_t fields)
{
	uint16_t port = priv->dev->data->port_id;
	struct vbr_rss_table *t = vbr_rss_tables[port];
	struct vbr_rss *rss;
	uint32_t h;

	if (t == NULL) {
		t = calloc(1, sizeof(*t));
		if (t == NULL) {
			errno = ENOMEM;
			return NULL;
		}
		vbr_rss_tables[port] = t;
	}
	h = vbr_rss_hash(queues, nb_queues, key, fields);
	LIST_FOREACH(rss, &t->bucket[h & (VBR_RSS_BUCKETS - 1)], chain) {
		if (rss->hash == h && rss->fields == fields &&
		    rss->nb_queues == nb_queues &&
		    rss->has_key == (key != NULL) &&
		    (key == NULL ||
		     memcmp(rss->key, key, VBR_RSS_KEY_LEN) == 0) &&
		    memcmp(rss->queues, queues,
			   nb_queues * sizeof(queues[0])) == 0) {
			rss->refcnt++;
			return rss;
		}
	}
	rss = calloc(1, sizeof(*rss) + nb_queues * sizeof(rss->queues[0]));
	if (rss == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	rss->hash = h;
	rss->refcnt = 1;
	rss->fields = fields;
	if (key != NULL) {
		memcpy(rss->key, key, VBR_RSS_KEY_LEN);
		rss->has_key = 1;
	}
	rss->nb_queues = nb_queues;
	memcpy(rss->queues, queues, nb_queues * sizeof(rss->queues[0]));
	LIST_INSERT_HEAD(&priv->rss_objs, rss, next);
	LIST_INSERT_HEAD(&t->bucket[h & (VBR_RSS_BUCKETS - 1)], rss, chain);
	return rss;
}

/** Drop a reference; the last one destroys the object and its QP. */
void
vbr_rss_put(struct vbr_priv *priv, struct vbr_rss *rss)
{
	if (rss == NULL || --rss->refcnt > 0)
		return;
	vbr_rss_off(priv, rss);
	LIST_REMOVE(rss, next);
	LIST_REMOVE(rss, chain);
	free(rss);
}

/** At stop, once the rules are off the device: destroy every hash QP. */
void
vbr_rss_stop(struct vbr_priv *priv)
{
	struct vbr_rss *rss;

	LIST_FOREACH(rss, &priv->rss_objs, next)
		vbr_rss_off(priv, rss);
}

/** At close, once every rule is gone: free the port's hash table. */
void
vbr_rss_release(struct vbr_priv *priv)
{
	uint16_t port = priv->dev->data->port_id;

	free(vbr_rss_tables[port]);
	vbr_rss_tables[port] = NULL;
}

/** " <queues> fields 0x.. key own|port" for a rule dump. */
void
vbr_rss_dump(FILE *file, const struct vbr_rss *rss)
{
	unsigned int i;

	for (i = 0; i < rss->nb_queues; i++)
		fprintf(file, " %u", rss->queues[i]);
	fprintf(file, " (fields 0x%" PRIx64 ", %s key, %u rules, %s)",
		rss->fields, rss->has_key ? "own" : "port", rss->refcnt,
		rss->qp != NULL ? "hash QP on the device" : "no hash QP");
}
