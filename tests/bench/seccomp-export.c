/* Writes to stdout the seccomp BPF program agentrun loads for a bundle's
 * config.json (linux.seccomp compiled by this tree's runtime, as create
 * compiles it), for tools that take compiled BPF on an fd (bwrap --seccomp).
 * tests/bench/sandbox-start.sh gives bwrap the agent profile this way.
 *   usage: seccomp-export CONFIG.JSON >PROG.BPF
 * Refuses what a plain classic-BPF loader cannot reproduce: a profile with
 * user-notification rules, or one whose load needs seccomp(2) flags. */
#include <linux/filter.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "error.h"
#include "strio.h"
#include "seccomp.h"
#include "spec.h"

static int
fail (const char *what, ar_error *err)
{
  fprintf (stderr, "seccomp-export: %s%s%s\n", what, err ? ": " : "", err ? err->msg : "");
  ar_error_free (err);
  return 1;
}

int
main (int argc, char **argv)
{
  struct ar_spec *spec = NULL;
  struct ar_seccomp_prog *prog = NULL;
  ar_error *err = NULL;

  if (argc != 2)
    {
      fprintf (stderr, "usage: seccomp-export CONFIG.JSON >PROG.BPF\n");
      return 2;
    }
  if (ar_spec_load_file (argv[1], &spec, &err) < 0)
    return fail (argv[1], err);
  if (spec->linux_ == NULL || spec->linux_->seccomp == NULL)
    return fail ("the config has no linux.seccomp", NULL);
  if (ar_seccomp_compile (spec->linux_->seccomp, &prog, &err) < 0)
    return fail ("linux.seccomp", err);
  if (prog->notify)
    return fail ("the profile has user-notification rules (no classic-BPF loader can serve them)", NULL);
  if (prog->flags != 0)
    return fail ("the profile's load needs seccomp(2) flags (a prctl loader sets none)", NULL);
  if (ar_write_all (STDOUT_FILENO, prog->insns, prog->len * sizeof (struct sock_filter)) < 0)
    return fail ("write the program", NULL);
  fprintf (stderr, "seccomp-export: %zu instructions\n", prog->len);
  ar_seccomp_prog_free (prog);
  ar_spec_free (spec);
  return 0;
}
