/* The asking side of `agentrun sandbox --ask`: see asker.h. */
#include "config.h"
#include "clock.h"
#include "hostname.h"
#include "asker.h"
#include "sbpaths.h"
#include "log.h"
#include "profile.h"
#include "relay_child.h"
#include "sandbox.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#define QUESTION_WAIT_MS 2000 /* the server writes its line right after connecting */

enum answer { NO, YES, ALWAYS };

int
ar_asker_open (struct ar_asker *a, struct ar_sandbox *sb, ar_error **err)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  a->lfd = -1;
  a->path = xasprintf ("%s/ask.sock", sb->tmpdir);
  if (strlen (a->path) >= sizeof sa.sun_path)
    return ar_err (err, ENAMETOOLONG, "--ask: socket path %s", a->path);
  strcpy (sa.sun_path, a->path);
  a->lfd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (a->lfd < 0)
    return ar_err (err, errno, "--ask: socket");
  /* only the netproxy server may connect (it drops to the helper ids): the
   * agent must not answer itself, and never sees this folder */
  uid_t hu;
  gid_t hg;
  if (bind (a->lfd, (struct sockaddr *) &sa, sizeof sa) < 0 || chmod (a->path, 0600) < 0
      || (ar_sbpaths_helper_ids (&hu, &hg) && lchown (a->path, hu, hg) < 0) || listen (a->lfd, 16) < 0)
    return ar_err (err, errno, "--ask: listen on %s", a->path);
  free (sb->prof.ask_socket);
  sb->prof.ask_socket = xstrdup (a->path);
  return 0;
}

/* "ask NAME PORT" (1) or "blocked NAME PORT" (2) with a name we would
 * accept for --allow; -1 for anything else. */
static int
read_question (int fd, char *name, size_t cap, int *port)
{
  char buf[320];
  size_t len = 0;
  while (len < sizeof buf - 1 && !memchr (buf, '\n', len))
    {
      struct pollfd p = { .fd = fd, .events = POLLIN };
      if (poll (&p, 1, QUESTION_WAIT_MS) <= 0)
        return -1;
      ssize_t n = read (fd, buf + len, sizeof buf - 1 - len);
      if (n <= 0)
        return -1;
      len += (size_t) n;
    }
  buf[len] = '\0';
  char fmt[32], verb[8];
  snprintf (fmt, sizeof fmt, "%%7s %%%zus %%d", cap - 1);
  if (sscanf (buf, fmt, verb, name, port) != 3 || *port < 1 || *port > 65535)
    return -1;
  for (const char *c = name; *c; c++)
    if (!isalnum ((unsigned char) *c) && *c != '-' && *c != '.')
      return -1;
  return strcmp (verb, "ask") == 0 ? 1 : strcmp (verb, "blocked") == 0 ? 2 : -1;
}

/* A refusal said once per name (and port) on our stderr, outside the
 * sandbox, with what would allow it; every one is in the audit log. */
static void
tell_blocked (struct ar_asker *a, const struct ar_sandbox *sb, const char *name, int port, bool lookup,
              const char *denied_by)
{
  cleanup_free char *ep = lookup ? xstrdup (name) : xasprintf ("%s:%d", name, port);
  for (size_t i = 0; i < a->n_blocked; i++)
    if (strcmp (a->blocked[i], ep) == 0)
      return;
  /* the agent chooses what it tries: what we remember and say is bounded */
  if (a->n_blocked == AR_ASKER_MAX_TOLD)
    {
      a->n_untold++;
      return;
    }
  a->blocked = xrealloc (a->blocked, (a->n_blocked + 1) * sizeof *a->blocked);
  a->blocked[a->n_blocked++] = xstrdup (ep);
  if (sb->quiet)
    return;
  /* A TUI on the command's pty owns the screen: a line drawn over it would
     corrupt what the person sees, so the summary at exit says it instead. */
  if (sb->prof.terminal && isatty (STDERR_FILENO))
    {
      a->held_back = true;
      return;
    }
  /* a terminal may be in raw mode (the command's pty): end lines ourselves */
  const char *cr = isatty (STDERR_FILENO) ? "\r" : "";
  if (denied_by)
    fprintf (stderr, "%sagentrun: blocked %s (denied by \"%s\")%s\n", cr, ep, denied_by, cr);
  else
    fprintf (stderr, "%sagentrun: blocked %s (not allowed; add --allow %s)%s\n", cr, ep,
             lookup || port == 443 ? name : ep, cr);
}

void
ar_asker_summary (const struct ar_asker *a, const struct ar_sandbox *sb)
{
  if (sb->quiet || a->n_blocked == 0)
    return;
  size_t len = 0;
  for (size_t i = 0; i < a->n_blocked; i++)
    len += strlen (a->blocked[i]) + 2;
  cleanup_free char *list = xmalloc0 (len + 1);
  for (size_t i = 0; i < a->n_blocked; i++)
    {
      if (i)
        strcat (list, ", ");
      strcat (list, a->blocked[i]);
    }
  char more[48] = "";
  if (a->n_untold)
    snprintf (more, sizeof more, " and %zu more", a->n_untold);
  fprintf (stderr, "agentrun: %zu blocked in this run: %s%s%s%s\n", a->n_blocked + a->n_untold, list, more,
           a->held_back ? " (add --allow NAME for each one to allow)" : "",
           sb->prof.audit ? " (every event is in the audit log)" : "");
}

static const char *
deny_for (const struct ar_sandbox *sb, const char *name)
{
  for (size_t i = 0; i < sb->prof.n_deny; i++)
    if (ar_host_name_match (sb->prof.deny[i], name))
      return sb->prof.deny[i];
  return NULL;
}

static const struct ar_agent_endpoint *
wildcard_for (const struct ar_sandbox *sb, const char *name)
{
  for (size_t i = 0; i < sb->prof.n_allow; i++)
    if (ar_agent_wildcard (&sb->prof.allow[i]) && ar_host_name_match (sb->prof.allow[i].name, name))
      return &sb->prof.allow[i];
  return NULL;
}

/* One line from the terminal, which may be in raw mode (the container's
 * terminal relay set it so): we echo, and stop at CR or LF. A signal for
 * us (sfd) ends the question with no answer. */
static enum answer
prompt (int tty, const char *ep, bool can_always, int sfd)
{
  char q[400], line[16];
  size_t n = 0;
  struct termios tio;
  /* in raw mode (the container's terminal relay set it) nothing echoes but us */
  bool echo = tcgetattr (tty, &tio) == 0 && !(tio.c_lflag & ECHO);
  int len = snprintf (q, sizeof q, "\r\nagentrun: allow %s for this run? [y/N%s] ", ep, can_always ? "/always" : "");
  if (write (tty, q, (size_t) len) != len)
    return NO;
  for (;;)
    {
      struct pollfd p[2] = { { .fd = tty, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
      char c;
      if (poll (p, 2, -1) < 0 && errno != EINTR)
        return NO;
      if (p[1].revents & POLLIN)
        return NO;
      if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      ssize_t r = read (tty, &c, 1);
      if (r < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (r != 1)
        return NO; /* the terminal went away: no one to say yes */
      if (c == 3)
        return NO; /* ^C in raw mode: no signal comes, the answer is no */
      if (c == '\r' || c == '\n' || c == 4)
        break;
      if (n < sizeof line - 1)
        line[n++] = c;
      if (echo && write (tty, &c, 1) < 0)
        return NO;
    }
  line[n] = '\0';
  if (echo && write (tty, "\r\n", 2) < 0)
    return NO;
  if (strcasecmp (line, "y") == 0 || strcasecmp (line, "yes") == 0)
    return YES;
  return can_always && strcasecmp (line, "always") == 0 ? ALWAYS : NO;
}

static enum answer
ask_person (struct ar_sandbox *sb, const char *ep, int sfd)
{
  int tty = open ("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
  if (tty < 0)
    {
      ar_warn ("sandbox --ask: %s refused: no terminal to ask on (/dev/tty: %s)", ep, strerror (errno));
      return NO;
    }
  /* the container's terminal relay is ours and waits while we ask: the
   * keystrokes are for us */
  enum answer r = prompt (tty, ep, sb->save_profile != NULL, sfd);
  close (tty);
  return r;
}

/* A relay of its own for the new route, in <tmpdir>/ask-N; the socket path. */
static char *
start_route_relay (struct ar_asker *a, struct ar_sandbox *sb, const char *ep, ar_error **err)
{
  if (a->n_relays == AR_ASKER_MAX_RELAYS)
    return ar_err (err, 0, "more than %d endpoints allowed at run time", AR_ASKER_MAX_RELAYS), NULL;
  cleanup_free char *dir = xasprintf ("%s/ask-%zu", sb->tmpdir, a->n_relays);
  cleanup_free char *errlog = xasprintf ("%s.err", dir);
  char *sock = xasprintf ("%s/%s.sock", dir, ep);
  char *extra[] = { (char *) "--allow", (char *) ep, NULL };
  pid_t pid;
  if (ar_relay_start (sb, dir, errlog, extra, &pid, err) < 0)
    {
      free (sock);
      return NULL;
    }
  a->relays[a->n_relays++] = pid;
  if (ar_relay_wait (&a->relays[a->n_relays - 1], errlog, &sock, 1, err) < 0)
    {
      ar_relay_stop (&a->relays[a->n_relays - 1]);
      a->n_relays--;
      ar_err_prefix (err, "agentrun-relay for %s", ep);
      free (sock);
      return NULL;
    }
  return sock;
}

static void
reply (int fd, const char *line)
{
  size_t n = strlen (line);
  if (write (fd, line, n) != (ssize_t) n)
    ar_warn ("sandbox --ask: answering the netproxy: %s", strerror (errno));
}

/* `always`: ENDPOINT added to --save-profile's allow list. The file is the
 * invoking user's: through sudo it is read and written with that user's
 * rights, so that it stays theirs and root writes nowhere that user could
 * not (the folder, a symlink in it, are theirs to choose). */
static int
save_allow (struct ar_sandbox *sb, const char *endpoint, ar_error **err)
{
  uid_t uid;
  gid_t gid;
  struct ar_fsid fs;
  char real[PATH_MAX];
  /* held read-only in a writable folder (sbpaths.c): rewritten in place,
   * as a rename over it would take its mount away from the command */
  bool held = realpath (sb->save_profile, real) && ar_sbpaths_in_writable (&sb->prof, real);
  ar_sbpaths_invoker (&uid, &gid, NULL);
  ar_fsid_enter (&fs, uid, gid);
  int r = ar_profile_append_allow (sb->save_profile, endpoint, held, err);
  ar_fsid_leave (&fs);
  return r < 0 ? -1 : ar_sbpaths_repin (sb, sb->save_profile, err);
}

void
ar_asker_serve (struct ar_asker *a, struct ar_sandbox *sb, int sfd)
{
  char name[256], ep[300];
  int port;
  cleanup_close int fd = accept4 (a->lfd, NULL, NULL, SOCK_CLOEXEC);
  if (fd < 0)
    return;
  int verb = read_question (fd, name, sizeof name, &port);
  if (verb == 2)
    {
      tell_blocked (a, sb, name, port, false, deny_for (sb, name));
      return;
    }
  if (verb < 0)
    {
      reply (fd, "deny\n");
      return;
    }
  /* the policy first: a deny wins, a wildcard routes, then the person */
  const char *denied = deny_for (sb, name);
  const struct ar_agent_endpoint *w = denied ? NULL : wildcard_for (sb, name);
  if (w)
    {
      cleanup_free char *line = xasprintf ("via %d %s/%s:%d.sock\n", w->port, sb->prof.relay_dir, w->name, w->port);
      reply (fd, line);
      return;
    }
  if (denied || !sb->ask)
    {
      reply (fd, "deny\n");
      tell_blocked (a, sb, name, port, true, denied);
      return;
    }
  snprintf (ep, sizeof ep, "%s:%d", name, port);
  enum answer ans = ask_person (sb, ep, sfd);
  if (ans == NO)
    {
      reply (fd, "deny\n");
      return;
    }
  cleanup_error ar_error *err = NULL;
  cleanup_free char *sock = start_route_relay (a, sb, ep, &err);
  if (!sock)
    {
      ar_warn ("sandbox --ask: %s refused: %s", ep, err->msg);
      {
        reply (fd, "deny\n");
        return;
      }
    }
  cleanup_free char *line = xasprintf ("allow %s\n", sock);
  reply (fd, line);
  if (ans == ALWAYS && save_allow (sb, ep, &err) < 0)
    ar_warn ("sandbox --ask: %s allowed for this run, but not saved: %s", ep, err->msg);
}

void
ar_asker_close (struct ar_asker *a)
{
  if (!a->path)
    return; /* never opened */
  for (size_t i = 0; i < a->n_relays; i++)
    ar_relay_stop (&a->relays[i]);
  a->n_relays = 0;
  for (size_t i = 0; i < a->n_blocked; i++)
    free (a->blocked[i]);
  free (a->blocked);
  a->blocked = NULL;
  a->n_blocked = a->n_untold = 0;
  if (a->lfd >= 0)
    close (a->lfd);
  a->lfd = -1;
  if (a->path)
    unlink (a->path);
  free (a->path);
  a->path = NULL;
}

const char
    ar_asker_opts_help[] = "  --ask                 when the command looks up a name that is not allowed, ask on\n"
                           "                        this terminal (never the command's): y allows NAME:443 for\n"
                           "                        this run, anything else (or no terminal) refuses it\n"
                           "  --save-profile FILE   with --ask, `always` also adds NAME:443 to FILE's allow list\n";
