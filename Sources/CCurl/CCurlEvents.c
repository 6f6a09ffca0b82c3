#define _GNU_SOURCE
#include "CCurl.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/*
 * A transfer loop's events (CCurl.h, ccurl_events): libcurl says which of its sockets to watch for
 * what (CURLMOPT_SOCKETFUNCTION) and when its next timeout is due (CURLMOPT_TIMERFUNCTION); one
 * epoll set watches those sockets and an eventfd other threads write to wake the loop; each ready
 * socket, and the timer once due, goes to curl_multi_socket_action. libcurl then works on the
 * transfers that have something to do, not on every one as curl_multi_perform does (which polls
 * every running transfer's socket at every call: 40-60 system calls per URL, bench/README).
 *
 * Only the loop thread calls these functions, and libcurl calls the callbacks only from its calls on
 * that thread; ccurl_events_wake alone is for any thread.
 *
 * Which sockets are in the set: `watched[fd]`, the events the set has for each descriptor (0: not
 * in it). A connection's socket libcurl stops watching (CURL_POLL_REMOVE, also when a transfer ends
 * and its connection goes back to libcurl's cache) is parked, not taken out: a kept-alive connection
 * is mostly asked for again by the next transfer, and then needs no system call once it is
 * CONNECTED (below). An
 * EPOLL_CTL_DEL then ADD per transfer (the kernel frees and makes its entry and hooks the socket's
 * wait queue again) cost more CPU than libcurl's own socket bookkeeping (one host, 10,000 × 304:
 * ~40 ms; bench/history/revalidate.md, session 24). A parked socket that becomes
 * ready (its server closed it; level-triggered, it would wake every wait) is taken out at its first
 * event; libcurl finds the connection dead when it next looks.
 *
 * A parked socket may have been closed meanwhile, which took it out of the set, and its number may
 * have come back as another socket. Connections' sockets are opened and closed here
 * (CURLOPT_OPENSOCKETFUNCTION, CURLOPT_CLOSESOCKETFUNCTION on every easy handle of the loop,
 * ccurl_events_attach), which marks them OWN, takes them out of the set and forgets them at close.
 * But libcurl 7.88 does not close every socket it opened through that callback: one still
 * connecting when its attempt is dropped (a connect timeout, a transfer cancelled or ended while
 * connecting, the losing address of a dual-stack host) is closed with a plain close() (curl PR
 * 11439, fixed in 8.2.0). Its entry then outlives it, and its number may come back as a socket libcurl
 * did not open here, its threaded resolver's socket pair, which libcurl asks to have watched for
 * reading.
 *
 * So an OWN entry is trusted only once it is CONNECTED: libcurl asks to read a connection's socket
 * only once its connect has succeeded and the socket is the connection's (7.88's cf_socket_active;
 * until then it is watched for writing only), and such a socket it closes only through the close
 * callback. The first time libcurl asks to read an OWN socket, one getsockopt(SO_DOMAIN) checks that
 * the descriptor is still an internet socket, not the resolver's AF_UNIX pair at a stale entry's
 * number: once per connection, not per transfer. A parked CONNECTED socket asked for again with the
 * same events needs no call; a parked socket not CONNECTED (parked while connecting) is handed to the
 * kernel (EPOLL_CTL_MOD), and an answer that shows the entry was stale (ENOENT for a MOD, EEXIST for
 * an ADD) drops OWN. A descriptor that is not OWN (the resolver's pair) is taken out at
 * CURL_POLL_REMOVE, right before libcurl closes it.
 */
struct ccurl_events {
    CURLM *multi;
    int epoll;
    int wake;
    /* libcurl's timer (CURLMOPT_TIMERFUNCTION): due at `deadline` (CLOCK_MONOTONIC, µs) when
     * `timer_set`; 0: due at once, with no look at the clock (libcurl's most common timeout: a
     * transfer added or to be run again). */
    int timer_set;
    int64_t deadline;
    /* The first failure of the set itself since ccurl_events_failure last took it (0: none). */
    int failure_errno;
    const char *failure_call;
    /* Per descriptor: the events the set has for it (EPOLLIN, EPOLLOUT; 0: not in the set), PARKED
     * when libcurl does not watch it any more, OWN for a connection's socket opened here, CONNECTED
     * for one libcurl reads (see the top); `watched_count` entries (grown on demand). */
    uint32_t *watched;
    int watched_count;
};

/* Flags in `watched`, outside the events the set gives a socket. */
#define PARKED (1u << 30)
#define OWN (1u << 29)
#define CONNECTED (1u << 28)
#define EVENTS (EPOLLIN | EPOLLOUT)

enum { READY_MAX = 64 };

/* Monotonic microseconds. CLOCK_MONOTONIC never fails on Linux; if it did, timers would be due at once. */
static int64_t now_us(void) {
    struct timespec now;
    if (clock_gettime(CLOCK_MONOTONIC, &now) != 0) return INT64_MAX;
    return (int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000;
}

static void note_failure(ccurl_events *events, const char *call, int error) {
    if (events->failure_errno != 0) return;
    events->failure_errno = error;
    events->failure_call = call;
}

/* Room in `watched` for descriptor `fd`; 0 when out of memory. */
static int make_room(ccurl_events *events, int fd) {
    if (fd < events->watched_count) return 1;
    int count = events->watched_count == 0 ? 256 : events->watched_count;
    while (count <= fd) count *= 2;
    uint32_t *grown = realloc(events->watched, (size_t)count * sizeof *grown);
    if (grown == NULL) {
        errno = ENOMEM;
        return 0;
    }
    for (int i = events->watched_count; i < count; i++) grown[i] = 0;
    events->watched = grown;
    events->watched_count = count;
    return 1;
}

/* Whether descriptor `fd` is an internet socket (a connection's, opened here), not the threaded
 * resolver's AF_UNIX socket pair at a number a socket opened here had before (see the top). A failed
 * call (ENOTSOCK, EBADF) also says no: the descriptor is then handled as not OWN, which is always
 * right, only dearer. */
static int is_internet_socket(int fd) {
    int domain = 0;
    socklen_t size = sizeof domain;
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &size) != 0) return 0;
    return domain == AF_INET || domain == AF_INET6;
}

/* CURLMOPT_SOCKETFUNCTION. -1 (an epoll_ctl the kernel refused, out of memory or past
 * max_user_watches) makes libcurl end every transfer of the multi handle (CURLM_ABORTED_BY_CALLBACK);
 * the loop fails them with ccurl_events_failure's error and the multi handle takes new ones again. */
static int socket_callback(CURL *easy, curl_socket_t socket, int what, void *userp, void *socketp) {
    (void)easy;
    (void)socketp;
    ccurl_events *events = userp;
    if (socket < 0) return 0;
    if (what == CURL_POLL_REMOVE) {
        if (socket >= events->watched_count || (events->watched[socket] & EVENTS) == 0) return 0;
        if (events->watched[socket] & OWN) {
            events->watched[socket] |= PARKED;   /* left in the set (see the top) */
            return 0;
        }
        events->watched[socket] = 0;
        /* ENOENT, EBADF: the descriptor was closed already, which took it out of the set. */
        if (epoll_ctl(events->epoll, EPOLL_CTL_DEL, socket, NULL) != 0 && errno != ENOENT && errno != EBADF) {
            note_failure(events, "epoll_ctl(EPOLL_CTL_DEL)", errno);
            return -1;
        }
        return 0;
    }
    if (!make_room(events, socket)) {
        note_failure(events, "realloc", ENOMEM);
        return -1;
    }
    uint32_t want = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
    uint32_t had = events->watched[socket];
    uint32_t own = had & (OWN | CONNECTED);
    /* Watched with these events, or parked with them and CONNECTED: no call (see the top). */
    if ((had & EVENTS) == want && ((had & PARKED) == 0 || (had & CONNECTED) != 0)) {
        events->watched[socket] = want | own;
        return 0;
    }
    if ((want & EPOLLIN) != 0 && own == OWN) own = is_internet_socket(socket) ? OWN | CONNECTED : 0;
    struct epoll_event event = { .events = want, .data = { .fd = socket } };
    int op = (had & EVENTS) != 0 ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (epoll_ctl(events->epoll, op, socket, &event) != 0) {
        int again = op == EPOLL_CTL_ADD && errno == EEXIST ? EPOLL_CTL_MOD
                  : op == EPOLL_CTL_MOD && errno == ENOENT ? EPOLL_CTL_ADD : -1;
        if (again < 0 || epoll_ctl(events->epoll, again, socket, &event) != 0) {
            events->watched[socket] = 0;
            note_failure(events, op == EPOLL_CTL_ADD ? "epoll_ctl(EPOLL_CTL_ADD)" : "epoll_ctl(EPOLL_CTL_MOD)", errno);
            return -1;
        }
        own = 0;   /* the entry was stale: this descriptor is not the socket opened here (see the top) */
    }
    events->watched[socket] = want | own;
    return 0;
}

/* Takes a parked socket that became ready out of the set (it stays OWN and CONNECTED: closed here
 * later). */
static void unpark(ccurl_events *events, int fd) {
    events->watched[fd] &= OWN | CONNECTED;
    if (epoll_ctl(events->epoll, EPOLL_CTL_DEL, fd, NULL) != 0 && errno != ENOENT && errno != EBADF)
        note_failure(events, "epoll_ctl(EPOLL_CTL_DEL)", errno);
}

/* CURLOPT_OPENSOCKETFUNCTION: a connection's socket, made as libcurl would, marked OWN (the number
 * may have been a parked socket's, closed since, which closing took out of the set). */
static curl_socket_t open_socket(void *clientp, curlsocktype purpose, struct curl_sockaddr *address) {
    (void)purpose;
    ccurl_events *events = clientp;
    /* Close-on-exec: a child process started meanwhile must not keep the socket, which would keep
     * its entry in the set after the close below. */
    int fd = socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
    if (fd < 0) return CURL_SOCKET_BAD;   /* libcurl reports errno */
    if (!make_room(events, fd)) {
        (void)close(fd);   /* a socket nobody used: nothing to lose */
        errno = ENOMEM;
        return CURL_SOCKET_BAD;
    }
    events->watched[fd] = OWN;
    return fd;
}

/* CURLOPT_CLOSESOCKETFUNCTION: takes the socket out of the set (closing would, unless another
 * process holds a copy of it), forgets it and closes it: one call per connection, not per transfer.
 * libcurl ignores the result; a close that fails (EINTR, EIO) has released the descriptor all the
 * same on Linux. */
static int close_socket(void *clientp, curl_socket_t socket) {
    ccurl_events *events = clientp;
    if (socket >= 0 && socket < events->watched_count) {
        if ((events->watched[socket] & EVENTS) != 0 && epoll_ctl(events->epoll, EPOLL_CTL_DEL, socket, NULL) != 0
            && errno != ENOENT && errno != EBADF)
            note_failure(events, "epoll_ctl(EPOLL_CTL_DEL)", errno);
        events->watched[socket] = 0;
    }
    return close(socket);
}

CURLcode ccurl_events_attach(ccurl_events *events, CURL *easy) {
    CURLcode rc = ccurl_easy_setopt_opensocket_callback(easy, open_socket);
    if (rc == CURLE_OK) rc = ccurl_easy_setopt_pointer(easy, CURLOPT_OPENSOCKETDATA, events);
    if (rc == CURLE_OK) rc = ccurl_easy_setopt_closesocket_callback(easy, close_socket);
    if (rc == CURLE_OK) rc = ccurl_easy_setopt_pointer(easy, CURLOPT_CLOSESOCKETDATA, events);
    return rc;
}

/* CURLMOPT_TIMERFUNCTION: -1 stops the timer; 0 and more: due in that many milliseconds (0: at the
 * loop's next turn). libcurl calls it only when its earliest timeout changes, and again after every
 * curl_multi_socket_action(CURL_SOCKET_TIMEOUT) that leaves one, so a timer run early is set again. */
static int timer_callback(CURLM *multi, long timeout_ms, void *userp) {
    (void)multi;
    ccurl_events *events = userp;
    if (timeout_ms < 0) {
        events->timer_set = 0;
        return 0;
    }
    events->timer_set = 1;
    if (timeout_ms == 0) {
        events->deadline = 0;
        return 0;
    }
    int64_t now = now_us();
    events->deadline = timeout_ms > (INT64_MAX - now) / 1000 ? INT64_MAX : now + (int64_t)timeout_ms * 1000;
    return 0;
}

ccurl_events *ccurl_events_new(CURLM *multi, const char **why) {
    ccurl_events *events = calloc(1, sizeof *events);
    if (events == NULL) {
        *why = "calloc";
        return NULL;
    }
    events->multi = multi;
    events->epoll = epoll_create1(EPOLL_CLOEXEC);
    events->wake = events->epoll < 0 ? -1 : eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    /* Edge-triggered: every write to the eventfd is one event, and the counter is never read
     * back (a read per wake-up saved; 2^64 - 2 writes would fill it). */
    struct epoll_event wake = { .events = EPOLLIN | EPOLLET, .data = { .fd = events->wake } };
    const char *failed = events->epoll < 0 ? "epoll_create1"
                       : events->wake < 0 ? "eventfd"
                       : epoll_ctl(events->epoll, EPOLL_CTL_ADD, events->wake, &wake) != 0 ? "epoll_ctl(EPOLL_CTL_ADD)"
                       : NULL;
    if (failed == NULL) {
        CURLMcode rc = ccurl_multi_setopt_socket_callback(multi, socket_callback);
        if (rc == CURLM_OK) rc = ccurl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, events);
        if (rc == CURLM_OK) rc = ccurl_multi_setopt_timer_callback(multi, timer_callback);
        if (rc == CURLM_OK) rc = ccurl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, events);
        if (rc != CURLM_OK) {
            failed = "curl_multi_setopt(CURLMOPT_SOCKETFUNCTION, CURLMOPT_TIMERFUNCTION)";
            errno = 0;
        }
    }
    if (failed == NULL) return events;
    int error = errno;
    ccurl_events_free(events);
    errno = error;
    *why = failed;
    return NULL;
}

void ccurl_events_free(ccurl_events *events) {
    if (events == NULL) return;
    /* A close that fails (EINTR, EIO) has released the descriptor all the same on Linux: nothing is
     * left to undo or to report. */
    if (events->wake >= 0) (void)close(events->wake);
    if (events->epoll >= 0) (void)close(events->epoll);
    free(events->watched);
    free(events);
}

void ccurl_events_wake(ccurl_events *events) {
    uint64_t one = 1;
    /* Fails only on a full counter (EAGAIN, never reached) or a closed descriptor (the set lives as
     * long as its loop): the loop then sees the message at its wait's bound (ccurl_events_run). */
    while (write(events->wake, &one, sizeof one) < 0 && errno == EINTR) {}
}

CURLMcode ccurl_events_run(ccurl_events *events, int max_wait_ms) {
    int wait = max_wait_ms;
    if (events->timer_set && wait != 0) {
        int64_t left = events->deadline == 0 ? 0 : events->deadline - now_us();
        /* Rounded up: a timer run early only costs a turn (libcurl sets it again). */
        int64_t timer_ms = left <= 0 ? 0 : left / 1000 + (left % 1000 != 0);
        if (wait < 0 || timer_ms < wait) wait = (int)timer_ms;
    }
    struct epoll_event ready[READY_MAX];
    int count = epoll_wait(events->epoll, ready, READY_MAX, wait);
    if (count < 0) {
        int error = errno;
        count = 0;
        if (error != EINTR) {
            /* Would fail again at once: the loop sleeps its wait instead of spinning (poll on
             * nothing sleeps; EINTR only ends the sleep early). */
            note_failure(events, "epoll_wait", error);
            if (wait > 0 && poll(NULL, 0, wait) < 0 && errno != EINTR) note_failure(events, "poll", errno);
        }
    }
    CURLMcode result = CURLM_OK;
    int running = 0;
    for (int i = 0; i < count; i++) {
        int fd = ready[i].data.fd;
        if (fd == events->wake) continue;   /* a wake-up: the caller looks at its queue */
        if (fd < events->watched_count && (events->watched[fd] & PARKED) != 0) {
            unpark(events, fd);
            continue;
        }
        uint32_t got = ready[i].events;
        /* An error or hang-up: libcurl looks at the socket itself (0), as curl_multi_perform had it
         * do, and finds the failure where it reads or writes. */
        int action = got & (EPOLLERR | EPOLLHUP) ? 0
                   : (got & EPOLLIN ? CURL_CSELECT_IN : 0) | (got & EPOLLOUT ? CURL_CSELECT_OUT : 0);
        CURLMcode rc = curl_multi_socket_action(events->multi, fd, action, &running);
        if (rc != CURLM_OK && result == CURLM_OK) result = rc;
    }
    /* Each call above also ran every timeout due, but libcurl tells its timer only of a change:
     * the timer's own call is made once the deadline has passed, whatever ran meanwhile. */
    if (events->timer_set && (events->deadline == 0 || now_us() >= events->deadline)) {
        events->timer_set = 0;
        CURLMcode rc = curl_multi_socket_action(events->multi, CURL_SOCKET_TIMEOUT, 0, &running);
        if (rc != CURLM_OK && result == CURLM_OK) result = rc;
    }
    return result;
}

int ccurl_events_failure(ccurl_events *events, const char **call) {
    int error = events->failure_errno;
    *call = events->failure_call;
    events->failure_errno = 0;
    events->failure_call = NULL;
    return error;
}
