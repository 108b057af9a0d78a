/* agentrun create [options] ID */
#include "config.h"
#include "cmd_common.h"
#include "commands.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum {
  O_BUNDLE = 1,
  O_CONFIG,
  O_PID_FILE,
  O_CONSOLE_SOCKET,
  O_NO_PIVOT,
  O_NO_NEW_KEYRING,
  O_PRESERVE_FDS,
  O_DETACH,
  O_KEEP
};

/* run's table; create's is the same without its last two entries. */
static const struct ar_opt run_opts[] = {
  { "bundle", 'b', true, O_BUNDLE },
  { "config", 0, true, O_CONFIG },
  { "pid-file", 0, true, O_PID_FILE },
  { "console-socket", 0, true, O_CONSOLE_SOCKET },
  { "no-pivot", 0, false, O_NO_PIVOT },
  { "no-new-keyring", 0, false, O_NO_NEW_KEYRING },
  { "preserve-fds", 0, true, O_PRESERVE_FDS },
  { "detach", 'd', false, O_DETACH },
  { "keep", 0, false, O_KEEP },
  { NULL, 0, false, 0 },
};
#define N_RUN_ONLY 2

int
ar_cmd_fail (ar_error *err)
{
  ar_log_error (err);
  return 1;
}

int
ar_one_id (struct ar_optparser *p, const char **id, ar_error **err)
{
  if (p->i >= p->argc)
    return ar_err (err, 0, "missing container id");
  if (p->i + 1 < p->argc)
    return ar_err (err, 0, "unexpected argument \"%s\"", p->argv[p->i + 1]);
  *id = p->argv[p->i];
  return 0;
}

static bool
flag_value (const char *arg)
{
  return !arg || strcmp (arg, "false") != 0;
}

/* systemd's socket activation, as runc takes it: the LISTEN_FDS fds from
 * 3 on, handed to this very process (LISTEN_PID), reach the container at
 * the same numbers, with LISTEN_FDS and LISTEN_PID=1 in its environment;
 * --preserve-fds counts the fds after them. Anything else (no variable, or
 * the fds of another process that left them set): nothing passed. */
static int
listen_fds (struct ar_create_opts *o, ar_error **err)
{
  static char fds_var[32], pid_var[] = "LISTEN_PID=1";
  static char *env[2];
  const char *fds = getenv ("LISTEN_FDS"), *pid = getenv ("LISTEN_PID");
  char *end;
  if (!fds || !pid || !*pid || strtol (pid, &end, 10) != (long) getpid () || *end)
    return 0;
  errno = 0;
  long n = strtol (fds, &end, 10);
  if (!*fds || *end || errno || n < 0 || n > INT_MAX - 3 - o->preserve_fds)
    return ar_err (err, 0, "LISTEN_FDS=%s: not a number of fds (systemd's socket activation)", fds);
  if (n == 0)
    return 0;
  o->preserve_fds += (int) n;
  snprintf (fds_var, sizeof fds_var, "LISTEN_FDS=%ld", n);
  env[0] = fds_var;
  env[1] = pid_var;
  o->exec_env = env;
  o->n_exec_env = 2;
  return 0;
}

int
ar_parse_create_opts (int argc, char **argv, bool run, struct ar_create_opts *o, ar_error **err)
{
  static struct ar_opt create_opts[ARRAY_SIZE (run_opts) - N_RUN_ONLY];
  if (!create_opts[0].name)
    memcpy (create_opts, run_opts, sizeof create_opts - sizeof *create_opts); /* last: the NULL end */
  struct ar_optparser p = { .argc = argc, .argv = argv, .i = 1, .opts = run ? run_opts : create_opts };
  unsigned long long n;
  const char *arg;
  int id;

  memset (o, 0, sizeof *o);
  while ((id = ar_opt_next (&p, &arg, err)) > 0)
    switch (id)
      {
      case O_BUNDLE: o->bundle = arg; break;
      case O_CONFIG: o->config_path = arg; break;
      case O_PID_FILE: o->pid_file = arg; break;
      case O_CONSOLE_SOCKET: o->console_socket = arg; break;
      case O_NO_PIVOT: o->no_pivot = flag_value (arg); break;
      case O_NO_NEW_KEYRING: o->no_new_keyring = flag_value (arg); break;
      case O_PRESERVE_FDS:
        if (ar_opt_uint ("--preserve-fds", arg, INT_MAX - 3, &n, err) < 0)
          return -1;
        o->preserve_fds = (int) n;
        break;
      case O_DETACH:
      case O_KEEP:
        if (id == O_DETACH)
          o->detach = flag_value (arg);
        else
          o->keep = flag_value (arg);
        break;
      }
  if (id < 0 || listen_fds (o, err) < 0)
    return -1;
  return ar_one_id (&p, &o->id, err);
}

int
cmd_create (struct ar_ctx *ctx, int argc, char **argv)
{
  cleanup_error ar_error *err = NULL;
  struct ar_create_opts o;

  if (ar_parse_create_opts (argc, argv, false, &o, &err) < 0 || ar_container_create (ctx, &o, &err) < 0)
    return ar_cmd_fail (ar_steal_ptr (err));
  return 0;
}
