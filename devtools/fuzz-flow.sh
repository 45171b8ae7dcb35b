#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Fuzz rte_flow validate/create/destroy on a vbr port (app/fuzz/fuzz_flow.c)
# for a given time with libFuzzer and ASan, over app/fuzz/corpus; see
# devtools/fuzz-run.sh for where findings go.
#
# usage: fuzz-flow.sh [seconds (300)] [extra libFuzzer options...]
# Environment: VBR_FUZZ_BUILD_DIR (default build-fuzz), CC (default clang).

exec "$(dirname "${BASH_SOURCE[0]}")/fuzz-run.sh" flow corpus "$@"
