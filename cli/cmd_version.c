/* agentrun version: this build's version and commit, the runtime-spec
 * version it implements and the libseccomp it runs with. */
#include "config.h"
#include "cli.h"
#include "commands.h"
#include "log.h"
#include "model.h"
#include "util.h"

#include <seccomp.h>
#include <stdio.h>

int
cmd_version (struct ar_ctx *ctx, int argc, char **argv)
{
  static const struct ar_opt opts[] = { { "help", 'h', false, 1 }, { NULL, 0, false, 0 } };
  struct ar_optparser p = { .argc = argc, .argv = argv, .i = 1, .opts = opts };
  cleanup_error ar_error *err = NULL;
  const char *arg;
  int id = argc > 0 ? ar_opt_next (&p, &arg, &err) : 0;
  (void) ctx;
  if (id < 0)
    {
      ar_log_error (ar_steal_ptr (err));
      return 1;
    }
  if (id > 0)
    {
      printf ("usage: agentrun version\n");
      return 0;
    }
  const struct scmp_version *v = seccomp_version ();
  printf ("agentrun version %s\ncommit: %s\nspec: %s\nlibseccomp: %u.%u.%u\n", PACKAGE_VERSION, GIT_COMMIT,
          AR_SPEC_VERSION_STRING, v->major, v->minor, v->micro);
  return 0;
}
