#include "config.h"
#include "server.h"
#include "ask.h"
#include "dns.h"
#include "handoff.h"
#include "splice.h"
#include "util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>

#define ACCEPT_PAUSE_MS 100
#define DNS_TCP_MAX 64
#define DNS_TCP_IDLE_MS 10000
#define PX_HDR_MAX 4096
#define PX_TIMEOUT_MS 10000

/* ---- listening sockets ---- */

static int
listen_on (const char *addr, int port, int type, ar_error **err)
{
  struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port) };
  if (inet_pton (AF_INET, addr, &sa.sin_addr) != 1)
    return ar_err (err, 0, "bad IPv4 address '%s'", addr);
  int fd = socket (AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return ar_err (err, errno, "socket");
  int one = 1;
  setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind (fd, (struct sockaddr *) &sa, sizeof sa) < 0)
    {
      int e = errno;
      close (fd);
      return ar_err (err, e, "bind %s:%d%s", addr, port, type == SOCK_DGRAM ? "/udp" : "");
    }
  if (type == SOCK_STREAM && listen (fd, 4096) < 0)
    {
      int e = errno;
      close (fd);
      return ar_err (err, e, "listen %s:%d", addr, port);
    }
  return fd;
}

static int
add_listener (struct np_server *S, const char *addr, int port, enum np_kind k, struct route *r, ar_error **err)
{
  int fd = listen_on (addr, port, SOCK_STREAM, err);
  if (fd < 0)
    return -1;
  struct np_listener *L = &S->L[S->nL++];
  L->io.fd = fd;
  L->S = S;
  L->r = r;
  L->kind = k;
  return 0;
}

int
server_bind (struct np_server *S, const struct np_config *cfg, ar_error **err)
{
  memset (S, 0, sizeof *S);
  S->cfg = cfg;
  S->dns_udp.fd = S->pidfd.fd = S->audit.fd = -1;
  /* ask mode adds listeners while running: room for them now, since
   * epoll holds pointers into this array */
  S->L = xmalloc0 ((cfg->routes.n + 2 + (cfg->ask_socket ? NP_ASK_MAX : 0)) * sizeof *S->L);
  for (size_t i = 0; i < cfg->routes.n; i++)
    {
      struct route *r = &cfg->routes.v[i];
      if (!r->connect && add_listener (S, r->addr, r->port, NP_ROUTE, r, err) < 0)
        return -1;
    }
  if (cfg->dns)
    {
      if (add_listener (S, cfg->dns_addr, 53, NP_DNS_TCP, NULL, err) < 0)
        return -1;
      S->dns_udp.fd = listen_on (cfg->dns_addr, 53, SOCK_DGRAM, err);
      if (S->dns_udp.fd < 0)
        return -1;
    }
  if (cfg->connect_proxy && add_listener (S, cfg->connect_addr, cfg->connect_port, NP_CONNECT, NULL, err) < 0)
    return -1;
  if (audit_open (&S->audit, cfg->audit_fd_ref ? NULL : cfg->audit_path, "netproxy", cfg->container, err) < 0)
    return -1;
  return cfg->audit_fd_ref ? audit_use_fd (&S->audit, cfg->audit_fd_ref, err) : 0;
}

size_t
server_fds (const struct np_server *S, int *fds, size_t cap)
{
  size_t n = 0;
  for (size_t i = 0; i < S->nL && n < cap; i++)
    fds[n++] = S->L[i].io.fd;
  if (S->dns_udp.fd >= 0 && n < cap)
    fds[n++] = S->dns_udp.fd;
  if (S->audit.fd >= 0 && n < cap)
    fds[n++] = S->audit.fd;
  return n;
}

/* ---- route connections ---- */

struct np_conn {
  struct sp_conn sp;
  struct np_server *S;
  char endpoint[300];
  uint64_t t0;
  const char *outcome; /* set when we cut it (idle-timeout) */
  struct np_conn *prev, *next;
};

static void resume_accept (struct np_server *S);

static void
log_conn (struct np_server *S, const char *ep, const char *outcome, const char *detail, uint64_t up, uint64_t down,
          uint64_t t0)
{
  struct audit_conn a = {
    .endpoint = ep, .outcome = outcome, .detail = detail, .bytes_up = up, .bytes_down = down, .duration_ms = ev_now_ms () - t0
  };
  audit_conn (&S->audit, &a);
}

static void
conn_done (struct sp_conn *sp, int err)
{
  struct np_conn *c = container_of (sp, struct np_conn, sp);
  struct np_server *S = c->S;
  if (c->outcome)
    log_conn (S, c->endpoint, c->outcome, NULL, sp->d[0].bytes, sp->d[1].bytes, c->t0);
  else
    log_conn (S, c->endpoint, err ? "error" : "ok", err ? strerror (err) : NULL, sp->d[0].bytes, sp->d[1].bytes, c->t0);
  if (c->prev)
    c->prev->next = c->next;
  else
    S->conns = c->next;
  if (c->next)
    c->next->prev = c->prev;
  S->nconns--;
  ev_defer_free (&S->loop, c);
  if (S->paused)
    resume_accept (S);
}

/* A new spliced connection: on the list the idle timer walks. */
static struct np_conn *
conn_new (struct np_server *S, int client, int relay, uint64_t t0, const char *ep)
{
  struct np_conn *c = xmalloc0 (sizeof *c);
  sp_init (&c->sp, &S->loop, client, conn_done);
  c->sp.io[1].fd = relay;
  c->S = S;
  c->t0 = t0;
  snprintf (c->endpoint, sizeof c->endpoint, "%s", ep);
  c->next = S->conns;
  if (c->next)
    c->next->prev = c;
  S->conns = c;
  S->nconns++;
  if (S->cfg->idle_timeout_ms && ev_now_ms () + S->cfg->idle_timeout_ms < S->next_scan)
    S->next_scan = ev_now_ms () + S->cfg->idle_timeout_ms;
  return c;
}

/* Refuse a client at once with a reset, so it fails fast rather than
 * seeing a clean but empty connection. */
static void
reset_close (int fd)
{
  struct linger lg = { .l_onoff = 1, .l_linger = 0 };
  setsockopt (fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  close (fd);
}

/* A fresh connection to a relay's stream socket. */
static int
relay_connect (const char *path)
{
  return np_unix_connect (path, SOCK_STREAM);
}

/* A handed-off connection: the server keeps only the channel, on which
 * the relay reports bytes and outcome when the connection ends. */
struct np_handoff {
  struct ev_io io;
  struct np_server *S;
  char endpoint[300];
  uint64_t t0;
};

static void
on_report (struct ev_io *io, uint32_t events)
{
  struct np_handoff *h = container_of (io, struct np_handoff, io);
  struct np_server *S = h->S;
  char buf[HANDOFF_REPORT_MAX];
  uint64_t up, down;
  const char *outcome, *detail;
  (void) events;
  ssize_t n = recv (io->fd, buf, sizeof buf - 1, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return;
  if (n > 0)
    buf[n] = '\0';
  if (n > 0 && handoff_parse_report (buf, &up, &down, &outcome, &detail) == 0)
    log_conn (S, h->endpoint, outcome, detail[0] ? detail : NULL, up, down, h->t0);
  else
    log_conn (S, h->endpoint, "relay-down",
              n < 0    ? strerror (errno)
              : n == 0 ? "the relay ended the connection without a report"
                       : "bad report from the relay",
              0, 0, h->t0);
  ev_close (io);
  S->nconns--;
  ev_defer_free (&S->loop, h);
  if (S->paused)
    resume_accept (S);
}

static bool
relay_down_errno (int e)
{
  return e == ENOENT || e == ECONNREFUSED || e == EAGAIN || e == EPIPE || e == ECONNRESET;
}

/* The route's handoff channel (handoff.h), or -1 with errno; ENOENT when
 * the relay has no handoff socket: the caller splices to the stream one. */
static int
handoff_open (const struct route *r)
{
  char path[sizeof ((struct sockaddr_un *) 0)->sun_path];
  if (handoff_path (r->sock, path, sizeof path) < 0)
    {
      errno = ENOENT;
      return -1;
    }
  return np_unix_connect (path, SOCK_SEQPACKET);
}

/* Pass the client socket over ctl, so the relay splices it to the
 * upstream and this process leaves the data path; keep ctl for the
 * relay's report, from which the audit line is written. fd is gone
 * either way. */
static void
handoff_give (struct np_server *S, int ctl, int fd, const char *target, const char *ep, uint64_t t0)
{
  if (handoff_send (ctl, fd, S->cfg->idle_timeout_ms, target) < 0)
    {
      int e = errno;
      close (ctl);
      reset_close (fd);
      log_conn (S, ep, relay_down_errno (e) ? "relay-down" : "error", strerror (e), 0, 0, t0);
      return;
    }
  close (fd);
  struct np_handoff *h = xmalloc0 (sizeof *h);
  h->io.fd = ctl;
  h->io.cb = on_report;
  h->S = S;
  h->t0 = t0;
  snprintf (h->endpoint, sizeof h->endpoint, "%s", ep);
  S->nconns++;
  if (ev_add (&S->loop, &h->io, EPOLLIN | EPOLLRDHUP) < 0)
    {
      /* Handed off all the same: only this audit line is lost. */
      log_conn (S, ep, "handed-off", strerror (errno), 0, 0, t0);
      ev_close (&h->io);
      S->nconns--;
      free (h);
    }
}

/* 1 when done with fd (handed off, or refused and logged), 0 when the
 * relay has no handoff socket. */
static int
handoff_route (struct np_server *S, const struct route *r, int fd, const char *target, const char *ep, uint64_t t0)
{
  int ctl = handoff_open (r);
  if (ctl < 0 && errno == ENOENT)
    return 0;
  if (ctl < 0)
    {
      int e = errno;
      reset_close (fd);
      log_conn (S, ep, relay_down_errno (e) ? "relay-down" : "error", strerror (e), 0, 0, t0);
      return 1;
    }
  handoff_give (S, ctl, fd, target, ep, t0);
  return 1;
}

static void
accept_route (struct np_listener *L, int fd)
{
  struct np_server *S = L->S;
  char ep[300];
  uint64_t t0 = ev_now_ms ();
  snprintf (ep, sizeof ep, "%s:%d", L->r->name, L->r->port);
  /* a name allowed at run time through a wildcard goes to the wildcard's
   * relay, which is told (and checks again) which name it is for */
  const char *target = L->r->connect ? ep : NULL;
  if (handoff_route (S, L->r, fd, target, ep, t0))
    return;
  int up = relay_connect (L->r->sock);
  char pre[310];
  int pl = target ? snprintf (pre, sizeof pre, "%s\n", target) : 0;
  if (up >= 0 && pl > 0 && send (up, pre, (size_t) pl, MSG_DONTWAIT | MSG_NOSIGNAL) != pl)
    {
      close (up);
      up = -1;
      errno = EPIPE;
    }
  if (up < 0)
    {
      int e = errno;
      reset_close (fd);
      log_conn (S, ep, e == ENOENT || e == ECONNREFUSED || e == EAGAIN || e == EPIPE ? "relay-down" : "error",
                strerror (e), 0, 0, t0);
      return;
    }
  struct np_conn *c = conn_new (S, fd, up, t0, ep);
  if (sp_start (&c->sp) < 0)
    sp_abort (&c->sp, errno);
}

/* ---- DNS stub ---- */

static int
dns_lookup (void *ctx, const char *name, struct in_addr *addr)
{
  const struct np_server *S = ctx;
  const struct np_config *cfg = S->cfg;
  if (S->ask && ask_lookup (S->ask, name, addr))
    return 1;
  for (size_t i = 0; i < cfg->routes.n; i++)
    {
      const struct route *r = &cfg->routes.v[i];
      if (!r->connect && strcasecmp (r->name, name) == 0 && inet_pton (AF_INET, r->addr, addr) == 1)
        return 1;
    }
  return 0;
}

ssize_t
server_dns_probe (struct np_server *S, const uint8_t *q, size_t qlen, uint8_t *out, size_t cap,
                  struct dns_query_info *info)
{
  return dns_answer (q, qlen, out, cap, dns_lookup, S, info);
}

ssize_t
server_dns_reply (struct np_server *S, const uint8_t *q, size_t qlen, uint8_t *out, size_t cap)
{
  struct dns_query_info info;
  ssize_t n = dns_answer (q, qlen, out, cap, dns_lookup, S, &info);
  if (n > 0 && info.rcode == 3)
    {
      char tb[8];
      audit_dns (&S->audit, info.name, dns_type_name (info.qtype, tb));
    }
  return n;
}

static void
on_dns_udp (struct ev_io *io, uint32_t events)
{
  struct np_server *S = container_of (io, struct np_server, dns_udp);
  uint8_t q[1500], out[1500];
  (void) events;
  for (int i = 0; i < 64; i++)
    {
      struct sockaddr_storage from;
      socklen_t fl = sizeof from;
      ssize_t n = recvfrom (io->fd, q, sizeof q, 0, (struct sockaddr *) &from, &fl);
      if (n < 0)
        return;
      struct ask_to to = { .fl = fl };
      memcpy (&to.from, &from, fl);
      if (S->ask && ask_hold (S, q, (size_t) n, &to))
        continue;
      /* A plain resolver takes 512 bytes over UDP; ours never exceed it. */
      ssize_t m = server_dns_reply (S, q, (size_t) n, out, 512);
      if (m > 0)
        sendto (io->fd, out, (size_t) m, MSG_DONTWAIT, (struct sockaddr *) &from, fl);
    }
}

struct dns_tcp {
  struct ev_io io;
  struct np_server *S;
  uint8_t buf[2 + 1024];
  size_t len;
  uint64_t last;
  uint64_t id;
  unsigned held; /* queries held in ask mode: not idle */
  struct dns_tcp *prev, *next;
};

static void
dns_tcp_close (struct dns_tcp *d)
{
  struct np_server *S = d->S;
  ev_close (&d->io);
  if (d->prev)
    d->prev->next = d->next;
  else
    S->dns_conns = d->next;
  if (d->next)
    d->next->prev = d->prev;
  S->n_dns--;
  ev_defer_free (&S->loop, d);
}

/* DNS over TCP: each message has a 2-byte length prefix; several may
 * follow on one connection. Answers are small enough to never block. */
static void
on_dns_tcp (struct ev_io *io, uint32_t events)
{
  struct dns_tcp *d = container_of (io, struct dns_tcp, io);
  (void) events;
  for (;;)
    {
      ssize_t n = recv (io->fd, d->buf + d->len, sizeof d->buf - d->len, MSG_DONTWAIT);
      if (n < 0 && errno == EAGAIN)
        return;
      if (n <= 0)
        {
          dns_tcp_close (d);
          return;
        }
      d->len += (size_t) n;
      d->last = ev_now_ms ();
      while (d->len >= 2)
        {
          size_t mlen = (size_t) d->buf[0] << 8 | d->buf[1];
          if (mlen + 2 > sizeof d->buf)
            {
              dns_tcp_close (d);
              return;
            }
          if (d->len < mlen + 2)
            break;
          uint8_t out[2 + 1024];
          struct ask_to to = { .tcp_id = d->id };
          ssize_t m = -1;
          if (d->S->ask && ask_hold (d->S, d->buf + 2, mlen, &to))
            d->held++;
          else
            m = server_dns_reply (d->S, d->buf + 2, mlen, out + 2, sizeof out - 2);
          if (m > 0)
            {
              out[0] = (uint8_t) (m >> 8);
              out[1] = (uint8_t) m;
              if (send (io->fd, out, (size_t) m + 2, MSG_DONTWAIT | MSG_NOSIGNAL) != m + 2)
                {
                  dns_tcp_close (d);
                  return;
                }
            }
          memmove (d->buf, d->buf + mlen + 2, d->len - mlen - 2);
          d->len -= mlen + 2;
        }
    }
}

static struct dns_tcp *
dns_tcp_find (struct np_server *S, uint64_t id)
{
  for (struct dns_tcp *d = S->dns_conns; d; d = d->next)
    if (d->id == id)
      return d;
  return NULL;
}

void
server_dns_tcp_release (struct np_server *S, uint64_t id)
{
  struct dns_tcp *d = dns_tcp_find (S, id);
  if (d && d->held)
    d->held--;
}

void
server_dns_answer_held (struct np_server *S, const struct ask_to *to, const uint8_t *a, size_t len)
{
  if (to->fl)
    {
      if (S->dns_udp.fd >= 0)
        sendto (S->dns_udp.fd, a, len, MSG_DONTWAIT, (const struct sockaddr *) &to->from, to->fl);
      return;
    }
  struct dns_tcp *d = dns_tcp_find (S, to->tcp_id);
  uint8_t out[2 + 1024];
  if (!d || len > sizeof out - 2)
    return;
  if (d->held)
    d->held--;
  d->last = ev_now_ms ();
  out[0] = (uint8_t) (len >> 8);
  out[1] = (uint8_t) len;
  memcpy (out + 2, a, len);
  if (send (d->io.fd, out, len + 2, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t) len + 2)
    dns_tcp_close (d);
}

static void
accept_dns_tcp (struct np_server *S, int fd)
{
  if (S->n_dns >= DNS_TCP_MAX)
    {
      close (fd);
      return;
    }
  struct dns_tcp *d = xmalloc0 (sizeof *d);
  d->io.fd = fd;
  d->io.cb = on_dns_tcp;
  d->S = S;
  d->last = ev_now_ms ();
  d->id = ++S->dns_ids;
  d->next = S->dns_conns;
  if (d->next)
    d->next->prev = d;
  S->dns_conns = d;
  S->n_dns++;
  if (ev_add (&S->loop, &d->io, EPOLLIN) < 0)
    dns_tcp_close (d);
}

/* ---- HTTP CONNECT proxy ---- */

struct px_conn {
  struct ev_io io;
  struct np_server *S;
  char buf[PX_HDR_MAX + 1];
  size_t len;
  uint64_t t0;
  struct px_conn *prev, *next;
};

static void
px_unlink (struct px_conn *p)
{
  if (p->prev)
    p->prev->next = p->next;
  else
    p->S->px_pending = p->next;
  if (p->next)
    p->next->prev = p->prev;
  ev_defer_free (&p->S->loop, p);
}

static void
px_refuse (struct px_conn *p, int code, const char *reason, const char *body, const char *ep, const char *outcome)
{
  char resp[1024];
  int n = snprintf (resp, sizeof resp,
                    "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
                    "Connection: close\r\n\r\n%s",
                    code, reason, strlen (body), body);
  if (n > 0 && (size_t) n < sizeof resp)
    send (p->io.fd, resp, (size_t) n, MSG_DONTWAIT | MSG_NOSIGNAL);
  log_conn (p->S, ep, outcome, body, 0, 0, p->t0);
  ev_close (&p->io);
  px_unlink (p);
}

/* Wildcard routes need the relay told the target ("HOST:PORT\n");
 * an exact route's socket already names its upstream. */
static const struct route *
px_route (const struct np_config *cfg, const char *host, int port)
{
  /* a deny wins over every allow, wildcards included */
  for (size_t i = 0; i < cfg->n_deny; i++)
    if (ar_host_name_match (cfg->deny[i], host))
      return NULL;
  for (size_t i = 0; i < cfg->routes.n; i++)
    {
      const struct route *r = &cfg->routes.v[i];
      if (r->port == port && ar_host_name_match (r->name, host))
        return r;
    }
  return NULL;
}

static const char px_ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";

/* Hand a CONNECT client over to the relay, its target (on wildcard routes)
 * in the handoff header. 1 once done with the client, 0 when the relay
 * has no handoff socket, -1 with errno when it is down. */
static int
px_handoff (struct px_conn *p, const struct route *r, const char *host, int port, const char *ep)
{
  char target[300];
  int ctl = handoff_open (r);
  if (ctl < 0)
    return errno == ENOENT ? 0 : -1;
  if (send (p->io.fd, px_ok, sizeof px_ok - 1, MSG_DONTWAIT | MSG_NOSIGNAL) != sizeof px_ok - 1)
    {
      close (ctl);
      px_refuse (p, 502, "Bad Gateway", "client write failed\n", ep, "error");
      return 1;
    }
  snprintf (target, sizeof target, "%s:%d", host, port);
  epoll_ctl (p->S->loop.epfd, EPOLL_CTL_DEL, p->io.fd, NULL);
  int fd = p->io.fd;
  uint64_t t0 = p->t0;
  struct np_server *S = p->S;
  p->io.fd = -1;
  px_unlink (p);
  handoff_give (S, ctl, fd, r->connect ? target : NULL, ep, t0);
  return 1;
}

static void
px_request (struct px_conn *p, char *hdr_end)
{
  struct np_server *S = p->S;
  char method[16], target[300], body[512], ep[300];
  cleanup_free char *host = NULL;
  int port;

  *hdr_end = '\0';
  if (sscanf (p->buf, "%15s %299s HTTP/1.%*c", method, target) != 2)
    return px_refuse (p, 400, "Bad Request", "malformed request line\n", "?", "connect-bad");
  snprintf (ep, sizeof ep, "%s", target);
  if (strcmp (method, "CONNECT") != 0)
    return px_refuse (p, 405, "Method Not Allowed", "only CONNECT is supported here\n", ep, "connect-bad");
  const struct route *r = NULL;
  if (route_split_hostport (target, &host, &port) == 0 && ar_host_name_ok (host, false))
    r = px_route (S->cfg, host, port);
  if (!r)
    {
      snprintf (body, sizeof body, "%.300s is not on the allowlist of this sandbox\n", target);
      if (S->cfg->ask_socket && host && ar_host_name_ok (host, false))
        ask_tell_blocked (S, host, port);
      return px_refuse (p, 403, "Forbidden", body, ep, "connect-denied");
    }
  char pre[300];
  int pl = r->connect ? snprintf (pre, sizeof pre, "%s:%d\n", host, port) : 0;
  size_t extra = p->len - (size_t) (hdr_end + 4 - p->buf);
  /* A client that waits for the 200 (they all should) has sent nothing
   * more: its socket goes to the relay. One that did not has bytes we
   * already read, which only the stream can carry. */
  int rc = extra ? 0 : px_handoff (p, r, host, port, ep);
  if (rc > 0)
    return;
  int up = rc < 0 ? -1 : relay_connect (r->sock);
  if (up < 0)
    {
      snprintf (body, sizeof body, "relay for %.300s is down: %s\n", target, strerror (errno));
      return px_refuse (p, 502, "Bad Gateway", body, ep, "relay-down");
    }
  /* Preamble and any bytes the client sent past the headers go to the
   * relay now; a fresh Unix socket has room for them. */
  if ((pl > 0 && send (up, pre, (size_t) pl, MSG_DONTWAIT | MSG_NOSIGNAL) != pl)
      || (extra && send (up, hdr_end + 4, extra, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t) extra)
      || send (p->io.fd, px_ok, sizeof px_ok - 1, MSG_DONTWAIT | MSG_NOSIGNAL) != sizeof px_ok - 1)
    {
      close (up);
      return px_refuse (p, 502, "Bad Gateway", "relay write failed\n", ep, "error");
    }
  /* Hand the client fd over to a spliced connection. */
  epoll_ctl (S->loop.epfd, EPOLL_CTL_DEL, p->io.fd, NULL);
  struct np_conn *c = conn_new (S, p->io.fd, up, p->t0, ep);
  p->io.fd = -1;
  px_unlink (p);
  if (sp_start (&c->sp) < 0)
    sp_abort (&c->sp, errno);
}

static void
on_px (struct ev_io *io, uint32_t events)
{
  struct px_conn *p = container_of (io, struct px_conn, io);
  (void) events;
  ssize_t n = recv (io->fd, p->buf + p->len, PX_HDR_MAX - p->len, MSG_DONTWAIT);
  if (n < 0 && errno == EAGAIN)
    return;
  if (n <= 0)
    {
      ev_close (io);
      px_unlink (p);
      return;
    }
  p->len += (size_t) n;
  p->buf[p->len] = '\0';
  char *end = strstr (p->buf, "\r\n\r\n");
  if (end)
    px_request (p, end);
  else if (p->len == PX_HDR_MAX)
    px_refuse (p, 431, "Request Header Fields Too Large", "request too large\n", "?", "connect-bad");
}

static void
accept_px (struct np_server *S, int fd)
{
  struct px_conn *p = xmalloc0 (sizeof *p);
  p->io.fd = fd;
  p->io.cb = on_px;
  p->S = S;
  p->t0 = ev_now_ms ();
  p->next = S->px_pending;
  if (p->next)
    p->next->prev = p;
  S->px_pending = p;
  if (ev_add (&S->loop, &p->io, EPOLLIN) < 0)
    {
      ev_close (&p->io);
      px_unlink (p);
    }
}

/* ---- accept, timers, run ---- */

static void
pause_accept (struct np_server *S)
{
  /* Out of fds: stop polling the listeners (they would fire again at
   * once) until a connection ends or a short pause has passed. */
  for (size_t i = 0; i < S->nL; i++)
    ev_mod (&S->loop, &S->L[i].io, 0);
  S->paused = true;
  S->resume_at = ev_now_ms () + ACCEPT_PAUSE_MS;
}

static void
resume_accept (struct np_server *S)
{
  for (size_t i = 0; i < S->nL; i++)
    ev_mod (&S->loop, &S->L[i].io, EPOLLIN);
  S->paused = false;
}

static void
on_accept (struct ev_io *io, uint32_t events)
{
  struct np_listener *L = container_of (io, struct np_listener, io);
  (void) events;
  for (int i = 0; i < 64; i++)
    {
      int fd = accept4 (io->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0)
        {
          if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
            pause_accept (L->S);
          return;
        }
      int one = 1;
      setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      if (L->kind == NP_ROUTE)
        accept_route (L, fd);
      else if (L->kind == NP_DNS_TCP)
        accept_dns_tcp (L->S, fd);
      else
        accept_px (L->S, fd);
    }
}

int
server_add_route (struct np_server *S, struct route *r, ar_error **err)
{
  if (add_listener (S, r->addr, r->port, NP_ROUTE, r, err) < 0)
    return -1;
  struct np_listener *L = &S->L[S->nL - 1];
  L->io.cb = on_accept;
  if (ev_add (&S->loop, &L->io, EPOLLIN) < 0 || (S->paused && ev_mod (&S->loop, &L->io, 0) < 0))
    {
      int e = errno;
      ev_close (&L->io);
      S->nL--;
      return ar_err (err, e, "epoll_ctl for %s:%d", r->addr, r->port);
    }
  return 0;
}

static void
on_pidfd (struct ev_io *io, uint32_t events)
{
  struct np_server *S = container_of (io, struct np_server, pidfd);
  (void) events;
  S->done = true;
}

/* --idle-timeout: cut spliced connections that moved no byte for so
 * long. The list is walked only once something may be due. Returns the
 * ms until the next one may be, or -1. */
static int
expire_idle (struct np_server *S, uint64_t now)
{
  uint64_t idle = S->cfg->idle_timeout_ms;
  if (!idle || S->next_scan == UINT64_MAX)
    return -1;
  if (now >= S->next_scan)
    {
      S->next_scan = UINT64_MAX;
      for (struct np_conn *c = S->conns, *nx; c; c = nx)
        {
          nx = c->next;
          if (sp_idle (&c->sp, idle))
            {
              c->outcome = "idle-timeout";
              sp_abort (&c->sp, ETIMEDOUT);
            }
          else if (c->sp.last_active + idle < S->next_scan)
            S->next_scan = c->sp.last_active + idle;
        }
      if (S->next_scan == UINT64_MAX)
        return -1;
    }
  return (int) (S->next_scan > now ? S->next_scan - now : 0);
}

/* Expire idle DNS connections, slow CONNECT requests and idle spliced
 * connections; return the epoll timeout. */
static int
expire (struct np_server *S)
{
  uint64_t now = S->loop.now = ev_now_ms ();
  int timeout = expire_idle (S, now);
  for (struct dns_tcp *d = S->dns_conns, *nx; d; d = nx)
    {
      nx = d->next;
      if (!d->held && now - d->last >= DNS_TCP_IDLE_MS)
        dns_tcp_close (d);
      else if (timeout < 0 || timeout > 1000)
        timeout = 1000;
    }
  for (struct px_conn *p = S->px_pending, *nx; p; p = nx)
    {
      nx = p->next;
      if (now - p->t0 >= PX_TIMEOUT_MS)
        px_refuse (p, 408, "Request Timeout", "no request in time\n", "?", "connect-bad");
      else if (timeout < 0 || timeout > 1000)
        timeout = 1000;
    }
  if (S->paused)
    {
      if (now >= S->resume_at)
        resume_accept (S);
      else if (timeout < 0 || timeout > (int) (S->resume_at - now))
        timeout = (int) (S->resume_at - now);
    }
  return timeout;
}

int
server_run (struct np_server *S, int pidfd, int ready_fd, ar_error **err)
{
  if (ev_init (&S->loop, err) < 0)
    return -1;
  S->next_scan = UINT64_MAX;
  if (S->cfg->ask_socket)
    ask_init (S);
  for (size_t i = 0; i < S->nL; i++)
    {
      S->L[i].io.cb = on_accept;
      if (ev_add (&S->loop, &S->L[i].io, EPOLLIN) < 0)
        return ar_err (err, errno, "epoll_ctl");
    }
  S->dns_udp.cb = on_dns_udp;
  if (S->dns_udp.fd >= 0 && ev_add (&S->loop, &S->dns_udp, EPOLLIN) < 0)
    return ar_err (err, errno, "epoll_ctl");
  S->pidfd.fd = pidfd;
  S->pidfd.cb = on_pidfd;
  if (ev_add (&S->loop, &S->pidfd, EPOLLIN) < 0)
    return ar_err (err, errno, "epoll_ctl pidfd");
  if (write (ready_fd, "1", 1) != 1)
    return ar_err (err, errno, "write readiness");
  close (ready_fd);
  while (!S->done)
    if (ev_run_once (&S->loop, expire (S)) < 0)
      return ar_err (err, errno, "epoll_wait");
  return 0;
}
