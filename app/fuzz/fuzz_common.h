/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * What the fuzz targets share: the input reader (yields zeros once the input
 * runs out, so every input decodes), the check macro, and the replay driver
 * of the builds without libFuzzer (fuzz_replay.c).
 */

#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/** Called by the replay driver after the last input (the target's exit). */
void fuzz_fini(void);

#define FUZZ_ASSERT(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz: %s:%d: %s: ", __FILE__, __LINE__, \
			#cond); \
		fprintf(stderr, __VA_ARGS__); \
		fprintf(stderr, "\n"); \
		abort(); \
	} \
} while (0)

struct fuzz_reader {
	const uint8_t *p;
	size_t left;
};

static inline uint8_t
fuzz_get8(struct fuzz_reader *r)
{
	if (r->left == 0)
		return 0;
	r->left--;
	return *r->p++;
}

/** n bytes, little-endian. */
static inline uint64_t
fuzz_getn(struct fuzz_reader *r, unsigned int n)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)fuzz_get8(r) << (8 * i);
	return v;
}

/** xorshift64: the replay driver's and the rule builders' generator. */
static inline uint64_t
fuzz_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

#endif /* FUZZ_COMMON_H */
