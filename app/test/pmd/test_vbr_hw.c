/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * net/vbr on an RDMA NIC (suite 'hw'). Skips (exit 77) when libibverbs or
 * the glue object cannot be loaded, or when the glue lists no verbs device;
 * otherwise brings a port up on the first device and reads its link.
 * usage: test-vbr-hw <librte_net_vbr.so> <librte_net_vbr_glue_ibv.so>
 */

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "test.h"
#include "vbr_test_port.h"
#include "vbr_glue.h"

static char ibdev[64];
static char vdev_arg[128];
static const char *glue_path;

/* Find the first verbs device through the glue object. */
static int
find_device(void)
{
	const struct vbr_glue *glue;
	struct ibv_device **list;
	void *h;
	int n = 0;

	if (dlopen("libibverbs.so.1", RTLD_NOW | RTLD_GLOBAL) == NULL)
		TEST_SKIP("libibverbs.so.1: %s", dlerror());
	h = dlopen(glue_path, RTLD_NOW);
	TEST_ASSERT_NOT_NULL(h, "%s: %s", glue_path, dlerror());
	glue = dlsym(h, VBR_GLUE_IBV_SYMBOL);
	TEST_ASSERT_NOT_NULL(glue, "no symbol " VBR_GLUE_IBV_SYMBOL);
	list = glue->get_device_list(&n);
	if (list == NULL || n == 0) {
		if (list != NULL)
			glue->free_device_list(list);
		TEST_SKIP("no RDMA device");
	}
	snprintf(ibdev, sizeof(ibdev), "%s", glue->get_device_name(list[0]));
	glue->free_device_list(list);
	return TEST_SUCCESS;
}

static int
test_hw_port(void)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_mempool *mp;
	struct rte_eth_link link;
	uint16_t port;

	TEST_ASSERT_SUCCESS(rte_eth_dev_get_port_by_name("net_vbr0", &port),
			    "port for %s", ibdev);
	mp = rte_pktmbuf_pool_create("hw", 4095, 256, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	TEST_ASSERT_NOT_NULL(mp, "mempool");
	TEST_ASSERT_SUCCESS(rte_eth_dev_configure(port, 1, 1, &conf), "conf");
	TEST_ASSERT_SUCCESS(rte_eth_rx_queue_setup(port, 0, 512, SOCKET_ID_ANY,
						   NULL, mp), "rxq");
	TEST_ASSERT_SUCCESS(rte_eth_tx_queue_setup(port, 0, 512, SOCKET_ID_ANY,
						   NULL), "txq");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port), "start");
	TEST_ASSERT_SUCCESS(rte_eth_link_get(port, &link), "link");
	printf("  %s: link %s, %u Mb/s\n", ibdev,
	       link.link_status ? "up" : "down", link.link_speed);
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port), "stop");
	TEST_ASSERT_SUCCESS(rte_eth_dev_close(port), "close");
	rte_mempool_free(mp);
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite_hw = {
	.name = "vbr hw",
	.cases = {
		TEST_CASE(test_hw_port),
		TEST_CASES_END(),
	},
};

int
main(int argc, char **argv)
{
	int ret;

	if (argc != 3) {
		fprintf(stderr, "usage: %s <pmd.so> <glue.so>\n", argv[0]);
		return 2;
	}
	glue_path = argv[2];
	ret = find_device();
	if (ret == TEST_SKIPPED)
		return 77;
	if (ret != TEST_SUCCESS)
		return 1;
	snprintf(vdev_arg, sizeof(vdev_arg), "net_vbr0,dev=%s", ibdev);
	if (vbr_test_eal_init(argv[0], argv[1], NULL, NULL, vdev_arg) != 0)
		return 1;
	ret = unit_test_suite_runner(&suite_hw);
	rte_eal_cleanup();
	return ret;
}
