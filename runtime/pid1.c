/* agentrun's own pid 1 in a container (pid1.h). Why a fork of the init
 * rather than a program exec'd as pid 1: no exec and no window in which the
 * init is dumpable or under the container's credentials; its memory map was
 * made on the host (mm->user_ns is the host's), so even a process holding
 * every capability of the container's user namespace cannot ptrace it. It
 * drops its own capabilities and takes the command's ids right after the
 * command's execve (the command's side shares its memory until then, and
 * needs those rights for its own set-up): for that moment the command can
 * see them in /proc/1/status, and reach nothing of them. */
#include "config.h"
#include "pid1.h"
#include "caps.h"
#include "signals.h"
#include "sync.h"
#include "util.h"

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

bool
ar_pid1_wanted (const struct ar_spec *spec)
{
  for (size_t i = 0; i < spec->n_annotations; i++)
    if (strcmp (spec->annotations[i].key, AR_PID1_ANNOTATION) == 0)
      return strcmp (spec->annotations[i].value, "true") == 0;
  return false;
}

static pid_t child;

/* After the fork: the command may be running already; it goes with us. */
__attribute__ ((noreturn)) static void
fail (const struct ar_pid1 *p, ar_error *err)
{
  const char *msg = err && err->msg ? err->msg : "failed";
  char buf[AR_START_REPORT_MAX];
  int n = snprintf (buf, sizeof buf, "Einit: %s", msg);
  size_t len = n < 0 ? 0 : ((size_t) n < sizeof buf ? (size_t) n : sizeof buf - 1) + 1;
  kill (child, SIGKILL);
  if (p->report_fd < 0 || write (p->report_fd, buf, len) != (ssize_t) len)
    dprintf (STDERR_FILENO, "agentrun: init: %s\n", msg);
  _exit (1);
}

/* A stop, a continue or a new window size is for the command's whole
 * process group, as a terminal sends them (to the child alone until it has
 * made that group); the rest is for the command, as `kill PID` on the host
 * (and bubblewrap) do it: the command decides what its children get. */
static void
forward (int sig)
{
  if (sig == SIGPIPE)
    return; /* about our own writes (stderr), not the command's */
  bool job = sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU || sig == SIGCONT || sig == SIGWINCH;
  pid_t g = job ? getpgid (child) : -1;
  if (kill (g == child ? -child : child, sig) < 0 && errno != ESRCH)
    dprintf (STDERR_FILENO, "agentrun: init: forward signal %d: %s\n", sig, strerror (errno));
}

/* The command ended: what is left in the namespace is killed and reaped
 * here, as the kernel would do at our exit, and only then is the status
 * told to agentrun, which may return at once (SYNC_EXITED): our exit, the
 * namespaces' teardown and the cgroup's removal then go on without it.
 * Every process left has the command's uid (one uid, no capability, no
 * privilege to gain), so kill(-1) reaches them all; each of them is, or
 * becomes as its parent dies, our child, so no child left is none left.
 * When this fails the word is not said: agentrun waits for our exit. */
static void
tell_end (const struct ar_pid1 *p, int code)
{
  pid_t w;
  if (kill (-1, SIGKILL) < 0 && errno != ESRCH)
    return;
  do
    w = waitpid (-1, NULL, __WALL);
  while (w > 0 || (w < 0 && errno == EINTR));
  if (errno != ECHILD)
    return;
  ar_sync_send (p->sock, SYNC_EXITED, code, -1, NULL, NULL);
}

/* Reap whatever ended; the command's end is ours, with its status (128+N
 * for signal N, as the shell says it): the kernel then kills what is left
 * in the namespace. A stop of the command is told to agentrun, which stops
 * too (job control at the person's terminal). */
static void
reap (const struct ar_pid1 *p)
{
  int st;
  pid_t w;
  while ((w = waitpid (-1, &st, WNOHANG | WUNTRACED | WCONTINUED)) > 0)
    {
      if (w != child || WIFCONTINUED (st))
        continue;
      if (WIFSTOPPED (st))
        {
          if (p->sock >= 0)
            ar_sync_send (p->sock, SYNC_STOPPED, WSTOPSIG (st), -1, NULL, NULL);
          continue;
        }
      int code = WIFEXITED (st) ? WEXITSTATUS (st) : 128 + WTERMSIG (st);
      if (p->sock >= 0)
        tell_end (p, code);
      _exit (code);
    }
  if (w < 0 && errno != ECHILD && errno != EINTR)
    {
      ar_error *err = NULL;
      ar_err (&err, errno, "waitpid");
      fail (p, err);
    }
}

/* Nothing to hold but the socket to agentrun (moved to fd 3) and stderr. */
static int
keep_fds (const struct ar_pid1 *p, ar_error **err)
{
  int from = 3;
  if (p->sock >= 0)
    {
      if (p->sock != 3 && dup3 (p->sock, 3, O_CLOEXEC) < 0)
        return ar_err (err, errno, "dup the socket to agentrun");
      from = 4;
    }
  if (syscall (SYS_close_range, from, ~0U, 0) < 0 || close (STDIN_FILENO) < 0 || close (STDOUT_FILENO) < 0)
    return ar_err (err, errno, "close the command's files");
  return 0;
}

/* The command's ids (so that it may signal it without CAP_KILL), no
 * capability, no privilege to gain, not dumpable, the parent-death signal
 * last (a change of ids clears it): the command cannot undo any of it,
 * since it cannot reach us. The bounding set first: that needs
 * CAP_SETPCAP, which a change to a non-zero uid takes away. */
static int
harden (const struct ar_pid1 *p, ar_error **err)
{
  prctl (PR_SET_NAME, "agentrun-init", 0, 0, 0);
  if (ar_caps_drop_bounding (NULL, err) < 0)
    return -1;
  /* setgroups is denied where a user namespace has setgroups=deny */
  if (setgroups (0, NULL) < 0 && errno != EPERM)
    return ar_err (err, errno, "setgroups");
  if (setresgid (p->gid, p->gid, p->gid) < 0 || setresuid (p->uid, p->uid, p->uid) < 0)
    return ar_err (err, errno, "take the command's uid %u gid %u", p->uid, p->gid);
  if (ar_caps_apply (NULL, err) < 0)
    return -1;
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    return ar_err (err, errno, "prctl");
  if (!p->die_with_parent)
    return 0;
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    return ar_err (err, errno, "prctl PR_SET_PDEATHSIG");
  /* that parent holds the socket's other end, or reads exec.fifo: a
   * hangup, or no reader left, and it died before we asked */
  struct pollfd pf = { .fd = p->sock >= 0 ? p->sock : p->report_fd, .events = p->sock >= 0 ? 0 : POLLOUT };
  if (pf.fd >= 0 && poll (&pf, 1, 0) == 1 && (pf.revents & (POLLERR | POLLHUP)))
    return ar_err (err, ESRCH, "the agentrun that runs the container is gone");
  return 0;
}

__attribute__ ((noreturn)) static void
pid1_main (struct ar_pid1 me, const sigset_t *set)
{
  ar_error *err = NULL;
  if (me.spawned && me.spawned (me.spawned_data, &err) < 0)
    fail (&me, err);
  /* `start` waits for exec.fifo's EOF: with the socket to agentrun for the
   * check in harden, ours closes at once (pid 1 is then off the start's
   * path), and a failure after is told on stderr, the container's status
   * then 1; else it closes last, so that a failure is start's error */
  if (me.report_fd >= 0 && (me.sock >= 0 || !me.die_with_parent))
    {
      close (me.report_fd);
      me.report_fd = -1;
    }
  if (harden (&me, &err) < 0 || keep_fds (&me, &err) < 0)
    fail (&me, err);
  me.report_fd = -1;
  me.sock = me.sock >= 0 ? 3 : -1;
  int sfd = signalfd (-1, set, SFD_CLOEXEC);
  if (sfd < 0)
    ar_err (&err, errno, "signalfd"), fail (&me, err);
  for (reap (&me);;)
    {
      struct signalfd_siginfo si;
      ssize_t n = read (sfd, &si, sizeof si);
      if (n < 0 && errno == EINTR)
        continue;
      if (n != (ssize_t) sizeof si)
        ar_err (&err, n < 0 ? errno : EIO, "read signalfd"), fail (&me, err);
      if (si.ssi_signo == SIGCHLD)
        reap (&me);
      else
        forward ((int) si.ssi_signo);
    }
}

/* The child: its own process group, the terminal's foreground when there
 * is one (SIGTTOU is blocked here: the group is in the background until
 * this call), then the signal mask the command starts with. */
static int
command_side (const struct ar_pid1 *p, const sigset_t *old, ar_error **err)
{
  if (setpgid (0, 0) < 0)
    return ar_err (err, errno, "setpgid for the command");
  if (p->terminal && tcsetpgrp (STDIN_FILENO, getpid ()) < 0)
    return ar_err (err, errno, "make the command the terminal's foreground");
  if (sigprocmask (SIG_SETMASK, old, NULL) < 0)
    return ar_err (err, errno, "sigprocmask");
  return 0;
}

/* The command's side runs on a stack of its own: it shares our memory
 * (CLONE_VM) while we wait, suspended, for its execve or its exit. */
#define CMD_STACK_SIZE (1024 * 1024)

struct spawned {
  const struct ar_pid1 *p;
  sigset_t old;
  void (*cmd) (void *, ar_error *);
  void *arg;
};

static int
spawned_main (void *data)
{
  struct spawned *s = data;
  ar_error *err = NULL;
  if (command_side (s->p, &s->old, &err) < 0)
    s->cmd (s->arg, err);
  else
    s->cmd (s->arg, NULL);
  _exit (1);
}

int
ar_pid1_fork (const struct ar_pid1 *p, void (*cmd) (void *, ar_error *), void *arg, ar_error **err)
{
  struct spawned s = { .p = p, .cmd = cmd, .arg = arg };
  sigset_t set;
  /* blocked before the clone: nothing sent to us between it and our
   * signalfd is lost (pid 1 ignores what it has no handler for) */
  if (ar_signals_block (&s.old, err) < 0)
    return -1;
  if (sigprocmask (SIG_BLOCK, NULL, &set) < 0)
    return ar_err (err, errno, "sigprocmask");
  long page = sysconf (_SC_PAGESIZE);
  char *stack = mmap (NULL, CMD_STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED)
    return ar_err (err, errno, "a stack for the command's side");
  /* its lowest page a guard: an overflow faults instead of writing into
   * whatever lies below */
  if (mprotect (stack, (size_t) page, PROT_NONE) < 0)
    return ar_err (err, errno, "the guard page of the command's stack");
  /* as posix_spawn: no copy of the init's memory to make, to fault in page
   * by page and to tear down at the execve, on the start's path */
  child = clone (spawned_main, stack + CMD_STACK_SIZE, CLONE_VM | CLONE_VFORK | SIGCHLD, &s);
  if (child < 0)
    return ar_err (err, errno, "start the command off the init");
  munmap (stack, CMD_STACK_SIZE);
  pid1_main (*p, &set);
}
