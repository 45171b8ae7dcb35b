/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * LD_PRELOAD shim for test_tenant_gw.py's out-of-memory reload: while the
 * file named by TGW_FAILALLOC exists, calloc() called from the main
 * program itself (not from a library: DPDK, jansson, the PMD) fails with
 * ENOMEM, and says so on stderr. The gateway's own callocs are its
 * forwarding plans. Plain builds only (a sanitizer has its own calloc).
 */

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

void *__libc_calloc(size_t n, size_t size);

static const char *
failalloc_trigger(void)
{
	static const char *path;
	static int done;

	if (!done) {
		path = getenv("TGW_FAILALLOC");
		done = 1;
	}
	return path;
}

/* Whether ADDR is in the main program. */
static int
failalloc_in_main(const void *addr)
{
	Dl_info a, m;

	if (dladdr(addr, &a) == 0 ||
	    dladdr((void *)getauxval(AT_ENTRY), &m) == 0)
		return 0;
	return a.dli_fbase == m.dli_fbase;
}

void *
calloc(size_t n, size_t size)
{
	const char *path = failalloc_trigger();
	static const char msg[] = "tgw-failalloc: calloc fails on purpose\n";

	if (path != NULL && access(path, F_OK) == 0 &&
	    failalloc_in_main(__builtin_return_address(0))) {
		ssize_t r = write(STDERR_FILENO, msg, sizeof(msg) - 1);

		(void)r;
		errno = ENOMEM;
		return NULL;
	}
	return __libc_calloc(n, size);
}
