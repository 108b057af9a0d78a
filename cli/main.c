/* agentrun: the CLI. Thin by design: global flags, logging, dispatch. */
#include "config.h"
#include "cli.h"
#include "commands.h"
#include "log.h"
#include "rootless.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

struct command {
  const char *name;
  ar_cmd_fn fn;
  const char *help;
};

static const struct command commands[] = {
  { "version", cmd_version, "print the version" },
  { "create", cmd_create, "create a container (its process waits for start)" },
  { "start", cmd_start, "run the process of a created container" },
  { "run", cmd_run, "create and start a container" },
  { "state", cmd_state, "print a container's state JSON" },
  { "kill", cmd_kill, "send a signal to a container's init" },
  { "delete", cmd_delete, "delete a container" },
  { "list", cmd_list, "list containers" },
  { "ps", cmd_ps, "list a container's processes" },
  { "exec", cmd_exec, "run a new process in a container" },
  { "update", cmd_update, "change a running container's cgroup limits" },
  { "pause", cmd_pause, "freeze every process of a container" },
  { "resume", cmd_resume, "thaw a paused container" },
  { "events", cmd_events, "container stats and OOM events as JSON lines" },
  { "spec", cmd_spec, "write a default config.json" },
  { "validate", cmd_validate, "check a bundle's config.json" },
  { "features", cmd_features, "print the runtime-spec features JSON" },
  { "sandbox", cmd_sandbox, "run a command confined for an agent (see sandbox --help)" },
  { "trust", cmd_trust, "approve a policy file's content for sandboxes (see trust --help)" },
  { "check", cmd_check, "run escape probes in a sandbox and report what held" },
  { "__probe", cmd_probe, "(internal) the probes of check, run inside its sandbox" },
  { NULL, NULL, NULL },
};

enum { G_ROOT = 1, G_LOG, G_LOG_FORMAT, G_DEBUG, G_SYSTEMD_CGROUP, G_CGROUP_MANAGER, G_ROOTLESS, G_VERSION, G_HELP };

static const struct ar_opt global_opts[] = {
  { "root", 0, true, G_ROOT },
  { "log", 0, true, G_LOG },
  { "log-format", 0, true, G_LOG_FORMAT },
  { "debug", 0, false, G_DEBUG },
  { "systemd-cgroup", 0, false, G_SYSTEMD_CGROUP },
  { "cgroup-manager", 0, true, G_CGROUP_MANAGER },
  { "rootless", 0, true, G_ROOTLESS },
  { "version", 'v', false, G_VERSION },
  { "help", 'h', false, G_HELP },
  { NULL, 0, false, 0 },
};

static void
usage (FILE *out)
{
  fprintf (out, "usage: agentrun [global options] COMMAND [options] [arguments]\n\ncommands:\n");
  for (const struct command *c = commands; c->name; c++)
    fprintf (out, "  %-10s %s\n", c->name, c->help);
  fprintf (out,
           "\nglobal options:\n"
           "  --root DIR               state directory (default /run/agentrun; rootless: $XDG_RUNTIME_DIR/agentrun)\n"
           "  --log FILE               also write log lines to FILE\n"
           "  --log-format text|json   format of --log lines\n"
           "  --debug                  debug logging\n"
           "  --systemd-cgroup         use systemd for cgroups (same as --cgroup-manager systemd)\n"
           "  --cgroup-manager M       cgroupfs, systemd or disabled\n"
           "  --rootless true|false|auto  auto: rootless when not root of the initial user namespace\n"
           "  --version, --help\n");
}

/* Commands that never touch the state root, or were asked only for help. */
static bool
needs_state (const char *cmd, int argc, char **argv)
{
  static const char *const stateless[] = { "version", "spec", "validate", "features", "__probe", NULL };
  for (const char *const *s = stateless; *s; s++)
    if (strcmp (cmd, *s) == 0)
      return false;
  /* the sandbox's own commands make a private state folder for the run
   * when there is none (sandbox/run.c) */
  static const char *const own_state[] = { "sandbox", "check", NULL };
  for (const char *const *s = own_state; *s; s++)
    if (strcmp (cmd, *s) == 0)
      return false;
  for (int i = 1; i < argc && strcmp (argv[i], "--") != 0; i++)
    if (strcmp (argv[i], "-h") == 0 || strcmp (argv[i], "--help") == 0)
      return false;
  return true;
}

/* Hidden, for the man page test and shell completion:
 * `--list-commands` prints the commands, `--list-options` the global
 * options, `--list-options CMD [ARGS]` the table CMD hands the parser (ARGS
 * select a mode, e.g. `spec --agent`). A command that never parses is a bug
 * this says out loud. */
static int
list_options (int argc, char **argv)
{
  if (argc == 0)
    {
      ar_opt_print (stdout, global_opts);
      return 0;
    }
  struct ar_ctx ctx = { .log_format = "text", .cgroup_manager = "cgroupfs", .rootless = "auto", .root = "/nonexistent" };
  for (const struct command *c = commands; c->name; c++)
    if (strcmp (c->name, argv[0]) == 0)
      {
        ar_opt_list_only = true;
        c->fn (&ctx, argc, argv);
        fprintf (stderr, "agentrun: --list-options: command \"%s\" parsed no option table\n", argv[0]);
        return 1;
      }
  fprintf (stderr, "agentrun: --list-options: unknown command \"%s\"\n", argv[0]);
  return 1;
}

static int
list_commands (void)
{
  for (const struct command *c = commands; c->name; c++)
    if (strncmp (c->name, "__", 2) != 0)
      printf ("%s\t%s\n", c->name, c->help);
  return fflush (stdout) == 0 ? 0 : 1;
}

int
main (int argc, char **argv)
{
  struct ar_ctx ctx = { .log_format = "text", .cgroup_manager = "cgroupfs", .rootless = "auto" };
  struct ar_optparser p = { .argc = argc, .argv = argv, .i = 1, .opts = global_opts };
  cleanup_error ar_error *err = NULL;
  const char *arg;
  int id;

  if (argc >= 2 && strcmp (argv[1], "--list-options") == 0)
    return list_options (argc - 2, argv + 2);
  if (argc == 2 && strcmp (argv[1], "--list-commands") == 0)
    return list_commands ();
  while ((id = ar_opt_next (&p, &arg, &err)) > 0)
    switch (id)
      {
      case G_ROOT: ctx.root = arg; break;
      case G_LOG: ctx.log = arg; break;
      case G_LOG_FORMAT: ctx.log_format = arg; break;
      case G_DEBUG: ctx.debug = !arg || strcmp (arg, "false") != 0; break;
      case G_SYSTEMD_CGROUP:
        if (!arg || strcmp (arg, "false") != 0)
          ctx.cgroup_manager = "systemd";
        break;
      case G_CGROUP_MANAGER: ctx.cgroup_manager = arg; break;
      case G_ROOTLESS: ctx.rootless = arg; break;
      case G_VERSION: return cmd_version (&ctx, 0, NULL);
      case G_HELP: usage (stdout); return 0;
      }
  if (ar_log_init (ctx.log, ctx.log_format, ctx.debug, &err) < 0 || id < 0)
    {
      ar_log_error (ar_steal_ptr (err));
      return 1;
    }
  if (strcmp (ctx.cgroup_manager, "cgroupfs") && strcmp (ctx.cgroup_manager, "systemd")
      && strcmp (ctx.cgroup_manager, "disabled"))
    {
      ar_log (AR_LOG_ERROR, "--cgroup-manager: unknown manager \"%s\" (cgroupfs, systemd or disabled)",
              ctx.cgroup_manager);
      return 1;
    }
  if (strcmp (ctx.rootless, "true") && strcmp (ctx.rootless, "false") && strcmp (ctx.rootless, "auto"))
    {
      ar_log (AR_LOG_ERROR, "--rootless: \"%s\" is not true, false or auto", ctx.rootless);
      return 1;
    }
  static char root_buf[4096];
  char why[4200] = "";
  if (!ctx.root)
    ctx.root = ar_rootless_default_root (ar_rootless_detect (ctx.rootless), root_buf, sizeof root_buf, why, sizeof why);
  if (p.i >= argc)
    {
      usage (stderr);
      return 1;
    }
  if (!ctx.root && needs_state (argv[p.i], argc - p.i, argv + p.i))
    {
      /* Rootless never falls back to /run (root's) or a shared /tmp folder. */
      ar_log (AR_LOG_ERROR, "no state root: %s; pass --root or set it", why);
      return 1;
    }
  for (const struct command *c = commands; c->name; c++)
    if (strcmp (c->name, argv[p.i]) == 0)
      {
        ar_log_set_command (c->name);
        return c->fn (&ctx, argc - p.i, argv + p.i);
      }
  ar_log (AR_LOG_ERROR, "unknown command \"%s\" (see agentrun --help)", argv[p.i]);
  return 1;
}
