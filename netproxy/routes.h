/* Routes: which endpoint goes where. Parsed from the command line of both
 * programs or from a JSON file:
 *   relay:    NAME:PORT[=UPSTREAM_HOST:UPSTREAM_PORT | =connect]
 *   netproxy: NAME:PORT=ADDR=SOCKET
 *   JSON:     {"routes": [{"name": "api.example.com", "port": 443,
 *              "upstream": "10.0.0.1:443", "address": "127.77.0.2",
 *              "socket": "/run/agentrun/relay/api.example.com:443.sock",
 *              "connect": false}, ...]}
 * A NAME of the form "*.example.com" is a wildcard and only usable through
 * the CONNECT proxy (the relay route is then marked "connect"). */
#ifndef NP_ROUTES_H
#define NP_ROUTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "error.h"
#include "hostname.h"

struct route {
  char *name;
  int port;
  char *up_host; /* relay: upstream host (defaults to name) */
  int up_port; /* relay: upstream port (defaults to port) */
  char *addr; /* netproxy: loopback address to listen on */
  char *sock; /* netproxy: relay socket path */
  bool connect; /* wildcard route reached through HTTP CONNECT */
};

struct routes {
  struct route *v;
  size_t n;
};

enum route_kind { ROUTE_RELAY, ROUTE_NETPROXY };

int routes_add_arg (struct routes *rs, enum route_kind k, const char *arg, ar_error **err);
/* A routes file is small: a line per endpoint. */
#define ROUTES_MAX_FILE_SIZE (64 * 1024)
/* From PATH (a FIFO too: --config <(...)). */
int routes_load_json (struct routes *rs, enum route_kind k, const char *path, ar_error **err);
/* The same from FD, opened by the caller (O_NONBLOCK, so that the open could
 * not hang); path only names it in messages; a FIFO only with fifo_ok. */
int routes_load_json_fd (struct routes *rs, enum route_kind k, int fd, const char *path, bool fifo_ok, ar_error **err);
void routes_free (struct routes *rs);

/* A flag value in whole seconds (0 .. one day) into milliseconds. */
int np_parse_seconds (const char *s, uint64_t *ms);

/* Split "HOST:PORT" ("[v6]:PORT" too). host gets a malloc'd copy. */
int route_split_hostport (const char *s, char **host, int *port);

#endif
