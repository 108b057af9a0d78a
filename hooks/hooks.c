/* Running one stage of OCI hooks. Each hook is forked and executed with its
 * path, args and env exactly as given (args[0] is argv[0]); the container
 * state JSON is written to its stdin through a pipe; its stdout and stderr are
 * read through a pipe and logged line by line (so a JSON log stays JSON); a timeout kills it with SIGKILL. Hooks run
 * one after another in listed order and the first failure stops the stage. */
#include "config.h"
#include "hooks.h"
#include "log.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static const char *const stage_names[AR_HOOK_N_STAGES] = {
  "prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop",
};

/* One hook to run: where its executable is, and what it gets. */
struct job {
  const struct ar_hook *h;
  const char *stage;
  int exec_fd; /* -1: execve(h->path) */
  char **argv, **envp; /* NULL-terminated, built before fork */
};

static char **
strv_dup (char *const *v, size_t n, const char *first_if_empty)
{
  char **r = xmalloc0 (sizeof (char *) * (n + 2));
  size_t i;
  if (n == 0 && first_if_empty)
    r[0] = (char *) first_if_empty;
  for (i = 0; i < n; i++)
    r[i] = v[i];
  return r;
}

/* In the child: only async-signal-safe calls from here to exec. */
static void __attribute__ ((noreturn)) child_exec (const struct job *j, int in_fd, int out_fd, int err_pipe)
{
  sigset_t none;
  int in, out, ex = -1, e, s;

  for (s = 1; s < NSIG; s++)
    signal (s, SIG_DFL); /* fails harmlessly for SIGKILL, SIGSTOP, 32, 33 */
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  setpgid (0, 0); /* a timeout kills what the hook started, too */
  /* Move everything we keep above the stdio numbers before dup2 onto them. */
  in = fcntl (in_fd, F_DUPFD_CLOEXEC, 10);
  out = fcntl (out_fd, F_DUPFD_CLOEXEC, 10);
  e = fcntl (err_pipe, F_DUPFD_CLOEXEC, 10);
  if (j->exec_fd >= 0)
    ex = fcntl (j->exec_fd, F_DUPFD_CLOEXEC, 10);
  if (in < 0 || out < 0 || e < 0 || (j->exec_fd >= 0 && ex < 0) || dup2 (in, 0) < 0 || dup2 (out, 1) < 0
      || dup2 (out, 2) < 0 || dup3 (e, 3, O_CLOEXEC) < 0 || (ex >= 0 && dup3 (ex, 4, O_CLOEXEC) < 0))
    goto fail;
  /* Nothing the runtime opened reaches the hook but stdio. */
  if (syscall (SYS_close_range, ex >= 0 ? 5 : 4, ~0U, 0) < 0)
    goto fail;
  if (ex < 0)
    execve (j->h->path, j->argv, j->envp);
  else
    {
      syscall (SYS_execveat, 4, "", j->argv, j->envp, AT_EMPTY_PATH);
      /* A script run through an fd gets /dev/fd/4 as its path, which the
       * kernel refuses (ENOENT) while the fd is close-on-exec: keep it open. */
      if (errno == ENOENT && fcntl (4, F_SETFD, 0) == 0)
        syscall (SYS_execveat, 4, "", j->argv, j->envp, AT_EMPTY_PATH);
    }
fail:
  e = errno;
  if (write (3, &e, sizeof e) < 0)
    _exit (126);
  _exit (127);
}

static long
ms_left (const struct timespec *deadline)
{
  struct timespec now;
  long ms;
  clock_gettime (CLOCK_MONOTONIC, &now);
  ms = (deadline->tv_sec - now.tv_sec) * 1000L + (deadline->tv_nsec - now.tv_nsec) / 1000000L;
  return ms < 0 ? 0 : ms;
}

/* The hook's output, a line at a time, into the runtime's log: with
 * --log-format json each line must become a JSON object, never raw bytes. */
struct outbuf {
  char buf[4096];
  size_t len;
};

static void
out_flush (struct outbuf *o, const struct job *j, bool all)
{
  char *start = o->buf, *nl;
  while ((nl = memchr (start, '\n', o->len - (size_t) (start - o->buf))) || (all && start < o->buf + o->len))
    {
      size_t n = nl ? (size_t) (nl - start) : o->len - (size_t) (start - o->buf);
      ar_log (AR_LOG_INFO, "hook %s (%s): %.*s", j->h->path, j->stage, (int) n, start);
      start += n + (nl ? 1 : 0);
    }
  o->len -= (size_t) (start - o->buf);
  memmove (o->buf, start, o->len);
  if (o->len == sizeof o->buf) /* a line longer than the buffer: log it in pieces */
    out_flush (o, j, true);
}

/* Read what is there; close the pipe at EOF. */
static void
out_read (int *out_r, struct outbuf *o, const struct job *j)
{
  for (;;)
    {
      ssize_t r = read (*out_r, o->buf + o->len, sizeof o->buf - o->len);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        {
          if (r == 0 || errno != EAGAIN)
            ar_closep (out_r);
          return;
        }
      o->len += (size_t) r;
      out_flush (o, j, false);
    }
}

/* Feed stdin, log the output and wait for the exit (or the deadline). Returns
 * 0 when it exited (status in *si), 1 on timeout, -1 on error. */
static int
supervise (int pidfd, int *in_w, int *out_r, const char *state, const struct job *j, siginfo_t *si, ar_error **err)
{
  size_t off = 0, len = strlen (state);
  struct timespec deadline;
  bool timed = j->h->has_timeout && j->h->timeout > 0;
  struct outbuf o = { .len = 0 };
  int rc;

  clock_gettime (CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += timed ? j->h->timeout : 0;
  for (;;)
    {
      struct pollfd p[3] = { { pidfd, POLLIN, 0 }, { *out_r, POLLIN, 0 }, { *in_w, POLLOUT, 0 } };
      int n = poll (p, 3, timed ? (int) ms_left (&deadline) : -1);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          rc = ar_err (err, errno, "hook %s (%s): poll", j->h->path, j->stage);
          break;
        }
      if (n == 0)
        {
          rc = 1;
          break;
        }
      if (*out_r >= 0 && p[1].revents)
        out_read (out_r, &o, j);
      if (*in_w >= 0 && p[2].revents)
        {
          ssize_t w = write (*in_w, state + off, len - off);
          if (w > 0)
            off += (size_t) w;
          /* EPIPE: the hook does not read its stdin, which is its right. */
          if ((w < 0 && errno != EAGAIN && errno != EINTR) || off == len)
            ar_closep (in_w);
        }
      if (p[0].revents & POLLIN)
        {
          memset (si, 0, sizeof *si);
          if (syscall (SYS_waitid, P_PIDFD, pidfd, si, WEXITED, NULL) < 0)
            rc = ar_err (err, errno, "hook %s (%s): waitid", j->h->path, j->stage);
          else
            rc = 0;
          break;
        }
    }
  /* What the hook wrote before it exited (a child it left behind may still
   * hold the pipe: take only what is there now). */
  if (*out_r >= 0)
    out_read (out_r, &o, j);
  out_flush (&o, j, true);
  return rc;
}

static int
report (const struct job *j, int rc, const siginfo_t *si, int err_pipe, ar_error **err)
{
  int exec_errno = 0;

  if (rc == 1)
    return ar_err (err, 0, "hook %s (%s) timed out after %d s and was killed", j->h->path, j->stage, j->h->timeout);
  if (read (err_pipe, &exec_errno, sizeof exec_errno) == (ssize_t) sizeof exec_errno)
    return ar_err (err, exec_errno, "hook %s (%s): exec", j->h->path, j->stage);
  if (si->si_code == CLD_EXITED && si->si_status == 0)
    return 0;
  if (si->si_code == CLD_EXITED)
    return ar_err (err, 0, "hook %s (%s) exited with status %d", j->h->path, j->stage, si->si_status);
  /* lower case, as runc words it ("signal: bad system call") */
  char name[64];
  snprintf (name, sizeof name, "%s", strsignal (si->si_status));
  name[0] = (char) tolower ((unsigned char) name[0]);
  return ar_err (err, 0, "hook %s (%s) was killed by signal %d (signal: %s)", j->h->path, j->stage, si->si_status, name);
}

/* SIGPIPE stays blocked while we write the state, then a pending one that we
 * caused is consumed so it never reaches the runtime. */
static int
run_job (const struct job *j, const char *state, ar_error **err)
{
  cleanup_close int in_r = -1, in_w = -1, ep_r = -1, ep_w = -1, out_r = -1, out_w = -1, pidfd = -1;
  int pipes[2], rc;
  sigset_t pipe_set, old, pending;
  bool was_pending;
  siginfo_t si;
  pid_t pid;

  if (pipe2 (pipes, O_CLOEXEC) < 0)
    return ar_err (err, errno, "hook %s (%s): pipe for stdin", j->h->path, j->stage);
  in_r = pipes[0], in_w = pipes[1];
  if (pipe2 (pipes, O_CLOEXEC) < 0)
    return ar_err (err, errno, "hook %s (%s): pipe", j->h->path, j->stage);
  ep_r = pipes[0], ep_w = pipes[1];
  if (pipe2 (pipes, O_CLOEXEC) < 0)
    return ar_err (err, errno, "hook %s (%s): pipe for output", j->h->path, j->stage);
  out_r = pipes[0], out_w = pipes[1];
  if (fcntl (out_r, F_SETFL, O_NONBLOCK) < 0)
    return ar_err (err, errno, "hook %s (%s): output pipe", j->h->path, j->stage);
  sigemptyset (&pipe_set);
  sigaddset (&pipe_set, SIGPIPE);
  sigprocmask (SIG_BLOCK, &pipe_set, &old);
  sigpending (&pending);
  was_pending = sigismember (&pending, SIGPIPE);
  ar_debug ("hook %s (%s): running", j->h->path, j->stage);
  pid = fork ();
  if (pid < 0)
    rc = ar_err (err, errno, "hook %s (%s): fork", j->h->path, j->stage);
  else if (pid == 0)
    child_exec (j, in_r, out_w, ep_w);
  else
    {
      ar_closep (&in_r);
      ar_closep (&ep_w);
      ar_closep (&out_w);
      pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
      if (pidfd < 0)
        {
          rc = ar_err (err, errno, "hook %s (%s): pidfd_open", j->h->path, j->stage);
          kill (pid, SIGKILL);
          waitpid (pid, NULL, 0);
        }
      else if (fcntl (in_w, F_SETFL, O_NONBLOCK) < 0)
        rc = ar_err (err, errno, "hook %s (%s): stdin pipe", j->h->path, j->stage);
      else
        rc = supervise (pidfd, &in_w, &out_r, state, j, &si, err);
      if (rc != 0 && pidfd >= 0)
        {
          /* Timeout or error: kill its process group (the pgid is the unreaped
           * hook's pid, so it cannot have been reused), then reap it. */
          kill (-pid, SIGKILL);
          syscall (SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
          syscall (SYS_waitid, P_PIDFD, pidfd, &si, WEXITED, NULL);
        }
      if (rc >= 0)
        rc = report (j, rc, &si, ep_r, err);
    }
  ar_closep (&in_w);
  if (!was_pending)
    {
      struct timespec zero = { 0, 0 };
      sigpending (&pending);
      if (sigismember (&pending, SIGPIPE))
        sigtimedwait (&pipe_set, NULL, &zero);
    }
  sigprocmask (SIG_SETMASK, &old, NULL);
  return rc;
}

static int
run_stage (const struct ar_hooks *hooks, enum ar_hook_stage stage, const int *fds, const char *state_json, ar_error **err)
{
  size_t i;

  if ((unsigned) stage >= AR_HOOK_N_STAGES)
    return ar_err (err, EINVAL, "hooks: unknown stage %d", (int) stage);
  for (i = 0; i < hooks->n[stage]; i++)
    {
      const struct ar_hook *h = &hooks->stage[stage][i];
      struct job j = { h, stage_names[stage], fds ? fds[i] : -1, NULL, NULL };
      int rc;

      j.argv = strv_dup (h->args, h->n_args, h->path);
      j.envp = strv_dup (h->env, h->n_env, NULL);
      rc = run_job (&j, state_json ? state_json : "", err);
      free (j.argv);
      free (j.envp);
      if (rc < 0)
        return ar_err_prefix (err, "error running hook #%zu", i);
    }
  return 0;
}

int
ar_hooks_run (const struct ar_hooks *hooks, enum ar_hook_stage stage, const char *state_json, ar_error **err)
{
  return run_stage (hooks, stage, NULL, state_json, err);
}

int
ar_hooks_open (const struct ar_hooks *hooks, enum ar_hook_stage stage, struct ar_hook_fds *out, ar_error **err)
{
  size_t i;

  out->fds = NULL;
  out->n = 0;
  if ((unsigned) stage >= AR_HOOK_N_STAGES)
    return ar_err (err, EINVAL, "hooks: unknown stage %d", (int) stage);
  if (hooks->n[stage] == 0)
    return 0;
  out->fds = xmalloc0 (sizeof (int) * hooks->n[stage]);
  for (i = 0; i < hooks->n[stage]; i++)
    {
      const char *path = hooks->stage[stage][i].path;
      int fd;

      /* startContainer paths resolve in the container (runtime-spec): -1
       * makes ar_hooks_run_fds execve the path where it runs, after pivot_root. */
      if (stage == AR_HOOK_START_CONTAINER)
        {
          out->fds[out->n++] = -1;
          continue;
        }
      fd = open (path, O_PATH | O_CLOEXEC);
      if (fd < 0)
        {
          int e = errno;
          ar_hook_fds_close (out);
          return ar_err (err, e, "hook %s (%s): open", path, stage_names[stage]);
        }
      out->fds[out->n++] = fd;
    }
  return 0;
}

int
ar_hooks_run_fds (const struct ar_hooks *hooks, enum ar_hook_stage stage, const struct ar_hook_fds *fds,
                  const char *state_json, ar_error **err)
{
  if ((unsigned) stage >= AR_HOOK_N_STAGES)
    return ar_err (err, EINVAL, "hooks: unknown stage %d", (int) stage);
  if (fds->n != hooks->n[stage])
    return ar_err (err, EINVAL, "hooks (%s): %zu opened executables for %zu hooks", stage_names[stage], fds->n,
                   hooks->n[stage]);
  return run_stage (hooks, stage, fds->fds, state_json, err);
}

void
ar_hook_fds_close (struct ar_hook_fds *f)
{
  size_t i;
  for (i = 0; i < f->n; i++)
    if (f->fds[i] >= 0)
      close (f->fds[i]);
  free (f->fds);
  f->fds = NULL;
  f->n = 0;
}
