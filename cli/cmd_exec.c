/* agentrun exec [options] ID [COMMAND [ARG...]] */
#include "config.h"
#include "cmd_common.h"
#include "commands.h"
#include "exec.h"
#include "util.h"

#include <limits.h>

enum {
  E_PROCESS = 1,
  E_DETACH,
  E_TTY,
  E_CONSOLE,
  E_PID_FILE,
  E_CWD,
  E_ENV,
  E_USER,
  E_CAP,
  E_NNP,
  E_PRESERVE,
  E_GIDS,
  E_CGROUP,
  E_PAUSED
};

static const struct ar_opt exec_opts[] = {
  { "process", 'p', true, E_PROCESS },
  { "detach", 'd', false, E_DETACH },
  { "tty", 't', false, E_TTY },
  { "console-socket", 0, true, E_CONSOLE },
  { "pid-file", 0, true, E_PID_FILE },
  { "cwd", 0, true, E_CWD },
  { "env", 'e', true, E_ENV },
  { "user", 'u', true, E_USER },
  { "cap", 'c', true, E_CAP },
  { "no-new-privs", 0, false, E_NNP },
  { "preserve-fds", 0, true, E_PRESERVE },
  { "additional-gids", 'g', true, E_GIDS },
  { "cgroup", 0, true, E_CGROUP },
  { "ignore-paused", 0, false, E_PAUSED },
  { NULL, 0, false, 0 },
};

static void
push (char ***v, size_t *n, const char *s)
{
  *v = xrealloc (*v, (*n + 2) * sizeof **v);
  (*v)[(*n)++] = (char *) s;
  (*v)[*n] = NULL;
}

static int
parse (int argc, char **argv, struct ar_exec_opts *o, ar_error **err)
{
  struct ar_optparser p = { .argc = argc, .argv = argv, .i = 1, .opts = exec_opts };
  unsigned long long n;
  const char *arg;
  int id;

  while ((id = ar_opt_next (&p, &arg, err)) > 0)
    {
      bool on = !arg || strcmp (arg, "false") != 0;
      switch (id)
        {
        case E_PROCESS: o->process_path = arg; break;
        case E_DETACH: o->detach = on; break;
        case E_TTY: o->tty = on; break;
        case E_CONSOLE: o->console_socket = arg; break;
        case E_PID_FILE: o->pid_file = arg; break;
        case E_CWD: o->cwd = arg; break;
        case E_ENV:
          if (!strchr (arg, '='))
            return ar_err (err, 0, "--env \"%s\": expected NAME=VALUE", arg);
          push (&o->env, &o->n_env, arg);
          break;
        case E_USER: o->user = arg; break;
        case E_CAP: push (&o->caps, &o->n_caps, arg); break;
        case E_NNP: o->no_new_privs = on; break;
        case E_GIDS:
          if (ar_opt_uint ("--additional-gids", arg, UINT32_MAX - 1, &n, err) < 0)
            return -1;
          o->add_gids = xrealloc (o->add_gids, (o->n_add_gids + 1) * sizeof *o->add_gids);
          o->add_gids[o->n_add_gids++] = (uint32_t) n;
          break;
        case E_CGROUP: push (&o->cgroups, &o->n_cgroups, arg); break;
        case E_PAUSED: o->ignore_paused = on; break;
        case E_PRESERVE:
          if (ar_opt_uint ("--preserve-fds", arg, INT_MAX - 3, &n, err) < 0)
            return -1;
          o->preserve_fds = (int) n;
          break;
        }
    }
  if (id < 0)
    return -1;
  if (p.i >= argc)
    return ar_err (err, 0, "missing container id");
  o->id = argv[p.i++];
  o->args = argv + p.i;
  o->n_args = (size_t) (argc - p.i);
  if (o->cwd && o->cwd[0] != '/')
    return ar_err (err, 0, "--cwd \"%s\": must be absolute", o->cwd);
  return 0;
}

int
cmd_exec (struct ar_ctx *ctx, int argc, char **argv)
{
  cleanup_error ar_error *err = NULL;
  struct ar_exec_opts o = { 0 };
  int status = 0, r;

  /* runc's status when exec itself fails: 255, apart from the process's own */
  if (parse (argc, argv, &o, &err) < 0 || ar_container_exec (ctx, &o, &status, &err) < 0)
    r = (ar_cmd_fail (ar_steal_ptr (err)), 255);
  else
    r = status;
  free (o.env);
  free (o.caps);
  free (o.cgroups);
  free (o.add_gids);
  return r;
}
