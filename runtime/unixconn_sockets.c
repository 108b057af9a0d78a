/* The socket cap (unixconn.h, AR_SOCKCAP_ANNOTATION): the container's inet
 * sockets alive at once. Its TCP buffers count against the host's
 * net.ipv4.tcp_mem, one pool for every network namespace; per-socket
 * limits (its tcp_rmem and tcp_wmem) times processes times open files is
 * no bound on the total, and without a memory cgroup nothing else is.
 *
 * What is counted, exactly at each socket(2): the sockets this supervisor
 * made (it makes every AF_INET and AF_INET6 socket of the container and
 * installs it in the caller), alive as long as any process holds the file
 * (an epoll of ours watches each: the kernel drops a watch when the last
 * reference to its file goes, and the epoll's fdinfo lists the watches
 * left), plus every TCP socket of the network namespace but TIME_WAIT ones
 * that is not one of those (sock_diag): accepted ones, connections
 * waiting in a listener's queue, closed ones still sending (orphans), and
 * those made outside the filter (the netproxy's listeners inside and what
 * they accept). socket(2) is refused with ENOBUFS when that count is at the
 * cap. Notifications are served one at a time, so two callers cannot both
 * take the last place.
 *
 * The bound: accept(2) makes sockets without socket(2), so the count can
 * pass the cap, but each accepted connection needs a client socket that
 * connects: once the count is at the cap no new client can be made, and
 * the clients made before can each connect once. At most twice the cap
 * are alive at once (UDP's are all made by socket(2): within the cap). */
#include "config.h"
#include "unixconn.h"

#include <errno.h>
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

/* Our sockets alive: the epoll's watches, one fdinfo line each
 * ("tfd: ... ino:HEX sdev:..."); their inode numbers into ours. */
static long
count_ours (void)
{
  char path[64], line[256];
  snprintf (path, sizeof path, "self/fdinfo/%d", watches);
  int fd = openat (proc, path, O_RDONLY | O_CLOEXEC);
  FILE *f = fd < 0 ? NULL : fdopen (fd, "re");
  if (!f)
    {
      int e = errno;
      if (fd >= 0)
        close (fd);
      return -e;
    }
  size_t n = 0;
  while (fgets (line, sizeof line, f))
    {
      if (strncmp (line, "tfd:", 4) != 0)
        continue;
      const char *ino = strstr (line, " ino:");
      /* accepted ones may take the count past the cap (twice it at most) */
      uint32_t *more = n < ours_room ? ours : reallocarray (ours, ours_room * 2, sizeof *ours);
      if (!ino || !more)
        {
          fclose (f);
          return ino ? -ENOMEM : -EPROTO;
        }
      if (n == ours_room)
        ours = more, ours_room *= 2;
      ours[n++] = (uint32_t) strtoul (ino + 5, NULL, 16);
    }
  fclose (f);
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

/* The family's TCP sockets of the network namespace that count. */
static long
count_tcp (int family, size_t n_ours)
{
  struct {
    struct nlmsghdr h;
    struct inet_diag_req_v2 r;
  } req = {
    .h = { .nlmsg_len = sizeof req, .nlmsg_type = SOCK_DIAG_BY_FAMILY, .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
    .r = { .sdiag_family = (uint8_t) family, .sdiag_protocol = IPPROTO_TCP, .idiag_states = ~(1U << TCP_TIME_WAIT) }
  };
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
          if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY && counts (h, (size_t) n_ours))
            n++;
        }
    }
}

/* The count the cap applies to, or -errno. */
static long
count_alive (void)
{
  long mine = count_ours (), v4, v6;
  if (mine < 0)
    return mine;
  if ((v4 = count_tcp (AF_INET, (size_t) mine)) < 0)
    return v4;
  if ((v6 = count_tcp (AF_INET6, (size_t) mine)) < 0)
    return v6;
  return mine + v4 + v6;
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
      long alive = count_alive ();
      if (alive < 0 || alive >= max_sockets)
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
  return epoll_ctl (watches, EPOLL_CTL_ADD, fd, &ev) < 0 ? -ENOBUFS : 0;
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
