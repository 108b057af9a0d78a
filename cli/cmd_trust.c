/* agentrun trust [--yes] FILE...: approve the current content of policy
 * files (--profile, --settings) for the trust store (trust.h). The change
 * since the last trusted copy is shown as a diff and the person answers on
 * the terminal; --yes approves without asking. */
#include "config.h"
#include "cli.h"
#include "commands.h"
#include "log.h"
#include "sbpaths.h"
#include "strio.h"
#include "trust.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { O_YES = 1, O_HELP };

static const struct ar_opt trust_opts[] = {
  { "yes", 'y', false, O_YES },
  { "help", 'h', false, O_HELP },
  { NULL, 0, false, 0 },
};

/* The code point of the UTF-8 sequence at s (n bytes left) and its
 * length; a byte that starts none is itself, alone. */
static unsigned
utf8_at (const unsigned char *s, size_t n, size_t *len)
{
  *len = 1;
  if (s[0] >= 0xc2 && s[0] < 0xe0 && n >= 2 && (s[1] & 0xc0) == 0x80)
    return *len = 2, ((s[0] & 0x1fu) << 6) | (s[1] & 0x3fu);
  if (s[0] >= 0xe0 && s[0] < 0xf0 && n >= 3 && (s[1] & 0xc0) == 0x80 && (s[2] & 0xc0) == 0x80)
    return *len = 3, ((s[0] & 0x0fu) << 12) | ((s[1] & 0x3fu) << 6) | (s[2] & 0x3fu);
  return s[0];
}

/* A character that moves, hides or reorders what the terminal shows: a
 * control character (a carriage return overwrites the line it ends, and
 * JSON takes one as a blank), C1 controls, bidirectional and zero-width
 * format characters. */
static bool
deceptive (unsigned c)
{
  return (c < 0x20 && c != '\n' && c != '\t') || (c >= 0x7f && c < 0xa0) || c == 0x61c || (c >= 0x200b && c <= 0x200f)
         || (c >= 0x202a && c <= 0x202e) || (c >= 0x2060 && c <= 0x2069) || c == 0xfeff;
}

/* What the agent wrote, to the person's terminal: each deceptive
 * character shown as <U+XXXX>, so that the change seen is the change made. */
static void
put_visible (FILE *f, const char *text, size_t len)
{
  const unsigned char *s = (const unsigned char *) text;
  for (size_t i = 0, n; i < len; i += n)
    {
      unsigned c = utf8_at (s + i, len - i, &n);
      if (deceptive (c))
        fprintf (f, "<U+%04X>", c);
      else
        fwrite (s + i, 1, n, f);
    }
}

/* text in a temporary file of ours (the caller removes *tmp): NULL on failure. */
static char *
temp_copy (const char *text, size_t len)
{
  char *tmp = xstrdup ("/tmp/agentrun-trusted-XXXXXX");
  int fd = mkostemp (tmp, O_CLOEXEC);
  bool ok = fd >= 0 && write (fd, text, len) == (ssize_t) len;
  int e = errno;
  if (fd >= 0 && (close (fd) < 0 || !ok))
    unlink (tmp);
  if (fd < 0 || !ok)
    {
      free (tmp);
      errno = e;
      return NULL;
    }
  return tmp;
}

/* diff -u of the trusted copy and the content read (text), both from
 * temporary files of ours: diff, run as we are, never opens path itself
 * (through sudo a path the person swapped meanwhile would be read as root).
 * Its output comes back through a pipe and is shown with put_visible. */
static void
show_diff (const char *old, size_t olen, const char *path, const char *text, size_t len)
{
  cleanup_free char *a = temp_copy (old, olen);
  cleanup_free char *b = a ? temp_copy (text, len) : NULL;
  int pfd[2] = { -1, -1 };
  if (!b || pipe2 (pfd, O_CLOEXEC) < 0)
    {
      fprintf (stderr, "agentrun: cannot show the change (%s): %s\n", b ? "pipe" : "temporary file", strerror (errno));
      if (a)
        unlink (a);
      if (b)
        unlink (b);
      return;
    }
  fflush (stdout);
  pid_t pid = fork ();
  if (pid == 0)
    {
      dup2 (pfd[1], STDOUT_FILENO);
      execlp ("diff", "diff", "-u", "--label", "trusted", "--label", path, a, b, (char *) NULL);
      fprintf (stderr, "agentrun: diff: %s\n", strerror (errno));
      _exit (127);
    }
  close (pfd[1]);
  cleanup_free char *out = NULL;
  size_t n = 0;
  if (pid > 0 && ar_read_all (pfd[0], 4u << 20, &out, &n) == 0)
    put_visible (stderr, out, n);
  else
    fprintf (stderr, "agentrun: cannot show the change: %s\n", strerror (errno));
  close (pfd[0]);
  int st;
  if (pid > 0)
    waitpid (pid, &st, 0);
  unlink (a);
  unlink (b);
}

/* y/N on the controlling terminal, never stdin. */
static bool
ask (const char *path)
{
  FILE *tty = fopen ("/dev/tty", "r+e");
  char line[16] = "";
  if (!tty)
    {
      fprintf (stderr, "agentrun: trust %s: no terminal to ask on (give --yes)\n", path);
      return false;
    }
  fprintf (tty, "agentrun: trust %s as it is now? [y/N] ", path);
  fflush (tty);
  bool yes = fgets (line, sizeof line, tty) && (line[0] == 'y' || line[0] == 'Y') && (line[1] == '\n' || !line[1]);
  fclose (tty);
  return yes;
}

static int
trust_one (const char *file, bool yes)
{
  char path[PATH_MAX];
  uid_t uid;
  gid_t gid;
  cleanup_free char *home = NULL, *store = NULL, *text = NULL, *old = NULL;
  cleanup_error ar_error *err = NULL;
  size_t len, olen;
  struct ar_fsid fs;
  ar_sbpaths_invoker (&uid, &gid, &home);
  if (!(store = ar_trust_store_dir (home)))
    return ar_log (AR_LOG_ERROR, "%s: no trust store (no XDG_CONFIG_HOME, no home)", file), 1;
  /* the file is the person's choice: through sudo it is resolved and read
   * as them, or root would show them any file on the host */
  ar_fsid_enter (&fs, uid, gid);
  const char *failed = !realpath (file, path) ? "" : NULL;
  cleanup_close int fd = failed ? -1 : open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (!failed && (fd < 0 || ar_read_all (fd, 1u << 20, &text, &len) < 0))
    failed = "read: ";
  int e = errno;
  int had = failed ? -1 : ar_trust_read (store, path, &old, &olen);
  ar_fsid_leave (&fs);
  if (failed)
    return ar_log (AR_LOG_ERROR, "%s: %s%s", file, failed, strerror (e)), 1;
  if (had == 0 && olen == len && memcmp (old, text, len) == 0)
    {
      printf ("%s: already trusted as it is\n", path);
      return 0;
    }
  if (had == 0)
    show_diff (old, olen, path, text, len);
  else
    {
      fprintf (stderr, "agentrun: %s has no trusted copy yet; it reads:\n", path);
      put_visible (stderr, text, len);
      fprintf (stderr, "%s", len && text[len - 1] == '\n' ? "" : "\n");
    }
  if (!yes && !ask (path))
    {
      fprintf (stderr, "agentrun: %s: not trusted\n", path);
      return 1;
    }
  if (ar_trust_approve (store, path, text, len, uid, gid, &err) < 0)
    return ar_log (AR_LOG_ERROR, "%s: %s", file, err->msg), 1;
  printf ("%s: trusted\n", path);
  return 0;
}

int
cmd_trust (struct ar_ctx *ctx, int argc, char **argv)
{
  struct ar_optparser p = { .argc = argc, .argv = argv, .i = 1, .opts = trust_opts };
  cleanup_error ar_error *err = NULL;
  const char *arg;
  bool yes = false;
  int id, r = 0;
  (void) ctx;
  while ((id = ar_opt_next (&p, &arg, &err)) > 0)
    {
      if (id == O_YES)
        yes = true;
      if (id == O_HELP)
        {
          printf ("usage: agentrun trust [--yes] FILE...\n"
                  "Approve the current content of policy files (--profile, --settings) that lie in a folder a\n"
                  "sandbox can write: the change since the last trusted copy is shown and asked about.\n"
                  "  -y, --yes   approve without asking\n");
          return 0;
        }
    }
  if (id < 0)
    return ar_log (AR_LOG_ERROR, "%s", err->msg), 1;
  if (p.i >= argc)
    return ar_log (AR_LOG_ERROR, "no file given (agentrun trust [--yes] FILE...)"), 1;
  for (int i = p.i; i < argc; i++)
    r |= trust_one (argv[i], yes);
  return r;
}
