/*
 * rt_patch.h - what rt_patch.c (compiler patch sites, the return probe)
 * shares with rt_patch_cs.c (functions without one, moved with Capstone)
 * and rt_plt_got.c (which modules' library calls are probed).
 */
#ifndef STINT_RT_PATCH_H
#define STINT_RT_PATCH_H

#include <link.h>
#include <stdint.h>

/* The PT_LOAD segment of a module (only an executable one if exec) whose
 * memory holds address a, or NULL; its start is dlpi_addr + p_vaddr. */
static inline const ElfW(Phdr) *rt_patch_load_segment(const struct dl_phdr_info *info, uintptr_t a, int exec)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (!exec || (ph->p_flags & PF_X)) && a >= s && a - s < ph->p_memsz)
			return ph;
	}
	return NULL;
}

/* Patch the entries of one module's functions through trampolines, and
 * write its ".patch.<n>" file (N of M, the reasons for the others). */
void rt_patch_cs_module(const struct dl_phdr_info *info, const uint8_t *file, size_t fsz, const char *path);
/* Whether this runtime was built with Capstone's header. */
int rt_patch_cs_available(void);
/* Whether Capstone is loaded already (it cannot be loaded from inside a
 * dlopen: rt_patch.c's stint_rt_objects_added). */
int rt_patch_cs_loaded(void);
/* Whether the module named name (dl_iterate_phdr's dlpi_name: "" for the
 * program) is one this process patches when it has no probes of its own:
 * the program, and libraries outside the system's directories (or named in
 * STINT_PATCH_LIBS). */
int rt_patch_module_selected(const char *name);
/* Whether this process patches functions without patch sites: its program
 * was not built with -finstrument-functions (and STINT_PATCH is not 0). */
int rt_patch_wanted(void);
/* Whether this process's program has its functions probed through
 * rt_patch_entry (patched at load, -pg -mfentry or patch sites) rather
 * than by -finstrument-functions' hooks: their probes cost more, and the
 * calibration measures that path instead (rt.c). */
int rt_patch_program_probed(void);
/* In a new process (fork, clone without CLONE_VM): the patcher's locks,
 * which another thread of the parent may have held, free again. */
void rt_patch_fork_child(void);
/* The thread's shadow stack let go (its last key destructor). */
void rt_patch_thread_unmap(void);
/* A dlclose returned: modules gone are patched again if loaded again, and
 * the code blocks made for them (rt_patch_own) are let go. */
void rt_patch_after_dlclose(void);
/* A block of n bytes (read-write) mapped within reach of a rel32 from all
 * of [lo, hi), or NULL. */
uint8_t *rt_patch_near(uintptr_t lo, uintptr_t hi, size_t n);
/* A block of code (an island, trampolines) made for the module loaded at
 * base, unmapped when the module is gone. */
void rt_patch_own(uintptr_t base, void *block, size_t len);
/* A walk of the stack that returns (a backtrace): the real return
 * addresses of the calls in flight, patched functions' and library calls',
 * in their slots while it runs (rt_walk_begin), then swapped again
 * (rt_walk_end); rt_walk_own_frame: ip is in this library, the frame of
 * the interposer the walk went through. */
void rt_walk_begin(void);
void rt_walk_end(void);
/* The unwinder lands in the frame whose stack pointer is sp: the frames
 * below it close, innermost first, the live ones are swapped again. */
void rt_unwound_below(void *sp);
int rt_walk_own_frame(const void *ip);

#endif
