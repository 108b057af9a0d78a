/* agentrun profile files (see profile.h): a JSON object whose members are
 * sandbox options, each applied through ar_sandbox_opt so that a profile and
 * the command line cannot mean different things. */
#include "config.h"
#include "profile.h"
#include "json.h"
#include "jsongen.h"
#include "sbpaths.h"
#include "strio.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum kind { K_STR, K_STRV, K_BOOL, K_SCALAR /* a number, or a string such as "2g" */ };

struct key {
  const char *name;
  int id;
  enum kind kind;
  bool path; /* relative values are taken from the profile's folder */
};

/* Applied in this order, whatever the order in the file. */
static const struct key keys[] = {
  { "agent", AR_SB_AGENT, K_STR, false },
  { "workspace", AR_SB_WORKSPACE, K_STR, true },
  { "out", AR_SB_OUT, K_STR, true },
  { "rw", AR_SB_RW, K_STRV, true },
  { "ro", AR_SB_RO, K_STRV, true },
  { "mask", AR_SB_MASK, K_STRV, true },
  { "allow", AR_SB_ALLOW, K_STRV, false },
  { "no_network", AR_SB_NO_NETWORK, K_BOOL, false },
  { "audit", AR_SB_AUDIT, K_STR, true },
  { "env", AR_SB_ENV, K_STRV, false },
  { "memory", AR_SB_MEMORY, K_SCALAR, false },
  { "pids", AR_SB_PIDS, K_SCALAR, false },
  { "cpus", AR_SB_CPUS, K_SCALAR, false },
  { "unix_sockets", AR_SB_UNIX_SOCKET, K_STRV, true },
  { "tmp_size", AR_SB_TMP_SIZE, K_SCALAR, false },
  { "home_size", AR_SB_HOME_SIZE, K_SCALAR, false },
  { "shm_size", AR_SB_SHM_SIZE, K_SCALAR, false },
  { "allow_sysv_ipc", AR_SB_ALLOW_SYSV_IPC, K_BOOL, false },
  { "nofile", AR_SB_NOFILE, K_SCALAR, false },
  { "max_sockets", AR_SB_MAX_SOCKETS, K_SCALAR, false },
  { "inotify", AR_SB_INOTIFY, K_SCALAR, false },
  { "net_max_conns", AR_SB_NET_MAX_CONNS, K_SCALAR, false },
  { "net_idle_timeout", AR_SB_NET_IDLE_TIMEOUT, K_SCALAR, false },
  { "allow_write", AR_SB_ALLOW_WRITE, K_STRV, true },
  { "home", AR_SB_HOME, K_STR, true },
  { "state", AR_SB_STATE, K_STRV, false },
  { "folders", AR_SB_FOLDERS, K_STRV, false },
};

int
ar_profile_read_json (struct ar_sandbox *sb, const char *path, const char *label, yajl_val *out, ar_error **err)
{
  /* the person's choice of file: through sudo opened with their ids, or
   * root would read (and quote in its errors) any file of the host; a
   * preset is agentrun's own, found beside it (find_preset), which the
   * person may have no right to walk to (a build tree in a 0700 folder) */
  uid_t uid;
  gid_t gid;
  struct ar_fsid fs;
  bool own = sb && sb->preset_depth > 0;
  ar_sbpaths_invoker (&uid, &gid, NULL);
  if (!own)
    ar_fsid_enter (&fs, uid, gid);
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  int e = errno;
  if (!own)
    ar_fsid_leave (&fs);
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (fd < 0)
    return ar_err (err, e, "%s: open %s", label, path);
  if (ar_read_regular (fd, path, AR_PROFILE_MAX_SIZE, false, &buf, &len, err) < 0)
    return ar_err_prefix (err, "%s", label);
  char real[PATH_MAX];
  if (sb && realpath (path, real))
    {
      ar_sbpaths_note (sb, label, path, AR_NOTE_POLICY);
      sb->policies = xrealloc (sb->policies, (sb->n_policies + 1) * sizeof *sb->policies);
      char *copy = xmalloc0 (len + 1);
      memcpy (copy, buf, len);
      sb->policies[sb->n_policies++] = (struct ar_sb_policy){ xstrdup (real), copy, len };
    }
  return ar_json_parse (buf, len, label, out, err);
}

/* The folder of path (absolute, caller frees), for relative paths in it. */
static char *
ar_profile_dir_of (const char *path, ar_error **err)
{
  char buf[PATH_MAX];
  cleanup_free char *copy = xstrdup (path);
  char *slash = strrchr (copy, '/');
  const char *dir = slash ? (slash == copy ? "/" : (*slash = '\0', copy)) : ".";
  if (!realpath (dir, buf))
    {
      ar_err (err, errno, "the folder of %s", path);
      return NULL;
    }
  return xstrdup (buf);
}

/* One value, with relative paths made absolute against dir. */
static int
apply_one (struct ar_sandbox *sb, struct ar_jctx *c, const struct key *k, const char *dir, const char *val)
{
  cleanup_free char *abs = k->path && val[0] != '/' ? xasprintf ("%s/%s", dir, val) : NULL;
  char real[PATH_MAX];
  /* masks are matched in the container as written: "a/../b" would hide nothing */
  if (k->id == AR_SB_MASK)
    ar_sbpaths_note (sb, c->label, abs ? abs : val, AR_NOTE_MASK);
  if (k->id == AR_SB_MASK && realpath (abs ? abs : val, real))
    {
      free (abs);
      abs = xstrdup (real);
    }
  if (ar_sandbox_opt (sb, k->id, abs ? abs : val, c->err) < 0)
    return ar_err_prefix (c->err, "%s: %s", c->label, c->path);
  return 0;
}

static int
apply_key (struct ar_sandbox *sb, struct ar_jctx *c, const struct key *k, yajl_val v, const char *dir)
{
  switch (k->kind)
    {
    case K_STR:
      if (!YAJL_IS_STRING (v))
        return ar_jerr (c, "needs a string");
      return apply_one (sb, c, k, dir, YAJL_GET_STRING (v));
    case K_SCALAR:
      if (!YAJL_IS_STRING (v) && !YAJL_IS_NUMBER (v))
        return ar_jerr (c, "needs a number or a string");
      return apply_one (sb, c, k, dir, YAJL_IS_STRING (v) ? YAJL_GET_STRING (v) : YAJL_GET_NUMBER (v));
    case K_BOOL:
      if (!YAJL_IS_TRUE (v) && !YAJL_IS_FALSE (v))
        return ar_jerr (c, "needs true or false");
      return YAJL_IS_TRUE (v) ? apply_one (sb, c, k, dir, "") : 0;
    case K_STRV:
      if (!YAJL_IS_ARRAY (v))
        return ar_jerr (c, "needs an array of strings");
      for (size_t i = 0; i < v->u.array.len; i++)
        {
          yajl_val e = v->u.array.values[i];
          size_t old = ar_jpath_index (c, i);
          if (!YAJL_IS_STRING (e))
            return ar_jerr (c, "needs a string");
          if (apply_one (sb, c, k, dir, YAJL_GET_STRING (e)) < 0)
            return -1;
          ar_jpath_pop (c, old);
        }
      return 0;
    }
  return ar_jerr (c, "internal: unknown kind");
}

/* Every key known and given once: a typo must not drop a restriction. */
static int
check_keys (struct ar_jctx *c, yajl_val root)
{
  for (size_t i = 0; i < root->u.object.len; i++)
    {
      const char *name = root->u.object.keys[i];
      bool known = false;
      for (size_t k = 0; k < ARRAY_SIZE (keys) && !known; k++)
        known = strcmp (keys[k].name, name) == 0;
      if (!known)
        {
          /* the list from the table itself, so that it names every key */
          char list[512] = "";
          for (size_t k = 0; k < ARRAY_SIZE (keys); k++)
            snprintf (list + strlen (list), sizeof list - strlen (list), "%s%s", k ? ", " : "", keys[k].name);
          return ar_jerr_at (c, name, "unknown key (known: %s)", list);
        }
      for (size_t j = 0; j < i; j++)
        if (strcmp (root->u.object.keys[j], name) == 0)
          return ar_jerr_at (c, name, "given twice");
    }
  return 0;
}

/* The profile at path; only: the one key applied (-1: all). */
static int
profile_load (struct ar_sandbox *sb, const char *path, int only, ar_error **err)
{
  cleanup_free char *label = xasprintf ("profile %s", path);
  cleanup_free char *dir = ar_profile_dir_of (path, err);
  yajl_val root = NULL;
  struct ar_jctx c;
  int r = -1;
  if (!dir || ar_profile_read_json (sb, path, label, &root, err) < 0)
    return -1;
  ar_jctx_init (&c, label, err);
  if (check_keys (&c, root) < 0)
    goto out;
  for (size_t k = 0; k < ARRAY_SIZE (keys); k++)
    {
      const char *p[] = { keys[k].name, NULL };
      if (only >= 0 && keys[k].id != only)
        continue;
      yajl_val v = yajl_tree_get (root, p, yajl_t_any);
      if (!v || YAJL_IS_NULL (v))
        continue;
      size_t old = ar_jpath_key (&c, keys[k].name);
      if (apply_key (sb, &c, &keys[k], v, dir) < 0)
        goto out;
      ar_jpath_pop (&c, old);
    }
  r = 0;
out:
  ar_json_tree_free (root);
  return r;
}

int
ar_profile_load (struct ar_sandbox *sb, const char *path, ar_error **err)
{
  return profile_load (sb, path, -1, err);
}

/* Where presets are: next to the binary in a build tree (contrib/presets),
 * beside an installed one (../share/agentrun/presets), then the data
 * folder it was configured with. */
static char *
find_preset (const char *name, ar_error **err)
{
  char self[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
  if (n > 0)
    {
      self[n] = '\0';
      char *slash = strrchr (self, '/');
      if (slash)
        *slash = '\0';
      const char *rel[] = { "contrib/presets", "../share/agentrun/presets" };
      for (size_t i = 0; i < ARRAY_SIZE (rel); i++)
        {
          char *p = xasprintf ("%s/%s/%s.json", self, rel[i], name);
          if (access (p, R_OK) == 0)
            return p;
          free (p);
        }
    }
  char *p = xasprintf ("%s/agentrun/presets/%s.json", AR_DATADIR, name);
  if (access (p, R_OK) == 0)
    return p;
  ar_err (err, ENOENT, "--agent %s: no such preset (%s)", name, p);
  free (p);
  return NULL;
}

static bool
preset_name_ok (const char *name)
{
  return name[0] && strspn (name, "abcdefghijklmnopqrstuvwxyz0123456789-") == strlen (name);
}

/* The preset at path, as agentrun's own file; only as profile_load's. */
static int
preset_load (struct ar_sandbox *sb, const char *name, const char *path, int only, ar_error **err)
{
  sb->preset_depth++;
  sb->preset_name = name;
  int r = profile_load (sb, path, only, err);
  sb->preset_name = NULL;
  sb->preset_depth--;
  return r;
}

int
ar_profile_load_preset (struct ar_sandbox *sb, const char *name, ar_error **err)
{
  if (!preset_name_ok (name))
    return ar_err (err, 0, "--agent %s: a preset name is lower-case letters, digits and '-'", name);
  if (sb->preset_depth > 0)
    return ar_err (err, 0, "--agent %s: a preset cannot name another preset", name);
  cleanup_free char *path = find_preset (name, err);
  return path ? preset_load (sb, name, path, -1, err) : -1;
}

int
ar_profile_command_folders (struct ar_sandbox *sb, ar_error **err)
{
  if (sb->prof.n_args == 0)
    return 0;
  const char *cmd = sb->prof.args[0], *slash = strrchr (cmd, '/');
  const char *name = slash ? slash + 1 : cmd;
  cleanup_free char *path = preset_name_ok (name) ? find_preset (name, NULL) : NULL;
  return path ? preset_load (sb, name, path, AR_SB_FOLDERS, err) : 0;
}

const char ar_profile_opts_help
    [] = "  --profile FILE        options from an agentrun profile (JSON); the command line\n"
         "                        replaces its single values and adds to its lists\n"
         "  --agent NAME          an agent preset: claude, codex, opencode, gemini (its endpoints,\n"
         "                        its state kept in agentrun's own folder, its API key variables)\n"
         "  --home DIR            a home that lasts: DIR (made 0700) read-write at $HOME\n"
         "  --settings FILE       map Claude Code / sandbox-runtime sandbox settings (JSON) onto\n"
         "                        these options; what cannot be mapped is printed\n";

int
ar_profile_apply_opts (struct ar_sandbox *sb, struct ar_optparser p, int id,
                       int (*load) (struct ar_sandbox *, const char *, ar_error **), ar_error **err)
{
  const char *arg;
  int got;
  while ((got = ar_opt_next (&p, &arg, err)) > 0)
    if (got == id && load (sb, arg, err) < 0)
      return -1;
  return got < 0 ? -1 : 0;
}

/* ---- writing: `always` answers of sandbox --ask ---- */

/* The profile with endpoint in its "allow" list (added last, once). */
static void
gen_with_allow (struct ar_gen *g, yajl_val root, const char *endpoint)
{
  bool seen = false;
  ar_gen_map_open (g);
  for (size_t i = 0; root && i < root->u.object.len; i++)
    {
      const char *k = root->u.object.keys[i];
      yajl_val v = root->u.object.values[i];
      ar_gen_str (g, k);
      if (strcmp (k, "allow") != 0 || !YAJL_IS_ARRAY (v))
        {
          ar_gen_tree (g, v);
          continue;
        }
      seen = true;
      bool have = false;
      ar_gen_array_open (g);
      for (size_t j = 0; j < v->u.array.len; j++)
        {
          yajl_val e = v->u.array.values[j];
          have = have || (YAJL_IS_STRING (e) && strcmp (e->u.string, endpoint) == 0);
          ar_gen_tree (g, e);
        }
      if (!have)
        ar_gen_str (g, endpoint);
      ar_gen_array_close (g);
    }
  if (!seen)
    {
      ar_gen_str (g, "allow");
      ar_gen_array_open (g);
      ar_gen_str (g, endpoint);
      ar_gen_array_close (g);
    }
  ar_gen_map_close (g);
}

static int
write_atomic (const char *path, const unsigned char *buf, size_t len, ar_error **err)
{
  cleanup_free char *tmp = xasprintf ("%s.agentrun-XXXXXX", path);
  int fd = mkostemp (tmp, O_CLOEXEC);
  if (fd < 0)
    return ar_err (err, errno, "create %s", tmp);
  bool ok = write (fd, buf, len) == (ssize_t) len && write (fd, "\n", 1) == 1 && fsync (fd) == 0;
  int e = errno;
  if (close (fd) < 0 && ok)
    ok = false, e = errno;
  if (!ok || rename (tmp, path) < 0)
    {
      e = ok ? errno : e;
      unlink (tmp);
      return ar_err (err, e, "write %s", path);
    }
  return 0;
}

/* The text into path's own inode, which stays (and with it a mount on it). */
static int
write_in_place (const char *path, const unsigned char *buf, size_t len, ar_error **err)
{
  cleanup_close int fd = open (path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    return ar_err (err, errno, "write %s", path);
  if (!S_ISREG (st.st_mode))
    return ar_err (err, 0, "write %s: not a regular file", path);
  if (write (fd, buf, len) != (ssize_t) len || write (fd, "\n", 1) != 1 || fsync (fd) < 0)
    return ar_err (err, errno ? errno : EIO, "write %s", path);
  return 0;
}

int
ar_profile_append_allow (const char *path, const char *endpoint, bool in_place, ar_error **err)
{
  cleanup_free char *label = xasprintf ("profile %s", path);
  yajl_val root = NULL;
  if (access (path, F_OK) == 0 && ar_profile_read_json (NULL, path, label, &root, err) < 0)
    return -1;
  struct ar_gen G;
  ar_gen_init (&G, "    ");
  gen_with_allow (&G, root, endpoint);
  ar_json_tree_free (root);
  cleanup_free char *text = NULL;
  size_t len;
  if (ar_gen_done (&G, label, &text, &len, err) < 0)
    return -1;
  return (in_place ? write_in_place : write_atomic) (path, (const unsigned char *) text, len, err);
}
