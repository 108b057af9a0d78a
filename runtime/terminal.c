/* Terminal: pty, console socket, fd passing. */
#include "config.h"
#include "terminal.h"
#include "util.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO ('T', 0x41)
#endif

int
ar_send_fds (int sock, const int *fds, size_t n_fds, const void *data, size_t len, ar_error **err)
{
  char cbuf[CMSG_SPACE (sizeof (int) * AR_FDS_MAX)];
  struct iovec iov = { .iov_base = (void *) data, .iov_len = len };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
  char dummy = 0;

  if (n_fds > AR_FDS_MAX)
    return ar_err (err, EINVAL, "sendmsg: %zu fds, at most %d in one message", n_fds, AR_FDS_MAX);
  if (!len)
    {
      iov.iov_base = &dummy;
      iov.iov_len = 1;
    }
  memset (cbuf, 0, sizeof cbuf);
  if (n_fds)
    {
      msg.msg_control = cbuf;
      msg.msg_controllen = CMSG_SPACE (sizeof (int) * n_fds);
      struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (sizeof (int) * n_fds);
      memcpy (CMSG_DATA (c), fds, sizeof (int) * n_fds);
    }
  for (;;)
    {
      /* without an fd, send(2): under the connect filter (unixconn.h) a
       * sendmsg(2) is the supervisor's to perform, and it cannot reach a
       * process of ours that has not exec'd yet */
      if ((n_fds ? sendmsg (sock, &msg, MSG_NOSIGNAL) : send (sock, iov.iov_base, iov.iov_len, MSG_NOSIGNAL)) >= 0)
        return 0;
      if (errno != EINTR)
        return ar_err (err, errno, "sendmsg");
    }
}

int
ar_send_fd (int sock, int fd, const void *data, size_t len, ar_error **err)
{
  return ar_send_fds (sock, &fd, fd >= 0 ? 1 : 0, data, len, err);
}

ssize_t
ar_recv_fds (int sock, int *fds, size_t cap_fds, size_t *n_fds, void *data, size_t cap, ar_error **err)
{
  char cbuf[CMSG_SPACE (sizeof (int) * AR_FDS_MAX)];
  struct iovec iov = { .iov_base = data, .iov_len = cap };
  struct msghdr msg = { .msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = cbuf,
                        .msg_controllen = CMSG_SPACE (sizeof (int) * (cap_fds < AR_FDS_MAX ? cap_fds : AR_FDS_MAX)) };
  ssize_t n;

  *n_fds = 0;
  do
    n = recvmsg (sock, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return ar_err (err, errno, "recvmsg");
  for (struct cmsghdr *c = CMSG_FIRSTHDR (&msg); c; c = CMSG_NXTHDR (&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len >= CMSG_LEN (0))
      {
        size_t k = (c->cmsg_len - CMSG_LEN (0)) / sizeof (int);
        for (size_t i = 0; i < k; i++)
          {
            int fd;
            memcpy (&fd, CMSG_DATA (c) + i * sizeof (int), sizeof fd);
            if (*n_fds < cap_fds)
              fds[(*n_fds)++] = fd;
            else
              close (fd);
          }
      }
  if (msg.msg_flags & MSG_CTRUNC)
    {
      for (size_t i = 0; i < *n_fds; i++)
        close (fds[i]);
      *n_fds = 0;
      return ar_err (err, 0, "recvmsg: control data truncated");
    }
  return n;
}

ssize_t
ar_recv_fd (int sock, int *fd, void *data, size_t cap, ar_error **err)
{
  size_t n_fds;
  *fd = -1;
  ssize_t n = ar_recv_fds (sock, fd, 1, &n_fds, data, cap, err);
  if (n_fds == 0)
    *fd = -1;
  return n;
}

int
ar_pty_open (int *master, int *slave, ar_error **err)
{
  cleanup_close int m = open ("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  int unlock = 0;

  if (m < 0)
    return ar_err (err, errno, "open /dev/ptmx");
  if (ioctl (m, TIOCSPTLCK, &unlock) < 0)
    return ar_err (err, errno, "unlock pty");
  int s = ioctl (m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (s < 0)
    return ar_err (err, errno, "open pty peer");
  *master = ar_steal_fd (m);
  *slave = s;
  return 0;
}

int
ar_pty_own (int slave, uid_t uid, ar_error **err)
{
  /* The group stays devpts's (gid=5 in the usual mount options), as runc. */
  if (fchown (slave, uid, (gid_t) -1) < 0)
    return ar_err (err, errno, "chown the pty to uid %u", (unsigned) uid);
  return 0;
}

int
ar_pty_bind_console (int master, ar_error **err)
{
  unsigned int n;
  char src[32];
  struct stat st;
  if (ioctl (master, TIOCGPTN, &n) < 0)
    return ar_err (err, errno, "console: pty number");
  snprintf (src, sizeof src, "/dev/pts/%u", n);
  int fd = open ("/dev/console", O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0)
    close (fd);
  else if (errno != EEXIST)
    return ar_err (err, errno, "console: create /dev/console");
  if (lstat ("/dev/console", &st) < 0)
    return ar_err (err, errno, "console: stat /dev/console");
  /* Never follow the rootfs's link: the mount would land where it points. */
  if (S_ISLNK (st.st_mode) || S_ISDIR (st.st_mode))
    return ar_err (err, 0, "console: /dev/console is a %s, not a file to bind the terminal onto",
                   S_ISLNK (st.st_mode) ? "symbolic link" : "directory");
  if (mount (src, "/dev/console", NULL, MS_BIND, NULL) < 0)
    return ar_err (err, errno, "console: bind %s onto /dev/console", src);
  return 0;
}

int
ar_pty_set_size (int fd, const struct ar_console_size *sz, ar_error **err)
{
  struct winsize ws = { .ws_row = (unsigned short) sz->height, .ws_col = (unsigned short) sz->width };
  if (ioctl (fd, TIOCSWINSZ, &ws) < 0)
    return ar_err (err, errno, "set terminal size %ux%u", sz->width, sz->height);
  return 0;
}

int
ar_pty_make_stdio (int slave, ar_error **err)
{
  if (ioctl (slave, TIOCSCTTY, 0) < 0)
    return ar_err (err, errno, "make the pty the controlling terminal");
  for (int i = 0; i < 3; i++)
    if (dup3 (slave, i, 0) < 0)
      return ar_err (err, errno, "dup pty to fd %d", i);
  return 0;
}

int
ar_pty_send_eof (int master, bool line_pending, ar_error **err)
{
  struct termios t;
  /* On Linux the master reports the slave's settings: the process's own. */
  if (tcgetattr (master, &t) < 0)
    return ar_err (err, errno, "read the pty's settings to send end of input");
  char eof[2] = { (char) t.c_cc[VEOF], (char) t.c_cc[VEOF] };
  if (t.c_cc[VEOF] == _POSIX_VDISABLE)
    eof[0] = eof[1] = 4;
  size_t n = line_pending && (t.c_lflag & ICANON) ? 2 : 1;
  ssize_t w;
  do
    w = write (master, eof, n);
  while (w < 0 && errno == EINTR);
  if (w != (ssize_t) n)
    return ar_err (err, w < 0 ? errno : EIO, "send end of input (VEOF) to the pty");
  return 0;
}

int
ar_console_socket_send (const char *path, int master, ar_error **err)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  cleanup_close int s = -1;

  if (strlen (path) >= sizeof addr.sun_path)
    return ar_err (err, ENAMETOOLONG, "--console-socket %s", path);
  strcpy (addr.sun_path, path);
  s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return ar_err (err, errno, "--console-socket: socket");
  if (connect (s, (struct sockaddr *) &addr, sizeof addr) < 0)
    return ar_err (err, errno, "--console-socket: connect %s", path);
  /* runc sends the pty's name as the payload; any name will do for readers. */
  char name[64] = "/dev/ptmx";
  int n = -1;
  if (ioctl (master, TIOCGPTN, &n) == 0)
    snprintf (name, sizeof name, "/dev/pts/%d", n);
  if (ar_send_fd (s, master, name, strlen (name), err) < 0)
    return ar_err_prefix (err, "--console-socket %s", path);
  return 0;
}
