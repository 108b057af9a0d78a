#include "config.h"
#include "resolve.h"
#include "util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct rs_req {
  char host[256];
  char port[8];
  struct addrinfo *ai;
  int rc;
  void *owner; /* NULL once cancelled; read and written on the loop only */
  struct rs_req *next;
};

static void *
worker (void *arg)
{
  struct resolver *rs = arg;
  for (;;)
    {
      pthread_mutex_lock (&rs->lock);
      while (!rs->todo)
        pthread_cond_wait (&rs->wake, &rs->lock);
      struct rs_req *rq = rs->todo;
      rs->todo = rq->next;
      if (!rs->todo)
        rs->todo_tail = NULL;
      pthread_mutex_unlock (&rs->lock);

      struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG };
      rq->rc = getaddrinfo (rq->host, rq->port, &hints, &rq->ai);
      if (rq->rc != 0)
        rq->ai = NULL;

      pthread_mutex_lock (&rs->lock);
      rq->next = rs->done;
      rs->done = rq;
      pthread_mutex_unlock (&rs->lock);
      uint64_t one = 1;
      /* Only EAGAIN (counter saturated) can fail here, and then the loop
       * is already due to wake. */
      if (write (rs->io.fd, &one, sizeof one) < 0 && errno != EAGAIN)
        abort ();
    }
  return NULL;
}

static void
on_results (struct ev_io *io, uint32_t events)
{
  struct resolver *rs = container_of (io, struct resolver, io);
  uint64_t n;
  (void) events;
  if (read (io->fd, &n, sizeof n) < 0 && errno != EAGAIN)
    return;
  pthread_mutex_lock (&rs->lock);
  struct rs_req *rq = rs->done;
  rs->done = NULL;
  pthread_mutex_unlock (&rs->lock);
  while (rq)
    {
      struct rs_req *next = rq->next;
      if (rq->owner)
        rs->cb (rq->owner, rq->ai, rq->rc);
      else if (rq->ai)
        freeaddrinfo (rq->ai);
      free (rq);
      rq = next;
    }
}

int
resolver_init (struct resolver *rs, struct ev_loop *l, rs_cb cb, ar_error **err)
{
  memset (rs, 0, sizeof *rs);
  rs->cb = cb;
  pthread_mutex_init (&rs->lock, NULL);
  pthread_cond_init (&rs->wake, NULL);
  rs->io.fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (rs->io.fd < 0)
    return ar_err (err, errno, "eventfd");
  rs->io.cb = on_results;
  if (ev_add (l, &rs->io, EPOLLIN) < 0)
    return ar_err (err, errno, "epoll_ctl eventfd");
  return 0;
}

/* Threads start with every signal blocked: signals belong to the loop's
 * signalfd. */
static int
start_threads (struct resolver *rs)
{
  sigset_t all, old;
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  int e = 0;
  while (rs->n_threads < RESOLVER_THREADS)
    {
      e = pthread_create (&rs->threads[rs->n_threads], NULL, worker, rs);
      if (e)
        break;
      pthread_detach (rs->threads[rs->n_threads]);
      rs->n_threads++;
    }
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  if (rs->n_threads == 0)
    {
      errno = e;
      return -1;
    }
  return 0;
}

struct rs_req *
resolver_submit (struct resolver *rs, const char *host, const char *port, void *owner)
{
  if (rs->n_threads == 0 && start_threads (rs) < 0)
    return NULL;
  struct rs_req *rq = xmalloc0 (sizeof *rq);
  snprintf (rq->host, sizeof rq->host, "%s", host);
  snprintf (rq->port, sizeof rq->port, "%s", port);
  rq->owner = owner;
  pthread_mutex_lock (&rs->lock);
  if (rs->todo_tail)
    rs->todo_tail->next = rq;
  else
    rs->todo = rq;
  rs->todo_tail = rq;
  pthread_cond_signal (&rs->wake);
  pthread_mutex_unlock (&rs->lock);
  return rq;
}

void
resolver_cancel (struct rs_req *rq)
{
  rq->owner = NULL;
}
