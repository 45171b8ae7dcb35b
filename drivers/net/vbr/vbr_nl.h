/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * RDMA netlink QP counters (vbr_nl.c), for the ibverbs glue: device @name
 * (the verbs device name), port @port. Return: 0 or the kernel's errno.
 */

#ifndef VBR_NL_H
#define VBR_NL_H

#include <stdint.h>

struct vbr_glue_mr;
struct vbr_glue_qp_counter;

int vbr_nl_set_auto_mode(const char *name, uint8_t port, uint32_t mask);
int vbr_nl_get_mode(const char *name, uint8_t port, uint32_t *mode,
		    uint32_t *mask);
/** Bind to counter *@cntn, or to a new one (*@cntn 0, set on return). */
int vbr_nl_bind_qp(const char *name, uint8_t port, uint32_t lqpn,
		   uint32_t *cntn);
int vbr_nl_unbind_qp(const char *name, uint8_t port, uint32_t lqpn,
		     uint32_t cntn);
int vbr_nl_counter_list(const char *name, uint8_t port,
			struct vbr_glue_qp_counter *c, unsigned int max,
			unsigned int *n);

/** The device's MRs with their counters (STAT_GET dump, STAT_RES=MR). */
int vbr_nl_mr_list(const char *name, struct vbr_glue_mr *m, unsigned int max,
		   unsigned int *n);

#endif /* VBR_NL_H */
