/* rt_plt.c - placeholder replaced below */
#include "rt_int.h"
void rt_plt_init(void) {}
void rt_plt_after_dlopen(void) {}
