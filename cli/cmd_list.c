/* agentrun list [-q] [--format table|json] */
#include "config.h"
#include "cmd_common.h"
#include "commands.h"
#include "spec.h"
#include "state.h"
#include "util.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <sys/stat.h>

enum { L_QUIET = 1, L_FORMAT };
static const struct ar_opt list_opts[] = {
  { "quiet", 'q', false, L_QUIET },
  { "format", 'f', true, L_FORMAT },
  { NULL, 0, false, 0 },
};

static int
by_name (const struct dirent **a, const struct dirent **b)
{
  return strcmp ((*a)->d_name, (*b)->d_name);
}

/* As runc: the owner is whoever owns the container's state folder (the
 * user who created it), by name when the host knows one, else "#UID". */
static char *
owner_of (int dirfd)
{
  struct stat sb;
  struct passwd pw, *res = NULL;
  char buf[1024];
  if (fstat (dirfd, &sb) < 0)
    return xstrdup ("");
  if (getpwuid_r (sb.st_uid, &pw, buf, sizeof buf, &res) == 0 && res)
    return xstrdup (res->pw_name);
  return xasprintf ("#%u", (unsigned) sb.st_uid);
}

static void
show (struct ar_ctx *ctx, const char *name, bool quiet, bool json, bool *first)
{
  cleanup_error ar_error *err = NULL;
  cleanup_close int dirfd = -1;
  struct ar_cstate st;

  if (ar_validate_id (name, &err) < 0)
    return;
  ar_error_freep (&err);
  if (ar_state_open (ctx->root, name, false, &dirfd, &err) < 0 || ar_cstate_read (dirfd, &st, &err) < 0)
    return;
  if (!st.id)
    st.id = xstrdup (name);
  free (st.owner);
  st.owner = owner_of (dirfd);
  const char *status = ar_cstate_status (dirfd, &st);
  if (quiet)
    printf ("%s\n", st.id);
  else if (json)
    {
      cleanup_free char *j = ar_cstate_to_json (&st, status, false);
      printf ("%s%s", *first ? "" : ",", j);
    }
  else
    printf ("%-12s %-8d %-10s %-40s %-30s %s\n", st.id, strcmp (status, "stopped") ? (int) st.pid : 0, status,
            st.bundle ? st.bundle : "", st.created ? st.created : "", st.owner ? st.owner : "");
  *first = false;
  ar_cstate_clear (&st);
}

int
cmd_list (struct ar_ctx *ctx, int argc, char **argv)
{
  cleanup_error ar_error *err = NULL;
  struct ar_optparser p = { .argc = argc, .argv = argv, .i = 1, .opts = list_opts };
  const char *arg, *format = "table";
  bool quiet = false, first = true;
  struct dirent **names = NULL;
  int id, n;

  while ((id = ar_opt_next (&p, &arg, &err)) > 0)
    if (id == L_QUIET)
      quiet = !arg || strcmp (arg, "false") != 0;
    else
      format = arg;
  if (id < 0)
    return ar_cmd_fail (ar_steal_ptr (err));
  if (strcmp (format, "table") && strcmp (format, "json"))
    return ar_cmd_fail ((ar_err (&err, 0, "--format: \"%s\" is not table or json", format), ar_steal_ptr (err)));
  bool json = strcmp (format, "json") == 0;
  n = ctx->root ? scandir (ctx->root, &names, NULL, by_name) : -1;
  if (n < 0 && errno != ENOENT && ctx->root)
    return ar_cmd_fail ((ar_err (&err, errno, "read state root %s", ctx->root), ar_steal_ptr (err)));
  if (json && !quiet)
    printf ("[");
  else if (!quiet)
    printf ("%-12s %-8s %-10s %-40s %-30s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED", "OWNER");
  for (int i = 0; i < n; i++)
    {
      if (names[i]->d_name[0] != '.')
        show (ctx, names[i]->d_name, quiet, json, &first);
      free (names[i]);
    }
  free (names);
  if (json && !quiet)
    printf ("]\n");
  return 0;
}
