#include "config.h"
#include "clock.h"
#include "ev.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

int
ev_init (struct ev_loop *l, ar_error **err)
{
  memset (l, 0, sizeof *l);
  l->epfd = epoll_create1 (EPOLL_CLOEXEC);
  if (l->epfd < 0)
    return ar_err (err, errno, "epoll_create1");
  l->now = ev_now_ms ();
  return 0;
}

int
ev_add (struct ev_loop *l, struct ev_io *io, uint32_t events)
{
  struct epoll_event e = { .events = events, .data.ptr = io };
  return epoll_ctl (l->epfd, EPOLL_CTL_ADD, io->fd, &e);
}

int
ev_mod (struct ev_loop *l, struct ev_io *io, uint32_t events)
{
  struct epoll_event e = { .events = events, .data.ptr = io };
  return epoll_ctl (l->epfd, EPOLL_CTL_MOD, io->fd, &e);
}

void
ev_close (struct ev_io *io)
{
  if (io->fd >= 0)
    close (io->fd);
  io->fd = -1;
}

void
ev_defer_free (struct ev_loop *l, void *p)
{
  if (l->n_grave == l->cap_grave)
    {
      l->cap_grave = l->cap_grave ? 2 * l->cap_grave : 64;
      l->graveyard = xrealloc (l->graveyard, l->cap_grave * sizeof (void *));
    }
  l->graveyard[l->n_grave++] = p;
}

int
ev_run_once (struct ev_loop *l, int timeout_ms)
{
  struct epoll_event evs[128];
  int n = epoll_wait (l->epfd, evs, ARRAY_SIZE (evs), timeout_ms);
  l->now = ev_now_ms ();
  if (n < 0)
    return errno == EINTR ? 0 : -1;
  for (int i = 0; i < n; i++)
    {
      struct ev_io *io = evs[i].data.ptr;
      if (io->fd >= 0)
        io->cb (io, evs[i].events);
    }
  for (size_t i = 0; i < l->n_grave; i++)
    free (l->graveyard[i]);
  l->n_grave = 0;
  return 0;
}

void
ev_fini (struct ev_loop *l)
{
  for (size_t i = 0; i < l->n_grave; i++)
    free (l->graveyard[i]);
  free (l->graveyard);
  l->graveyard = NULL;
  l->n_grave = l->cap_grave = 0;
  if (l->epfd >= 0)
    close (l->epfd);
  l->epfd = -1;
}

uint64_t
ev_now_ms (void)
{
  return (uint64_t) ar_now_ms ();
}

void
ev_raise_nofile (void)
{
  struct rlimit rl;
  if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max)
    {
      rl.rlim_cur = rl.rlim_max;
      setrlimit (RLIMIT_NOFILE, &rl);
    }
}
