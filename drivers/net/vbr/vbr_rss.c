/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Queue sets: the device side of where received frames go.
 *
 * One object per distinct (queues, key, RSS types) of a port, shared and
 * refcounted by the rules that name it (vbr_steer.c), the port's own
 * redirection table included: a rule keeps no queue list of its own. While
 * the port is started, an object in use holds the device side, made on
 * first use and destroyed at stop or with the object:
 *
 * - an indirection table over the WQs of its Rx queues (a queue list of
 *   any length is spread over a table of the next power of two entries,
 *   filled round-robin: with 3 queues, entries 0-3 are q0 q1 q2 q0), and a
 *   1-entry table of its first queue for packet types with nothing to hash;
 * - one RAW_PACKET hash QP per packet type a rule asks for (l2, ipv4,
 *   ipv4-tcp, ipv4-udp, ipv6, ipv6-tcp, ipv6-udp), each hashing one L3
 *   family and at most one L4 protocol with the set's Toeplitz key
 *   (vbr_flow_pt_fields()): a ConnectX refuses a hash QP that mixes IPv4
 *   with IPv6 or TCP with UDP, so a set with several types has several hash
 *   QPs over one table, and a rule one verbs flow per type (vbr_flow.c,
 *   vbr_flow_expand()). Hash QPs whose fields would be equal are one QP.
 *
 * Each hash QP costs the device a TIR and each verbs flow a flow table
 * entry; the WQs and the table are shared by all of them.
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
 * This file is a leaf: it calls the glue and the pure translation
 * (vbr_flow.c), nothing of the rule layer. A hash QP the device refuses to
 * destroy (EBUSY: a rule could not be destroyed) is kept, its object
 * retired, and destroyed at the next vbr_rss_stop() or put.
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

/** A shared queue set and, while started, its tables and hash QPs. */
struct vbr_rss {
	LIST_ENTRY(vbr_rss) next;	/**< in vbr_priv.rss_objs */
	LIST_ENTRY(vbr_rss) chain;	/**< in its hash bucket */
	uint32_t hash;			/**< of (queues, key, types) */
	uint32_t refcnt;		/**< rules using it */
	uint64_t types;			/**< RTE_ETH_RSS_* hashed, 0: none */
	uint8_t key[VBR_RSS_KEY_LEN];	/**< Toeplitz key, if has_key */
	unsigned int has_key:1;		/**< else the port's key */
	unsigned int retired:1;		/**< unused, a QP still has rules */
	struct ibv_rwq_ind_table *ind_table; /**< WQs, while started */
	struct ibv_rwq_ind_table *ind_one; /**< first WQ alone */
	struct ibv_qp *qp[VBR_FLOW_PT_MAX]; /**< hash QP per packet type */
	uint16_t nb_queues;		/**< entries of queues */
	uint16_t queues[];		/**< queue list as given */
};

/** The hash buckets of one port. */
struct vbr_rss_table {
	LIST_HEAD(, vbr_rss) bucket[VBR_RSS_BUCKETS]; /**< chains */
};

/** The default Toeplitz key. */
const uint8_t *
vbr_rss_default_key_get(void)
{
	return vbr_rss_default_key;
}

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
	     uint64_t types)
{
	uint32_t h = 2166136261u;

	h = vbr_rss_fnv(h, queues, nb_queues * sizeof(queues[0]));
	h = vbr_rss_fnv(h, &types, sizeof(types));
	if (key != NULL)
		h = vbr_rss_fnv(h, key, VBR_RSS_KEY_LEN);
	return h;
}

/* Hash fields of packet type pt in this set (none with one queue). */
static uint64_t
vbr_rss_fields(const struct vbr_rss *rss, unsigned int pt)
{
	return vbr_flow_pt_fields(rss->types, pt);
}

static int
vbr_rss_destroy_table(struct vbr_priv *priv, struct ibv_rwq_ind_table **t)
{
	int ret;

	if (*t == NULL)
		return 0;
	ret = priv->glue->destroy_rwq_ind_table(*t);
	if (ret != 0) {
		VBR_LOG(ERR, "port %u: destroy indirection table: %s",
			priv->dev->data->port_id, strerror(ret));
		return ret;
	}
	*t = NULL;
	return 0;
}

/*
 * Destroy the device side (hash QPs and tables), keep the object. Return 0,
 * or the device's error with what could not be destroyed kept (EBUSY: a
 * hash QP still has rules).
 */
static int
vbr_rss_off(struct vbr_priv *priv, struct vbr_rss *rss, bool quiet)
{
	unsigned int pt, i;
	struct ibv_qp *qp;
	int ret, err = 0;

	for (pt = 0; pt < VBR_FLOW_PT_MAX; pt++) {
		qp = rss->qp[pt];
		if (qp == NULL)
			continue;
		ret = priv->glue->destroy_qp(qp);
		if (ret != 0) {
			if (!quiet || ret != EBUSY)
				VBR_LOG(ERR, "port %u: destroy hash QP: %s",
					priv->dev->data->port_id,
					strerror(ret));
			err = ret;
		}
		/* Types sharing the QP (equal fields) hold it too. */
		for (i = pt; i < VBR_FLOW_PT_MAX; i++)
			if (rss->qp[i] == qp && ret == 0)
				rss->qp[i] = NULL;
		if (ret != 0)
			break;
	}
	if (err != 0)
		return err;
	ret = vbr_rss_destroy_table(priv, &rss->ind_table);
	if (ret == 0)
		ret = vbr_rss_destroy_table(priv, &rss->ind_one);
	return ret;
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

/* An indirection table of 2^log entries over the set's queues. */
static struct ibv_rwq_ind_table *
vbr_rss_make_table(struct vbr_priv *priv, struct vbr_rss *rss,
		   unsigned int log)
{
	struct rte_eth_dev *dev = priv->dev;
	struct ibv_rwq_ind_table_init_attr ind_attr = { 0 };
	struct ibv_rwq_ind_table *t;
	struct ibv_wq **wqs;
	unsigned int i;
	int err;

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
	t = priv->glue->create_rwq_ind_table(priv->ctx, &ind_attr);
	err = errno;
	free(wqs);
	if (t == NULL)
		VBR_LOG(ERR, "port %u: create_rwq_ind_table (%u entries): %s",
			dev->data->port_id, 1u << log, strerror(err));
	errno = err;
	return t;
}

/**
 * The hash QP of packet type pt of a queue set, made on first use (with
 * the set's tables). Return NULL with errno set on failure (EINVAL: a
 * queue is not set up). Caller holds flow_lock.
 */
struct ibv_qp *
vbr_rss_qp(struct vbr_priv *priv, struct vbr_rss *rss, unsigned int pt)
{
	struct rte_eth_dev *dev = priv->dev;
	struct ibv_qp_init_attr_ex qp_attr = { 0 };
	uint32_t max = priv->attr.rss_caps.max_rwq_indirection_table_size;
	uint64_t fields;
	unsigned int log = 0, i;
	int err;

	fields = rss->nb_queues > 1 ? vbr_rss_fields(rss, pt) : 0;
	/* A type hashing what another hashes shares its QP. */
	for (i = 0; i < VBR_FLOW_PT_MAX; i++) {
		uint64_t f = rss->nb_queues > 1 ? vbr_rss_fields(rss, i) : 0;

		if (f == fields && rss->qp[i] != NULL) {
			rss->qp[pt] = rss->qp[i];
			return rss->qp[i];
		}
	}
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
	if (fields == 0 && log > 0) {
		/* Nothing to hash: one entry (a ConnectX wants that). */
		if (rss->ind_one == NULL)
			rss->ind_one = vbr_rss_make_table(priv, rss, 0);
		if (rss->ind_one == NULL)
			return NULL;
		qp_attr.rwq_ind_tbl = rss->ind_one;
	} else {
		if (rss->ind_table == NULL)
			rss->ind_table = vbr_rss_make_table(priv, rss, log);
		if (rss->ind_table == NULL)
			return NULL;
		qp_attr.rwq_ind_tbl = rss->ind_table;
	}
	qp_attr.qp_type = IBV_QPT_RAW_PACKET;
	qp_attr.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			    IBV_QP_INIT_ATTR_RX_HASH;
	qp_attr.pd = priv->pd;
	qp_attr.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	qp_attr.rx_hash_conf.rx_hash_key_len = VBR_RSS_KEY_LEN;
	qp_attr.rx_hash_conf.rx_hash_key = rss->has_key ? rss->key :
					   priv->rss_key;
	qp_attr.rx_hash_conf.rx_hash_fields_mask = fields;
	errno = 0;
	rss->qp[pt] = priv->glue->create_qp_ex(priv->ctx, &qp_attr);
	if (rss->qp[pt] == NULL) {
		err = errno != 0 ? errno : EIO;
		VBR_LOG(ERR, "port %u: create hash QP (fields 0x%" PRIx64
			"): %s%s", dev->data->port_id, fields, strerror(err),
			vbr_raw_qp_hint(err));
		errno = err;
		return NULL;
	}
	return rss->qp[pt];
}

/**
 * The queue set (queues in this order, key or NULL for the port's key, RSS
 * types): an existing one with one more reference, or a new one, not yet
 * on the device. Return NULL with errno set on failure. Caller holds
 * flow_lock.
 */
struct vbr_rss *
vbr_rss_get(struct vbr_priv *priv, const uint16_t *queues, uint16_t nb_queues,
	    const uint8_t *key, uint64_t types)
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
	h = vbr_rss_hash(queues, nb_queues, key, types);
	LIST_FOREACH(rss, &t->bucket[h & (VBR_RSS_BUCKETS - 1)], chain) {
		if (rss->hash == h && rss->types == types &&
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
	rss->types = types;
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

/** One more reference to a set. Caller holds flow_lock. */
void
vbr_rss_ref(struct vbr_rss *rss)
{
	rss->refcnt++;
}

/** RSS types of a set (what vbr_flow_expand() expands for). */
uint64_t
vbr_rss_types(const struct vbr_rss *rss)
{
	return rss->nb_queues > 1 ? rss->types : 0;
}

/*
 * Queue of the hash h of a frame of packet type pt on set rss: its table
 * of the next power of two entries filled round-robin, or its first queue
 * when the type hashes nothing (vbr_rss_qp()).
 */
static uint16_t
vbr_rss_place(const struct vbr_rss *rss, uint64_t fields, uint32_t h)
{
	uint32_t size = rte_align32pow2(rss->nb_queues);

	if (fields == 0)
		return rss->queues[0];
	return rss->queues[(h & (size - 1)) % rss->nb_queues];
}

/**
 * Whether sets a and b put every frame on the same queue with the same
 * hash: one queue each, the same; or for each packet type the same hash
 * fields and key, and table entries that agree for every hash value (the
 * larger table's size covers both). Caller holds flow_lock.
 */
bool
vbr_rss_same_place(const struct vbr_priv *priv, const struct vbr_rss *a,
		   const struct vbr_rss *b)
{
	uint32_t size = RTE_MAX(rte_align32pow2(a->nb_queues),
				rte_align32pow2(b->nb_queues)), h;
	unsigned int pt;
	bool one_a = true, one_b = true;

	for (h = 1; h < a->nb_queues; h++)
		one_a = one_a && a->queues[h] == a->queues[0];
	for (h = 1; h < b->nb_queues; h++)
		one_b = one_b && b->queues[h] == b->queues[0];
	if (one_a && one_b)
		return a->queues[0] == b->queues[0];
	if (memcmp(a->has_key ? a->key : priv->rss_key,
		   b->has_key ? b->key : priv->rss_key, VBR_RSS_KEY_LEN) != 0)
		return false;
	for (pt = 0; pt < VBR_FLOW_PT_MAX; pt++) {
		uint64_t fa = a->nb_queues > 1 ? vbr_rss_fields(a, pt) : 0;
		uint64_t fb = b->nb_queues > 1 ? vbr_rss_fields(b, pt) : 0;

		if (fa != fb)
			return false;
		for (h = 0; h < size; h++)
			if (vbr_rss_place(a, fa, h) != vbr_rss_place(b, fb, h))
				return false;
	}
	return true;
}

/**
 * Drop a reference; the last one destroys the object and its QPs. A QP
 * the device refuses to destroy because rules are still on it (EBUSY) is
 * kept, retired, until vbr_rss_stop() can destroy it.
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
	vbr_rss_reap(priv, false);
}

/** At stop, once the rules are off the device: destroy every hash QP. */
void
vbr_rss_stop(struct vbr_priv *priv)
{
	struct vbr_rss *rss;

	vbr_rss_reap(priv, true);
	LIST_FOREACH(rss, &priv->rss_objs, next)
		vbr_rss_off(priv, rss, false);
}

/**
 * The numbers of the port's hash QPs (flow_lock held) into qpn[0 .. max -
 * 1]; return how many there are. Those numbered 0 are left out: a
 * ConnectX gives every hash QP the number 0 (an RSS QP is a TIR there),
 * which names no QP to the kernel's counters, nor this port's.
 */
unsigned int
vbr_rss_qpns(const struct vbr_priv *priv, uint32_t *qpn, unsigned int max)
{
	const struct vbr_rss *rss;
	unsigned int n = 0, pt;

	LIST_FOREACH(rss, &priv->rss_objs, next)
		for (pt = 0; pt < VBR_FLOW_PT_MAX; pt++) {
			if (rss->qp[pt] == NULL || rss->qp[pt]->qp_num == 0)
				continue;
			if (n < max)
				qpn[n] = rss->qp[pt]->qp_num;
			n++;
		}
	return n;
}

/** At close, once every rule is gone: free the port's hash table. */
void
vbr_rss_release(struct vbr_priv *priv)
{
	free(priv->rss_table);
	priv->rss_table = NULL;
}

/*
 * Count the distinct hash QPs of a set: types that share a QP (equal
 * fields) hold the same pointer.
 */
static unsigned int
vbr_rss_set_qps(const struct vbr_rss *rss)
{
	unsigned int i, j, n = 0;

	for (i = 0; i < VBR_FLOW_PT_MAX; i++) {
		if (rss->qp[i] == NULL)
			continue;
		for (j = 0; j < i; j++)
			if (rss->qp[j] == rss->qp[i])
				break;
		if (j == i)
			n++;
	}
	return n;
}

/** " <queues> (types 0x.., key own|port, N rules, M hash QPs)". */
void
vbr_rss_dump(FILE *file, const struct vbr_rss *rss)
{
	unsigned int i, n;

	for (i = 0; i < rss->nb_queues; i++)
		fprintf(file, " %u", rss->queues[i]);
	n = vbr_rss_set_qps(rss);
	fprintf(file, " (types 0x%" PRIx64 ", %s key, %u rules, %u hash "
		"QPs on the device)", vbr_rss_types(rss),
		rss->has_key ? "own" : "port", rss->refcnt, n);
}

/*
 * " q0 q1 ..." of a queue list, a list that repeats shorter one as "
 * q0 q1 (x<times>)" (a redirection table spread over its queues).
 */
void
vbr_rss_dump_queues(FILE *file, const uint16_t *q, unsigned int n)
{
	unsigned int p, i;

	for (p = 1; p < n; p++) {
		if (n % p != 0)
			continue;
		for (i = p; i < n && q[i] == q[i % p]; i++)
			;
		if (i == n)
			break;
	}
	for (i = 0; i < RTE_MIN(p, n); i++)
		fprintf(file, " %u", q[i]);
	if (p < n)
		fprintf(file, " (x%u)", n / p);
}

/*
 * For dump_priv: a line per queue set with its verbs objects, "  rss
 * <queues>: ind table <n>|none, hash QPs <qpn>... [<n> unnumbered]" (a
 * ConnectX numbers every hash QP 0: those are counted, not listed).
 * Caller holds flow_lock.
 */
void
vbr_rss_dump_verbs(FILE *file, const struct vbr_priv *priv)
{
	const struct vbr_rss *rss;
	unsigned int pt, i, zero;

	LIST_FOREACH(rss, &priv->rss_objs, next) {
		fprintf(file, "  rss set%s", rss == priv->rss_port ?
			" (port)" : "");
		vbr_rss_dump_queues(file, rss->queues, rss->nb_queues);
		fprintf(file, ": %u rules, ind table ", rss->refcnt);
		if (rss->ind_table != NULL)
			fprintf(file, "%u", rss->ind_table->ind_tbl_num);
		else
			fprintf(file, "none");
		fprintf(file, ", hash QPs");
		zero = 0;
		for (pt = 0; pt < VBR_FLOW_PT_MAX; pt++) {
			const struct ibv_qp *qp = rss->qp[pt];

			/* types with equal fields share a QP: print it once */
			for (i = 0; i < pt && qp != NULL; i++)
				if (rss->qp[i] == qp)
					qp = NULL;
			if (qp != NULL && qp->qp_num == 0)
				zero++;
			else if (qp != NULL)
				fprintf(file, " %u", qp->qp_num);
		}
		if (zero > 0)
			fprintf(file, " %u unnumbered (qp_num 0)", zero);
		fprintf(file, "\n");
	}
}

/** Queue sets with a hash QP on the device, and (qps) their hash QPs. */
unsigned int
vbr_rss_nb_sets(const struct vbr_priv *priv, unsigned int *qps)
{
	const struct vbr_rss *rss;
	unsigned int n = 0, q = 0, k;

	LIST_FOREACH(rss, &priv->rss_objs, next) {
		k = vbr_rss_set_qps(rss);
		if (k > 0)
			n++;
		q += k;
	}
	if (qps != NULL)
		*qps = q;
	return n;
}

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
