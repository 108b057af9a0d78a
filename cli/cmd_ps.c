/* agentrun ps [--format table|json] ID [PS OPTIONS...]: the container's
 * processes: json, their pids; table, /bin/ps run with the options (default
 * -ef) and cut to its header and the lines of the container's pids. */
#include "config.h"
#include "cmd_common.h"
#include "cgroups.h"
#include "commands.h"
#include "spec.h"
#include "state.h"
#include "strio.h"
#include "util.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static const struct ar_opt ps_opts[] = { { "format", 'f', true, 1 }, { NULL, 0, false, 0 } };

static bool
has (pid_t *v, size_t n, pid_t p)
{
  for (size_t i = 0; i < n; i++)
    if (v[i] == p)
      return true;
  return false;
}

/* No cgroup: the init and its descendants, found through /proc ppids. */
static void
descendants (pid_t init, pid_t **pids, size_t *n)
{
  *pids = xmalloc0 (sizeof **pids);
  (*pids)[0] = init;
  *n = 1;
  for (bool grew = true; grew;)
    {
      grew = false;
      DIR *d = opendir ("/proc");
      struct dirent *de;
      if (!d)
        return;
      while ((de = readdir (d)))
        {
          pid_t p = (pid_t) atoi (de->d_name);
          if (p <= 0 || has (*pids, *n, p) || !has (*pids, *n, ar_proc_ppid (p)))
            continue;
          *pids = xrealloc (*pids, (*n + 1) * sizeof **pids);
          (*pids)[(*n)++] = p;
          grew = true;
        }
      closedir (d);
    }
}

/* Run /bin/ps with args (after the id; default -ef) and its stdout on a
 * pipe; the whole output in *out. Its stderr stays ours, so its own
 * complaint about an option reaches the user. */
static int
run_ps (char **args, int nargs, char **out, ar_error **err)
{
  int pfd[2];
  if (pipe2 (pfd, O_CLOEXEC) < 0)
    return ar_err (err, errno, "pipe");
  char *def[] = { (char *) "-ef" };
  if (nargs == 0)
    args = def, nargs = 1;
  char **argv = xmalloc0 ((size_t) (nargs + 2) * sizeof *argv);
  argv[0] = (char *) "ps";
  memcpy (argv + 1, args, (size_t) nargs * sizeof *argv);
  pid_t pid = fork ();
  if (pid == 0)
    {
      if (dup2 (pfd[1], STDOUT_FILENO) >= 0)
        execv ("/bin/ps", argv);
      fprintf (stderr, "agentrun ps: run /bin/ps: %s\n", strerror (errno));
      _exit (127);
    }
  free (argv);
  close (pfd[1]);
  cleanup_close int rfd = pfd[0];
  if (pid < 0)
    return ar_err (err, errno, "fork");
  char *buf = NULL;
  int rerr = ar_read_all (rfd, 64 << 20, &buf, NULL) < 0 ? errno : 0;
  if (rerr)
    close (ar_steal_fd (rfd)); /* a ps still writing gets SIGPIPE and ends */
  int ws = 0;
  while (waitpid (pid, &ws, 0) < 0 && errno == EINTR)
    ;
  if (rerr)
    return ar_err (err, rerr, "read the output of /bin/ps");
  if (!WIFEXITED (ws) || WEXITSTATUS (ws) != 0)
    {
      free (buf);
      return ar_err (err, 0, "/bin/ps failed (exit status %d)", WIFEXITED (ws) ? WEXITSTATUS (ws) : 128 + WTERMSIG (ws));
    }
  *out = buf;
  return 0;
}

/* The index of the whitespace-separated field named "PID" in the header. */
static int
pid_column (const char *header)
{
  int i = 0;
  for (const char *p = header; *p; i++)
    {
      p += strspn (p, " \t");
      size_t l = strcspn (p, " \t");
      if (l == 3 && strncmp (p, "PID", 3) == 0)
        return i;
      if (l == 0)
        break;
      p += l;
    }
  return -1;
}

static long
field_num (const char *line, int col)
{
  const char *p = line;
  for (int i = 0; i < col && *p; i++)
    {
      p += strspn (p, " \t");
      p += strcspn (p, " \t");
    }
  p += strspn (p, " \t");
  char *end;
  long v = strtol (p, &end, 10);
  return end != p && (*end == ' ' || *end == '\t' || *end == '\0') ? v : -1;
}

/* runc's table: ps's own header, then only the lines of our processes. */
static int
print_table (pid_t *pids, size_t n, char **args, int nargs, ar_error **err)
{
  cleanup_free char *out = NULL;
  if (run_ps (args, nargs, &out, err) < 0)
    return -1;
  char *save = NULL, *line = strtok_r (out, "\n", &save);
  int col = line ? pid_column (line) : -1;
  if (col < 0)
    return ar_err (err, 0, "no PID column in the output of /bin/ps (add -o pid or use its default)");
  printf ("%s\n", line);
  while ((line = strtok_r (NULL, "\n", &save)))
    {
      long v = field_num (line, col);
      if (v > 0 && has (pids, n, (pid_t) v))
        printf ("%s\n", line);
    }
  return 0;
}

int
cmd_ps (struct ar_ctx *ctx, int argc, char **argv)
{
  cleanup_error ar_error *err = NULL;
  struct ar_optparser p = { .argc = argc, .argv = argv, .i = 1, .opts = ps_opts };
  cleanup_close int dirfd = -1;
  const char *arg, *id, *format = "table";
  struct ar_cstate st = { 0 };
  pid_t *pids = NULL;
  size_t n = 0;
  int o;

  while ((o = ar_opt_next (&p, &arg, &err)) > 0)
    format = arg;
  if (o == 0 && p.i >= argc)
    ar_err (&err, 0, "missing container id");
  id = err ? NULL : argv[p.i];
  char **ps_args = argv + p.i + 1;
  int n_ps_args = err ? 0 : argc - p.i - 1;
  if (o < 0 || err || ar_validate_id (id, &err) < 0 || ar_state_open (ctx->root, id, false, &dirfd, &err) < 0
      || ar_cstate_read (dirfd, &st, &err) < 0)
    return ar_cmd_fail (ar_steal_ptr (err));
  if (strcmp (format, "table") && strcmp (format, "json"))
    ar_err (&err, 0, "--format: \"%s\" is not table or json", format);
  else if (strcmp (format, "json") == 0 && n_ps_args)
    ar_err (&err, 0, "ps options (\"%s\") go with --format table only", ps_args[0]);
  if (err)
    {
      ar_cstate_clear (&st);
      return ar_cmd_fail (ar_steal_ptr (err));
    }
  if (!st.id || !ar_cstate_alive (&st))
    ;
  else if (st.cgroup_path)
    {
      if (ar_cgroup_pids (st.cgroup_path, &pids, &n, &err) < 0)
        {
          ar_cstate_clear (&st);
          return ar_cmd_fail (ar_steal_ptr (err));
        }
    }
  else
    descendants (st.pid, &pids, &n);
  if (strcmp (format, "json") == 0)
    {
      printf ("[");
      for (size_t i = 0; i < n; i++)
        printf ("%s%d", i ? "," : "", (int) pids[i]);
      printf ("]\n");
    }
  else
    print_table (pids, n, ps_args, n_ps_args, &err);
  free (pids);
  ar_cstate_clear (&st);
  return err ? ar_cmd_fail (ar_steal_ptr (err)) : 0;
}
