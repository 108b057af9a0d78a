/* Ask mode of the DNS stub (agentrun-netproxy --ask SOCKET): a lookup of a
 * name that has no route is held, and the asker listening on SOCKET (the
 * side that can reach the person who started the sandbox) is asked over a
 * Unix stream connection of its own:
 *     server -> asker:  "ask NAME 443\n"
 *     asker  -> server: "allow RELAY_SOCKET\n", "via PORT RELAY_SOCKET\n"  or  "deny\n"
 * On allow the server listens on a new loopback address (127.77.1.N:443),
 * routes it to RELAY_SOCKET (a relay route the asker made); on via it
 * listens on PORT and hands each connection to RELAY_SOCKET, a wildcard's
 * relay route, naming NAME:PORT as the target (the relay checks it against
 * its wildcard). Either way it answers the
 * held lookups with that address; on deny, on an asker that cannot be
 * reached or that hangs up, they get NXDOMAIN, and so does every later
 * lookup of the name. Each decision is one audit line ("event":"ask"). */
#ifndef NP_ASK_H
#define NP_ASK_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include "server.h"

#define NP_ASK_MAX 64 /* names asked about per run */
#define NP_ASK_PORT 443

/* Set up S->ask (S->cfg->ask_socket is set). */
void ask_init (struct np_server *S);
/* Where a held query's answer goes: a UDP client, or a DNS-over-TCP
 * connection by its id (it may be gone by then: the answer is dropped). */
struct ask_to {
  struct sockaddr_storage from; /* UDP */
  socklen_t fl; /* 0: TCP */
  uint64_t tcp_id;
};
/* A query: true when it was held (answered later through
 * server_dns_answer_held), false when the caller answers it now. */
bool ask_hold (struct np_server *S, const uint8_t *q, size_t qlen, const struct ask_to *to);
/* Tell the asker, without waiting for an answer, that a connection was
 * refused ("blocked NAME PORT\n"), so the person learns what was missing. */
void ask_tell_blocked (struct np_server *S, const char *name, int port);
/* 1 and *addr when name was allowed at run time. */
int ask_lookup (const struct np_ask *A, const char *name, struct in_addr *addr);

#endif
