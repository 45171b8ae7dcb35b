#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Mutation testing: small, deliberate faults the tests must notice.
#
# usage: mutants.sh [--list | --check | --show NAME] [--dir DIR]
#                   [--no-baseline] [NAME...]
#
#   --list         the mutants' names, one a line (nothing is built)
#   --check        only whether each mutant's snippet is in this tree's
#                  file exactly once (nothing is built or changed)
#   --show NAME    what the mutant changes, where, and its tests
#   --dir DIR      the scratch tree and its build in DIR, kept for the next
#                  run (incremental builds); default: a temporary folder
#                  build-mutants.XXXXXX in the repository, removed at the
#                  end. Not under a world-writable folder such as /tmp:
#                  EAL loads no plugin from there
#   --no-baseline  do not run the tests once without a mutant first
#   NAME...        only these mutants (default: every one)
#
# Each mutant is a file, an exact snippet of it, the snippet's replacement
# and the meson tests that must notice. The script copies the tree --
# HEAD, the uncommitted changes to tracked files and the untracked files
# git does not ignore -- into a scratch repository (a clone sharing this
# one's objects) with a build of its own; the caller's tree and build are
# never touched. There it builds once, runs every selected mutant's tests
# once unmutated (the baseline; a test that fails runs once more: failing
# again it can kill no mutant, passing it is flaky and its kills are
# marked [flaky]), then for each mutant: replace the snippet, rebuild
# (ninja), run its tests (meson test --no-rebuild, one at a time, their
# own timeouts), put the file back. A test notices when it fails (FAIL,
# TIMEOUT, ...), when its "totals:" line counts a failure, or when it
# skips for a reason devtools/skips.allowed does not allow
# (devtools/test-summary.py's rule: a product-caused skip is a failure).
#
# One line per mutant, then a summary:
#   killed        a test noticed (named, with what it said)
#   survived      every test passed (or skipped as the budget allows)
#   stale         the snippet is not in the file exactly once: the tree
#                 moved, the mutant must be rewritten
#   build-failed  the mutant does not compile: it tests nothing
#   untestable    every test of the mutant fails without it too
# Exit status: 0 when every mutant selected was killed, 1 otherwise, 2 on
# a usage error or a failed setup.
#
# Environment: VBR_MUTANTS_TIMEOUT_MULT, meson test's --timeout-multiplier
# (default 1). Heavy: run it outside CI's time budget, before resolving an
# issue; it builds a second tree (a few minutes) and runs each mutant's
# tests (a minute or two each). Run it niced on a shared machine.

# One compound command, read whole before it runs: a change to this file
# during a run does not reach that run.
{
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

NAMES=()
declare -A M_FILE M_TESTS M_WHAT M_ORIG M_REPL

# mutant NAME FILE "TEST..." "WHAT" <<'END'
# original lines (exact, tabs and all)
# =>
# replacement lines
# END
mutant() {
	local body
	body=$(cat)
	NAMES+=("$1")
	M_FILE[$1]=$2
	M_TESTS[$1]=$3
	M_WHAT[$1]=$4
	M_ORIG[$1]=${body%%$'\n'=>*}
	M_REPL[$1]=${body#*$'\n'=>$'\n'}
}

# ---------------------------------------------------------------------
# The mutants, grouped by file (a file's dependents rebuild once a run).
# ---------------------------------------------------------------------

# Meters: drivers/net/vbr/vbr_mtr.h (the profile as the policer sees it,
# the buckets' time, colour-aware rules). flow-meter-rate times frames
# so that refills matter and checks colours against its own RFC 2697 /
# 2698 / 4115 reference.
MTR=drivers/net/vbr/vbr_mtr.h
mutant mtr-sr-cir-half $MTR flow-meter-rate "srTCM at half its CIR" <<'END'
		.cir = mp->srtcm_rfc2697.cir,
=>
		.cir = mp->srtcm_rfc2697.cir / 2,
END
mutant mtr-tr-cir-half $MTR flow-meter-rate "trTCM at half its CIR" <<'END'
		.cir = mp->trtcm_rfc2698.cir,
=>
		.cir = mp->trtcm_rfc2698.cir / 2,
END
mutant mtr-tr-pir-half $MTR flow-meter-rate "trTCM at half its PIR" <<'END'
		.pir = mp->trtcm_rfc2698.pir,
=>
		.pir = mp->trtcm_rfc2698.pir / 2,
END
mutant mtr-t4-cir-half $MTR flow-meter-rate "RFC 4115 at half its CIR" <<'END'
		.cir = mp->trtcm_rfc4115.cir,
=>
		.cir = mp->trtcm_rfc4115.cir / 2,
END
mutant mtr-t4-eir-half $MTR flow-meter-rate "RFC 4115 at half its EIR" <<'END'
		.eir = mp->trtcm_rfc4115.eir,
=>
		.eir = mp->trtcm_rfc4115.eir / 2,
END
mutant mtr-t4-eir-101pct $MTR flow-meter-rate \
	"RFC 4115's EIR 1 % high (a meter at a real rate)" <<'END'
		.eir = mp->trtcm_rfc4115.eir,
=>
		.eir = mp->trtcm_rfc4115.eir * 101 / 100,
END
mutant mtr-tr-cir-102pct $MTR flow-meter-rate \
	"trTCM's CIR 2 % high (a meter at a real rate)" <<'END'
		.cir = mp->trtcm_rfc2698.cir,
=>
		.cir = mp->trtcm_rfc2698.cir * 102 / 100,
END
mutant mtr-sr-ebs-minus1 $MTR flow-meter-rate "srTCM's EBS a byte short" <<'END'
		.ebs = mp->srtcm_rfc2697.ebs,
=>
		.ebs = mp->srtcm_rfc2697.ebs - 1,
END
mutant mtr-no-packet-mode $MTR flow-meter-rate \
	"packet-mode profiles meter bytes" <<'END'
	p->packet_mode = mp->packet_mode != 0;
=>
	p->packet_mode = 0;
END
mutant mtr-refill-late-1ms $MTR flow-meter-rate \
	"the buckets refill from a clock 1 ms late" <<'END'
	uint64_t t = RTE_MAX(tsc, r->last);
=>
	uint64_t t = RTE_MAX(tsc - rte_get_tsc_hz() / 1000, r->last);
END
mutant mtr-aware-first-blind $MTR flow-meter-rate \
	"a colour-aware meter's first frame metered colour-blind" <<'END'
	c[0] = inc == NULL ? vbr_mtr_run(r, p, t, l) :
=>
	c[0] = 1 ? vbr_mtr_run(r, p, t, l) :
END
mutant mtr-aware-red-ignored $MTR flow-meter-rate \
	"colour-aware: a red input may turn yellow" <<'END'
	} else if (in != RTE_COLOR_RED && b >= l) {
=>
	} else if (b >= l) {
END
mutant mtr-aware-tr-yellow-ignored $MTR flow-meter-rate \
	"colour-aware trTCM: a yellow input may turn green" <<'END'
	} else if (in == RTE_COLOR_YELLOW || a < l) {
=>
	} else if (a < l) {
END
mutant mtr-aware-tr-pir-off-by-one $MTR flow-meter-rate \
	"colour-aware trTCM: a frame of exactly the P bucket is red" <<'END'
	if (in == RTE_COLOR_RED || b < l) {
=>
	if (in == RTE_COLOR_RED || b <= l) {
END

# A rule's priority: user levels in reverse order.
mutant steer-prio-reversed drivers/net/vbr/vbr_steer.c \
	"flow-pmd flow-packets" \
	"rte_flow priority levels reversed on the verbs priorities" <<'END'
	default:
		return flow->level * VBR_FLOW_PRIO_SUB +
		       vbr_flow_pt_sub(&d, pt);
=>
	default:
		return (levels - 1 - flow->level) * VBR_FLOW_PRIO_SUB +
		       vbr_flow_pt_sub(&d, pt);
END

# Counters off by one frame: the PMD's query and swverbs' tally.
mutant count-query-minus1 drivers/net/vbr/vbr_count.c \
	"flow-count flow-count-testpmd" \
	"COUNT query one frame short once anything was counted" <<'END'
	q->hits = v[0] - cnt->base[0];
=>
	q->hits = v[0] - cnt->base[0] - (v[0] != cnt->base[0]);
END
mutant count-tally-first-frame lib/swverbs/swv_priv.h \
	"swverbs-counters flow-count" \
	"swverbs' flow tally misses a rule's first frame (its bytes counted)" <<'END'
	SWV_STORE(&t->packets, SWV_LOAD(&t->packets) + 1);
=>
	SWV_STORE(&t->packets, SWV_LOAD(&t->packets) + (s != 0));
END

# Pacing: the rate, and the clock the pacer and its completions share.
mutant pace-rate-2pct-fast lib/swverbs/pacing.c \
	"swverbs-pacing swverbs-pacing-veth vbr-pmd-tm-pace testpmd-tm-rate testpmd-tm-veth" \
	"the pacer sends 2 % faster than the rate it reports" <<'END'
	qp->pace_rate = cfg->rate;
=>
	qp->pace_rate = cfg->rate + cfg->rate / 50;
END
mutant pace-clock-2pct-fast lib/swverbs/swv_clock.h \
	"swverbs-pacing swverbs-pacing-veth vbr-pmd-tm-pace testpmd-tm-rate testpmd-tm-veth tenant-gw-pacing" \
	"swverbs' clocks (the pacer's, its CQEs') run 2 % fast from the first read" <<'END'
/** CLOCK_MONOTONIC in ns. */
static inline uint64_t
swv_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/** CLOCK_MONOTONIC_COARSE in ns: cheap, a tick's resolution. */
static inline uint64_t
swv_now_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
=>
__attribute__((weak)) uint64_t swv_mutant_t0;

static inline uint64_t
swv_mutant_fast(uint64_t t)
{
	uint64_t z = 0;

	__atomic_compare_exchange_n(&swv_mutant_t0, &z, t, false,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	z = __atomic_load_n(&swv_mutant_t0, __ATOMIC_RELAXED);
	return t > z ? t + (t - z) / 50 : t;
}

/** CLOCK_MONOTONIC in ns. */
static inline uint64_t
swv_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return swv_mutant_fast((uint64_t)ts.tv_sec * 1000000000ull +
			       (uint64_t)ts.tv_nsec);
}

/** CLOCK_MONOTONIC_COARSE in ns: cheap, a tick's resolution. */
static inline uint64_t
swv_now_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return swv_mutant_fast((uint64_t)ts.tv_sec * 1000000000ull +
			       (uint64_t)ts.tv_nsec);
}
END

# A product-caused skip: no pacing caps. The rate tests skip ("the device
# does not pace"), a reason skips.allowed has not: a failure.
mutant skip-no-pacing-caps lib/swverbs/device.c \
	"vbr-pmd-tm-api testpmd-tm" \
	"the device reports no pacing (qp_rate_limit_max 0)" <<'END'
	attr->packet_pacing_caps.qp_rate_limit_max = dev->pace_max;
=>
	attr->packet_pacing_caps.qp_rate_limit_max = 0;
END

# RSS: a hash field lost, in the PMD's translation and in swverbs' hash.
mutant rss-udp-no-dport drivers/net/vbr/vbr_flow.c \
	"flow-translate vbr-pmd-rss vbr-pmd-rss-testpmd" \
	"RSS types with UDP hash the source port only" <<'END'
		l4 |= IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP;
=>
		l4 |= IBV_RX_HASH_SRC_PORT_UDP;
END
mutant rss-swv-udp-dport-ignored lib/swverbs/rss.c \
	"swverbs-rss vbr-pmd-rss vbr-pmd-rss-testpmd" \
	"swverbs' Toeplitz input leaves the UDP destination port out" <<'END'
		if (f & IBV_RX_HASH_DST_PORT_UDP) {
=>
		if (0 && (f & IBV_RX_HASH_DST_PORT_UDP)) {
END

# Rx checksum flags (software check) and the drop of an OVS frame: the
# PMD's Rx path. OVS's test forgives a loss the ports count (rx_errors,
# rx_missed_errors): the counted one is rare enough that TCP gets over it.
RXTX=drivers/net/vbr/vbr_rxtx.c
mutant csum-udp-zero-good $RXTX "vbr-pmd-offloads vbr-pmd-offloads-full" \
	"a UDP/IPv4 checksum of 0 flagged GOOD, not NONE" <<'END'
		if (*sum == 0)
			return RTE_MBUF_F_RX_L4_CKSUM_NONE;
=>
		if (*sum == 0)
			return RTE_MBUF_F_RX_L4_CKSUM_GOOD;
END
mutant csum-ip-bad-good $RXTX "vbr-pmd-offloads vbr-pmd-offloads-full" \
	"a wrong IPv4 header checksum flagged GOOD" <<'END'
			       RTE_MBUF_F_RX_IP_CKSUM_GOOD :
			       RTE_MBUF_F_RX_IP_CKSUM_BAD;
=>
			       RTE_MBUF_F_RX_IP_CKSUM_GOOD :
			       RTE_MBUF_F_RX_IP_CKSUM_GOOD;
END
mutant ovs-rx-drop-1in64 $RXTX ovs \
	"Rx loses one frame in 64, counted nowhere" <<'END'
	rxq->ipackets += n;
	rxq->ibytes += bytes;
	return n;
=>
	if (n > 0 && (rxq->ipackets + n) / 64 != rxq->ipackets / 64)
		rte_pktmbuf_free(pkts[--n]);
	rxq->ipackets += n;
	rxq->ibytes += bytes;
	return n;
END
mutant ovs-rx-drop-1in512-counted $RXTX ovs \
	"Rx loses one frame in 512, counted as an Rx error" <<'END'
	rxq->ipackets += n;
	rxq->ibytes += bytes;
	return n;
=>
	if (n > 0 && (rxq->ipackets + n) / 512 != rxq->ipackets / 512) {
		rte_pktmbuf_free(pkts[--n]);
		rxq->ierrors++;
	}
	rxq->ipackets += n;
	rxq->ibytes += bytes;
	return n;
END

# An xstat: renamed (the cases that read it skip, a reason the budget
# does not allow), and reading another counter.
mutant xstat-renamed drivers/net/vbr/vbr_stats.c \
	"vbr-pmd-xstats flow-packets" \
	"xstat rx_no_match renamed rx_no_matches" <<'END'
	{ "rx_no_match",
=>
	{ "rx_no_matches",
END
mutant xstat-wrong-counter drivers/net/vbr/vbr_stats.c \
	"vbr-pmd-xstats flow-packets" \
	"xstat rx_no_match reads the flow drops" <<'END'
	{ "rx_no_match",
	  offsetof(struct vbr_glue_port_counters, no_match),
=>
	{ "rx_no_match",
	  offsetof(struct vbr_glue_port_counters, dropped),
END

# shm wire: a slot index, and the ring's full check.
SHM=lib/swverbs/wire_shm.c
mutant shm-rx-slot-plus1 $SHM "swverbs-shm testpmd-shm" \
	"the shm consumer reads the slot after the one due" <<'END'
			slot = (e->tail + k) & (SWV_SHM_SLOTS - 1);
=>
			slot = (e->tail + k + 1) & (SWV_SHM_SLOTS - 1);
END
mutant shm-full-off-by-one $SHM "swverbs-shm testpmd-shm" \
	"a full shm ring takes one frame more (over the oldest)" <<'END'
		if (e->head - e->tail_c >= SWV_SHM_SLOTS) {
			e->tx_full = true;
=>
		if (e->head - e->tail_c > SWV_SHM_SLOTS) {
			e->tx_full = true;
END

# af_xdp wire: the Rx ring read in reverse within a batch.
mutant xdp-rx-desc-reversed lib/swverbs/wire_af_xdp.c \
	"swverbs-af-xdp vbr-pmd-af-xdp e2e-veth-af-xdp" \
	"af_xdp Rx takes a batch's descriptors last first" <<'END'
			d = xsk_ring_cons__rx_desc(&x->rx, idx + i);
=>
			d = xsk_ring_cons__rx_desc(&x->rx, idx + n - 1 - i);
END

# Tx recovery: the kept WQEs never posted again; one freed as sent.
TXQ=drivers/net/vbr/vbr_txq.c
mutant txq-recover-no-repost $TXQ "vbr-pmd-tx vbr-pmd-tx-full" \
	"a recovered send queue does not post its kept WQEs again" <<'END'
	txq->recoveries++;
	vbr_txq_repost(txq);
=>
	txq->recoveries++;
END
mutant txq-recover-free-refused $TXQ "vbr-pmd-tx vbr-pmd-tx-full" \
	"a recovery frees the first refused WQE as sent" <<'END'
		vbr_txq_free_upto(txq, unposted - 1);
=>
		vbr_txq_free_upto(txq, unposted);
END

# A crash at exit: testpmd's quit closes the ports.
mutant close-crash drivers/net/vbr/vbr.c "testpmd-debug testpmd-control" \
	"the PMD aborts when a port closes (testpmd's quit)" <<'END'
	vbr_release(priv);
	return 0;
}
=>
	vbr_release(priv);
	abort();
}
END

# ---------------------------------------------------------------------

usage() {
	sed -n '6,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

LIST=0
CHECK=0
SHOW=
DIR=
BASELINE=1
SEL=()
while [ $# -gt 0 ]; do
	case $1 in
	--list) LIST=1 ;;
	--check) CHECK=1 ;;
	--show) [ $# -ge 2 ] || usage; SHOW=$2; shift ;;
	--dir) [ $# -ge 2 ] || usage; DIR=$2; shift ;;
	--no-baseline) BASELINE=0 ;;
	-h|--help) usage ;;
	-*) usage ;;
	*) SEL+=("$1") ;;
	esac
	shift
done

if [ "$LIST" -eq 1 ]; then
	printf '%s\n' "${NAMES[@]}"
	exit 0
fi
if [ -n "$SHOW" ]; then
	[ -n "${M_FILE[$SHOW]:-}" ] || { echo "no mutant $SHOW" >&2; exit 2; }
	printf '%s: %s\nfile: %s\ntests: %s\n' "$SHOW" "${M_WHAT[$SHOW]}" \
	       "${M_FILE[$SHOW]}" "${M_TESTS[$SHOW]}"
	printf '%s\n' "${M_ORIG[$SHOW]}" | sed 's/^/- /'
	printf '%s\n' "${M_REPL[$SHOW]}" | sed 's/^/+ /'
	exit 0
fi
[ ${#SEL[@]} -gt 0 ] || SEL=("${NAMES[@]}")
for n in "${SEL[@]}"; do
	[ -n "${M_FILE[$n]:-}" ] || { echo "no mutant $n (--list)" >&2; exit 2; }
done

# count FILE SNIPPET: how many times SNIPPET is in FILE
count() {
	/usr/bin/python3 -c 'import sys; print(open(sys.argv[1]).read().count(sys.argv[2]))' "$1" "$2"
}

if [ "$CHECK" -eq 1 ]; then
	bad=0
	for n in "${SEL[@]}"; do
		f=${M_FILE[$n]}
		c=0
		[ ! -f "$ROOT/$f" ] || c=$(count "$ROOT/$f" "${M_ORIG[$n]}")
		if [ "$c" -ne 1 ]; then
			printf '%-13s %-30s %s\n' stale "$n" \
			       "the snippet is in $f $c times"
			bad=$((bad + 1))
		fi
	done
	echo "mutants: ${#SEL[@]} checked, $bad stale"
	[ "$bad" -eq 0 ]
	exit
fi

# ---------------------------------------------------------------------
# The scratch tree: a clone sharing this repository's objects, at HEAD,
# with the caller's uncommitted changes and untracked files on top.
# ---------------------------------------------------------------------

KEEP=1
if [ -z "$DIR" ]; then
	DIR=$(mktemp -d "$ROOT/build-mutants.XXXXXX") || exit 2
	KEEP=0
fi
mkdir -p "$DIR" || exit 2
DIR=$(cd "$DIR" && pwd)
# EAL loads no plugin (the PMD, for testpmd) from under a world-writable
# folder such as /tmp: the tests would fail with no mutant.
d=$DIR
while [ -n "$d" ]; do
	if [ -n "$(find "$d" -maxdepth 0 -perm -0002)" ]; then
		echo "mutants.sh: $d is world-writable: EAL would load no" \
		     "plugin from $DIR (take another --dir)" >&2
		[ "$KEEP" -eq 1 ] || rm -rf -- "$DIR"
		exit 2
	fi
	[ "$d" != / ] || break
	d=$(dirname "$d")
done
TREE=$DIR/tree
LOGS=$DIR/logs
mkdir -p "$LOGS"

CUR=		# the file a mutant changed, put back on exit
CUR_ORIG=
# shellcheck disable=SC2317  # the EXIT trap calls it
cleanup() {
	if [ -n "$CUR" ]; then
		cp -- "$CUR_ORIG" "$TREE/$CUR"
	fi
	if [ "$KEEP" -eq 0 ]; then
		rm -rf -- "$DIR"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

say() { printf '==> %s\n' "$*" >&2; }

prepare() {
	local sha
	sha=$(git -C "$ROOT" rev-parse HEAD) || return 1
	if [ ! -d "$TREE/.git" ]; then
		git clone -q --shared --no-checkout "$ROOT" "$TREE" || return 1
	fi
	git -C "$TREE" checkout -q -f --detach "$sha" || return 1
	git -C "$TREE" clean -q -fd || return 1
	git -C "$ROOT" diff --binary HEAD > "$DIR/local.diff" || return 1
	if [ -s "$DIR/local.diff" ]; then
		git -C "$TREE" apply --whitespace=nowarn "$DIR/local.diff" ||
			return 1
	fi
	(cd "$ROOT" && git ls-files -z --others --exclude-standard |
	 tar --null -T - -cf -) | tar -C "$TREE" -xf - || return 1
	if [ -e "$ROOT/.sdk" ] && [ ! -e "$TREE/.sdk" ]; then
		ln -s "$(cd "$ROOT/.sdk" && pwd -P)" "$TREE/.sdk" || return 1
	fi
	return 0
}

say "scratch tree $TREE ($(git -C "$ROOT" rev-parse --short HEAD)" \
    "and the uncommitted changes)"
if ! prepare; then
	echo "mutants.sh: could not make the scratch tree in $TREE" >&2
	exit 2
fi
if [ ! -f "$TREE/build/build.ninja" ]; then
	say "setup and first build (devtools/setup.sh), log $LOGS/setup.log"
	if ! (cd "$TREE" && VBR_BUILD_DIR=build bash devtools/setup.sh) \
	     > "$LOGS/setup.log" 2>&1; then
		tail -n 20 "$LOGS/setup.log" >&2
		echo "mutants.sh: setup failed" >&2
		exit 2
	fi
fi
say "build without a mutant"
if ! ninja -C "$TREE/build" > "$LOGS/build.log" 2>&1; then
	tail -n 20 "$LOGS/build.log" >&2
	echo "mutants.sh: the tree does not build without a mutant" >&2
	exit 2
fi

# ---------------------------------------------------------------------
# Running tests and reading their verdicts.
# ---------------------------------------------------------------------

# verdicts LOG.json: "TEST<tab>pass|skip|fail<tab>what" per test, by
# devtools/test-summary.py's rules and devtools/skips.allowed.
verdicts() {
	/usr/bin/python3 - "$TREE/devtools" "$1" <<'EOF'
import importlib.util
import json
import re
import sys

tools, log = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location(
    "summary", tools + "/test-summary.py")
ts = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ts)
rules = ts.load_budget(tools + "/skips.allowed", False)
with open(log) as f:
    for line in f:
        if not line.strip():
            continue
        t = json.loads(line)
        name = t["name"].split(" / ")[-1]
        res = t["result"]
        ok = res in ("OK", "EXPECTEDFAIL", "SKIP")
        own = ts.TOTALS.findall(t.get("stdout") or "")
        bad = [r for r, _ in ts.skips_of(t) if not ts.allowed(rules, name, r)]
        if not ok:
            lines = [x.strip() for x in (t.get("stdout") or "").splitlines()
                     if not re.search(r"\d+ failed, \d+ skipped", x)]
            said = [x for x in lines
                    if re.search(r"FAIL|assert|failed \(", x)] or \
                   [x for x in lines if re.search(r"[Ff]ailed|[Ee]rror", x)]
            v, why = "fail", res + (": " + said[0][:120] if said else "")
        elif own and int(own[-1][1]) > 0:
            v, why = "fail", "%s failed in its totals" % own[-1][1]
        elif bad:
            v, why = "fail", "skip not allowed: " + bad[0]
        elif res == "SKIP":
            v, why = "skip", "skipped"
        else:
            v, why = "pass", res
        print("%s\t%s\t%s" % (name, v, why))
EOF
}

# run_tests LOGBASE TEST...: meson test, one at a time; the verdicts file
# LOGS/LOGBASE.verdicts
run_tests() {
	local base=$1 json
	shift
	rm -f "$TREE/build/meson-logs/$base.json"
	meson test -C "$TREE/build" --no-rebuild --num-processes 1 \
		--timeout-multiplier "${VBR_MUTANTS_TIMEOUT_MULT:-1}" \
		--logbase "$base" "$@" > "$LOGS/$base.out" 2>&1 </dev/null
	json=$TREE/build/meson-logs/$base.json
	if [ ! -f "$json" ]; then
		: > "$LOGS/$base.verdicts"
		for t in "$@"; do
			printf '%s\terror\tmeson test ran nothing (see %s)\n' \
			       "$t" "$LOGS/$base.out" >> "$LOGS/$base.verdicts"
		done
		return
	fi
	verdicts "$json" > "$LOGS/$base.verdicts"
}

# Python does the exact replacement: "stale" unless the snippet is there
# exactly once.
apply_mutant() {
	/usr/bin/python3 - "$1" "$2" "$3" <<'EOF'
import sys

path, orig, repl = sys.argv[1], sys.argv[2], sys.argv[3]
with open(path) as f:
    text = f.read()
n = text.count(orig)
if n != 1:
    print("the snippet is in %s %d times" % (path, n))
    sys.exit(3)
with open(path, "w") as f:
    f.write(text.replace(orig, repl))
EOF
}

# The tests there are: a mutant naming another is stale.
declare -A KNOWN
while read -r t; do
	KNOWN[${t##* / }]=1
done < <(meson test -C "$TREE/build" --no-rebuild --list 2>/dev/null)

declare -A BASE_FAIL FLAKY
if [ "$BASELINE" -eq 1 ]; then
	declare -A seen
	all=()
	for n in "${SEL[@]}"; do
		for t in ${M_TESTS[$n]}; do
			[ -n "${seen[$t]:-}" ] || all+=("$t")
			seen[$t]=1
		done
	done
	say "baseline: ${all[*]}"
	run_tests baseline "${all[@]}"
	again=()
	while IFS=$'\t' read -r t v why; do
		[ "$v" = pass ] || [ "$v" = skip ] || again+=("$t")
	done < "$LOGS/baseline.verdicts"
	# A timing-sensitive test may fail once on a loaded machine: once
	# more; one that passes then is flaky here, and its kills say so.
	if [ ${#again[@]} -gt 0 ]; then
		say "baseline: again: ${again[*]}"
		run_tests baseline-again "${again[@]}"
		while IFS=$'\t' read -r t v why; do
			if [ "$v" = pass ] || [ "$v" = skip ]; then
				FLAKY[$t]=1
				say "baseline: $t failed once, then passed:" \
				    "flaky here, its kills are marked"
			else
				BASE_FAIL[$t]=1
				say "baseline: $t fails without a mutant" \
				    "($why): it kills nothing"
			fi
		done < "$LOGS/baseline-again.verdicts"
	fi
fi

# ---------------------------------------------------------------------
# The mutants.
# ---------------------------------------------------------------------

killed=0 survived=0 stale=0 nobuild=0 untestable=0
report() { printf '%-13s %-30s %s\n' "$1" "$2" "$3"; }

for n in "${SEL[@]}"; do
	f=${M_FILE[$n]}
	if [ ! -f "$TREE/$f" ]; then
		report stale "$n" "$f: no such file"
		stale=$((stale + 1))
		continue
	fi
	missing=
	for t in ${M_TESTS[$n]}; do
		[ -n "${KNOWN[$t]:-}" ] || missing+=" $t"
	done
	if [ -n "$missing" ]; then
		report stale "$n" "no such test:$missing"
		stale=$((stale + 1))
		continue
	fi
	cp -- "$TREE/$f" "$DIR/orig"
	CUR_ORIG=$DIR/orig
	CUR=$f
	if ! why=$(apply_mutant "$TREE/$f" "${M_ORIG[$n]}" "${M_REPL[$n]}"); then
		CUR=
		report stale "$n" "${why:-cannot apply}"
		stale=$((stale + 1))
		continue
	fi
	say "$n: $f: build"
	if ! ninja -C "$TREE/build" > "$LOGS/$n.build.log" 2>&1; then
		report build-failed "$n" "$(grep -m1 -E 'error' \
			"$LOGS/$n.build.log" | cut -c1-160)"
		nobuild=$((nobuild + 1))
	else
		# shellcheck disable=SC2086
		say "$n: tests: ${M_TESTS[$n]}"
		# shellcheck disable=SC2086
		run_tests "mut-$n" ${M_TESTS[$n]}
		by=() errs=() ran=0 skipped=0
		while IFS=$'\t' read -r t v why; do
			[ -z "${BASE_FAIL[$t]:-}" ] || continue
			ran=$((ran + 1))
			case $v in
			fail) by+=("$t${FLAKY[$t]:+ [flaky]} ($why)") ;;
			skip) skipped=$((skipped + 1)) ;;
			error) errs+=("$t ($why)") ;;
			esac
		done < "$LOGS/mut-$n.verdicts"
		if [ ${#by[@]} -gt 0 ]; then
			report killed "$n" "by $(printf '%s; ' "${by[@]}" |
				sed 's/; $//')"
			killed=$((killed + 1))
		elif [ ${#errs[@]} -gt 0 ]; then
			report untestable "$n" "${errs[0]}"
			untestable=$((untestable + 1))
		elif [ "$ran" -eq 0 ]; then
			report untestable "$n" \
				"its tests fail without it: ${M_TESTS[$n]}"
			untestable=$((untestable + 1))
		else
			extra=
			[ "$skipped" -eq 0 ] ||
				extra=" ($skipped of $ran skipped, as allowed)"
			report survived "$n" \
				"${M_WHAT[$n]}: ${M_TESTS[$n]} passed$extra"
			survived=$((survived + 1))
		fi
	fi
	cat -- "$DIR/orig" > "$TREE/$f"	# a new mtime: rebuilt next time
	CUR=
done

echo "mutants: $killed killed, $survived survived, $stale stale," \
     "$nobuild build-failed, $untestable untestable"
[ $((survived + stale + nobuild + untestable)) -eq 0 ]
exit
}
