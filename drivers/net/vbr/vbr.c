/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * vbr: a DPDK PMD over RDMA verbs. Probe, devargs, close and remove; the
 * registration is at the bottom.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bus_vdev_driver.h>
#include <ethdev_driver.h>
#include <ethdev_vdev.h>
#include <rte_ether.h>
#include <rte_kvargs.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "vbr.h"
#include "vbr_utils.h"

/* meson.build's project() version, the one version of a vbr build */
#ifndef VBR_VERSION
#error "VBR_VERSION is not defined: the build passes project()'s version"
#endif

#define VBR_ARG_MAC "mac"
/** Backend devargs a port may give (each key at most once). */
#define VBR_MAX_BACKEND_ARGS 16
/** Longest message of a backend. */
#define VBR_WHY_LEN 512

/** Parsed devargs. */
struct vbr_args {
	const struct vbr_glue_backend *backend;	/**< the one selected */
	struct vbr_glue_port_conf conf;	/**< what the backend is asked */
	struct vbr_glue_arg args[VBR_MAX_BACKEND_ARGS]; /**< conf.args */
	const struct vbr_glue_backend *owner[VBR_MAX_BACKEND_ARGS];
					/**< backend each of args is for */
	struct rte_ether_addr mac;	/**< port MAC, if has_mac */
	unsigned int has_mac:1;		/**< mac= given */
};

/*
 * The backend a devarg belongs to; *selects: it is the key that picks it.
 * NULL for mac= (every backend's) and for unknown keys (*known false).
 */
static const struct vbr_glue_backend *
vbr_arg_backend(const char *key, bool *selects, bool *known)
{
	const struct vbr_glue_backend *b;
	unsigned int i;

	*selects = false;
	*known = true;
	if (strcmp(key, VBR_ARG_MAC) == 0)
		return NULL;
	for (b = vbr_glue_backends; b->key != NULL; b++) {
		if (strcmp(key, b->key) == 0) {
			*selects = true;
			return b;
		}
		for (i = 0; b->args[i] != NULL; i++)
			if (strcmp(key, b->args[i]) == 0)
				return b;
	}
	*known = false;
	return NULL;
}

/* "dev, wire, mac, <the backends' other devargs>" into buf. */
static void
vbr_valid_args(char *buf, size_t size)
{
	const struct vbr_glue_backend *b;
	size_t n = 0;
	unsigned int i;

	buf[0] = '\0';
	for (b = vbr_glue_backends; b->key != NULL; b++)
		n += snprintf(buf + n, n < size ? size - n : 0, "%s, ",
			      b->key);
	n += snprintf(buf + n, n < size ? size - n : 0, "%s", VBR_ARG_MAC);
	for (b = vbr_glue_backends; b->key != NULL; b++)
		for (i = 0; b->args[i] != NULL; i++)
			n += snprintf(buf + n, n < size ? size - n : 0, ", %s",
				      b->args[i]);
}

/* "dev=<verbs device> or wire=..." into buf. */
static void
vbr_backend_usage(char *buf, size_t size)
{
	const struct vbr_glue_backend *b;
	size_t n = 0;

	buf[0] = '\0';
	for (b = vbr_glue_backends; b->key != NULL; b++)
		n += snprintf(buf + n, n < size ? size - n : 0, "%s%s",
			      b == vbr_glue_backends ? "" : " or ", b->usage);
}

static int
vbr_parse_args(const char *name, struct rte_kvargs *kvlist,
	       struct vbr_args *args)
{
	const struct vbr_glue_backend *b, *other = NULL;
	const char *target = NULL, *other_target = NULL;
	char msg[256];
	unsigned int i, n = 0;
	bool selects, known;

	memset(args, 0, sizeof(*args));
	args->conf.port = name;
	for (i = 0; i < kvlist->count; i++) {
		const char *key = kvlist->pairs[i].key;
		const char *value = kvlist->pairs[i].value;

		b = vbr_arg_backend(key, &selects, &known);
		if (!known) {
			vbr_valid_args(msg, sizeof(msg));
			VBR_LOG(ERR, "%s: unknown devarg '%s' (valid: %s)", name,
				key, msg);
			return -EINVAL;
		}
		if (value == NULL || value[0] == '\0') {
			VBR_LOG(ERR, "%s: devarg '%s' needs a value", name, key);
			return -EINVAL;
		}
		if (rte_kvargs_count(kvlist, key) > 1) {
			VBR_LOG(ERR, "%s: devarg '%s' given %u times: give it "
				"once", name, key, rte_kvargs_count(kvlist, key));
			return -EINVAL;
		}
		if (b == NULL) {
			if (rte_ether_unformat_addr(value, &args->mac) != 0 ||
			    strlen(value) != 17) {
				VBR_LOG(ERR, "%s: mac=%s: not a MAC address "
					"(xx:xx:xx:xx:xx:xx)", name, value);
				return -EINVAL;
			}
			if (!rte_is_unicast_ether_addr(&args->mac) ||
			    rte_is_zero_ether_addr(&args->mac)) {
				VBR_LOG(ERR, "%s: mac=%s: must be a non-zero "
					"unicast address", name, value);
				return -EINVAL;
			}
			args->has_mac = 1;
		} else if (selects && args->backend == NULL) {
			args->backend = b;
			target = value;
		} else if (selects) {
			other = b;
			other_target = value;
		} else {
			/* Each key once, so never more than the keys. */
			RTE_VERIFY(n < VBR_MAX_BACKEND_ARGS);
			args->args[n].key = key;
			args->args[n].value = value;
			args->owner[n++] = b;
		}
	}
	if (other != NULL) {
		VBR_LOG(ERR, "%s: %s=%s and %s=%s: give one of them only",
			name, args->backend->key, target, other->key,
			other_target);
		return -EINVAL;
	}
	if (args->backend == NULL) {
		vbr_backend_usage(msg, sizeof(msg));
		VBR_LOG(ERR, "%s: give %s", name, msg);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		if (args->owner[i] != args->backend) {
			VBR_LOG(ERR, "%s: %s=%s applies to %s= only", name,
				args->args[i].key, args->args[i].value,
				args->owner[i]->key);
			return -EINVAL;
		}
	}
	args->conf.target = target;
	args->conf.mac = args->has_mac ? args->mac.addr_bytes : NULL;
	args->conf.args = args->args;
	args->conf.nb_args = n;
	return 0;
}

/**
 * Port start: a port whose wire went away (an af_packet interface deleted,
 * the device raised its removal event) is bound to the interface that has
 * the name now. Return 0 or -errno.
 */
int
vbr_port_rebind(struct vbr_priv *priv)
{
	char why[VBR_WHY_LEN];
	int ret;

	ret = priv->glue->port_rebind(priv->ctx, why, sizeof(why));
	if (ret != 0)
		VBR_LOG(ERR, "port %u: %s", priv->dev->data->port_id, why);
	else
		__atomic_store_n(&priv->removed, 0, __ATOMIC_RELEASE);
	return -ret;
}

/**
 * mtu_set: the MTU of the port's wire (an af_packet interface's own MTU,
 * a dev= port's netdev's, as mlx5 sets it); the receive drop follows it.
 * The only place the driver changes an interface's MTU. Return 0 or
 * -errno.
 */
int
vbr_port_set_mtu(struct vbr_priv *priv, uint16_t mtu)
{
	char why[VBR_WHY_LEN];
	int ret;

	ret = priv->glue->port_set_mtu(priv->ctx, mtu, why, sizeof(why));
	if (ret != 0)
		VBR_LOG(ERR, "port %u: %s", priv->dev->data->port_id, why);
	return -ret;
}

/**
 * link up/down: the port's netdev IFF_UP, or its in-memory cable end.
 * Return 0 or -errno.
 */
int
vbr_port_set_link(struct vbr_priv *priv, bool up)
{
	char why[VBR_WHY_LEN];
	int ret;

	ret = priv->glue->port_set_link(priv->ctx, up, why, sizeof(why));
	if (ret != 0)
		VBR_LOG(ERR, "port %u: %s", priv->dev->data->port_id, why);
	return -ret;
}

/*
 * The wire's MTU limits, from the extended port query: the largest frame
 * the port takes and the MTU it starts with (the wire's own, e.g. a veth's
 * 1500 or 9000). A device that cannot say keeps the backend's frame limit.
 */
static void
vbr_port_query_mtu(struct vbr_priv *priv)
{
	struct vbr_glue_port_attr_ex pa;

	memset(&pa, 0, sizeof(pa));
	pa.comp_mask = VBR_GLUE_PORT_EX_ETH_MTU | VBR_GLUE_PORT_EX_ETH_MAX_MTU;
	if (priv->glue->query_port_ex(priv->ctx, VBR_PORT_NUM, &pa) == 0) {
		priv->max_rx_pktlen = RTE_MIN(priv->max_rx_pktlen,
					      pa.eth_max_mtu +
					      VBR_ETH_OVERHEAD);
		priv->dev->data->mtu = (uint16_t)RTE_MIN(pa.eth_mtu,
							 (uint32_t)UINT16_MAX);
		return;
	}
	/* ibverbs: no largest MTU; the netdev's own MTU still. */
	pa.comp_mask = VBR_GLUE_PORT_EX_ETH_MTU;
	if (priv->glue->query_port_ex(priv->ctx, VBR_PORT_NUM, &pa) == 0)
		priv->dev->data->mtu = (uint16_t)RTE_MIN(pa.eth_mtu,
							 (uint32_t)UINT16_MAX);
}

/* The wire's MTU now (an interface's), 0 when the device cannot say. */
static uint32_t
vbr_port_wire_mtu(struct vbr_priv *priv)
{
	struct vbr_glue_port_attr_ex pa;

	memset(&pa, 0, sizeof(pa));
	pa.comp_mask = VBR_GLUE_PORT_EX_ETH_MTU;
	if (priv->glue->query_port_ex(priv->ctx, VBR_PORT_NUM, &pa) != 0)
		return 0;
	return pa.eth_mtu;
}

/**
 * dev_configure: the wire's MTU (an interface's, a dev= port's netdev's)
 * made the port's. ethdev stores rxmode.mtu (1500 when not given) in
 * dev->data->mtu at configure without an mtu_set call; mlx5 then sets its
 * netdev's MTU to it, unless it is that already, and fails the configure
 * when it cannot (mlx5_dev_configure() -> mlx5_dev_set_mtu()): so does
 * vbr. Return 0 or -errno.
 */
int
vbr_port_apply_mtu(struct vbr_priv *priv)
{
	uint16_t mtu = priv->dev->data->mtu;
	int ret;

	if (vbr_port_wire_mtu(priv) == mtu)
		return 0;
	ret = vbr_port_set_mtu(priv, mtu);
	if (ret != 0)
		VBR_LOG(ERR, "port %u: cannot set the MTU %u the port is "
			"configured with (rxmode.mtu, 1500 when not given): %s",
			priv->dev->data->port_id, mtu, strerror(-ret));
	return ret;
}

/**
 * dev_start: the receive drop at the MTU the port reports (swverbs drops
 * above it; a device that drops at its netdev's MTU only, ibverbs, keeps
 * doing so). The wire's own MTU was set at configure and by mtu_set; one
 * lowered since from outside is only said. Return 0 or -errno.
 */
int
vbr_port_sync_mtu(struct vbr_priv *priv)
{
	uint16_t mtu = priv->dev->data->mtu;
	uint32_t wire = vbr_port_wire_mtu(priv);
	int ret;

	if (wire != 0 && wire < mtu)
		VBR_LOG(NOTICE, "port %u: MTU %u above the interface's %u, "
			"which bounds what the port receives; mtu_set changes "
			"it", priv->dev->data->port_id, mtu, wire);
	ret = priv->glue->port_set_rx_mtu(priv->ctx, mtu);
	if (ret == ENOSYS)
		return 0;
	return -ret;
}

/* Undo a probe, whatever point it reached. */
static void
vbr_release(struct vbr_priv *priv)
{
	char why[VBR_WHY_LEN];
	int ret;

	vbr_mp_uninit(priv);
	vbr_intr_uninstall(priv);
	vbr_tm_release(priv);
	vbr_stats_release(priv);
	vbr_flow_release(priv);
	vbr_mr_release(priv);
	if (priv->pd != NULL) {
		ret = priv->glue->dealloc_pd(priv->pd);
		if (ret != 0)
			VBR_LOG(ERR, "%s: dealloc_pd: %s", priv->ibdev_name,
				strerror(ret));
		priv->pd = NULL;
	}
	if (priv->ctx != NULL) {
		vbr_vport_restore(priv);
		ret = priv->glue->port_close(priv->ctx, why, sizeof(why));
		if (ret != 0)
			VBR_LOG(ERR, "%s: %s", priv->ibdev_name, why);
		priv->ctx = NULL;
	}
}

int
vbr_dev_close(struct rte_eth_dev *dev)
{
	struct vbr_priv *priv = dev->data->dev_private;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY)
		return 0;
	vbr_tel_port_del(dev);
	vbr_dev_release_queues(dev);
	vbr_release(priv);
	return 0;
}


/*
 * Whether the glue shows a CQ's indexes (cq_peek), tried on a CQ made for
 * it: rx_queue_count and rx_descriptor_status need it (not on ibverbs).
 */
static bool
vbr_cq_peek_works(struct vbr_priv *priv)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 1,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN,
	};
	struct vbr_glue_cq_peek peek;
	struct ibv_cq_ex *cq;
	bool ok;

	cq = priv->glue->create_cq_ex(priv->ctx, &attr);
	if (cq == NULL)
		return false;
	ok = priv->glue->cq_peek(cq, &peek) == 0;
	priv->glue->destroy_cq(ibv_cq_ex_to_cq(cq));
	return ok;
}

static int
vbr_probe(struct rte_vdev_device *vdev)
{
	const char *name = rte_vdev_device_name(vdev);
	const char *params = rte_vdev_device_args(vdev);
	struct rte_kvargs *kvlist;
	char port_why[VBR_WHY_LEN];
	struct vbr_glue_port port = { 0 };
	struct vbr_args args;
	struct rte_eth_dev *dev;
	struct vbr_priv *priv;
	const char *why = NULL;
	int ret;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY)
		return vbr_mp_probe_secondary(vdev);
	kvlist = rte_kvargs_parse(params != NULL ? params : "", NULL);
	if (kvlist == NULL) {
		VBR_LOG(ERR, "%s: cannot parse devargs '%s'", name, params);
		return -EINVAL;
	}
	ret = vbr_parse_args(name, kvlist, &args);
	if (ret != 0)
		goto out_kvargs;
	if (strlen(name) >= sizeof(priv->ibdev_name)) {
		VBR_LOG(ERR, "%s: name too long", name);
		ret = -EINVAL;
		goto out_kvargs;
	}
	dev = rte_eth_vdev_allocate(vdev, sizeof(*priv));
	if (dev == NULL) {
		VBR_LOG(ERR, "%s: cannot allocate the ethdev", name);
		ret = -ENOMEM;
		goto out_kvargs;
	}
	priv = dev->data->dev_private;
	priv->dev = dev;
	rte_spinlock_init(&priv->mr_lock);
	rte_spinlock_init(&priv->link_lock);
	rte_spinlock_init(&priv->qp_cnt_lock);
	TAILQ_INIT(&priv->mrs);
	SLIST_INIT(&priv->mr_retired);
	TAILQ_INIT(&priv->flows);
	LIST_INIT(&priv->rss_objs);
	pthread_mutex_init(&priv->flow_lock, NULL);
	priv->flow_lock_init = 1;
	priv->glue = args.backend->load(&why);
	if (priv->glue == NULL) {
		VBR_LOG(ERR, "%s: %s=%s: %s", name, args.backend->key,
			args.conf.target, why);
		ret = -ENOTSUP;
		goto error;
	}
	ret = priv->glue->port_open(&args.conf, &port, port_why,
				    sizeof(port_why));
	if (ret != 0) {
		VBR_LOG(ERR, "%s: %s", name, port_why);
		ret = -ret;
		goto error;
	}
	priv->ctx = port.ctx;
	if (port.netdev_how[0] != '\0') {
		/* a choice among several is worth a NOTICE; the one is not */
		if (port.netdev[0] != '\0' &&
		    strstr(port.netdev_how, "only") != NULL)
			VBR_LOG(INFO, "%s: netdev %s (%s)", name, port.netdev,
				port.netdev_how);
		else if (port.netdev[0] != '\0')
			VBR_LOG(NOTICE, "%s: netdev %s (%s)", name,
				port.netdev, port.netdev_how);
		else
			VBR_LOG(NOTICE, "%s: no netdev (%s)", name,
				port.netdev_how);
	}
	snprintf(priv->ibdev_name, sizeof(priv->ibdev_name), "%s",
		 port.ibdev_name);
	priv->max_rx_pktlen = port.max_frame;
	priv->vlan_any_tpid = port.vlan_any_tpid;
	vbr_port_query_mtu(priv);
	ret = priv->glue->query_device_ex(priv->ctx, NULL, &priv->attr);
	if (ret != 0) {
		VBR_LOG(ERR, "%s: query_device_ex: %s", name, strerror(ret));
		ret = -ret;
		goto error;
	}
	priv->pd = priv->glue->alloc_pd(priv->ctx);
	if (priv->pd == NULL) {
		ret = -errno;
		VBR_LOG(ERR, "%s: alloc_pd: %s", name, strerror(errno));
		goto error;
	}
	vbr_txq_probe_limits(priv);
	dev->data->mac_addrs = rte_zmalloc("vbr_mac", VBR_MAX_MAC_ADDRS *
					   sizeof(struct rte_ether_addr), 0);
	if (dev->data->mac_addrs == NULL) {
		ret = -ENOMEM;
		goto error;
	}
	if (args.has_mac) {
		dev->data->mac_addrs[0] = args.mac;
	} else {
		ret = priv->glue->query_port_mac(priv->ctx,
					dev->data->mac_addrs[0].addr_bytes);
		if (ret != 0) {
			VBR_LOG(ERR, "%s: cannot read the port MAC (%s): "
				"give mac=", name, strerror(ret));
			ret = -ret;
			goto error;
		}
	}
	ret = vbr_vport_init(priv);
	if (ret != 0)
		goto error;
	ret = vbr_intr_install(priv);
	if (ret != 0)
		goto error;
	ret = vbr_mp_init(priv);
	if (ret != 0)
		goto error;
	dev->dev_ops = &vbr_dev_ops;
	dev->rx_pkt_burst = vbr_rx_burst;
	dev->tx_pkt_burst = vbr_tx_burst;
	/* Without them ethdev gives -ENOTSUP (the count op cannot). */
	if (vbr_cq_peek_works(priv)) {
		dev->rx_queue_count = vbr_rx_queue_count;
		dev->rx_descriptor_status = vbr_rx_descriptor_status;
	}
	dev->tx_descriptor_status = vbr_tx_descriptor_status;
	dev->data->dev_flags |= RTE_ETH_DEV_INTR_LSC | RTE_ETH_DEV_INTR_RMV |
				RTE_ETH_DEV_FLOW_OPS_THREAD_SAFE |
				RTE_ETH_DEV_AUTOFILL_QUEUE_XSTATS;
	vbr_link_update(dev, 0);
	rte_eth_dev_probing_finish(dev);
	vbr_tel_port_add(dev);
	VBR_LOG(INFO, "%s: port %u on %s device %s, MAC "
		RTE_ETHER_ADDR_PRT_FMT " (vbr " VBR_VERSION ")", name,
		dev->data->port_id,
		priv->glue->name, priv->ibdev_name,
		RTE_ETHER_ADDR_BYTES(&dev->data->mac_addrs[0]));
	rte_kvargs_free(kvlist);
	return 0;
error:
	vbr_release(priv);
	rte_eth_dev_release_port(dev);
out_kvargs:
	rte_kvargs_free(kvlist);
	return ret;
}

static int
vbr_remove(struct rte_vdev_device *vdev)
{
	struct rte_eth_dev *dev;

	dev = rte_eth_dev_allocated(rte_vdev_device_name(vdev));
	if (dev == NULL)
		return 0;	/* already closed */
	vbr_dev_close(dev);
	return rte_eth_dev_release_port(dev);
}

static struct rte_vdev_driver vbr_vdev_driver = {
	.probe = vbr_probe,
	.remove = vbr_remove,
};

RTE_PMD_REGISTER_VDEV(net_vbr, vbr_vdev_driver);
RTE_PMD_REGISTER_PARAM_STRING(net_vbr,
	"dev=<verbs device> "
	"wire=loop|pair:<name>|shm:<name>|af_packet:<ifname>|af_xdp:<ifname>[:<queue>] "
	"mac=<xx:xx:xx:xx:xx:xx> "
	"engine_cpu=<int> "
	"progress=thread|service|inline "
	"share_wire=0|1 "
	"profile=mlx5|mlx5-noburst|full");
RTE_LOG_REGISTER_DEFAULT(vbr_logtype, NOTICE);
