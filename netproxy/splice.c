#include "config.h"
#include "splice.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

/* A bulk stream gets a bigger pipe the first time it fills the default
 * one: fewer syscalls per byte. Idle connections keep the small one, so
 * memory stays bounded at 1000s of connections. */
#define SP_BULK_PIPE (1024 * 1024)
#define SP_UNIX_SNDBUF (2 * 1024 * 1024)

void
sp_init (struct sp_conn *c, struct ev_loop *l, int a, sp_done_cb done)
{
  memset (c, 0, sizeof *c);
  c->loop = l;
  c->io[0].fd = a;
  c->io[1].fd = -1;
  c->done = done;
  for (int i = 0; i < 2; i++)
    c->d[i].pipe[0] = c->d[i].pipe[1] = -1;
}

static void
close_pipe (struct sp_dir *d)
{
  for (int j = 0; j < 2; j++)
    if (d->pipe[j] >= 0)
      {
        close (d->pipe[j]);
        d->pipe[j] = -1;
      }
}

void
sp_abort (struct sp_conn *c, int err)
{
  if (c->finished)
    return;
  c->finished = true;
  for (int i = 0; i < 2; i++)
    {
      /* On error, pass a reset on rather than a clean EOF. */
      struct linger lg = { .l_onoff = 1, .l_linger = 0 };
      if (err && c->io[i].fd >= 0)
        setsockopt (c->io[i].fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
      /* epoll watches the file, not the fd: if the sender still holds it,
       * our close alone would leave events coming for a freed connection. */
      if (i == 0 && c->io0_shared && c->io[0].fd >= 0)
        epoll_ctl (c->loop->epfd, EPOLL_CTL_DEL, c->io[0].fd, NULL);
      ev_close (&c->io[i]);
      close_pipe (&c->d[i]);
    }
  c->done (c, err);
}

bool
sp_idle (const struct sp_conn *c, uint64_t idle_ms)
{
  return idle_ms && c->running && !c->finished && c->loop->now - c->last_active >= idle_ms;
}

static void
grow_pipe (struct sp_dir *d)
{
  d->grown = true;
  int n = fcntl (d->pipe[1], F_SETPIPE_SZ, SP_BULK_PIPE);
  if (n > 0)
    d->cap = (size_t) n;
}

/* Move what can move in one direction. Returns 1 if bytes moved or EOF was
 * seen, 0 if both ends would block, -errno on a hard error. */
static int
pump_dir (struct sp_conn *c, int i)
{
  struct sp_dir *d = &c->d[i];
  int src = c->io[i].fd, dst = c->io[!i].fd;
  int moved = 0;

  for (;;)
    {
      bool progress = false;
      if (d->inpipe > 0 && d->dst_ready)
        {
          ssize_t n = splice (d->pipe[0], NULL, dst, NULL, d->inpipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
          if (n > 0)
            {
              d->inpipe -= (size_t) n;
              d->bytes += (uint64_t) n;
              progress = true;
            }
          else if (n < 0 && errno == EAGAIN)
            d->dst_ready = false;
          else if (n < 0 && errno != EINTR)
            return -errno;
        }
      if (!d->eof && d->inpipe < d->cap && d->src_ready)
        {
          ssize_t n = splice (src, NULL, d->pipe[1], NULL, d->cap - d->inpipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
          if (n > 0)
            {
              d->inpipe += (size_t) n;
              progress = true;
              if (!d->grown && d->inpipe >= d->cap)
                grow_pipe (d);
            }
          else if (n == 0)
            {
              d->eof = true;
              progress = true;
            }
          else if (errno == EAGAIN)
            {
              /* With an empty pipe EAGAIN can only mean a dry source; with
               * bytes in it the pipe may be what is full, so try again. */
              if (d->inpipe == 0)
                d->src_ready = false;
            }
          else if (errno != EINTR)
            return -errno;
        }
      if (!progress)
        break;
      moved = 1;
    }
  if (d->eof && d->inpipe == 0 && !d->shut)
    {
      d->shut = true;
      /* Half-close: the peer sees EOF, the other direction goes on. */
      if (shutdown (dst, SHUT_WR) < 0 && errno != ENOTCONN)
        return -errno;
    }
  return moved;
}

/* Directions are independent (each has its own source and sink), so one
 * pass over both, each run until it would block, is enough. */
static void
pump (struct sp_conn *c)
{
  int a = pump_dir (c, 0);
  int b = a < 0 ? 0 : pump_dir (c, 1);
  if (a > 0 || b > 0)
    c->last_active = c->loop->now;
  if (a < 0 || b < 0)
    sp_abort (c, a < 0 ? -a : -b);
  else if (c->d[0].shut && c->d[1].shut)
    sp_abort (c, 0);
}

/* Edge-triggered: remember which ends the kernel says moved, so a pass
 * does not spend a syscall to hear EAGAIN from an end that did not. */
static void
on_event (struct sp_conn *c, int i, uint32_t events)
{
  if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
    c->d[i].src_ready = true;
  if (events & (EPOLLOUT | EPOLLHUP | EPOLLERR))
    c->d[!i].dst_ready = true;
  pump (c);
}

static void
on_event0 (struct ev_io *io, uint32_t events)
{
  on_event (container_of (io, struct sp_conn, io[0]), 0, events);
}

static void
on_event1 (struct ev_io *io, uint32_t events)
{
  on_event (container_of (io, struct sp_conn, io[1]), 1, events);
}

static int
make_pipe (struct sp_dir *d)
{
  if (pipe2 (d->pipe, O_CLOEXEC | O_NONBLOCK) < 0)
    return -1;
  int n = fcntl (d->pipe[1], F_GETPIPE_SZ);
  d->cap = n > 0 ? (size_t) n : 65536;
  d->src_ready = d->dst_ready = true;
  return 0;
}

/* A Unix stream socket's in-flight bytes are bounded by the sender's
 * SO_SNDBUF alone (212 KiB by default): the one short window in the
 * chain, where TCP on loopback autotunes to MiBs. With twice a bulk pipe
 * (the kernel doubles the value: 4 MiB) one wake-up moves a full pipe;
 * measured with tests/bench/relay.sh: 0.45 -> 0.85 GB/s, and the server's
 * CPU per GB halved. 1 MiB was measurably slower, 4 MiB no faster. It is
 * a cap, not an allocation: only a connection whose reader stalls holds
 * that much, and that stays bounded per connection. */
static void
tune_socket (int fd)
{
  int domain = 0, sz = SP_UNIX_SNDBUF;
  socklen_t len = sizeof domain;
  /* SO_SNDBUFFORCE passes net.core.wmem_max when we may (CAP_NET_ADMIN);
   * else the plain one, capped there. Best effort: only speed depends on it. */
  if (getsockopt (fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 && domain == AF_UNIX
      && setsockopt (fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof sz) < 0)
    setsockopt (fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
}

int
sp_start (struct sp_conn *c)
{
  const uint32_t evs = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
  if (make_pipe (&c->d[0]) < 0 || make_pipe (&c->d[1]) < 0)
    return -1;
  tune_socket (c->io[0].fd);
  tune_socket (c->io[1].fd);
  c->io[0].cb = on_event0;
  c->io[1].cb = on_event1;
  for (int i = 0; i < 2; i++)
    if (ev_mod (c->loop, &c->io[i], evs) < 0 && (errno != ENOENT || ev_add (c->loop, &c->io[i], evs) < 0))
      return -1;
  c->running = true;
  c->last_active = c->loop->now;
  pump (c);
  return 0;
}
