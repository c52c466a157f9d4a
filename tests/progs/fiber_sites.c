/*
 * fiber_sites.c - e2e target (test e2e.coroutine_resumed_elsewhere): one
 * fiber run by three threads in turn, calling inner() from two call sites
 * (siteA, siteB) and yielding inside it.  A frame taken from another
 * thread's shadow stack was left there, and a later return at the same
 * slot took that stale one: inner returned into siteA for siteB's call,
 * the results changed (1 11 21 ... where 1 12 21 ...).
 */
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>
#include <pthread.h>
#include <semaphore.h>
#include <unistd.h>
static ucontext_t fctx, back[3];
static volatile int who;            /* which thread resumed the fiber */
static sem_t go[3], done, ready;
__attribute__((noinline)) void yieldf(void){ swapcontext(&fctx, &back[who]); }
__attribute__((noinline)) long inner(long k){ yieldf(); return k*10; }
__attribute__((noinline)) long siteA(long k){ return inner(k)+1; }
__attribute__((noinline)) long siteB(long k){ return inner(k)+2; }
static long out[64]; static int nout;
__attribute__((noinline)) void body(void){
  for(long k=0;k<12;k++){ long r = (k&1) ? siteB(k) : siteA(k); out[nout++]=r; }
  for(;;) yieldf();
}
static void *worker(void *a){ long id=(long)a;
  sem_post(&ready); for(;;){ sem_wait(&go[id]); if(nout>=12 && id==0 && who==99) break; who=id; swapcontext(&back[id], &fctx); sem_post(&done); }
  return 0; }
int main(){ sem_init(&ready,0,0);
  getcontext(&fctx); fctx.uc_stack.ss_sp=malloc(1<<16); fctx.uc_stack.ss_size=1<<16; makecontext(&fctx,body,0);
  pthread_t t[3]; for(long i=0;i<3;i++){ sem_init(&go[i],0,0); pthread_create(&t[i],0,worker,(void*)i); sem_wait(&ready);} sem_init(&done,0,0);
  for(int step=0; step<40 && nout<12; step++){ sem_post(&go[step%3]); sem_wait(&done); }
  long s=0; for(int i=0;i<nout;i++){ printf("%ld ",out[i]); s+=out[i]; } printf("\nsum %ld n %d\n",s,nout);
  fflush(stdout); _exit(0);
}
