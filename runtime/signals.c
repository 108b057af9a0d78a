/* Signal forwarding and the foreground wait loop. */
#include "config.h"
#include "signals.h"
#include "clock.h"
#include "strio.h"
#include "log.h"
#include "sync.h"
#include "terminal.h"
#include "util.h"

#include <fcntl.h>
#include <stdbool.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>

static void
forwardable (sigset_t *set)
{
  sigfillset (set);
  sigdelset (set, SIGKILL);
  sigdelset (set, SIGSTOP);
  /* Faults in the runtime itself must stay fatal. */
  sigdelset (set, SIGSEGV);
  sigdelset (set, SIGBUS);
  sigdelset (set, SIGILL);
  sigdelset (set, SIGFPE);
  sigdelset (set, SIGABRT);
  sigdelset (set, SIGSYS);
}

int
ar_signals_block (sigset_t *old, ar_error **err)
{
  sigset_t set;
  forwardable (&set);
  if (sigprocmask (SIG_BLOCK, &set, old) < 0)
    return ar_err (err, errno, "sigprocmask");
  return 0;
}

void
ar_signals_reset (void)
{
  sigset_t empty;
  for (int s = 1; s < NSIG; s++)
    if (s != SIGKILL && s != SIGSTOP)
      signal (s, SIG_DFL);
  sigemptyset (&empty);
  sigprocmask (SIG_SETMASK, &empty, NULL);
}

struct relay {
  int master;
  int in; /* stdin, or a non-blocking reopening of it when it is a tty */
  int in_to; /* where stdin goes: the master, the command's stdin pipe, or -1 */
  bool in_open; /* stdin still readable */
  bool in_tty; /* stdin is a terminal (a hung-up one no longer says so) */
  int out[2]; /* to our stdout and stderr: the master alone, or the command's pipes */
  bool raw;
  struct termios saved;
  char last_in; /* last byte relayed from stdin (0: none yet) */
  struct ar_fg_pipes *pipes;
  long long cont_again; /* ms: SIGCONT the command once more then (0: not) */
};

/* A program that stops itself may take the SIGCONT that resumes it before
 * its handler for it is in place: Claude Code asks for SIGCONT, then
 * kill(0, SIGTSTP), and in 6 of 48 resumes here its terminal stayed in
 * cooked mode, the TUI dead to keys, until another SIGCONT (none lost in
 * 48 with one sent 100 ms after the first). To a running process SIGCONT
 * only runs its handler: one more is sent after a resume. */
#define CONT_AGAIN_MS 100

static void
copy_winsize (int master)
{
  struct winsize ws;
  /* A 0x0 terminal (no size known) must not override consoleSize. */
  if (master >= 0 && ioctl (STDIN_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col)
    ioctl (master, TIOCSWINSZ, &ws);
}

static void
make_raw (struct relay *r)
{
  if (r->master < 0 || !isatty (STDIN_FILENO) || tcgetattr (STDIN_FILENO, &r->saved) < 0)
    return;
  struct termios t = r->saved;
  cfmakeraw (&t);
  if (tcsetattr (STDIN_FILENO, TCSANOW, &t) == 0)
    r->raw = true;
}

static void
relay_start (struct relay *r, int master, struct ar_fg_pipes *pipes)
{
  memset (r, 0, sizeof *r);
  r->master = master;
  r->in = STDIN_FILENO;
  r->in_to = r->out[0] = r->out[1] = -1;
  r->pipes = pipes;
  if (master >= 0)
    r->in_to = r->out[0] = master;
  else if (pipes)
    {
      r->in_to = pipes->in;
      r->out[0] = pipes->out;
      r->out[1] = pipes->err;
    }
  r->in_open = r->in_to >= 0;
  r->in_tty = isatty (STDIN_FILENO);
  /* Someone else may read the same terminal between our poll and our read
   * (sandbox --ask stops us, asks, and reads the answer): a blocking read
   * would then wait for the next keystroke with the container's output
   * unrelayed. A fresh open file description of our own can be made
   * non-blocking without touching the caller's (the shell's) stdin. */
  if (r->in_open && isatty (STDIN_FILENO))
    {
      int fd = open ("/proc/self/fd/0", O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
      if (fd >= 0)
        r->in = fd;
    }
  make_raw (r);
  copy_winsize (master);
}

static void
restore_mode (struct relay *r)
{
  if (r->raw)
    tcsetattr (STDIN_FILENO, TCSANOW, &r->saved);
  r->raw = false;
}

static void
relay_stop (struct relay *r)
{
  restore_mode (r);
  if (r->in != STDIN_FILENO)
    close (r->in);
  r->in = STDIN_FILENO;
}

/* Move one buffer from -> to; false when from is done. *last (if given)
 * gets the last byte moved. */
static bool
pump (int from, int to, char *last)
{
  char buf[8192];
  ssize_t n = read (from, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return true;
  if (n <= 0)
    return false;
  if (last)
    *last = buf[n - 1];
  return ar_write_all (to, buf, (size_t) n) == 0;
}

/* End of our stdin. From a pipe or a file, the process on the pty would
 * never learn of it (the master stays open for its output): send ^D, as a
 * user would type it. A tty's end is a hangup, not input: in raw mode a
 * read ends only so, and no SIGHUP may come with it (su -c runs us in a
 * session of our own; a shell that ignores SIGTERM outlives the terminal):
 * the command's terminal is ours, so we hang it up as the kernel would, a
 * SIGHUP, with the grace and SIGKILL of any SIGHUP we pass on. The
 * command's stdin pipe is closed: its end of input. */
static void
stdin_ended (struct relay *r, int pidfd, const struct ar_fg_ops *ops)
{
  r->in_open = false;
  cleanup_error ar_error *err = NULL;
  if (r->master < 0)
    {
      close (r->in_to);
      r->pipes->in = r->in_to = -1;
    }
  else if (r->in_tty)
    {
      if (r->raw && syscall (SYS_pidfd_send_signal, pidfd, SIGHUP, NULL, 0) == 0 && ops && ops->signalled)
        ops->signalled (ops->data, SIGHUP);
    }
  else if (ar_pty_send_eof (r->master, r->last_in != 0 && r->last_in != '\n', &err) < 0)
    ar_warn ("terminal: %s", err->msg);
}

/* What the command wrote before it ended; its writers are gone, so what is
 * there is all there is. */
static void
drain (struct relay *r)
{
  for (int i = 0; i < 2; i++)
    {
      if (r->out[i] < 0)
        continue;
      int fl = fcntl (r->out[i], F_GETFL);
      if (fl >= 0)
        fcntl (r->out[i], F_SETFL, fl | O_NONBLOCK);
      while (pump (r->out[i], i + 1, NULL))
        {
          struct pollfd p = { .fd = r->out[i], .events = POLLIN };
          if (poll (&p, 1, 0) <= 0)
            break;
        }
    }
}

/* The command stopped (our pid 1 said so): give the terminal back and stop
 * as ^Z stops a job, so that the person's shell has it again. Continued
 * (or at once, in an orphaned process group, where the kernel discards
 * SIGTSTP), take the terminal again and resume the command; SIGWINCH makes
 * a full-screen program redraw. */
static void
job_stop (struct relay *r, int pidfd)
{
  sigset_t tstp;
  sigemptyset (&tstp);
  sigaddset (&tstp, SIGTSTP);
  restore_mode (r);
  if (kill (getpid (), SIGTSTP) < 0 || sigprocmask (SIG_UNBLOCK, &tstp, NULL) < 0
      || sigprocmask (SIG_BLOCK, &tstp, NULL) < 0)
    ar_warn ("job control: stop: %s", strerror (errno));
  make_raw (r);
  copy_winsize (r->master);
  if (syscall (SYS_pidfd_send_signal, pidfd, SIGCONT, NULL, 0) < 0
      || (r->master >= 0 && syscall (SYS_pidfd_send_signal, pidfd, SIGWINCH, NULL, 0) < 0))
    kill (getpid (), 0); /* gone already: the pidfd will tell */
  r->cont_again = ar_now_ms () + CONT_AGAIN_MS;
}

/* A word from our pid 1; false once it has none left to say. The
 * command's end (SYNC_EXITED) sets *ended to its status. */
static bool
init_said (struct relay *r, int sock, int pidfd, int *ended)
{
  struct ar_sync_msg m;
  int fd = -1;
  cleanup_error ar_error *err = NULL;
  int n = ar_sync_recv (sock, &m, &fd, &err);
  if (fd >= 0)
    close (fd);
  if (n > 0 && m.type == SYNC_STOPPED)
    job_stop (r, pidfd);
  if (n > 0 && m.type == SYNC_EXITED && m.value >= 0 && m.value <= 255)
    *ended = m.value;
  return n > 0;
}

static int
exit_status (pid_t pid, int *status, ar_error **err)
{
  int ws;
  pid_t r;
  do
    r = waitpid (pid, &ws, 0);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return ar_err (err, errno, "waitpid %d", (int) pid);
  *status = WIFEXITED (ws) ? WEXITSTATUS (ws) : 128 + WTERMSIG (ws);
  return 0;
}

static void
forward (int sfd, pid_t pid, int pidfd, int master, const struct ar_fg_ops *ops)
{
  struct signalfd_siginfo si;
  while (read (sfd, &si, sizeof si) == (ssize_t) sizeof si)
    {
      if (si.ssi_signo == SIGCHLD)
        continue;
      if (si.ssi_signo == SIGWINCH && master >= 0)
        {
          copy_winsize (master);
          continue;
        }
      if (syscall (SYS_pidfd_send_signal, pidfd, si.ssi_signo, NULL, 0) < 0)
        kill (pid, 0); /* gone already: the pidfd will tell */
      if (ops && ops->signalled)
        ops->signalled (ops->data, (int) si.ssi_signo);
    }
}

/* The caller's deadline (ms), 0 for none. */
static long long
deadline_of (const struct ar_fg_ops *ops)
{
  return ops && ops->deadline ? ops->deadline (ops->data) : 0;
}

/* poll's timeout for the first of two times in ms (0: none): -1 for none. */
static int
timeout_for (long long at, long long other)
{
  if (other && (!at || other < at))
    at = other;
  if (!at)
    return -1;
  long long left = at - ar_now_ms ();
  return left <= 0 ? 0 : left > 60000 ? 60000 : (int) left;
}

int
ar_foreground_wait (pid_t pid, int pidfd, int master, int init_sock, const struct ar_fg_ops *ops, int *status,
                    ar_error **err)
{
  sigset_t set;
  struct relay r;
  cleanup_close int sfd = -1;

  int ended = -1;
  forwardable (&set);
  sfd = signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0)
    return ar_err (err, errno, "signalfd");
  relay_start (&r, master, ops ? ops->pipes : NULL);
  for (;;)
    {
      struct pollfd p[7] = {
        { .fd = pidfd, .events = POLLIN },
        { .fd = sfd, .events = POLLIN },
        { .fd = r.in_open ? r.in : -1, .events = POLLIN },
        { .fd = r.out[0], .events = POLLIN },
        { .fd = ops ? ops->fd : -1, .events = POLLIN },
        { .fd = r.out[1], .events = POLLIN },
        { .fd = init_sock, .events = POLLIN },
      };
      long long deadline = deadline_of (ops);
      int n = poll (p, 7, timeout_for (deadline, r.cont_again));
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          relay_stop (&r);
          return ar_err (err, errno, "poll");
        }
      /* a time reached is acted on whatever else poll said: a command
       * that writes all the time must not put its own timers off */
      long long now = deadline || r.cont_again ? ar_now_ms () : 0;
      if (r.cont_again && now >= r.cont_again)
        {
          r.cont_again = 0;
          syscall (SYS_pidfd_send_signal, pidfd, SIGCONT, NULL, 0);
        }
      if (deadline && now >= deadline && ops->expired)
        ops->expired (ops->data);
      if (p[1].revents)
        forward (sfd, pid, pidfd, master, ops);
      if ((p[4].revents & POLLIN) && ops->readable)
        ops->readable (ops->data);
      if (p[2].revents && !pump (r.in, r.in_to, &r.last_in))
        stdin_ended (&r, pidfd, ops);
      for (int i = 0; i < 2; i++)
        if (p[3 + 2 * i].revents && !pump (r.out[i], i + 1, NULL))
          r.out[i] = -1;
      if (p[6].revents && !init_said (&r, init_sock, pidfd, &ended))
        init_sock = -1;
      if (ended >= 0 && ops && ops->said_end)
        *ops->said_end = true;
      if (p[0].revents || (ended >= 0 && ops && ops->said_end))
        break;
    }
  drain (&r);
  relay_stop (&r);
  /* told: the status is the command's, whatever ends the init after
   * (the janitor's delete may kill it in its exit) */
  if (ended >= 0 && ops && ops->said_end)
    {
      *status = ended;
      return 0;
    }
  return exit_status (pid, status, err);
}
