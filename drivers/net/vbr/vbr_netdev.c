/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The vport's addresses on a netdev, over rtnetlink (vbr_netdev.h). Part
 * of the PMD (swverbs' mlx5-vf wires) and of the ibverbs glue object (a
 * VF's or SF's dev= port).
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>

#include "vbr_glue.h"
#include "vbr_netdev.h"

struct vbr_netdev_link {
	int ifindex;
	uint8_t mac[6];
	unsigned int flags;
};

static int
vbr_netdev_link_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct vbr_netdev_link *l = arg;
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;

	if (nlh->nlmsg_type != RTM_NEWLINK || ifi->ifi_index != l->ifindex)
		return MNL_CB_OK;
	l->flags = ifi->ifi_flags;
	mnl_attr_for_each(a, nlh, sizeof(*ifi)) {
		if (mnl_attr_get_type(a) == IFLA_ADDRESS &&
		    mnl_attr_get_payload_len(a) == 6)
			memcpy(l->mac, mnl_attr_get_payload(a), 6);
	}
	return MNL_CB_OK;
}

/* Send one request (acked), run cb on its replies. 0 or an errno. */
static int
vbr_netdev_talk(struct nlmsghdr *nlh, mnl_cb_t cb, void *arg)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl;
	unsigned int portid;
	ssize_t len;
	int ret;

	nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (nl == NULL)
		return errno != 0 ? errno : ENOMEM;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = errno;
		goto out;
	}
	portid = mnl_socket_get_portid(nl);
	nlh->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = (uint32_t)time(NULL);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		ret = errno;
		goto out;
	}
	do {
		len = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (len < 0) {
			ret = errno;
			goto out;
		}
		ret = mnl_cb_run(buf, len, nlh->nlmsg_seq, portid, cb, arg);
	} while (ret > MNL_CB_STOP);
	ret = ret < 0 ? errno : 0;
out:
	mnl_socket_close(nl);
	return ret;
}

int
vbr_netdev_fdb(const char *ifname, const uint8_t mac[6], bool add)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct ndmsg *nd;
	unsigned int idx = if_nametoindex(ifname);

	if (idx == 0)
		return ENODEV;
	nlh = mnl_nlmsg_put_header(req);
	nlh->nlmsg_type = add ? RTM_NEWNEIGH : RTM_DELNEIGH;
	/* EXCL: an address listed already is someone else's, left alone. */
	nlh->nlmsg_flags = add ? NLM_F_CREATE | NLM_F_EXCL : 0;
	nd = mnl_nlmsg_put_extra_header(nlh, sizeof(*nd));
	nd->ndm_family = AF_BRIDGE;
	nd->ndm_ifindex = (int)idx;
	nd->ndm_flags = NTF_SELF;
	nd->ndm_state = NUD_PERMANENT;
	mnl_attr_put(nlh, NDA_LLADDR, 6, mac);
	return vbr_netdev_talk(nlh, NULL, NULL);
}

int
vbr_netdev_flag(const char *ifname, unsigned int flag, bool on)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	unsigned int idx = if_nametoindex(ifname);

	if (idx == 0)
		return ENODEV;
	nlh = mnl_nlmsg_put_header(req);
	nlh->nlmsg_type = RTM_NEWLINK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = (int)idx;
	ifi->ifi_change = flag;
	ifi->ifi_flags = on ? flag : 0;
	return vbr_netdev_talk(nlh, NULL, NULL);
}

int
vbr_netdev_query(const char *ifname, uint8_t mac[6], unsigned int *flags)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct vbr_netdev_link l;
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	int ret;

	memset(&l, 0, sizeof(l));
	l.ifindex = (int)if_nametoindex(ifname);
	if (l.ifindex == 0)
		return ENODEV;
	nlh = mnl_nlmsg_put_header(req);
	nlh->nlmsg_type = RTM_GETLINK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = l.ifindex;
	ret = vbr_netdev_talk(nlh, vbr_netdev_link_cb, &l);
	if (ret != 0)
		return ret;
	memcpy(mac, l.mac, 6);
	*flags = l.flags;
	return 0;
}

/* The hint an errno of the netdev's deserves. */
static const char *
vbr_netdev_hint(int err)
{
	if (err == EPERM)
		return " (telling a VF's netdev needs CAP_NET_ADMIN)";
	if (err == EOPNOTSUPP)
		return " (the netdev refuses it)";
	return "";
}

int
vbr_netdev_vport(const char *ifname, int op, uint8_t mac[6], int *on,
		 char *why, size_t len)
{
	unsigned int flags, flag;
	int ret;

	switch (op) {
	case VBR_GLUE_VPORT_QUERY:
		ret = vbr_netdev_query(ifname, mac, &flags);
		if (ret != 0) {
			snprintf(why, len, "reading the netdev %s: %s", ifname,
				 strerror(ret));
			return ret;
		}
		*on = ((flags & IFF_PROMISC) ? VBR_GLUE_VPORT_F_PROMISC : 0) |
		      ((flags & IFF_ALLMULTI) ? VBR_GLUE_VPORT_F_ALLMULTI : 0);
		return 0;
	case VBR_GLUE_VPORT_MAC_ADD:
	case VBR_GLUE_VPORT_MAC_DEL:
		ret = vbr_netdev_fdb(ifname, mac, op == VBR_GLUE_VPORT_MAC_ADD);
		if (ret != 0 && ret != EEXIST && ret != ENOENT)
			snprintf(why, len, "%s %02x:%02x:%02x:%02x:%02x:%02x "
				 "%s the netdev %s's address list (bridge fdb "
				 "... self): %s%s",
				 op == VBR_GLUE_VPORT_MAC_ADD ? "putting" :
				 "taking", mac[0], mac[1], mac[2], mac[3],
				 mac[4], mac[5],
				 op == VBR_GLUE_VPORT_MAC_ADD ? "on" : "off",
				 ifname, strerror(ret), vbr_netdev_hint(ret));
		return ret;
	case VBR_GLUE_VPORT_PROMISC:
	case VBR_GLUE_VPORT_ALLMULTI:
		flag = op == VBR_GLUE_VPORT_PROMISC ? IFF_PROMISC :
		       IFF_ALLMULTI;
		ret = vbr_netdev_flag(ifname, flag, *on != 0);
		if (ret != 0)
			snprintf(why, len, "%s %s on the netdev %s: %s%s",
				 flag == IFF_PROMISC ? "promisc" : "allmulti",
				 *on ? "on" : "off", ifname, strerror(ret),
				 vbr_netdev_hint(ret));
		return ret;
	default:
		snprintf(why, len, "unknown vport request %d", op);
		return EINVAL;
	}
}
