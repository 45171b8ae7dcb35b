#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Fuzz the swverbs receive path against its reference model
# (app/fuzz/fuzz_rx.c) for a given time with libFuzzer, ASan and UBSan,
# over app/fuzz/corpus-rx; see devtools/fuzz-run.sh for where findings go.
#
# LeakSanitizer's check after every input that allocates more than it frees
# (most do: swverbs frees retired tables in batches) makes a run ~10 times
# slower, so it is off unless VBR_FUZZ_LEAKS=1; the run's peak RSS (last
# lines, and -rss_limit_mb) still shows a leak that grows.
#
# usage: fuzz-rx.sh [seconds (300)] [extra libFuzzer options...]
# Environment: VBR_FUZZ_BUILD_DIR (default build-fuzz), CC (default clang),
# VBR_FUZZ_LEAKS.

SECS=${1:-300}
shift || true
LEAKS=-detect_leaks=0
[ "${VBR_FUZZ_LEAKS:-0}" = 1 ] && LEAKS=-detect_leaks=1
exec "$(dirname "${BASH_SOURCE[0]}")/fuzz-run.sh" rx corpus-rx "$SECS" \
	-max_len=512 "$LEAKS" "$@"
