/* agentrun run [create options] [-d] [--keep] ID */
#include "config.h"
#include "cmd_common.h"
#include "commands.h"
#include "util.h"

int
cmd_run (struct ar_ctx *ctx, int argc, char **argv)
{
  cleanup_error ar_error *err = NULL;
  struct ar_create_opts o;
  int status = 0;

  if (ar_parse_create_opts (argc, argv, true, &o, &err) < 0 || ar_container_run (ctx, &o, &status, &err) < 0)
    return ar_cmd_fail (ar_steal_ptr (err));
  return status;
}
