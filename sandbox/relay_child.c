/* The sandbox's relay children: see relay_child.h. */
#include "config.h"
#include "relay_child.h"
#include "clock.h"
#include "sandbox.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* In the child, before exec: only async-signal-safe calls. */
static void
relay_child_exec (const char *relay, char *const *argv, const char *errlog, int audit_fd, pid_t parent)
{
  sigset_t none;
  setpgid (0, 0);
  if (prctl (PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid () != parent)
    _exit (127);
  int nul = open ("/dev/null", O_RDWR | O_CLOEXEC);
  int log = open (errlog, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (nul < 0 || log < 0 || dup2 (nul, 0) < 0 || dup2 (nul, 1) < 0 || dup2 (log, 2) < 0)
    _exit (127);
  if (audit_fd >= 0
      && (audit_fd == AR_RELAY_AUDIT_FD ? fcntl (audit_fd, F_SETFD, 0) : dup2 (audit_fd, AR_RELAY_AUDIT_FD)) < 0)
    _exit (127);
  /* the sandbox holds INT, TERM and HUP blocked while it runs: the relay
   * must see the TERM that stops it */
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  execv (relay, argv);
  dprintf (2, "agentrun sandbox: exec %s: %s\n", relay, strerror (errno));
  _exit (127);
}

int
ar_relay_start (const struct ar_sandbox *sb, const char *dir, const char *errlog, char *const *extra, pid_t *pid,
                ar_error **err)
{
  cleanup_free char *relay = ar_sandbox_find_helper ("agentrun-relay", err);
  if (!relay)
    return -1;
  size_t n_extra = 0, n = 0;
  while (extra[n_extra])
    n_extra++;
  char **argv = xmalloc0 ((n_extra + 16) * sizeof *argv);
  argv[n++] = xstrdup ("agentrun-relay");
  argv[n++] = xstrdup ("--dir");
  argv[n++] = xstrdup (dir);
  argv[n++] = xstrdup ("--container");
  argv[n++] = xstrdup (sb->id);
  argv[n++] = xstrdup ("--grace"); /* the container is gone when we stop it */
  argv[n++] = xstrdup ("1");
  /* held connections must not run the relay out of fds */
  argv[n++] = xstrdup ("--max-conns");
  argv[n++] = xasprintf ("%llu", sb->net_max_conns);
  argv[n++] = xstrdup ("--idle-timeout");
  argv[n++] = xasprintf ("%llu", sb->net_idle_timeout);
  if (sb->audit_fd >= 0)
    {
      argv[n++] = xstrdup ("--audit-fd");
      argv[n++] = xasprintf ("%d", AR_RELAY_AUDIT_FD);
    }
  for (size_t i = 0; i < n_extra; i++)
    argv[n++] = xstrdup (extra[i]);
  pid_t parent = getpid ();
  *pid = fork ();
  if (*pid == 0)
    relay_child_exec (relay, argv, errlog, sb->audit_fd, parent);
  int saved = errno;
  for (size_t i = 0; i < n; i++)
    free (argv[i]);
  free (argv);
  if (*pid < 0)
    return ar_err (err, saved, "fork for agentrun-relay");
  return 0;
}

int
ar_relay_wait (pid_t *pid, const char *errlog, char *const *socks, size_t n, ar_error **err)
{
  long long deadline = ar_now_ms () + AR_RELAY_WAIT_MS;
  for (;;)
    {
      size_t ready = 0;
      int st;
      for (size_t i = 0; i < n; i++)
        {
          struct stat sst;
          if (lstat (socks[i], &sst) == 0 && S_ISSOCK (sst.st_mode))
            ready++;
        }
      if (ready == n)
        return 0;
      if (waitpid (*pid, &st, WNOHANG) == *pid)
        {
          char msg[512] = "";
          cleanup_close int fd = open (errlog, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
          ssize_t got = fd >= 0 ? read (fd, msg, sizeof msg - 1) : 0;
          msg[got > 0 ? got : 0] = '\0';
          msg[strcspn (msg, "\n")] = '\0';
          *pid = -1;
          return ar_err (err, 0, "agentrun-relay exited (status %d) before its sockets were ready: %s",
                         WIFEXITED (st) ? WEXITSTATUS (st) : 128 + WTERMSIG (st), msg);
        }
      if (ar_now_ms () > deadline)
        return ar_err (err, ETIMEDOUT, "agentrun-relay sockets in %s", n ? socks[0] : "(none)");
      usleep (2000);
    }
}

void
ar_relay_stop (pid_t *pid)
{
  if (*pid <= 0)
    return;
  kill (*pid, SIGTERM);
  long long deadline = ar_now_ms () + AR_RELAY_STOP_MS;
  int st;
  while (waitpid (*pid, &st, WNOHANG) == 0)
    {
      if (ar_now_ms () > deadline)
        {
          kill (*pid, SIGKILL);
          waitpid (*pid, &st, 0);
          break;
        }
      usleep (5000);
    }
  *pid = -1;
}
