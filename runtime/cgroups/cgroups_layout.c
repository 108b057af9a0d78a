/* Which cgroup layout this host has, found at run time: pure v2 (cgroup2
 * mounted at the root), hybrid (v1 controllers plus cgroup2 at
 * <root>/unified) or v1 only. The root is /sys/fs/cgroup, or
 * $AGENTRUN_CGROUP_ROOT for tests that point at another mount. */
#include "config.h"
#include "cgroups_internal.h"
#include "pathutil.h"
#include "util.h"

#include <linux/magic.h>
#include <stdio.h>
#include <sys/vfs.h>

static const char *const v1_controllers[] = {
  "cpu",      "cpuacct", "cpuset",     "memory",  "devices", "freezer", "net_cls",
  "net_prio", "blkio",   "perf_event", "hugetlb", "pids",    "rdma",    "misc",
};

static bool
is_v1_controller (const char *tok)
{
  if (strncmp (tok, "name=", 5) == 0)
    return true;
  for (size_t i = 0; i < ARRAY_SIZE (v1_controllers); i++)
    if (strcmp (tok, v1_controllers[i]) == 0)
      return true;
  return false;
}

/* The controllers named in a v1 mount's super options, comma-joined. */
static char *
v1_ctrls (const char *superopts)
{
  cleanup_free char *copy = xstrdup (superopts);
  char *save = NULL, *out = NULL;
  for (char *t = strtok_r (copy, ",", &save); t; t = strtok_r (NULL, ",", &save))
    if (is_v1_controller (t))
      {
        char *n = out ? xasprintf ("%s,%s", out, t) : xstrdup (t);
        free (out);
        out = n;
      }
  return out;
}

static void
add_line (struct ar_cg_layout *l, const char *root, char *line)
{
  /* id parent maj:min root mountpoint opts [optional...] - fstype source superopts */
  char *f[6] = { 0 }, *save = NULL, *sep = strstr (line, " - ");
  if (!sep)
    return;
  *sep = '\0';
  char *tok = strtok_r (line, " ", &save);
  for (int i = 0; tok && i < 6; i++, tok = strtok_r (NULL, " ", &save))
    f[i] = tok;
  save = NULL;
  char *fstype = strtok_r (sep + 3, " ", &save), *src = strtok_r (NULL, " ", &save);
  char *superopts = strtok_r (NULL, " \n", &save);
  if (!f[4] || !fstype || !src || !superopts)
    return;
  ar_mountinfo_unescape (f[4]);
  size_t rl = strlen (root);
  if (strncmp (f[4], root, rl) != 0 || f[4][rl] != '/' || strchr (f[4] + rl + 1, '/'))
    return; /* only mounts directly below the root */
  if (strcmp (fstype, "cgroup2") == 0)
    {
      free (l->unified);
      l->unified = xstrdup (f[4]);
      return;
    }
  if (strcmp (fstype, "cgroup") != 0)
    return;
  char *ctrls = v1_ctrls (superopts);
  if (!ctrls)
    return;
  for (size_t i = 0; i < l->n_v1; i++)
    if (strcmp (l->v1[i].ctrls, ctrls) == 0)
      { /* the same hierarchy mounted again: the later mount is what paths reach */
        free (l->v1[i].mnt);
        l->v1[i].mnt = xstrdup (f[4]);
        free (ctrls);
        return;
      }
  l->v1 = xrealloc (l->v1, (l->n_v1 + 1) * sizeof *l->v1);
  l->v1[l->n_v1++] = (struct ar_cg_hier){ ctrls, xstrdup (f[4]) };
}

static int
detect (struct ar_cg_layout *l, ar_error **err)
{
  const char *root = getenv ("AGENTRUN_CGROUP_ROOT");
  if (!root || !*root)
    root = "/sys/fs/cgroup";
  struct statfs sf;
  if (statfs (root, &sf) < 0)
    return ar_err (err, errno, "cgroup: statfs %s", root);
  if (sf.f_type == CGROUP2_SUPER_MAGIC)
    {
      l->mode = AR_CG_V2;
      l->unified = xstrdup (root);
      return 0;
    }
  cleanup_fclose FILE *f = fopen ("/proc/self/mountinfo", "re");
  if (!f)
    return ar_err (err, errno, "cgroup: open /proc/self/mountinfo");
  cleanup_free char *line = NULL;
  size_t cap = 0;
  while (getline (&line, &cap, f) > 0)
    add_line (l, root, line);
  if (l->n_v1 == 0 && !l->unified)
    return ar_err (err, 0, "cgroup: no cgroup hierarchy is mounted under %s", root);
  l->mode = l->n_v1 == 0 ? AR_CG_V2 : l->unified ? AR_CG_HYBRID : AR_CG_V1;
  return 0;
}

const struct ar_cg_layout *
ar_cg_layout_get (ar_error **err)
{
  static struct ar_cg_layout *cached;
  if (cached)
    return cached;
  struct ar_cg_layout *l = xmalloc0 (sizeof *l);
  if (detect (l, err) < 0)
    {
      for (size_t i = 0; i < l->n_v1; i++)
        {
          free (l->v1[i].ctrls);
          free (l->v1[i].mnt);
        }
      free (l->v1);
      free (l->unified);
      free (l);
      return NULL;
    }
  return cached = l;
}

/* Does ctrls ("cpu,cpuacct") name one of list's len bytes ("memory,pids")? */
bool
ar_cg_carries_any (const char *ctrls, const char *list, size_t len)
{
  const char *p = list, *end = list + len;
  while (p < end)
    {
      const char *q = memchr (p, ',', (size_t) (end - p));
      size_t n = (size_t) ((q ? q : end) - p);
      for (const char *c = ctrls; c && *c;)
        {
          size_t m = strcspn (c, ",");
          if (m == n && strncmp (c, p, n) == 0)
            return true;
          c += m + (c[m] == ',');
        }
      p += n + 1;
    }
  return false;
}

/* Is one of list's controllers left to cgroup2 (not on any v1 hierarchy)
 * and offered there? */
static bool
v2_carries_any (const struct ar_cg_layout *l, const char *list, size_t len)
{
  for (const char *p = list, *end = list + len; p < end;)
    {
      const char *q = memchr (p, ',', (size_t) (end - p));
      cleanup_free char *c = strndup (p, (size_t) ((q ? q : end) - p));
      if (!c)
        abort ();
      if (!ar_cg_v1_mount (l, c) && ar_cg_v2_has (l->unified, c))
        return true;
      p += strlen (c) + 1;
    }
  return false;
}

/* The hierarchies that carry one of the controllers in list: the v1 ones
 * naming them, cgroup2 when pure or when it carries one of them itself. */
static struct ar_cg_layout *
only (const struct ar_cg_layout *all, const char *list, size_t len, ar_error **err)
{
  struct ar_cg_layout *l = xmalloc0 (sizeof *l);
  for (size_t i = 0; i < all->n_v1; i++)
    if (ar_cg_carries_any (all->v1[i].ctrls, list, len))
      {
        l->v1 = xrealloc (l->v1, (l->n_v1 + 1) * sizeof *l->v1);
        l->v1[l->n_v1++] = all->v1[i]; /* borrowed: layouts live as long as the process */
      }
  if (all->unified && (all->mode == AR_CG_V2 || v2_carries_any (all, list, len)))
    l->unified = all->unified;
  if (l->n_v1 == 0 && !l->unified)
    {
      free (l);
      ar_err (err, 0, "cgroup: no hierarchy here carries %.*s", (int) len, list);
      return NULL;
    }
  l->mode = l->n_v1 == 0 ? AR_CG_V2 : l->unified ? AR_CG_HYBRID : AR_CG_V1;
  return l;
}

const struct ar_cg_layout *
ar_cg_layout_of (const char *record, const char **path, ar_error **err)
{
  static struct {
    char *list;
    struct ar_cg_layout *l;
  } cache[4];
  const struct ar_cg_layout *all = ar_cg_layout_get (err);
  const char *colon = record[0] != '/' ? strchr (record, ':') : NULL;
  *path = colon ? colon + 1 : record;
  if (!all || !colon)
    return all;
  size_t len = (size_t) (colon - record), i = 0;
  for (; i < ARRAY_SIZE (cache) && cache[i].list; i++)
    if (strlen (cache[i].list) == len && strncmp (cache[i].list, record, len) == 0)
      return cache[i].l;
  struct ar_cg_layout *l = only (all, record, len, err);
  if (l && i < ARRAY_SIZE (cache))
    cache[i].list = strndup (record, len), cache[i].l = l;
  return l;
}

const char *
ar_cg_v1_mount (const struct ar_cg_layout *l, const char *ctrl)
{
  size_t n = strlen (ctrl);
  for (size_t i = 0; i < l->n_v1; i++)
    for (const char *t = l->v1[i].ctrls; t; t = strchr (t, ','), t = t ? t + 1 : NULL)
      if (strncmp (t, ctrl, n) == 0 && (t[n] == ',' || t[n] == '\0'))
        return l->v1[i].mnt;
  return NULL;
}
