#ifndef HAPPY_CHIREDIS_SHIM_H
#define HAPPY_CHIREDIS_SHIM_H

#include <hiredis/hiredis.h>
#include <poll.h>
#include <unistd.h>
#include <fcntl.h>

/* REDIS_REPLY_* are macros; Swift sees them as ints, but keep them in one place. */
static const int happy_redis_reply_string = REDIS_REPLY_STRING;
static const int happy_redis_reply_array = REDIS_REPLY_ARRAY;
static const int happy_redis_reply_integer = REDIS_REPLY_INTEGER;
static const int happy_redis_reply_nil = REDIS_REPLY_NIL;
static const int happy_redis_reply_status = REDIS_REPLY_STATUS;
static const int happy_redis_reply_error = REDIS_REPLY_ERROR;

/* Waits until the Redis socket or a wake-up pipe is readable.
 * Returns a bitmask: 1 redis readable, 2 wake readable, 4 error; 0 on timeout. */
static inline int happy_redis_wait(int redis_fd, int wake_fd, int timeout_ms) {
    struct pollfd fds[2];
    fds[0].fd = redis_fd; fds[0].events = POLLIN; fds[0].revents = 0;
    fds[1].fd = wake_fd; fds[1].events = POLLIN; fds[1].revents = 0;
    int n = poll(fds, 2, timeout_ms);
    if (n < 0) return 4;
    int result = 0;
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) result |= 1;
    if (fds[1].revents & POLLIN) result |= 2;
    return result;
}

#endif
