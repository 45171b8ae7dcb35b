/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The Linux interface behind a kernel wire (swv_netif.h): index, link
 * state, MTU and speed, shared by the af_packet and af_xdp wires.
 */

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <linux/ethtool.h>
#include <linux/if_ether.h>
#include <linux/sockios.h>

#include "swv_netif.h"

int
swv_netif_init(struct swv_netif *nif, const char *ifname)
{
	memset(nif, 0, sizeof(*nif));
	nif->fd = -1;
	if (ifname == NULL || ifname[0] == '\0' ||
	    strlen(ifname) >= IF_NAMESIZE)
		return ENODEV;
	memcpy(nif->ifname, ifname, strlen(ifname) + 1);
	nif->ifindex = (int)if_nametoindex(ifname);
	if (nif->ifindex == 0)
		return errno == ENOMEM ? ENOMEM : ENODEV;
	return 0;
}

/*
 * The current name of the bound interface index into ifr.ifr_name.
 * Return 0, ENODEV when the index is gone, or another errno.
 */
static int
netif_ifr(const struct swv_netif *nif, struct ifreq *ifr)
{
	memset(ifr, 0, sizeof(*ifr));
	ifr->ifr_ifindex = nif->ifindex;
	if (ioctl(nif->fd, SIOCGIFNAME, ifr) != 0)
		return errno == ENXIO ? ENODEV : errno;
	return 0;
}

/*
 * The MTU cache. An ioctl and the store of its result go together, one
 * caller at a time: else a reader (the engine's link check, a port query)
 * that got the old MTU from the kernel could store it after a set stored
 * the new one, and Tx would refuse frames of the new MTU until the next
 * read. A holder makes one ioctl. A set waits for a reader, yielding; a
 * reader never waits (it may be an inline port's burst, and a set's ioctl
 * takes the RTNL lock): it keeps the cache as it is, which the holder
 * updates.
 */
void (*swv_netif_mtu_hook)(struct swv_netif *nif);

static void
netif_mtu_lock(struct swv_netif *nif)
{
	while (__atomic_exchange_n(&nif->mtu_busy, 1, __ATOMIC_ACQUIRE) != 0)
		sched_yield();
}

static void
netif_mtu_unlock(struct swv_netif *nif)
{
	__atomic_store_n(&nif->mtu_busy, 0, __ATOMIC_RELEASE);
}

/* Read the MTU of the interface named in @ifr into the cache. */
static void
netif_mtu_read(struct swv_netif *nif, struct ifreq *ifr)
{
	if (__atomic_exchange_n(&nif->mtu_busy, 1, __ATOMIC_ACQUIRE) != 0)
		return;
	if (ioctl(nif->fd, SIOCGIFMTU, ifr) == 0 && ifr->ifr_mtu > 0) {
		if (swv_netif_mtu_hook != NULL)
			swv_netif_mtu_hook(nif);
		__atomic_store_n(&nif->mtu, (uint32_t)ifr->ifr_mtu,
				 __ATOMIC_RELAXED);
	}
	netif_mtu_unlock(nif);
}

void
swv_netif_refresh(struct swv_netif *nif)
{
	struct ifreq ifr;
	bool link;
	int err;

	if (nif->gone)
		return;
	err = netif_ifr(nif, &ifr);
	if (err == ENODEV) {
		swv_netif_set_gone(nif);
		return;
	}
	if (err == 0 && ioctl(nif->fd, SIOCGIFFLAGS, &ifr) == 0)
		link = (ifr.ifr_flags & (IFF_UP | IFF_RUNNING)) ==
			(IFF_UP | IFF_RUNNING);
	else
		link = false;
	/* A NIC negotiates its speed as its link comes up. */
	if (link != nif->link)
		nif->speed_stale = true;
	nif->link = link;
	if (err == 0)
		netif_mtu_read(nif, &ifr);
}

bool
swv_netif_poll(struct swv_netif *nif)
{
	uint64_t now = swv_now_coarse_ns();

	if (now < nif->next)
		return false;
	nif->next = now + SWV_NETIF_REFRESH_NS;
	swv_netif_refresh(nif);
	return !nif->gone;
}

/* Speed from ethtool, or 0 if the device does not say. */
static uint32_t
netif_ethtool_speed(int fd, const char *ifname)
{
	/* ethtool_link_settings and room for its three link-mode masks. */
	union {
		struct ethtool_link_settings s;
		uint32_t raw[sizeof(struct ethtool_link_settings) / 4 +
			     3 * 127];
	} ls;
	struct ethtool_cmd cmd;
	struct ifreq ifr;
	uint32_t speed;
	int nwords;

	memset(&ifr, 0, sizeof(ifr));
	strncpy(ifr.ifr_name, ifname, sizeof(ifr.ifr_name) - 1);
	/* Handshake: the kernel first answers with -(number of words). */
	memset(&ls, 0, sizeof(ls));
	ls.s.cmd = ETHTOOL_GLINKSETTINGS;
	ifr.ifr_data = (void *)&ls;
	if (ioctl(fd, SIOCETHTOOL, &ifr) == 0 &&
	    ls.s.link_mode_masks_nwords < 0) {
		nwords = -ls.s.link_mode_masks_nwords;
		memset(&ls, 0, sizeof(ls));
		ls.s.cmd = ETHTOOL_GLINKSETTINGS;
		ls.s.link_mode_masks_nwords = (int8_t)nwords;
		if (nwords <= 127 && ioctl(fd, SIOCETHTOOL, &ifr) == 0 &&
		    ls.s.link_mode_masks_nwords > 0) {
			speed = ls.s.speed;
			if (speed != 0 && speed != (uint32_t)SPEED_UNKNOWN)
				return speed;
			return 0;
		}
	}
	memset(&cmd, 0, sizeof(cmd));
	cmd.cmd = ETHTOOL_GSET;
	ifr.ifr_data = (void *)&cmd;
	if (ioctl(fd, SIOCETHTOOL, &ifr) == 0) {
		speed = ethtool_cmd_speed(&cmd);
		if (speed != 0 && speed != (uint32_t)SPEED_UNKNOWN)
			return speed;
	}
	return 0;
}

int
swv_netif_open(struct swv_netif *nif, int fd, uint8_t mac[6])
{
	struct ifreq ifr;

	nif->fd = fd;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, nif->ifname, sizeof(nif->ifname));
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) != 0)
		return errno == ENXIO || errno == ENODEV ? ENODEV : errno;
	if (mac != NULL)
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	swv_netif_refresh(nif);
	if (nif->mtu == 0)
		return ENODEV;
	nif->next = swv_now_coarse_ns() + SWV_NETIF_REFRESH_NS;
	nif->speed = netif_ethtool_speed(fd, nif->ifname);
	nif->speed_next = swv_now_coarse_ns() + SWV_NETIF_SPEED_NS;
	nif->speed_stale = false;
	return 0;
}

uint32_t
swv_netif_mtu(struct swv_netif *nif)
{
	struct ifreq ifr;

	if (!nif->gone && netif_ifr(nif, &ifr) == 0)
		netif_mtu_read(nif, &ifr);
	return __atomic_load_n(&nif->mtu, __ATOMIC_RELAXED);
}

int
swv_netif_set_mtu(struct swv_netif *nif, uint32_t mtu)
{
	struct ifreq ifr;
	int err;

	err = netif_ifr(nif, &ifr);
	if (err != 0)
		return err;
	ifr.ifr_mtu = (int)mtu;
	netif_mtu_lock(nif);
	if (ioctl(nif->fd, SIOCSIFMTU, &ifr) != 0) {
		err = errno;
		netif_mtu_unlock(nif);
		return err;
	}
	/* Frames up to it go out from the next one on. */
	__atomic_store_n(&nif->mtu, mtu, __ATOMIC_RELAXED);
	netif_mtu_unlock(nif);
	return 0;
}

int
swv_netif_set_up(struct swv_netif *nif, bool up)
{
	struct ifreq ifr;
	int err;

	err = netif_ifr(nif, &ifr);
	if (err != 0)
		return err;
	if (ioctl(nif->fd, SIOCGIFFLAGS, &ifr) != 0)
		return errno;
	if (up)
		ifr.ifr_flags |= IFF_UP;
	else
		ifr.ifr_flags &= ~IFF_UP;
	if (ioctl(nif->fd, SIOCSIFFLAGS, &ifr) != 0)
		return errno;
	return 0;
}

uint32_t
swv_netif_speed(struct swv_netif *nif)
{
	uint64_t now = swv_now_coarse_ns();
	struct ifreq ifr;
	uint32_t speed = 0;

	if (!nif->speed_stale && now < nif->speed_next)
		return __atomic_load_n(&nif->speed, __ATOMIC_RELAXED);
	nif->speed_stale = false;
	nif->speed_next = now + SWV_NETIF_SPEED_NS;
	if (!nif->gone && netif_ifr(nif, &ifr) == 0)
		speed = netif_ethtool_speed(nif->fd, ifr.ifr_name);
	if (speed != 0)
		__atomic_store_n(&nif->speed, speed, __ATOMIC_RELAXED);
	else
		speed = __atomic_load_n(&nif->speed, __ATOMIC_RELAXED);
	return speed;
}

const uint8_t swv_netif_zeros[SWV_NETIF_MIN_FRAME];

uint32_t
swv_netif_frame_max(const struct swv_netif *nif, const struct iovec *iov,
		    int iovcnt)
{
	uint32_t max = __atomic_load_n(&nif->mtu, __ATOMIC_RELAXED) + ETH_HLEN;
	uint32_t at = 0, i;
	uint8_t type[2];
	int k = 0, j;

	/* The kernel allows 4 more bytes for an 802.1Q-tagged frame. */
	for (j = 0; j < iovcnt && k < 2; j++) {
		for (i = 0; i < iov[j].iov_len && k < 2; i++, at++) {
			if (at >= 2 * ETH_ALEN)
				type[k++] = ((const uint8_t *)iov[j].iov_base)[i];
		}
	}
	if (k == 2 && (type[0] << 8 | type[1]) == ETH_P_8021Q)
		max += 4;
	return max;
}

bool
swv_netif_wire_gone(struct swv_wire *wire)
{
	return swv_wire_netif(wire)->gone;
}

uint32_t
swv_netif_wire_mtu(struct swv_wire *wire)
{
	return swv_netif_mtu(swv_wire_netif(wire));
}

uint32_t
swv_netif_wire_speed(struct swv_wire *wire)
{
	return swv_netif_speed(swv_wire_netif(wire));
}

int
swv_netif_wire_set_link(struct swv_wire *wire, bool up)
{
	return swv_netif_set_up(swv_wire_netif(wire), up);
}
