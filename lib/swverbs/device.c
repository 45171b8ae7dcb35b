/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Device registry, contexts, device and port queries, async events, port
 * counters.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "swv_netif.h"
#include "swv_priv.h"

pthread_mutex_t swv_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Lists are walked node by node (cds_list_for_each*, then cds_list_entry()
 * on each real node), never with cds_list_for_each_entry*(): those end by
 * taking the container of the list head, which is not inside such a struct,
 * and reading a member through it (UBSan: misaligned member access).
 */
static CDS_LIST_HEAD(swv_devices);

static struct swv_device *
device_find(const char *name)
{
	struct cds_list_head *node;
	struct swv_device *dev;

	cds_list_for_each(node, &swv_devices) {
		dev = cds_list_entry(node, struct swv_device, reg_node);
		if (strcmp(dev->name, name) == 0)
			return dev;
	}
	return NULL;
}

static bool
device_live(const struct ibv_device *ibdev)
{
	struct cds_list_head *node;

	cds_list_for_each(node, &swv_devices)
		if (&cds_list_entry(node, struct swv_device,
				    reg_node)->ibv_dev == ibdev)
			return true;
	return false;
}

/* A locally administered unicast address from a hash of the name. */
static void
mac_from_name(const char *name, uint8_t mac[6])
{
	uint64_t h = 0xcbf29ce484222325ull;
	const char *p;
	int i;

	for (p = name; *p != '\0'; p++) {
		h ^= (uint8_t)*p;
		h *= 0x100000001b3ull;
	}
	mac[0] = 0x02;
	for (i = 1; i < 6; i++)
		mac[i] = (uint8_t)(h >> (8 * (i - 1)));
}

int
swv_wire_parse(const char *wire, enum swv_wire_kind *kind, const char **name)
{
	static const struct {
		const char *prefix;	/* with its ':' when a name follows */
		enum swv_wire_kind kind;
	} kinds[] = {
		{ "loop", SWV_WIRE_LOOP },
		{ "pair:", SWV_WIRE_PAIR },
		{ "af_packet:", SWV_WIRE_AF_PACKET },
		{ "shm:", SWV_WIRE_SHM },
		{ "af_xdp:", SWV_WIRE_AF_XDP },
	};
	const char *rest = NULL;
	unsigned int i;
	size_t n;

	if (wire == NULL)
		return EINVAL;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		n = strlen(kinds[i].prefix);
		if (kinds[i].prefix[n - 1] != ':') {
			if (strcmp(wire, kinds[i].prefix) == 0)
				break;
		} else if (strncmp(wire, kinds[i].prefix, n) == 0) {
			rest = wire + n;
			break;
		}
	}
	if (i == sizeof(kinds) / sizeof(kinds[0]))
		return EINVAL;
	if (rest != NULL && rest[0] == '\0')
		return ENOENT;
	if (kind != NULL)
		*kind = kinds[i].kind;
	if (name != NULL)
		*name = rest;
	return 0;
}

static bool
wire_is_af_packet(const char *wire)
{
	enum swv_wire_kind kind;

	return swv_wire_parse(wire, &kind, NULL) == 0 &&
	       kind == SWV_WIRE_AF_PACKET;
}

/* A wire on a Linux interface (af_packet, af_xdp). */
static bool
wire_is_netdev(const char *wire)
{
	enum swv_wire_kind kind;

	return swv_wire_parse(wire, &kind, NULL) == 0 &&
	       (kind == SWV_WIRE_AF_PACKET || kind == SWV_WIRE_AF_XDP);
}

/*
 * Whether another device than @dev has @w's interface as its wire, and
 * they do not both share it (swv_lock).
 */
static bool
wire_taken(const struct swv_device *dev, struct swv_wire *w)
{
	const struct swv_device *o;
	struct cds_list_head *node;
	int idx;

	if (!wire_is_af_packet(dev->wire_spec))
		return false;
	idx = swv_wire_af_packet_ifindex(w);
	cds_list_for_each(node, &swv_devices) {
		o = cds_list_entry(node, struct swv_device, reg_node);
		if (o == dev || !wire_is_af_packet(o->wire_spec) ||
		    swv_wire_af_packet_ifindex(o->wire) != idx)
			continue;
		if (!(dev->flags & o->flags & SWV_DEVICE_SHARE_WIRE))
			return true;
	}
	return false;
}

/*
 * Open dev->wire_spec into *out (swv_lock). The port MAC is set from the
 * interface or the name when @set_mac.
 */
static int
wire_open(struct swv_device *dev, bool set_mac, struct swv_wire **out)
{
	enum swv_wire_kind kind;
	const char *name;
	uint8_t ifmac[6];
	int ret;

	if (swv_wire_parse(dev->wire_spec, &kind, &name) != 0)
		return EINVAL;
	if (kind == SWV_WIRE_LOOP) {
		ret = swv_wire_loop_open(dev, out);
	} else if (kind == SWV_WIRE_PAIR) {
		ret = swv_wire_pair_open(dev, name, out);
	} else if (kind == SWV_WIRE_SHM) {
		ret = swv_wire_shm_open(dev, name, out);
	} else {
		if (kind == SWV_WIRE_AF_XDP)
			ret = swv_wire_af_xdp_open(dev, name, ifmac, out);
		else
			ret = swv_wire_af_packet_open(dev, name, ifmac, out);
		if (ret == 0 && wire_taken(dev, *out)) {
			(*out)->ops->close(*out);
			*out = NULL;
			return EBUSY;
		}
		if (ret == 0 && set_mac)
			memcpy(dev->mac, ifmac, 6);
		if (ret == 0)
			memcpy(dev->netdev_mac, ifmac, 6);
		return ret;
	}
	if (ret == 0 && set_mac)
		mac_from_name(dev->name, dev->mac);
	return ret;
}

int
swv_profile_parse(const char *name, unsigned int *flag)
{
	if (name == NULL || flag == NULL)
		return EINVAL;
	if (strcmp(name, "mlx5") == 0)
		*flag = SWV_DEVICE_PROFILE_MLX5;
	else if (strcmp(name, "mlx5-vf") == 0)
		*flag = SWV_DEVICE_PROFILE_MLX5 | SWV_DEVICE_PROFILE_VF;
	else if (strcmp(name, "mlx5-noburst") == 0)
		*flag = SWV_DEVICE_PROFILE_MLX5 | SWV_DEVICE_PACE_NO_BURST;
	else if (strcmp(name, "full") == 0)
		*flag = SWV_DEVICE_PROFILE_FULL;
	else
		return EINVAL;
	return 0;
}

int
swv_device_create(const char *name, const char *wire, const uint8_t *mac)
{
	return swv_device_create_flags(name, wire, mac, 0);
}

int
swv_device_create_flags(const char *name, const char *wire,
			const uint8_t *mac, unsigned int flags)
{
	struct swv_device_attr attr = { .flags = flags, .engine = NULL };

	return swv_device_create_attr(name, wire, mac, &attr);
}

int
swv_device_create_attr(const char *name, const char *wire,
		       const uint8_t *mac, const struct swv_device_attr *attr)
{
	struct swv_device *dev;
	unsigned int flags;
	size_t len;
	int ret;

	if (attr == NULL)
		return EINVAL;
	flags = attr->flags;
	if (name == NULL || wire == NULL ||
	    (flags & ~(SWV_DEVICE_SHARE_WIRE | SWV_DEVICE_PROFILE_FULL |
		       SWV_DEVICE_PACE_NO_BURST | SWV_DEVICE_PROFILE_VF)) != 0 ||
	    (flags & SWV_DEVICE_PROFILE_FULL && flags & SWV_DEVICE_PACE_NO_BURST))
		return EINVAL;
	/* A VF's netdev is an interface: the wire must be on one. */
	if (flags & SWV_DEVICE_PROFILE_VF &&
	    (flags & SWV_DEVICE_PROFILE_FULL || !wire_is_netdev(wire)))
		return EINVAL;
	len = strlen(name);
	if (len == 0 || len >= SWV_NAME_MAX)
		return EINVAL;
	dev = swv_zalloc_aligned(sizeof(*dev));
	if (dev == NULL)
		return ENOMEM;
	dev->wire_spec = strdup(wire);
	if (dev->wire_spec == NULL) {
		free(dev);
		return ENOMEM;
	}
	dev->flags = flags;
	dev->strict = !(flags & SWV_DEVICE_PROFILE_FULL);
	dev->pace_burst = !(flags & SWV_DEVICE_PACE_NO_BURST);
	dev->netdev = dev->strict && wire_is_netdev(wire);
	dev->mtu = 1500;
	memcpy(dev->name, name, len + 1);
	if (mac != NULL)
		memcpy(dev->mac, mac, 6);
	dev->ibv_dev.node_type = IBV_NODE_CA;
	dev->ibv_dev.transport_type = IBV_TRANSPORT_IB;
	snprintf(dev->ibv_dev.name, sizeof(dev->ibv_dev.name), "%s", name);
	snprintf(dev->ibv_dev.dev_name, sizeof(dev->ibv_dev.dev_name),
		 "swverbs");
	CDS_INIT_LIST_HEAD(&dev->ctxs);
	CDS_INIT_LIST_HEAD(&dev->qps);
	CDS_INIT_LIST_HEAD(&dev->hqps);
	CDS_INIT_LIST_HEAD(&dev->wqs);
	dev->next_num = SWV_NUM_FIRST;
	pthread_mutex_init(&dev->wire_lock, NULL);
	pthread_mutex_init(&dev->mtu_lock, NULL);

	pthread_mutex_lock(&swv_lock);
	if (device_find(name) != NULL) {
		ret = EEXIST;
		goto err_unlock;
	}
	ret = wire_open(dev, mac == NULL, &dev->wire);
	if (ret != 0)
		goto err_unlock;
	/* Before the engine serves the device, nothing else drives the wire. */
	dev->link = dev->wire->ops->link_up(dev->wire);
	dev->speed = dev->wire->ops->speed_mbps(dev->wire);
	/*
	 * A device cap, as a ConnectX's packet_pacing_max_rate: the NIC's,
	 * whatever the wire it is plugged into negotiates.
	 */
	dev->pace_max = SWV_PACE_RATE_MAX;
	swv_dev_mtu_sync(dev);
	if (flags & SWV_DEVICE_PROFILE_VF) {
		ret = swv_vport_open(dev);
		if (ret != 0)
			goto err_wire;
	}
	ret = swv_engine_add(attr->engine, dev);
	if (ret != 0)
		goto err_vport;
	cds_list_add_tail(&dev->reg_node, &swv_devices);
	pthread_mutex_unlock(&swv_lock);
	return 0;

err_vport:
	swv_vport_close(dev);
err_wire:
	dev->wire->ops->close(dev->wire);
err_unlock:
	pthread_mutex_unlock(&swv_lock);
	free(dev->wire_spec);
	free(dev);
	return ret;
}

/* Add what a wire dropped on receive so far (dev->wire_lock held). */
static void
wire_rx_drops(struct swv_wire *w, uint64_t *full, uint64_t *bad)
{
	uint64_t f = 0, b = 0;

	if (w->ops->rx_drops != NULL)
		w->ops->rx_drops(w, &f, &b);
	*full += f;
	*bad += b;
}

int
swv_device_rebind(const char *name)
{
	struct swv_device *dev;
	struct swv_wire *w, *old;
	int ret;

	if (name == NULL)
		return ENOENT;
	pthread_mutex_lock(&swv_lock);
	dev = device_find(name);
	if (dev == NULL) {
		ret = ENOENT;
		goto out;
	}
	ret = 0;
	if (dev->wire->ops->gone == NULL || !dev->wire->ops->gone(dev->wire))
		goto out;
	ret = wire_open(dev, false, &w);
	if (ret != 0)
		goto out;
	/* The engine lets go of the old wire, then serves the new one. */
	swv_engine_del(dev);
	pthread_mutex_lock(&dev->wire_lock);
	old = dev->wire;
	/* The counts go on. */
	wire_rx_drops(old, &dev->wire_full_closed, &dev->wire_bad_closed);
	dev->wire = w;
	pthread_mutex_unlock(&dev->wire_lock);
	SWV_STORE(&dev->removed, 0);
	SWV_STORE(&dev->link, w->ops->link_up(w) ? 1 : 0);
	SWV_STORE(&dev->speed, w->ops->speed_mbps(w));
	swv_dev_mtu_sync(dev);
	old->ops->close(old);	/* out of reach: dev->wire is w */
	ret = swv_engine_add(dev->eng, dev);
out:
	pthread_mutex_unlock(&swv_lock);
	return ret;
}

int
swv_query_port_vf_netdev(struct ibv_context *context, char *ifname,
			 size_t len)
{
	struct swv_device *dev;
	int ret = 0;

	if (context == NULL || ifname == NULL || len == 0)
		return EINVAL;
	dev = swv_ctx_dev(context);
	if (!(dev->flags & SWV_DEVICE_PROFILE_VF))
		return ENOTSUP;
	pthread_mutex_lock(&swv_lock);
	if ((size_t)snprintf(ifname, len, "%s",
			     swv_wire_netif(dev->wire)->ifname) >= len)
		ret = EINVAL;
	pthread_mutex_unlock(&swv_lock);
	return ret;
}

int
swv_device_set_engine(const char *name, struct swv_engine *eng)
{
	struct swv_device *dev;
	int ret = 0;

	if (name == NULL)
		return ENOENT;
	if (eng == NULL)
		eng = swv_engine_default();
	pthread_mutex_lock(&swv_lock);
	dev = device_find(name);
	if (dev == NULL) {
		ret = ENOENT;
	} else if (dev->nctx > 0) {
		ret = EBUSY;	/* posters read dev->eng without a lock */
	} else if (dev->eng != eng) {
		struct swv_engine *old = dev->eng;

		/*
		 * With no context open the device has no rule nor counters
		 * object live; what it retired goes back to old's pool now,
		 * so that nothing of it is left in old.
		 */
		swv_retire_flush(old);
		swv_engine_del(dev);
		ret = swv_engine_add(eng, dev);
		/*
		 * Only the default engine's thread start can fail, and then
		 * old is another engine, whose add cannot: back where it was.
		 */
		if (ret != 0)
			swv_engine_add(old, dev);
	}
	pthread_mutex_unlock(&swv_lock);
	return ret;
}

static uint32_t dev_max_mtu(struct swv_device *dev);

int
swv_set_port_mtu(struct ibv_context *context, uint32_t mtu)
{
	struct swv_device *dev;
	int ret = 0;

	if (context == NULL)
		return EINVAL;
	dev = swv_ctx_dev(context);
	pthread_mutex_lock(&swv_lock);
	if (mtu == 0 || mtu > dev_max_mtu(dev))
		ret = EINVAL;
	else if (dev->wire->ops->set_mtu != NULL)
		ret = dev->wire->ops->set_mtu(dev->wire, mtu);
	if (ret == 0) {
		SWV_STORE(&dev->mtu, mtu);
		SWV_STORE(&dev->rx_mtu, 0);	/* Rx follows the wire again */
		swv_dev_mtu_sync(dev);
	}
	pthread_mutex_unlock(&swv_lock);
	return ret;
}

int
swv_set_port_rx_mtu(struct ibv_context *context, uint32_t mtu)
{
	struct swv_device *dev;

	if (context == NULL)
		return EINVAL;
	dev = swv_ctx_dev(context);
	pthread_mutex_lock(&swv_lock);
	SWV_STORE(&dev->rx_mtu, mtu);
	swv_dev_mtu_sync(dev);
	pthread_mutex_unlock(&swv_lock);
	return 0;
}

int
swv_set_port_link(struct ibv_context *context, bool up)
{
	struct swv_device *dev, *peer;
	int ret;

	if (context == NULL)
		return EINVAL;
	dev = swv_ctx_dev(context);
	pthread_mutex_lock(&swv_lock);
	if (dev->wire->ops->set_link == NULL) {
		ret = EOPNOTSUPP;
	} else {
		ret = dev->wire->ops->set_link(dev->wire, up);
		if (dev->wire->ops->peer != NULL)
			peer = dev->wire->ops->peer(dev->wire);
		else
			peer = NULL;
		/* No engine checks an inline device's link: now. */
		if (ret == 0 && swv_dev_inline(dev))
			swv_inline_link_sync(dev);
		if (ret == 0 && peer != NULL && swv_dev_inline(peer))
			swv_inline_link_sync(peer);
	}
	pthread_mutex_unlock(&swv_lock);
	return ret;
}

int
swv_device_destroy(const char *name)
{
	struct swv_device *dev, *peer;

	if (name == NULL)
		return ENOENT;
	pthread_mutex_lock(&swv_lock);
	dev = device_find(name);
	if (dev == NULL) {
		pthread_mutex_unlock(&swv_lock);
		return ENOENT;
	}
	if (dev->nctx > 0) {
		pthread_mutex_unlock(&swv_lock);
		return EBUSY;
	}
	cds_list_del(&dev->reg_node);
	/* An inline pair peer sees its link go down now (progress.c). */
	peer = swv_dev_inline(dev) ? dev->inl_peer : NULL;
	swv_engine_del(dev);	/* waits until the engine lets go */
	swv_vport_close(dev);
	dev->wire->ops->close(dev->wire);
	if (peer != NULL)
		swv_inline_link_sync(peer);
	swv_steer_free(dev->eng, dev->steer);
	swv_fgroups_free(dev);
	swv_pace_fini(dev);
	pthread_mutex_unlock(&swv_lock);
	pthread_mutex_destroy(&dev->wire_lock);
	pthread_mutex_destroy(&dev->mtu_lock);
	free(dev->wire_spec);
	free(dev);
	return 0;
}

struct ibv_device **
swv_get_device_list(int *num_devices)
{
	struct ibv_device **list;
	struct cds_list_head *node;
	int n = 0;

	pthread_mutex_lock(&swv_lock);
	cds_list_for_each(node, &swv_devices)
		n++;
	list = calloc(n + 1, sizeof(*list));
	if (list == NULL) {
		pthread_mutex_unlock(&swv_lock);
		errno = ENOMEM;
		return NULL;
	}
	n = 0;
	cds_list_for_each(node, &swv_devices)
		list[n++] = &cds_list_entry(node, struct swv_device,
					    reg_node)->ibv_dev;
	pthread_mutex_unlock(&swv_lock);
	if (num_devices != NULL)
		*num_devices = n;
	return list;
}

void
swv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *
swv_get_device_name(struct ibv_device *device)
{
	if (device == NULL)
		return NULL;
	return container_of(device, struct swv_device, ibv_dev)->name;
}

int
swv_ctx_init(struct swv_context *ctx, struct ibv_device *device)
{
	struct swv_device *dev = container_of(device, struct swv_device,
					      ibv_dev);
	int fds[2];
	int ret;

	if (pipe2(fds, O_CLOEXEC) != 0)
		return errno;
	/* The device never blocks on a full event pipe. */
	if (fcntl(fds[1], F_SETFL, O_NONBLOCK) != 0) {
		ret = errno;
		goto err_pipe;
	}
	ctx->dev = dev;
	ctx->event_wr = fds[1];
	ctx->vctx.context.async_fd = fds[0];
	pthread_mutex_lock(&swv_lock);
	if (!device_live(device)) {
		pthread_mutex_unlock(&swv_lock);
		ret = ENODEV;
		goto err_pipe;
	}
	dev->nctx++;
	cds_list_add_tail_rcu(&ctx->node, &dev->ctxs);
	pthread_mutex_unlock(&swv_lock);
	return 0;

err_pipe:
	close(fds[0]);
	close(fds[1]);
	ctx->vctx.context.async_fd = -1;
	return ret;
}

int
swv_ctx_fini(struct swv_context *ctx)
{
	pthread_mutex_lock(&swv_lock);
	if (ctx->objs > 0) {
		pthread_mutex_unlock(&swv_lock);
		return EBUSY;
	}
	cds_list_del_rcu(&ctx->node);
	ctx->dev->nctx--;
	synchronize_rcu();
	pthread_mutex_unlock(&swv_lock);
	if (ctx->event_wr >= 0)
		close(ctx->event_wr);
	ctx->event_wr = -1;
	return 0;
}

struct ibv_context *
swv_open_device(struct ibv_device *device)
{
	struct swv_context *ctx;
	int ret;

	if (device == NULL) {
		errno = EINVAL;
		return NULL;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	swv_vctx_init(&ctx->vctx);
	ctx->vctx.context.device = device;
	ctx->vctx.context.cmd_fd = -1;
	ctx->vctx.context.num_comp_vectors = 1;
	ret = swv_ctx_init(ctx, device);
	if (ret != 0) {
		free(ctx);
		errno = ret;
		return NULL;
	}
	pthread_mutex_init(&ctx->vctx.context.mutex, NULL);
	return &ctx->vctx.context;
}

int
swv_close_device(struct ibv_context *context)
{
	struct swv_context *ctx;
	int ret;

	if (context == NULL)
		return EINVAL;
	ctx = to_swv_ctx(context);
	ret = swv_ctx_fini(ctx);
	if (ret != 0)
		return ret;
	close(ctx->vctx.context.async_fd);
	pthread_mutex_destroy(&ctx->vctx.context.mutex);
	free(ctx);
	return 0;
}

struct swv_device *
swv_ctx_dev(struct ibv_context *ctx)
{
	return to_swv_ctx(ctx)->dev;
}

int
swv_query_device_ex(struct ibv_context *context,
		    const struct ibv_query_device_ex_input *input,
		    struct ibv_device_attr_ex *attr)
{
	struct swv_device *dev;
	struct ibv_device_attr *a;
	uint64_t guid = 0;
	int i;

	if (context == NULL || attr == NULL)
		return EINVAL;
	if (input != NULL && input->comp_mask != 0)
		return EINVAL;
	dev = swv_ctx_dev(context);
	memset(attr, 0, sizeof(*attr));
	a = &attr->orig_attr;
	/* The profile, told honestly (swverbs.h). */
	snprintf(a->fw_ver, sizeof(a->fw_ver), "swverbs 0.2 %s",
		 !dev->strict ? "full" :
		 dev->flags & SWV_DEVICE_PROFILE_VF ? "mlx5-vf" :
		 dev->pace_burst ? "mlx5" : "mlx5-noburst");
	/* EUI-64 from the MAC, in network order as verbs keeps GUIDs. */
	{
		uint8_t eui[8] = { dev->mac[0] ^ 0x02, dev->mac[1],
				   dev->mac[2], 0xff, 0xfe, dev->mac[3],
				   dev->mac[4], dev->mac[5] };

		for (i = 0; i < 8; i++)
			((uint8_t *)&guid)[i] = eui[i];
	}
	a->node_guid = guid;
	a->sys_image_guid = guid;
	a->max_mr_size = UINT64_MAX;
	a->page_size_cap = 4096;
	a->vendor_id = SWV_VENDOR_ID;
	a->vendor_part_id = dev->strict ? SWV_VENDOR_PART_MLX5 :
			    SWV_VENDOR_PART_FULL;
	a->hw_ver = dev->strict ? 5 : 1;
	a->max_qp = SWV_MAX_QP;
	a->max_qp_wr = SWV_MAX_QP_WR;
	a->max_sge = dev->strict ? SWV_MLX5_MAX_SGE : SWV_MAX_SGE;
	a->max_cq = SWV_MAX_CQ;
	a->max_cqe = SWV_MAX_CQE;
	a->max_mr = SWV_MAX_MR;
	a->max_pd = SWV_MAX_PD;
	a->phys_port_cnt = 1;
	a->max_pkeys = 1;
	a->atomic_cap = IBV_ATOMIC_NONE;
	attr->device_cap_flags_ex = IBV_DEVICE_MANAGED_FLOW_STEERING |
				    IBV_DEVICE_RAW_IP_CSUM;
	a->device_cap_flags = IBV_DEVICE_MANAGED_FLOW_STEERING |
			      IBV_DEVICE_RAW_IP_CSUM;
	attr->completion_timestamp_mask = UINT64_MAX;
	attr->hca_core_clock = 1000000;	/* kHz: one tick per nanosecond */
	attr->rss_caps.supported_qpts = 1u << IBV_QPT_RAW_PACKET;
	attr->rss_caps.max_rwq_indirection_tables = SWV_MAX_IND_TBL;
	attr->rss_caps.max_rwq_indirection_table_size =
		1u << SWV_LOG_MAX_IND_TBL;
	attr->rss_caps.rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 |
		IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_SRC_IPV6 |
		IBV_RX_HASH_DST_IPV6 | IBV_RX_HASH_SRC_PORT_TCP |
		IBV_RX_HASH_DST_PORT_TCP | IBV_RX_HASH_SRC_PORT_UDP |
		IBV_RX_HASH_DST_PORT_UDP;
	attr->rss_caps.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	attr->max_wq_type_rq = SWV_MAX_WQ;
	/* A ConnectX's: VLAN strip, Rx checksum status; no FCS scatter. */
	attr->raw_packet_caps = IBV_RAW_PACKET_CAP_CVLAN_STRIPPING |
				IBV_RAW_PACKET_CAP_IP_CSUM;
	attr->packet_pacing_caps.qp_rate_limit_min = SWV_PACE_RATE_MIN;
	attr->packet_pacing_caps.qp_rate_limit_max = dev->pace_max;
	attr->packet_pacing_caps.supported_qpts = 1u << IBV_QPT_RAW_PACKET;
	attr->phys_port_cnt_ex = 1;
	return 0;
}

int
swv_query_rt_values_ex(struct ibv_context *context,
		       struct ibv_values_ex *values)
{
	if (context == NULL || values == NULL ||
	    (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK) != 0)
		return EINVAL;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		/* Completion timestamps' clock: one tick a nanosecond. */
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = (long)swv_now_ns();
	}
	return 0;
}

/* The rate the standard query reports for a wire that gives none. */
#define SWV_SPEED_UNKNOWN 10000

/*
 * Link rate: speed_mbps as a width times a lane speed. Exact points of the
 * table map to themselves; any other rate gets the largest entry below it.
 */
static const struct {
	uint32_t mbps;
	uint8_t width;	/* IB width code: 1 = 1X, 2 = 4X */
	uint8_t speed;	/* IB speed code */
} swv_rates[] = {
	{ 0, 1, 1 },		/* 1X SDR (2.5 Gb/s): anything slower */
	{ 10000, 1, 4 },	/* 1X QDR */
	{ 25000, 1, 32 },	/* 1X EDR */
	{ 40000, 2, 4 },	/* 4X QDR */
	{ 50000, 1, 64 },	/* 1X HDR */
	{ 100000, 2, 32 },	/* 4X EDR */
	{ 200000, 2, 64 },	/* 4X HDR */
	{ 400000, 2, 128 },	/* 4X NDR */
};

/*
 * The RoCE MTU a netdev MTU leaves, as mlx5 reports active_mtu: less the
 * worst-case RoCE headers (GRH 40, UDP 8, BTH 12, XRC 4, atomic 28, ICRC 4:
 * 96 bytes), rounded down to an IB MTU, at most 4096 (1500 gives 1024).
 */
#define SWV_ROCE_OVERHEAD 96

enum ibv_mtu
swv_active_mtu(uint32_t mtu)
{
	uint32_t room = mtu > SWV_ROCE_OVERHEAD ? mtu - SWV_ROCE_OVERHEAD : 0;

	if (room >= 4096)
		return IBV_MTU_4096;
	if (room >= 2048)
		return IBV_MTU_2048;
	if (room >= 1024)
		return IBV_MTU_1024;
	if (room >= 512)
		return IBV_MTU_512;
	if (room >= 256)
		return IBV_MTU_256;
	return (enum ibv_mtu)0;
}

/* The MTU of what the port is bound to, now. */
static uint32_t
dev_mtu(struct swv_device *dev)
{
	uint32_t mtu = 0;

	if (dev->wire->ops->mtu != NULL)
		mtu = dev->wire->ops->mtu(dev->wire);
	return mtu != 0 ? mtu : SWV_LOAD(&dev->mtu);
}

/* The largest MTU the port's wire takes. */
static uint32_t
dev_max_mtu(struct swv_device *dev)
{
	/* The largest frame the MTU lets in is the largest there is. */
	uint32_t max = SWV_MAX_FRAME - SWV_MTU_OVERHEAD;

	if (dev->wire->ops->max_mtu != NULL &&
	    dev->wire->ops->max_mtu(dev->wire) < max)
		max = dev->wire->ops->max_mtu(dev->wire);
	return max;
}

/* dev->mtu_lock held. */
static void
dev_mtu_sync_locked(struct swv_device *dev)
{
	/*
	 * The MTU, an Ethernet header and one VLAN tag, as a ConnectX's port
	 * MTU bounds what it receives: mlx5e sets it to the MTU + 22 with
	 * the FCS, i.e. 18 above the MTU for a frame without FCS. A
	 * double-tagged frame of a full MTU is dropped.
	 */
	uint32_t mtu = SWV_LOAD(&dev->rx_mtu);

	if (mtu == 0)
		mtu = dev_mtu(dev);
	SWV_STORE(&dev->rx_max_frame, mtu + SWV_MTU_OVERHEAD);
}

/* Whether a live QP or WQ of dev holds number num (swv_lock held). */
static bool
num_live(struct swv_device *dev, uint32_t num)
{
	struct cds_list_head *qps[2] = { &dev->qps, &dev->hqps };
	struct cds_list_head *node;
	unsigned int i;

	for (i = 0; i < 2; i++)
		cds_list_for_each(node, qps[i])
			if (cds_list_entry(node, struct swv_qp,
					   node)->ibv_qp.qp_num == num)
				return true;
	cds_list_for_each(node, &dev->wqs)
		if (cds_list_entry(node, struct swv_wq, node)->ibv_wq.wq_num ==
		    num)
			return true;
	return false;
}

uint32_t
swv_num_next(struct swv_device *dev)
{
	uint32_t n;

	do {
		n = dev->next_num;
		if (n >= SWV_NUM_LAST) {
			dev->next_num = SWV_NUM_FIRST;
			dev->num_wrapped = true;
		} else {
			dev->next_num = n + 1;
		}
	} while (dev->num_wrapped && num_live(dev, n));
	return n;
}

void
swv_dev_mtu_sync(struct swv_device *dev)
{
	pthread_mutex_lock(&dev->mtu_lock);
	dev_mtu_sync_locked(dev);
	pthread_mutex_unlock(&dev->mtu_lock);
}

void
swv_dev_mtu_sync_try(struct swv_device *dev)
{
	/*
	 * Without the lock, the engine could read rx_mtu 0 and the wire's
	 * MTU, the control path set rx_mtu and store its frame size, and the
	 * engine then store the wire's over it until its next check.
	 */
	if (pthread_mutex_trylock(&dev->mtu_lock) != 0)
		return;
	dev_mtu_sync_locked(dev);
	pthread_mutex_unlock(&dev->mtu_lock);
}

uint32_t
swv_dev_mtu(struct swv_device *dev)
{
	return dev_mtu(dev);
}

int
swv_query_port(struct ibv_context *context, uint8_t port_num,
	       struct ibv_port_attr *port_attr)
{
	struct swv_device *dev;
	uint32_t speed;
	unsigned int i, r = 0;
	bool up;

	if (context == NULL || port_attr == NULL || port_num != 1)
		return EINVAL;
	dev = swv_ctx_dev(context);
	if (swv_dev_inline(dev))
		swv_inline_link(dev);	/* no engine checks it: now */
	/*
	 * The mlx5 profile, removed: a kernel answers the commands of a
	 * device gone with EIO (uverbs after its disassociation).
	 */
	if (dev->strict && SWV_LOAD(&dev->removed))
		return EIO;
	up = SWV_LOAD(&dev->link) != 0;
	speed = SWV_LOAD(&dev->speed);
	if (speed == 0)
		speed = SWV_SPEED_UNKNOWN;
	for (i = 0; i < sizeof(swv_rates) / sizeof(swv_rates[0]); i++)
		if (speed >= swv_rates[i].mbps)
			r = i;
	memset(port_attr, 0, sizeof(*port_attr));
	port_attr->state = up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	port_attr->phys_state = up ? 5 : 3;	/* LinkUp : Disabled */
	port_attr->max_mtu = swv_active_mtu(dev_max_mtu(dev));
	port_attr->active_mtu = swv_active_mtu(dev_mtu(dev));
	port_attr->gid_tbl_len = 1;
	port_attr->pkey_tbl_len = 1;
	port_attr->max_msg_sz = SWV_MAX_FRAME;
	port_attr->link_layer = IBV_LINK_LAYER_ETHERNET;
	port_attr->active_width = swv_rates[r].width;
	port_attr->active_speed = swv_rates[r].speed;
	return 0;
}

int
swv_query_port_ex(struct ibv_context *context, uint8_t port_num,
		  struct swv_port_attr_ex *attr)
{
	struct swv_port_attr_ex r;
	struct swv_device *dev;
	uint32_t mask;
	int ret;

	if (context == NULL || attr == NULL || port_num != 1)
		return EINVAL;
	mask = attr->comp_mask;
	if ((mask & ~SWV_QUERY_PORT_EX_MASK) != 0)
		return EINVAL;
	dev = swv_ctx_dev(context);
	memset(&r, 0, sizeof(r));
	ret = swv_query_port(context, port_num, &r.std);
	if (ret != 0)
		return ret;
	if (mask & SWV_QUERY_PORT_EX_SPEED_MBPS) {
		r.speed_mbps = SWV_LOAD(&dev->speed);
		if (r.speed_mbps == 0)
			return ENOSYS;	/* the interface does not say */
	}
	if (mask & SWV_QUERY_PORT_EX_ETH_MTU)
		r.eth_mtu = dev_mtu(dev);
	if (mask & SWV_QUERY_PORT_EX_ETH_MAX_MTU)
		r.eth_max_mtu = dev_max_mtu(dev);
	r.comp_mask = mask;
	*attr = r;
	return 0;
}

int
swv_query_port_mac(struct ibv_context *context, uint8_t mac[6])
{
	if (context == NULL || mac == NULL)
		return EINVAL;
	memcpy(mac, swv_ctx_dev(context)->mac, 6);
	return 0;
}

int
swv_query_port_counters(struct ibv_context *context,
			struct swv_port_counters *c)
{
	const struct swv_port_counters *s;
	struct swv_device *dev;

	if (context == NULL || c == NULL)
		return EINVAL;
	dev = swv_ctx_dev(context);
	s = &dev->cnt;
	/* Read the sum's parts before the total, so that a reader sees
	 * rx_frames >= the parts it read.
	 */
	c->rx_delivered = SWV_LOAD(&s->rx_delivered);
	c->rx_out_of_buffer = SWV_LOAD(&s->rx_out_of_buffer);
	c->rx_no_match = SWV_LOAD(&s->rx_no_match);
	c->rx_errors = SWV_LOAD(&s->rx_errors);
	c->rx_dropped = SWV_LOAD(&s->rx_dropped);
	c->rx_runts = SWV_LOAD(&s->rx_runts);
	c->rx_mtu_dropped = SWV_LOAD(&s->rx_mtu_dropped);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	c->rx_frames = SWV_LOAD(&s->rx_frames);
	c->rx_bytes = SWV_LOAD(&s->rx_bytes);
	c->tx_frames = SWV_LOAD(&s->tx_frames);
	c->tx_bytes = SWV_LOAD(&s->tx_bytes);
	c->tx_errors = SWV_LOAD(&s->tx_errors);
	c->tx_link_down = SWV_LOAD(&s->tx_link_down);
	c->tx_link_down_bytes = SWV_LOAD(&s->tx_link_down_bytes);
	c->tx_mtu_dropped = SWV_LOAD(&s->tx_mtu_dropped);
	c->tx_mtu_dropped_bytes = SWV_LOAD(&s->tx_mtu_dropped_bytes);
	c->wire_faults = SWV_LOAD(&s->wire_faults);
	c->rx_vport_dropped = SWV_LOAD(&s->rx_vport_dropped);
	/*
	 * Its own lock, not swv_lock: a caller may be an online qsbr reader,
	 * which swv_lock's holder may be waiting for in synchronize_rcu().
	 */
	pthread_mutex_lock(&dev->wire_lock);
	c->rx_wire_dropped = dev->wire_full_closed;
	c->rx_wire_errors = dev->wire_bad_closed;
	wire_rx_drops(dev->wire, &c->rx_wire_dropped, &c->rx_wire_errors);
	pthread_mutex_unlock(&dev->wire_lock);
	return 0;
}

int
swv_device_wire_note(const char *name, char *buf, size_t len)
{
	struct swv_device *dev;
	const char *note = NULL;

	if (name == NULL || buf == NULL || len == 0)
		return EINVAL;
	pthread_mutex_lock(&swv_lock);
	dev = device_find(name);
	if (dev == NULL) {
		pthread_mutex_unlock(&swv_lock);
		return ENOENT;
	}
	if (dev->wire->ops->note != NULL)
		note = dev->wire->ops->note(dev->wire);
	snprintf(buf, len, "%s", note != NULL ? note : "");
	pthread_mutex_unlock(&swv_lock);
	return 0;
}

/*
 * Writers of the contexts' event pipes (the engine's link check, or an
 * inline device's caller): one at a time, so that one may close a pipe.
 */
static pthread_mutex_t swv_event_lock = PTHREAD_MUTEX_INITIALIZER;

void
swv_device_event(struct swv_device *dev, enum ibv_event_type type)
{
	/* Port events and the device's: element is the port (libibverbs). */
	struct swv_async_desc ev = { .element = 1, .event_type = type };
	struct cds_list_head *node;
	struct swv_context *ctx;
	ssize_t n;

	pthread_mutex_lock(&swv_event_lock);
	cds_list_for_each_rcu(node, &dev->ctxs) {
		ctx = cds_list_entry(node, struct swv_context, node);
		if (ctx->event_wr < 0)
			continue;	/* closed at the removal */
		/*
		 * A full pipe drops the event: the reader is far behind. A
		 * record is less than PIPE_BUF: written whole or not at all.
		 */
		n = write(ctx->event_wr, &ev, sizeof(ev));
		(void)n;
		/*
		 * The mlx5 profile through libibverbs: after a removal a
		 * kernel's uverbs async fd gives the events queued, then
		 * polls ready forever (EPOLLERR, the device gone) and reads
		 * fail (EIO). The pipe's last writer closes: the reader gets
		 * the events, then the end of the pipe, which polls ready
		 * forever too (EPOLLHUP) and reads nothing.
		 */
		if (type == IBV_EVENT_DEVICE_FATAL && ctx->provider &&
		    dev->strict) {
			close(ctx->event_wr);
			ctx->event_wr = -1;
		}
	}
	pthread_mutex_unlock(&swv_event_lock);
}

int
swv_get_async_event(struct ibv_context *context,
		    struct ibv_async_event *event)
{
	struct swv_async_desc ev;
	ssize_t n;

	if (context == NULL || event == NULL) {
		errno = EINVAL;
		return -1;
	}
	n = read(context->async_fd, &ev, sizeof(ev));
	if (n < 0)
		return -1;
	if (n != sizeof(ev)) {
		errno = EIO;
		return -1;
	}
	memset(event, 0, sizeof(*event));
	event->event_type = (enum ibv_event_type)ev.event_type;
	event->element.port_num = (int)ev.element;
	return 0;
}

void
swv_ack_async_event(struct ibv_async_event *event)
{
	(void)event;
}
