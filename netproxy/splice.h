/* The splice engine: moves bytes between two sockets through one pipe per
 * direction, never through userspace. Edge-triggered: every event on either
 * socket pumps both directions until nothing moves, so backpressure from a
 * slow reader stalls only its own connection. */
#ifndef NP_SPLICE_H
#define NP_SPLICE_H

#include <stdbool.h>
#include <stdint.h>
#include "ev.h"

struct sp_dir {
  int pipe[2];
  size_t inpipe; /* bytes read into the pipe, not yet written out */
  size_t cap; /* pipe capacity */
  bool eof; /* source said EOF */
  bool shut; /* EOF passed on: shutdown(dst, SHUT_WR) done */
  bool grown; /* pipe already enlarged for bulk transfer */
  bool src_ready; /* no EAGAIN from the source since its last event */
  bool dst_ready; /* no EAGAIN from the sink since its last event */
  uint64_t bytes; /* bytes delivered to dst */
};

struct sp_conn;
/* Called once, after every fd of the connection was closed. err is 0 when
 * both directions ended with EOF, else the errno that stopped it. */
typedef void (*sp_done_cb) (struct sp_conn *c, int err);

struct sp_conn {
  struct ev_loop *loop;
  struct ev_io io[2]; /* io[0]: the accepting side, io[1]: the far side */
  struct sp_dir d[2]; /* d[0]: io[0] -> io[1] (up), d[1]: back (down) */
  sp_done_cb done;
  bool running, finished;
  bool io0_shared; /* io[0]'s socket was passed to us and may be open
                             * elsewhere: its close would not drop it from epoll */
  uint64_t last_active; /* loop time bytes last moved (or the start) */
};

/* Zero the connection; io[0].fd = a, io[1].fd = -1. */
void sp_init (struct sp_conn *c, struct ev_loop *l, int a, sp_done_cb done);
/* Both fds set and registered (or not) in the loop: make the pipes and
 * start moving bytes. On failure returns -1 with errno set; the caller
 * still owns the connection and must call sp_abort. */
int sp_start (struct sp_conn *c);
/* Close everything and call done(c, err). Safe to call once. */
void sp_abort (struct sp_conn *c, int err);
/* True when no byte moved for idle_ms (0: never idle). */
bool sp_idle (const struct sp_conn *c, uint64_t idle_ms);

#endif
