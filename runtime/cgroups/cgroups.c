/* The cgroup API the lifecycle uses: where a container's cgroup lives,
 * creating it in every hierarchy of the host's layout, applying
 * linux.resources to the hierarchy that carries each controller, joining,
 * and removal. The stored path is the cgroup path relative to each
 * hierarchy's root ("/agentrun/<id>"); the layout is found again each time. */
#include "config.h"
#include "cgroups.h"
#include "cgroups_internal.h"
#include "log.h"
#include "util.h"

#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <signal.h>
#include <sys/stat.h>

#define DEFAULT_PARENT "/agentrun"

/* "/a//b/" -> "/a/b"; "." and ".." components are refused so that no path
 * leaves the hierarchy it names. */
static int
normalize (const char *in, char **out, ar_error **err)
{
  cleanup_free char *copy = xstrdup (in);
  cleanup_free char *res = xstrdup ("");
  char *save = NULL;
  for (char *c = strtok_r (copy, "/", &save); c; c = strtok_r (NULL, "/", &save))
    {
      if (strcmp (c, ".") == 0 || strcmp (c, "..") == 0)
        return ar_err (err, 0, "cgroup: linux.cgroupsPath \"%s\": \".\" and \"..\" are not allowed", in);
      char *n = xasprintf ("%s/%s", res, c);
      free (res);
      res = n;
    }
  if (!*res)
    return ar_err (err, 0, "cgroup: linux.cgroupsPath \"%s\" names the root cgroup", in);
  *out = ar_steal_ptr (res);
  return 0;
}

static int
resolve_path (const char *id, const struct ar_linux *lnx, char **out, ar_error **err)
{
  const char *p = lnx ? lnx->cgroups_path : NULL;
  if (!p || !*p)
    {
      cleanup_free char *d = xasprintf (DEFAULT_PARENT "/%s", id);
      return normalize (d, out, err);
    }
  if (p[0] != '/')
    {
      const char *c1 = strchr (p, ':');
      if (c1 && strchr (c1 + 1, ':') && !strchr (p, '/'))
        return ar_err (err, 0,
                       "cgroup: linux.cgroupsPath \"%s\" is in systemd's slice:prefix:name form; "
                       "use --systemd-cgroup (or --cgroup-manager systemd)",
                       p);
      cleanup_free char *d = xasprintf (DEFAULT_PARENT "/%s", p);
      return normalize (d, out, err);
    }
  return normalize (p, out, err);
}

/* "cgroupfs:CTRL[,CTRL]": the controllers the cgroup is made for, else NULL. */
static const char *
manager_only (const char *manager)
{
  return manager && strncmp (manager, "cgroupfs:", 9) == 0 && manager[9] ? manager + 9 : NULL;
}

/* The record to store (cgroups_internal.h: ar_cg_layout_of). */
static int
resolve_record (const char *manager, const char *id, const struct ar_linux *lnx, char **out, ar_error **err)
{
  cleanup_free char *path = NULL;
  const char *only = manager_only (manager);
  if (only && strchr (only, ':'))
    return ar_err (err, 0, "cgroup: manager %s: a controller list has no ':'", manager);
  if (resolve_path (id, lnx, &path, err) < 0)
    return -1;
  *out = only ? xasprintf ("%s:%s", only, path) : ar_steal_ptr (path);
  return 0;
}

/* The config's rules, then the runtime-spec's default devices (null, zero,
 * full, random, urandom, tty, console, ptmx, the pty slaves). They come
 * last as in runc, so the usual leading "deny all" does not take /dev/null
 * away. tun and mknod-anywhere, which runc also allows, are left out: a
 * sandbox does not need them. The nodes linux.devices creates are governed
 * by resources.devices like any other, as in runc: creating a node is not
 * an allowance to use it (podman and Docker list both). */
static const struct {
  int64_t major, minor;
} default_devs[] = {
  { 1, 3 }, { 1, 5 }, { 1, 7 }, { 1, 8 }, { 1, 9 }, { 5, 0 }, { 5, 1 }, { 5, 2 }, { 136, -1 },
};

struct ar_device_cgroup *
ar_cg_device_rules (const struct ar_linux *lnx, size_t *n)
{
  const struct ar_resources *r = lnx ? lnx->resources : NULL;
  size_t nr = r ? r->n_devices : 0;
  struct ar_device_cgroup *out = xmalloc0 ((nr + ARRAY_SIZE (default_devs)) * sizeof *out);
  size_t k = 0;
  for (size_t i = 0; i < nr; i++)
    out[k++] = r->devices[i];
  for (size_t i = 0; i < ARRAY_SIZE (default_devs); i++)
    out[k++] = (struct ar_device_cgroup){ true, 'c', true, default_devs[i].major, true, default_devs[i].minor, "rwm" };
  *n = k;
  return out;
}

int
ar_cg_target (const struct ar_cg_layout *l, const char *path, const char *ctrl_v1, const char *ctrl_v2, bool enable,
              struct ar_cg_target *t, ar_error **err)
{
  const char *m = l->mode != AR_CG_V2 ? ar_cg_v1_mount (l, ctrl_v1) : NULL;
  *t = (struct ar_cg_target){ .ctrl = ctrl_v1 };
  if (m)
    {
      t->dir = ar_cg_dir (m, path);
      return 0;
    }
  if (l->unified && ctrl_v2 && ar_cg_v2_has (l->unified, ctrl_v2))
    {
      if (enable && ar_cg_v2_enable (l->unified, path, ctrl_v2, err) < 0)
        return -1;
      t->ctrl = ctrl_v2;
      t->dir = ar_cg_dir (l->unified, path);
      t->v2 = true;
      return 0;
    }
  if (l->mode == AR_CG_V2)
    return ar_err (err, 0, "cgroup: the %s controller is not available (cgroup2 at %s does not offer it)",
                   ctrl_v2 ? ctrl_v2 : ctrl_v1, l->unified);
  return ar_err (err, 0, "cgroup: the %s controller is not available (no v1 hierarchy carries it%s)", ctrl_v1,
                 l->unified && ctrl_v2 ? " and cgroup2 does not offer it" : "");
}

void
ar_cg_target_clear (struct ar_cg_target *t)
{
  free (t->dir);
  t->dir = NULL;
}

static int
mkdir_all (const struct ar_cg_layout *l, const char *path, ar_error **err)
{
  for (size_t i = 0; i < l->n_v1; i++)
    {
      bool cpuset = ar_cg_v1_mount (l, "cpuset") == l->v1[i].mnt;
      if (ar_cg_mkdir_path (l->v1[i].mnt, path, cpuset, err) < 0)
        return -1;
    }
  if (l->unified && ar_cg_mkdir_path (l->unified, path, false, err) < 0)
    return -1;
  return 0;
}

/* Every hierarchy is tried; the first failure is reported. */
static int
rmdir_all (const struct ar_cg_layout *l, const char *path, ar_error **err)
{
  int ret = 0;
  for (size_t i = 0; i < l->n_v1; i++)
    if (ar_cg_rmdir_path (l->v1[i].mnt, path, err) < 0)
      ret = -1;
  if (l->unified && ar_cg_rmdir_path (l->unified, path, err) < 0)
    ret = -1;
  return ret;
}

static int
enter_all (const struct ar_cg_layout *l, const char *path, pid_t pid, ar_error **err)
{
  for (size_t i = 0; i < l->n_v1; i++)
    {
      cleanup_free char *dir = ar_cg_dir (l->v1[i].mnt, path);
      if (ar_cg_writef (err, dir, "cgroup.procs", "%d", (int) pid) < 0)
        return -1;
    }
  if (l->unified)
    {
      cleanup_free char *dir = ar_cg_dir (l->unified, path);
      if (ar_cg_writef (err, dir, "cgroup.procs", "%d", (int) pid) < 0)
        return -1;
    }
  return 0;
}

static bool
asks_limits (const struct ar_linux *lnx)
{
  return ar_cg_resources_asked (lnx ? lnx->resources : NULL);
}

int
ar_cgroup_resolve (const char *manager, const char *id, const struct ar_linux *lnx, char **path_out, ar_error **err)
{
  *path_out = NULL;
  if (manager && strcmp (manager, "disabled") == 0)
    return 0;
  if (manager && strcmp (manager, "systemd") == 0)
    {
      cleanup_free char *unit = NULL;
      if (ar_cg_systemd_unit (id, lnx, &unit, err) < 0)
        return -1;
      *path_out = xasprintf ("systemd:%s", unit);
      return 0;
    }
  return resolve_record (manager, id, lnx, path_out, err);
}

int
ar_cgroup_destroy_pending (const char *record, ar_error **err)
{
  cleanup_free char *scope = NULL;
  if (strncmp (record, "systemd:", 8) == 0)
    {
      /* Gone already (systemd collects an empty scope): nothing to do. */
      if (ar_cg_systemd_lookup (record + 8, &scope, err) < 0)
        return -1;
      if (!scope)
        return 0;
      ar_cgroup_kill_all (scope, SIGKILL, NULL);
      if (ar_cgroup_systemd_stop (record + 8, err) < 0)
        return -1;
      return ar_cgroup_destroy (scope, err);
    }
  const char *path;
  if (!ar_cg_layout_of (record, &path, err))
    return -1;
  if (path[0] != '/')
    return ar_err (err, 0, "\"%.100s\" is not a cgroup path", record);
  ar_cgroup_kill_all (record, SIGKILL, NULL);
  return ar_cgroup_destroy (record, err);
}

/* systemd made the scope and moved pid into it, in the hierarchies it
 * manages; the others get the same path, and every limit is written into
 * the scope's files as with cgroupfs (Delegate=yes makes them ours). */
static int
systemd_create (const char *id, const struct ar_linux *lnx, pid_t pid, char **path_out, char **unit_out, ar_error **err)
{
  cleanup_free char *path = NULL, *unit = NULL;
  if (ar_cg_systemd_create (id, lnx, pid, &path, &unit, err) < 0)
    return -1;
  const struct ar_cg_layout *l = ar_cg_layout_get (err);
  size_t n = 0;
  cleanup_free struct ar_device_cgroup *rules = ar_cg_device_rules (lnx, &n);
  bool devices = !ar_cgroup_devices_deferred (lnx);
  if (!l || mkdir_all (l, path, err) < 0 || ar_cg_apply (l, path, lnx ? lnx->resources : NULL, rules, n, devices, err) < 0
      || enter_all (l, path, pid, err) < 0)
    {
      ar_cgroup_systemd_stop (unit, NULL);
      if (l)
        rmdir_all (l, path, NULL);
      return -1;
    }
  *path_out = ar_steal_ptr (path);
  *unit_out = ar_steal_ptr (unit);
  return 0;
}

/* Device rules for the cgroup a record names: in every cgroup made in
 * every hierarchy, in one made for some controllers only when they
 * include devices. */
static bool
record_devices (const char *record)
{
  const char *colon = record[0] != '/' ? strchr (record, ':') : NULL;
  return !colon || ar_cg_carries_any ("devices", record, (size_t) (colon - record));
}

/* Make the cgroup at path (in l, the layout record names) and apply the
 * limits and device rules; 0 with *made false when rootless without a
 * cgroup is fine (no limits asked). */
static int
make_and_apply (const struct ar_cg_layout *l, const char *record, const char *path, const struct ar_linux *lnx,
                bool rootless, bool *made, ar_error **err)
{
  cleanup_error ar_error *mk = NULL;
  *made = false;
  /* A process put in it would stop at once, and so would we waiting on it
   * (runc's words); the folder is not ours to remove. */
  if (ar_cgroup_is_frozen (record))
    return ar_err (err, 0, "container's cgroup unexpectedly frozen: %s", path);
  if (mkdir_all (l, path, &mk) < 0)
    {
      rmdir_all (l, path, NULL);
      /* Unprivileged without a delegated cgroup: nothing to confine with,
       * which is only acceptable when the config asks for no limit. */
      bool denied = mk->errnum == EACCES || mk->errnum == EPERM || mk->errnum == EROFS;
      if (rootless && denied && !asks_limits (lnx))
        {
          ar_debug ("rootless: no cgroup for the container (%s)", mk->msg);
          return 0;
        }
      if (rootless && denied)
        return ar_err (err, 0,
                       "rootless: linux.resources asks for limits, which need a cgroup, and uid %u has no "
                       "writable (delegated) cgroup: %s",
                       (unsigned) geteuid (), mk->msg);
      if (err && !*err)
        *err = ar_steal_ptr (mk);
      return -1;
    }
  /* as runc: sharing a cgroup is allowed, but rarely meant */
  cleanup_free pid_t *pids = NULL;
  size_t n = 0;
  if (ar_cgroup_pids (record, &pids, &n, NULL) == 0 && n > 0)
    ar_warn ("container's cgroup is not empty: %zu process(es) found", n);
  n = 0;
  cleanup_free struct ar_device_cgroup *rules = ar_cg_device_rules (lnx, &n);
  bool devices = !rootless && !ar_cgroup_devices_deferred (lnx) && record_devices (record);
  if (ar_cg_apply (l, path, lnx ? lnx->resources : NULL, rules, n, devices, err) < 0)
    {
      rmdir_all (l, path, NULL);
      return -1;
    }
  *made = true;
  return 0;
}

int
ar_cgroup_create (const char *manager, const char *id, const struct ar_linux *lnx, pid_t pid, bool rootless,
                  char **path_out, char **unit_out, ar_error **err)
{
  *path_out = NULL;
  *unit_out = NULL;
  if (manager && strcmp (manager, "disabled") == 0)
    return 0;
  if (manager && strcmp (manager, "systemd") == 0)
    return systemd_create (id, lnx, pid, path_out, unit_out, err);
  cleanup_free char *record = NULL;
  const char *path;
  if (resolve_record (manager, id, lnx, &record, err) < 0)
    return -1;
  const struct ar_cg_layout *l = ar_cg_layout_of (record, &path, err);
  bool made;
  if (!l || make_and_apply (l, record, path, lnx, rootless, &made, err) < 0)
    return -1;
  if (!made)
    return 0;
  if (enter_all (l, path, pid, err) < 0)
    {
      rmdir_all (l, path, NULL);
      return -1;
    }
  ar_debug ("cgroup %s created (%s layout), pid %d joined", record,
            l->mode == AR_CG_V2       ? "v2"
            : l->mode == AR_CG_HYBRID ? "hybrid"
                                      : "v1",
            (int) pid);
  *path_out = ar_steal_ptr (record);
  return 0;
}

int
ar_cgroup_create_early (const char *manager, const char *id, const struct ar_linux *lnx, bool rootless, char **path_out,
                        int *dirfd_out, ar_error **err)
{
  *path_out = NULL;
  *dirfd_out = -1;
  if (manager && (strcmp (manager, "disabled") == 0 || strcmp (manager, "systemd") == 0))
    return 0;
  cleanup_free char *record = NULL;
  const char *path;
  if (resolve_record (manager, id, lnx, &record, err) < 0)
    return -1;
  const struct ar_cg_layout *l = ar_cg_layout_of (record, &path, err);
  if (!l)
    return -1;
  if (l->mode != AR_CG_V2 && !manager_only (manager))
    return 0;
  bool made;
  if (make_and_apply (l, record, path, lnx, rootless, &made, err) < 0)
    return -1;
  if (!made)
    return 0;
  if (l->mode != AR_CG_V2)
    {
      ar_debug ("cgroup %s created (%s layout), to be joined", record, l->mode == AR_CG_HYBRID ? "hybrid" : "v1");
      *path_out = ar_steal_ptr (record);
      return 0;
    }
  cleanup_free char *dir = ar_cg_dir (l->unified, path);
  *dirfd_out = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (*dirfd_out < 0)
    {
      ar_err (err, errno, "cgroup: open %s", dir);
      rmdir_all (l, path, NULL);
      return -1;
    }
  ar_debug ("cgroup %s created (v2 layout), the container starts in it", record);
  *path_out = ar_steal_ptr (record);
  return 0;
}

bool
ar_cgroup_devices_deferred (const struct ar_linux *lnx)
{
  return lnx && lnx->n_devices > 0;
}

int
ar_cgroup_apply_devices (const char *manager, const char *record, const struct ar_linux *lnx, bool rootless,
                         ar_error **err)
{
  /* the same choice as at create: rootless cgroupfs leaves devices to the
   * user namespace, a systemd scope is ours to confine, a cgroup for some
   * controllers has devices only when they include it */
  bool systemd = manager && strcmp (manager, "systemd") == 0;
  if (!record || (rootless && !systemd) || !record_devices (record))
    return 0;
  const char *path;
  const struct ar_cg_layout *l = ar_cg_layout_of (record, &path, err);
  if (!l)
    return -1;
  size_t n = 0;
  cleanup_free struct ar_device_cgroup *rules = ar_cg_device_rules (lnx, &n);
  return ar_cg_apply (l, path, NULL, rules, n, true, err);
}

int
ar_cgroup_enter (const char *record, pid_t pid, ar_error **err)
{
  if (!record)
    return 0;
  const char *path;
  const struct ar_cg_layout *l = ar_cg_layout_of (record, &path, err);
  return l ? enter_all (l, path, pid, err) : -1;
}

int
ar_cgroup_self_join_fds (const char *record, bool unified, int *fds, size_t max, size_t *n, ar_error **err)
{
  const char *path;
  const struct ar_cg_layout *l = ar_cg_layout_of (record, &path, err);
  *n = 0;
  if (!l)
    return -1;
  size_t want = l->n_v1 + (l->unified != NULL);
  if ((l->unified && !unified) || want > max)
    return ar_err (err, 0, "cgroup: %s: a process joins by itself only on v1, %zu hierarchies at most", record, max);
  const char *rel = path[0] == '/' ? path + 1 : path;
  for (size_t i = 0; i < want; i++)
    {
      cleanup_free char *f = i < l->n_v1 ? xasprintf ("%s/%s/tasks", l->v1[i].mnt, rel)
                                         : xasprintf ("%s/%s/cgroup.procs", l->unified, rel);
      fds[i] = open (f, O_WRONLY | O_CLOEXEC);
      if (fds[i] < 0)
        {
          int e = errno;
          while (i > 0)
            close (fds[--i]);
          return ar_err (err, e, "cgroup: open %s", f);
        }
    }
  *n = want;
  return 0;
}

/* exec --cgroup: SUB for every hierarchy, or CTRL[,CTRL]:SUB for those
 * carrying them (cgroup2's when CTRL is empty); the last that matches wins. */
static const char *
sub_for (const char *ctrls, char *const *subs, size_t n)
{
  const char *out = NULL;
  for (size_t i = 0; i < n; i++)
    {
      const char *colon = strchr (subs[i], ':');
      if (!colon)
        out = subs[i];
      else if (ctrls && ar_cg_carries_any (ctrls, subs[i], (size_t) (colon - subs[i])))
        out = colon + 1;
      else if (!ctrls && colon == subs[i])
        out = colon + 1;
    }
  return out;
}

static int
check_subs (const struct ar_cg_layout *l, char *const *subs, size_t n, ar_error **err)
{
  for (size_t i = 0; i < n; i++)
    {
      const char *colon = strchr (subs[i], ':'), *sub = colon ? colon + 1 : subs[i];
      for (const char *p = sub; *p;)
        {
          size_t m = strcspn (p, "/");
          if (m == 2 && p[0] == '.' && p[1] == '.')
            return ar_err (err, 0, "--cgroup: %s is not a sub cgroup path", sub);
          p += m + (p[m] == '/');
        }
      if (!colon || colon == subs[i])
        continue;
      for (const char *p = subs[i]; p < colon;)
        {
          size_t m = strcspn (p, ",:");
          bool known = false;
          for (size_t k = 0; k < l->n_v1 && !known; k++)
            known = ar_cg_carries_any (l->v1[k].ctrls, p, m);
          if (!known && !(l->unified && l->mode == AR_CG_V2))
            return ar_err (err, 0, "--cgroup: unknown controller \"%.*s\"", (int) m, p);
          p += m + 1;
        }
    }
  return 0;
}

static int
enter_one (const char *mnt, const char *path, const char *sub, pid_t pid, ar_error **err)
{
  cleanup_free char *rel = sub && *sub ? xasprintf ("%s/%s", path, sub) : xstrdup (path);
  cleanup_free char *dir = ar_cg_dir (mnt, rel);
  cleanup_free char *file = xasprintf ("%s/cgroup.procs", dir);
  cleanup_close int fd = open (file, O_WRONLY | O_CLOEXEC);
  char num[24];
  int len = snprintf (num, sizeof num, "%d", (int) pid);
  if (fd < 0 || write (fd, num, (size_t) len) != len)
    {
      /* runc's words, which its tests match */
      char what[128];
      snprintf (what, sizeof what, "%s", strerror (errno));
      what[0] = (char) tolower ((unsigned char) what[0]);
      return ar_err (err, 0, "adding pid %d to %s: %s", (int) pid, file, what);
    }
  return 0;
}

int
ar_cgroup_enter_sub (const char *record, char *const *subs, size_t n, pid_t pid, ar_error **err)
{
  const char *path;
  const struct ar_cg_layout *l = ar_cg_layout_of (record, &path, err);
  if (!l || check_subs (l, subs, n, err) < 0)
    return -1;
  for (size_t i = 0; i < l->n_v1; i++)
    if (enter_one (l->v1[i].mnt, path, sub_for (l->v1[i].ctrls, subs, n), pid, err) < 0)
      return -1;
  if (l->unified && enter_one (l->unified, path, sub_for (NULL, subs, n), pid, err) < 0)
    return -1;
  return 0;
}

int
ar_cgroup_destroy (const char *record, ar_error **err)
{
  if (!record)
    return 0;
  const char *path;
  const struct ar_cg_layout *l = ar_cg_layout_of (record, &path, err);
  return l ? rmdir_all (l, path, err) : -1;
}

int
ar_cgroup_update (const char *record, const struct ar_resources *res, ar_error **err)
{
  if (!record)
    return ar_err (err, 0, "the container has no cgroup (created with --cgroup-manager disabled)");
  /* CRI's UpdateContainerResources sends the devices it created with;
   * runc leaves a running container's device rules as they are, and so
   * do we. */
  if (res->n_devices)
    ar_debug ("update: linux.resources.devices ignored: device rules are set at create");
  const char *path;
  const struct ar_cg_layout *l = ar_cg_layout_of (record, &path, err);
  if (!l)
    return -1;
  /* Every check and value first, then the writes, undone if one fails. */
  struct ar_cg_plan plan = { 0 };
  ar_cg_plan_record_into (&plan);
  int r = ar_cg_apply (l, path, res, NULL, 0, false, err);
  ar_cg_plan_record_into (NULL);
  if (r == 0)
    r = ar_cg_plan_run (&plan, err);
  ar_cg_plan_clear (&plan);
  return r;
}

/* Our own cgroup2 folder (the "0::" line of /proc/self/cgroup), caller frees. */
static char *
own_v2_dir (const struct ar_cg_layout *l)
{
  cleanup_fclose FILE *f = fopen ("/proc/self/cgroup", "re");
  cleanup_free char *line = NULL;
  size_t cap = 0;
  while (f && getline (&line, &cap, f) > 0)
    if (strncmp (line, "0::", 3) == 0)
      {
        line[strcspn (line, "\n")] = '\0';
        return ar_cg_dir (l->unified, line + 3);
      }
  return NULL;
}

void
ar_cgroup_memory_caps (struct ar_cgroup_memory_caps *c)
{
  *c = (struct ar_cgroup_memory_caps){ 0 };
  const struct ar_cg_layout *l = ar_cg_layout_get (NULL);
  const char *m = l && l->mode != AR_CG_V2 ? ar_cg_v1_mount (l, "memory") : NULL;
  if (m)
    {
      c->swap = ar_cg_exists (m, "memory.memsw.limit_in_bytes");
      c->kernel_tcp = c->tcp = ar_cg_exists (m, "memory.kmem.tcp.limit_in_bytes");
      return;
    }
  /* cgroup2's root has no memory.swap.max: look at a cgroup below it */
  cleanup_free char *own = l && l->unified ? own_v2_dir (l) : NULL;
  c->swap = own && ar_cg_exists (own, "memory.swap.max");
  c->tcp = l && l->unified;
}

/* The nearest existing folder at or above dir lets us create below it. */
static bool
dir_creatable (const char *dir)
{
  cleanup_free char *d = xstrdup (dir);
  struct stat st;
  for (;;)
    {
      if (stat (d, &st) == 0)
        return S_ISDIR (st.st_mode) && access (d, W_OK | X_OK) == 0;
      char *slash = strrchr (d, '/');
      if (!slash || slash == d)
        return false;
      *slash = '\0';
    }
}

bool
ar_cgroup_joined_after_clone (const char *manager, const char *id, const struct ar_linux *lnx)
{
  cleanup_error ar_error *err = NULL;
  cleanup_free char *record = NULL;
  const char *path;
  if (!manager_only (manager) || resolve_record (manager, id, lnx, &record, &err) < 0)
    return false;
  const struct ar_cg_layout *l = ar_cg_layout_of (record, &path, &err);
  return l && l->mode != AR_CG_V2;
}

bool
ar_cgroup_usable (const char *manager, const char *id, const struct ar_linux *lnx)
{
  if (manager && strcmp (manager, "disabled") == 0)
    return false;
  if (manager && strcmp (manager, "systemd") == 0)
    return true; /* systemd decides; its create fails loudly */
  cleanup_free char *record = NULL;
  const char *path;
  if (resolve_record (manager, id, lnx, &record, NULL) < 0)
    return false;
  const struct ar_cg_layout *l = ar_cg_layout_of (record, &path, NULL);
  if (!l)
    return false;
  /* mkdir_all needs every hierarchy it makes, so each must be ours to write. */
  for (size_t i = 0; i < l->n_v1; i++)
    {
      cleanup_free char *dir = ar_cg_dir (l->v1[i].mnt, path);
      if (!dir_creatable (dir))
        return false;
    }
  if (l->unified)
    {
      cleanup_free char *dir = ar_cg_dir (l->unified, path);
      if (!dir_creatable (dir))
        return false;
    }
  return true;
}
