/* Namespaces: flags, joining by path, id maps, time offsets. */
#include "config.h"
#include "namespaces.h"
#include "kfile.h"
#include "rootless.h"
#include "util.h"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static const struct {
  int flag;
  const char *proc;
} ns_info[AR_NS_N] = {
  [AR_NS_PID] = { CLONE_NEWPID, "pid" },          [AR_NS_NETWORK] = { CLONE_NEWNET, "net" },
  [AR_NS_MOUNT] = { CLONE_NEWNS, "mnt" },         [AR_NS_IPC] = { CLONE_NEWIPC, "ipc" },
  [AR_NS_UTS] = { CLONE_NEWUTS, "uts" },          [AR_NS_USER] = { CLONE_NEWUSER, "user" },
  [AR_NS_CGROUP] = { CLONE_NEWCGROUP, "cgroup" }, [AR_NS_TIME] = { CLONE_NEWTIME, "time" },
};

static const char *
type_name (enum ar_ns_type t)
{
  static const char *const names[AR_NS_N] = { "pid", "network", "mount", "ipc", "uts", "user", "cgroup", "time" };
  return names[t];
}

unsigned long
ar_ns_new_flags (const struct ar_linux *lnx)
{
  unsigned long flags = 0;
  if (!lnx)
    return 0;
  for (size_t i = 0; i < lnx->n_namespaces; i++)
    if (!lnx->namespaces[i].path || !*lnx->namespaces[i].path)
      flags |= (unsigned long) ns_info[lnx->namespaces[i].type].flag;
  return flags;
}

bool
ar_ns_listed (const struct ar_linux *lnx, enum ar_ns_type t)
{
  if (!lnx)
    return false;
  for (size_t i = 0; i < lnx->n_namespaces; i++)
    if (lnx->namespaces[i].type == t)
      return true;
  return false;
}

void
ar_ns_close (int fds[AR_NS_N])
{
  for (int i = 0; i < AR_NS_N; i++)
    {
      if (fds[i] >= 0)
        close (fds[i]);
      fds[i] = -1;
    }
}

int
ar_ns_open_paths (const struct ar_linux *lnx, int fds[AR_NS_N], ar_error **err)
{
  for (int i = 0; i < AR_NS_N; i++)
    fds[i] = -1;
  if (!lnx)
    return 0;
  for (size_t i = 0; i < lnx->n_namespaces; i++)
    {
      const struct ar_namespace *ns = &lnx->namespaces[i];
      if (!ns->path || !*ns->path)
        continue;
      if (fds[ns->type] >= 0)
        close (fds[ns->type]);
      fds[ns->type] = open (ns->path, O_RDONLY | O_CLOEXEC);
      if (fds[ns->type] < 0)
        {
          int e = errno;
          ar_ns_close (fds);
          return ar_err (err, e, "%s namespace %s", type_name (ns->type), ns->path);
        }
      int kind = ioctl (fds[ns->type], NS_GET_NSTYPE);
      if (kind < 0 || kind != ns_info[ns->type].flag)
        {
          int e = kind < 0 ? errno : 0;
          ar_ns_close (fds);
          if (e == ENOTTY || e == EINVAL)
            e = 0;
          return ar_err (err, e, "%s namespace %s: not a %s namespace", type_name (ns->type), ns->path,
                         type_name (ns->type));
        }
    }
  return 0;
}

int
ar_ns_join (int fds[AR_NS_N], ar_error **err)
{
  if (fds[AR_NS_USER] >= 0 && setns (fds[AR_NS_USER], CLONE_NEWUSER) < 0)
    return ar_err (err, errno, "join user namespace");
  for (int i = 0; i < AR_NS_N; i++)
    {
      if (i == AR_NS_USER || fds[i] < 0)
        continue;
      if (setns (fds[i], ns_info[i].flag) < 0)
        return ar_err (err, errno, "join %s namespace", type_name ((enum ar_ns_type) i));
    }
  return 0;
}

int
ar_ns_write_idmaps (pid_t pid, const struct ar_linux *lnx, bool deny_setgroups, ar_error **err)
{
  if (!lnx->n_uid_mappings || !lnx->n_gid_mappings)
    return ar_err (err, 0, "config.json: linux.uidMappings/gidMappings: a new user namespace needs both");
  if (ar_kfile_write_idmap (pid, "uid_map", lnx->uid_mappings, lnx->n_uid_mappings, err) < 0)
    return -1;
  if (deny_setgroups && ar_kfile_write_proc (pid, "setgroups", "deny", err) < 0)
    return -1;
  return ar_kfile_write_idmap (pid, "gid_map", lnx->gid_mappings, lnx->n_gid_mappings, err);
}

int
ar_ns_write_time_offsets (const struct ar_linux *lnx, ar_error **err)
{
  if (!lnx || !lnx->n_time_offsets)
    return 0;
  for (size_t i = 0; i < lnx->n_time_offsets; i++)
    {
      const struct ar_time_offset *o = &lnx->time_offsets[i];
      const char *clk = o->clock;
      /* The kernel takes "monotonic"/"boottime" (or clock ids 1/7). */
      if (strcmp (clk, "monotonic") != 0 && strcmp (clk, "boottime") != 0)
        return ar_err (err, 0, "config.json: linux.timeOffsets.%s: only monotonic and boottime can be offset", clk);
      char line[128];
      snprintf (line, sizeof line, "%s %lld %u\n", clk, (long long) o->secs, o->nanosecs);
      if (ar_kfile_write_proc (getpid (), "timens_offsets", line, err) < 0)
        return -1;
    }
  return 0;
}

int
ar_ns_differing (pid_t pid, unsigned long *flags, ar_error **err)
{
  *flags = 0;
  for (int i = 0; i < AR_NS_N; i++)
    {
      char path[64], self[64];
      struct stat a, b;
      snprintf (path, sizeof path, "/proc/%d/ns/%s", (int) pid, ns_info[i].proc);
      snprintf (self, sizeof self, "/proc/self/ns/%s", ns_info[i].proc);
      if (stat (path, &a) < 0)
        {
          if (errno == ENOENT && i == AR_NS_TIME)
            continue;
          return ar_err (err, errno, "stat %s", path);
        }
      if (stat (self, &b) < 0)
        return ar_err (err, errno, "stat %s", self);
      if (a.st_ino != b.st_ino || a.st_dev != b.st_dev)
        *flags |= (unsigned long) ns_info[i].flag;
    }
  return 0;
}

int
ar_ns_host_id (const struct ar_idmap *m, size_t n, uint32_t id, uint32_t *out)
{
  for (size_t i = 0; i < n; i++)
    if (id >= m[i].container_id && id - m[i].container_id < m[i].size)
      {
        *out = m[i].host_id + (id - m[i].container_id);
        return 0;
      }
  return -1;
}

bool
ar_ns_init_ids (const struct ar_linux *lnx, const struct ar_user *u, uint32_t *uid, uint32_t *gid)
{
  uint32_t h;
  if (ar_ns_host_id (lnx->uid_mappings, lnx->n_uid_mappings, 0, &h) == 0
      && ar_ns_host_id (lnx->gid_mappings, lnx->n_gid_mappings, 0, &h) == 0)
    {
      *uid = *gid = 0;
      return true;
    }
  if (ar_ns_host_id (lnx->uid_mappings, lnx->n_uid_mappings, u->uid, &h) == 0
      && ar_ns_host_id (lnx->gid_mappings, lnx->n_gid_mappings, u->gid, &h) == 0)
    {
      *uid = u->uid;
      *gid = u->gid;
      return true;
    }
  return false;
}

/* One decimal id, all of it, below 2^32 - 1 (the kernel's invalid id). */
static bool
parse_id (const char *s, const char *end, uint32_t *out)
{
  unsigned long long v = 0;
  if (s == end || end - s > 10)
    return false;
  for (; s < end; s++)
    {
      if (*s < '0' || *s > '9')
        return false;
      v = v * 10 + (unsigned) (*s - '0');
    }
  if (v >= 0xffffffffULL)
    return false;
  *out = (uint32_t) v;
  return true;
}

static bool
maps_root_alone (const struct ar_idmap *m, size_t n)
{
  return n == 1 && m[0].container_id == 0 && m[0].size == 1;
}

int
ar_ns_nested_read (const struct ar_spec *spec, struct ar_nested_userns *n, ar_error **err)
{
  const char *v = NULL;
  *n = (struct ar_nested_userns){ 0 };
  for (size_t i = 0; i < spec->n_annotations; i++)
    if (strcmp (spec->annotations[i].key, AR_NESTED_USERNS_ANNOTATION) == 0)
      v = spec->annotations[i].value;
  if (!v)
    return 0;
  const char *colon = strchr (v, ':');
  if (!colon || !parse_id (v, colon, &n->uid) || !parse_id (colon + 1, colon + strlen (colon), &n->gid))
    return ar_err (err, 0, "annotations." AR_NESTED_USERNS_ANNOTATION ": \"%s\" is not UID:GID", v);
  const struct ar_linux *l = spec->linux_;
  if (n->uid == 0 || n->gid == 0)
    return ar_err (err, 0,
                   "annotations." AR_NESTED_USERNS_ANNOTATION ": the process's ids must not be 0: the nested user "
                   "namespace is there so that the process is not the outer one's root");
  if (!l || !(ar_ns_new_flags (l) & CLONE_NEWUSER))
    return ar_err (err, 0, "annotations." AR_NESTED_USERNS_ANNOTATION ": the container needs a new user namespace");
  if (!maps_root_alone (l->uid_mappings, l->n_uid_mappings) || !maps_root_alone (l->gid_mappings, l->n_gid_mappings))
    return ar_err (err, 0,
                   "annotations." AR_NESTED_USERNS_ANNOTATION ": linux.uidMappings and gidMappings must map "
                   "container id 0 alone (size 1): the nested namespace maps its ids to that root");
  const struct ar_user *u = spec->process ? &spec->process->user : NULL;
  if (!u || u->uid != n->uid || u->gid != n->gid || u->n_additional_gids)
    return ar_err (err, 0,
                   "annotations." AR_NESTED_USERNS_ANNOTATION ": process.user must be %u:%u with no additional "
                   "gids, the only ids the nested namespace maps",
                   n->uid, n->gid);
  n->on = true;
  return 0;
}

int
ar_ns_enter_nested (const struct ar_nested_userns *n, ar_error **err)
{
  struct ar_idmap um = { .container_id = n->uid, .host_id = 0, .size = 1 };
  struct ar_idmap gm = { .container_id = n->gid, .host_id = 0, .size = 1 };
  struct ar_linux maps = { .uid_mappings = &um, .n_uid_mappings = 1, .gid_mappings = &gm, .n_gid_mappings = 1 };
  if (unshare (CLONE_NEWUSER) < 0)
    {
      /* our /proc/sys/user is the outer namespace's now, whose 1 would
       * mislead: the limit reached is an ancestor's, the host's likely */
      int e = errno;
      const char *why = e == ENOSPC || e == EUSERS ? "the user namespaces of this user on the host "
                                                     "(user.max_user_namespaces) or their nesting (32 levels) "
                                                     "are at their limit"
                                                   : ar_rootless_userns_hint (e);
      return ar_err (err, e, "unshare the nested user namespace%s%s%s", *why ? " (" : "", why, *why ? ")" : "");
    }
  /* /proc/self of a process that is not dumpable is the host root's, and
   * no process of the container exists yet that could take advantage */
  if (prctl (PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
    return ar_err (err, errno, "prctl PR_SET_DUMPABLE for the nested user namespace's maps");
  /* not CAP_SETGID over the outer namespace any more: setgroups denied */
  int r = ar_ns_write_idmaps (getpid (), &maps, true, err);
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 && r == 0)
    r = ar_err (err, errno, "prctl PR_SET_DUMPABLE");
  return r;
}

int
ar_ns_open_nested (pid_t pid, const struct ar_nested_userns *n, int *inner, int *outer, ar_error **err)
{
  char path[64];
  *inner = *outer = -1;
  if (!n->on)
    return 0;
  snprintf (path, sizeof path, "/proc/%d/ns/user", (int) pid);
  *inner = open (path, O_RDONLY | O_CLOEXEC);
  if (*inner < 0)
    return ar_err (err, errno, "open %s", path);
  *outer = ioctl (*inner, NS_GET_PARENT);
  if (*outer < 0)
    {
      int e = errno;
      close (*inner);
      *inner = -1;
      return ar_err (err, e, "the parent of the container's nested user namespace (%s)", path);
    }
  return 0;
}

int
ar_ns_join_nested (int pidfd, unsigned long flags, int inner, int outer, ar_error **err)
{
  flags &= ~(unsigned long) CLONE_NEWUSER;
  if (setns (outer, CLONE_NEWUSER) < 0)
    return ar_err (err, errno, "join the container's user namespace");
  if (flags && setns (pidfd, (int) flags) < 0)
    return ar_err (err, errno, "join the container's namespaces");
  if (setns (inner, CLONE_NEWUSER) < 0)
    return ar_err (err, errno, "join the container's nested user namespace");
  return 0;
}
