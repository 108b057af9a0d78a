/* agentrun validate [--bundle DIR] [--config FILE] [ID]: the checks create
 * makes before it touches the system, then "ok" or the error and exit 1:
 * the container id if one is given, config.json parsed and validated, and
 * ar_container_check(), the very function create runs: what agentrun itself
 * requires of a config (a process, a mount namespace, capabilities this
 * libcap knows, no LSM label it would not apply, judged on this host) and,
 * for a bundle, that the rootfs resolves. With --config alone only the file
 * is judged, so a config can be checked without a rootfs. */
#include "config.h"
#include "cli.h"
#include "commands.h"
#include "container.h"
#include "log.h"
#include "spec.h"
#include "util.h"

#include <stdio.h>

enum { O_BUNDLE = 1, O_CONFIG, O_HELP };

static const struct ar_opt validate_opts[] = {
  { "bundle", 'b', true, O_BUNDLE },
  { "config", 'c', true, O_CONFIG },
  { "help", 'h', false, O_HELP },
  { NULL, 0, false, 0 },
};

static int
validate_usage (FILE *out)
{
  fprintf (out, "usage: agentrun validate [--bundle DIR] [--config FILE] [ID]\n"
                "  --bundle, -b DIR   the bundle (default: the current directory)\n"
                "  --config, -c FILE  the config (default: DIR/config.json); alone, only the file is checked\n"
                "  ID                 also check a container id\n");
  return 0;
}

int
cmd_validate (struct ar_ctx *ctx, int argc, char **argv)
{
  struct ar_optparser p = { .argc = argc, .argv = argv, .i = 1, .opts = validate_opts };
  const char *bundle = NULL, *config = NULL, *arg, *id = NULL;
  cleanup_error ar_error *err = NULL;
  cleanup_free char *path = NULL;
  struct ar_spec *spec = NULL;
  int opt;

  (void) ctx;
  while ((opt = ar_opt_next (&p, &arg, &err)) > 0)
    switch (opt)
      {
      case O_BUNDLE: bundle = arg; break;
      case O_CONFIG: config = arg; break;
      case O_HELP: return validate_usage (stdout);
      }
  if (opt == 0 && p.i < argc)
    id = argv[p.i++];
  if (opt == 0 && p.i < argc)
    ar_err (&err, 0, "unexpected argument \"%s\"", argv[p.i]);
  bool whole_bundle = bundle || !config;
  bundle = bundle ? bundle : ".";
  path = config ? xstrdup (config) : xasprintf ("%s/config.json", bundle);
  if (err || (id && ar_validate_id (id, &err) < 0) || ar_spec_load_file (path, &spec, &err) < 0
      || ar_container_check (spec, path, whole_bundle ? bundle : NULL, NULL, &err) < 0)
    {
      ar_spec_free (spec);
      ar_log_error (ar_steal_ptr (err));
      return 1;
    }
  ar_spec_free (spec);
  printf ("ok\n");
  return 0;
}
