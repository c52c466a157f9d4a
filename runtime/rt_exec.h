/*
 * rt_exec.h - the exec family and posix_spawn, interposed by both runtime
 * libraries so that children started with an environment of the program's
 * own are recorded too (rt_exec.c).
 */
#ifndef STINT_RT_EXEC_H
#define STINT_RT_EXEC_H

/* Start adding the profiler's variables to the environments of children:
 * this library's path and the STINT_* variables the process has now, with
 * spool, the absolute spool directory.  Call once recording is on. */
void rt_exec_init(const char *spool);

#endif
