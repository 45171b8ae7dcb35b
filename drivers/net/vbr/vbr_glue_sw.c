/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The swverbs call table, linked into the PMD, and the loader of the ibverbs
 * table, which lives in a separate object so that the PMD itself links no
 * optional library.
 */

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <swverbs.h>

#include "vbr_glue.h"

static int
vbr_sw_query_port_counters(struct ibv_context *context,
			   struct vbr_glue_port_counters *counters)
{
	struct swv_port_counters c;
	int ret;

	ret = swv_query_port_counters(context, &c);
	if (ret != 0)
		return ret;
	counters->out_of_buffer = c.rx_out_of_buffer;
	counters->no_match = c.rx_no_match;
	counters->rx_errors = c.rx_errors;
	counters->dropped = c.rx_dropped;
	counters->runts = c.rx_runts;
	return 0;
}

const struct vbr_glue vbr_glue_swverbs = {
	.name = "swverbs",
	.get_device_list = swv_get_device_list,
	.free_device_list = swv_free_device_list,
	.get_device_name = swv_get_device_name,
	.open_device = swv_open_device,
	.close_device = swv_close_device,
	.query_device_ex = swv_query_device_ex,
	.query_port = swv_query_port,
	.query_port_mac = swv_query_port_mac,
	.query_port_counters = vbr_sw_query_port_counters,
	.get_async_event = swv_get_async_event,
	.ack_async_event = swv_ack_async_event,
	.alloc_pd = swv_alloc_pd,
	.dealloc_pd = swv_dealloc_pd,
	.reg_mr = swv_reg_mr,
	.dereg_mr = swv_dereg_mr,
	.create_cq_ex = swv_create_cq_ex,
	.destroy_cq = swv_destroy_cq,
	.create_qp_ex = swv_create_qp_ex,
	.modify_qp = swv_modify_qp,
	.destroy_qp = swv_destroy_qp,
	.create_wq = swv_create_wq,
	.modify_wq = swv_modify_wq,
	.destroy_wq = swv_destroy_wq,
	.create_rwq_ind_table = swv_create_rwq_ind_table,
	.destroy_rwq_ind_table = swv_destroy_rwq_ind_table,
	.create_flow = swv_create_flow,
	.destroy_flow = swv_destroy_flow,
	.create_counters = swv_create_counters,
	.destroy_counters = swv_destroy_counters,
	.attach_counters_point_flow = swv_attach_counters_point_flow,
	.read_counters = swv_read_counters,
};

/* Loaded once; handles stay open for the life of the process. */
static const struct vbr_glue *vbr_glue_ibv_table;
static char vbr_glue_why[PATH_MAX + 256];

/* Where the glue object is: VBR_GLUE_PATH, else next to this PMD. */
static int
vbr_glue_path(char *path, size_t size)
{
	const char *env = getenv("VBR_GLUE_PATH");
	struct stat st;
	Dl_info info;
	char *slash;
	int n;

	if (env != NULL && env[0] != '\0') {
		if (stat(env, &st) == 0 && S_ISDIR(st.st_mode))
			n = snprintf(path, size, "%s/%s", env,
				     VBR_GLUE_IBV_LIB);
		else
			n = snprintf(path, size, "%s", env);
		return n < 0 || (size_t)n >= size ? -1 : 0;
	}
	if (dladdr((void *)(uintptr_t)vbr_glue_ibverbs_load, &info) == 0 ||
	    info.dli_fname == NULL)
		return -1;
	n = snprintf(path, size, "%s", info.dli_fname);
	if (n < 0 || (size_t)n >= size)
		return -1;
	slash = strrchr(path, '/');
	if (slash == NULL) {
		n = snprintf(path, size, "vbr-glue/%s", VBR_GLUE_IBV_LIB);
	} else {
		size_t dir_len = slash - path + 1;

		n = snprintf(slash + 1, size - dir_len, "vbr-glue/%s",
			     VBR_GLUE_IBV_LIB);
		if (n >= 0)
			n += dir_len;
	}
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

const struct vbr_glue *
vbr_glue_ibverbs_load(const char **why)
{
	char path[PATH_MAX];
	void *ibv, *glue;
	const struct vbr_glue *table;

	if (vbr_glue_ibv_table != NULL)
		return vbr_glue_ibv_table;
	*why = vbr_glue_why;
	ibv = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (ibv == NULL) {
		snprintf(vbr_glue_why, sizeof(vbr_glue_why),
			 "rdma-core is not installed (libibverbs.so.1: %s): "
			 "hardware devices cannot be opened; use "
			 "wire=loop|pair:<name>|af_packet:<ifname>",
			 dlerror());
		return NULL;
	}
	if (vbr_glue_path(path, sizeof(path)) != 0) {
		snprintf(vbr_glue_why, sizeof(vbr_glue_why),
			 "cannot locate %s (set VBR_GLUE_PATH)",
			 VBR_GLUE_IBV_LIB);
		dlclose(ibv);
		return NULL;
	}
	glue = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (glue == NULL) {
		snprintf(vbr_glue_why, sizeof(vbr_glue_why),
			 "cannot load the ibverbs glue %s: %s (set "
			 "VBR_GLUE_PATH to its file or folder)", path,
			 dlerror());
		dlclose(ibv);
		return NULL;
	}
	table = dlsym(glue, VBR_GLUE_IBV_SYMBOL);
	if (table == NULL) {
		snprintf(vbr_glue_why, sizeof(vbr_glue_why),
			 "%s has no symbol %s: wrong file", path,
			 VBR_GLUE_IBV_SYMBOL);
		dlclose(glue);
		dlclose(ibv);
		return NULL;
	}
	vbr_glue_ibv_table = table;
	*why = NULL;
	return table;
}
