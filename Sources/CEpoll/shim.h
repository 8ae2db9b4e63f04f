/* Linux's epoll and eventfd, which Swift's Glibc module does not bring in, and two calls Swift
   cannot make itself (accept4 and prctl are GNU or variadic): the control socket's event loop
   (ReelDaemon's PollLoop and PollListener) uses them. */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC): the next waiting client, or -1 and errno. */
static inline int reel_accept_nonblocking(int fd) {
    return (int)syscall(SYS_accept4, fd, (void *)0, (void *)0, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

/* Names the calling thread (15 bytes at most) for top, /proc and the benchmarks' per-thread figures. */
static inline void reel_name_this_thread(const char *name) {
    prctl(PR_SET_NAME, name, 0, 0, 0);
}
