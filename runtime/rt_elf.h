/*
 * rt_elf.h - a module's ELF file, mapped read-only and checked, for the
 * runtime's readers of section headers (rt_patch.c: patch sites, the
 * program's imports; rt_patch_cs.c through it; rt_select.c: symbols).
 * Header-only, as rt_file.h: test_select builds rt_select.c alone.
 */
#ifndef STINT_RT_ELF_H
#define STINT_RT_ELF_H

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt_sys.h"

/*
 * Map the file at path (never malloc: the program may define its own) and
 * check what every reader relies on: a 64-bit ELF file whose section
 * header table lies inside it, with its string table's index in range.
 * The mapping, its size in *size; NULL when the file cannot be read or is
 * not one.  rt_unmap_elf releases it.
 */
static inline const uint8_t *rt_map_elf(const char *path, size_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	void *map = MAP_FAILED;
	if (fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(ElfW(Ehdr)))
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return NULL;
	size_t fsz = (size_t)st.st_size;
	const ElfW(Ehdr) *eh = map;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shoff == 0 ||
	    eh->e_shentsize != sizeof(ElfW(Shdr)) || eh->e_shoff > fsz ||
	    (size_t)eh->e_shnum * sizeof(ElfW(Shdr)) > fsz - eh->e_shoff || eh->e_shstrndx >= eh->e_shnum) {
		munmap(map, fsz);
		return NULL;
	}
	*size = fsz;
	return map;
}

static inline void rt_unmap_elf(const uint8_t *f, size_t size)
{
	munmap((void *)(uintptr_t)f, size);
}

#endif
