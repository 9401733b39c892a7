#ifndef HAPPY_CWEBSOCKETS_SHIM_H
#define HAPPY_CWEBSOCKETS_SHIM_H

/* What Swift cannot import from libwebsockets directly (macros, variadics),
 * re-exported as constants and inline functions. */

#include <libwebsockets.h>
#include <stdio.h>
#include <signal.h>
#include <sys/resource.h>
#include <malloc.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <stddef.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <string.h>
#include <errno.h>
#include <ev.h>

/* Headroom lws needs in front of every payload passed to lws_write(). */
static const size_t happy_lws_pre = LWS_PRE;

/* LWS_WRITE_* values as plain ints so Swift can combine them freely. */
static const int happy_write_text = LWS_WRITE_TEXT;
static const int happy_write_binary = LWS_WRITE_BINARY;
static const int happy_write_http = LWS_WRITE_HTTP;
static const int happy_write_http_final = LWS_WRITE_HTTP_FINAL;
static const int happy_write_ping = LWS_WRITE_PING;
static const int happy_write_continuation = LWS_WRITE_CONTINUATION;
static const int happy_write_no_fin = LWS_WRITE_NO_FIN;
static const int happy_context_port_no_listen = CONTEXT_PORT_NO_LISTEN;

/* Glibc's stdout cannot be referenced from Swift 6. */
static inline FILE *happy_stdout(void) { return stdout; }
static inline FILE *happy_stderr(void) { return stderr; }

/* Hands freed heap memory back to the kernel after a burst (glibc). */
static inline void happy_release_free_memory(void) { malloc_trim(0); }

/* Allocations of `bytes` and more get pages of their own, returned when freed.
 * Setting it also stops glibc from raising the threshold after each such free,
 * which otherwise keeps every large buffer's memory in the heap. */
static inline void happy_map_allocations_from(int bytes) { mallopt(M_MMAP_THRESHOLD, bytes); }

static inline void happy_ignore_sigpipe(void) { signal(SIGPIPE, SIG_IGN); }

/* Sets the soft descriptor limit to `wanted`, or to the hard limit when that
 * is lower (raising or lowering it); returns the soft limit in force, -1 when
 * it cannot be read. */
static inline long happy_set_fd_limit(long wanted) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return -1;
    rlim_t target = (rlim_t)wanted;
    if (rl.rlim_max != RLIM_INFINITY && target > rl.rlim_max) target = rl.rlim_max;
    if (target != rl.rlim_cur) {
        rl.rlim_cur = target;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    return (long)rl.rlim_cur;
}

/* Fixes a socket's kernel send buffer at `bytes` (Linux doubles the figure),
 * which also turns off its autotuning. Returns 0 on success. */
static inline int happy_set_send_buffer(int fd, int bytes) {
    return setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
}

/* Writes bytes that are already whole WebSocket frames straight to a
 * plaintext socket, without lws's write path, for a caller that knows lws
 * holds none of the connection's output. What the socket does not take now
 * goes to lws, which keeps it and sends it on POLLOUT before any writable
 * callback, so the order of the bytes holds. Returns 0, or -1 when the
 * connection failed. */
static inline int happy_write_socket_first(struct lws *wsi, int fd, unsigned char *buf, size_t len) {
    ssize_t sent = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent == (ssize_t)len)
        return 0;
    if (sent < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ENOBUFS)
            return -1;
        sent = 0;
    }
    return lws_write(wsi, buf + sent, len - (size_t)sent, LWS_WRITE_HTTP) < 0 ? -1 : 0;
}

/* Asks the CPU to bring `bytes` from `start` into its caches, for writing,
 * ahead of use. A hint: it never faults, whatever the address. */
static inline void happy_prefetch_range(const void *start, long bytes) {
    for (long offset = 0; offset < bytes; offset += 64)
        __builtin_prefetch((const char *)start + offset, 1, 3);
}

/* Bytes the application has read from a TCP socket so far: what arrived in
 * order, less what still waits in the receive queue. The queue is read first,
 * so bytes arriving in between can only make the figure larger, never
 * smaller. -1 when the kernel does not say. */
static inline long long happy_socket_bytes_read(int fd) {
    /* tcpi_bytes_received of the kernel's struct tcp_info (Linux 4.1 and
     * later): its layout is ABI, fields are only appended. glibc's copy of the
     * struct lacks the field and <linux/tcp.h> clashes with it, hence the offset. */
    enum { tcp_info_option = 11, bytes_received_offset = 128 };
    unsigned char info[256];
    unsigned long long received;
    int queued = 0;
    socklen_t length = sizeof info;
    if (ioctl(fd, SIOCINQ, &queued) != 0) return -1;
    if (getsockopt(fd, IPPROTO_TCP, tcp_info_option, info, &length) != 0) return -1;
    if (length < bytes_received_offset + sizeof received) return -1;
    memcpy(&received, info + bytes_received_offset, sizeof received);
    return (long long)received - queued;
}

/* A timer on the lws event loop that knows its owner: lws hands the callback
 * only the sul pointer, and the sul is the first member. */
typedef struct happy_timer {
    lws_sorted_usec_list_t sul;
    void *owner;
} happy_timer;

static inline void *happy_timer_owner(lws_sorted_usec_list_t *sul) {
    return ((happy_timer *)sul)->owner;
}

/* An epoll-backed libev loop for lws to run on: lws's own poll() loop walks
 * every descriptor on every wake-up, which dominates at thousands of
 * connections. NULL when the kernel offers no epoll. */
static inline void *happy_event_loop_new(void) {
    return ev_loop_new(EVBACKEND_EPOLL | EVFLAG_NOENV);
}

/* One turn: waits for at least one event and runs what is due. */
static inline void happy_event_loop_run_once(void *loop) {
    ev_run((struct ev_loop *)loop, EVRUN_ONCE);
}

static inline void happy_event_loop_run_nowait(void *loop) {
    ev_run((struct ev_loop *)loop, EVRUN_NOWAIT);
}

static inline void happy_event_loop_destroy(void *loop) {
    ev_loop_destroy((struct ev_loop *)loop);
}

static const uint64_t happy_option_libev = LWS_SERVER_OPTION_LIBEV;

/* lws 4.1's libev glue re-arms its timer with ev_timer_start(), which does
 * nothing while that timer is still running, so a timer or timeout due
 * before the armed one would wait for it. The nudge wakes the loop through
 * lws's event pipe when one is due (lws then runs whatever is due), and
 * once a second after that for lws's own timeouts. */
typedef struct happy_loop_nudge {
    ev_timer timer;
    struct lws_context *context;
} happy_loop_nudge;

static inline void happy_loop_nudge_fired(struct ev_loop *loop, ev_timer *timer, int revents) {
    (void)loop;
    (void)revents;
    lws_cancel_service(((happy_loop_nudge *)timer)->context);
}

static inline void happy_loop_nudge_start(void *loop, happy_loop_nudge *nudge, struct lws_context *context) {
    nudge->context = context;
    ev_timer_init(&nudge->timer, happy_loop_nudge_fired, 1.0, 1.0);
    ev_timer_start((struct ev_loop *)loop, &nudge->timer);
}

/* Brings the next nudge forward to `seconds` from now, if it is later. */
static inline void happy_loop_nudge_within(void *loop, happy_loop_nudge *nudge, double seconds) {
    struct ev_loop *ev = (struct ev_loop *)loop;
    ev_now_update(ev);
    if (ev_is_active(&nudge->timer) && ev_timer_remaining(ev, &nudge->timer) <= seconds) return;
    ev_timer_stop(ev, &nudge->timer);
    ev_timer_set(&nudge->timer, seconds, 1.0);
    ev_timer_start(ev, &nudge->timer);
}

static inline void happy_loop_nudge_stop(void *loop, happy_loop_nudge *nudge) {
    ev_timer_stop((struct ev_loop *)loop, &nudge->timer);
}

/* How long the loop waited for events: a prepare watcher notes the time
 * just before the loop blocks, a check watcher adds the wait just after it
 * (check watchers run before the turn's other callbacks). Two clock reads
 * per turn; the owner takes the sum after each turn. Neither watcher keeps
 * the loop alive, so the loop blocks exactly as it did without them; they
 * go with the loop. */
typedef struct happy_loop_wait {
    ev_prepare prepare;
    ev_check check;
    double began;
    double waited;
} happy_loop_wait;

static inline void happy_loop_wait_begins(struct ev_loop *loop, ev_prepare *prepare, int revents) {
    (void)loop;
    (void)revents;
    ((happy_loop_wait *)prepare)->began = ev_time();
}

static inline void happy_loop_wait_ends(struct ev_loop *loop, ev_check *check, int revents) {
    (void)loop;
    (void)revents;
    happy_loop_wait *wait = (happy_loop_wait *)((char *)check - offsetof(happy_loop_wait, check));
    double waited = ev_time() - wait->began;
    /* ev_time() is the wall clock: a step back must not count. */
    if (waited > 0) wait->waited += waited;
}

static inline void happy_loop_wait_start(void *loop, happy_loop_wait *wait) {
    struct ev_loop *ev = (struct ev_loop *)loop;
    wait->began = ev_time();
    wait->waited = 0;
    ev_prepare_init(&wait->prepare, happy_loop_wait_begins);
    ev_check_init(&wait->check, happy_loop_wait_ends);
    ev_prepare_start(ev, &wait->prepare);
    ev_unref(ev);
    ev_check_start(ev, &wait->check);
    ev_unref(ev);
}

/* Seconds waited since the last call. */
static inline double happy_loop_wait_take(happy_loop_wait *wait) {
    double waited = wait->waited;
    wait->waited = 0;
    return waited;
}

/* A one-shot timer of our own on the epoll loop. lws runs its own timers
 * (suls) only from an idle watcher, which libev starves while any socket
 * stays readable: an HTTP client that hangs up while its response is
 * deferred keeps lws's read watcher firing without being read. A libev
 * timer fires whatever else is pending. */
typedef void (*happy_ev_timer_action)(void *owner);

typedef struct happy_ev_timer {
    ev_timer timer;
    void *owner;
    happy_ev_timer_action action;
} happy_ev_timer;

static inline void happy_ev_timer_fired(struct ev_loop *loop, ev_timer *timer, int revents) {
    (void)loop;
    (void)revents;
    happy_ev_timer *entry = (happy_ev_timer *)timer;
    entry->action(entry->owner);
}

static inline void happy_ev_timer_init(happy_ev_timer *entry, void *owner, happy_ev_timer_action action) {
    ev_timer_init(&entry->timer, happy_ev_timer_fired, 0., 0.);
    entry->owner = owner;
    entry->action = action;
}

/* Fires once, `seconds` from now (replacing an earlier schedule). */
static inline void happy_ev_timer_schedule(void *loop, happy_ev_timer *entry, double seconds) {
    struct ev_loop *ev = (struct ev_loop *)loop;
    ev_timer_stop(ev, &entry->timer);
    ev_now_update(ev);
    ev_timer_set(&entry->timer, seconds > 0 ? seconds : 0., 0.);
    ev_timer_start(ev, &entry->timer);
}

static inline void happy_ev_timer_cancel(void *loop, happy_ev_timer *entry) {
    ev_timer_stop((struct ev_loop *)loop, &entry->timer);
}

/* The server's own listening socket, watched on the epoll loop: the server
 * accepts and hands each connection to lws (lws_adopt), so that the socket
 * can outlive the process's lws context and pass to a new process. */
typedef void (*happy_listener_action)(void *owner);

typedef struct happy_listener {
    ev_io io;
    void *owner;
    happy_listener_action action;
} happy_listener;

static inline void happy_listener_ready(struct ev_loop *loop, ev_io *io, int revents) {
    (void)loop;
    (void)revents;
    happy_listener *listener = (happy_listener *)io;
    listener->action(listener->owner);
}

static inline void happy_listener_start(void *loop, happy_listener *listener, int fd, void *owner,
                                        happy_listener_action action) {
    listener->owner = owner;
    listener->action = action;
    ev_io_init(&listener->io, happy_listener_ready, fd, EV_READ);
    ev_io_start((struct ev_loop *)loop, &listener->io);
}

static inline void happy_listener_stop(void *loop, happy_listener *listener) {
    ev_io_stop((struct ev_loop *)loop, &listener->io);
}

/* accept4 is a GNU extension the headers show only under _GNU_SOURCE. */
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);

/* Accepts one waiting connection, non-blocking and closed on exec; -1 when none waits. */
static inline int happy_accept(int fd, struct sockaddr_storage *address) {
    socklen_t length = sizeof *address;
    return accept4(fd, (struct sockaddr *)address, &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

/* Hands an accepted socket to lws as a new HTTP connection (TLS when the vhost has it). */
static inline int happy_adopt(struct lws_vhost *vhost, int fd, int tls) {
    lws_sock_file_fd_type descriptor;
    descriptor.sockfd = fd;
    int type = LWS_ADOPT_SOCKET | LWS_ADOPT_HTTP | (tls ? LWS_ADOPT_ALLOW_SSL : 0);
    return lws_adopt_descriptor_vhost(vhost, (lws_adoption_type)type, descriptor, NULL, NULL) != NULL;
}

static const int happy_port_no_listen_server = CONTEXT_PORT_NO_LISTEN_SERVER;

static const int happy_kill_async = LWS_TO_KILL_ASYNC;
static const lws_usec_t happy_us_per_sec = LWS_US_PER_SEC;

#endif
