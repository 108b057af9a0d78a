/* agentrun-relay: the host side of the network path. One Unix socket per
 * allowed endpoint; each connection on it is joined to a fresh TCP
 * connection to that endpoint's upstream, made from the host's network.
 * Beside it, a handoff socket (handoff.h) on which the netproxy server
 * passes the container's accepted TCP sockets: those are spliced to the
 * upstream directly, with the server out of the data path. The stream
 * socket stays for a server whose relay has no handoff socket and for
 * plain clients (a CONNECT route's target then comes first, as a line). */
#include "config.h"
#include "optlist.h"
#include "audit.h"
#include "confine.h"
#include "handoff.h"
#include "resolve.h"
#include "ev.h"
#include "routes.h"
#include "sni.h"
#include "splice.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#define PEEK_TIMEOUT_MS 10000
#define ACCEPT_PAUSE_MS 100
/* A connection holds up to 7 fds (client, upstream, handoff channel, two
 * splice pipes); by default the cap leaves room for the listeners. */
#define FDS_PER_CONN 7
#define FDS_SPARE 64
#define MIN_MAX_CONNS 16

enum rc_state { RC_HANDOFF, RC_PREAMBLE, RC_PEEK, RC_RESOLVING, RC_CONNECTING, RC_SPLICE };

struct relay;

struct listener {
  struct ev_io io;
  struct relay *R;
  struct route *r;
  char *path;
  bool handoff; /* SOCKET.fd: the server passes client sockets (handoff.h) */
};

struct rconn {
  struct sp_conn sp;
  struct relay *R;
  struct route *r;
  enum rc_state state;
  uint64_t t0, deadline;
  struct addrinfo *ai, *cur;
  struct rs_req *rq; /* RC_RESOLVING: the request in the resolver pool */
  int last_errno;
  char host[256]; /* upstream host: the route's, or the CONNECT target */
  int port;
  char sni_name[256]; /* the name the ClientHello must carry */
  char endpoint[300];
  const char *outcome;
  char detail[300];
  struct rconn *prev, *next; /* every open connection, for the timers */
  struct ev_io ctl; /* handed-off connections: the server's channel, else -1 */
  bool ctl_polled;
  bool has_target; /* CONNECT route: the target is known (set_target) */
  uint64_t idle_ms; /* 0: never idle; the server's --idle-timeout may shorten ours */
};

struct relay {
  struct ev_loop loop;
  struct routes routes;
  struct listener *L;
  size_t nL;
  struct audit audit;
  bool sni_check, stopping, paused;
  int grace_s;
  const char *dir;
  int dirfd; /* dir, held so the sockets go even where the folders above it keep us out */
  size_t nconns;
  size_t max_conns; /* open connections at most (0: no cap); then refused */
  struct rconn *pending; /* every open connection (see expire) */
  uint64_t stop_deadline, resume_at;
  uint64_t connect_ms, idle_ms;
  uint64_t next_scan; /* no connection times out before this */
  struct resolver res;
  struct ev_io sig;
};

static const char *prog = "agentrun-relay";

/* ---- connection end ---- */

static void
pending_unlink (struct rconn *c)
{
  if (c->prev)
    c->prev->next = c->next;
  else if (c->R->pending == c)
    c->R->pending = c->next;
  if (c->next)
    c->next->prev = c->prev;
  c->prev = c->next = NULL;
}

static void resume_accept (struct relay *R);

static void
on_done (struct sp_conn *sp, int err)
{
  struct rconn *c = container_of (sp, struct rconn, sp);
  struct relay *R = c->R;
  if (!c->outcome)
    {
      c->outcome = err ? "error" : "ok";
      if (err)
        snprintf (c->detail, sizeof c->detail, "%s", strerror (err));
    }
  if (strcmp (c->outcome, "probe") != 0)
    {
      struct audit_conn a = {
        .endpoint = c->endpoint,
        .outcome = c->outcome,
        .detail = c->detail[0] ? c->detail : NULL,
        .bytes_up = sp->d[0].bytes,
        .bytes_down = sp->d[1].bytes,
        .duration_ms = ev_now_ms () - c->t0,
      };
      audit_conn (&R->audit, &a);
    }
  if (c->ctl.fd >= 0)
    {
      /* The server writes its own audit line from this; a fresh channel
       * that carried one message has room for it. */
      char rep[HANDOFF_REPORT_MAX];
      int n = handoff_report (rep, sizeof rep, sp->d[0].bytes, sp->d[1].bytes, c->outcome,
                              c->detail[0] ? c->detail : NULL);
      if (n > 0)
        send (c->ctl.fd, rep, (size_t) n, MSG_DONTWAIT | MSG_NOSIGNAL);
      ev_close (&c->ctl);
    }
  pending_unlink (c);
  if (c->rq)
    resolver_cancel (c->rq);
  if (c->ai)
    freeaddrinfo (c->ai);
  R->nconns--;
  ev_defer_free (&R->loop, c);
  if (R->paused)
    resume_accept (R);
}

static void
fail (struct rconn *c, const char *outcome, const char *fmt, const char *arg)
{
  c->outcome = outcome;
  if (fmt)
    snprintf (c->detail, sizeof c->detail, fmt, arg);
  sp_abort (&c->sp, 0);
}

/* ---- upstream connect ---- */

/* A new deadline: make sure expire looks again by then. */
static void
arm (struct relay *R, uint64_t when)
{
  if (when < R->next_scan)
    R->next_scan = when;
}

static void start_splice (struct rconn *c);
static void try_connect (struct rconn *c);

static const char *
connect_outcome (int e)
{
  switch (e)
    {
    case ECONNREFUSED: return "upstream-refused";
    case ETIMEDOUT: return "upstream-timeout";
    case ENETUNREACH:
    case EHOSTUNREACH: return "upstream-unreachable";
    default: return "upstream-error";
    }
}

static void
on_connecting (struct ev_io *io, uint32_t events)
{
  struct rconn *c = container_of (io, struct rconn, sp.io[1]);
  int e = 0;
  socklen_t len = sizeof e;
  (void) events;
  if (c->state != RC_CONNECTING)
    return;
  if (getsockopt (io->fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
    e = errno;
  if (e == 0)
    {
      start_splice (c);
      return;
    }
  c->last_errno = e;
  ev_close (io);
  c->cur = c->cur->ai_next;
  try_connect (c);
}

static void
try_connect (struct rconn *c)
{
  for (; c->cur; c->cur = c->cur->ai_next)
    {
      int fd = socket (c->cur->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0)
        {
          c->last_errno = errno;
          continue;
        }
      int one = 1;
      setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      c->sp.io[1].fd = fd;
      c->sp.io[1].cb = on_connecting;
      if (connect (fd, c->cur->ai_addr, c->cur->ai_addrlen) == 0)
        {
          start_splice (c);
          return;
        }
      if (errno == EINPROGRESS && ev_add (&c->R->loop, &c->sp.io[1], EPOLLOUT) == 0)
        return;
      c->last_errno = errno;
      ev_close (&c->sp.io[1]);
    }
  fail (c, connect_outcome (c->last_errno), "%s", strerror (c->last_errno));
}

static void
resolved (void *owner, struct addrinfo *ai, int rc)
{
  struct rconn *c = owner;
  c->rq = NULL;
  if (rc != 0)
    {
      fail (c, "upstream-unresolved", "%s", gai_strerror (rc));
      return;
    }
  c->ai = c->cur = ai;
  c->state = RC_CONNECTING;
  c->last_errno = EHOSTUNREACH;
  try_connect (c);
}

/* Resolved now, on the host, so an upstream that moves is followed. A
 * numeric address is converted in place; a name goes to the resolver
 * threads, since getaddrinfo may block for seconds and the loop serves
 * every other connection meanwhile. One deadline covers resolution and
 * connect. */
static void
start_connect (struct rconn *c)
{
  struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG | AI_NUMERICHOST | AI_NUMERICSERV };
  struct addrinfo *ai = NULL;
  char port[8];
  snprintf (port, sizeof port, "%d", c->port);
  c->deadline = ev_now_ms () + c->R->connect_ms;
  arm (c->R, c->deadline);
  int rc = getaddrinfo (c->host, port, &hints, &ai);
  if (rc != EAI_NONAME)
    {
      resolved (c, rc == 0 ? ai : NULL, rc);
      return;
    }
  c->state = RC_RESOLVING;
  c->rq = resolver_submit (&c->R->res, c->host, port, c);
  if (!c->rq)
    fail (c, "error", "resolver threads: %s", strerror (errno));
}

static void
start_splice (struct rconn *c)
{
  c->state = RC_SPLICE;
  if (c->idle_ms)
    arm (c->R, ev_now_ms () + c->idle_ms);
  if (sp_start (&c->sp) < 0)
    fail (c, "error", "%s", strerror (errno));
}

/* ---- before connecting: CONNECT preamble and SNI peek ---- */

static void
try_peek (struct rconn *c)
{
  static uint8_t buf[SNI_MAX_HELLO + 512];
  char name[256];
  ssize_t n = recv (c->sp.io[0].fd, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return;
  if (n <= 0)
    {
      fail (c, n == 0 ? "client-closed" : "error", "%s", n == 0 ? "before the TLS ClientHello" : strerror (errno));
      return;
    }
  int rc = sni_parse (buf, (size_t) n, name, sizeof name);
  if (rc == SNI_NEED_MORE && (size_t) n < sizeof buf)
    return;
  if (rc == SNI_FOUND && strcasecmp (name, c->sni_name) == 0)
    start_connect (c);
  else if (rc == SNI_FOUND)
    fail (c, "sni-mismatch", "server_name %s", name);
  else if (rc == SNI_NOT_TLS)
    fail (c, "sni-not-tls", "%s", "plain bytes where a TLS ClientHello was expected");
  else if (rc == SNI_NO_NAME)
    fail (c, "sni-missing", "%s", "ClientHello without server_name");
  else
    fail (c, "sni-bad", "%s", "malformed or oversized ClientHello");
}

/* A CONNECT target, checked against the route's wildcard again: it
 * becomes the upstream and the name the SNI must carry. -1 once failed. */
static int
set_target (struct rconn *c, const char *target)
{
  cleanup_free char *host = NULL;
  int port;
  if (route_split_hostport (target, &host, &port) < 0 || !ar_host_name_ok (host, false)
      || strlen (host) >= sizeof c->host || port != c->r->port || !ar_host_name_match (c->r->name, host))
    {
      fail (c, "connect-denied", "target %.200s", target);
      return -1;
    }
  snprintf (c->host, sizeof c->host, "%s", host);
  snprintf (c->sni_name, sizeof c->sni_name, "%s", host);
  snprintf (c->endpoint, sizeof c->endpoint, "%s:%d", host, port);
  c->has_target = true;
  return 0;
}

/* CONNECT routes on the stream socket: the netproxy server names the
 * target in one line, "HOST:PORT\n", before the client's bytes. */
static void
try_preamble (struct rconn *c)
{
  char buf[300];
  ssize_t n = recv (c->sp.io[0].fd, buf, sizeof buf - 1, MSG_PEEK | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return;
  if (n <= 0)
    {
      fail (c, "client-closed", "%s", "before the CONNECT target");
      return;
    }
  buf[n] = '\0';
  char *nl = memchr (buf, '\n', (size_t) n);
  if (!nl)
    {
      if (n == sizeof buf - 1)
        fail (c, "connect-denied", "%s", "CONNECT target line too long");
      return;
    }
  *nl = '\0';
  /* Consume exactly the line: what follows belongs to the upstream. */
  char sink[300];
  if (recv (c->sp.io[0].fd, sink, (size_t) (nl - buf) + 1, MSG_DONTWAIT) != nl - buf + 1)
    {
      fail (c, "error", "%s", "short read of the CONNECT target");
      return;
    }
  if (set_target (c, buf) < 0)
    return;
  if (c->R->sni_check)
    {
      c->state = RC_PEEK;
      try_peek (c);
    }
  else
    start_connect (c);
}

static void
on_client_early (struct ev_io *io, uint32_t events)
{
  struct rconn *c = container_of (io, struct rconn, sp.io[0]);
  (void) events;
  if (c->state == RC_PREAMBLE)
    try_preamble (c);
  else if (c->state == RC_PEEK)
    try_peek (c);
  /* RC_CONNECTING: bytes wait in the socket until the upstream is there. */
}

/* ---- accepting ---- */

static void
pause_accept (struct relay *R)
{
  /* Out of fds: stop polling the listeners (they would fire at once
   * again) until a connection ends or a short pause has passed. */
  for (size_t i = 0; i < R->nL; i++)
    if (R->L[i].io.fd >= 0)
      ev_mod (&R->loop, &R->L[i].io, 0);
  R->paused = true;
  R->resume_at = ev_now_ms () + ACCEPT_PAUSE_MS;
}

static void
resume_accept (struct relay *R)
{
  for (size_t i = 0; i < R->nL; i++)
    if (R->L[i].io.fd >= 0)
      ev_mod (&R->loop, &R->L[i].io, EPOLLIN);
  R->paused = false;
}

/* A connection on L's route, its client side fd (-1 until a handoff). */
static struct rconn *
conn_new (struct listener *L, int fd)
{
  struct relay *R = L->R;
  struct rconn *c = xmalloc0 (sizeof *c);
  sp_init (&c->sp, &R->loop, fd, on_done);
  c->R = R;
  c->r = L->r;
  c->ctl.fd = -1;
  c->idle_ms = R->idle_ms;
  c->t0 = ev_now_ms ();
  c->deadline = c->t0 + PEEK_TIMEOUT_MS;
  arm (R, c->deadline);
  c->port = L->r->up_port;
  snprintf (c->host, sizeof c->host, "%s", L->r->up_host ? L->r->up_host : "");
  /* The SNI must name the route, not the upstream it is mapped to. */
  snprintf (c->sni_name, sizeof c->sni_name, "%s", L->r->name);
  snprintf (c->endpoint, sizeof c->endpoint, "%s:%d", L->r->name, L->r->port);
  c->next = R->pending;
  if (R->pending)
    R->pending->prev = c;
  R->pending = c;
  R->nconns++;
  return c;
}

/* The client side is there: read a CONNECT preamble, peek the SNI, or go
 * straight to the upstream. */
static void
begin (struct rconn *c)
{
  /* Past the cap a connection is refused, not left waiting: the agent
   * holding connections open must not run the relay out of fds, which
   * would stall every other connection too. */
  if (c->R->max_conns && c->R->nconns > c->R->max_conns)
    {
      char n[32];
      snprintf (n, sizeof n, "%zu", c->R->max_conns);
      fail (c, "conn-limit", "more than %s connections open", n);
      return;
    }
  c->sp.io[0].cb = on_client_early;
  if (ev_add (&c->R->loop, &c->sp.io[0], EPOLLIN | EPOLLRDHUP | EPOLLET) < 0)
    {
      fail (c, "error", "epoll: %s", strerror (errno));
      return;
    }
  c->state = c->r->connect && !c->has_target ? RC_PREAMBLE : c->R->sni_check ? RC_PEEK : RC_CONNECTING;
  if (c->state == RC_PREAMBLE)
    try_preamble (c);
  else if (c->state == RC_PEEK)
    try_peek (c);
  else
    start_connect (c);
}

static void
accept_one (struct listener *L, int fd)
{
  char b;
  /* The netproxy hook proves a relay answers by connecting and hanging up
   * at once: do not bother the upstream for that. */
  if (recv (fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0)
    {
      close (fd);
      return;
    }
  begin (conn_new (L, fd));
}

/* A handoff channel: take the client socket (exactly one TCP socket, or
 * the connection is refused and logged), then serve it like a stream. */
static void
try_handoff (struct rconn *c)
{
  char why[200], target[HANDOFF_MSG_MAX];
  int fd = -1;
  uint64_t idle = 0;
  int rc = handoff_recv (c->ctl.fd, &fd, &idle, target, sizeof target, why, sizeof why);
  if (rc == 0)
    return;
  if (rc < 0)
    {
      fprintf (stderr, "%s: handoff on %s refused: %s\n", prog, c->endpoint, why);
      fail (c, "handoff-refused", "%s", why);
      return;
    }
  /* The channel now only carries the report back; nothing more to read. */
  if (c->ctl_polled)
    epoll_ctl (c->R->loop.epfd, EPOLL_CTL_DEL, c->ctl.fd, NULL);
  if (idle && (!c->idle_ms || idle < c->idle_ms))
    c->idle_ms = idle;
  c->sp.io[0].fd = fd;
  c->sp.io0_shared = true;
  /* The target comes with the socket on CONNECT routes, and only there. */
  if (!c->r->connect && target[0])
    fail (c, "handoff-refused", "%s", "a target on a route that is not CONNECT");
  else if (c->r->connect && !target[0])
    fail (c, "handoff-refused", "%s", "no target on a CONNECT route");
  else if (!c->r->connect || set_target (c, target) == 0)
    begin (c);
}

static void
on_ctl (struct ev_io *io, uint32_t events)
{
  struct rconn *c = container_of (io, struct rconn, ctl);
  (void) events;
  if (c->state == RC_HANDOFF)
    try_handoff (c);
}

static void
accept_handoff (struct listener *L, int ctl)
{
  struct rconn *c = conn_new (L, -1);
  c->state = RC_HANDOFF;
  c->ctl.fd = ctl;
  c->ctl.cb = on_ctl;
  /* The server sends right after connecting: the message is usually
   * there already, and epoll is needed only when it is not. */
  try_handoff (c);
  if (c->state != RC_HANDOFF || c->sp.finished)
    return;
  if (ev_add (&c->R->loop, &c->ctl, EPOLLIN | EPOLLRDHUP) < 0)
    fail (c, "error", "epoll: %s", strerror (errno));
  else
    c->ctl_polled = true;
}

static void
on_accept (struct ev_io *io, uint32_t events)
{
  struct listener *L = container_of (io, struct listener, io);
  (void) events;
  for (int i = 0; i < 64 && io->fd >= 0; i++)
    {
      int fd = accept4 (io->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd >= 0)
        {
          if (L->handoff)
            accept_handoff (L, fd);
          else
            accept_one (L, fd);
          continue;
        }
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
        pause_accept (L->R);
      break;
    }
}

/* ---- sockets ---- */

/* A socket file left by a relay that died is removed; one that still
 * answers belongs to a live relay, and we refuse to steal it. */
static int
clear_stale (const char *path, const struct sockaddr_un *sa, int type, ar_error **err)
{
  struct stat st;
  if (lstat (path, &st) < 0)
    return errno == ENOENT ? 0 : ar_err (err, errno, "stat %s", path);
  if (!S_ISSOCK (st.st_mode))
    return ar_err (err, 0, "%s exists and is not a socket", path);
  cleanup_close int fd = socket (AF_UNIX, type | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return ar_err (err, errno, "socket");
  if (connect (fd, (const struct sockaddr *) sa, sizeof *sa) == 0)
    return ar_err (err, 0, "%s: another relay is listening there", path);
  if (unlink (path) < 0)
    return ar_err (err, errno, "remove stale socket %s", path);
  return 0;
}

static int
open_listener (struct relay *R, struct listener *L, uid_t uid, gid_t gid, ar_error **err)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  int type = L->handoff ? SOCK_SEQPACKET : SOCK_STREAM;
  L->path = xasprintf ("%s/%s:%d.sock%s", R->dir, L->r->name, L->r->port, L->handoff ? HANDOFF_SUFFIX : "");
  if (strlen (L->path) >= sizeof sa.sun_path)
    return ar_err (err, 0, "socket path too long: %s", L->path);
  strcpy (sa.sun_path, L->path);
  if (clear_stale (L->path, &sa, type, err) < 0)
    return -1;
  int fd = socket (AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return ar_err (err, errno, "socket");
  L->io.fd = fd;
  L->io.cb = on_accept;
  L->R = R;
  mode_t old = umask (0117); /* the socket file is born 0660 */
  int rc = bind (fd, (struct sockaddr *) &sa, sizeof sa);
  int e = errno;
  umask (old);
  if (rc < 0)
    return ar_err (err, e, "bind %s", L->path);
  if (lchown (L->path, uid, gid) < 0)
    return ar_err (err, errno, "chown %s", L->path);
  if (listen (fd, 4096) < 0)
    return ar_err (err, errno, "listen %s", L->path);
  if (ev_add (&R->loop, &L->io, EPOLLIN) < 0)
    return ar_err (err, errno, "epoll");
  return 0;
}

static void
close_listeners (struct relay *R)
{
  for (size_t i = 0; i < R->nL; i++)
    if (R->L[i].io.fd >= 0)
      {
        ev_close (&R->L[i].io);
        if (R->dirfd >= 0)
          unlinkat (R->dirfd, strrchr (R->L[i].path, '/') + 1, 0);
        else
          unlink (R->L[i].path);
      }
}

/* ---- signals, timeouts ---- */

static void
on_signal (struct ev_io *io, uint32_t events)
{
  struct relay *R = container_of (io, struct relay, sig);
  struct signalfd_siginfo si;
  (void) events;
  while (read (io->fd, &si, sizeof si) == sizeof si)
    if (!R->stopping)
      {
        /* Stop taking new work; open connections get a grace period. */
        R->stopping = true;
        R->stop_deadline = ev_now_ms () + (uint64_t) R->grace_s * 1000;
        close_listeners (R);
      }
}

/* Cut one connection whose time is up, or return when it is due. */
static uint64_t
expire_one (struct rconn *c, uint64_t now)
{
  if (c->state == RC_SPLICE)
    {
      if (!c->idle_ms)
        return UINT64_MAX;
      if (!sp_idle (&c->sp, c->idle_ms))
        return c->sp.last_active + c->idle_ms;
      c->outcome = "idle-timeout";
      snprintf (c->detail, sizeof c->detail, "no byte moved for %llu s", (unsigned long long) (c->idle_ms / 1000));
      sp_abort (&c->sp, ETIMEDOUT);
      return UINT64_MAX;
    }
  if (now < c->deadline)
    return c->deadline;
  if (c->state == RC_RESOLVING)
    fail (c, "upstream-timeout", "%s", "name resolution took too long");
  else if (c->state == RC_CONNECTING)
    fail (c, "upstream-timeout", "%s", "connect took too long");
  else if (c->state == RC_HANDOFF)
    fail (c, "handoff-refused", "%s", "no handoff in time");
  else
    fail (c, "client-timeout", "%s", "no request in time");
  return UINT64_MAX;
}

/* Expire connects, peeks and idle connections; return ms until the next
 * deadline or -1. The list is walked only when something may be due, so a
 * busy loop with many connections does not pay for it on every wake. */
static int
expire (struct relay *R)
{
  uint64_t now = R->loop.now = ev_now_ms (), next = R->next_scan;
  if (now >= R->next_scan)
    {
      next = UINT64_MAX;
      for (struct rconn *c = R->pending, *nx; c; c = nx)
        {
          nx = c->next;
          uint64_t t = expire_one (c, now);
          if (t < next)
            next = t;
        }
      R->next_scan = next;
    }
  if (R->paused)
    {
      if (now >= R->resume_at)
        resume_accept (R);
      else if (R->resume_at < next)
        next = R->resume_at;
    }
  if (R->stopping && R->stop_deadline < next)
    next = R->stop_deadline;
  return next == UINT64_MAX ? -1 : (int) (next > now ? next - now : 0);
}

/* ---- main ---- */

static void
usage (FILE *f)
{
  fprintf (f,
           "Usage: %s --dir DIR --allow NAME:PORT[=HOST:PORT|=connect]... [options]\n"
           "Host side of agentrun's network path: one Unix socket DIR/NAME:PORT.sock per\n"
           "allowed endpoint, each connection on it spliced to a TCP connection upstream,\n"
           "and DIR/NAME:PORT.sock.fd, on which agentrun-netproxy hands over the container's\n"
           "TCP sockets themselves (SCM_RIGHTS) to be spliced upstream the same way.\n\n"
           "  --dir DIR        where the sockets go (created if missing)\n"
           "  --allow ROUTE    NAME:PORT, optionally =UPSTREAM_HOST:UPSTREAM_PORT, or\n"
           "                   *.DOMAIN:PORT=connect for the netproxy CONNECT proxy\n"
           "  --config FILE    routes from JSON: {\"routes\":[{\"name\":..,\"port\":..,\"upstream\":..}]}\n"
           "  --audit FILE     append one JSON line per connection\n"
           "  --audit-fd FD    the same into a log already open (inherited FD)\n"
           "  --sni-check      refuse TLS whose server_name is not NAME, and non-TLS\n"
           "  --container ID   container id written in audit lines\n"
           "  --grace SECONDS  on SIGTERM, time open connections get to finish (5)\n"
           "  --connect-timeout SECONDS\n"
           "                   for resolving and connecting to the upstream (10)\n"
           "  --idle-timeout SECONDS\n"
           "                   cut a connection that moved no byte for so long (0: never)\n"
           "  --max-conns N    open connections at most, more are refused (0: no cap;\n"
           "                   default: what the fd limit holds, (RLIMIT_NOFILE - %d) / %d)\n",
           prog, FDS_SPARE, FDS_PER_CONN);
}

/* --audit-fd: the log as the sandbox opened it */
static const char *audit_fd_ref;

static int
parse_args (struct relay *R, int argc, char **argv, const char **audit, const char **cid, ar_error **err)
{
  static const struct option opts[] = {
    { "dir", required_argument, NULL, 'd' },
    { "allow", required_argument, NULL, 'a' },
    { "config", required_argument, NULL, 'c' },
    { "audit", required_argument, NULL, 'A' },
    { "sni-check", no_argument, NULL, 's' },
    { "grace", required_argument, NULL, 'g' },
    { "container", required_argument, NULL, 'i' },
    { "help", no_argument, NULL, 'h' },
    { "connect-timeout", required_argument, NULL, 'T' },
    { "idle-timeout", required_argument, NULL, 'I' },
    { "max-conns", required_argument, NULL, 'M' },
    { "audit-fd", required_argument, NULL, 'F' },
    { NULL, 0, NULL, 0 },
  };
  int o;
  R->grace_s = 5;
  R->connect_ms = 10000;
  R->max_conns = SIZE_MAX; /* not given: default_max_conns */
  R->next_scan = UINT64_MAX;
  np_list_options_if_asked (argc, argv, opts);
  while ((o = getopt_long (argc, argv, "", opts, NULL)) != -1)
    switch (o)
      {
      case 'd': R->dir = optarg; break;
      case 'a':
        if (routes_add_arg (&R->routes, ROUTE_RELAY, optarg, err) < 0)
          return -1;
        break;
      case 'c':
        if (routes_load_json (&R->routes, ROUTE_RELAY, optarg, err) < 0)
          return -1;
        break;
      case 'A': *audit = optarg; break;
      case 'F': audit_fd_ref = optarg; break;
      case 's': R->sni_check = true; break;
      case 'g': R->grace_s = atoi (optarg); break;
      case 'i': *cid = optarg; break;
      case 'T':
        if (np_parse_seconds (optarg, &R->connect_ms) < 0 || R->connect_ms == 0)
          return ar_err (err, 0, "--connect-timeout: expected seconds (1-86400), got '%s'", optarg);
        break;
      case 'I':
        if (np_parse_seconds (optarg, &R->idle_ms) < 0)
          return ar_err (err, 0, "--idle-timeout: expected seconds (0-86400), got '%s'", optarg);
        break;
      case 'M':
        {
          char *end;
          errno = 0;
          unsigned long v = strtoul (optarg, &end, 10);
          if (errno || end == optarg || *end || optarg[0] == '-' || v > 1000000)
            return ar_err (err, 0, "--max-conns: expected a number of connections (0-1000000), got '%s'", optarg);
          R->max_conns = v;
          break;
        }
      case 'h': usage (stdout); exit (0);
      default: usage (stderr); exit (2);
      }
  if (optind < argc)
    return ar_err (err, 0, "unexpected argument '%s'", argv[optind]);
  if (!R->dir)
    return ar_err (err, 0, "--dir is required");
  if (R->routes.n == 0)
    return ar_err (err, 0, "no route: give --allow or --config");
  return 0;
}

/* After ev_raise_nofile: as many connections as the fd limit holds. */
static size_t
default_max_conns (void)
{
  struct rlimit rl;
  if (getrlimit (RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
    return 4096;
  size_t n = rl.rlim_cur > FDS_SPARE ? (size_t) (rl.rlim_cur - FDS_SPARE) / FDS_PER_CONN : 0;
  return n < MIN_MAX_CONNS ? MIN_MAX_CONNS : n;
}

static int
setup (struct relay *R, const char *audit, const char *cid, ar_error **err)
{
  /* The sockets belong to whom we become: the sudo caller, nobody for
   * other root, else ourselves; the netproxy server drops to the same. */
  struct np_ids ids;
  np_ids_default (&ids);
  uid_t uid = ids.uid;
  gid_t gid = ids.gid;
  if (R->max_conns == SIZE_MAX)
    R->max_conns = default_max_conns ();
  if (audit_open (&R->audit, audit_fd_ref ? NULL : audit, "relay", cid, err) < 0
      || (audit_fd_ref && audit_use_fd (&R->audit, audit_fd_ref, err) < 0) || ev_init (&R->loop, err) < 0
      || resolver_init (&R->res, &R->loop, resolved, err) < 0)
    return -1;
  if (mkdir (R->dir, 0750) == 0)
    {
      if (lchown (R->dir, uid, gid) < 0)
        return ar_err (err, errno, "chown %s", R->dir);
    }
  else if (errno != EEXIST)
    return ar_err (err, errno, "mkdir %s", R->dir);
  R->dirfd = open (R->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (R->dirfd < 0)
    return ar_err (err, errno, "open %s", R->dir);
  sigset_t ss;
  sigemptyset (&ss);
  sigaddset (&ss, SIGTERM);
  sigaddset (&ss, SIGINT);
  sigprocmask (SIG_BLOCK, &ss, NULL);
  R->sig.fd = signalfd (-1, &ss, SFD_NONBLOCK | SFD_CLOEXEC);
  R->sig.cb = on_signal;
  if (R->sig.fd < 0 || ev_add (&R->loop, &R->sig, EPOLLIN) < 0)
    return ar_err (err, errno, "signalfd");
  /* Each route: its handoff socket, then its stream socket, so who waits
   * for the stream socket to appear finds both. */
  R->L = xmalloc0 (2 * R->routes.n * sizeof *R->L);
  for (size_t i = 0; i < R->routes.n; i++)
    for (int h = 1; h >= 0; h--)
      {
        struct listener *L = &R->L[R->nL];
        L->r = &R->routes.v[i];
        L->handoff = h;
        if (open_listener (R, L, uid, gid, err) < 0)
          return -1;
        R->nL++;
      }
  /* Everything that needed privilege is open: the upstream connects,
   * the splices and the audit lines need none. Before the resolver's
   * threads start, so they are born confined. */
  return np_confine (&ids, NP_ROLE_RELAY, err);
}

/* What lives as long as the process, freed so a leak checker sees none. */
static void
relay_end (struct relay *R)
{
  close_listeners (R);
  for (size_t i = 0; i < R->nL; i++)
    free (R->L[i].path);
  free (R->L);
  routes_free (&R->routes);
  ev_fini (&R->loop);
  if (R->dirfd >= 0)
    close (R->dirfd);
}

int
main (int argc, char **argv)
{
  struct relay R = { .dirfd = -1, .loop.epfd = -1 };
  const char *audit = NULL, *cid = NULL;
  cleanup_error ar_error *err = NULL;

  signal (SIGPIPE, SIG_IGN);
  ev_raise_nofile ();
  if (parse_args (&R, argc, argv, &audit, &cid, &err) < 0 || setup (&R, audit, cid, &err) < 0)
    {
      fprintf (stderr, "%s: %s\n", prog, err->msg);
      relay_end (&R);
      return 1;
    }
  if (R.max_conns)
    fprintf (stderr, "%s: listening on %zu socket(s) in %s, at most %zu connections\n", prog, R.nL, R.dir, R.max_conns);
  else
    fprintf (stderr, "%s: listening on %zu socket(s) in %s\n", prog, R.nL, R.dir);
  for (;;)
    {
      int timeout = expire (&R);
      if (R.stopping && (R.nconns == 0 || ev_now_ms () >= R.stop_deadline))
        break;
      if (ev_run_once (&R.loop, timeout) < 0)
        {
          fprintf (stderr, "%s: epoll_wait: %s\n", prog, strerror (errno));
          close_listeners (&R);
          return 1;
        }
    }
  if (R.nconns)
    fprintf (stderr, "%s: grace period over, cutting %zu connection(s)\n", prog, R.nconns);
  relay_end (&R);
  return 0;
}
