/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The vport filter of the mlx5-vf profile (SWV_DEVICE_PROFILE_VF).
 *
 * A ConnectX VF or SF sits behind the eswitch, which forwards to it only
 * the frames whose destination its vport registered; the mlx5 kernel
 * driver registers what the function's netdev holds (mlx5e's rx mode:
 * the netdev's MAC, its unicast and multicast address lists, promiscuous
 * with IFF_PROMISC, all multicast with IFF_ALLMULTI) and broadcast. So a
 * program that drives the VF through verbs gets frames to another MAC, or
 * to a multicast group, only once it has told the netdev: `bridge fdb add
 * <mac> dev <netdev> self` (RTM_NEWNEIGH on AF_BRIDGE, which puts the
 * address on the netdev's unicast or multicast list), or the flags.
 *
 * The device reads that state from the interface its wire is on, over
 * rtnetlink: RTM_GETLINK for the MAC and IFF_PROMISC / IFF_ALLMULTI (the
 * flags a user set, not the promiscuity the wire's own packet socket
 * adds), and an AF_BRIDGE RTM_GETNEIGH dump for the address lists (the
 * interface's NTF_SELF entries: its unicast and multicast lists, joins of
 * the IP stack included). It reads them again at every link check
 * (engine.c, every 10 ms), and Rx drops what the vport would not get
 * before any steering, counted in rx_vport_dropped (not in rx_frames:
 * the port never saw those frames). Engine (or inline owner) only.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>

#include "swv_engine.h"
#include "swv_netif.h"

/* Most addresses the vport holds (a ConnectX VF's list is smaller). */
#define SWV_VPORT_ADDRS 256

struct swv_vport {
	struct mnl_socket *nl;
	unsigned int portid;
	uint32_t seq;
	int ifindex;			/**< the interface being read */
	bool promisc;			/**< IFF_PROMISC set by a user */
	bool allmulti;			/**< IFF_ALLMULTI set by a user */
	uint8_t own[6];			/**< the interface's MAC */
	uint32_t n;			/**< entries of addr[] */
	uint8_t addr[SWV_VPORT_ADDRS][6]; /**< unicast and multicast lists */
	/* A read in progress fills these, then they replace the above. */
	uint32_t n_new;
	uint8_t addr_new[SWV_VPORT_ADDRS][6];
};

int
swv_vport_open(struct swv_device *dev)
{
	struct swv_vport *vp;

	vp = calloc(1, sizeof(*vp));
	if (vp == NULL)
		return ENOMEM;
	vp->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (vp->nl == NULL) {
		free(vp);
		return errno != 0 ? errno : ENOMEM;
	}
	if (mnl_socket_bind(vp->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int err = errno;

		mnl_socket_close(vp->nl);
		free(vp);
		return err;
	}
	vp->portid = mnl_socket_get_portid(vp->nl);
	dev->vport = vp;
	/* What the interface holds now, before the first frame. */
	swv_vport_refresh(dev);
	return 0;
}

void
swv_vport_close(struct swv_device *dev)
{
	struct swv_vport *vp = dev->vport;

	if (vp == NULL)
		return;
	mnl_socket_close(vp->nl);
	free(vp);
	dev->vport = NULL;
}

static int
link_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct swv_vport *vp = arg;
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;

	if (nlh->nlmsg_type != RTM_NEWLINK || ifi->ifi_index != vp->ifindex)
		return MNL_CB_OK;
	vp->promisc = (ifi->ifi_flags & IFF_PROMISC) != 0;
	vp->allmulti = (ifi->ifi_flags & IFF_ALLMULTI) != 0;
	mnl_attr_for_each(a, nlh, sizeof(*ifi)) {
		if (mnl_attr_get_type(a) == IFLA_ADDRESS &&
		    mnl_attr_get_payload_len(a) == 6)
			memcpy(vp->own, mnl_attr_get_payload(a), 6);
	}
	return MNL_CB_OK;
}

static int
fdb_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct swv_vport *vp = arg;
	const struct ndmsg *nd = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;

	if (nlh->nlmsg_type != RTM_NEWNEIGH || nd->ndm_family != AF_BRIDGE ||
	    nd->ndm_ifindex != vp->ifindex || !(nd->ndm_flags & NTF_SELF))
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*nd)) {
		if (mnl_attr_get_type(a) != NDA_LLADDR ||
		    mnl_attr_get_payload_len(a) != 6 ||
		    vp->n_new == SWV_VPORT_ADDRS)
			continue;
		memcpy(vp->addr_new[vp->n_new++], mnl_attr_get_payload(a), 6);
	}
	return MNL_CB_OK;
}

/* Send the request in buf, run cb on the replies. 0 or an errno. */
static int
vport_talk(struct swv_vport *vp, struct nlmsghdr *nlh, mnl_cb_t cb)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	uint32_t seq = ++vp->seq;
	ssize_t len;
	int ret;

	nlh->nlmsg_seq = seq;
	if (mnl_socket_sendto(vp->nl, nlh, nlh->nlmsg_len) < 0)
		return errno;
	for (;;) {
		len = mnl_socket_recvfrom(vp->nl, buf, sizeof(buf));
		if (len < 0)
			return errno;
		ret = mnl_cb_run(buf, len, seq, vp->portid, cb, vp);
		if (ret <= MNL_CB_STOP)
			return ret < 0 ? errno : 0;
	}
}

void
swv_vport_refresh(struct swv_device *dev)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct swv_vport *vp = dev->vport;
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	struct ndmsg *nd;

	if (vp == NULL)
		return;
	vp->ifindex = swv_wire_netif(dev->wire)->ifindex;
	nlh = mnl_nlmsg_put_header(req);
	nlh->nlmsg_type = RTM_GETLINK;
	/* The ack ends the answer (mnl_cb_run() stops at it). */
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = vp->ifindex;
	if (vport_talk(vp, nlh, link_cb) != 0)
		return;		/* keep what was read last */
	nlh = mnl_nlmsg_put_header(req);
	nlh->nlmsg_type = RTM_GETNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nd = mnl_nlmsg_put_extra_header(nlh, sizeof(*nd));
	nd->ndm_family = AF_BRIDGE;
	vp->n_new = 0;
	if (vport_talk(vp, nlh, fdb_cb) != 0)
		return;
	memcpy(vp->addr, vp->addr_new, sizeof(vp->addr[0]) * vp->n_new);
	vp->n = vp->n_new;
}

bool
swv_vport_takes(const struct swv_device *dev, const uint8_t *dmac)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	const struct swv_vport *vp = dev->vport;
	uint32_t i;

	if (vp->promisc || memcmp(dmac, vp->own, 6) == 0 ||
	    memcmp(dmac, bcast, 6) == 0 || ((dmac[0] & 1) && vp->allmulti))
		return true;
	for (i = 0; i < vp->n; i++)
		if (memcmp(dmac, vp->addr[i], 6) == 0)
			return true;
	return false;
}
