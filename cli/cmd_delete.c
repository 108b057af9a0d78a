/* agentrun delete [-f] ID */
#include "config.h"
#include "cmd_common.h"
#include "commands.h"
#include "util.h"

static const struct ar_opt delete_opts[] = { { "force", 'f', false, 1 }, { NULL, 0, false, 0 } };

int
cmd_delete (struct ar_ctx *ctx, int argc, char **argv)
{
  cleanup_error ar_error *err = NULL;
  struct ar_optparser p = { .argc = argc, .argv = argv, .i = 1, .opts = delete_opts };
  const char *arg, *id;
  bool force = false;
  int o;

  while ((o = ar_opt_next (&p, &arg, &err)) > 0)
    force = !arg || strcmp (arg, "false") != 0;
  if (o < 0 || ar_one_id (&p, &id, &err) < 0 || ar_container_delete (ctx, id, force, &err) < 0)
    return ar_cmd_fail (ar_steal_ptr (err));
  return 0;
}
