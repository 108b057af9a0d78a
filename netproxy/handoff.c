#include "config.h"
#include "handoff.h"
#include "confine.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#define HANDOFF_MAGIC "ARFD1"
/* Room for more fds than we accept, so a sender of two is seen and both
 * are closed rather than one silently dropped by the kernel. */
#define HANDOFF_MAX_FDS 4

int
handoff_path (const char *sock, char *out, size_t cap)
{
  size_t max = sizeof ((struct sockaddr_un *) 0)->sun_path;
  int n = snprintf (out, cap, "%s" HANDOFF_SUFFIX, sock);
  if (n < 0 || (size_t) n >= cap || (size_t) n >= max)
    {
      errno = ENAMETOOLONG;
      return -1;
    }
  return 0;
}

int
np_unix_connect (const char *path, int type)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  if (np_sun_path (path, sa.sun_path, sizeof sa.sun_path) < 0)
    return -1;
  int fd = socket (AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  if (connect (fd, (struct sockaddr *) &sa, sizeof sa) < 0)
    {
      int e = errno;
      close (fd);
      errno = e;
      return -1;
    }
  return fd;
}

int
handoff_send (int ctl, int fd, uint64_t idle_ms, const char *target)
{
  char msg[HANDOFF_MSG_MAX];
  int len = snprintf (msg, sizeof msg, HANDOFF_MAGIC " %" PRIu64 "%s%s", idle_ms, target ? " " : "",
                      target ? target : "");
  if (len < 0 || (size_t) len >= sizeof msg)
    {
      errno = EMSGSIZE;
      return -1;
    }
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE (sizeof (int))];
  } u;
  memset (&u, 0, sizeof u);
  struct iovec iov = { .iov_base = msg, .iov_len = (size_t) len };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
  struct cmsghdr *cm = CMSG_FIRSTHDR (&mh);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (cm), &fd, sizeof fd);
  ssize_t n = sendmsg (ctl, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
  if (n == len)
    return 0;
  if (n >= 0)
    errno = EMSGSIZE;
  return -1;
}

/* Every fd of every SCM_RIGHTS message, into fds[] (at most cap). */
static size_t
collect_fds (struct msghdr *mh, int *fds, size_t cap)
{
  size_t n = 0;
  for (struct cmsghdr *cm = CMSG_FIRSTHDR (mh); cm; cm = CMSG_NXTHDR (mh, cm))
    {
      if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
        continue;
      size_t k = (cm->cmsg_len - CMSG_LEN (0)) / sizeof (int);
      for (size_t i = 0; i < k && n < cap; i++)
        memcpy (&fds[n++], CMSG_DATA (cm) + i * sizeof (int), sizeof (int));
    }
  return n;
}

/* Only what the server hands over: a connected TCP socket. */
static const char *
check_socket (int fd)
{
  struct stat st;
  int type = 0, domain = 0, listening = 0;
  socklen_t l1 = sizeof type, l2 = sizeof domain, l3 = sizeof listening;
  if (fstat (fd, &st) < 0 || !S_ISSOCK (st.st_mode))
    return "the fd is not a socket";
  if (getsockopt (fd, SOL_SOCKET, SO_TYPE, &type, &l1) < 0 || type != SOCK_STREAM)
    return "the socket is not SOCK_STREAM";
  if (getsockopt (fd, SOL_SOCKET, SO_DOMAIN, &domain, &l2) < 0 || (domain != AF_INET && domain != AF_INET6))
    return "the socket is not TCP";
  if (getsockopt (fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &l3) < 0 || listening)
    return "the socket is a listener";
  int fl = fcntl (fd, F_GETFL);
  if (fl < 0 || fcntl (fd, F_SETFL, fl | O_NONBLOCK) < 0)
    return "cannot make the socket non-blocking";
  return NULL;
}

/* "ARFD1 IDLE_MS[ TARGET]": 0, or -1 if malformed. */
static int
parse_header (char *msg, uint64_t *idle_ms, char *target, size_t target_cap)
{
  unsigned long long idle;
  int off = 0;
  if (sscanf (msg, HANDOFF_MAGIC " %llu%n", &idle, &off) != 1 || off == 0)
    return -1;
  const char *t = msg + off;
  target[0] = '\0';
  if (*t == ' ')
    {
      t++;
      if (!*t || strlen (t) >= target_cap || strpbrk (t, " \r\n"))
        return -1;
      strcpy (target, t);
    }
  else if (*t)
    return -1;
  *idle_ms = idle;
  return 0;
}

int
handoff_recv (int ctl, int *fd, uint64_t *idle_ms, char *target, size_t target_cap, char *why, size_t why_cap)
{
  char msg[HANDOFF_MSG_MAX];
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE (HANDOFF_MAX_FDS * sizeof (int))];
  } u;
  struct iovec iov = { .iov_base = msg, .iov_len = sizeof msg - 1 };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
  ssize_t n = recvmsg (ctl, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return 0;
  if (n <= 0)
    {
      snprintf (why, why_cap, "%s", n == 0 ? "channel closed before the handoff" : strerror (errno));
      return -1;
    }
  int fds[HANDOFF_MAX_FDS];
  size_t nfds = collect_fds (&mh, fds, HANDOFF_MAX_FDS);
  const char *bad = NULL;
  msg[n] = '\0';
  if (mh.msg_flags & MSG_CTRUNC)
    bad = "control data truncated (too many fds, or none left to receive one)";
  else if (mh.msg_flags & MSG_TRUNC)
    bad = "oversized handoff message";
  else if (nfds != 1)
    bad = nfds ? "more than one fd" : "no fd";
  else if (parse_header (msg, idle_ms, target, target_cap) < 0)
    bad = "not a handoff header";
  else
    bad = check_socket (fds[0]);
  if (bad)
    {
      for (size_t i = 0; i < nfds; i++)
        close (fds[i]);
      snprintf (why, why_cap, "%s", bad);
      return -1;
    }
  *fd = fds[0];
  return 1;
}

int
handoff_report (char *buf, size_t cap, uint64_t up, uint64_t down, const char *outcome, const char *detail)
{
  int n = snprintf (buf, cap, "%" PRIu64 " %" PRIu64 " %s%s%s", up, down, outcome, detail ? " " : "",
                    detail ? detail : "");
  if (n < 0)
    return -1;
  return (size_t) n >= cap ? (int) cap - 1 : n;
}

int
handoff_parse_report (char *buf, uint64_t *up, uint64_t *down, const char **outcome, const char **detail)
{
  unsigned long long u, d;
  int off = 0;
  if (sscanf (buf, "%llu %llu %n", &u, &d, &off) != 2 || off == 0 || buf[off] == '\0')
    return -1;
  char *o = buf + off, *sp = strchr (o, ' ');
  *detail = "";
  if (sp)
    {
      *sp = '\0';
      *detail = sp + 1;
    }
  *up = u;
  *down = d;
  *outcome = o;
  return 0;
}
