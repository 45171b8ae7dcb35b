/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef VBR_UTILS_H
#define VBR_UTILS_H

#include <errno.h>

#include <rte_log.h>

extern int vbr_logtype;

/** Log with the function name; adds the newline. Control path only. */
#define VBR_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, vbr_logtype, "vbr: %s(): " fmt "\n", \
		__func__, ##__VA_ARGS__)

/**
 * What to add to the message of a raw packet QP (or WQ) the device
 * refused: the kernel's uverbs creates them only for CAP_NET_RAW, and
 * says EPERM otherwise (swverbs' kernel wires say the same).
 */
static inline const char *
vbr_raw_qp_hint(int err)
{
	return err == EPERM ? " (raw packet QPs need CAP_NET_RAW)" : "";
}

#endif /* VBR_UTILS_H */
