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

#include <swverbs.h>

#include "vbr.h"
#include "vbr_utils.h"

#define VBR_ARG_DEV "dev"
#define VBR_ARG_WIRE "wire"
#define VBR_ARG_MAC "mac"
#define VBR_ARG_ENGINE_CPU "engine_cpu"
#define VBR_ARG_SHARE_WIRE "share_wire"
#define VBR_ARG_PROFILE "profile"

/*
 * The swverbs profile of a wire= port when profile= is not given: "mlx5",
 * swverbs' own default (the driver keeps to what a ConnectX accepts).
 */
#define VBR_PROFILE_DEFAULT "mlx5"

static const char * const vbr_valid_args[] = {
	VBR_ARG_DEV,
	VBR_ARG_WIRE,
	VBR_ARG_MAC,
	VBR_ARG_ENGINE_CPU,
	VBR_ARG_SHARE_WIRE,
	VBR_ARG_PROFILE,
	NULL,
};

/** Parsed devargs. */
struct vbr_args {
	const char *dev;		/**< verbs device name, or NULL */
	const char *wire;		/**< swverbs wire, or NULL */
	struct rte_ether_addr mac;	/**< port MAC, if has_mac */
	int engine_cpu;			/**< swverbs engine CPU, -1: none */
	unsigned int has_mac:1;		/**< mac= given */
	unsigned int has_cpu:1;		/**< engine_cpu= given */
	unsigned int share_wire:1;	/**< share_wire=1: interface shared */
	unsigned int profile;		/**< swverbs profile flag */
	const char *profile_name;	/**< profile=, or NULL */
};

static int
vbr_parse_args(const char *name, struct rte_kvargs *kvlist,
	       struct vbr_args *args)
{
	unsigned int i, k;

	memset(args, 0, sizeof(*args));
	args->engine_cpu = -1;
	for (i = 0; i < kvlist->count; i++) {
		const char *key = kvlist->pairs[i].key;
		const char *value = kvlist->pairs[i].value;

		for (k = 0; vbr_valid_args[k] != NULL; k++)
			if (strcmp(key, vbr_valid_args[k]) == 0)
				break;
		if (vbr_valid_args[k] == NULL) {
			VBR_LOG(ERR, "%s: unknown devarg '%s' (valid: dev, "
				"wire, mac, engine_cpu, share_wire, profile)",
				name, key);
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
		if (strcmp(key, VBR_ARG_DEV) == 0) {
			args->dev = value;
		} else if (strcmp(key, VBR_ARG_WIRE) == 0) {
			args->wire = value;
		} else if (strcmp(key, VBR_ARG_MAC) == 0) {
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
		} else if (strcmp(key, VBR_ARG_SHARE_WIRE) == 0) {
			if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0) {
				VBR_LOG(ERR, "%s: share_wire=%s: give 0 or 1",
					name, value);
				return -EINVAL;
			}
			args->share_wire = value[0] == '1';
		} else if (strcmp(key, VBR_ARG_PROFILE) == 0) {
			if (swv_profile_parse(value, &args->profile) != 0) {
				VBR_LOG(ERR, "%s: profile=%s: give mlx5 or full",
					name, value);
				return -EINVAL;
			}
			args->profile_name = value;
		} else {
			char *end;
			long cpu;

			errno = 0;
			cpu = strtol(value, &end, 10);
			if (errno != 0 || *end != '\0' || cpu < 0 ||
			    cpu >= RTE_MAX_LCORE * 4) {
				VBR_LOG(ERR, "%s: engine_cpu=%s: not a CPU "
					"number", name, value);
				return -EINVAL;
			}
			args->engine_cpu = cpu;
			args->has_cpu = 1;
		}
	}
	if (args->dev != NULL && args->wire != NULL) {
		VBR_LOG(ERR, "%s: dev=%s and wire=%s: give one of them only",
			name, args->dev, args->wire);
		return -EINVAL;
	}
	if (args->dev == NULL && args->wire == NULL) {
		VBR_LOG(ERR, "%s: give dev=<verbs device> or "
			"wire=loop|pair:<name>|af_packet:<ifname>", name);
		return -EINVAL;
	}
	if (args->share_wire && (args->wire == NULL ||
				 strncmp(args->wire, "af_packet:", 10) != 0)) {
		VBR_LOG(ERR, "%s: share_wire=1 applies to "
			"wire=af_packet:<ifname> only", name);
		return -EINVAL;
	}
	if (args->dev != NULL && args->profile_name != NULL) {
		VBR_LOG(ERR, "%s: profile=%s applies to wire= only", name,
			args->profile_name);
		return -EINVAL;
	}
	if (args->profile_name == NULL)
		swv_profile_parse(VBR_PROFILE_DEFAULT, &args->profile);
	if (args->dev != NULL && args->has_cpu) {
		VBR_LOG(ERR, "%s: engine_cpu=%d applies to wire= only", name,
			args->engine_cpu);
		return -EINVAL;
	}
	if (args->wire != NULL && strcmp(args->wire, "loop") != 0 &&
	    strncmp(args->wire, "pair:", 5) != 0 &&
	    strncmp(args->wire, "af_packet:", 10) != 0) {
		VBR_LOG(ERR, "%s: wire=%s: unknown wire kind (loop, "
			"pair:<name>, af_packet:<ifname>)", name, args->wire);
		return -EINVAL;
	}
	if (args->wire != NULL && strchr(args->wire, ':') != NULL &&
	    strchr(args->wire, ':')[1] == '\0') {
		VBR_LOG(ERR, "%s: wire=%s: name missing after ':'", name,
			args->wire);
		return -EINVAL;
	}
	return 0;
}

/* Create the swverbs device of a wire= port. */
static int
vbr_sw_device_create(const char *name, const struct vbr_args *args)
{
	static bool placed;	/* an engine CPU was chosen in this process */
	int ret, cpu;

	if (args->has_cpu) {
		ret = swv_set_engine_cpu(args->engine_cpu);
		if (ret != 0) {
			VBR_LOG(ERR, "%s: engine_cpu=%d: %s", name,
				args->engine_cpu, strerror(ret));
			return -ret;
		}
		placed = true;
	} else if (!placed) {
		/*
		 * Default placement: the main lcore's CPU. DPDK applications
		 * (testpmd among them) keep busy-polling work off the main
		 * lcore, while an unpinned engine may land on a forwarding
		 * core and halve both.
		 */
		cpu = rte_lcore_to_cpu_id(rte_get_main_lcore());
		if (cpu >= 0 && swv_set_engine_cpu(cpu) == 0)
			VBR_LOG(DEBUG, "%s: swverbs engine on CPU %d (main "
				"lcore)", name, cpu);
		placed = true;
	}
	ret = swv_device_create_flags(name, args->wire,
				      args->has_mac ? args->mac.addr_bytes :
				      NULL, args->profile | (args->share_wire ?
				      SWV_DEVICE_SHARE_WIRE : 0));
	switch (ret) {
	case 0:
		return 0;
	case EBUSY:
		if (strncmp(args->wire, "pair:", 5) == 0)
			VBR_LOG(ERR, "%s: wire=%s: the pair cable already has "
				"two ends", name, args->wire);
		else
			VBR_LOG(ERR, "%s: wire=%s: the interface is the wire "
				"of another port already (both would get every "
				"frame); give share_wire=1 to every port on it "
				"to share it", name, args->wire);
		break;
	case ENODEV:
		VBR_LOG(ERR, "%s: wire=%s: no such network interface", name,
			args->wire);
		break;
	case EPERM:
		VBR_LOG(ERR, "%s: wire=%s: AF_PACKET needs CAP_NET_RAW", name,
			args->wire);
		break;
	case EEXIST:
		VBR_LOG(ERR, "%s: a swverbs device of that name exists", name);
		break;
	case EINVAL:
		VBR_LOG(ERR, "%s: wire=%s: invalid wire", name, args->wire);
		break;
	default:
		VBR_LOG(ERR, "%s: wire=%s: %s", name, args->wire,
			strerror(ret));
		break;
	}
	return -ret;
}

/**
 * Port start: a swverbs port whose af_packet interface was deleted (the
 * device raised its removal event) is bound to the interface that has the
 * name now. Return 0 or -errno.
 */
int
vbr_sw_rebind(struct vbr_priv *priv)
{
	int ret;

	if (!priv->sw_device)
		return 0;
	ret = swv_device_rebind(priv->ibdev_name);
	switch (ret) {
	case 0:
		return 0;
	case ENODEV:
		VBR_LOG(ERR, "port %u: its interface was deleted and none has "
			"its name now: create it, then start the port again",
			priv->dev->data->port_id);
		break;
	case EBUSY:
		VBR_LOG(ERR, "port %u: the re-created interface is the wire of "
			"another port now", priv->dev->data->port_id);
		break;
	default:
		VBR_LOG(ERR, "port %u: cannot bind the re-created interface: "
			"%s", priv->dev->data->port_id, strerror(ret));
		break;
	}
	return -ret;
}

/**
 * mtu_set: the MTU of a swverbs port's wire (an af_packet interface's own
 * MTU). Hardware ports keep their netdev's MTU. Return 0 or -errno.
 */
int
vbr_sw_set_mtu(struct vbr_priv *priv, uint16_t mtu)
{
	int ret;

	if (!priv->sw_device)
		return 0;
	ret = swv_set_port_mtu(priv->ctx, mtu);
	if (ret != 0)
		VBR_LOG(ERR, "port %u: MTU %u: the wire cannot carry it: %s",
			priv->dev->data->port_id, mtu, strerror(ret));
	return -ret;
}

/* Open the named device of a backend. */
static struct ibv_context *
vbr_open(const struct vbr_glue *glue, const char *ibdev)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n = 0, i;

	list = glue->get_device_list(&n);
	if (list == NULL) {
		VBR_LOG(ERR, "%s: get_device_list: %s", glue->name,
			strerror(errno));
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (strcmp(glue->get_device_name(list[i]), ibdev) == 0)
			break;
	if (i == n) {
		VBR_LOG(ERR, "%s: no verbs device named %s (%d devices)",
			glue->name, ibdev, n);
		errno = ENODEV;
	} else {
		ctx = glue->open_device(list[i]);
		if (ctx == NULL)
			VBR_LOG(ERR, "%s: open_device(%s): %s", glue->name,
				ibdev, strerror(errno));
	}
	glue->free_device_list(list);
	return ctx;
}

/* Undo a probe, whatever point it reached. */
static void
vbr_release(struct vbr_priv *priv)
{
	int ret;

	vbr_intr_uninstall(priv);
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
		ret = priv->glue->close_device(priv->ctx);
		if (ret != 0)
			VBR_LOG(ERR, "%s: close_device: %s", priv->ibdev_name,
				strerror(ret));
		priv->ctx = NULL;
	}
	if (priv->sw_device) {
		ret = swv_device_destroy(priv->ibdev_name);
		if (ret != 0)
			VBR_LOG(ERR, "%s: swv_device_destroy: %s",
				priv->ibdev_name, strerror(ret));
		priv->sw_device = 0;
	}
}

int
vbr_dev_close(struct rte_eth_dev *dev)
{
	struct vbr_priv *priv = dev->data->dev_private;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY)
		return 0;
	vbr_dev_release_queues(dev);
	vbr_release(priv);
	return 0;
}

static int
vbr_probe(struct rte_vdev_device *vdev)
{
	const char *name = rte_vdev_device_name(vdev);
	const char *params = rte_vdev_device_args(vdev);
	struct rte_kvargs *kvlist;
	struct vbr_args args;
	struct rte_eth_dev *dev;
	struct vbr_priv *priv;
	const char *why = NULL;
	int ret;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY) {
		VBR_LOG(ERR, "%s: secondary processes are not supported", name);
		return -ENOTSUP;
	}
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
	TAILQ_INIT(&priv->mrs);
	SLIST_INIT(&priv->mr_retired);
	TAILQ_INIT(&priv->flows);
	LIST_INIT(&priv->rss_objs);
	pthread_mutex_init(&priv->flow_lock, NULL);
	priv->flow_lock_init = 1;
	if (args.wire != NULL) {
		priv->glue = &vbr_glue_swverbs;
		snprintf(priv->ibdev_name, sizeof(priv->ibdev_name), "%s", name);
		ret = vbr_sw_device_create(name, &args);
		if (ret != 0)
			goto error;
		priv->sw_device = 1;
	} else {
		priv->glue = vbr_glue_ibverbs_load(&why);
		if (priv->glue == NULL) {
			VBR_LOG(ERR, "%s: dev=%s: %s", name, args.dev, why);
			ret = -ENOTSUP;
			goto error;
		}
		snprintf(priv->ibdev_name, sizeof(priv->ibdev_name), "%s",
			 args.dev);
	}
	priv->ctx = vbr_open(priv->glue, priv->ibdev_name);
	if (priv->ctx == NULL) {
		ret = -(errno != 0 ? errno : ENODEV);
		goto error;
	}
	ret = priv->glue->query_device_ex(priv->ctx, NULL, &priv->attr);
	if (ret != 0) {
		VBR_LOG(ERR, "%s: query_device_ex: %s", name, strerror(ret));
		ret = -ret;
		goto error;
	}
	priv->max_rx_pktlen = args.wire != NULL ? SWV_MAX_FRAME :
			      RTE_ETHER_MAX_JUMBO_FRAME_LEN;
	priv->pd = priv->glue->alloc_pd(priv->ctx);
	if (priv->pd == NULL) {
		ret = -errno;
		VBR_LOG(ERR, "%s: alloc_pd: %s", name, strerror(errno));
		goto error;
	}
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
	ret = vbr_intr_install(priv);
	if (ret != 0)
		goto error;
	dev->dev_ops = &vbr_dev_ops;
	dev->rx_pkt_burst = vbr_rx_burst;
	dev->tx_pkt_burst = vbr_tx_burst;
	dev->data->dev_flags |= RTE_ETH_DEV_INTR_LSC | RTE_ETH_DEV_INTR_RMV |
				RTE_ETH_DEV_FLOW_OPS_THREAD_SAFE |
				RTE_ETH_DEV_AUTOFILL_QUEUE_XSTATS;
	vbr_link_update(dev, 0);
	rte_eth_dev_probing_finish(dev);
	VBR_LOG(INFO, "%s: port %u on %s device %s, MAC "
		RTE_ETHER_ADDR_PRT_FMT, name, dev->data->port_id,
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
	"wire=loop|pair:<name>|af_packet:<ifname> "
	"mac=<xx:xx:xx:xx:xx:xx> "
	"engine_cpu=<int> "
	"share_wire=0|1 "
	"profile=mlx5|full");
RTE_LOG_REGISTER_DEFAULT(vbr_logtype, NOTICE);
