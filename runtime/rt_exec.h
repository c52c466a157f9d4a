/*
 * rt_exec.h - the exec family and posix_spawn, interposed by both runtime
 * libraries so that children started with an environment of the program's
 * own are recorded too (rt_exec.c).
 */
#ifndef STINT_RT_EXEC_H
#define STINT_RT_EXEC_H

/* Start adding the profiler's variables to the environments of children:
 * this library's path and the STINT_* variables the process has now, with
 * spool, the absolute spool directory.  Call once recording is on.
 * unreachable (or NULL) counts, by +1 and -1 when the exec fails, the
 * programs exec'd where the spool is out of reach (the process gave up
 * its rights, a chroot). */
void rt_exec_init(const char *spool, void (*unreachable)(int delta));

#endif
