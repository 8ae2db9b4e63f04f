/* Linux's timerfd, which Swift's Glibc module does not bring in: the schedules' one timer on the
   wall clock (ReelCore's WallClockTimer), woken at a deadline or when the clock is set. */
#include <sys/timerfd.h>
#include <time.h>
