/* Ask mode of the DNS stub: see ask.h. Runs in the server's event loop; the
 * asker is a Unix socket on the host side (the server never prompts). */
#include "config.h"
#include "ask.h"
#include "dns.h"
#include "handoff.h"
#include "util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>
#include <unistd.h>

#define HELD_MAX 8 /* queries held per name (resolvers retry) */
#define HELD_LEN 512 /* what we keep of a query; longer ones are not held */

enum ask_state { ASK_PENDING, ASK_ALLOWED, ASK_DENIED };

struct held {
  uint8_t q[HELD_LEN];
  size_t len;
  struct ask_to to;
};

struct ask_name {
  struct ev_io io; /* the asker connection while pending */
  struct np_ask *A;
  char name[256];
  enum ask_state state;
  struct in_addr addr;
  struct route route; /* the listener's route once allowed */
  char reply[PATH_MAX + 16];
  size_t rlen;
  struct held held[HELD_MAX];
  size_t n_held;
};

struct np_ask {
  struct np_server *S;
  struct ask_name *v[NP_ASK_MAX];
  size_t n, n_allowed;
};

void
ask_init (struct np_server *S)
{
  S->ask = xmalloc0 (sizeof *S->ask);
  S->ask->S = S;
}

static struct ask_name *
find (const struct np_ask *A, const char *name)
{
  for (size_t i = 0; i < A->n; i++)
    if (strcasecmp (A->v[i]->name, name) == 0)
      return A->v[i];
  return NULL;
}

int
ask_lookup (const struct np_ask *A, const char *name, struct in_addr *addr)
{
  const struct ask_name *a = find (A, name);
  if (!a || a->state != ASK_ALLOWED)
    return 0;
  *addr = a->addr;
  return 1;
}

/* Answer what was held, now that the name is decided. */
static void
answer_held (struct ask_name *a)
{
  struct np_server *S = a->A->S;
  uint8_t out[HELD_LEN];
  for (size_t i = 0; i < a->n_held; i++)
    {
      struct held *h = &a->held[i];
      ssize_t m = server_dns_reply (S, h->q, h->len, out, sizeof out);
      if (m > 0)
        server_dns_answer_held (S, &h->to, out, (size_t) m);
    }
  a->n_held = 0;
}

static void
decide (struct ask_name *a, bool ok, const char *detail)
{
  struct np_server *S = a->A->S;
  char ep[300];
  a->state = ok ? ASK_ALLOWED : ASK_DENIED;
  if (a->io.fd >= 0)
    ev_close (&a->io);
  snprintf (ep, sizeof ep, "%s:%d", a->name, ok && a->route.port ? a->route.port : NP_ASK_PORT);
  audit_ask (&S->audit, ep, ok, detail);
  answer_held (a);
}

/* "allow /abs/relay.sock": a new loopback address and a listener for it;
 * port and through_wildcard come from "via PORT /abs/relay.sock". */
static void
allow (struct ask_name *a, const char *sock, int port, bool through_wildcard)
{
  struct np_ask *A = a->A;
  cleanup_error ar_error *err = NULL;
  char addr[16];
  if (sock[0] != '/' || strlen (sock) >= sizeof ((struct sockaddr_un *) 0)->sun_path)
    {
      decide (a, false, "the asker named no usable relay socket");
      return;
    }
  snprintf (addr, sizeof addr, "127.77.1.%zu", A->n_allowed + 1);
  a->route = (struct route){
    .name = xstrdup (a->name), .port = port, .addr = xstrdup (addr), .sock = xstrdup (sock), .connect = through_wildcard
  };
  if (inet_pton (AF_INET, addr, &a->addr) != 1 || server_add_route (A->S, &a->route, &err) < 0)
    {
      decide (a, false, err ? err->msg : "bad address");
      return;
    }
  A->n_allowed++;
  decide (a, true, "allowed by the asker");
}

static void
on_reply (struct ev_io *io, uint32_t events)
{
  struct ask_name *a = container_of (io, struct ask_name, io);
  (void) events;
  ssize_t n = read (io->fd, a->reply + a->rlen, sizeof a->reply - 1 - a->rlen);
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return;
  if (n <= 0)
    {
      decide (a, false, n == 0 ? "the asker hung up" : strerror (errno));
      return;
    }
  a->rlen += (size_t) n;
  a->reply[a->rlen] = '\0';
  char *nl = strchr (a->reply, '\n');
  if (!nl)
    {
      if (a->rlen == sizeof a->reply - 1)
        decide (a, false, "the asker's answer is too long");
      return;
    }
  *nl = '\0';
  char *end;
  long port;
  if (strncmp (a->reply, "allow ", 6) == 0)
    allow (a, a->reply + 6, NP_ASK_PORT, false);
  else if (strncmp (a->reply, "via ", 4) == 0 && (port = strtol (a->reply + 4, &end, 10)) > 0 && port < 65536
           && *end == ' ')
    allow (a, end + 1, (int) port, true);
  else
    decide (a, false, strcmp (a->reply, "deny") == 0 ? "denied by the asker" : "the asker's answer is not allow/deny");
}

/* One connection per name: the asker serialises its questions itself. */
static void
start_asking (struct ask_name *a)
{
  struct np_server *S = a->A->S;
  char msg[300];
  int len = snprintf (msg, sizeof msg, "ask %s %d\n", a->name, NP_ASK_PORT);
  a->io.fd = np_unix_connect (S->cfg->ask_socket, SOCK_STREAM);
  a->io.cb = on_reply;
  /* a fresh Unix stream socket takes these few bytes at once */
  if (a->io.fd < 0 || write (a->io.fd, msg, (size_t) len) != len || ev_add (&S->loop, &a->io, EPOLLIN) < 0)
    {
      char why[200];
      snprintf (why, sizeof why, "the asker cannot be reached: %s", strerror (errno));
      {
        decide (a, false, why);
        return;
      }
    }
}

void
ask_tell_blocked (struct np_server *S, const char *name, int port)
{
  char msg[300];
  int len = snprintf (msg, sizeof msg, "blocked %s %d\n", name, port);
  int fd = np_unix_connect (S->cfg->ask_socket, SOCK_STREAM);
  /* best effort: the audit line is the record, this is for the person */
  ssize_t w = -1;
  if (fd >= 0)
    w = write (fd, msg, (size_t) len);
  (void) w;
  if (fd >= 0)
    close (fd);
}

bool
ask_hold (struct np_server *S, const uint8_t *q, size_t qlen, const struct ask_to *to)
{
  struct np_ask *A = S->ask;
  struct dns_query_info info;
  uint8_t out[HELD_LEN];
  if (qlen > HELD_LEN || server_dns_probe (S, q, qlen, out, sizeof out, &info) < 0 || info.rcode != 3
      || !ar_host_name_ok (info.name, false))
    return false;
  struct ask_name *a = find (A, info.name);
  if (a && a->state != ASK_PENDING)
    return false;
  if (!a)
    {
      if (A->n == NP_ASK_MAX)
        return false;
      a = A->v[A->n++] = xmalloc0 (sizeof *a);
      a->A = A;
      a->io.fd = -1;
      snprintf (a->name, sizeof a->name, "%s", info.name);
      start_asking (a);
      if (a->state != ASK_PENDING)
        return false;
    }
  /* a resolver's retry replaces the oldest held copy */
  struct held *h = &a->held[a->n_held < HELD_MAX ? a->n_held++ : 0];
  if (h->len && !h->to.fl)
    server_dns_tcp_release (S, h->to.tcp_id); /* the replaced copy's connection may expire again */
  memcpy (h->q, q, qlen);
  h->len = qlen;
  h->to = *to;
  return true;
}
