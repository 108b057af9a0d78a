/* The janitor (janitor.h). It waits on a pipe whose write end only we
 * hold (close-on-exec, and the container's pid 1 closes its copy): a byte
 * is a dismissal, an EOF without one our death. Why a process and not a
 * cleanup at the next start: what a killed run leaves (a state folder,
 * a bundle with the agent's command line) should not wait for one. */
#include "config.h"
#include "janitor.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__ ((noreturn)) static void
janitor (int fd, void (*undo) (void *), void *data)
{
  char b;
  ssize_t n;
  /* nothing of ours held open (a caller waiting for our stdout's EOF),
   * no terminal's signals (the caller's ^C or hangup is ours to act on) */
  int nul = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (setsid () < 0 || nul < 0 || dup2 (nul, 0) < 0 || dup2 (nul, 1) < 0 || dup2 (nul, 2) < 0
      || (fd != 3 && dup3 (fd, 3, O_CLOEXEC) < 0) || syscall (SYS_close_range, 4, ~0U, 0) < 0)
    _exit (1);
  do
    n = read (3, &b, 1);
  while (n < 0 && errno == EINTR);
  if (n == 0)
    undo (data);
  _exit (0);
}

int
ar_janitor_start (struct ar_janitor *j, void (*undo) (void *), void *data, ar_error **err)
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
      janitor (p[0], undo, data);
    }
  close (p[0]);
  j->fd = p[1];
  j->pid = pid;
  return 0;
}

void
ar_janitor_dismiss (struct ar_janitor *j)
{
  if (j->fd < 0)
    return;
  if (write (j->fd, "d", 1) != 1)
    kill (j->pid, SIGKILL);
  close (j->fd);
  j->fd = -1;
}
