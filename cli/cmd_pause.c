/* agentrun pause ID / agentrun resume ID: freeze and thaw every process of
 * the container through its cgroup (v1 freezer, or cgroup.freeze on v2),
 * returning once the kernel reports the cgroup frozen (or thawed). */
#include "config.h"
#include "cgroups.h"
#include "cli.h"
#include "commands.h"
#include "log.h"
#include "spec.h"
#include "state.h"
#include "util.h"

#include <stdio.h>

static const struct ar_opt pause_opts[] = {
  { "help", 'h', false, 1 },
  { NULL, 0, false, 0 },
};

static int
freeze_cmd (struct ar_ctx *ctx, int argc, char **argv, bool freeze)
{
  const char *name = freeze ? "pause" : "resume";
  struct ar_optparser p = { .argc = argc, .argv = argv, .i = 1, .opts = pause_opts };
  cleanup_error ar_error *err = NULL;
  cleanup_close int dirfd = -1;
  struct ar_cstate st = { 0 };
  const char *arg;
  int opt, ret = 1;

  while ((opt = ar_opt_next (&p, &arg, &err)) > 0)
    {
      printf ("usage: agentrun %s ID\n", name);
      return 0;
    }
  if (opt == 0 && p.i + 1 != argc)
    ar_err (&err, 0, "expected exactly one container id");
  if (err || ar_validate_id (argv[p.i], &err) < 0 || ar_state_open (ctx->root, argv[p.i], true, &dirfd, &err) < 0)
    goto out;
  int r = ar_cstate_read (dirfd, &st, &err);
  if (r < 0)
    goto out;
  const char *status = r == 0 ? "creating" : ar_cstate_status (dirfd, &st);
  if (freeze && strcmp (status, "running") && strcmp (status, "created"))
    ar_err (&err, 0, "container \"%s\" is %s, not running", argv[p.i], status);
  else if (!freeze && strcmp (status, "paused"))
    ar_err (&err, 0, "container \"%s\" is %s, not paused", argv[p.i], status);
  else if (ar_cgroup_freeze (st.cgroup_path, freeze, &err) == 0)
    ret = 0;
out:
  if (err)
    ar_log_error (ar_steal_ptr (err));
  ar_cstate_clear (&st);
  return ret;
}

int
cmd_pause (struct ar_ctx *ctx, int argc, char **argv)
{
  return freeze_cmd (ctx, argc, argv, true);
}

int
cmd_resume (struct ar_ctx *ctx, int argc, char **argv)
{
  return freeze_cmd (ctx, argc, argv, false);
}
