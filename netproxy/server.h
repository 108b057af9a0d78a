/* The server that agentrun-netproxy leaves in the container's network
 * namespace: route listeners, the DNS stub and the CONNECT proxy. The hook
 * binds everything (so errors reach the runtime), then the forked server
 * runs the loop until the container's init exits. */
#ifndef NP_SERVER_H
#define NP_SERVER_H

#include <stdbool.h>
#include <sys/types.h>
#include "audit.h"
#include "ev.h"
#include "routes.h"

struct np_config {
  struct routes routes;
  const char *audit_path;
  const char *audit_fd_ref; /* --audit-fd FD or PID:FD: the log already open */
  const char *container;
  bool dns; /* DNS stub on dns_addr:53 (default on) */
  const char *dns_addr;
  bool connect_proxy; /* HTTP CONNECT on connect_addr:connect_port */
  const char *connect_addr;
  int connect_port;
  uint64_t idle_timeout_ms; /* 0: a quiet connection is never cut */
  const char *ask_socket; /* --ask: unknown names are asked about there (ask.h) */
  const char **deny;
  size_t n_deny; /* --deny NAME|*.DOMAIN: refused whatever allows it */
};

enum np_kind { NP_ROUTE, NP_DNS_TCP, NP_CONNECT };

struct np_server;

struct np_listener {
  struct ev_io io;
  struct np_server *S;
  struct route *r; /* NP_ROUTE only */
  enum np_kind kind;
};

struct dns_tcp;
struct px_conn;
struct np_conn;
struct np_ask;
struct dns_query_info;

struct np_server {
  struct ev_loop loop;
  const struct np_config *cfg;
  struct audit audit;
  struct np_listener *L;
  size_t nL;
  struct ev_io dns_udp; /* fd -1 when off */
  struct ev_io pidfd; /* the container's init: readable when it exits */
  bool paused, done;
  uint64_t resume_at;
  size_t nconns;
  struct dns_tcp *dns_conns; /* idle-expired, at most DNS_TCP_MAX */
  size_t n_dns;
  uint64_t dns_ids; /* ids of DNS-over-TCP connections, for answers held in ask mode */
  struct px_conn *px_pending; /* CONNECT requests still being read */
  struct np_conn *conns; /* spliced connections, for the idle timeout */
  uint64_t next_scan; /* none goes idle before this */
  struct np_ask *ask; /* NULL unless --ask */
};

/* In the container's netns: bind and listen on everything. */
int server_bind (struct np_server *S, const struct np_config *cfg, ar_error **err);
/* The fds the server needs kept across the fork's fd cleanup. */
size_t server_fds (const struct np_server *S, int *fds, size_t cap);
/* Listen for one more route while running (ask mode); r must outlive S. */
int server_add_route (struct np_server *S, struct route *r, ar_error **err);
/* The answer to a DNS query as the stub gives it (routes and asked names),
 * refusals audited; _probe builds it without auditing and says what it was. */
ssize_t server_dns_reply (struct np_server *S, const uint8_t *q, size_t qlen, uint8_t *out, size_t cap);
ssize_t server_dns_probe (struct np_server *S, const uint8_t *q, size_t qlen, uint8_t *out, size_t cap,
                          struct dns_query_info *info);

struct ask_to;
/* Send the answer to a query ask mode held, over UDP or on its TCP
 * connection if that is still open. */
void server_dns_answer_held (struct np_server *S, const struct ask_to *to, const uint8_t *a, size_t len);
/* A query held on TCP connection id will not be answered (replaced). */
void server_dns_tcp_release (struct np_server *S, uint64_t id);

/* Run until the process behind pidfd exits. ready_fd gets one byte once
 * the loop is set up, then is closed. */
int server_run (struct np_server *S, int pidfd, int ready_fd, ar_error **err);

#endif
