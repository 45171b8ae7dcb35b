/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The address of a PMD's internal symbol, for the tests' hooks.
 *
 * The PMD exports only its rte_pmd_vbr_* API (drivers/net/vbr/version.map):
 * dlsym() cannot see a test hook such as vbr_link_update_hook. The build
 * tree's PMD is not stripped, so its static symbol table (.symtab) still
 * names every global: the hook's address is its st_value plus the load
 * base dlinfo() reports for the loaded object.
 */

#ifndef VBR_TEST_SYM_H
#define VBR_TEST_SYM_H

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The run-time address of symbol @p name of the object @p handle (from
 * dlopen()), read from the object's .symtab; NULL, said on stdout, when
 * the file has no such symbol (or no .symtab: a stripped object).
 */
static inline void *
vbr_test_sym(void *handle, const char *name)
{
	struct link_map *map = NULL;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	void *addr = NULL;
	struct stat st;
	uint8_t *file;
	int fd;

	if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == NULL) {
		printf("dlinfo: %s\n", dlerror());
		return NULL;
	}
	fd = open(map->l_name, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0 ||
	    (size_t)st.st_size < sizeof(*eh)) {
		printf("%s: cannot read its file\n", map->l_name);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	file = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (file == MAP_FAILED)
		return NULL;
	eh = (const Elf64_Ehdr *)file;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(*sh) >
	    (uint64_t)st.st_size) {
		printf("%s: not a 64-bit ELF object\n", map->l_name);
		goto out;
	}
	sh = (const Elf64_Shdr *)(file + eh->e_shoff);
	for (unsigned int i = 0; i < eh->e_shnum && addr == NULL; i++) {
		const Elf64_Sym *sym;
		const char *str;
		uint64_t n;

		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
			continue;
		sym = (const Elf64_Sym *)(file + sh[i].sh_offset);
		str = (const char *)(file + sh[sh[i].sh_link].sh_offset);
		n = sh[i].sh_size / sizeof(*sym);
		for (uint64_t k = 0; k < n; k++) {
			if (sym[k].st_shndx == SHN_UNDEF ||
			    sym[k].st_name >= sh[sh[i].sh_link].sh_size ||
			    strcmp(str + sym[k].st_name, name) != 0)
				continue;
			addr = (void *)(map->l_addr + sym[k].st_value);
			break;
		}
	}
	if (addr == NULL)
		printf("%s: no symbol %s in its .symtab (stripped?)\n",
		       map->l_name, name);
out:
	munmap(file, st.st_size);
	return addr;
}

#endif /* VBR_TEST_SYM_H */
