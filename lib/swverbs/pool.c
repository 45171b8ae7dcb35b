/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "swv_priv.h"

/*
 * Object memory: rules and counters objects. They are carved from 2 MiB
 * chunks, faulted in whole when a chunk is added, so that an insert takes an
 * object off a free list or a bump pointer instead of faulting in fresh heap
 * pages one by one, and objects sit close, with no allocator header (a
 * rule after up to 56 bytes of padding: see pool_skip()).
 * Freed objects (after their grace period) go to a free list per class: a
 * rule's class is its number of key words and whether it has a tally
 * (ACTION_COUNT), counters objects have one of their own. When no object
 * is left in a pool its chunks go back to the system, all but the newest,
 * which is kept so that a table that comes and goes around zero rules does
 * not map and fault a chunk each time; swv_pool_release() returns that one
 * too (its engine is destroyed).
 *
 * Each engine has a pool of its own (struct swv_engine pool): a device's
 * objects come from its engine's pool and go back to it, so engines that
 * serve different devices share no free list and no chunk, and an engine
 * that goes away takes its memory with it. Control path only (swv_lock).
 */
#define SWV_CHUNK_SIZE (2u << 20)
#define SWV_POOL_HUGE_FROM 3u	/* chunks: 6 MB, ~49k rules of 128 B */
#define SWV_PAGE_SIZE 4096u

/*
 * LeakSanitizer scans the heap, not anonymous mappings: without being told,
 * it would not see the pointers the objects hold (a counters object's
 * points array) and report what they point to as leaked.
 */
#if defined(__SANITIZE_ADDRESS__)
#define SWV_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SWV_LSAN 1
#endif
#endif
#ifdef SWV_LSAN
#include <sanitizer/lsan_interface.h>
#define SWV_LSAN_ROOT(p, n) __lsan_register_root_region((p), (n))
#define SWV_LSAN_UNROOT(p, n) __lsan_unregister_root_region((p), (n))
#else
#define SWV_LSAN_ROOT(p, n) do { } while (0)
#define SWV_LSAN_UNROOT(p, n) do { } while (0)
#endif
#ifdef MADV_POPULATE_WRITE
#define SWV_MADV_POPULATE_WRITE MADV_POPULATE_WRITE
#else
#define SWV_MADV_POPULATE_WRITE 23	/* Linux 5.14 */
#endif

struct swv_pool_chunk {
	struct swv_pool_chunk *next;
};

/* Size of the objects of a class (a multiple of 8: all stay aligned). */
static size_t
pool_size(unsigned int cls)
{
	unsigned int nw = cls % (SWV_KEY_WORDS + 1);

	if (cls == SWV_POOL_COUNTERS)
		return sizeof(struct swv_counters);
	return sizeof(struct swv_flow) + nw * sizeof(uint64_t) +
	       (cls > SWV_KEY_WORDS ? sizeof(struct swv_flow_tally) : 0);
}

/*
 * A chunk's mapping: SWV_CHUNK_SIZE bytes at an address that is a multiple
 * of it (map twice the size, unmap what lies outside), so that the kernel
 * can back it with one transparent huge page. Return: NULL on failure.
 */
static uint8_t *
pool_chunk_map(void)
{
	size_t sz = SWV_CHUNK_SIZE, head;
	uint8_t *a;

	a = mmap(NULL, 2 * sz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		return NULL;
	head = (sz - ((uintptr_t)a & (sz - 1))) & (sz - 1);
	if (head > 0)
		munmap(a, head);
	munmap(a + head + sz, sz - head);
	return a + head;
}

/* Map and fault in one chunk. 0 or ENOMEM. */
static int
pool_chunk_add(struct swv_pool *pool)
{
	size_t sz = SWV_CHUNK_SIZE, off;
	struct swv_pool_chunk *c;
	uint8_t *a;

	a = pool_chunk_map();
	if (a == NULL)
		return ENOMEM;
	/*
	 * Past the first SWV_POOL_HUGE_FROM chunks, a huge page where the
	 * kernel allows it (madvise mode; a hint): frames spread over a
	 * million rules (~128 MB) read each rule on a page of its own, and
	 * the page walks of those misses, which the CPU runs only a few at a
	 * time, keep the lookups of a burst from overlapping; 2 MiB pages map
	 * the whole pool from the TLB. The first chunks (what small pages'
	 * TLB reach covers) stay on small pages: a fresh huge page can cost
	 * more to fault in than 512 small ones recycled (on a VM whose host
	 * backs guest memory on first touch). Then fault it in now, in one
	 * call (Linux >= 5.14), else page by page in a row: either way not
	 * one fault per insert.
	 */
	if (pool->mapped >= SWV_POOL_HUGE_FROM * sz)
		madvise(a, sz, MADV_HUGEPAGE);
	else
		madvise(a, sz, MADV_NOHUGEPAGE);	/* THP "always" too */
	if (madvise(a, sz, SWV_MADV_POPULATE_WRITE) != 0)
		for (off = 0; off < sz; off += SWV_PAGE_SIZE)
			a[off] = 0;
	SWV_LSAN_ROOT(a, sz);
	c = (struct swv_pool_chunk *)a;
	c->next = pool->chunks;
	pool->chunks = c;
	pool->cur = a + SWV_CACHE_LINE;
	pool->end = a + sz;
	SWV_STORE(&pool->mapped, pool->mapped + sz);
	return 0;
}

/* Unmap the chunks from c on. */
static void
pool_unmap(struct swv_pool *pool, struct swv_pool_chunk *c)
{
	struct swv_pool_chunk *next;

	for (; c != NULL; c = next) {
		next = c->next;
		SWV_LSAN_UNROOT(c, SWV_CHUNK_SIZE);
		munmap(c, SWV_CHUNK_SIZE);
		SWV_STORE(&pool->mapped, pool->mapped - SWV_CHUNK_SIZE);
	}
}

/*
 * Bytes to skip from cur so that an object of class cls starts where it
 * must: a rule where its SWV_FLOW_HOT offset falls on a line start (the
 * lookup reads from rank to the end of the key: one line, not the two it
 * straddles at an unaligned place); a counters object anywhere (8-aligned,
 * as every size is). A rule then costs its size from its line's start
 * back SWV_FLOW_HOT bytes, rounded up to whole lines: 128 bytes up to 6
 * key words (104 bytes with three: 128), 192 for a counted rule of 2 to 9.
 */
static size_t
pool_skip(const uint8_t *cur, unsigned int cls)
{
	uintptr_t hot = (uintptr_t)cur + SWV_FLOW_HOT;

	if (cls == SWV_POOL_COUNTERS)
		return 0;
	return (SWV_CACHE_LINE - (hot & (SWV_CACHE_LINE - 1))) &
	       (SWV_CACHE_LINE - 1);
}

void *
swv_pool_alloc(struct swv_pool *pool, unsigned int cls)
{
	size_t size = pool_size(cls), skip = 0;
	void *p = pool->free[cls];

	if (p != NULL) {
		memcpy(&pool->free[cls], p, sizeof(void *));
	} else {
		if (pool->cur != NULL)
			skip = pool_skip(pool->cur, cls);
		if ((size_t)(pool->end - pool->cur) < skip + size) {
			if (pool_chunk_add(pool) != 0)
				return NULL;
			skip = pool_skip(pool->cur, cls);
		}
		p = pool->cur + skip;
		pool->cur += skip + size;
	}
	SWV_STORE(&pool->live, pool->live + 1);
	return p;
}

void
swv_pool_free(struct swv_pool *pool, void *p, unsigned int cls)
{
	struct swv_pool_chunk *c;

	memcpy(p, &pool->free[cls], sizeof(void *));
	pool->free[cls] = p;
	SWV_STORE(&pool->live, pool->live - 1);
	if (pool->live > 0)
		return;
	/* Nothing left: keep the newest chunk, empty, and unmap the rest. */
	c = pool->chunks;
	pool_unmap(pool, c->next);
	c->next = NULL;
	pool->cur = (uint8_t *)c + SWV_CACHE_LINE;
	pool->end = (uint8_t *)c + SWV_CHUNK_SIZE;
	memset(pool->free, 0, sizeof(pool->free));
}

int
swv_pool_release(struct swv_pool *pool)
{
	if (pool->live > 0)
		return EBUSY;
	pool_unmap(pool, pool->chunks);
	memset(pool->free, 0, sizeof(pool->free));
	pool->chunks = NULL;
	pool->cur = NULL;
	pool->end = NULL;
	return 0;
}
