/* agentrun start ID */
#include "config.h"
#include "cmd_common.h"
#include "commands.h"
#include "util.h"

static const struct ar_opt no_opts[] = { { NULL, 0, false, 0 } };

int
cmd_start (struct ar_ctx *ctx, int argc, char **argv)
{
  cleanup_error ar_error *err = NULL;
  struct ar_optparser p = { .argc = argc, .argv = argv, .i = 1, .opts = no_opts };
  const char *arg, *id;

  if (ar_opt_next (&p, &arg, &err) < 0 || ar_one_id (&p, &id, &err) < 0 || ar_container_start (ctx, id, &err) < 0)
    return ar_cmd_fail (ar_steal_ptr (err));
  return 0;
}
