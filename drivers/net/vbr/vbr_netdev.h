/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * A port's netdev told what its vport must forward (vbr_netdev.c), for
 * both glues: a ConnectX VF or SF behind an eswitch gets only the frames
 * whose destination its netdev registered. rtnetlink through libmnl, as
 * ip(8) and bridge(8) make the requests:
 *
 *   address on the list   RTM_NEWNEIGH / RTM_DELNEIGH, AF_BRIDGE,
 *                         NTF_SELF, NUD_PERMANENT, NDA_LLADDR (`bridge fdb
 *                         add <mac> dev <if> self permanent`): the kernel
 *                         puts it on the netdev's unicast or multicast
 *                         list, and mlx5e registers the lists with the
 *                         vport
 *   promisc, allmulti     RTM_NEWLINK with ifi_change IFF_PROMISC or
 *                         IFF_ALLMULTI (`ip link set <if> promisc on`)
 *   the state now         RTM_GETLINK: the MAC and the flags a user set
 *
 * Each returns 0 or a positive errno: the kernel's (EPERM without
 * CAP_NET_ADMIN, EOPNOTSUPP, EEXIST: the address is listed already,
 * ENOENT: it is not), ENODEV (no such interface).
 */

#ifndef VBR_NETDEV_H
#define VBR_NETDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Put @mac on @ifname's address list (@add) or take it off. */
int vbr_netdev_fdb(const char *ifname, const uint8_t mac[6], bool add);
/** Set or clear @flag (IFF_PROMISC or IFF_ALLMULTI) of @ifname. */
int vbr_netdev_flag(const char *ifname, unsigned int flag, bool on);
/** @ifname's MAC and its IFF_* flags. */
int vbr_netdev_query(const char *ifname, uint8_t mac[6],
		     unsigned int *flags);

/**
 * A glue's port_vport() request (VBR_GLUE_VPORT_*) on the netdev
 * @ifname, with a sentence in why[len] on error.
 */
int vbr_netdev_vport(const char *ifname, int op, uint8_t mac[6], int *on,
		     char *why, size_t len);

#endif /* VBR_NETDEV_H */
