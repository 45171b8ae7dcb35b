#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the seed corpus of fuzz_flow.c into app/fuzz/corpus/.

Each seed is one rule in the target's input format (see fuzz_flow.c):
valid rules of every item and action the PMD handles, and the usual ways
to get one wrong. Run again after changing the format; the files are
committed so the replay test does not need Python.
"""

import os
import struct

ITEMS = ["eth", "vlan", "ipv4", "ipv6", "tcp", "udp", "vxlan", "gre", "mpls",
         "esp", "void", "sctp", "icmp", "geneve", "nvgre", "any", "mark"]
ACTIONS = ["queue", "rss", "drop", "mark", "flag", "passthru", "void", "jump",
           "count", "dec_ttl", "pop_vlan"]
FULL = b"\xff" * 64


def item(name, spec=None, mask=None, last=None):
    present = (spec is not None) | (mask is not None) << 1 | \
        (last is not None) << 2
    out = bytes([ITEMS.index(name), present])
    for b in (spec, mask, last):
        if b is not None:
            out += bytes([len(b)]) + b
    return out


def queue(i, null=False):
    return bytes([int(null), ACTIONS.index("queue"), i])


def rss(queues, types=0, key=None, func=0, level=0, key_mode=None):
    out = bytes([0, ACTIONS.index("rss"), func, level])
    out += struct.pack("<Q", types)
    if key_mode is not None:
        out += bytes([key_mode])
    elif key is None:
        out += b"\x00"
    else:
        out += b"\x02" + bytes([len(key)]) + key
    if queues == "many":
        return out + b"\xff"
    return out + bytes([len(queues)] + list(queues))


def mark(i):
    return bytes([0, ACTIONS.index("mark")]) + struct.pack("<I", i)


def simple(name, null=True):
    return bytes([int(null), ACTIONS.index(name)])


def jump(group):
    return bytes([0, ACTIONS.index("jump")]) + struct.pack("<I", group)


def rule(items, actions, flags=0, prio=0):
    return bytes([flags, prio, len(items)]) + b"".join(items) + \
        bytes([len(actions)]) + b"".join(actions)


ETH_TYPE = b"\x00" * 12 + b"\x88\xf7"
IP4 = bytes(12) + bytes([10, 0, 0, 1, 10, 0, 0, 2])
IP4_MASK = bytes(12) + b"\xff" * 8
UDP = b"\x00\x00\x12\xb5"
UDP_MASK = b"\x00\x00\xff\xff"
VNI = bytes([0, 0, 0, 0, 0, 0, 42, 0])
VNI_MASK = bytes([0, 0, 0, 0, 0xff, 0xff, 0xff, 0])
RSS_IPV4_UDP = 1 << 5  # RTE_ETH_RSS_NONFRAG_IPV4_UDP

SEEDS = {
    "eth_type_drop": rule([item("eth", ETH_TYPE, b"\x00" * 12 + b"\xff\xff")],
                          [simple("drop")]),
    "eth_queue": rule([item("eth")], [queue(1)]),
    "eth_dst_queue": rule([item("eth", b"\x02" + bytes(5), FULL[:6])],
                          [queue(2)], prio=1),
    "ipv4_udp_queue": rule([item("eth"), item("ipv4", IP4, IP4_MASK),
                            item("udp", UDP, UDP_MASK)], [queue(3)]),
    "ipv4_udp_rss": rule([item("eth"), item("ipv4"), item("udp")],
                         [rss([0, 1, 2, 3], RSS_IPV4_UDP)]),
    "rss_three_queues": rule([item("eth")], [rss([3, 1, 2])]),
    "rss_key": rule([item("eth")], [rss([0, 1], 0, bytes(range(40)))]),
    "rss_bad_key_len": rule([item("eth")], [rss([0], 0, bytes(range(12)))]),
    "rss_key_null": rule([item("eth")], [rss([0], 0, key_mode=3)]),
    "rss_many_queues": rule([item("eth")], [rss("many")]),
    "rss_no_queue": rule([item("eth")], [rss([])]),
    "rss_bad_queue": rule([item("eth")], [rss([0, 5])]),
    "rss_func_xor": rule([item("eth")], [rss([0, 1], func=2)]),
    "rss_level2": rule([item("eth")], [rss([0, 1], level=2)]),
    "rss_bad_types": rule([item("eth")], [rss([0, 1], 1 << 40)]),
    "ipv6_tcp_queue": rule([item("eth"), item("ipv6"),
                            item("tcp", b"\x00\x00\x01\xbb",
                                 b"\x00\x00\xff\xff")],
                           [queue(2)], prio=1),
    "vxlan_inner": rule([item("eth"), item("ipv4"), item("udp", UDP, UDP_MASK),
                         item("vxlan", VNI, VNI_MASK), item("eth"),
                         item("ipv4")],
                        [rss([0, 1, 2, 3], RSS_IPV4_UDP), mark(7)]),
    "gre_mpls": rule([item("eth"), item("ipv4"), item("gre"), item("mpls")],
                     [queue(0)]),
    "esp_spi": rule([item("eth"), item("ipv4"),
                     item("esp", b"\x00\x00\x10\x00", b"\xff\xff\xff\xff")],
                    [queue(1)]),
    "vlan": rule([item("eth"), item("vlan", b"\x00\x2a\x08\x00",
                                    b"\x0f\xff\xff\xff")], [queue(1)]),
    "vlan_vid0": rule([item("eth"), item("vlan")], [queue(1)]),
    "mark_queue": rule([item("eth")], [mark(5), queue(0)]),
    "mark_max": rule([item("eth")], [mark(0xfffffd), queue(0)]),
    "mark_too_big": rule([item("eth")], [mark(0xfffffe), queue(0)]),
    "flag_queue": rule([item("eth")], [simple("flag"), queue(1)]),
    "mark_drop": rule([item("eth")], [mark(1), simple("drop")]),
    "mark_flag": rule([item("eth")], [mark(1), simple("flag"), queue(0)]),
    "two_fates": rule([item("eth")], [queue(0), simple("drop")]),
    "no_fate": rule([item("eth")], [simple("void"), simple("passthru")]),
    "queue_null": rule([item("eth")], [queue(0, null=True)]),
    "queue_out_of_range": rule([item("eth")], [queue(5)]),
    "jump0": rule([item("eth")], [jump(0), queue(0)]),
    "jump1": rule([item("eth")], [jump(1), queue(0)]),
    "count": rule([item("eth")], [bytes([0, ACTIONS.index("count"), 1, 0, 0,
                                         0]), queue(0)]),
    "egress": rule([item("eth")], [queue(0)], flags=2),
    "transfer": rule([item("eth")], [queue(0)], flags=4),
    "no_ingress": rule([item("eth")], [queue(0)], flags=1),
    "group1": rule([item("eth")], [queue(0)], flags=8),
    "prio_high": rule([item("eth")], [queue(0)], prio=19),
    "sctp": rule([item("eth"), item("ipv4"), item("sctp")], [queue(0)]),
    "last_range": rule([item("eth"), item("ipv4", IP4, IP4_MASK,
                                          bytes(12) + bytes([10, 0, 0, 9]))],
                       [queue(0)]),
    "last_same": rule([item("eth"), item("ipv4", IP4, IP4_MASK, IP4)],
                      [queue(0)]),
    "mask_unsupported": rule([item("eth"), item("ipv4", bytes(20),
                                                b"\xff\xff")], [queue(0)]),
    "bad_order": rule([item("udp"), item("eth")], [queue(0)]),
    "two_tunnels": rule([item("eth"), item("ipv4"), item("udp"),
                         item("vxlan"), item("eth"), item("ipv4"),
                         item("gre")], [queue(0)]),
    "twice_shared_rss": rule([item("eth")], [rss([1, 2])], flags=16),
    "restart": rule([item("eth", ETH_TYPE, b"\x00" * 12 + b"\xff\xff")],
                    [rss([0, 1, 2])], flags=32 | 16),
    "restart_drop": rule([item("eth")], [simple("drop")], flags=32),
    "empty": b"",
}


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print("%d seeds in %s" % (len(SEEDS), out))


if __name__ == "__main__":
    main()
