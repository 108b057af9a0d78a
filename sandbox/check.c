/* `agentrun check`: set the host side up (a loopback listener, a leaked fd,
 * the list of credential files and host folders to try), run the probes in
 * a sandbox made with the caller's options, and judge what they report. A
 * probe that does not report counts as crossed: the check fails closed. */
#include "config.h"
#include "check.h"
#include "jsongen.h"
#include "log.h"
#include "probes.h"
#include "selfexe.h"
#include "strio.h"
#include "util.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_FILES_PER_DIR 8

struct result {
  char *name, *expected, *got;
  bool ok;
};

struct report {
  struct result *v;
  size_t n;
};

/* The probes that must report whatever the options. */
static const char *const required[] = {
  "inherited-fd",
  "outside-address:10.255.255.1:80",
  "outside-address:1.1.1.1:53",
  "see-host-process",
  "effective-capability",
  "create-user-namespace",
  "mount",
  "tiocsti",
  "write-proc-sys",
  "write-sys",
  "host-loopback:127.0.0.1",
#ifdef __x86_64__
  "foreign-syscall-abi",
#endif
  NULL,
};

static void
add_result (struct report *r, const char *name, const char *expected, const char *got, bool ok)
{
  r->v = xrealloc (r->v, (r->n + 1) * sizeof *r->v);
  r->v[r->n++] = (struct result){ xstrdup (name), xstrdup (expected), xstrdup (got), ok };
}

static void
report_free (struct report *r)
{
  for (size_t i = 0; i < r->n; i++)
    {
      free (r->v[i].name);
      free (r->v[i].expected);
      free (r->v[i].got);
    }
  free (r->v);
}

/* ---- host side set-up ---- */

static void
argv_add (struct ar_sandbox *sb, const char *a, const char *b)
{
  char **v = sb->prof.args;
  size_t n = sb->prof.n_args;
  v = xrealloc (v, (n + 3) * sizeof *v);
  v[n++] = xstrdup (a);
  if (b)
    v[n++] = xstrdup (b);
  v[n] = NULL;
  sb->prof.args = v;
  sb->prof.n_args = n;
}

/* A credential path: the file itself, or the first files of a folder. */
static void
add_creds_at (struct ar_sandbox *sb, const char *path)
{
  struct stat st;
  if (lstat (path, &st) < 0)
    return;
  if (S_ISREG (st.st_mode))
    {
      argv_add (sb, "--cred", path);
      return;
    }
  if (!S_ISDIR (st.st_mode))
    return;
  DIR *d = opendir (path);
  int n = 0;
  for (struct dirent *e; d && n < MAX_FILES_PER_DIR && (e = readdir (d));)
    if (e->d_type == DT_REG)
      {
        cleanup_free char *p = xasprintf ("%s/%s", path, e->d_name);
        argv_add (sb, "--cred", p);
        n++;
      }
  if (d)
    closedir (d);
}

static void
add_creds (struct ar_sandbox *sb)
{
  const struct ar_agent_opts *o = &sb->prof;
  for (size_t h = 0; h < o->n_cred_homes; h++)
    for (size_t i = 0; ar_agent_cred_paths[i]; i++)
      {
        cleanup_free char *p = xasprintf ("%s/%s", o->cred_homes[h], ar_agent_cred_paths[i]);
        add_creds_at (sb, p);
      }
  for (size_t i = 0; ar_agent_sys_masks[i]; i++)
    add_creds_at (sb, ar_agent_sys_masks[i]);
  for (size_t i = 0; i < o->n_masks; i++)
    add_creds_at (sb, o->masks[i]);
}

/* Host folders a file must not land in; the workspace and out must take one. */
static void
add_writes (struct ar_sandbox *sb)
{
  const struct ar_agent_opts *o = &sb->prof;
  const char *fixed[] = { "/", "/usr", "/etc", "/opt", "/tmp", "/var/tmp", o->home };
  char parent[PATH_MAX];
  for (size_t i = 0; i < ARRAY_SIZE (fixed); i++)
    {
      struct stat st;
      if (lstat (fixed[i], &st) == 0 && S_ISDIR (st.st_mode))
        argv_add (sb, "--write", fixed[i]);
    }
  snprintf (parent, sizeof parent, "%s", o->workspace);
  char *slash = strrchr (parent, '/');
  if (slash && slash != parent)
    {
      *slash = '\0';
      argv_add (sb, "--write", parent);
    }
  argv_add (sb, "--control-write", o->workspace);
  if (o->out)
    argv_add (sb, "--control-write", o->out);
}

/* The endpoint the control probe reaches: the first named one (a wildcard
 * names no host to try). */
static const struct ar_agent_endpoint *
first_exact (const struct ar_agent_opts *o)
{
  for (size_t i = 0; !o->no_network && i < o->n_allow; i++)
    if (!ar_agent_wildcard (&o->allow[i]))
      return &o->allow[i];
  return NULL;
}

static const char *
denied_name (const struct ar_agent_opts *o)
{
  static const char *const names[] = { "example.com", "example.net", "example.org", "agentrun.invalid" };
  for (size_t i = 0; i < ARRAY_SIZE (names); i++)
    {
      bool allowed = false;
      for (size_t j = 0; j < o->n_allow; j++)
        allowed |= strcmp (o->allow[j].name, names[i]) == 0;
      if (!allowed)
        return names[i];
    }
  return "agentrun.invalid";
}

struct host_bits {
  int listen_fd; /* 127.0.0.1:<port>, the probe must not reach it */
  int leak_fd; /* the host's / opened without O_CLOEXEC on purpose */
  int out_fd; /* the probes' stdout */
  int unix_fd; /* a listening socket in the workspace, the probe must not reach it */
  char *unix_path;
  char token[17];
};

/* In the workspace, so that the sandbox sees it; skipped (and not required)
 * when the path does not fit a sockaddr_un. */
static int
unix_setup (struct ar_sandbox *sb, struct host_bits *h, ar_error **err)
{
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  cleanup_free char *p = xasprintf ("%s/" AR_PROBE_FILE_PREFIX "%s.sock", sb->prof.workspace, h->token);
  if (strlen (p) >= sizeof a.sun_path)
    return 0;
  strcpy (a.sun_path, p);
  h->unix_fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (h->unix_fd < 0 || bind (h->unix_fd, (struct sockaddr *) &a, sizeof a) < 0)
    return ar_err (err, errno, "host socket %s", p);
  h->unix_path = p, p = NULL;
  if (chmod (h->unix_path, 0777) < 0 || listen (h->unix_fd, 4) < 0)
    return ar_err (err, errno, "host socket %s", h->unix_path);
  argv_add (sb, "--unix-socket", h->unix_path);
  return 0;
}

static int
host_setup (struct ar_sandbox *sb, struct host_bits *h, ar_error **err)
{
  struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t sl = sizeof sin;
  uint8_t rnd[8];
  char num[32];
  if (getrandom (rnd, sizeof rnd, 0) != (ssize_t) sizeof rnd)
    return ar_err (err, errno, "getrandom");
  ar_hex (rnd, sizeof rnd, h->token);
  h->listen_fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (h->listen_fd < 0 || bind (h->listen_fd, (struct sockaddr *) &sin, sizeof sin) < 0 || listen (h->listen_fd, 4) < 0
      || getsockname (h->listen_fd, (struct sockaddr *) &sin, &sl) < 0)
    return ar_err (err, errno, "host loopback listener");
  h->leak_fd = open ("/", O_RDONLY | O_DIRECTORY); /* no O_CLOEXEC: the runtime must close it */
  if (h->leak_fd < 0)
    return ar_err (err, errno, "open / for the inherited-fd probe");
  h->out_fd = memfd_create ("agentrun-check", MFD_CLOEXEC);
  if (h->out_fd < 0)
    return ar_err (err, errno, "memfd_create");
  cleanup_free char *self = ar_selfexe_path ();
  if (!self)
    return ar_err (err, errno, "/proc/self/exe");
  struct ar_agent_opts *o = &sb->prof;
  free (sb->probe_src);
  sb->probe_src = xstrdup (self);
  snprintf (num, sizeof num, "%ld", (long) getpid ());
  argv_add (sb, "--host-pid", num);
  snprintf (num, sizeof num, "%u", ntohs (sin.sin_port));
  argv_add (sb, "--loopback", num);
  snprintf (num, sizeof num, "%d", h->leak_fd);
  argv_add (sb, "--fd", num);
  argv_add (sb, "--token", h->token);
  argv_add (sb, "--deny-name", denied_name (o));
  const struct ar_agent_endpoint *e = first_exact (o);
  if (e)
    {
      snprintf (num, sizeof num, "%d", e->port);
      cleanup_free char *ep = xasprintf ("%s:%s", e->name, num);
      argv_add (sb, "--allow", ep);
    }
  add_creds (sb);
  add_writes (sb);
  if (o->landlock_abi > 0)
    argv_add (sb, "--landlock", NULL);
  if (unix_setup (sb, h, err) < 0)
    return -1;
  sb->stdout_fd = h->out_fd;
  sb->no_terminal = true;
  return 0;
}

/* ---- judging ---- */

/* "host" verdicts: did the file written inside land on the host? It is
 * removed either way, with root's rights when we have them: a probe file
 * that crossed into a system folder (/etc, /usr) is one the person could
 * not remove, and the name (a random token of this run) is no file of
 * anyone's, wherever a symlink on the way leads. */
static bool
judge_write (const char *name, const char *token, bool control, char *got, size_t gotlen)
{
  const char *dir = strchr (name, ':') + 1;
  cleanup_free char *p = xasprintf ("%s/%s%s", strcmp (dir, "/") ? dir : "", AR_PROBE_FILE_PREFIX, token);
  struct stat st;
  bool there = lstat (p, &st) == 0;
  if (there && unlink (p) < 0)
    ar_warn ("check: remove %s: %s", p, strerror (errno));
  size_t l = strlen (got);
  snprintf (got + l, gotlen - l, "; %s on the host", there ? "found" : "not");
  return control ? there : !there;
}

static void
parse_output (const char *buf, const char *token, struct report *r)
{
  cleanup_free char *copy = xstrdup (buf);
  char *save = NULL;
  for (char *line = strtok_r (copy, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *f[4], *fs = NULL;
      size_t n = 0;
      for (char *t = strtok_r (line, "\t", &fs); t && n < 4; t = strtok_r (NULL, "\t", &fs))
        f[n++] = t;
      if (n != 4)
        continue;
      char got[600];
      snprintf (got, sizeof got, "%s", f[2]);
      bool ok;
      if (strcmp (f[3], "host") == 0 && strchr (f[0], ':'))
        ok = judge_write (f[0], token, strncmp (f[0], "control-", 8) == 0, got, sizeof got);
      else
        ok = strcmp (f[3], "ok") == 0;
      add_result (r, f[0], f[1], got, ok);
    }
}

static void
require_all (struct report *r, const struct ar_agent_opts *o, bool unix_socket)
{
  cleanup_free char *ctl = xasprintf ("control-write:%s", o->workspace);
  const struct ar_agent_endpoint *e = first_exact (o);
  cleanup_free char *allow = e ? xasprintf ("control-allowed-endpoint:%s:%d", e->name, e->port) : NULL;
  const char *extra[] = { ctl, allow, o->landlock_abi > 0 ? "landlock" : NULL,
                          unix_socket ? "unixconn:visible-host-socket" : NULL };
  for (size_t i = 0; i < ARRAY_SIZE (required) - 1 + ARRAY_SIZE (extra); i++)
    {
      const char *name = i < ARRAY_SIZE (required) - 1 ? required[i] : extra[i - (ARRAY_SIZE (required) - 1)];
      bool seen = !name;
      for (size_t j = 0; !seen && j < r->n; j++)
        seen = strcmp (r->v[j].name, name) == 0;
      if (!seen)
        add_result (r, name, "a report", "the probe did not report", false);
    }
}

static int
read_all (int fd, char **out, ar_error **err)
{
  struct stat st;
  if (fstat (fd, &st) < 0)
    return ar_err (err, errno, "stat the probes' output");
  char *b = xmalloc0 ((size_t) st.st_size + 1);
  ssize_t n = pread (fd, b, (size_t) st.st_size, 0);
  if (n < 0)
    {
      free (b);
      return ar_err (err, errno, "read the probes' output");
    }
  b[n] = '\0';
  *out = b;
  return 0;
}

/* ---- output ---- */

static void
print_text (const struct report *r, int crossed)
{
  for (size_t i = 0; i < r->n; i++)
    printf ("%-8s %-46s expected: %-16s got: %s\n", r->v[i].ok ? "ok" : "CROSSED", r->v[i].name, r->v[i].expected,
            r->v[i].got);
  printf ("%s: %zu probes, %d crossed\n", crossed ? "FAIL" : "PASS", r->n, crossed);
}

static int
print_json (const struct report *r, int crossed, ar_error **err)
{
  struct ar_gen G, *g = &G;
  ar_gen_init (g, "    ");
  ar_gen_map_open (g);
  ar_gen_str (g, "ok");
  ar_gen_bool (g, crossed == 0);
  ar_gen_str (g, "crossed");
  ar_gen_int (g, crossed);
  ar_gen_str (g, "probes");
  ar_gen_array_open (g);
  for (size_t i = 0; i < r->n; i++)
    {
      ar_gen_map_open (g);
      ar_gen_str (g, "name"), ar_gen_str (g, r->v[i].name);
      ar_gen_str (g, "expected"), ar_gen_str (g, r->v[i].expected);
      ar_gen_str (g, "got"), ar_gen_str (g, r->v[i].got);
      ar_gen_str (g, "ok"), ar_gen_bool (g, r->v[i].ok);
      ar_gen_map_close (g);
    }
  ar_gen_array_close (g);
  ar_gen_map_close (g);
  cleanup_free char *text = NULL;
  if (ar_gen_done (g, "check --json", &text, NULL, err) < 0)
    return -1;
  fputs (text, stdout);
  return 0;
}

int
ar_check_run (struct ar_ctx *ctx, struct ar_sandbox *sb, bool json, int *crossed, ar_error **err)
{
  struct host_bits h = { .listen_fd = -1, .leak_fd = -1, .out_fd = -1, .unix_fd = -1 };
  struct report r = { 0 };
  cleanup_free char *out = NULL;
  int status, ret = -1;
  ar_sandbox_set_args (sb, (char *[]){ (char *) AR_PROBE_BIN, (char *) AR_PROBE_CMD }, 2);
  sb->no_terminal = true;
  sb->quiet = true; /* the refused lookup is a probe of ours: the report says how it went */
  /* before anything is set up: this may re-execute (run.c) */
  if (ar_sandbox_prepare (sb, err) < 0 || ar_selfexe_seal_unless_unwritable (sb->prof.uid, err) < 0
      || host_setup (sb, &h, err) < 0)
    goto out;
  if (ar_sandbox_run (ctx, sb, &status, err) < 0)
    goto out;
  if (read_all (h.out_fd, &out, err) < 0)
    goto out;
  parse_output (out, h.token, &r);
  require_all (&r, &sb->prof, h.unix_path != NULL);
  if (status != 0)
    {
      char got[64];
      snprintf (got, sizeof got, "exit status %d", status);
      add_result (&r, "probe-run", "exit status 0", got, false);
    }
  *crossed = 0;
  for (size_t i = 0; i < r.n; i++)
    *crossed += !r.v[i].ok;
  if (json && print_json (&r, *crossed, err) < 0)
    goto out;
  if (!json)
    print_text (&r, *crossed);
  fflush (stdout);
  ret = 0;
out:
  report_free (&r);
  if (h.listen_fd >= 0)
    close (h.listen_fd);
  if (h.leak_fd >= 0)
    close (h.leak_fd);
  if (h.out_fd >= 0)
    close (h.out_fd);
  if (h.unix_fd >= 0)
    close (h.unix_fd);
  if (h.unix_path && unlink (h.unix_path) < 0)
    ar_warn ("check: remove %s: %s", h.unix_path, strerror (errno));
  free (h.unix_path);
  return ret;
}
