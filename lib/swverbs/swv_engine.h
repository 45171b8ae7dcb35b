/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * What the engine's parts (rx.c, tx.c, engine.c) share. Private to
 * lib/swverbs.
 */

#ifndef SWV_ENGINE_H
#define SWV_ENGINE_H

#include "swv_priv.h"

/* Prefetch distances, in WQEs or CQEs ahead of the current one. */
#define SWV_PF_WQE 16
#define SWV_PF_BUF 4
#define SWV_PF_CQE 16

#endif /* SWV_ENGINE_H */
