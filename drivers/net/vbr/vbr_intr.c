/* SPDX-License-Identifier: BSD-3-Clause */

/*
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

static void
vbr_intr_handler(void *arg)
{
	struct vbr_priv *priv = arg;
	struct rte_eth_dev *dev = priv->dev;
	struct ibv_async_event event;
	bool link_event = false, removed = false;

	while (priv->glue->get_async_event(priv->ctx, &event) == 0) {
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
	if (removed) {
		VBR_LOG(WARNING, "port %u: device removed (%s)",
			dev->data->port_id, priv->ibdev_name);
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
