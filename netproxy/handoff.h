/* The socket handoff between the netproxy server and the relay: instead of
 * splicing the container's TCP connection into a Unix stream (two splicing
 * hops, four processes on the data path), the server passes the accepted
 * socket itself to the relay with SCM_RIGHTS, and the relay splices it to
 * the upstream directly. The server leaves the data path.
 *
 * Each route has a second relay socket beside the stream one, SOCKET.fd
 * (SOCK_SEQPACKET, same mode and owner). A separate socket, not a marker
 * on the stream one: the relay cannot tell a handoff from a stream client
 * whose protocol lets the server speak first without waiting for a byte.
 * One connection per handed-off client:
 *   server -> relay   "ARFD1 IDLE_MS[ HOST:PORT]" with exactly one fd
 *                     (SCM_RIGHTS): the accepted TCP socket; IDLE_MS is the
 *                     server's --idle-timeout (0: none), which the relay
 *                     applies; HOST:PORT, on CONNECT routes only, is the
 *                     target the client asked for (the relay checks it
 *                     against the route's wildcard, as on the stream).
 *   relay -> server   "UP DOWN OUTCOME[ DETAIL]" once the connection ended,
 *                     so the server's audit line keeps bytes and outcome.
 * The route is the socket's: the relay never takes an endpoint from the
 * server. A connected socket is no way into the container's netns: the
 * relay can read, write and shut it down, nothing more. A relay that is down refuses the connect at once (relay-down);
 * one that dies later closes the channel without a report. */
#ifndef NP_HANDOFF_H
#define NP_HANDOFF_H

#include <stddef.h>
#include <stdint.h>

#define HANDOFF_SUFFIX ".fd"
#define HANDOFF_REPORT_MAX 400
#define HANDOFF_MSG_MAX 320

/* SOCKET + ".fd" into out; -1 (ENAMETOOLONG) if it does not fit a sun_path. */
int handoff_path (const char *sock, char *out, size_t cap);

/* A connected, non-blocking Unix socket of type (SOCK_SEQPACKET for the
 * handoff socket, SOCK_STREAM for a route's stream socket) to path, or -1
 * with errno. A Unix connect is immediate: a relay that is down is known
 * now, not after a timeout. */
int np_unix_connect (const char *path, int type);

/* Send fd over ctl (target: NULL but on CONNECT routes). -1 with errno on
 * failure; fd stays the caller's. */
int handoff_send (int ctl, int fd, uint64_t idle_ms, const char *target);

/* Receive one handoff from ctl: 1 with *fd (non-blocking, close-on-exec),
 * *idle_ms and target[] ("" when none came), 0 if nothing is there yet, -1
 * with why[] filled when the message is not exactly one TCP socket and a
 * well-formed header (every fd that came with it is closed) or the channel
 * failed. */
int handoff_recv (int ctl, int *fd, uint64_t *idle_ms, char *target, size_t target_cap, char *why, size_t why_cap);

/* The relay's end-of-connection report, and its parse (0, or -1 if bad;
 * detail may come back empty). */
int handoff_report (char *buf, size_t cap, uint64_t up, uint64_t down, const char *outcome, const char *detail);
int handoff_parse_report (char *buf, uint64_t *up, uint64_t *down, const char **outcome, const char **detail);

#endif
