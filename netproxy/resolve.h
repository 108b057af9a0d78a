/* Name resolution off the event loop. getaddrinfo blocks (a resolver that
 * does not answer holds it for seconds), so a small fixed pool of threads
 * runs it and hands each result back through an eventfd the loop polls.
 * The threads touch only their request; the owner is told on the loop's
 * thread, and may cancel a request at any time (its result is dropped). */
#ifndef NP_RESOLVE_H
#define NP_RESOLVE_H

#include <netdb.h>
#include <pthread.h>
#include "ev.h"

#define RESOLVER_THREADS 4

struct rs_req;
/* rc is getaddrinfo's; ai (owned by the callee, free with freeaddrinfo)
 * is NULL unless rc == 0. */
typedef void (*rs_cb) (void *owner, struct addrinfo *ai, int rc);

struct resolver {
  struct ev_io io; /* eventfd: results are waiting */
  rs_cb cb;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  struct rs_req *todo, *todo_tail, *done;
  pthread_t threads[RESOLVER_THREADS];
  int n_threads; /* started on first use: numeric-only relays stay single-threaded */
};

int resolver_init (struct resolver *rs, struct ev_loop *l, rs_cb cb, ar_error **err);
/* Queue host:port (SOCK_STREAM, AI_ADDRCONFIG). NULL with errno set if no
 * thread could be started. */
struct rs_req *resolver_submit (struct resolver *rs, const char *host, const char *port, void *owner);
/* The owner is going away: never call back for this request. */
void resolver_cancel (struct rs_req *rq);

#endif
