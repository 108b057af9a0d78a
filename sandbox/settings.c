/* Claude Code / sandbox-runtime settings -> sandbox options: see settings.h. */
#include "config.h"
#include "settings.h"
#include "hostname.h"
#include "json.h"
#include "log.h"
#include "pathname.h"
#include "profile.h"
#include "sbpaths.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

struct sctx {
  struct ar_sandbox *sb;
  struct ar_jctx c;
};

/* One line per setting that is not mapped, at the current JSON path. */
static void
unmapped (struct sctx *s, const char *what, const char *why)
{
  ar_warn ("%s: %s%s%s%s: not mapped: %s", s->c.label, s->c.path, what ? " \"" : "", what ? what : "", what ? "\"" : "",
           why);
}

/* "//x" and "/x" -> /x; "~" and "~/x" -> under $HOME; else from the cwd.
 * NULL when it cannot be made absolute (no HOME, no cwd). */
static char *
expand (const char *v)
{
  const char *home = getenv ("HOME");
  if (v[0] == '/')
    return xstrdup (v[1] == '/' ? v + 1 : v);
  if (v[0] == '~' && (v[1] == '\0' || v[1] == '/'))
    return home && home[0] == '/' ? xasprintf ("%s%s", home, v + 1) : NULL;
  return ar_path_absolute (v);
}

/* Each string of the array `key` of obj, with the path at key[i]. */
typedef int (*str_fn) (struct sctx *s, const char *v);

static int
each_str (struct sctx *s, yajl_val obj, const char *key, str_fn fn)
{
  yajl_val a;
  int r = ar_json_member (&s->c, obj, key, yajl_t_array, &a);
  if (r <= 0)
    return r;
  size_t old = ar_jpath_key (&s->c, key);
  for (size_t i = 0; i < a->u.array.len; i++)
    {
      size_t o2 = ar_jpath_index (&s->c, i);
      if (!YAJL_IS_STRING (a->u.array.values[i]))
        return ar_jerr (&s->c, "needs a string");
      if (fn (s, YAJL_GET_STRING (a->u.array.values[i])) < 0)
        return -1;
      ar_jpath_pop (&s->c, o2);
    }
  ar_jpath_pop (&s->c, old);
  return 0;
}

/* A setting named like a deny: unknown, it must not be skipped. */
static bool
is_deny (const char *k)
{
  return strcasestr (k, "deny") || strcasestr (k, "denied") || strcasestr (k, "block");
}

/* ---- filesystem ---- */

static int
allow_write (struct sctx *s, const char *v)
{
  cleanup_free char *p = expand (v);
  cleanup_error ar_error *e = NULL;
  if (strpbrk (v, "*?["))
    return unmapped (s, v, "a pattern; list the folders"), 0;
  if (!p || ar_sandbox_opt (s->sb, AR_SB_RW, p, &e) < 0)
    unmapped (s, v, e ? e->msg : "cannot make the path absolute");
  return 0;
}

static int
deny_read (struct sctx *s, const char *v)
{
  cleanup_free char *p = expand (v);
  char real[PATH_MAX];
  if (strpbrk (v, "*?["))
    return ar_jerr (&s->c, "\"%s\": a pattern cannot be hidden by agentrun; list the paths", v);
  if (!p)
    return ar_jerr (&s->c, "\"%s\": cannot make the path absolute (HOME or the current folder)", v);
  ar_sbpaths_note (s->sb, "denyRead", p, AR_NOTE_MASK);
  if (!realpath (p, real))
    {
      if (errno != ENOENT && errno != ENOTDIR)
        return ar_jerr (&s->c, "\"%s\": %s: %s", v, p, strerror (errno));
      ar_debug ("%s: %s \"%s\": moot, %s does not exist", s->c.label, s->c.path, v, p);
      return 0;
    }
  if (strcmp (real, "/") == 0)
    return ar_jerr (&s->c, "\"%s\": hiding / leaves nothing to run", v);
  if (ar_sandbox_opt (s->sb, AR_SB_MASK, real, s->c.err) < 0)
    return ar_err_prefix (s->c.err, "%s: %s", s->c.label, s->c.path);
  return 0;
}

/* The workspace as it will be: --workspace, else the current folder. */
static const char *
workspace_of (const struct ar_agent_opts *o, char *cwd)
{
  return o->workspace ? o->workspace : (realpath (".", cwd) ? cwd : "/");
}

/* A folder the sandbox must write (workspace, out) cannot be denied. */
static int
deny_fixed (struct sctx *s, const char *v, const char *q, char *cwd)
{
  const struct ar_agent_opts *o = &s->sb->prof;
  const char *fixed[] = { workspace_of (o, cwd), o->out };
  for (size_t i = 0; i < ARRAY_SIZE (fixed); i++)
    if (fixed[i] && ar_path_under (fixed[i], q))
      return ar_jerr (&s->c, "\"%s\": the sandbox writes %s (%s); drop the deny or choose another folder", v, fixed[i],
                      i == 0 ? "the workspace" : "--out");
  return 0;
}

/* Under a writable place the path gets a read-only bind (deeper binds win);
 * a read-write bind of the path itself becomes read-only; elsewhere the
 * host is not writable from the sandbox and the deny is moot. */
static int
deny_write (struct sctx *s, const char *v)
{
  struct ar_agent_opts *o = &s->sb->prof;
  cleanup_free char *p = expand (v);
  char real[PATH_MAX], cwd[PATH_MAX];
  if (strpbrk (v, "*?["))
    return ar_jerr (&s->c, "\"%s\": a pattern cannot be made read-only by agentrun; list the paths", v);
  if (!p)
    return ar_jerr (&s->c, "\"%s\": cannot make the path absolute (HOME or the current folder)", v);
  bool exists = realpath (p, real) != NULL;
  const char *q = exists ? real : p;
  ar_sbpaths_note (s->sb, "denyWrite", p, AR_NOTE_RO);
  if (deny_fixed (s, v, q, cwd) < 0)
    return -1;
  bool inside = ar_path_under (q, workspace_of (o, cwd)) || (o->out && ar_path_under (q, o->out)), turned = false;
  for (size_t i = 0; i < o->n_binds; i++)
    {
      struct ar_agent_bind *b = &o->binds[i];
      if (!b->writable)
        continue;
      if (strcmp (b->path, q) == 0)
        b->writable = false, turned = true;
      else if (ar_path_under (b->path, q))
        return ar_jerr (&s->c,
                        "\"%s\": the writable %s lies inside it; the deny would not hold there (drop "
                        "that folder or this deny)",
                        v, b->path);
      else if (ar_path_under (q, b->path))
        inside = true;
    }
  if (turned)
    return 0;
  if (!inside)
    {
      ar_debug ("%s: %s \"%s\": moot, the sandbox cannot write there anyway", s->c.label, s->c.path, v);
      return 0;
    }
  if (!exists)
    return ar_jerr (&s->c, "\"%s\": %s does not exist, and the sandbox could create it in a writable folder", v, p);
  if (ar_sandbox_opt (s->sb, AR_SB_RO, real, s->c.err) < 0)
    return ar_err_prefix (s->c.err, "%s: %s", s->c.label, s->c.path);
  return 0;
}

static int
filesystem (struct sctx *s, yajl_val fs)
{
  static const char *const known[] = { "allowWrite", "denyRead", "denyWrite", NULL };
  yajl_val aw = yajl_tree_get (fs, (const char *[]){ "allowWrite", NULL }, yajl_t_array);
  /* as sandbox-runtime: no folder allowed to be written, not even the workspace */
  if (aw && aw->u.array.len == 0)
    s->sb->prof.workspace_ro = true;
  if (each_str (s, fs, "allowWrite", allow_write) < 0 || each_str (s, fs, "denyRead", deny_read) < 0
      || each_str (s, fs, "denyWrite", deny_write) < 0)
    return -1;
  for (size_t i = 0; i < fs->u.object.len; i++)
    {
      const char *k = fs->u.object.keys[i];
      bool done = false;
      for (size_t j = 0; known[j] && !done; j++)
        done = strcmp (known[j], k) == 0;
      if (done)
        continue;
      size_t old = ar_jpath_key (&s->c, k);
      if (is_deny (k))
        return ar_jerr (&s->c, "unknown deny setting: agentrun cannot enforce it");
      unmapped (s, NULL,
                strcmp (k, "allowRead") == 0                   ? "denyRead paths stay hidden whole (stricter)"
                : strcmp (k, "allowManagedReadPathsOnly") == 0 ? "a managed-settings switch"
                                                               : "unknown setting");
      ar_jpath_pop (&s->c, old);
    }
  return 0;
}

/* ---- network ---- */

static bool
domain_match (const char *pattern, const char *name)
{
  return ar_host_name_match (pattern, name);
}

/* A wildcard becomes a wildcard allow: a name below it is routed when it
 * is looked up. */
static int
allowed_domain (struct sctx *s, const char *v)
{
  cleanup_error ar_error *e = NULL;
  if (ar_sandbox_opt (s->sb, AR_SB_ALLOW, v, &e) < 0)
    unmapped (s, v, e->msg);
  return 0;
}

/* A deny wins over every allow, the command line's too. */
/* An allow: one that cannot be had is dropped with a line. */
static int
unix_socket (struct sctx *s, const char *v)
{
  cleanup_free char *p = expand (v);
  cleanup_error ar_error *e = NULL;
  if (strpbrk (v, "*?["))
    unmapped (s, v, "a pattern; list the sockets");
  else if (!p || ar_sandbox_opt (s->sb, AR_SB_UNIX_SOCKET, p, &e) < 0)
    unmapped (s, v, e ? e->msg : "cannot make the path absolute");
  return 0;
}

static int
denied_domain (struct sctx *s, const char *v)
{
  struct ar_agent_opts *o = &s->sb->prof;
  bool hit = false;
  for (size_t i = 0; i < o->n_allow;)
    {
      if (!domain_match (v, o->allow[i].name))
        {
          i++;
          continue;
        }
      ar_warn ("%s: %s \"%s\": %s removed from the allowed endpoints (a deny wins)", s->c.label, s->c.path, v,
               o->allow[i].name);
      free (o->allow[i].name);
      free (o->allow[i].upstream);
      memmove (&o->allow[i], &o->allow[i + 1], (o->n_allow - i - 1) * sizeof *o->allow);
      o->n_allow--;
      hit = true;
    }
  /* kept too: a name a wildcard allows at run time is checked against it */
  const char *n = strncmp (v, "*.", 2) == 0 ? v + 2 : v;
  if (!*n || strspn (n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.") != strlen (n))
    return ar_jerr (&s->c, "\"%s\": not a host name nor *.DOMAIN: this deny cannot be enforced", v);
  o->deny = xrealloc (o->deny, (o->n_deny + 2) * sizeof *o->deny);
  o->deny[o->n_deny++] = xstrdup (v);
  o->deny[o->n_deny] = NULL;
  if (!hit)
    ar_debug ("%s: %s \"%s\": no allowed endpoint matched; kept for names a wildcard allows", s->c.label, s->c.path, v);
  return 0;
}

static const char *
network_why (const char *k)
{
  static const char *const why[][2] = {
    { "allowAllUnixSockets", "AF_UNIX connections stay blocked (stricter)" },
    { "allowLocalBinding", "listening sockets stay private to the sandbox (stricter)" },
    { "httpProxyPort", "agentrun runs its own relay" },
    { "socksProxyPort", "agentrun runs its own relay" },
    { "allowManagedDomainsOnly", "a managed-settings switch" },
  };
  for (size_t i = 0; i < ARRAY_SIZE (why); i++)
    if (strcmp (why[i][0], k) == 0)
      return why[i][1];
  return NULL;
}

static int
network (struct sctx *s, yajl_val net)
{
  if (each_str (s, net, "allowedDomains", allowed_domain) < 0 || each_str (s, net, "deniedDomains", denied_domain) < 0
      || each_str (s, net, "allowUnixSockets", unix_socket) < 0)
    return -1;
  for (size_t i = 0; i < net->u.object.len; i++)
    {
      const char *k = net->u.object.keys[i];
      yajl_val v = net->u.object.values[i];
      if (strcmp (k, "allowedDomains") == 0 || strcmp (k, "deniedDomains") == 0 || strcmp (k, "allowUnixSockets") == 0)
        continue;
      size_t old = ar_jpath_key (&s->c, k);
      if (is_deny (k))
        return ar_jerr (&s->c, "unknown deny setting: agentrun cannot enforce it");
      /* false switches and empty lists ask for nothing */
      if (!YAJL_IS_FALSE (v) && !YAJL_IS_NULL (v) && !(YAJL_IS_ARRAY (v) && v->u.array.len == 0))
        unmapped (s, NULL, network_why (k) ? network_why (k) : "unknown setting");
      ar_jpath_pop (&s->c, old);
    }
  return 0;
}

/* ---- the section ---- */

static int
section_key (struct sctx *s, const char *k, yajl_val v)
{
  static const char *const ui[] = { "autoAllowBashIfSandboxed",
                                    "allowUnsandboxedCommands",
                                    "excludedCommands",
                                    "ignoreViolations",
                                    "enableWeakerNestedSandbox",
                                    "enableWeakerNetworkIsolation",
                                    "mandatoryDenySearchDepth",
                                    "ripgrep",
                                    NULL };
  if (strcmp (k, "failIfUnavailable") == 0)
    {
      ar_debug ("%s: %s: agentrun always fails closed", s->c.label, s->c.path);
      return 0;
    }
  if (strcmp (k, "enabled") == 0)
    {
      if (YAJL_IS_FALSE (v))
        unmapped (s, NULL, "agentrun sandbox confines the command whatever it says");
      return 0;
    }
  if (is_deny (k))
    return ar_jerr (&s->c, "unknown deny setting: agentrun cannot enforce it");
  for (size_t i = 0; ui[i]; i++)
    if (strcmp (ui[i], k) == 0)
      return unmapped (s, NULL, "a setting of the tool running the sandbox, not of the sandbox"), 0;
  unmapped (s, NULL, "unknown setting");
  return 0;
}

static int
section (struct sctx *s, yajl_val sec)
{
  yajl_val fs = NULL, net = NULL;
  if (ar_json_member (&s->c, sec, "filesystem", yajl_t_object, &fs) < 0
      || ar_json_member (&s->c, sec, "network", yajl_t_object, &net) < 0)
    return -1;
  size_t old = ar_jpath_key (&s->c, "filesystem");
  if (fs && filesystem (s, fs) < 0)
    return -1;
  ar_jpath_pop (&s->c, old);
  old = ar_jpath_key (&s->c, "network");
  if (net && network (s, net) < 0)
    return -1;
  ar_jpath_pop (&s->c, old);
  for (size_t i = 0; i < sec->u.object.len; i++)
    {
      const char *k = sec->u.object.keys[i];
      if (strcmp (k, "filesystem") == 0 || strcmp (k, "network") == 0)
        continue;
      old = ar_jpath_key (&s->c, k);
      if (section_key (s, k, sec->u.object.values[i]) < 0)
        return -1;
      ar_jpath_pop (&s->c, old);
    }
  return 0;
}

int
ar_settings_load (struct ar_sandbox *sb, const char *path, ar_error **err)
{
  struct sctx s = { .sb = sb };
  cleanup_free char *label = xasprintf ("settings %s", path);
  yajl_val root = NULL, sec = NULL;
  int r = -1;
  if (ar_profile_read_json (sb, path, label, &root, err) < 0)
    return -1;
  ar_jctx_init (&s.c, label, err);
  if (ar_json_member (&s.c, root, "sandbox", yajl_t_object, &sec) < 0)
    goto out;
  if (sec)
    {
      /* Claude Code: deny rules also come from permissions.deny (Read(...),
       * Edit(...)); those are the tool's, say so rather than skip them */
      const char *p[] = { "permissions", "deny", NULL };
      yajl_val d = yajl_tree_get (root, p, yajl_t_array);
      if (d && d->u.array.len)
        {
          ar_jpath_set (&s.c, "permissions.deny");
          unmapped (&s, NULL, "permission rules are Claude Code's; put paths in sandbox.filesystem.denyRead");
        }
      ar_jpath_set (&s.c, "sandbox");
    }
  else if (yajl_tree_get (root, (const char *[]){ "filesystem", NULL }, yajl_t_any)
           || yajl_tree_get (root, (const char *[]){ "network", NULL }, yajl_t_any))
    sec = root; /* sandbox-runtime's own file */
  else
    {
      ar_jerr (&s.c, "neither a \"sandbox\" section (Claude Code) nor \"filesystem\"/\"network\" (sandbox-runtime)");
      goto out;
    }
  r = section (&s, sec);
out:
  ar_json_tree_free (root);
  return r;
}
