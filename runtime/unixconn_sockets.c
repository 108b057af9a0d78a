/* The socket cap (unixconn.h, AR_SOCKCAP_ANNOTATION): the container's inet
 * sockets alive at once. Its TCP buffers count against the host's
 * net.ipv4.tcp_mem, one pool for every network namespace; per-socket
 * limits (its tcp_rmem and tcp_wmem) times processes times open files is
 * no bound on the total, and without a memory cgroup nothing else is.
 *
 * What is counted, exactly, at each socket(2): every inet socket file of
 * the container, for as long as any process holds it. The supervisor makes
 * each one (socket(2)) or accepts it (accept(2), accept4(2)) itself and
 * installs it in the caller; an epoll of ours watches it, and the kernel
 * drops a watch when the last reference to its file goes, so the epoll's
 * fdinfo lists the ones alive, bound or not, connected or reset. Added to
 * that, the network namespace's TCP connections with no such file but
 * TIME_WAIT ones (sock_diag): closed ones still sending (orphans),
 * connections waiting in a listener's queue, and those the netproxy hook
 * accepts inside. socket(2) is refused with ENOBUFS when that count is at
 * the cap (below_cap: a dump only when an upper bound of it reaches the
 * cap).
 * Notifications are served one at a time, so two callers cannot both take
 * the last place.
 *
 * The bound: accepting is never refused (a server would lose the
 * connection, or spin on it), so the count can pass the cap, but each
 * accepted connection needs a client socket that connected once: once the
 * count is at the cap no new client can be made, and those made before
 * can each connect once. At most twice the cap are alive at once; UDP
 * sockets, all made by socket(2), within the cap. */
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

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

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

/* The epoll's fdinfo, whole, in buf (grown as needed): one line per
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

/* Our sockets alive: the epoll's watches. With inodes, their inode
 * numbers into ours, sorted (for the dump's lookups). */
static long
count_ours (bool inodes)
{
  ssize_t len = read_fdinfo ();
  if (len < 0)
    return (long) len;
  size_t n = 0;
  for (const char *p = fdinfo; (p = strstr (p, "tfd:")) != NULL; p += 4)
    {
      if (!inodes)
        {
          n++;
          continue;
        }
      const char *ino = strstr (p, " ino:");
      /* accepted ones may take the count past the cap (twice it at most) */
      uint32_t *more = n < ours_room ? ours : reallocarray (ours, ours_room * 2, sizeof *ours);
      if (!ino || !more)
        return ino ? -ENOMEM : -EPROTO;
      if (n == ours_room)
        ours = more, ours_room *= 2;
      ours[n++] = (uint32_t) strtoul (ino + 5, NULL, 16);
    }
  if (inodes)
    qsort (ours, n, sizeof *ours, cmp_u32);
  return (long) n;
}

/* One reply's TCP socket: counted unless TIME_WAIT (a small minisock with
 * no buffer) or one of ours (counted already). */
static bool
counts (const struct nlmsghdr *h, size_t n_ours)
{
  if (h->nlmsg_len < NLMSG_LENGTH (sizeof (struct inet_diag_msg)))
    return false;
  const struct inet_diag_msg *m = NLMSG_DATA (h);
  if (m->idiag_state == TCP_TIME_WAIT)
    return false;
  uint32_t ino = m->idiag_inode;
  return !ino || !bsearch (&ino, ours, n_ours, sizeof *ours, cmp_u32);
}

/* Every state of a connection (the kernel's established table) but
 * TIME_WAIT, a small minisock with no buffer. Not LISTEN: a listener's own
 * queues hold nothing, its waiting connections are listed apart, and
 * those of the container are sockets of ours already (the netproxy
 * hook's, a few made before the container's command, stay out of the
 * count); nor bound ones not listening, all ours. 12 is the kernel's
 * TCP_NEW_SYN_RECV, a connection not yet made (netinet/tcp.h lacks it). */
#define CONNECTION_STATES                                                                                                \
  ((1U << TCP_ESTABLISHED) | (1U << TCP_SYN_SENT) | (1U << TCP_SYN_RECV) | (1U << TCP_FIN_WAIT1) | (1U << TCP_FIN_WAIT2) \
   | (1U << TCP_CLOSE) | (1U << TCP_CLOSE_WAIT) | (1U << TCP_LAST_ACK) | (1U << TCP_CLOSING) | (1U << 12))

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
            .r = { .idiag_family = AF_INET, .idiag_states = CONNECTION_STATES } };
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
          if (h->nlmsg_type == TCPDIAG_GETSOCK && counts (h, n_ours))
            n++;
        }
    }
}

/* The last full count, and what was made since: each socket of ours
 * alive then or made since can add at most two sockets sock_diag counts
 * (its own orphan once closed, and the connection it made waiting in a
 * listener's queue, or the netproxy's end of it), so
 *     ours now + others then + 2 * (ours then + made since)
 * bounds the count from above without a dump, which walks the host's
 * whole TCP table (a millisecond here); and ours now is at most
 * ours when the epoll was last read plus those made since, which spares
 * that read too (its cost grows with our sockets). Below the cap on a
 * bound, a socket is made; at or above it, the exact count says. */
static struct {
  long ours, others; /* at the last dump */
  long read; /* ours at the last read of the epoll */
} last;
/* sockets of ours made or accepted (threads accept) since the last dump,
 * and since the last read */
static atomic_long made_since_dump, made_since_read;

static long
bound (long ours_now)
{
  return ours_now + last.others + 2 * (last.ours + atomic_load (&made_since_dump));
}

/* Below the cap? 1 or 0, -errno when no count can be had. */
static int
below_cap (void)
{
  if (bound (last.read + atomic_load (&made_since_read)) < max_sockets)
    return 1;
  atomic_store (&made_since_read, 0);
  long mine = count_ours (false), others;
  if (mine < 0)
    return (int) mine;
  last.read = mine;
  if (bound (mine) < max_sockets)
    return 1;
  atomic_store (&made_since_dump, 0);
  if ((mine = count_ours (true)) < 0)
    return (int) mine;
  if ((others = count_tcp ((size_t) mine)) < 0)
    return (int) others;
  last.ours = last.read = mine;
  last.others = others;
  return mine + others < max_sockets;
}

/* The kinds made here: TCP (and MPTCP, whose subflows are TCP sockets
 * sock_diag counts), UDP and ICMP echo. Others are refused: a raw socket
 * as for a caller without CAP_NET_RAW, and the rest (SCTP, whose
 * peeloff makes sockets without socket(2), L2TP, ...) as unsupported. */
static int
kind_allowed (int domain, int type, int protocol)
{
  if (type == SOCK_STREAM && (protocol == 0 || protocol == IPPROTO_TCP || protocol == IPPROTO_MPTCP))
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
  atomic_fetch_add (&made_since_dump, 1);
  atomic_fetch_add (&made_since_read, 1);
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
