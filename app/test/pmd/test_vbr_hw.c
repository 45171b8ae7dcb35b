/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * net/vbr on an RDMA NIC (suite 'hw'): the same flow, counter, RSS and
 * traffic suites as on swverbs, run with VBR_TEST_DEV (and
 * VBR_TEST_DEV_PEER) set, so that they open their ports on the NIC.
 * Skips (77) without VBR_TEST_DEV. Checks first, through the glue object,
 * that the named devices exist (a clear failure, listing the devices there
 * are, when not); then runs each suite and sums up. A suite that skips
 * (swverbs-only internals) counts as skipped; the run fails if one fails.
 * The last line, "totals: N passed, N failed, N skipped", counts the
 * suites: devtools/test.sh adds it to its totals in place of this one test.
 * usage: test-vbr-hw <librte_net_vbr_glue.so.<version>> -- <suite> [args]
 *                    [-- <suite> [args]]...
 */

#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "vbr_glue.h"

extern char **environ;

/* Whether the glue lists a verbs device called name; prints the list. */
static bool
have_device(const struct vbr_glue *glue, const char *name)
{
	struct ibv_device **list;
	bool found = false;
	int n = 0, i;

	list = glue->get_device_list(&n);
	if (list == NULL) {
		printf("ibverbs lists no device: %s\n", strerror(errno));
		return false;
	}
	for (i = 0; i < n; i++)
		if (strcmp(glue->get_device_name(list[i]), name) == 0)
			found = true;
	if (!found) {
		printf("no verbs device %s; there are:", name);
		for (i = 0; i < n; i++)
			printf(" %s", glue->get_device_name(list[i]));
		printf("%s\n", n == 0 ? " none" : "");
	}
	glue->free_device_list(list);
	return found;
}

/* Run argv[0] with its arguments; its exit status, or 1. */
static int
run_suite(char **argv)
{
	int status, i;
	pid_t pid;

	printf("== ");
	for (i = 0; argv[i] != NULL; i++)
		printf("%s ", argv[i]);
	printf("\n");
	fflush(stdout);
	if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0) {
		printf("cannot run %s: %s\n", argv[0], strerror(errno));
		return 1;
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}

int
main(int argc, char **argv)
{
	const char *dev = getenv("VBR_TEST_DEV");
	const char *peer = getenv("VBR_TEST_DEV_PEER");
	unsigned int passed = 0, failed = 0, skipped = 0;
	const struct vbr_glue *glue;
	int i, j, start, ret;
	void *h;

	if (argc < 4 || strcmp(argv[2], "--") != 0) {
		fprintf(stderr, "usage: %s <glue.so> -- <suite> [args] "
			"[-- <suite> [args]]...\n", argv[0]);
		return 2;
	}
	if (dev == NULL || dev[0] == '\0') {
		printf("SKIP: set VBR_TEST_DEV=<verbs device> (and "
		       "VBR_TEST_DEV_PEER=<the port cabled to it>) to run the "
		       "suites on a NIC\n");
		return 77;
	}
	if (dlopen("libibverbs.so.1", RTLD_NOW | RTLD_GLOBAL) == NULL) {
		printf("VBR_TEST_DEV=%s, but libibverbs.so.1: %s\n", dev,
		       dlerror());
		return 1;
	}
	h = dlopen(argv[1], RTLD_NOW);
	glue = h != NULL ? dlsym(h, VBR_GLUE_IBV_SYMBOL) : NULL;
	if (glue == NULL) {
		printf("%s: %s\n", argv[1], dlerror());
		return 1;
	}
	if (!have_device(glue, dev) ||
	    (peer != NULL && peer[0] != '\0' && !have_device(glue, peer)))
		return 1;
	for (start = 3; start < argc; start = i + 1) {
		for (i = start; i < argc && strcmp(argv[i], "--") != 0; i++)
			;
		argv[i < argc ? i : argc] = NULL;
		ret = run_suite(&argv[start]);
		if (ret == 0)
			passed++;
		else if (ret == 77)
			skipped++;
		else
			failed++;
		printf("==");
		for (j = start; argv[j] != NULL; j++) {
			const char *slash = strrchr(argv[j], '/');

			printf(" %s", slash != NULL ? slash + 1 : argv[j]);
		}
		printf(": %s\n", ret == 0 ? "ok" : ret == 77 ? "skipped" :
		       "FAILED");
		fflush(stdout);
	}
	printf("hw suites on %s: %u passed, %u failed, %u skipped\n", dev,
	       passed, failed, skipped);
	printf("totals: %u passed, %u failed, %u skipped\n", passed, failed,
	       skipped);
	if (failed != 0)
		return 1;
	return passed == 0 ? 77 : 0;
}
