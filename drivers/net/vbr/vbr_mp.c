/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Multi-process: secondary processes (dpdk-proc-info, dpdk-dumpcap,
 * dpdk-pdump) attach to the primary's vbr ports and read them.
 *
 * What lives where. dev->data, dev_private (struct vbr_priv) and the
 * rte_malloc'ed queue structs are in shared memory, at the same address in
 * every process. What they point to outside it is the primary's own: the
 * glue table and the backend's objects (ibv_context, PD, WQs, QPs, CQs,
 * flows: libibverbs or swverbs objects in the primary's heap, behind
 * function pointers into its mapping of the libraries), the async event
 * fd, the engine threads. A secondary makes no verbs call, so it needs
 * no handle of its own (no process_private): its ops table
 * (vbr_sec_dev_ops) takes what shared memory holds and asks the primary
 * for the rest, with one rte_mp request per call, which the primary's
 * action answers through its own ethdev API (or its own ops table for the
 * PMD's part of the xstats), so the numbers are the primary's, exactly.
 *
 * A request names the port and the operation, and carries a buffer that
 * the secondary rte_malloc'ed (the shared heap) for answers larger than
 * an rte_mp message; the reply holds the return value. A request that
 * times out keeps its buffer (a primary still busy with it may write it
 * later). The primary's action is registered with its first port and
 * unregistered with its last; a secondary registers nothing, so one that
 * exits, or dies, leaves nothing behind in the primary.
 *
 * Rx/Tx bursts belong to the primary (its QPs and CQs): in a secondary
 * they return 0 packets and say so once per process.
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <bus_vdev_driver.h>
#include <ethdev_driver.h>
#include <rte_eal.h>
#include <rte_malloc.h>
#include <rte_string_fns.h>

#include "vbr.h"
#include "vbr_utils.h"

/** The primary's rte_mp action. */
#define VBR_MP_NAME "net_vbr_mp"
/** How long a secondary waits for the primary's answer, seconds. */
#define VBR_MP_TIMEOUT_S 5

/** Operations a secondary asks the primary for. */
enum vbr_mp_op {
	VBR_MP_INFO,		/**< rte_eth_dev_info_get */
	VBR_MP_LINK,		/**< rte_eth_link_get */
	VBR_MP_STATS,		/**< rte_eth_stats_get */
	VBR_MP_STATS_RESET,	/**< rte_eth_stats_reset */
	VBR_MP_XSTATS,		/**< the PMD's xstats_get */
	VBR_MP_XSTATS_NAMES,	/**< the PMD's xstats_get_names */
	VBR_MP_XSTATS_RESET,	/**< rte_eth_xstats_reset */
	VBR_MP_RSS_CONF,	/**< rte_eth_dev_rss_hash_conf_get */
	VBR_MP_RETA,		/**< rte_eth_dev_rss_reta_query */
	VBR_MP_NB_OPS,
};

/** A request, and its reply (result set). */
struct vbr_mp_param {
	uint16_t port_id;	/**< the port, the same in every process */
	uint16_t op;		/**< enum vbr_mp_op */
	uint32_t n;		/**< entries (or bytes) of buf; for
				 * VBR_MP_STATS on 25.11, whether the
				 * per-queue counters are wanted */
	void *buf;		/**< rte_malloc'ed: in and out data */
	int32_t result;		/**< reply: the operation's return value */
};

#if VBR_ETH_QSTATS
/** 25.11's stats_get: the totals and, apart, the per-queue counters. */
struct vbr_mp_stats {
	struct rte_eth_stats stats;	/**< rte_eth_stats_get's */
	struct eth_queue_stats qstats;	/**< the PMD's, when asked (n) */
};
#endif

/** RSS hash configuration with room for its key. */
struct vbr_mp_rss {
	struct rte_eth_rss_conf conf;	/**< conf.rss_key points to key */
	uint8_t key[VBR_RSS_KEY_LEN];	/**< the port's key */
};

/* Ports of the primary that need the action (probe to close). */
static unsigned int vbr_mp_users;
/* A secondary's burst said it moves nothing (once per process). */
static uint8_t vbr_mp_burst_said;

/* The primary: stats for a secondary's stats_get. */
static int
vbr_mp_stats_get(struct rte_eth_dev *dev, const struct vbr_mp_param *p)
{
#if VBR_ETH_QSTATS
	struct vbr_mp_stats *b = p->buf;
	struct rte_eth_stats scratch;
	int ret;

	/*
	 * ethdev's totals, as in every release; the per-queue counters,
	 * which rte_eth_stats no longer holds, from the PMD when the
	 * secondary's ethdev asked for them.
	 */
	ret = rte_eth_stats_get(p->port_id, &b->stats);
	if (ret != 0 || p->n == 0)
		return ret;
	memset(&scratch, 0, sizeof(scratch));
	memset(&b->qstats, 0, sizeof(b->qstats));
	return vbr_stats_fill(dev, &scratch, &b->qstats);
#else
	RTE_SET_USED(dev);
	return rte_eth_stats_get(p->port_id, p->buf);
#endif
}

/* The primary: one operation on one of its vbr ports, held. */
static int
vbr_mp_do_port(struct rte_eth_dev *dev, const struct vbr_mp_param *p)
{
	struct vbr_mp_rss *rss;

	/* the ops below that write through buf need one */
	if (p->buf == NULL && (p->n != 0 || p->op == VBR_MP_RSS_CONF))
		return -EINVAL;
	switch (p->op) {
	case VBR_MP_INFO:
		return rte_eth_dev_info_get(p->port_id, p->buf);
	case VBR_MP_LINK: {
		struct rte_eth_link link;

		/* dev->data->dev_link, which the secondary reads, follows */
		return rte_eth_link_get(p->port_id, &link);
	}
	case VBR_MP_STATS:
		return vbr_mp_stats_get(dev, p);
	case VBR_MP_STATS_RESET:
		return rte_eth_stats_reset(p->port_id);
	case VBR_MP_XSTATS:
		/* the PMD's own part: the secondary's ethdev adds the rest */
		return dev->dev_ops->xstats_get(dev, p->buf, p->n);
	case VBR_MP_XSTATS_NAMES:
		return dev->dev_ops->xstats_get_names(dev, p->buf, p->n);
	case VBR_MP_XSTATS_RESET:
		return rte_eth_xstats_reset(p->port_id);
	case VBR_MP_RSS_CONF:
		rss = p->buf;
		if (rss->conf.rss_key != NULL)
			rss->conf.rss_key = rss->key;
		return rte_eth_dev_rss_hash_conf_get(p->port_id, &rss->conf);
	case VBR_MP_RETA:
		return rte_eth_dev_rss_reta_query(p->port_id, p->buf, p->n);
	default:
		return -EINVAL;
	}
}

/*
 * The primary: one operation on one of its vbr ports, which the port's
 * close (on the application's thread) waits for, as for a telemetry
 * handler (vbr_stats.c): never on a port being closed.
 */
static int
vbr_mp_do(const struct vbr_mp_param *p)
{
	struct rte_eth_dev *dev;
	int ret;

	dev = vbr_tel_get(p->port_id);
	if (dev == NULL)
		return -ENODEV;
	ret = vbr_mp_do_port(dev, p);
	vbr_tel_put();
	return ret;
}

/* The primary's action: answer a secondary's request. */
static int
vbr_mp_action(const struct rte_mp_msg *msg, const void *peer)
{
	struct rte_mp_msg reply;
	struct vbr_mp_param r, p;

	/*
	 * EAL hands the message at no particular alignment (after an int in
	 * its own framing): the parameters are copied in and out, never read
	 * in place.
	 */
	memset(&reply, 0, sizeof(reply));
	memset(&r, 0, sizeof(r));
	strlcpy(reply.name, VBR_MP_NAME, sizeof(reply.name));
	reply.len_param = sizeof(r);
	if (msg->len_param != sizeof(p)) {
		VBR_LOG(ERR, "request of %d bytes, not %zu: a secondary of "
			"another vbr build?", msg->len_param, sizeof(p));
		r.result = -EINVAL;
	} else {
		memcpy(&p, msg->param, sizeof(p));
		r = p;
		r.result = vbr_mp_do(&p);
	}
	memcpy(reply.param, &r, sizeof(r));
	return rte_mp_reply(&reply, peer);
}

/**
 * Primary, port probe: register the action (with the first port). EAL
 * without multi-process (--no-shconf, --in-memory) has no secondaries:
 * nothing to register. Return 0 or -errno.
 */
int
vbr_mp_init(struct vbr_priv *priv)
{
	if (priv->mp_user)
		return 0;
	if (vbr_mp_users == 0 &&
	    rte_mp_action_register(VBR_MP_NAME, vbr_mp_action) != 0) {
		if (rte_errno == ENOTSUP) {
			VBR_LOG(DEBUG, "multi-process is off: no secondaries");
			return 0;
		}
		VBR_LOG(ERR, "rte_mp_action_register(%s): %s", VBR_MP_NAME,
			rte_strerror(rte_errno));
		return -rte_errno;
	}
	vbr_mp_users++;
	priv->mp_user = 1;
	return 0;
}

/** Primary, port close: unregister the action with the last port. */
void
vbr_mp_uninit(struct vbr_priv *priv)
{
	if (!priv->mp_user)
		return;
	priv->mp_user = 0;
	if (--vbr_mp_users == 0)
		rte_mp_action_unregister(VBR_MP_NAME);
}

/*
 * Secondary: ask the primary for @op on the port; @size bytes of @data
 * (@n of the request) go to the primary and come back. Return the
 * operation's value, or -errno when the primary does not answer.
 */
static int
vbr_mp_ask(struct rte_eth_dev *dev, enum vbr_mp_op op, void *data,
	   size_t size, uint32_t n)
{
	struct timespec ts = { .tv_sec = VBR_MP_TIMEOUT_S, .tv_nsec = 0 };
	struct rte_mp_msg msg;
	struct rte_mp_reply reply;
	struct vbr_mp_param p, r;
	void *buf = NULL;
	int ret;

	RTE_BUILD_BUG_ON(sizeof(p) > RTE_MP_MAX_PARAM_LEN);
	if (size != 0) {
		buf = rte_malloc("vbr_mp", size, 0);
		if (buf == NULL)
			return -ENOMEM;
		memcpy(buf, data, size);
	}
	memset(&msg, 0, sizeof(msg));
	strlcpy(msg.name, VBR_MP_NAME, sizeof(msg.name));
	msg.len_param = sizeof(p);
	memset(&p, 0, sizeof(p));
	p.port_id = dev->data->port_id;
	p.op = op;
	p.n = n;
	p.buf = buf;
	memcpy(msg.param, &p, sizeof(p));
	memset(&reply, 0, sizeof(reply));
	ret = rte_mp_request_sync(&msg, &reply, &ts);
	if (ret != 0 || reply.nb_received != 1) {
		VBR_LOG(ERR, "port %u: the primary process does not answer "
			"(%s)", dev->data->port_id, reply.nb_sent == 0 ?
			rte_strerror(rte_errno) : "timed out");
		/* sent, no answer: the primary may still write buf */
		if (reply.nb_sent == 0)
			rte_free(buf);
		free(reply.msgs);
		return reply.nb_sent == 0 ? -EIO : -ETIMEDOUT;
	}
	ret = -EPROTO;
	if (reply.msgs[0].len_param == sizeof(r)) {
		memcpy(&r, reply.msgs[0].param, sizeof(r));
		ret = r.result;
	}
	free(reply.msgs);
	if (buf != NULL) {
		memcpy(data, buf, size);
		rte_free(buf);
	}
	return ret;
}

static int
vbr_sec_dev_infos_get(struct rte_eth_dev *dev, struct rte_eth_dev_info *info)
{
	struct rte_device *device = info->device;
	int ret;

	ret = vbr_mp_ask(dev, VBR_MP_INFO, info, sizeof(*info), 0);
	/* the primary's pointers mean nothing here; ethdev sets its own */
	info->device = device;
	info->driver_name = NULL;
	info->dev_flags = NULL;
	info->switch_info.name = NULL;
	info->default_rxconf.rx_seg = NULL;
	info->default_rxconf.rx_mempools = NULL;
	return ret;
}

static int
vbr_sec_link_update(struct rte_eth_dev *dev, int wait_to_complete)
{
	RTE_SET_USED(wait_to_complete);
	return vbr_mp_ask(dev, VBR_MP_LINK, NULL, 0, 0);
}

#if VBR_ETH_QSTATS
static int
vbr_sec_stats_get(struct rte_eth_dev *dev, struct rte_eth_stats *stats,
		  struct eth_queue_stats *qstats)
{
	struct vbr_mp_stats b;
	int ret;

	memset(&b, 0, sizeof(b));
	b.stats = *stats;
	ret = vbr_mp_ask(dev, VBR_MP_STATS, &b, sizeof(b), qstats != NULL);
	*stats = b.stats;
	if (qstats != NULL)
		*qstats = b.qstats;
	return ret;
}
#else
static int
vbr_sec_stats_get(struct rte_eth_dev *dev, struct rte_eth_stats *stats)
{
	return vbr_mp_ask(dev, VBR_MP_STATS, stats, sizeof(*stats), 0);
}
#endif

static int
vbr_sec_stats_reset(struct rte_eth_dev *dev)
{
	return vbr_mp_ask(dev, VBR_MP_STATS_RESET, NULL, 0, 0);
}

static int
vbr_sec_xstats_reset(struct rte_eth_dev *dev)
{
	return vbr_mp_ask(dev, VBR_MP_XSTATS_RESET, NULL, 0, 0);
}

/*
 * The PMD's xstats (ethdev adds the basic ones before them, from
 * stats_get): @n entries of @size bytes at @out, the count returned.
 */
static int
vbr_sec_xstats_ask(struct rte_eth_dev *dev, enum vbr_mp_op op, void *out,
		   unsigned int n, size_t size)
{
	if (out == NULL)
		n = 0;
	return vbr_mp_ask(dev, op, out, (size_t)n * size, n);
}

static int
vbr_sec_xstats_get(struct rte_eth_dev *dev, struct rte_eth_xstat *xstats,
		   unsigned int n)
{
	return vbr_sec_xstats_ask(dev, VBR_MP_XSTATS, xstats, n,
				  sizeof(*xstats));
}

static int
vbr_sec_xstats_get_names(struct rte_eth_dev *dev,
			 struct rte_eth_xstat_name *names, unsigned int n)
{
	return vbr_sec_xstats_ask(dev, VBR_MP_XSTATS_NAMES, names, n,
				  sizeof(*names));
}

static int
vbr_sec_rss_hash_conf_get(struct rte_eth_dev *dev,
			  struct rte_eth_rss_conf *rss_conf)
{
	struct vbr_mp_rss rss;
	int ret;

	memset(&rss, 0, sizeof(rss));
	rss.conf = *rss_conf;
	ret = vbr_mp_ask(dev, VBR_MP_RSS_CONF, &rss, sizeof(rss), 0);
	if (ret != 0)
		return ret;
	if (rss_conf->rss_key != NULL)
		memcpy(rss_conf->rss_key, rss.key, VBR_RSS_KEY_LEN);
	rss_conf->rss_key_len = rss.conf.rss_key_len;
	rss_conf->rss_hf = rss.conf.rss_hf;
	return 0;
}

static int
vbr_sec_reta_query(struct rte_eth_dev *dev,
		   struct rte_eth_rss_reta_entry64 *reta_conf,
		   uint16_t reta_size)
{
	size_t groups = (reta_size + RTE_ETH_RETA_GROUP_SIZE - 1) /
			RTE_ETH_RETA_GROUP_SIZE;

	return vbr_mp_ask(dev, VBR_MP_RETA, reta_conf,
			  groups * sizeof(*reta_conf), reta_size);
}

/**
 * A secondary's ops: reads, answered by the primary. Control operations
 * (configure, start, queues, flows, MTU, ...) are the primary's: ethdev
 * returns -ENOTSUP for them here.
 */
const struct eth_dev_ops vbr_sec_dev_ops = {
	.dev_close = vbr_dev_close,
	.dev_infos_get = vbr_sec_dev_infos_get,
	.link_update = vbr_sec_link_update,
	.stats_get = vbr_sec_stats_get,
	.stats_reset = vbr_sec_stats_reset,
	.xstats_get = vbr_sec_xstats_get,
	.xstats_get_names = vbr_sec_xstats_get_names,
	.xstats_reset = vbr_sec_xstats_reset,
	.rss_hash_conf_get = vbr_sec_rss_hash_conf_get,
	.reta_query = vbr_sec_reta_query,
};

/*
 * A secondary's Rx and Tx burst: no packet received, none taken (the
 * caller keeps its mbufs); said once per process.
 */
static uint16_t
vbr_sec_burst(void *q, struct rte_mbuf **pkts, uint16_t n)
{
	RTE_SET_USED(q);
	RTE_SET_USED(pkts);
	RTE_SET_USED(n);
	if (__atomic_exchange_n(&vbr_mp_burst_said, 1, __ATOMIC_RELAXED) == 0)
		VBR_LOG(WARNING, "Rx/Tx burst in a secondary process: not "
			"supported, 0 packets (a vbr port's queues are the "
			"primary's)");
	return 0;
}

/**
 * Secondary probe: attach to the port the primary made, with the
 * secondary's ops and bursts. Return 0 or -errno.
 */
int
vbr_mp_probe_secondary(struct rte_vdev_device *vdev)
{
	const char *name = rte_vdev_device_name(vdev);
	struct rte_eth_dev *dev;

	dev = rte_eth_dev_attach_secondary(name);
	if (dev == NULL) {
		VBR_LOG(ERR, "%s: the primary process has no such port",
			name);
		return -ENODEV;
	}
	dev->device = &vdev->device;
	dev->dev_ops = &vbr_sec_dev_ops;
	dev->rx_pkt_burst = vbr_sec_burst;
	dev->tx_pkt_burst = vbr_sec_burst;
	rte_eth_dev_probing_finish(dev);
	VBR_LOG(INFO, "%s: port %u attached in a secondary process", name,
		dev->data->port_id);
	return 0;
}
