/* agentrun kill [-a] ID [SIGNAL] */
#include "config.h"
#include "cmd_common.h"
#include "commands.h"
#include "spec.h"
#include "util.h"

#include <signal.h>

static const struct ar_opt kill_opts[] = { { "all", 'a', false, 1 }, { NULL, 0, false, 0 } };

int
cmd_kill (struct ar_ctx *ctx, int argc, char **argv)
{
  cleanup_error ar_error *err = NULL;
  struct ar_optparser p = { .argc = argc, .argv = argv, .i = 1, .opts = kill_opts };
  const char *arg;
  bool all = false;
  int id, sig = SIGTERM;

  while ((id = ar_opt_next (&p, &arg, &err)) > 0)
    all = !arg || strcmp (arg, "false") != 0;
  if (id < 0)
    return ar_cmd_fail (ar_steal_ptr (err));
  if (p.i >= argc)
    return ar_cmd_fail ((ar_err (&err, 0, "missing container id"), ar_steal_ptr (err)));
  if (p.i + 2 < argc)
    return ar_cmd_fail ((ar_err (&err, 0, "unexpected argument \"%s\"", argv[p.i + 2]), ar_steal_ptr (err)));
  if (p.i + 1 < argc)
    {
      /* 0 asks only whether the container is there, as kill(1) does */
      sig = strcmp (argv[p.i + 1], "0") == 0 ? 0 : ar_signal_from_name (argv[p.i + 1]);
      if (sig < 0)
        return ar_cmd_fail ((ar_err (&err, 0, "unknown signal \"%s\"", argv[p.i + 1]), ar_steal_ptr (err)));
    }
  if (ar_container_kill (ctx, argv[p.i], sig, all, &err) < 0)
    return ar_cmd_fail (ar_steal_ptr (err));
  return 0;
}
