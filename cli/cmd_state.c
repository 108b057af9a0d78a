/* agentrun state ID: runc's state JSON. */
#include "config.h"
#include "cmd_common.h"
#include "commands.h"
#include "spec.h"
#include "state.h"
#include "util.h"

#include <stdio.h>

static const struct ar_opt no_opts[] = { { NULL, 0, false, 0 } };

int
cmd_state (struct ar_ctx *ctx, int argc, char **argv)
{
  cleanup_error ar_error *err = NULL;
  struct ar_optparser p = { .argc = argc, .argv = argv, .i = 1, .opts = no_opts };
  cleanup_close int dirfd = -1;
  const char *arg, *id;
  struct ar_cstate st;
  int r;

  if (ar_opt_next (&p, &arg, &err) < 0 || ar_one_id (&p, &id, &err) < 0 || ar_validate_id (id, &err) < 0
      || ar_state_open (ctx->root, id, false, &dirfd, &err) < 0)
    return ar_cmd_fail (ar_steal_ptr (err));
  r = ar_cstate_read (dirfd, &st, &err);
  if (r < 0)
    return ar_cmd_fail (ar_steal_ptr (err));
  if (r == 0)
    {
      /* create holds the lock until state.json exists, so this is a crashed create. */
      st.id = xstrdup (id);
    }
  cleanup_free char *json = ar_cstate_to_json (&st, ar_cstate_status (dirfd, &st), true);
  printf ("%s\n", json);
  ar_cstate_clear (&st);
  return 0;
}
