/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef VBR_UTILS_H
#define VBR_UTILS_H

#include <rte_log.h>

extern int vbr_logtype;

/** Log with the function name; adds the newline. Control path only. */
#define VBR_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, vbr_logtype, "vbr: %s(): " fmt "\n", \
		__func__, ##__VA_ARGS__)

#endif /* VBR_UTILS_H */
