#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Stock dpdk-testpmd flow commands on two vbr ports joined by a pair wire.

usage: test_flow_testpmd.py PATH/librte_net_vbr.so
Exit 0 on success, 1 on a failed check, 77 when dpdk-testpmd is missing.
"""

import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))
import testpmd_driver as tp  # noqa: E402

ISSUE_RULE = ("ingress pattern eth / ipv4 dst is 10.0.0.2 / udp dst is 4789 "
              "/ vxlan vni is 42 / eth / ipv4 / end actions rss queues 0 1 2 "
              "3 end types ipv4-udp end / mark id 7 / end")


def run(pmd):
    c = tp.Checker()
    t = tp.start_pair("flow", pmd, ["--rxq=4", "--txq=1",
                                    "--total-num-mbufs=8192"])
    try:
        t.wait_prompt()
        out = t.cmd("flow validate 0 " + ISSUE_RULE)
        c.check("Flow rule validated" in out, "issue rule validates")
        out = t.cmd("flow create 0 priority 1 ingress pattern eth / ipv6 / "
                    "tcp dst is 443 / end actions queue index 2 / end")
        # swverbs and a ConnectX steer IPv6 and TCP specs: created
        c.check("Flow rule #0 created" in out, "ipv6/tcp rule created")
        out = t.cmd("flow create 0 ingress pattern eth type is 0x88f7 / end "
                    "actions queue index 1 / end")
        m = re.search(r"Flow rule #(\d+) created", out)
        c.check(m is not None, "eth type rule created")
        out = t.cmd("flow create 0 ingress pattern eth dst is "
                    "02:00:00:00:00:99 / end actions queue index 3 / end")
        c.check("created" in out, "eth dst rule created")
        out = t.cmd("flow list 0")
        c.check(len(re.findall(r"^\d+\s+\d+\s+\d+\s+i-", out, re.M)) >= 2,
                "flow list shows the rules")
        out = t.cmd("flow dump 0 all")
        c.check("verbs attr: type NORMAL" in out and "ether_type 88f7/ffff"
                in out, "flow dump prints the verbs attr and specs")
        out = t.cmd("flow create 0 egress pattern eth / end actions "
                    "queue index 0 / end")
        c.check("egress rules are not supported" in out,
                "egress rejected with a reason")
        out = t.cmd("flow create 0 ingress pattern eth / end actions "
                    "mark id 1 / end")
        c.check("a fate action (queue, rss or drop) or a meter is required" in out,
                "no fate rejected")
        out = t.cmd("flow validate 0 ingress pattern eth / vlan / end "
                    "actions queue index 0 / end")
        c.check("non-zero VID" in out, "vlan without VID rejected")
        out = t.cmd("flow create 0 ingress pattern eth type is 0x88f7 / end "
                    "actions queue index 9 / end")
        c.check("queue 9 is not below the 4 Rx queues" in out,
                "queue index out of range rejected")
        if m:
            out = t.cmd(f"flow destroy 0 rule {m.group(1)}")
            c.check(f"Flow rule #{m.group(1)} destroyed" in out,
                    "flow destroy")
        # the header counts the rules listed, not the next rule id
        out = t.cmd("flow dump 0 all")
        hdr = re.search(r"port 0: .*?, (\d+) vbr rules,", out)
        listed = len(re.findall(r"^port 0 vbr rule \d+:", out, re.M))
        c.check(hdr is not None and listed >= 1 and
                int(hdr.group(1)) == listed,
                f"flow dump counts its {listed} rules "
                f"(says {hdr.group(1) if hdr else None})")
        out = t.cmd("flow isolate 0 true")
        c.check("stop the port to change isolated mode" in out,
                "isolate on a started port is refused")
        t.cmd("port stop 0")
        out = t.cmd("flow isolate 0 true")
        c.check("Ingress traffic on port 0 is now restricted" in out,
                "isolate on a stopped port")
        out = t.cmd("port start 0")
        c.check("Fail" not in out, "port starts isolated with its rules")
        t.cmd("port stop 0")
        out = t.cmd("flow isolate 0 false")
        c.check("is not restricted anymore" in out, "isolate off")
        t.cmd("port start 0")
        out = t.cmd("flow flush 0")
        c.check("Caught error" not in out, "flow flush")
        out = t.cmd("flow list 0")
        c.check(re.search(r"^\d+\s+\d+\s+\d+\s+i-", out, re.M) is None,
                "no rule after flush")
        rc = t.quit()
        c.check(rc == 0, f"testpmd exits 0 (got {rc})")
    except Exception as e:  # noqa: BLE001
        print(f"FAIL: {e}")
        t.kill()
        return 1
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(tp.main(run, __doc__))
