#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Run a DPDK secondary tool (dpdk-proc-info, dpdk-dumpcap, dpdk-pdump) on
# the vbr ports of a running primary, from the build tree:
#
#   devtools/dpdk-secondary.sh dpdk-dumpcap --file-prefix PREFIX -D
#
# Two things a secondary needs that the tools' command lines cannot give:
# - the vbr PMD: dpdk-dumpcap takes no EAL options (its -d is something
#   else), so the PMD from the build tree (VBR_PMD, default
#   build/drivers/librte_net_vbr.so) is preloaded and registers itself;
# - the primary's mempool drivers in the primary's order: a mempool keeps
#   the index of its ops in a per-process table, filled in the order the
#   drivers are loaded; Debian's dpdk-testpmd links some of them
#   (librte_mempool_dpaa, ...) and the tools do not, so the index of the
#   capture pool dumpcap and pdump make would name another driver in the
#   primary. The DPDK libraries the primary (VBR_PRIMARY, default
#   dpdk-testpmd) links are preloaded first, in its order.
# A preload given already (a sanitizer runtime) stays first.

set -e

# The helpers below (dirname, readelf, sed) run without the preload a
# caller gave (a sanitizer runtime would report their leaks and abort
# them); the tool gets it back, first.
pre=${LD_PRELOAD:-}
unset LD_PRELOAD

if [ $# -lt 1 ]; then
	echo "usage: $0 TOOL [ARGS...]" >&2
	exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
pmd=${VBR_PMD:-$root/build/drivers/librte_net_vbr.so}
primary=$(command -v "${VBR_PRIMARY:-dpdk-testpmd}") || {
	echo "$0: ${VBR_PRIMARY:-dpdk-testpmd} not found" >&2
	exit 1
}
if [ ! -f "$pmd" ]; then
	echo "$0: $pmd not built" >&2
	exit 1
fi
libs=$(readelf -d "$primary" |
	sed -n 's/.*(NEEDED).*\[\(librte_[^]]*\)\].*/\1/p' | tr '\n' ':')
LD_PRELOAD="${pre:+$pre:}$libs$pmd"
export LD_PRELOAD
exec "$@"
