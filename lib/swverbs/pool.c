/* SPDX-License-Identifier: BSD-3-Clause */

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "swv_priv.h"

/*
 * Object memory: rules and counters objects. They are carved from 2 MiB
 * chunks, faulted in whole when a chunk is added, so that an insert takes an
 * object off a free list or a bump pointer instead of faulting in fresh heap
 * pages one by one, and objects sit densely, with no allocator header.
 * Freed objects (after their grace period) go to a free list per class: a
 * rule's class is its number of key words and whether it has a tally
 * (ACTION_COUNT), counters objects have one of their own. When no object
 * is left in the process the chunks go back to the system, all but the
 * newest, which is kept so that a table that comes and goes around zero
 * rules does not map and fault a chunk each time.
 * Control path only (swv_lock).
 */
#define SWV_CHUNK_SIZE (2u << 20)
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

static struct {
	void *free[SWV_POOL_CLASSES];	/**< free objects by class */
	struct swv_pool_chunk *chunks;	/**< newest first */
	uint8_t *cur;			/**< bump pointer in the newest */
	uint8_t *end;
	size_t live;			/**< objects allocated, not freed */
} swv_pool;

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

/* Map and fault in one chunk. 0 or ENOMEM. */
static int
pool_chunk_add(void)
{
	size_t sz = SWV_CHUNK_SIZE, off;
	struct swv_pool_chunk *c;
	uint8_t *a;

	a = mmap(NULL, sz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		return ENOMEM;
	/*
	 * Fault it in now, in one call (Linux >= 5.14), else page by page in
	 * a row: either way not one fault per insert. Small pages on purpose:
	 * measured with bench-steer, a huge page here made inserts ~30%
	 * slower (the kernel finds and clears 2 MiB at once) and lookups
	 * spread over 64k rules no faster once they are batched.
	 */
	if (madvise(a, sz, SWV_MADV_POPULATE_WRITE) != 0)
		for (off = 0; off < sz; off += SWV_PAGE_SIZE)
			a[off] = 0;
	SWV_LSAN_ROOT(a, sz);
	c = (struct swv_pool_chunk *)a;
	c->next = swv_pool.chunks;
	swv_pool.chunks = c;
	swv_pool.cur = a + SWV_CACHE_LINE;
	swv_pool.end = a + sz;
	return 0;
}

void *
swv_pool_alloc(unsigned int cls)
{
	size_t size = pool_size(cls);
	void *p = swv_pool.free[cls];

	if (p != NULL) {
		memcpy(&swv_pool.free[cls], p, sizeof(void *));
	} else {
		if ((size_t)(swv_pool.end - swv_pool.cur) < size &&
		    pool_chunk_add() != 0)
			return NULL;
		p = swv_pool.cur;
		swv_pool.cur += size;
	}
	swv_pool.live++;
	return p;
}

void
swv_pool_free(void *p, unsigned int cls)
{
	struct swv_pool_chunk *c, *next;
	unsigned int i;

	memcpy(p, &swv_pool.free[cls], sizeof(void *));
	swv_pool.free[cls] = p;
	if (--swv_pool.live > 0)
		return;
	/* Nothing left: keep the newest chunk, empty, and unmap the rest. */
	for (c = swv_pool.chunks->next; c != NULL; c = next) {
		next = c->next;
		SWV_LSAN_UNROOT(c, SWV_CHUNK_SIZE);
		munmap(c, SWV_CHUNK_SIZE);
	}
	c = swv_pool.chunks;
	c->next = NULL;
	swv_pool.cur = (uint8_t *)c + SWV_CACHE_LINE;
	swv_pool.end = (uint8_t *)c + SWV_CHUNK_SIZE;
	for (i = 0; i < SWV_POOL_CLASSES; i++)
		swv_pool.free[i] = NULL;
}
