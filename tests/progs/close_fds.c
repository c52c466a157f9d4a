/*
 * close_fds.c - e2e target (test e2e.program_closes_descriptors): like a
 * daemon, it closes every descriptor above stderr, then dup2s a file of its
 * own onto the low numbers, and goes on calling functions (new ones too,
 * and enough of them to fill a spool chunk).  stint must keep recording
 * and write nothing into that file.  Usage: e2e_close_fds FILE
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void early(void) { sink += e2e_burn(10, 1); }
E2E_FN void late_work(void) { sink += e2e_burn(10, 2); }
E2E_FN void late_other(void) { sink += e2e_burn(10, 3); }

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	early();
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	int f = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (f < 0)
		return 2;
	for (int fd = 3; fd < 64; fd++)
		if (fd != f)
			dup2(f, fd);
	for (int i = 0; i < 200000; i++)
		late_work();
	late_other();
	struct stat st;
	fstat(f, &st);
	printf("program_file_size=%lld\n", (long long)st.st_size);
	return 0;
}
