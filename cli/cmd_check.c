/* `agentrun check [sandbox options] [--json]`: see check.h. Exit status: 0
 * when every probe held, 1 when one crossed, 125 when the sandbox could not
 * be made (that is a failure too: nothing was shown to hold). */
#include "config.h"
#include "check.h"
#include "commands.h"
#include "log.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

#include "profile.h"

enum { C_HELP = AR_SBC_HELP, C_JSON, C_PROFILE = AR_SBC_PROFILE, C_SETTINGS };

static void
check_usage (FILE *f)
{
  fprintf (f,
           "usage: agentrun check [options] [--json]\n"
           "Run escape probes inside a sandbox made with the options of `agentrun sandbox`\n"
           "and report, per probe, what was expected and what happened.\n\n"
           "  --json                a JSON report\n%s%s",
           ar_sandbox_opts_help, ar_profile_opts_help);
}

static int
check_opt (void *data, int id, const char *arg, ar_error **err)
{
  (void) arg;
  (void) err;
  if (id == C_JSON)
    *(bool *) data = true;
  return 0;
}

int
cmd_check (struct ar_ctx *ctx, int argc, char **argv)
{
  static const struct ar_opt own[] = { { "help", 'h', false, C_HELP },
                                       { "json", 0, false, C_JSON },
                                       { "profile", 0, true, C_PROFILE },
                                       { "settings", 0, true, C_SETTINGS } };
  cleanup_error ar_error *err = NULL;
  struct ar_sandbox sb;
  bool json = false;
  int first, crossed = 0, r = 125;
  const struct ar_sb_cmd c = {
    .own = own, .n_own = ARRAY_SIZE (own), .usage = check_usage, .own_opt = check_opt, .data = &json, .drop_id = AR_SB_BUNDLE
  };
  ar_sandbox_init (&sb);
  int pr = ar_sandbox_parse_args (&sb, &c, argc, argv, &first);
  if (pr != 0)
    {
      r = pr > 0 ? 0 : 2;
      goto done;
    }
  if (first < argc)
    ar_err (&err, 0, "unexpected argument \"%s\" (check runs its own probes)", argv[first]);
  if (err)
    {
      ar_log_error (ar_steal_ptr (err));
      r = 2;
      goto done;
    }
  if (ar_check_run (ctx, &sb, json, &crossed, &err) < 0)
    ar_log_error (ar_steal_ptr (err));
  else
    r = crossed ? 1 : 0;
done:
  ar_sandbox_free (&sb);
  return r;
}
