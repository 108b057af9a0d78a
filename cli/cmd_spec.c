/* agentrun spec [--bundle DIR] [--rootless]: write a default config.json
 * (runc's defaults) into the bundle, never over an existing one. */
#include "config.h"
#include "cli.h"
#include "commands.h"
#include "generate.h"
#include "log.h"
#include "spec.h"
#include "util.h"

#include <stdio.h>

enum { O_BUNDLE = 1, O_ROOTLESS, O_HELP, O_AGENT };

static const struct ar_opt spec_opts[] = {
  { "bundle", 'b', true, O_BUNDLE },
  { "rootless", 0, false, O_ROOTLESS },
  { "help", 'h', false, O_HELP },
  { "agent", 0, false, O_AGENT }, /* taken before parsing: cmd_spec_agent */
  { NULL, 0, false, 0 },
};

static void
spec_usage (FILE *out)
{
  fprintf (out, "usage: agentrun spec [--bundle DIR] [--rootless]\n"
                "  --bundle, -b DIR   write DIR/config.json (default: the current directory)\n"
                "  --rootless         a config for a user without privileges (user namespace)\n");
}

int
cmd_spec (struct ar_ctx *ctx, int argc, char **argv)
{
  struct ar_optparser p = { .argc = argc, .argv = argv, .i = 1, .opts = spec_opts };
  struct ar_gen_opts o = { .host_uid = geteuid (), .host_gid = getegid () };
  const char *bundle = ".", *arg;
  cleanup_error ar_error *err = NULL;
  int id;

  for (int i = 1; i < argc && strcmp (argv[i], "--"); i++)
    if (strcmp (argv[i], "--agent") == 0) /* the agent profile: cli/cmd_sandbox.c */
      return cmd_spec_agent (ctx, argc, argv);
  (void) ctx;
  while ((id = ar_opt_next (&p, &arg, &err)) > 0)
    switch (id)
      {
      case O_BUNDLE: bundle = arg; break;
      case O_ROOTLESS: o.rootless = !arg || strcmp (arg, "false") != 0; break;
      case O_HELP: spec_usage (stdout); return 0;
      }
  if (id == 0 && p.i < argc)
    ar_err (&err, 0, "unexpected argument \"%s\"", argv[p.i]);
  if (err)
    {
      ar_log_error (ar_steal_ptr (err));
      return 1;
    }
  cleanup_free char *text = NULL;
  /* What we write must be what we accept: check it before it lands. */
  struct ar_spec *check = NULL;
  if (ar_generate_default (&o, &text, &err) < 0 || ar_spec_parse (text, strlen (text), "config.json", &check, &err) < 0
      || ar_write_new_config (bundle, text, &err) < 0)
    {
      ar_spec_free (check);
      ar_log_error (ar_steal_ptr (err));
      return 1;
    }
  ar_spec_free (check);
  return 0;
}
