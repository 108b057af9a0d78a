/* The janitor (janitor.h). It waits on a socket whose other end only we
 * hold (close-on-exec, and the container's pid 1 closes its copy): 'd' is
 * a dismissal, 'f' the rest of the removal handed over (with the files it
 * is to let go), an EOF without a byte our death. A seqpacket socket: one
 * message is one read, with its files. Why a process and not a
 * cleanup at the next start: what a killed run leaves (a state folder,
 * a bundle with the agent's command line) should not wait for one. */
#include "config.h"
#include "janitor.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__ ((noreturn)) static void
janitor (int fd, const struct ar_janitor_ops *ops)
{
  char b[AR_JANITOR_WORD_MAX + 2];
  ssize_t n;
  /* nothing of ours held open (a caller waiting for our stdout's EOF),
   * no terminal's signals (the caller's ^C or hangup is ours to act on) */
  int nul = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (setsid () < 0 || nul < 0 || dup2 (nul, 0) < 0 || dup2 (nul, 1) < 0 || dup2 (nul, 2) < 0
      || (fd != 3 && dup3 (fd, 3, O_CLOEXEC) < 0) || syscall (SYS_close_range, 4, ~0U, 0) < 0)
    _exit (1);
  /* the files come close-on-exec, and are let go at our _exit: after the
   * rest, as nothing waits for them */
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE (AR_JANITOR_FDS_MAX * sizeof (int))];
  } c;
  struct iovec iov = { b, sizeof b - 1 };
  struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf, .msg_controllen = sizeof c.buf };
  do
    n = recvmsg (3, &m, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n == 0)
    ops->undo (ops->data);
  else if (n > 0 && b[0] == 'f')
    {
      b[n] = '\0';
      ops->finish (ops->data, b + 1);
    }
  _exit (0);
}

int
ar_janitor_start (struct ar_janitor *j, const struct ar_janitor_ops *ops, ar_error **err)
{
  int p[2];
  j->fd = -1;
  j->pid = -1;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p) < 0)
    return ar_err (err, errno, "a socket for the cleanup process");
  pid_t pid = fork ();
  if (pid < 0)
    {
      int e = errno;
      close (p[0]);
      close (p[1]);
      return ar_err (err, e, "fork the cleanup process");
    }
  if (pid == 0)
    {
      close (p[1]);
      janitor (p[0], ops);
    }
  close (p[0]);
  j->fd = p[1];
  j->pid = pid;
  return 0;
}

static void
tell (struct ar_janitor *j, const char *what)
{
  if (j->fd < 0)
    return;
  if (send (j->fd, what, 1, MSG_NOSIGNAL) != 1)
    kill (j->pid, SIGKILL);
  close (j->fd);
  j->fd = -1;
}

void
ar_janitor_dismiss (struct ar_janitor *j)
{
  tell (j, "d");
}

/* A failed send leaves it nothing to do but its removal after our death
 * (the EOF): a kill would leave the rest undone. The files beyond what one
 * message carries stay ours, closed by the caller. */
void
ar_janitor_hand_over (struct ar_janitor *j, const char *word, const int *fds, size_t n_fds)
{
  char b[AR_JANITOR_WORD_MAX + 2];
  size_t len = strlen (word);
  if (j->fd < 0)
    return;
  if (len > AR_JANITOR_WORD_MAX)
    len = AR_JANITOR_WORD_MAX;
  if (n_fds > AR_JANITOR_FDS_MAX)
    n_fds = AR_JANITOR_FDS_MAX;
  b[0] = 'f';
  memcpy (b + 1, word, len);
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE (AR_JANITOR_FDS_MAX * sizeof (int))];
  } c;
  struct iovec iov = { b, len + 1 };
  struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
  if (n_fds > 0)
    {
      m.msg_control = c.buf;
      m.msg_controllen = CMSG_SPACE (n_fds * sizeof (int));
      struct cmsghdr *h = CMSG_FIRSTHDR (&m);
      h->cmsg_level = SOL_SOCKET;
      h->cmsg_type = SCM_RIGHTS;
      h->cmsg_len = CMSG_LEN (n_fds * sizeof (int));
      memcpy (CMSG_DATA (h), fds, n_fds * sizeof (int));
    }
  if (sendmsg (j->fd, &m, MSG_NOSIGNAL) != (ssize_t) len + 1)
    ar_debug ("janitor: hand over: %s (it undoes it all at our exit)", strerror (errno));
  close (j->fd);
  j->fd = -1;
}
