// epoll and eventfd, which Swift's Glibc module leaves out (happybench's crowd sockets).
#include <sys/epoll.h>
#include <sys/eventfd.h>
