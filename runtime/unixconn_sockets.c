/* The socket cap (unixconn.h, AR_SOCKCAP_ANNOTATION): the container's inet
 * sockets alive at once. Its TCP buffers count against the host's
 * net.ipv4.tcp_mem, one pool for every network namespace; per-socket
 * limits (its tcp_rmem and tcp_wmem) times processes times open files is
 * no bound on the total, and without a memory cgroup nothing else is.
 *
 * What is counted: every inet socket file of the container, for as long
 * as any process holds it. The supervisor makes each one (socket(2)) or
 * accepts it (accept(2), accept4(2)) itself and installs it in the
 * caller; an epoll of ours watches it, and the kernel drops a watch when
 * the last reference to its file goes, so the epoll's fdinfo lists the
 * ones alive, bound or not, connected or reset. Added to that, the TCP
 * sockets of the network namespace with no such file (sock_diag): closed
 * ones still sending (orphans), connections waiting in a listener's queue
 * (its queue's length: a queued connection reset by its client leaves the
 * table but keeps what it received), connections not yet made, and those
 * the netproxy hook accepts inside. Not TIME_WAIT ones (no buffers), nor
 * listeners themselves.
 *
 * The count grows only by a socket made or accepted, or by a connection
 * made (its other end). socket(2) and every connect(2) that makes a TCP
 * connection (the supervisor performs them all; a send with MSG_FASTOPEN
 * too) are refused with ENOBUFS when the count is at the cap; an accept
 * turns a counted queued connection into a counted socket, a close a
 * socket into an orphan at most. So the count never passes the cap.
 * Notifications are served one at a time, and connects under way are
 * counted until done, so two callers cannot both take the last place. */
#include "config.h"
#include "unixconn.h"

#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static long max_sockets;
static int watches = -1, diag = -1, proc = -1;
static uint32_t *ours; /* inode numbers of our sockets still alive, sorted */
static size_t ours_room;

int
ar_unixconn_sockets_init (long max, int proc_fd)
{
  max_sockets = max;
  proc = proc_fd;
  ours_room = (size_t) max;
  if (!(ours = calloc (ours_room, sizeof *ours)))
    return -ENOMEM;
  if ((watches = epoll_create1 (EPOLL_CLOEXEC)) < 0)
    return -errno;
  if ((diag = socket (AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)) < 0)
    return -errno;
  return 0;
}

static int
cmp_u32 (const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
  return x < y ? -1 : x > y;
}

/* The epoll's fdinfo, whole, in fdinfo (grown as needed): one line per
 * watch, "tfd: ... ino:HEX sdev:...". Its length, or -errno. */
static char *fdinfo;
static size_t fdinfo_room = 16384;

static ssize_t
read_fdinfo (void)
{
  char path[64];
  snprintf (path, sizeof path, "self/fdinfo/%d", watches);
  int fd = openat (proc, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  size_t len = 0;
  for (;;)
    {
      if (!fdinfo || len + 4096 > fdinfo_room)
        {
          char *more = realloc (fdinfo, fdinfo ? fdinfo_room * 2 : fdinfo_room);
          if (!more)
            {
              close (fd);
              return -ENOMEM;
            }
          fdinfo_room = fdinfo ? fdinfo_room * 2 : fdinfo_room;
          fdinfo = more;
        }
      ssize_t n = read (fd, fdinfo + len, fdinfo_room - len - 1);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int e = errno;
          close (fd);
          if (n < 0)
            return -e;
          fdinfo[len] = '\0';
          return (ssize_t) len;
        }
      len += (size_t) n;
    }
}

/* Our sockets alive: the epoll's watches; their inode numbers into ours,
 * sorted (for the dump's lookups). */
static long
count_ours (void)
{
  ssize_t len = read_fdinfo ();
  if (len < 0)
    return (long) len;
  size_t n = 0;
  for (const char *p = fdinfo; (p = strstr (p, "tfd:")) != NULL; p += 4)
    {
      const char *ino = strstr (p, " ino:");
      /* the cap counts the dump's sockets too: ours alone may be more than the first guess */
      uint32_t *more = n < ours_room ? ours : reallocarray (ours, ours_room * 2, sizeof *ours);
      if (!ino || !more)
        return ino ? -ENOMEM : -EPROTO;
      if (n == ours_room)
        ours = more, ours_room *= 2;
      ours[n++] = (uint32_t) strtoul (ino + 5, NULL, 16);
    }
  qsort (ours, n, sizeof *ours, cmp_u32);
  return (long) n;
}

/* What one reply's TCP socket adds to the count. A listener: the
 * connections in its queue (idiag_rqueue), whether still in the table or
 * reset meanwhile (then out of it, but holding what they received); not
 * itself (no buffer; those of the container are ours). A connection with
 * no file: a queued one (counted with its listener) unless it is closing
 * (an orphan still sending), or not yet made (a request). One of ours:
 * counted already. Another's (the netproxy hook's): counted. */
static long
counts (const struct nlmsghdr *h, size_t n_ours)
{
  if (h->nlmsg_len < NLMSG_LENGTH (sizeof (struct inet_diag_msg)))
    return 0;
  const struct inet_diag_msg *m = NLMSG_DATA (h);
  uint32_t ino = m->idiag_inode;
  switch (m->idiag_state)
    {
    case TCP_LISTEN: return m->idiag_rqueue;
    case TCP_TIME_WAIT: return 0;
    case TCP_ESTABLISHED:
    case TCP_CLOSE_WAIT:
    case TCP_SYN_RECV:
      if (!ino)
        return 0;
      break;
    default: break;
    }
  return !ino || !bsearch (&ino, ours, n_ours, sizeof *ours, cmp_u32);
}

/* Every state but TIME_WAIT, a small minisock with no buffer, and bound
 * sockets not listening, all ours: listeners, for their queues, and every
 * state of a connection. 12 is the kernel's TCP_NEW_SYN_RECV, a connection
 * not yet made (netinet/tcp.h lacks it). */
#define DUMP_STATES                                                                                                    \
  ((1U << TCP_ESTABLISHED) | (1U << TCP_SYN_SENT) | (1U << TCP_SYN_RECV) | (1U << TCP_FIN_WAIT1)                       \
   | (1U << TCP_FIN_WAIT2) | (1U << TCP_CLOSE) | (1U << TCP_CLOSE_WAIT) | (1U << TCP_LAST_ACK) | (1U << TCP_LISTEN)    \
   | (1U << TCP_CLOSING) | (1U << 12))

/* The TCP sockets of the network namespace that count, IPv4 and IPv6 in
 * one walk of the host's table: the older request (TCPDIAG_GETSOCK, an
 * inet_diag_req) asks for every family, where SOCK_DIAG_BY_FAMILY takes
 * one family a walk. */
static long
count_tcp (size_t n_ours)
{
  struct {
    struct nlmsghdr h;
    struct inet_diag_req r;
  } req = { .h = { .nlmsg_len = sizeof req, .nlmsg_type = TCPDIAG_GETSOCK, .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
            .r = { .idiag_family = AF_INET, .idiag_states = DUMP_STATES } };
  static uint32_t buf[8192];
  long n = 0;
  if (send (diag, &req, sizeof req, MSG_NOSIGNAL) != (ssize_t) sizeof req)
    return -errno;
  for (;;)
    {
      ssize_t got = recv (diag, buf, sizeof buf, 0);
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        return got < 0 ? -errno : -EPROTO;
      for (struct nlmsghdr *h = (void *) buf; NLMSG_OK (h, (size_t) got); h = NLMSG_NEXT (h, got))
        {
          if (h->nlmsg_type == NLMSG_DONE)
            return n;
          if (h->nlmsg_type == NLMSG_ERROR)
            {
              const struct nlmsgerr *e = NLMSG_DATA (h);
              return e->error < 0 ? e->error : -EPROTO;
            }
          if (h->nlmsg_type == TCPDIAG_GETSOCK)
            n += counts (h, n_ours);
        }
    }
}

/* The count moves up only by a socket made or accepted here, or by a
 * connection made (its other end, or its place in a queue): the
 * supervisor performs every connect(2), and one on an unconnected TCP
 * socket is a new connection, counted and refused at the cap like
 * socket(2). A close turns a socket of ours into an orphan at most. So
 *     ours then + others then + made since + connections since
 * bounds the count from above without a dump, which walks the host's
 * whole TCP table (a millisecond here): below the cap on that bound, go
 * on; at or above it, the exact count (the epoll's watches, the dump, and
 * the connects under way) says. */
static struct {
  long ours, others;
} last;
/* since the last dump: sockets made or accepted (threads accept),
 * connections begun; and the connects under way (their other end may not
 * be in the table yet) */
static atomic_long made_since, connects_since, connecting;

/* Below the cap? 1 or 0, -errno when no count can be had. */
static int
below_cap (void)
{
  if (last.ours + last.others + atomic_load (&made_since) + atomic_load (&connects_since) < max_sockets)
    return 1;
  /* reset first: what happens meanwhile is in the next bound, if not in this count */
  atomic_store (&made_since, 0);
  atomic_store (&connects_since, 0);
  long mine = count_ours (), others;
  if (mine < 0)
    return (int) mine;
  if ((others = count_tcp ((size_t) mine)) < 0)
    return (int) others;
  last.ours = mine;
  last.others = others + atomic_load (&connecting);
  return last.ours + last.others < max_sockets;
}

int
ar_unixconn_sockets_connect (int fd)
{
  struct tcp_info ti;
  socklen_t len = sizeof ti;
  int domain = 0, type = 0;
  socklen_t dl = sizeof domain, tl = sizeof type;
  if (watches < 0 || getsockopt (fd, SOL_SOCKET, SO_DOMAIN, &domain, &dl) < 0
      || (domain != AF_INET && domain != AF_INET6) || getsockopt (fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0
      || type != SOCK_STREAM || getsockopt (fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0 || ti.tcpi_state != TCP_CLOSE)
    return 0; /* no new connection: not ours to count */
  if (below_cap () != 1)
    return -ENOBUFS;
  atomic_fetch_add (&connects_since, 1);
  atomic_fetch_add (&connecting, 1);
  return 1;
}

void
ar_unixconn_sockets_connected (void)
{
  atomic_fetch_sub (&connecting, 1);
}

/* The kinds made here: TCP, UDP and ICMP echo. Others are refused: a raw
 * socket as for a caller without CAP_NET_RAW, and the rest as unsupported
 * (SCTP, whose peeloff makes sockets without socket(2); MPTCP, whose
 * subflows are kernel sockets, and whose callers fall back to TCP; L2TP,
 * ...). */
static int
kind_allowed (int domain, int type, int protocol)
{
  if (type == SOCK_STREAM && (protocol == 0 || protocol == IPPROTO_TCP))
    return 0;
  if (type == SOCK_DGRAM
      && (protocol == 0 || protocol == IPPROTO_UDP || (domain == AF_INET && protocol == IPPROTO_ICMP)
          || (domain == AF_INET6 && protocol == IPPROTO_ICMPV6)))
    return 0;
  return type == SOCK_RAW ? EPERM : EPROTONOSUPPORT;
}

/* Why ENOBUFS at the cap: it is what socket(2) says when the kernel lacks
 * the memory for a socket ("until sufficient resources are freed"), which
 * is what the cap stands for, and closing sockets frees the place. EMFILE
 * would send the reader to the process's own open-file limit, which is not
 * the one reached (the count is the whole sandbox's), and libraries that
 * queue opens on EMFILE would wait for a close of their own. */
int
ar_unixconn_socket (int listener, uint64_t id, int domain, int type, int protocol)
{
  int flags = type & (SOCK_CLOEXEC | SOCK_NONBLOCK), base = type & ~(SOCK_CLOEXEC | SOCK_NONBLOCK);
  bool inet = domain == AF_INET || domain == AF_INET6;
  if (inet)
    {
      int e = kind_allowed (domain, base, protocol);
      if (e)
        return e;
      if (below_cap () != 1)
        return ENOBUFS; /* a count that cannot be had refuses too */
    }
  int fd = socket (domain, base | SOCK_CLOEXEC | (flags & SOCK_NONBLOCK), protocol);
  if (fd < 0)
    return errno;
  int e = inet ? -ar_unixconn_sockets_track (fd) : 0;
  if (e == 0)
    e = ar_unixconn_install (listener, id, fd, flags & SOCK_CLOEXEC);
  /* ours goes; failed, the socket goes with it, and its watch */
  close (fd);
  return e;
}

int
ar_unixconn_sockets_track (int fd)
{
  int domain = 0;
  socklen_t dl = sizeof domain;
  if (watches < 0 || getsockopt (fd, SOL_SOCKET, SO_DOMAIN, &domain, &dl) < 0
      || (domain != AF_INET && domain != AF_INET6))
    return 0;
  /* no event is ever read: the watch is there to vanish with the file */
  struct epoll_event ev = { .events = 0 };
  if (epoll_ctl (watches, EPOLL_CTL_ADD, fd, &ev) < 0)
    return -ENOBUFS;
  atomic_fetch_add (&made_since, 1);
  return 0;
}

int
ar_unixconn_install (int listener, uint64_t id, int fd, bool cloexec)
{
  struct seccomp_notif_addfd a = {
    .id = id, .flags = SECCOMP_ADDFD_FLAG_SEND, .srcfd = (uint32_t) fd, .newfd_flags = cloexec ? O_CLOEXEC : 0
  };
  if (ioctl (listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a) >= 0 || errno == ENOENT)
    return 0; /* answered with the caller's fd number, or the caller is gone */
  return errno; /* e.g. EMFILE: the caller's own open-file limit */
}
