/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The ibverbs glue object's version is checked at load: a glue object of
 * another build is refused with a message that says what to do, and the
 * one built with the PMD passes the check (the probe then goes on to look
 * for the device). Skips (77) without libibverbs.so.1.
 * usage: test-vbr-glue <librte_net_vbr.so> <glue of this build>
 *                      <glue of another version>
 */

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_bus_vdev.h>
#include <rte_log.h>

#include "test.h"
#include "vbr_test_port.h"

static const char *glue_this, *glue_other;

/* Probe a dev= port with VBR_GLUE_PATH=glue; *log gets what it logged. */
static int
probe_with(const char *glue, char **log)
{
	FILE *f, *old = rte_log_get_stream();
	size_t len = 0;
	int ret;

	*log = NULL;
	if (setenv("VBR_GLUE_PATH", glue, 1) != 0)
		return -1;
	f = open_memstream(log, &len);
	if (f == NULL)
		return -1;
	rte_openlog_stream(f);
	ret = rte_vdev_init("net_vbr0", "dev=vbr_glue_test_nodev");
	rte_openlog_stream(old);
	fclose(f);
	printf("  VBR_GLUE_PATH=%s: %d\n%s", glue, ret, *log);
	return ret;
}

static int
test_other_version_refused(void)
{
	char *log;
	int ret = probe_with(glue_other, &log);

	TEST_ASSERT_NOT_NULL(log, "log");
	TEST_ASSERT(ret < 0, "a glue of another version was accepted");
	TEST_ASSERT(strstr(log, "is version 0.0.0-othervbrbuild, this PMD "
			   "needs version ") != NULL,
		    "the message does not name both versions");
	TEST_ASSERT(strstr(log, "from another vbr build") != NULL &&
		    strstr(log, "VBR_GLUE_PATH") != NULL,
		    "the message does not say what to do");
	TEST_ASSERT(strstr(log, "no verbs device") == NULL &&
		    strstr(log, "get_device_list") == NULL,
		    "the refused glue was used");
	free(log);
	return TEST_SUCCESS;
}

static int
test_same_version_loaded(void)
{
	char *log;
	int ret = probe_with(glue_this, &log);

	TEST_ASSERT_NOT_NULL(log, "log");
	/* No such device: the probe fails, past the glue. */
	TEST_ASSERT(ret < 0, "a port on no device");
	TEST_ASSERT(strstr(log, "version") == NULL,
		    "the glue of this build was refused");
	TEST_ASSERT(strstr(log, "no verbs device named "
			   "vbr_glue_test_nodev") != NULL ||
		    strstr(log, "ibverbs: get_device_list") != NULL,
		    "the probe did not reach the ibverbs device list");
	free(log);
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite_glue = {
	.name = "vbr glue version",
	.cases = {
		/* The refused one first: a loaded table is kept. */
		TEST_CASE(test_other_version_refused),
		TEST_CASE(test_same_version_loaded),
		TEST_CASES_END(),
	},
};

int
main(int argc, char **argv)
{
	int ret;

	if (argc != 4) {
		fprintf(stderr, "usage: %s <pmd.so> <glue.so> <other glue.so>\n",
			argv[0]);
		return 2;
	}
	if (dlopen("libibverbs.so.1", RTLD_NOW | RTLD_GLOBAL) == NULL) {
		printf("SKIP: libibverbs.so.1: %s\n", dlerror());
		return 77;
	}
	glue_this = argv[2];
	glue_other = argv[3];
	if (vbr_test_eal_init(argv[0], argv[1], NULL, NULL, NULL) != 0)
		return 1;
	ret = unit_test_suite_runner(&suite_glue);
	rte_eal_cleanup();
	return ret;
}
