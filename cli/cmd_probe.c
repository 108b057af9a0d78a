/* agentrun __probe: the hidden command check runs inside its sandbox (see
 * probes.h): its options, then every probe. */
#include "config.h"
#include "cli.h"
#include "commands.h"
#include "error.h"
#include "probes.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  P_HOST_PID = 1,
  P_LOOPBACK,
  P_FD,
  P_ALLOW,
  P_DENY_NAME,
  P_TOKEN,
  P_WRITE,
  P_CONTROL,
  P_CRED,
  P_LANDLOCK,
  P_LL_WRITE,
  P_UNIX
};

static const struct ar_opt probe_opts[] = {
  { "host-pid", 0, true, P_HOST_PID },
  { "loopback", 0, true, P_LOOPBACK },
  { "fd", 0, true, P_FD },
  { "allow", 0, true, P_ALLOW },
  { "deny-name", 0, true, P_DENY_NAME },
  { "token", 0, true, P_TOKEN },
  { "write", 0, true, P_WRITE },
  { "control-write", 0, true, P_CONTROL },
  { "cred", 0, true, P_CRED },
  { "landlock", 0, false, P_LANDLOCK },
  { "landlock-write", 0, true, P_LL_WRITE },
  { "unix-socket", 0, true, P_UNIX },
  { NULL, 0, false, 0 },
};

static void
push (const char ***v, size_t *n, const char *s)
{
  *v = xrealloc (*v, (*n + 1) * sizeof **v);
  (*v)[(*n)++] = s;
}

static int
parse_probe_args (int argc, char **argv, struct ar_probe_args *a, ar_error **err)
{
  struct ar_optparser p = { .argc = argc, .argv = argv, .i = 1, .opts = probe_opts };
  const char *arg;
  unsigned long long v;
  int id;
  while ((id = ar_opt_next (&p, &arg, err)) > 0)
    switch (id)
      {
      case P_HOST_PID:
        if (ar_opt_uint ("--host-pid", arg, 4194304, &v, err) < 0)
          return -1;
        a->host_pid = (long) v;
        break;
      case P_LOOPBACK:
        if (ar_opt_uint ("--loopback", arg, 65535, &v, err) < 0)
          return -1;
        a->loopback_port = (int) v;
        break;
      case P_FD:
        if (ar_opt_uint ("--fd", arg, 1 << 20, &v, err) < 0)
          return -1;
        a->fd = (int) v;
        break;
      case P_ALLOW:
        {
          char *c = strrchr (arg, ':');
          if (!c || ar_opt_uint ("--allow", c + 1, 65535, &v, err) < 0)
            return ar_err (err, 0, "--allow %s: expected NAME:PORT", arg);
          a->allow_name = strndup (arg, (size_t) (c - arg));
          a->allow_port = (int) v;
          break;
        }
      case P_DENY_NAME: a->deny_name = arg; break;
      case P_TOKEN: a->token = arg; break;
      case P_WRITE: push (&a->writes, &a->n_writes, arg); break;
      case P_CONTROL: push (&a->controls, &a->n_controls, arg); break;
      case P_CRED: push (&a->creds, &a->n_creds, arg); break;
      case P_LANDLOCK: a->landlock = true; break;
      case P_LL_WRITE:
        a->landlock = true;
        push (&a->ll_writes, &a->n_ll_writes, arg);
        break;
      case P_UNIX: a->unix_socket = arg; break;
      }
  return id < 0 ? -1 : 0;
}

int
cmd_probe (struct ar_ctx *ctx, int argc, char **argv)
{
  struct ar_probe_args a = { .fd = -1, .deny_name = "example.com", .token = "x" };
  cleanup_error ar_error *err = NULL;
  (void) ctx;
  /* first, before anything of ours can open a file */
  ar_probes_fds (&a);
  if (parse_probe_args (argc, argv, &a, &err) < 0)
    {
      fprintf (stderr, "%s: %s\n", AR_PROBE_CMD, err->msg);
      return 2;
    }
  ar_probes_run (&a);
  free (a.allow_name);
  free (a.writes);
  free (a.controls);
  free (a.creds);
  free (a.ll_writes);
  return 0;
}
