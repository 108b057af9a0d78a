/* The one epoll loop shared by the relay and the netproxy server.
 * Every fd is an ev_io whose callback runs on readiness; objects closed
 * during a batch are freed only after the batch (ev_defer_free), so a
 * later event in the same batch never touches freed memory. */
#ifndef NP_EV_H
#define NP_EV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include "error.h"

struct ev_io;
typedef void (*ev_cb) (struct ev_io *io, uint32_t events);

struct ev_io {
  int fd; /* -1 once closed: events still queued for it are dropped */
  ev_cb cb;
};

struct ev_loop {
  int epfd;
  uint64_t now; /* ev_now_ms () when the last wait returned: one clock read per batch */
  void **graveyard;
  size_t n_grave, cap_grave;
};

#define container_of(ptr, type, member) ((type *) ((char *) (ptr) - __builtin_offsetof(type, member)))

int ev_init (struct ev_loop *l, ar_error **err);
int ev_add (struct ev_loop *l, struct ev_io *io, uint32_t events);
int ev_mod (struct ev_loop *l, struct ev_io *io, uint32_t events);
/* Close io->fd (closing also drops it from epoll) and mark it dead. */
void ev_close (struct ev_io *io);
void ev_defer_free (struct ev_loop *l, void *p);
/* Wait at most timeout_ms (-1: forever), dispatch, free the graveyard.
 * Returns -1 only on an epoll failure other than EINTR. */
int ev_run_once (struct ev_loop *l, int timeout_ms);
/* Free what is pending and the loop itself (at exit). */
void ev_fini (struct ev_loop *l);

/* Monotonic milliseconds. */
uint64_t ev_now_ms (void);

/* Raise RLIMIT_NOFILE's soft limit to the hard limit. */
void ev_raise_nofile (void);

#endif
