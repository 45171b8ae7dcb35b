#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Write a sysfs tree in which the system libibverbs finds swverbs devices
# through the swverbs provider (libswverbs-rdmav<PABI>.so; see
# doc/guides/swverbs.rst, "swverbs as an rdma-core provider"). libibverbs
# reads it when SYSFS_PATH names it and RDMA netlink fails (the provider's
# interposers make it fail while SYSFS_PATH is set). devtools/swverbs-run.sh
# writes one for the command it runs and removes it after.
#
# usage: swverbs-sysfs.sh DIR SPEC
#
# SPEC is NAME=WIRE[+KEY=VALUE...][,NAME=WIRE...]: one device per entry,
# named NAME, on WIRE, one of the wire= values of vbr's swverbs ports:
#   loop                     frames sent come back to the device
#   pair:<cable>             the two devices of the process on that cable
#   shm:<cable>              a cable in /dev/shm, between processes
#   af_packet:<ifname>       a Linux interface (CAP_NET_RAW)
#   af_xdp:<ifname>[:<queue>]  an interface queue, through AF_XDP
# and optional keys:
#   profile=mlx5|mlx5-noburst|mlx5-vf|full  swverbs' device profile (default mlx5)
#   mac=<aa:bb:cc:dd:ee:ff>  the port's MAC (default: the interface's on an
#                            interface wire, else one made from NAME)
#   netdev=<ifname>          the device's network interface: libibverbs
#                            users (vbr's glue) read its MTU, MAC and link
#                            and set them there; an interface wire has its
#                            interface as netdev unless this names another
#   also=<ifname>:<dev_port>[:<phys_port_name>]  one more interface in the
#                            device's device/net, with that dev_port (and
#                            phys_port_name, e.g. pf0vf0 for a VF
#                            representor); may be given several times: a
#                            function with a netdev per port, a switchdev
#                            PF with its representors. Its other leaves are
#                            the real interface's
#   port_ndev=<ifname>|none  the interface of the port's GID 0
#                            (ports/1/gid_attrs/ndevs/0), which the kernel
#                            ties to the port: a LAG's bond, not in
#                            device/net; none: no GID names one (RoCE off).
#                            Default: netdev
# e.g. swverbs0=pair:hw,swverbs1=pair:hw or swverbs0=af_packet:veth0.
#
# DIR is made if missing; the devices' files are written into it (an
# existing tree of the same names is replaced). Prints nothing; exit 2 on a
# bad SPEC, with the reason.

set -euo pipefail

die()
{
	printf 'swverbs-sysfs.sh: %s\n' "$*" >&2
	exit 2
}

[ $# -eq 2 ] || die "usage: swverbs-sysfs.sh DIR NAME=WIRE[+KEY=VALUE...][,NAME=WIRE...]"
DIR=$1
SPEC=$2

# A locally administered unicast MAC from a name (as stable as the name).
mac_of_name()
{
	local h

	h=$(printf '%s' "$1" | sha256sum | cut -c1-10)
	printf '02:%s:%s:%s:%s:%s\n' "${h:0:2}" "${h:2:2}" "${h:4:2}" \
		"${h:6:2}" "${h:8:2}"
}

# The EUI-64 of a MAC as four groups (node_guid) and the link-local GID.
eui64()
{
	local IFS=: b

	read -r -a b <<<"$1"
	printf '%02x%s:%sff:fe%s:%s%s\n' $((0x${b[0]} ^ 2)) "${b[1]}" \
		"${b[2]}" "${b[3]}" "${b[4]}" "${b[5]}"
}

put()
{
	mkdir -p "$(dirname "$1")"
	printf '%s\n' "$2" >"$1"
}

valid_name()
{
	[[ $1 =~ ^[A-Za-z0-9_.-]+$ ]] && [ ${#1} -lt 64 ] && [[ $1 != rxe* ]]
}

mkdir -p "$DIR"
put "$DIR/class/infiniband_verbs/abi_version" 6
IFS=, read -r -a ENTRIES <<<"$SPEC"
[ ${#ENTRIES[@]} -gt 0 ] || die "empty SPEC"
declare -A SEEN=()
idx=0
for entry in "${ENTRIES[@]}"; do
	[[ $entry == *=* ]] || die "$entry: give NAME=WIRE"
	name=${entry%%=*}
	rest=${entry#*=}
	valid_name "$name" ||
		die "$name: a device name is letters, digits, '_', '.', '-'" \
		    "(under 64, not starting with rxe, which rdma-core's rxe takes)"
	[ -z "${SEEN[$name]:-}" ] || die "$name: named twice"
	SEEN[$name]=1
	IFS=+ read -r -a parts <<<"$rest"
	wire=${parts[0]:-}
	profile=mlx5
	mac=""
	netdev=""
	port_ndev=""
	also=()
	for kv in "${parts[@]:1}"; do
		case $kv in
		profile=mlx5 | profile=mlx5-noburst | profile=mlx5-vf | profile=full)
			profile=${kv#profile=} ;;
		profile=*) die "$name: $kv: give profile=mlx5, mlx5-noburst, mlx5-vf or full" ;;
		mac=*)
			mac=${kv#mac=}
			[[ $mac =~ ^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$ ]] ||
				die "$name: $kv: not a MAC address"
			mac=${mac,,}
			;;
		netdev=*) netdev=${kv#netdev=} ;;
		also=*)
			[[ ${kv#also=} =~ ^[^:/]+:[0-9]+(:[A-Za-z0-9]+)?$ ]] ||
				die "$name: $kv: give also=<ifname>:<dev_port>[:<phys_port_name>]"
			also+=("${kv#also=}")
			;;
		port_ndev=*) port_ndev=${kv#port_ndev=} ;;
		*) die "$name: $kv: unknown key (profile=, mac=, netdev=, also=, port_ndev=)" ;;
		esac
	done
	ifname=""
	case $wire in
	loop) ;;
	pair:?* | shm:?*) ;;
	af_packet:?*) ifname=${wire#af_packet:} ;;
	af_xdp:?*)
		ifname=${wire#af_xdp:}
		ifname=${ifname%%:*}
		;;
	*)
		die "$name: wire \"$wire\": give loop, pair:<cable>," \
		    "shm:<cable>, af_packet:<ifname> or af_xdp:<ifname>[:<queue>]"
		;;
	esac
	[ -n "$netdev" ] || netdev=$ifname
	if [ -n "$netdev" ] && [ ! -e "/sys/class/net/$netdev" ]; then
		die "$name: no network interface $netdev"
	fi
	[ -n "$port_ndev" ] || port_ndev=$netdev
	if [ -n "$port_ndev" ] && [ "$port_ndev" != none ] &&
		[ ! -e "/sys/class/net/$port_ndev" ]; then
		die "$name: port_ndev=$port_ndev: no such network interface"
	fi
	# The MAC the device will have: swverbs takes an interface wire's
	# from the interface when none is given (no swverbs_mac then).
	gidmac=$mac
	if [ -z "$gidmac" ] && [ -n "$ifname" ]; then
		gidmac=$(cat "/sys/class/net/$ifname/address")
	elif [ -z "$gidmac" ]; then
		mac=$(mac_of_name "$name")
		gidmac=$mac
	fi
	guid=$(eui64 "$gidmac")

	uv=$DIR/class/infiniband_verbs/uverbs$idx
	ib=$DIR/class/infiniband/$name
	rm -rf "$uv" "$ib"
	put "$uv/ibdev" "$name"
	# /dev/infiniband/uverbsN is /dev/full (1:7): the provider's stat()
	# and open(), or a namespace, make it so
	put "$uv/dev" "1:7"
	put "$uv/abi_version" 1
	put "$ib/node_type" "1: CA"
	put "$ib/node_guid" "$guid"
	put "$ib/sys_image_guid" "$guid"
	put "$ib/board_id" "SWVERBS-$profile"
	put "$ib/device/modalias" "swverbs:$wire"
	put "$ib/device/swverbs_wire" "$wire"
	put "$ib/device/swverbs_profile" "$profile"
	[ -z "$mac" ] || put "$ib/device/swverbs_mac" "$mac"
	# A VF, as the PCI core marks one (device/physfn): the mlx5-vf
	# profile's; drivers tell its netdev the addresses it must receive
	[ "$profile" != mlx5-vf ] || mkdir -p "$ib/device/physfn"
	if [ -n "$netdev" ]; then
		mkdir -p "$ib/device/net"
		ln -s "/sys/class/net/$netdev" "$ib/device/net/$netdev"
	fi
	# Each also= interface: a directory of links to the real one's
	# leaves, but its own dev_port, dev_id and phys_port_name.
	for a in "${also[@]}"; do
		IFS=: read -r aif aport appn <<<"$a"
		[ -e "/sys/class/net/$aif" ] ||
			die "$name: also=$a: no network interface $aif"
		[ "$aif" != "$netdev" ] ||
			die "$name: also=$a: $aif is the netdev already"
		d=$ib/device/net/$aif
		[ ! -e "$d" ] || die "$name: also=$aif given twice"
		mkdir -p "$d"
		for leaf in /sys/class/net/"$aif"/*; do
			case ${leaf##*/} in
			dev_port | dev_id | phys_port_name) ;;
			*) ln -s "$leaf" "$d/${leaf##*/}" ;;
			esac
		done
		put "$d/dev_port" "$aport"
		put "$d/dev_id" "0x0"
		[ -z "$appn" ] || put "$d/phys_port_name" "$appn"
	done
	if [ -n "$port_ndev" ] && [ "$port_ndev" != none ]; then
		put "$ib/ports/1/gid_attrs/ndevs/0" "$port_ndev"
	fi
	# The port's one GID, link-local from the MAC, RoCE v2; one pkey.
	g=${guid//:/}
	put "$ib/ports/1/gids/0" "fe80:0000:0000:0000:${g:0:4}:${g:4:4}:${g:8:4}:${g:12:4}"
	put "$ib/ports/1/gid_attrs/types/0" "RoCE v2"
	put "$ib/ports/1/pkeys/0" "0xffff"
	put "$ib/ports/1/link_layer" "Ethernet"
	# The port's counters as a kernel gives them, counted at each read: a
	# FIFO the provider answers while the device is open in the process
	# (lib/swverbs/provider.c, hwc_serve())
	mkdir -p "$ib/ports/1/hw_counters"
	mkfifo -m 0644 "$ib/ports/1/hw_counters/out_of_buffer" ||
		die "$name: cannot make $ib/ports/1/hw_counters/out_of_buffer"
	idx=$((idx + 1))
done
