/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Replay driver for the fuzz targets built without libFuzzer:
 *   fuzz-X-replay [--random N SEED] FILE|DIR...
 * runs the target over every file (folders: every file in them, in name
 * order), then over N random inputs from a fixed seed, and prints what it
 * ran. A finding aborts (the targets check with FUZZ_ASSERT), so the exit
 * status is the verdict.
 */

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"

#define REPLAY_MAX_INPUT (1 << 16)
#define REPLAY_RANDOM_MAX 512

static int
replay_file(const char *path)
{
	static uint8_t buf[REPLAY_MAX_INPUT];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (f == NULL) {
		fprintf(stderr, "fuzz: %s: %s\n", path, strerror(errno));
		return -1;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	return 0;
}

static int
replay_path(const char *path, unsigned int *count)
{
	struct dirent **names;
	struct stat st;
	char sub[4096];
	int n, i, ret = 0;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "fuzz: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return replay_file(path);
	}
	n = scandir(path, &names, NULL, alphasort);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.') {
			snprintf(sub, sizeof(sub), "%s/%s", path,
				 names[i]->d_name);
			if (replay_path(sub, count) != 0)
				ret = -1;
		}
		free(names[i]);
	}
	free(names);
	return ret;
}

int
main(int argc, char **argv)
{
	unsigned long nb_random = 0, i;
	uint64_t seed = 1, x;
	unsigned int count = 0;
	uint8_t buf[REPLAY_RANDOM_MAX];
	int a, ret = 0;

	LLVMFuzzerInitialize(&argc, &argv);
	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--random") == 0 && a + 2 < argc) {
			nb_random = strtoul(argv[a + 1], NULL, 0);
			seed = strtoull(argv[a + 2], NULL, 0);
			a += 2;
			continue;
		}
		if (replay_path(argv[a], &count) != 0)
			ret = 1;
	}
	x = seed != 0 ? seed : 1;
	for (i = 0; i < nb_random; i++) {
		size_t len, k;

		len = fuzz_rand(&x) % sizeof(buf);
		for (k = 0; k < len; k++)
			buf[k] = (uint8_t)(fuzz_rand(&x) >> 32);
		LLVMFuzzerTestOneInput(buf, len);
	}
	printf("fuzz: %u corpus files and %lu random inputs: no finding\n",
	       count, nb_random);
	fuzz_fini();
	return ret;
}
