#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# A veth pair with one end in its own network namespace, for e2e tests and
# benchmarks of the af_packet wire.
#
#   netns-veth.sh up <prefix> [--mtu N] [--offload]
#       <prefix>0: root namespace, up
#       <prefix>1: inside namespace <prefix>ns, up
#       Prints "<prefix>0 <prefix>1 <prefix>ns". Already up: just prints.
#       IPv6 is disabled on both ends (no router/neighbour solicitations on
#       the wire). Unless --offload, checksum/TSO/GSO offloads are turned off
#       on <prefix>1 so that the namespace sends finished, MTU-sized frames
#       (a NIC never receives GSO super-frames).
#   netns-veth.sh down <prefix>
#       Removes both ends and the namespace. Nothing there: no error.
#
# An "up" that fails or is interrupted (SIGINT, SIGTERM, SIGHUP) half-way
# removes what that run made, and only that: a pair or namespace that was
# there before (a live user's) stays. Callers that keep the pair remove it on their own
# exit paths (the e2e scripts: finally, and sys.exit on those signals);
# devtools/test.sh removes, before it starts, namespaces named after a
# test's pid (vba<pid>, vbrt<pid>, vbe<pid>ns, vbf<pid>ns) whose process is
# gone.
#
# Names are limited to 15 characters: keep <prefix> at 12 or fewer.
# Needs root (or CAP_NET_ADMIN + CAP_SYS_ADMIN) and iproute2.

set -e

usage() {
    echo "usage: $0 up <prefix> [--mtu N] [--offload] | down <prefix>" >&2
    exit 2
}

[ $# -ge 2 ] || usage
cmd=$1
prefix=$2
shift 2
[ ${#prefix} -le 12 ] || { echo "$0: prefix too long: $prefix" >&2; exit 2; }
a=${prefix}0
b=${prefix}1
ns=${prefix}ns

down() {
    if ip link show "$a" >/dev/null 2>&1; then
        ip link del "$a"
    fi
    if ip netns list | grep -qw "^$ns"; then
        ip netns del "$ns"
    fi
}

case $cmd in
up)
    mtu=
    offload=no
    while [ $# -gt 0 ]; do
        case $1 in
        --mtu) [ $# -ge 2 ] || usage; mtu=$2; shift 2 ;;
        --offload) offload=yes; shift ;;
        *) usage ;;
        esac
    done
    # half-way (an error under set -e, or a signal): take down again what
    # this run made
    made_ns=no
    made_link=no
    undo() {
        if [ $made_link = yes ]; then ip link del "$a" >/dev/null 2>&1 || :; fi
        if [ $made_ns = yes ]; then ip netns del "$ns" >/dev/null 2>&1 || :; fi
    }
    trap 'trap - EXIT; undo; exit 1' INT TERM HUP
    trap 'undo' EXIT
    if ! ip netns list | grep -qw "^$ns"; then
        ip netns add "$ns"
        made_ns=yes
    fi
    if ! ip link show "$a" >/dev/null 2>&1; then
        ip link add "$a" type veth peer name "$b" netns "$ns"
        made_link=yes
    fi
    for f in /proc/sys/net/ipv6/conf/"$a"/disable_ipv6; do
        [ -w "$f" ] && echo 1 >"$f"
    done
    ip netns exec "$ns" sh -c \
        "[ -w /proc/sys/net/ipv6/conf/$b/disable_ipv6 ] &&
         echo 1 >/proc/sys/net/ipv6/conf/$b/disable_ipv6 || true"
    if [ -n "$mtu" ]; then
        ip link set "$a" mtu "$mtu"
        ip -n "$ns" link set "$b" mtu "$mtu"
    fi
    if [ $offload = no ] && command -v ethtool >/dev/null 2>&1; then
        ip netns exec "$ns" ethtool -K "$b" tx off tso off gso off \
            >/dev/null 2>&1 || true
    fi
    ip link set "$a" up
    ip -n "$ns" link set lo up
    ip -n "$ns" link set "$b" up
    trap - EXIT INT TERM HUP
    echo "$a $b $ns"
    ;;
down)
    [ $# -eq 0 ] || usage
    down
    ;;
*)
    usage
    ;;
esac
