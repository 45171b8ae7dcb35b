/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Queue sets that flow rules and the port itself point at. One object per
 * distinct (queues, key, fields) of a port, shared and refcounted by the
 * rules that name it from their creation to their destruction: a rule keeps
 * no queue list of its own. While the port is started, an object in use also
 * holds the device side: an indirection table over the WQs of its Rx queues
 * and a RAW_PACKET hash QP with a Toeplitz key over its fields, made when the
 * first rule goes on the device and destroyed at stop or with the object. A
 * queue list of any length is spread over a table of the next power of two
 * entries, filled round-robin: with 3 queues, entries 0-3 are queues
 * q0 q1 q2 q0.
 *
 * Rules find their object through a small hash table per port: chained,
 * VBR_RSS_BUCKETS (256) buckets, never resized. A lookup hashes the queue
 * list, key and fields and walks one chain, n / 256 objects on average for
 * n objects, comparing the stored hash first; a new object is looked for
 * along its whole chain before it is added. So the lookup costs the same
 * up to a few hundred objects and then grows with n (about 40 per chain at
 * 10,000). A rule that makes a new object on a started port also makes its
 * indirection table and hash QP on the device, which costs far more than
 * the lookup. The table hangs off vbr_priv (rss_table), made with the
 * first object and freed at close, and is used under the port's flow_lock
 * like the rest of the port's flow state.
 *
 * Port RSS is one more user of these objects: the port's redirection table
 * (reta_size entries, each an Rx queue) is the queue list of a set with the
 * port's key and the fields of rss_hf, so its table is the reta entry for
 * entry. Its hash QP (priv->hash_qp) is where the default rules (MAC,
 * broadcast, multicast, promiscuous, allmulticast) and the drop rules point.
 * reta_update and rss_hash_update on a started port go make-before-break:
 * the new set and its hash QP are made, the default rules are created on it
 * and only then are the old rules and the old set destroyed. The user rules
 * on the old hash QP (drop rules) are moved the same way, make-before-break,
 * by vbr_flow_rebind(), so the old hash QP is destroyed at once. A hash QP
 * the device still refuses to destroy (EBUSY: a rule that could not be
 * destroyed) is kept, retired, and destroyed at the next update or at stop.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "vbr.h"
#include "vbr_utils.h"

/** Hash buckets per port (a power of two). */
#define VBR_RSS_BUCKETS 256

/*
 * Default Toeplitz key: the key of Microsoft's RSS verification suite
 * ("Verifying the RSS Hash Calculation"), so hashes can be checked against
 * its published examples.
 */
static const uint8_t vbr_rss_default_key[VBR_RSS_KEY_LEN] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
	0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
	0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

/** A shared queue set and, while started, its hash QP. */
struct vbr_rss {
	LIST_ENTRY(vbr_rss) next;	/**< in vbr_priv.rss_objs */
	LIST_ENTRY(vbr_rss) chain;	/**< in its hash bucket */
	uint32_t hash;			/**< of (queues, key, fields) */
	uint32_t refcnt;		/**< rules using it */
	uint64_t fields;		/**< IBV_RX_HASH_* */
	uint8_t key[VBR_RSS_KEY_LEN];	/**< Toeplitz key, if has_key */
	unsigned int has_key:1;		/**< else the port's key */
	unsigned int retired:1;		/**< unused, QP still has rules */
	struct ibv_rwq_ind_table *ind_table; /**< WQs, while started */
	struct ibv_qp *qp;		/**< hash QP, while started */
	uint16_t nb_queues;		/**< entries of queues */
	uint16_t queues[];		/**< queue list as given */
};

/** The hash buckets of one port. */
struct vbr_rss_table {
	LIST_HEAD(, vbr_rss) bucket[VBR_RSS_BUCKETS]; /**< chains */
};

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

/*
 * Destroy the device side (hash QP and table), keep the object. Return 0,
 * or the device's error with what could not be destroyed kept (EBUSY: the
 * hash QP still has rules).
 */
static int
vbr_rss_off(struct vbr_priv *priv, struct vbr_rss *rss, bool quiet)
{
	int ret;

	if (rss->qp != NULL) {
		ret = priv->glue->destroy_qp(rss->qp);
		if (ret != 0) {
			if (!quiet || ret != EBUSY)
				VBR_LOG(ERR, "port %u: destroy hash QP: %s",
					priv->dev->data->port_id,
					strerror(ret));
			return ret;
		}
		rss->qp = NULL;
	}
	if (rss->ind_table != NULL) {
		ret = priv->glue->destroy_rwq_ind_table(rss->ind_table);
		if (ret != 0) {
			VBR_LOG(ERR, "port %u: destroy indirection table: %s",
				priv->dev->data->port_id, strerror(ret));
			return ret;
		}
		rss->ind_table = NULL;
	}
	return 0;
}

static void
vbr_rss_free(struct vbr_rss *rss)
{
	LIST_REMOVE(rss, next);
	if (!rss->retired)
		LIST_REMOVE(rss, chain);
	free(rss);
}

/*
 * Destroy the retired sets the device now lets go (their last rules are
 * gone); with force, also log those it does not. Caller holds flow_lock.
 */
static void
vbr_rss_reap(struct vbr_priv *priv, bool force)
{
	struct vbr_rss *rss, *tmp;

	for (rss = LIST_FIRST(&priv->rss_objs); rss != NULL; rss = tmp) {
		tmp = LIST_NEXT(rss, next);
		if (rss->retired && vbr_rss_off(priv, rss, !force) == 0)
			vbr_rss_free(rss);
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
	vbr_rss_off(priv, rss, false);
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
	struct vbr_rss_table *t = priv->rss_table;
	struct vbr_rss *rss;
	uint32_t h;

	if (t == NULL) {
		t = calloc(1, sizeof(*t));
		if (t == NULL) {
			errno = ENOMEM;
			return NULL;
		}
		priv->rss_table = t;
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

/**
 * Drop a reference; the last one destroys the object and its QP. A QP the
 * device refuses to destroy because rules are still on it (EBUSY) is kept,
 * retired, until vbr_rss_reap() or vbr_rss_stop() can destroy it.
 */
void
vbr_rss_put(struct vbr_priv *priv, struct vbr_rss *rss)
{
	if (rss == NULL || --rss->refcnt > 0)
		return;
	if (vbr_rss_off(priv, rss, true) != 0) {
		LIST_REMOVE(rss, chain);
		rss->retired = 1;
		return;
	}
	vbr_rss_free(rss);
}

/**
 * At stop, once the rules are off the device: destroy every hash QP but the
 * port's own (vbr_rss_port_stop() takes it), and the retired sets.
 */
void
vbr_rss_stop(struct vbr_priv *priv)
{
	struct vbr_rss *rss;

	vbr_rss_reap(priv, true);
	LIST_FOREACH(rss, &priv->rss_objs, next)
		if (rss != priv->rss_port)
			vbr_rss_off(priv, rss, false);
}

/** At close, once every rule is gone: free the port's hash table. */
void
vbr_rss_release(struct vbr_priv *priv)
{
	free(priv->rss_table);
	priv->rss_table = NULL;
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

/** Hash QPs on the device: the port's, those of rules, retired ones. */
unsigned int
vbr_rss_nb_qps(const struct vbr_priv *priv)
{
	const struct vbr_rss *rss;
	unsigned int n = 0;

	LIST_FOREACH(rss, &priv->rss_objs, next)
		if (rss->qp != NULL)
			n++;
	return n;
}

/*
 * Port RSS: the redirection table, key and hash types of the port, and the
 * queue set made of them while the port is started.
 */

/**
 * Entries of the port's redirection table: VBR_RSS_RETA_MAX, or the largest
 * indirection table of the device when it is smaller.
 */
uint16_t
vbr_rss_reta_size(const struct vbr_priv *priv)
{
	uint32_t max = priv->attr.rss_caps.max_rwq_indirection_table_size;
	uint32_t n = VBR_RSS_RETA_MAX;

	while (max != 0 && n > max)
		n >>= 1;
	return n;
}

/* Whether the port spreads over its reta (mq_mode RSS) or uses queue 0. */
static bool
vbr_rss_mq(const struct vbr_priv *priv)
{
	return (priv->dev->data->dev_conf.rxmode.mq_mode &
		RTE_ETH_MQ_RX_RSS_FLAG) != 0;
}

/**
 * At dev_configure: the key given (or the default one), the hash types of
 * mq_mode RSS (none otherwise) and a round-robin reta over the Rx queues
 * (all queue 0 without RSS). What reta_update and rss_hash_update set lasts
 * until the next configure.
 */
int
vbr_rss_configure(struct vbr_priv *priv)
{
	struct rte_eth_dev_data *data = priv->dev->data;
	const struct rte_eth_rss_conf *conf = &data->dev_conf.rx_adv_conf.rss_conf;
	enum rte_eth_rx_mq_mode mode = data->dev_conf.rxmode.mq_mode;
	bool mq = vbr_rss_mq(priv);
	uint16_t i;

	if (mode != RTE_ETH_MQ_RX_NONE && mode != RTE_ETH_MQ_RX_RSS) {
		VBR_LOG(ERR, "port %u: Rx mq_mode %d: only none and RSS",
			data->port_id, (int)mode);
		return -ENOTSUP;
	}
	if (conf->rss_key != NULL && conf->rss_key_len != VBR_RSS_KEY_LEN) {
		VBR_LOG(ERR, "port %u: RSS key of %u bytes: must be %u",
			data->port_id, conf->rss_key_len, VBR_RSS_KEY_LEN);
		return -EINVAL;
	}
	if (mq && (conf->rss_hf & ~(uint64_t)VBR_RSS_OFFLOADS) != 0) {
		VBR_LOG(ERR, "port %u: RSS types 0x%" PRIx64 " cannot be "
			"hashed (supported: 0x%" PRIx64 ")", data->port_id,
			conf->rss_hf & ~(uint64_t)VBR_RSS_OFFLOADS,
			(uint64_t)VBR_RSS_OFFLOADS);
		return -EINVAL;
	}
	pthread_mutex_lock(&priv->flow_lock);
	memcpy(priv->rss_key, conf->rss_key != NULL ? conf->rss_key :
	       vbr_rss_default_key, VBR_RSS_KEY_LEN);
	priv->rss_hf = mq ? conf->rss_hf : 0;
	priv->reta_size = vbr_rss_reta_size(priv);
	for (i = 0; i < priv->reta_size; i++)
		priv->reta[i] = mq && data->nb_rx_queues > 0 ?
				i % data->nb_rx_queues : 0;
	pthread_mutex_unlock(&priv->flow_lock);
	return 0;
}

/*
 * The port's queue set for a reta, key and hash types, with its hash QP on
 * the device (a new reference). Without mq_mode RSS: queue 0 alone, no
 * hashing. Return NULL with errno set. Caller holds flow_lock.
 */
static struct vbr_rss *
vbr_rss_port_make(struct vbr_priv *priv, const uint16_t *reta,
		  const uint8_t *key, uint64_t hf)
{
	static const uint16_t queue0;
	bool mq = vbr_rss_mq(priv);
	struct vbr_rss *rss;
	int err, q;

	rss = vbr_rss_get(priv, mq ? reta : &queue0, mq ? priv->reta_size : 1,
			  key, mq ? vbr_flow_rss_fields(hf) : 0);
	if (rss == NULL)
		return NULL;
	q = vbr_rss_missing_queue(priv, rss);
	if (q >= 0) {
		VBR_LOG(ERR, "port %u: rxq %d is not set up",
			priv->dev->data->port_id, q);
		vbr_rss_put(priv, rss);
		errno = EINVAL;
		return NULL;
	}
	if (vbr_rss_qp(priv, rss) == NULL) {
		err = errno;
		vbr_rss_put(priv, rss);
		errno = err;
		return NULL;
	}
	return rss;
}

/** At dev_start, before any rule: the port's queue set and hash QP. */
int
vbr_rss_port_start(struct vbr_priv *priv)
{
	struct vbr_rss *rss;
	int ret = 0;

	if (priv->dev->data->nb_rx_queues == 0) {
		VBR_LOG(ERR, "port %u: no Rx queue", priv->dev->data->port_id);
		return -EINVAL;
	}
	pthread_mutex_lock(&priv->flow_lock);
	rss = vbr_rss_port_make(priv, priv->reta, priv->rss_key,
				priv->rss_hf);
	if (rss == NULL) {
		ret = -errno;
	} else {
		priv->rss_port = rss;
		priv->hash_qp = rss->qp;
	}
	pthread_mutex_unlock(&priv->flow_lock);
	return ret;
}

/** At dev_stop, once every rule is off the device: release the port's set. */
void
vbr_rss_port_stop(struct vbr_priv *priv)
{
	struct vbr_rss *rss;

	pthread_mutex_lock(&priv->flow_lock);
	rss = priv->rss_port;
	priv->rss_port = NULL;
	priv->hash_qp = NULL;
	if (rss != NULL) {
		/* Off even if a rule shares it: no hash QP while stopped. */
		vbr_rss_off(priv, rss, false);
		vbr_rss_put(priv, rss);
	}
	vbr_rss_reap(priv, true);
	pthread_mutex_unlock(&priv->flow_lock);
}

/*
 * Started port: make the queue set of (reta, key, hf) and its hash QP, make
 * the user rules of the old hash QP on it too, move the default rules onto
 * it, and only then destroy the old rules and let the old set go (its hash
 * QP has no rule left: it is destroyed now). On failure nothing changed.
 * Caller holds flow_lock.
 */
static int
vbr_rss_port_switch(struct vbr_priv *priv, const uint16_t *reta,
		    const uint8_t *key, uint64_t hf)
{
	struct vbr_rss *old = priv->rss_port, *rss;
	struct ibv_qp *old_qp = priv->hash_qp;
	int ret;

	rss = vbr_rss_port_make(priv, reta, key, hf);
	if (rss == NULL)
		return -errno;
	if (rss == old) {
		vbr_rss_put(priv, rss);
		return 0;
	}
	ret = vbr_flow_rebind(priv, old_qp, rss->qp);
	if (ret != 0) {
		vbr_rss_put(priv, rss);
		return ret;
	}
	priv->rss_port = rss;
	priv->hash_qp = rss->qp;
	ret = vbr_flows_move(priv);
	if (ret != 0) {
		vbr_flow_rebind_abort(priv);
		priv->rss_port = old;
		priv->hash_qp = old_qp;
		vbr_rss_put(priv, rss);
		return ret;
	}
	vbr_flow_rebind_commit(priv, rss->qp);
	vbr_rss_put(priv, old);
	vbr_rss_reap(priv, false);
	return 0;
}

int
vbr_rss_reta_update(struct rte_eth_dev *dev,
		    struct rte_eth_rss_reta_entry64 *reta_conf,
		    uint16_t reta_size)
{
	struct vbr_priv *priv = dev->data->dev_private;
	uint16_t reta[VBR_RSS_RETA_MAX];
	unsigned int i, idx, shift;
	int ret = 0;

	if (reta_size != priv->reta_size) {
		VBR_LOG(ERR, "port %u: reta of %u entries: the port's has %u",
			dev->data->port_id, reta_size, priv->reta_size);
		return -EINVAL;
	}
	if (!vbr_rss_mq(priv)) {
		VBR_LOG(ERR, "port %u: reta update needs mq_mode RSS",
			dev->data->port_id);
		return -ENOTSUP;
	}
	pthread_mutex_lock(&priv->flow_lock);
	memcpy(reta, priv->reta, reta_size * sizeof(reta[0]));
	for (i = 0; i < reta_size; i++) {
		idx = i / RTE_ETH_RETA_GROUP_SIZE;
		shift = i % RTE_ETH_RETA_GROUP_SIZE;
		if (!(reta_conf[idx].mask & RTE_BIT64(shift)))
			continue;
		if (reta_conf[idx].reta[shift] >= dev->data->nb_rx_queues) {
			VBR_LOG(ERR, "port %u: reta entry %u: queue %u is not "
				"below the %u Rx queues", dev->data->port_id,
				i, reta_conf[idx].reta[shift],
				dev->data->nb_rx_queues);
			ret = -EINVAL;
			goto out;
		}
		reta[i] = reta_conf[idx].reta[shift];
	}
	if (priv->rss_port != NULL)
		ret = vbr_rss_port_switch(priv, reta, priv->rss_key,
					  priv->rss_hf);
	if (ret == 0)
		memcpy(priv->reta, reta, reta_size * sizeof(reta[0]));
out:
	pthread_mutex_unlock(&priv->flow_lock);
	return ret;
}

int
vbr_rss_reta_query(struct rte_eth_dev *dev,
		   struct rte_eth_rss_reta_entry64 *reta_conf,
		   uint16_t reta_size)
{
	struct vbr_priv *priv = dev->data->dev_private;
	unsigned int i, idx, shift;

	if (reta_size != priv->reta_size) {
		VBR_LOG(ERR, "port %u: reta of %u entries: the port's has %u",
			dev->data->port_id, reta_size, priv->reta_size);
		return -EINVAL;
	}
	pthread_mutex_lock(&priv->flow_lock);
	for (i = 0; i < reta_size; i++) {
		idx = i / RTE_ETH_RETA_GROUP_SIZE;
		shift = i % RTE_ETH_RETA_GROUP_SIZE;
		if (reta_conf[idx].mask & RTE_BIT64(shift))
			reta_conf[idx].reta[shift] = priv->reta[i];
	}
	pthread_mutex_unlock(&priv->flow_lock);
	return 0;
}

int
vbr_rss_hash_update(struct rte_eth_dev *dev, struct rte_eth_rss_conf *rss_conf)
{
	struct vbr_priv *priv = dev->data->dev_private;
	uint8_t key[VBR_RSS_KEY_LEN];
	uint64_t hf = rss_conf->rss_hf;
	int ret = 0;

	if (rss_conf->rss_key != NULL &&
	    rss_conf->rss_key_len != VBR_RSS_KEY_LEN) {
		VBR_LOG(ERR, "port %u: RSS key of %u bytes: must be %u",
			dev->data->port_id, rss_conf->rss_key_len,
			VBR_RSS_KEY_LEN);
		return -EINVAL;
	}
	if ((hf & ~(uint64_t)VBR_RSS_OFFLOADS) != 0) {
		VBR_LOG(ERR, "port %u: RSS types 0x%" PRIx64 " cannot be "
			"hashed (supported: 0x%" PRIx64 ")", dev->data->port_id,
			hf & ~(uint64_t)VBR_RSS_OFFLOADS,
			(uint64_t)VBR_RSS_OFFLOADS);
		return -EINVAL;
	}
	if (!vbr_rss_mq(priv)) {
		VBR_LOG(ERR, "port %u: RSS hash update needs mq_mode RSS",
			dev->data->port_id);
		return -ENOTSUP;
	}
	pthread_mutex_lock(&priv->flow_lock);
	memcpy(key, rss_conf->rss_key != NULL ? rss_conf->rss_key :
	       priv->rss_key, VBR_RSS_KEY_LEN);
	if (priv->rss_port != NULL)
		ret = vbr_rss_port_switch(priv, priv->reta, key, hf);
	if (ret == 0) {
		memcpy(priv->rss_key, key, VBR_RSS_KEY_LEN);
		priv->rss_hf = hf;
	}
	pthread_mutex_unlock(&priv->flow_lock);
	return ret;
}

int
vbr_rss_hash_conf_get(struct rte_eth_dev *dev,
		      struct rte_eth_rss_conf *rss_conf)
{
	struct vbr_priv *priv = dev->data->dev_private;

	if (rss_conf->rss_key != NULL && rss_conf->rss_key_len != 0 &&
	    rss_conf->rss_key_len < VBR_RSS_KEY_LEN) {
		VBR_LOG(ERR, "port %u: %u bytes for the %u-byte RSS key",
			dev->data->port_id, rss_conf->rss_key_len,
			VBR_RSS_KEY_LEN);
		return -EINVAL;
	}
	pthread_mutex_lock(&priv->flow_lock);
	if (rss_conf->rss_key != NULL)
		memcpy(rss_conf->rss_key, priv->rss_key, VBR_RSS_KEY_LEN);
	rss_conf->rss_key_len = VBR_RSS_KEY_LEN;
	rss_conf->rss_hf = priv->rss_hf;
	pthread_mutex_unlock(&priv->flow_lock);
	return 0;
}
