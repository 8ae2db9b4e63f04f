/* Linux's epoll and eventfd, which Swift's Glibc module does not bring in, and accept4, which
   Swift cannot call itself (a GNU extension): the control socket's event loop (ReelDaemon's
   PollLoop and PollListener) uses them. */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC): the next waiting client, or -1 and errno. */
static inline int reel_accept_nonblocking(int fd) {
    return (int)syscall(SYS_accept4, fd, (void *)0, (void *)0, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

