/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Rx interrupts (intr_conf.rxq): each Rx queue's CQ is created on a
 * completion channel of its own, non-blocking. While the port runs,
 * dev->intr_handle (an EXT handle, as mlx5's) carries the channels' fds as
 * its efds, vector RTE_INTR_VEC_RXTX_OFFSET + q for queue q, so
 * rte_eth_dev_rx_intr_ctl_q() adds them to an epoll set.
 * rx_queue_intr_enable arms the CQ for one event: an unpolled CQE raises
 * it at once, a later one when it arrives; rx_queue_intr_disable reads and
 * acknowledges what the channel holds, so its fd is no longer readable.
 * get_monitor_addr gives rte_power_monitor() the word the device writes
 * when a CQE becomes visible (swverbs: the CQ's producer index) and the
 * value that means nothing new.
 *
 * Link-state and removal events: the verbs context's async fd is watched by
 * the EAL interrupt thread; port events update the link and, when the
 * application asked for it (intr_conf.lsc), raise RTE_ETH_EVENT_INTR_LSC.
 * IBV_EVENT_DEVICE_FATAL (the device is gone: a NIC unplugged, a swverbs
 * port's interface deleted) takes the link down and, with intr_conf.rmv,
 * raises RTE_ETH_EVENT_INTR_RMV, as mlx5 does. A swverbs port is bound to
 * the re-created interface at its next start.
 */

#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include <ethdev_driver.h>
#include <rte_interrupts.h>

#include "vbr.h"
#include "vbr_utils.h"

static void vbr_intr_handler(void *arg);

/*
 * The handler was called with no event to read on a removed device: a
 * kernel's uverbs async fd polls EPOLLERR forever once the device is gone
 * (EAL would call the handler in a loop until the port closes), swverbs'
 * through libibverbs EPOLLHUP. Stop watching it: no event can come any
 * more (a swverbs port rebound at its next start keeps a working fd, which
 * never wakes for nothing).
 */
static void
vbr_intr_fd_dead(struct vbr_priv *priv)
{
	int ret;

	ret = rte_intr_callback_unregister_pending(priv->intr,
						   vbr_intr_handler, priv,
						   NULL);
	if (ret < 0) {
		VBR_LOG(ERR, "port %u: async fd: unregister: %s",
			priv->dev->data->port_id, rte_strerror(-ret));
		return;
	}
	VBR_LOG(INFO, "port %u: device removed: its async fd is no longer "
		"watched", priv->dev->data->port_id);
}

static void
vbr_intr_handler(void *arg)
{
	struct vbr_priv *priv = arg;
	struct rte_eth_dev *dev = priv->dev;
	struct ibv_async_event event;
	bool link_event = false, removed = false, any = false;

	while (priv->glue->get_async_event(priv->ctx, &event) == 0) {
		any = true;
		if (event.event_type == IBV_EVENT_PORT_ACTIVE ||
		    event.event_type == IBV_EVENT_PORT_ERR)
			link_event = true;
		else if (event.event_type == IBV_EVENT_DEVICE_FATAL)
			removed = true;
		else
			VBR_LOG(DEBUG, "port %u: async event %d ignored",
				dev->data->port_id, event.event_type);
		priv->glue->ack_async_event(&event);
	}
	if (!any && __atomic_load_n(&priv->removed, __ATOMIC_ACQUIRE)) {
		vbr_intr_fd_dead(priv);
		return;
	}
	if (removed) {
		VBR_LOG(WARNING, "port %u: device removed (%s)",
			dev->data->port_id, priv->ibdev_name);
		__atomic_store_n(&priv->removed, 1, __ATOMIC_RELEASE);
		vbr_link_update(dev, 0);
		if (link_event && dev->data->dev_conf.intr_conf.lsc)
			rte_eth_dev_callback_process(dev,
						     RTE_ETH_EVENT_INTR_LSC,
						     NULL);
		if (dev->data->dev_conf.intr_conf.rmv)
			rte_eth_dev_callback_process(dev,
						     RTE_ETH_EVENT_INTR_RMV,
						     NULL);
		return;
	}
	if (!link_event)
		return;
	/*
	 * The device raises a port event only when the port state changes,
	 * so each one is reported, whatever vbr_link_update() says: a
	 * link_update op run by the application thread meanwhile (link_get
	 * on a stopped port, or without lsc, or dev_start) may already have
	 * stored the new state, and its change would be lost otherwise. A
	 * failed port query is logged by vbr_link_update().
	 */
	vbr_link_update(dev, 0);
	if (dev->data->dev_conf.intr_conf.lsc)
		rte_eth_dev_callback_process(dev, RTE_ETH_EVENT_INTR_LSC,
					     NULL);
}

/** Watch the async fd. Return 0 or -errno. */
int
vbr_intr_install(struct vbr_priv *priv)
{
	int fd = priv->ctx->async_fd;
	int flags, ret;

	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		ret = -errno;
		VBR_LOG(ERR, "async fd %d: cannot make it non-blocking: %s",
			fd, strerror(errno));
		return ret;
	}
	priv->intr = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_SHARED);
	if (priv->intr == NULL)
		return -ENOMEM;
	if (rte_intr_fd_set(priv->intr, fd) != 0 ||
	    rte_intr_type_set(priv->intr, RTE_INTR_HANDLE_EXT) != 0) {
		ret = -rte_errno;
		goto error;
	}
	ret = rte_intr_callback_register(priv->intr, vbr_intr_handler, priv);
	if (ret != 0) {
		VBR_LOG(ERR, "async fd %d: rte_intr_callback_register: %s",
			fd, strerror(-ret));
		goto error;
	}
	priv->intr_cb = 1;
	return 0;
error:
	rte_intr_instance_free(priv->intr);
	priv->intr = NULL;
	return ret;
}

void
vbr_intr_uninstall(struct vbr_priv *priv)
{
	if (priv->intr == NULL)
		return;
	if (priv->intr_cb) {
		int ret;

		/* The handler may be running on the interrupt thread. */
		do {
			ret = rte_intr_callback_unregister(priv->intr,
							   vbr_intr_handler,
							   priv);
		} while (ret == -EAGAIN);
		priv->intr_cb = 0;
	}
	rte_intr_instance_free(priv->intr);
	priv->intr = NULL;
}

/** The queue's completion channel, its fd non-blocking. */
int
vbr_rxq_intr_channel(struct vbr_rxq *rxq)
{
	const struct vbr_glue *glue = rxq->priv->glue;
	int flags, ret;

	rxq->channel = glue->create_comp_channel(rxq->priv->ctx);
	if (rxq->channel == NULL) {
		ret = -errno;
		VBR_LOG(ERR, "port %u rxq %u: create_comp_channel: %s",
			rxq->port_id, rxq->queue_id, strerror(errno));
		return ret;
	}
	flags = fcntl(rxq->channel->fd, F_GETFL);
	if (flags < 0 ||
	    fcntl(rxq->channel->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		ret = -errno;
		VBR_LOG(ERR, "port %u rxq %u: completion channel fd %d: "
			"cannot make it non-blocking: %s", rxq->port_id,
			rxq->queue_id, rxq->channel->fd, strerror(errno));
		glue->destroy_comp_channel(rxq->channel);
		rxq->channel = NULL;
		return ret;
	}
	return 0;
}

/** Read and acknowledge the events the queue's channel holds. */
void
vbr_rxq_intr_ack(struct vbr_rxq *rxq)
{
	const struct vbr_glue *glue = rxq->priv->glue;
	struct ibv_cq *cq;
	void *ctx;

	while (glue->get_cq_event(rxq->channel, &cq, &ctx) == 0)
		glue->ack_cq_events(cq, 1);
}

/** dev_start with intr_conf.rxq: the port's handle with the channel fds. */
int
vbr_rx_intr_start(struct rte_eth_dev *dev)
{
	struct rte_intr_handle *h;
	uint16_t n = dev->data->nb_rx_queues, i;
	int ret;

	if (!dev->data->dev_conf.intr_conf.rxq)
		return 0;
	vbr_rx_intr_stop(dev);
	for (i = 0; i < n; i++) {
		struct vbr_rxq *rxq = dev->data->rx_queues[i];

		if (rxq == NULL || rxq->channel == NULL) {
			VBR_LOG(ERR, "port %u: rxq %u was set up without "
				"intr_conf.rxq: set it up again",
				dev->data->port_id, i);
			return -EINVAL;
		}
	}
	if (n > RTE_MAX_RXTX_INTR_VEC_ID) {
		VBR_LOG(ERR, "port %u: %u Rx queues: Rx interrupts for %u at "
			"most", dev->data->port_id, n,
			RTE_MAX_RXTX_INTR_VEC_ID);
		return -EINVAL;
	}
	h = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
	if (h == NULL)
		return -ENOMEM;
	ret = rte_intr_type_set(h, RTE_INTR_HANDLE_EXT);
	if (ret == 0)
		ret = rte_intr_vec_list_alloc(h, "vbr_intr_vec", n);
	for (i = 0; ret == 0 && i < n; i++) {
		struct vbr_rxq *rxq = dev->data->rx_queues[i];

		ret = rte_intr_vec_list_index_set(h, i,
						  RTE_INTR_VEC_RXTX_OFFSET + i);
		if (ret == 0)
			ret = rte_intr_efds_index_set(h, i,
						      rxq->channel->fd);
	}
	if (ret == 0)
		ret = rte_intr_nb_efd_set(h, n);
	if (ret == 0)
		ret = rte_intr_max_intr_set(h, n + 1);
	if (ret != 0) {
		VBR_LOG(ERR, "port %u: Rx interrupt handle: %s",
			dev->data->port_id, rte_strerror(rte_errno));
		rte_intr_vec_list_free(h);
		rte_intr_instance_free(h);
		return -rte_errno;
	}
	dev->intr_handle = h;
	return 0;
}

void
vbr_rx_intr_stop(struct rte_eth_dev *dev)
{
	if (dev->intr_handle == NULL)
		return;
	rte_intr_free_epoll_fd(dev->intr_handle);
	rte_intr_vec_list_free(dev->intr_handle);
	rte_intr_instance_free(dev->intr_handle);
	dev->intr_handle = NULL;
}

int
vbr_rx_queue_intr_enable(struct rte_eth_dev *dev, uint16_t idx)
{
	struct vbr_rxq *rxq = dev->data->rx_queues[idx];
	int ret;

	if (rxq == NULL || rxq->channel == NULL)
		return -EINVAL;
	ret = ibv_req_notify_cq(ibv_cq_ex_to_cq(rxq->cq), 0);
	if (ret != 0) {
		VBR_LOG(ERR, "port %u rxq %u: req_notify_cq: %s",
			rxq->port_id, idx, strerror(ret));
		return -ret;
	}
	return 0;
}

int
vbr_rx_queue_intr_disable(struct rte_eth_dev *dev, uint16_t idx)
{
	struct vbr_rxq *rxq = dev->data->rx_queues[idx];

	if (rxq == NULL || rxq->channel == NULL)
		return -EINVAL;
	vbr_rxq_intr_ack(rxq);
	return 0;
}

/* Sleep while the watched word holds the value of nothing new. */
static int
vbr_monitor_cb(const uint64_t value,
	       const uint64_t opaque[RTE_POWER_MONITOR_OPAQUE_SZ])
{
	return (uint32_t)value == (uint32_t)opaque[0] ? 0 : -1;
}

int
vbr_get_monitor_addr(void *q, struct rte_power_monitor_cond *pmc)
{
	struct vbr_rxq *rxq = q;
	struct vbr_glue_cq_peek peek;
	int ret;

	ret = rxq->priv->glue->cq_peek(rxq->cq, &peek);
	if (ret != 0)
		return -ret;
	if (peek.watch == NULL)
		return -ENOTSUP;	/* nothing writes it while we sleep */
	pmc->addr = (volatile void *)(uintptr_t)peek.watch;
	pmc->size = sizeof(uint32_t);
	pmc->opaque[0] = peek.idle;
	pmc->fn = vbr_monitor_cb;
	return 0;
}
