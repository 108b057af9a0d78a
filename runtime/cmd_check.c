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

enum { C_HELP = 1, C_JSON };

static void
check_usage (FILE *f)
{
  fprintf (f, "usage: agentrun check [options] [--json]\n"
              "Run escape probes inside a sandbox made with the options of `agentrun sandbox`\n"
              "and report, per probe, what was expected and what happened.\n\n"
              "  --json                a JSON report\n%s",
           ar_sandbox_opts_help);
}

int
cmd_check (struct ar_globals *g, int argc, char **argv)
{
  struct ar_opt opts[AR_SB_N_OPTS + 3] = {
    { "help", 'h', false, C_HELP }, { "json", 0, false, C_JSON },
  };
  /* every sandbox option but --bundle: check runs its own sandbox */
  for (size_t i = 0, n = 2; i < ARRAY_SIZE (ar_sandbox_opts); i++)
    if (ar_sandbox_opts[i].id != AR_SB_BUNDLE)
      opts[n++] = ar_sandbox_opts[i];
  struct ar_optparser p = { .argc = argc, .argv = argv, .i = 1, .opts = opts, .cmd = "check" };
  cleanup_error ar_error *err = NULL;
  struct ar_sandbox sb;
  const char *arg;
  bool json = false;
  int id, crossed = 0, r = 125;
  ar_sandbox_init (&sb);
  while ((id = ar_opt_next (&p, &arg, &err)) > 0)
    {
      if (id == C_HELP)
        {
          check_usage (stdout);
          r = 0;
          goto done;
        }
      if (id == C_JSON)
        json = true;
      else if (ar_sandbox_opt (&sb, id, arg, &err) < 0)
        break;
      if (err)
        break;
    }
  if (!err && p.i < argc)
    ar_err (&err, 0, "unexpected argument \"%s\" (check runs its own probes)", argv[p.i]);
  if (err)
    {
      ar_log (AR_LOG_ERROR, "check: %s", err->msg);
      r = 2;
      goto done;
    }
  if (ar_check_run (g, &sb, json, &crossed, &err) < 0)
    ar_log (AR_LOG_ERROR, "check: %s", err->msg);
  else
    r = crossed ? 1 : 0;
done:
  ar_sandbox_free (&sb);
  return r;
}
