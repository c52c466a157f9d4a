/*
 * rt_select.h - record-time selection (`stint record --function, --not-function,
 * --module, --depth, --min-duration`): which probe events the runtime
 * writes.  Private to runtime/.
 *
 * With no selection rt_sel_on stays 0 and nothing here runs: the probes'
 * lean path (rt.c) never looks at it, because a thread takes the lean path
 * only when rt_sel_on was 0 when it started (rt_thread_start).  With a
 * selection every probe takes rt_probe(), which hands the event to
 * rt_sel_event() first.
 */
#ifndef STINT_RT_SELECT_H
#define STINT_RT_SELECT_H

#include <stdint.h>

struct rt_thread;

extern int rt_sel_on; /* a selection is in force (set once, before any thread but the first records) */

/* Read STINT_SELECT; when it holds a selection, set rt_sel_on and read the
 * loaded modules' symbols.  From the constructor, before calibrating. */
void rt_sel_init(void);
/* Modules a dlopen added: read their symbols (outside any probe). */
void rt_sel_after_dlopen(void);

/* Whether fn's events are left out by name or module (before the probe
 * reads the clock: such a probe costs a cache lookup). */
int rt_sel_skip(uint64_t fn);

/*
 * One probe event (entry or exit of fn at now, switch count sw) of thread
 * t, already active, of a function rt_sel_skip keeps: 1 when --depth or
 * --min-duration took care of it (hidden, dropped, or held back until
 * --min-duration decides), 0 when rt_probe should write it now.
 */
int rt_sel_event(struct rt_thread *t, int is_exit, uint64_t fn, uint64_t site, uint64_t now, uint64_t sw);

/* The thread ends (or the process dies of a signal): the calls held back
 * that have lasted --min-duration by now are written. */
void rt_sel_thread_end(struct rt_thread *t);
/* The thread's selection state let go (its last key destructor). */
void rt_sel_thread_unmap(void);

/* A vfork child runs on its parent's memory, this file's per-thread state
 * included: its --depth/--min-duration events are left out (child 1), and
 * the parent's state is untouched when it resumes (child 0). */
void rt_sel_vfork(int child);

/* Whether the function at fn is selected by name and module (the patching
 * code leaves the others unpatched). */
int rt_sel_want(uint64_t fn);

/* A library function probed at its calls, fn, decided by the name the
 * program calls it by; target is where the calls land (its module). */
void rt_sel_lib_name(uint64_t fn, uint64_t target, const char *name);

/* Glob matching as `stint report --function` does it: fnmatch(3) without
 * flags, or the pattern as a substring of the name.  Exposed for the tests. */
int rt_sel_match(const char *pattern, const char *name);
/* The qualified name of an Itanium-mangled C++ symbol without its
 * parameters ("ns::Class::method"), into out; 0 when it is not one or too
 * complex (then only the mangled name is matched). */
int rt_sel_plain_name(const char *mangled, char *out, unsigned outlen);

#endif
