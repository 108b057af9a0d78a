/* The janitor (janitor.h). It waits on a pipe whose write end only we
 * hold (close-on-exec, and the container's pid 1 closes its copy): 'd' is
 * a dismissal, 'f' the rest of the removal handed over, an EOF without a
 * byte our death. Why a process and not a
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
#include <sys/syscall.h>
#include <unistd.h>

__attribute__ ((noreturn)) static void
janitor (int fd, int keep_fd, const struct ar_janitor_ops *ops)
{
  char b[AR_JANITOR_WORD_MAX + 2];
  ssize_t n;
  /* nothing of ours held open (a caller waiting for our stdout's EOF),
   * not the caller's working folder either (an unmount of it right after
   * we return must not find it busy: ops name what they remove by absolute
   * paths), no terminal's signals (the caller's ^C or hangup is ours);
   * keep_fd at 4, above the others */
  int nul = open ("/dev/null", O_RDWR | O_CLOEXEC);
  int keep = keep_fd >= 0 ? fcntl (keep_fd, F_DUPFD_CLOEXEC, 10) : -1;
  if (setsid () < 0 || nul < 0 || (keep_fd >= 0 && keep < 0) || dup2 (nul, 0) < 0 || dup2 (nul, 1) < 0
      || dup2 (nul, 2) < 0 || (fd != 3 && dup3 (fd, 3, O_CLOEXEC) < 0) || (keep >= 0 && dup3 (keep, 4, O_CLOEXEC) < 0)
      || syscall (SYS_close_range, keep >= 0 ? 5 : 4, ~0U, 0) < 0 || chdir ("/") < 0)
    _exit (1);
  /* one write of at most PIPE_BUF bytes: one read has it all */
  do
    n = read (3, b, sizeof b - 1);
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
ar_janitor_start (struct ar_janitor *j, const struct ar_janitor_ops *ops, int keep_fd, ar_error **err)
{
  int p[2];
  j->fd = -1;
  j->pid = -1;
  if (pipe2 (p, O_CLOEXEC) < 0)
    return ar_err (err, errno, "a pipe for the cleanup process");
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
      janitor (p[0], keep_fd, ops);
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
  if (write (j->fd, what, 1) != 1)
    kill (j->pid, SIGKILL);
  close (j->fd);
  j->fd = -1;
}

void
ar_janitor_dismiss (struct ar_janitor *j)
{
  tell (j, "d");
}

/* A failed write leaves it nothing to do but its removal after our death
 * (the EOF): a kill would leave the rest undone. */
void
ar_janitor_hand_over (struct ar_janitor *j, const char *word)
{
  char b[AR_JANITOR_WORD_MAX + 2];
  size_t len = strlen (word);
  if (j->fd < 0)
    return;
  if (len > AR_JANITOR_WORD_MAX)
    len = AR_JANITOR_WORD_MAX;
  b[0] = 'f';
  memcpy (b + 1, word, len);
  if (write (j->fd, b, len + 1) != (ssize_t) len + 1)
    ar_debug ("janitor: hand over: %s (it undoes it all at our exit)", strerror (errno));
  close (j->fd);
  j->fd = -1;
}
