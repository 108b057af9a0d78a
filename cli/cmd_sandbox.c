/* `agentrun sandbox` and `agentrun spec --agent`: the sandbox options
 * parsed, then the run (sandbox/run.c) or only the bundle written. */
#include "config.h"
#include "commands.h"
#include "log.h"
#include "profile.h"
#include "sandbox.h"
#include "util.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { O_HELP = AR_SBC_HELP, O_TTY, O_NO_TTY, O_PROFILE = AR_SBC_PROFILE, O_SETTINGS, O_ASK, O_SAVE_PROFILE };

static const char sandbox_tty_help[] = "  -t, --tty             a pty for the command even when stdin or stdout is\n"
                                       "                        redirected (default: only when both are terminals;\n"
                                       "                        otherwise files and pipes are handed in as they are,\n"
                                       "                        and a terminal among them is replaced by a pipe)\n"
                                       "  --no-tty              never a pty\n";

/* sandbox's own options: -t/--tty, --no-tty */
static int
sandbox_own_opt (void *data, int id, const char *arg, ar_error **err)
{
  (void) arg;
  (void) err;
  ((struct ar_sandbox *) data)->tty = id == O_TTY ? 1 : -1;
  return 0;
}

static void
sandbox_usage (FILE *f)
{
  fprintf (f,
           "usage: agentrun sandbox [options] -- CMD [ARGS]\n"
           "Run CMD confined: host system folders read-only, an empty home, the workspace\n"
           "read-write, no network but the --allow endpoints, no capabilities, seccomp.\n"
           "It runs as the caller's uid and gid (SUDO_UID/SUDO_GID through sudo); root\n"
           "without sudo runs it as nobody (65534), never as uid 0.\n\n%s%s%s%s",
           sandbox_tty_help, ar_sandbox_opts_help, ar_profile_opts_help, ar_asker_opts_help);
}

/* Whether uid:gid may write into dir, asked the kernel as that uid (mode
 * bits, ACLs and every folder on the way), in a child that drops to it. */
static bool
writable_for (const char *dir, uid_t uid, gid_t gid)
{
  pid_t pid = fork ();
  if (pid == 0)
    _exit (setgroups (0, NULL) == 0 && setresgid (gid, gid, gid) == 0 && setresuid (uid, uid, uid) == 0
                   && access (dir, W_OK | X_OK) == 0
               ? 0
               : 1);
  int st;
  return pid > 0 && waitpid (pid, &st, 0) == pid && WIFEXITED (st) && WEXITSTATUS (st) == 0;
}

/* Root without sudo: the command runs as nobody, which surprises; say it
 * once, to the person at the terminal (scripts and logs are spared). */
static void
say_nobody (const struct ar_sandbox *sb)
{
  const struct ar_agent_opts *o = &sb->prof;
  if (!sb->as_nobody || sb->quiet || !isatty (STDERR_FILENO))
    return;
  bool w = writable_for (o->workspace, o->uid, o->gid);
  fprintf (stderr,
           "agentrun: running as nobody (uid %u: root without sudo; --user UID picks another): "
           "the workspace %s is %s\n",
           (unsigned) o->uid, o->workspace,
           w ? "writable for it" : "not writable for it (chown it, or --user its owner)");
}

/* Write the bundle for --bundle DIR; say how to start the relay it expects. */
static int
write_bundle_only (struct ar_sandbox *sb, const char *dir)
{
  cleanup_error ar_error *err = NULL;
  cleanup_free char *relay_dir = NULL;
  char buf[PATH_MAX];
  bool net = sb->prof.n_allow > 0 && !sb->prof.no_network;
  if (ar_sandbox_check_userns (&err) < 0 || !realpath (".", buf))
    goto fail;
  if (net)
    {
      cleanup_free char *abs = dir[0] == '/' ? xstrdup (dir) : xasprintf ("%s/%s", buf, dir);
      relay_dir = xasprintf ("%s/relay", abs);
    }
  if (ar_sandbox_write_bundle (sb, dir, relay_dir, &err) < 0)
    goto fail;
  if (net)
    {
      fprintf (stderr,
               "agentrun: start the relay before the container: agentrun-relay --dir %s --max-conns %llu "
               "--idle-timeout %llu",
               relay_dir, sb->net_max_conns, sb->net_idle_timeout);
      for (size_t i = 0; i < sb->prof.n_allow; i++)
        {
          const struct ar_agent_endpoint *e = &sb->prof.allow[i];
          fprintf (stderr, " --allow '%s:%d%s%s'", e->name, e->port, e->upstream || ar_agent_wildcard (e) ? "=" : "",
                   e->upstream             ? e->upstream
                   : ar_agent_wildcard (e) ? "connect"
                                           : "");
        }
      fputc ('\n', stderr);
    }
  return 0;
fail:
  if (!err)
    ar_err (&err, errno, "current folder");
  ar_log_error (ar_steal_ptr (err));
  return 1;
}

int
cmd_sandbox (struct ar_ctx *ctx, int argc, char **argv)
{
  static const struct ar_opt own[] = {
    { "help", 'h', false, O_HELP },  { "profile", 0, true, O_PROFILE },           { "settings", 0, true, O_SETTINGS },
    { "ask", 0, false, O_ASK },      { "save-profile", 0, true, O_SAVE_PROFILE }, { "tty", 't', false, O_TTY },
    { "no-tty", 0, false, O_NO_TTY }
  };
  struct ar_sandbox sb;
  cleanup_error ar_error *err = NULL;
  int first, r, status = AR_SANDBOX_FAILED;
  ar_sandbox_init (&sb);
  const struct ar_sb_cmd c = {
    .own = own, .n_own = ARRAY_SIZE (own), .usage = sandbox_usage, .own_opt = sandbox_own_opt, .data = &sb
  };
  r = ar_sandbox_parse_args (&sb, &c, argc, argv, &first);
  if (r != 0)
    {
      r = r > 0 ? 0 : -1; /* --help asked is not a failure */
      goto done;
    }
  ar_sandbox_set_args (&sb, argv + first, argc - first);
  sb.bundle_only = sb.bundle_out != NULL;
  if (ar_sandbox_prepare (&sb, &err) < 0)
    {
      ar_log_error (ar_steal_ptr (err));
      r = AR_SANDBOX_FAILED;
      goto done;
    }
  if (sb.bundle_out && ar_sandbox_fit_limits (ctx, &sb, &err) < 0)
    {
      ar_log_error (ar_steal_ptr (err));
      r = AR_SANDBOX_FAILED;
    }
  else if (sb.bundle_out)
    r = write_bundle_only (&sb, sb.bundle_out);
  else if (say_nobody (&sb), ar_sandbox_run (ctx, &sb, &status, &err) < 0)
    {
      ar_log_error (ar_steal_ptr (err));
      r = AR_SANDBOX_FAILED;
    }
  else
    r = status;
done:
  ar_sandbox_free (&sb);
  return r < 0 ? 1 : r;
}

static void
spec_agent_usage (FILE *f)
{
  fprintf (f,
           "usage: agentrun spec --agent [options] [--bundle DIR] [-- CMD [ARGS]]\n"
           "Write the bundle `agentrun sandbox` would run (default command: /bin/sh).\n\n%s%s",
           ar_sandbox_opts_help, ar_profile_opts_help);
}

int
cmd_spec_agent (struct ar_ctx *ctx, int argc, char **argv)
{
  static const struct ar_opt own[] = { { "help", 'h', false, O_HELP },
                                       { "profile", 0, true, O_PROFILE },
                                       { "settings", 0, true, O_SETTINGS } };
  struct ar_sandbox sb;
  cleanup_error ar_error *err = NULL;
  int first, r;
  /* the first --agent says which spec this is; a later one names a preset */
  cleanup_free char **args = xmalloc0 ((size_t) (argc + 1) * sizeof *args);
  int n = 0;
  bool mode_seen = false;
  for (int i = 0; i < argc; i++)
    if (mode_seen || i == 0 || strcmp (argv[i], "--agent") != 0)
      args[n++] = argv[i];
    else
      mode_seen = true;
  argc = n;
  argv = args;
  ar_log_set_command ("spec --agent");
  ar_sandbox_init (&sb);
  const struct ar_sb_cmd c = { .own = own, .n_own = ARRAY_SIZE (own), .usage = spec_agent_usage };
  r = ar_sandbox_parse_args (&sb, &c, argc, argv, &first);
  if (r != 0)
    goto done;
  if (first < argc)
    ar_sandbox_set_args (&sb, argv + first, argc - first);
  else
    ar_sandbox_set_args (&sb, (char *[]){ (char *) "/bin/sh" }, 1);
  sb.bundle_only = true;
  if (ar_sandbox_prepare (&sb, &err) < 0 || ar_sandbox_fit_limits (ctx, &sb, &err) < 0)
    {
      ar_log_error (ar_steal_ptr (err));
      r = 1;
      goto done;
    }
  r = write_bundle_only (&sb, sb.bundle_out ? sb.bundle_out : ".");
done:
  ar_sandbox_free (&sb);
  return r < 0 ? 1 : r;
}
