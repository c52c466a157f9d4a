/*
 * cancel_blocked.cc - threads cancelled while blocked in library calls
 * (read, usleep, pthread_cond_wait) made from frames with no cleanup of
 * their own: glibc unwinds each with libgcc_s's own _Unwind_ForcedUnwind,
 * which stint's interposers never see, through the return thunk of the
 * library call.  Every destructor and cleanup handler must still run.
 */
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>

static std::atomic<int> guards{0};
static std::atomic<int> blocked{0};
struct Guard {
	~Guard() { guards++; }
};
static int fds[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

__attribute__((noinline)) void wait_read()
{
	char c;
	blocked++;
	ssize_t r = read(fds[0], &c, 1);
	std::printf("read returned %zd\n", r);
}

__attribute__((noinline)) void wait_sleep()
{
	blocked++;
	for (;;)
		usleep(1000);
}

__attribute__((noinline)) void wait_cond()
{
	pthread_mutex_lock(&mu);
	blocked++;
	for (;;)
		pthread_cond_wait(&cv, &mu);
}

static void unlock(void *) { pthread_mutex_unlock(&mu); guards++; }

static void *reader(void *) { Guard g; wait_read(); return nullptr; }
static void *sleeper(void *) { Guard g; wait_sleep(); return nullptr; }
static void *waiter(void *)
{
	Guard g;
	pthread_cleanup_push(unlock, nullptr);
	wait_cond();
	pthread_cleanup_pop(0);
	return nullptr;
}

int main()
{
	if (pipe(fds))
		return 1;
	void *(*fn[3])(void *) = {reader, sleeper, waiter};
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], nullptr, fn[i], nullptr);
	while (blocked.load() < 3)
		usleep(1000);
	int cancelled = 0;
	for (int i = 0; i < 3; i++) {
		pthread_cancel(t[i]);
		void *r;
		pthread_join(t[i], &r);
		cancelled += r == PTHREAD_CANCELED;
	}
	std::printf("cancelled %d, cleanups %d of 4\n", cancelled, guards.load());
	return 0;
}
