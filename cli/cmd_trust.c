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
 * (through sudo a path the person swapped meanwhile would be read as root). */
static void
show_diff (const char *old, size_t olen, const char *path, const char *text, size_t len)
{
  cleanup_free char *a = temp_copy (old, olen);
  cleanup_free char *b = a ? temp_copy (text, len) : NULL;
  if (!b)
    {
      fprintf (stderr, "agentrun: cannot show the change (temporary file): %s\n", strerror (errno));
      if (a)
        unlink (a);
      return;
    }
  fflush (stdout);
  pid_t pid = fork ();
  if (pid == 0)
    {
      dup2 (STDERR_FILENO, STDOUT_FILENO);
      execlp ("diff", "diff", "-u", "--label", "trusted", "--label", path, a, b, (char *) NULL);
      fprintf (stderr, "agentrun: diff: %s\n", strerror (errno));
      _exit (127);
    }
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
    fprintf (stderr, "agentrun: %s has no trusted copy yet; it reads:\n%.*s%s", path, (int) len, text,
             len && text[len - 1] == '\n' ? "" : "\n");
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
