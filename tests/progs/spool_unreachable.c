/*
 * spool_unreachable.c - e2e target for programs that stop being able to
 * open stint's spool files while they run, then start 2 threads; each
 * thread and main call work 100000 times (main 300000 with "setuid").
 * argv[1]:
 *   fds       lowers RLIMIT_NOFILE's soft limit to 24 and opens /dev/null
 *             until EMFILE (test e2e.descriptors_used_up); prints how many
 *             it got, which must not change under stint
 *   fds-hard  the same with the hard limit lowered too
 *   setuid    run as root, gives up root's rights (setgid, setuid to 65534)
 *             as a daemon does, before its work (test e2e.setuid_drop);
 *             with argv[2] "fork", then forks a child that calls work 1000
 *             times (it cannot record: it would need files of its own);
 *             with "exec", then execs itself as "exec'd", which prints so
 *   chroot D  run as root, shuts itself in directory D (chroot, chdir "/")
 *             before its work, as a daemon does; argv[3] "fork" as above
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_prog.h"

E2E_FN long work(long x)
{
	return (long)(e2e_burn(20, (uint64_t)x) & 1);
}

E2E_FN void *worker(void *arg)
{
	long s = 0;
	for (long i = 0; i < 100000; i++)
		s += work(i);
	return arg ? (void *)s : NULL;
}

static void *heavy(void *arg)
{
	for (int k = 0; k < 10; k++)
		worker(NULL);
	return arg;
}

static int use_up_descriptors(int hard)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return -1;
	rl.rlim_cur = 24;
	if (hard)
		rl.rlim_max = 24;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		return -1;
	int n = 0;
	while (open("/dev/null", O_RDONLY) >= 0)
		n++;
	return n;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "fds";
	if (strcmp(mode, "exec'd") == 0) {
		printf("exec'd\n");
		return 0;
	}
	int n = 0, drop = strcmp(mode, "setuid") == 0 || strcmp(mode, "chroot") == 0;
	int at = drop && mode[1] == 'e' ? 2 : 3; /* what follows the switch */
	const char *then = drop && argc > at ? argv[at] : "";
	if (drop && mode[1] == 'e') {
		if (setgid(65534) != 0 || setuid(65534) != 0) {
			printf("cannot give up root's rights\n");
			return 0;
		}
	} else if (drop) {
		if (argc < 3 || chroot(argv[2]) != 0 || chdir("/") != 0) {
			printf("cannot chroot\n");
			return 0;
		}
	} else if ((n = use_up_descriptors(strcmp(mode, "fds-hard") == 0)) < 0) {
		return 1;
	}
	if (strcmp(then, "exec") == 0) {
		fflush(stdout);
		execl(argv[0], argv[0], "exec'd", (char *)NULL);
		return 1;
	}
	if (strcmp(then, "fork") == 0) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			long s = 0;
			for (long i = 0; i < 1000; i++)
				s += work(i);
			_exit(s >= 0 ? 0 : 1);
		}
		int st = 0;
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return 1;
	}
	if (strcmp(then, "heavy") == 0) { /* 12 threads writing at once, worker 10 times each */
		pthread_t h[12];
		for (int i = 0; i < 12; i++)
			if (pthread_create(&h[i], NULL, heavy, NULL) != 0)
				return 1;
		for (int i = 0; i < 12; i++)
			pthread_join(h[i], NULL);
		printf("heavy done\n");
		return 0;
	}
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0)
			return 1;
	for (int i = 0; i < (drop ? 3 : 1); i++)
		worker(NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (drop)
		printf("uid %d, in %s\n", (int)getuid(), access("/proc/self", F_OK) == 0 ? "/" : "a chroot");
	else
		printf("opened %d descriptors\n", n);
	return 0;
}
