/* Config mounts through the new mount API (see mounts.h). Options map onto
 * mount_setattr attributes so that flags the kernel locked in a user namespace
 * (nosuid, nodev, noexec, ro inherited from the host) are never cleared by
 * accident: only an option that asks for the opposite clears one. */
#include "config.h"
#include "mounts.h"
#include "kfile.h"
#include "copyup.h"
#include "pathutil.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int ar_mount_cgroup (struct ar_rootfs_ctx *ctx, const struct ar_mount *m, const struct ar_mount_opts *o,
                            int target_fd, const char *what, ar_error **err);

enum opt_kind { K_ATTR, K_RATTR, K_PROP, K_BIND, K_RBIND, K_REMOUNT, K_IDMAP, K_RIDMAP, K_SB, K_NOOP, K_COPYUP };

struct opt_def {
  const char *name;
  enum opt_kind kind;
  bool clear; /* K_ATTR/K_RATTR: clear the attribute instead of setting it */
  uint64_t attr; /* K_ATTR/K_RATTR: MOUNT_ATTR_*; K_PROP: MS_* propagation */
  bool rec; /* K_PROP: recursive */
};

/* Atime modes are one field: setting any of them replaces the whole field. */
#define ATIME(name, kind, val)                                                                                         \
  {                                                                                                                    \
    name, kind, false, (val) | (1ULL << 63), false                                                                     \
  }
#define ATIME_FIELD (1ULL << 63)

static const struct opt_def opt_defs[] = {
  { "defaults", K_NOOP, false, 0, false },
  { "ro", K_ATTR, false, MOUNT_ATTR_RDONLY, false },
  { "rw", K_ATTR, true, MOUNT_ATTR_RDONLY, false },
  { "nosuid", K_ATTR, false, MOUNT_ATTR_NOSUID, false },
  { "suid", K_ATTR, true, MOUNT_ATTR_NOSUID, false },
  { "nodev", K_ATTR, false, MOUNT_ATTR_NODEV, false },
  { "dev", K_ATTR, true, MOUNT_ATTR_NODEV, false },
  { "noexec", K_ATTR, false, MOUNT_ATTR_NOEXEC, false },
  { "exec", K_ATTR, true, MOUNT_ATTR_NOEXEC, false },
  { "nodiratime", K_ATTR, false, MOUNT_ATTR_NODIRATIME, false },
  { "diratime", K_ATTR, true, MOUNT_ATTR_NODIRATIME, false },
  { "nosymfollow", K_ATTR, false, MOUNT_ATTR_NOSYMFOLLOW, false },
  { "symfollow", K_ATTR, true, MOUNT_ATTR_NOSYMFOLLOW, false },
  ATIME ("noatime", K_ATTR, MOUNT_ATTR_NOATIME),
  ATIME ("atime", K_ATTR, MOUNT_ATTR_RELATIME),
  ATIME ("relatime", K_ATTR, MOUNT_ATTR_RELATIME),
  ATIME ("norelatime", K_ATTR, MOUNT_ATTR_STRICTATIME),
  ATIME ("strictatime", K_ATTR, MOUNT_ATTR_STRICTATIME),
  ATIME ("nostrictatime", K_ATTR, MOUNT_ATTR_RELATIME),
  { "rro", K_RATTR, false, MOUNT_ATTR_RDONLY, false },
  { "rrw", K_RATTR, true, MOUNT_ATTR_RDONLY, false },
  { "rnosuid", K_RATTR, false, MOUNT_ATTR_NOSUID, false },
  { "rsuid", K_RATTR, true, MOUNT_ATTR_NOSUID, false },
  { "rnodev", K_RATTR, false, MOUNT_ATTR_NODEV, false },
  { "rdev", K_RATTR, true, MOUNT_ATTR_NODEV, false },
  { "rnoexec", K_RATTR, false, MOUNT_ATTR_NOEXEC, false },
  { "rexec", K_RATTR, true, MOUNT_ATTR_NOEXEC, false },
  { "rnodiratime", K_RATTR, false, MOUNT_ATTR_NODIRATIME, false },
  { "rdiratime", K_RATTR, true, MOUNT_ATTR_NODIRATIME, false },
  { "rnosymfollow", K_RATTR, false, MOUNT_ATTR_NOSYMFOLLOW, false },
  { "rsymfollow", K_RATTR, true, MOUNT_ATTR_NOSYMFOLLOW, false },
  ATIME ("rnoatime", K_RATTR, MOUNT_ATTR_NOATIME),
  ATIME ("ratime", K_RATTR, MOUNT_ATTR_RELATIME),
  ATIME ("rrelatime", K_RATTR, MOUNT_ATTR_RELATIME),
  ATIME ("rnorelatime", K_RATTR, MOUNT_ATTR_STRICTATIME),
  ATIME ("rstrictatime", K_RATTR, MOUNT_ATTR_STRICTATIME),
  ATIME ("rnostrictatime", K_RATTR, MOUNT_ATTR_RELATIME),
  { "private", K_PROP, false, MS_PRIVATE, false },
  { "rprivate", K_PROP, false, MS_PRIVATE, true },
  { "shared", K_PROP, false, MS_SHARED, false },
  { "rshared", K_PROP, false, MS_SHARED, true },
  { "slave", K_PROP, false, MS_SLAVE, false },
  { "rslave", K_PROP, false, MS_SLAVE, true },
  { "unbindable", K_PROP, false, MS_UNBINDABLE, false },
  { "runbindable", K_PROP, false, MS_UNBINDABLE, true },
  { "bind", K_BIND, false, 0, false },
  { "rbind", K_RBIND, false, 0, false },
  { "remount", K_REMOUNT, false, 0, false },
  { "idmap", K_IDMAP, false, 0, false },
  { "ridmap", K_RIDMAP, false, 0, false },
  /* Superblock flags: only meaningful for a fresh filesystem. */
  { "sync", K_SB, false, 0, false },
  { "async", K_SB, false, 0, false },
  { "dirsync", K_SB, false, 0, false },
  { "mand", K_SB, false, 0, false },
  { "nomand", K_SB, false, 0, false },
  { "lazytime", K_SB, false, 0, false },
  { "nolazytime", K_SB, false, 0, false },
  /* runc/crun extensions a config may carry: tmpcopyup (on every tmpfs podman
   * asks for) fills the tmpfs with what the image had there (copyup.c);
   * "silent" only quiets kernel logging. */
  { "tmpcopyup", K_COPYUP, false, 0, false },
  { "silent", K_NOOP, false, 0, false },
  { "loud", K_NOOP, false, 0, false },
};

/* opt_defs by name, sorted at the first look-up: a binary search, where a
 * sandbox's mounts (some 60, of seven options each) would otherwise cost a
 * strcmp with most of the table for each option, twice (bind sources are
 * opened by the parent) */
static const struct opt_def *opt_by_name[ARRAY_SIZE (opt_defs)];

static int
opt_cmp (const void *a, const void *b)
{
  return strcmp ((*(const struct opt_def *const *) a)->name, (*(const struct opt_def *const *) b)->name);
}

static int
opt_key_cmp (const void *key, const void *e)
{
  return strcmp (key, (*(const struct opt_def *const *) e)->name);
}

static const struct opt_def *
opt_def_find (const char *name)
{
  if (!opt_by_name[0])
    {
      for (size_t k = 0; k < ARRAY_SIZE (opt_defs); k++)
        opt_by_name[k] = &opt_defs[k];
      qsort (opt_by_name, ARRAY_SIZE (opt_defs), sizeof *opt_by_name, opt_cmp);
    }
  const struct opt_def *const *d = bsearch (name, opt_by_name, ARRAY_SIZE (opt_defs), sizeof *opt_by_name, opt_key_cmp);
  return d ? *d : NULL;
}

static void
push (char ***v, size_t *n, const char *s)
{
  *v = xrealloc (*v, (*n + 1) * sizeof **v);
  (*v)[(*n)++] = xstrdup (s);
}

static void
apply_attr (uint64_t *set, uint64_t *clr, const struct opt_def *d)
{
  if (d->attr & ATIME_FIELD)
    {
      *clr |= MOUNT_ATTR__ATIME;
      *set = (*set & ~(uint64_t) MOUNT_ATTR__ATIME) | (d->attr & ~ATIME_FIELD);
    }
  else if (d->clear)
    {
      *clr |= d->attr;
      *set &= ~d->attr;
    }
  else
    {
      *set |= d->attr;
      *clr &= ~d->attr;
    }
}

/* Parse an OCI options array. `where` names it in errors ("mounts[2]"). */
static int
ar_mount_opts_parse (char *const *options, size_t n, const char *where, struct ar_mount_opts *o, ar_error **err)
{
  memset (o, 0, sizeof *o);
  for (size_t i = 0; i < n; i++)
    {
      const struct opt_def *d = opt_def_find (options[i]);
      if (!d)
        {
          if (options[i][0] == '\0')
            return ar_err (err, 0, "%s.options[%zu]: empty option", where, i);
          push (&o->data, &o->n_data, options[i]);
          continue;
        }
      switch (d->kind)
        {
        case K_ATTR: apply_attr (&o->attr_set, &o->attr_clr, d); break;
        case K_RATTR: apply_attr (&o->rattr_set, &o->rattr_clr, d); break;
        case K_PROP:
          if (o->propagation && o->propagation != d->attr)
            return ar_err (err, 0, "%s.options[%zu]: `%s` conflicts with an earlier propagation option", where, i,
                           options[i]);
          o->propagation = d->attr;
          o->propagation_rec = d->rec;
          break;
        case K_BIND: o->bind = true; break;
        case K_RBIND: o->bind = o->rbind = true; break;
        case K_REMOUNT: o->remount = true; break;
        case K_IDMAP: o->idmap = true; break;
        case K_RIDMAP: o->idmap = o->ridmap = true; break;
        case K_SB: push (&o->sb_flags, &o->n_sb_flags, d->name); break;
        case K_NOOP: break;
        case K_COPYUP: o->copyup = true; break;
        }
    }
  return 0;
}

static void
ar_mount_opts_clear (struct ar_mount_opts *o)
{
  for (size_t i = 0; i < o->n_data; i++)
    free (o->data[i]);
  for (size_t i = 0; i < o->n_sb_flags; i++)
    free (o->sb_flags[i]);
  free (o->data);
  free (o->sb_flags);
  memset (o, 0, sizeof *o);
}

static int
setattr (int fd, unsigned int flags, uint64_t set, uint64_t clr, uint64_t prop, uint64_t userns)
{
  struct mount_attr a = { .attr_set = set, .attr_clr = clr, .propagation = prop, .userns_fd = userns };
  return mount_setattr (fd, "", AT_EMPTY_PATH | flags, &a, sizeof a);
}

int
ar_mount_setattr (int mnt_fd, const struct ar_mount_opts *o, const char *what, ar_error **err)
{
  /* the same attributes for the mount and for all beneath it (a bind's
   * "ro" with the agent's "rro", say): the recursive call alone is both */
  bool same = o->attr_set == o->rattr_set && o->attr_clr == o->rattr_clr;
  if ((o->attr_set || o->attr_clr) && !same && setattr (mnt_fd, 0, o->attr_set, o->attr_clr, 0, 0) < 0)
    return ar_err (err, errno, "%s: set mount attributes", what);
  if ((o->rattr_set || o->rattr_clr) && setattr (mnt_fd, AT_RECURSIVE, o->rattr_set, o->rattr_clr, 0, 0) < 0)
    return ar_err (err, errno, "%s: set recursive mount attributes", what);
  return 0;
}

int
ar_mount_attach (int mnt_fd, int target_fd, const struct ar_mount_opts *o, const char *what, ar_error **err)
{
  if (move_mount (mnt_fd, "", target_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return ar_err (err, errno, "%s: attach the mount", what);
  if (o && o->propagation && setattr (mnt_fd, o->propagation_rec ? AT_RECURSIVE : 0, 0, 0, o->propagation, 0) < 0)
    return ar_err (err, errno, "%s: set mount propagation", what);
  return 0;
}

/* The filesystem context's own messages ("e tmpfs: Bad value for 'size'"). */
static int
fs_error (int fsfd, int errnum, const char *what, const char *step, ar_error **err)
{
  char buf[512], all[1024] = "";
  ssize_t n;
  while ((n = read (fsfd, buf, sizeof buf - 1)) > 0)
    {
      buf[n] = '\0';
      if (buf[n - 1] == '\n')
        buf[n - 1] = '\0';
      size_t len = strlen (all);
      snprintf (all + len, sizeof all - len, "%s%s", len ? "; " : " (", buf + (n > 2 ? 2 : 0));
    }
  if (*all)
    strncat (all, ")", sizeof all - strlen (all) - 1);
  return ar_err (err, errnum, "%s: %s%s", what, step, all);
}

static int
fsconfig_option (int fsfd, const char *opt)
{
  const char *eq = strchr (opt, '=');
  if (!eq)
    return fsconfig (fsfd, FSCONFIG_SET_FLAG, opt, NULL, 0);
  cleanup_free char *key = strndup (opt, (size_t) (eq - opt));
  if (!key)
    abort ();
  return fsconfig (fsfd, FSCONFIG_SET_STRING, key, eq + 1, 0);
}

/* linux.mountLabel under SELinux (lsm.c); one container per process. */
static const char *mount_label;

void
ar_mount_set_label (const char *label)
{
  mount_label = label;
}

/* As runc: the kernel's own filesystems carry their own labels. */
static bool
takes_context (const char *type)
{
  static const char *const own[] = { "proc", "sysfs", "cgroup", "cgroup2", "securityfs", "selinuxfs" };
  for (size_t i = 0; i < ARRAY_SIZE (own); i++)
    if (strcmp (type, own[i]) == 0)
      return false;
  return true;
}

int
ar_mount_fresh (const char *type, const char *source, const struct ar_mount_opts *o, const char *what, ar_error **err)
{
  cleanup_close int fsfd = fsopen (type, FSOPEN_CLOEXEC);
  if (fsfd < 0)
    return ar_err (err, errno, "%s: open a `%s` filesystem", what, type);
  if (source && *source && fsconfig (fsfd, FSCONFIG_SET_STRING, "source", source, 0) < 0)
    return fs_error (fsfd, errno, what, "set the source", err);
  for (size_t i = 0; i < o->n_sb_flags; i++)
    if (fsconfig (fsfd, FSCONFIG_SET_FLAG, o->sb_flags[i], NULL, 0) < 0)
      return fs_error (fsfd, errno, what, o->sb_flags[i], err);
  for (size_t i = 0; i < o->n_data; i++)
    if (fsconfig_option (fsfd, o->data[i]) < 0)
      return fs_error (fsfd, errno, what, o->data[i], err);
  if (mount_label && takes_context (type) && fsconfig (fsfd, FSCONFIG_SET_STRING, "context", mount_label, 0) < 0)
    return fs_error (fsfd, errno, what, "context= (linux.mountLabel)", err);
  if (fsconfig (fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return fs_error (fsfd, errno, what, "create the filesystem", err);
  int mfd = fsmount (fsfd, FSMOUNT_CLOEXEC, 0);
  if (mfd < 0)
    return fs_error (fsfd, errno, what, "fsmount", err);
  if (ar_mount_setattr (mfd, o, what, err) < 0)
    {
      close (mfd);
      return -1;
    }
  return mfd;
}

/* The pid of pidfd's process as the mounted /proc sees it (fdinfo's "Pid:"). */
static pid_t
proc_pid_of (int pidfd)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
  cleanup_fclose FILE *f = fopen (path, "re");
  cleanup_free char *line = NULL;
  size_t cap = 0;
  while (f && getline (&line, &cap, f) > 0)
    if (strncmp (line, "Pid:", 4) == 0)
      return (pid_t) strtol (line + 4, NULL, 10);
  return -1;
}

/* A user namespace holding m's idmap, for MOUNT_ATTR_IDMAP: a child is cloned
 * straight into a new user namespace (no window where it is not), its maps are
 * written from here, and the namespace fd outlives it. */
static int
idmap_userns (const struct ar_mount *m, const char *what, ar_error **err)
{
  if (!m->n_uid_mappings || !m->n_gid_mappings)
    return ar_err (err, 0, "%s: idmap needs both uidMappings and gidMappings", what);
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    return ar_err (err, errno, "%s: pipe", what);
  int pidfd = -1;
  pid_t pid = (pid_t) syscall (SYS_clone, CLONE_NEWUSER | CLONE_PIDFD | SIGCHLD, NULL, &pidfd, NULL, 0UL);
  if (pid < 0)
    {
      int e = errno;
      close (p[0]);
      close (p[1]);
      return ar_err (err, e, "%s: clone a user namespace for idmap", what);
    }
  if (pid == 0)
    {
      char c;
      close (p[1]);
      (void) !read (p[0], &c, 1); /* returns at EOF when the parent is done */
      _exit (0);
    }
  close (p[0]);
  int fd = -1;
  char path[64];
  /* /proc here may belong to an ancestor pid namespace: name the child by its pid there. */
  pid_t procpid = proc_pid_of (pidfd);
  close (pidfd);
  snprintf (path, sizeof path, "/proc/%d/ns/user", procpid);
  if (procpid <= 0)
    ar_err (err, 0, "%s: idmap helper not visible in /proc", what);
  else if (ar_kfile_write_idmap (procpid, "uid_map", m->uid_mappings, m->n_uid_mappings, err) < 0
           || ar_kfile_write_idmap (procpid, "gid_map", m->gid_mappings, m->n_gid_mappings, err) < 0)
    ar_err_prefix (err, "%s: idmap", what);
  else
    {
      fd = open (path, O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        ar_err (err, errno, "%s: open %s", what, path);
    }
  close (p[1]);
  while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
  return fd;
}

/* MFD: the detached clone of SRC (open_tree), opened before the target was
 * made so that the file-or-directory choice and the bind see one object. */
static int
mount_bind (const struct ar_mount *m, const char *src, int mfd, const struct ar_mount_opts *o, int target_fd,
            const char *what, ar_error **err)
{
  if (o->idmap)
    {
      cleanup_close int ns = idmap_userns (m, what, err);
      if (ns < 0)
        return -1;
      if (setattr (mfd, o->ridmap ? AT_RECURSIVE : 0, MOUNT_ATTR_IDMAP, 0, 0, (uint64_t) ns) < 0)
        return ar_err (err, errno, "%s: idmap the mount of `%s`", what, src);
    }
  if (ar_mount_setattr (mfd, o, what, err) < 0)
    return -1;
  return ar_mount_attach (mfd, target_fd, o, what, err);
}

static bool
spec_has_ns (const struct ar_spec *spec, enum ar_ns_type t)
{
  if (!spec->linux_)
    return false;
  for (size_t i = 0; i < spec->linux_->n_namespaces; i++)
    if (spec->linux_->namespaces[i].type == t)
      return true;
  return false;
}

/* run.agentrun.bind-nofollow: "true" makes every bind source resolve with
 * RESOLVE_NO_SYMLINKS (agentrun sandbox checked each one; a symlink planted
 * in a writable folder after that check fails the mount, never redirects it). */
static bool
bind_nofollow (const struct ar_spec *spec)
{
  for (size_t i = 0; i < spec->n_annotations; i++)
    if (strcmp (spec->annotations[i].key, "run.agentrun.bind-nofollow") == 0)
      return strcmp (spec->annotations[i].value, "true") == 0;
  return false;
}

static int
open_source (const struct ar_spec *spec, const char *src, bool rec)
{
  unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (rec ? AT_RECURSIVE : 0);
  if (!bind_nofollow (spec))
    return open_tree (AT_FDCWD, src, flags);
  /* no O_NOFOLLOW: with O_PATH it would hand over a trailing symlink itself */
  cleanup_close int fd = ar_openat2 (AT_FDCWD, src, O_PATH, 0, RESOLVE_NO_SYMLINKS);
  return fd < 0 ? -1 : open_tree (fd, "", flags | AT_EMPTY_PATH);
}

/* The bind's source or target given to another file between its opening
 * and the attach (someone saving it on the host by a rename): the entry
 * held is gone and the attach fails with ENOENT. Both are looked up again
 * the same way, neither made, a few times. */
static int
bind_again (const struct ar_rootfs_ctx *ctx, const struct ar_mount *m, const char *src, const struct ar_mount_opts *o,
            const char *what, ar_error **err)
{
  for (int tries = 0; tries < 3 && (*err)->errnum == ENOENT; tries++)
    {
      cleanup_close int mfd = open_source (ctx->spec, src, o->rbind);
      cleanup_close int target = mfd < 0 ? -1
                                         : ar_openat2 (ctx->rootfs_fd, m->destination, O_PATH, 0, AR_RESOLVE_ROOT_FLAGS);
      if (target < 0)
        return -1; /* gone for good: the first error stands */
      ar_error_freep (err);
      if (mount_bind (m, src, mfd, o, target, what, err) == 0)
        return 0;
    }
  return -1;
}

static char *
abs_source (const struct ar_rootfs_ctx *ctx, const char *src)
{
  if (src[0] == '/' || !ctx->bundle)
    return xstrdup (src);
  return xasprintf ("%s/%s", ctx->bundle, src);
}

/* proc and sysfs go on an ordinary directory, never through a symlink of
 * the image (runc's rule and words): what the masks and the read-only
 * paths name must be the kernel's files. */
static bool
kernel_fs_on_symlink (const struct ar_rootfs_ctx *ctx, const struct ar_mount *m, const char *what, ar_error **err)
{
  struct stat st;
  if (strcmp (m->type, "proc") != 0 && strcmp (m->type, "sysfs") != 0)
    return false;
  cleanup_close int fd = ar_openat2 (ctx->rootfs_fd, m->destination, O_PATH | O_NOFOLLOW, 0, AR_RESOLVE_ROOT_FLAGS);
  if (fd < 0 || fstat (fd, &st) < 0 || S_ISDIR (st.st_mode))
    return false; /* missing: made as a directory below */
  ar_err (err, 0, "%s: %s must be mounted on ordinary directory", what, m->destination);
  return true;
}

int *
ar_mounts_open_binds (const struct ar_spec *spec, const char *bundle)
{
  struct ar_rootfs_ctx ctx = { .spec = spec, .bundle = bundle };
  int *fds = xmalloc0 ((spec->n_mounts + 1) * sizeof *fds);
  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      const struct ar_mount *m = &spec->mounts[i];
      struct ar_mount_opts o = { 0 };
      fds[i] = -1;
      if (m->source && ar_mount_opts_parse (m->options, m->n_options, "mounts", &o, NULL) == 0
          && (o.bind || (m->type && strcmp (m->type, "bind") == 0)) && !o.remount)
        {
          cleanup_free char *src = abs_source (&ctx, m->source);
          /* a failure here is the init's to report, with its words */
          fds[i] = open_source (spec, src, o.rbind);
        }
      ar_mount_opts_clear (&o);
    }
  return fds;
}

void
ar_mounts_close_binds (int *fds, size_t n)
{
  for (size_t i = 0; fds && i < n; i++)
    if (fds[i] >= 0)
      close (fds[i]);
  free (fds);
}

int
ar_mount_one (struct ar_rootfs_ctx *ctx, size_t index, ar_error **err)
{
  const struct ar_mount *m = &ctx->spec->mounts[index];
  cleanup_free char *what = xasprintf ("mounts[%zu] (%s)", index, m->destination ? m->destination : "?");
  cleanup_free char *where = xasprintf ("mounts[%zu]", index);
  struct ar_mount_opts o;
  int ret = -1;

  if (!m->destination)
    return ar_err (err, 0, "%s.destination: missing", where);
  if (ar_mount_opts_parse (m->options, m->n_options, where, &o, err) < 0)
    return -1;
  bool bind = o.bind || (m->type && strcmp (m->type, "bind") == 0);
  cleanup_close int target = -1;
  if (o.remount)
    {
      target = ar_open_in_root (ctx->rootfs_fd, m->destination, O_PATH, err);
      if (target >= 0 && ar_mount_setattr (target, &o, what, err) == 0)
        ret = (!o.propagation || setattr (target, o.propagation_rec ? AT_RECURSIVE : 0, 0, 0, o.propagation, 0) == 0)
                  ? 0
                  : ar_err (err, errno, "%s: set mount propagation", what);
    }
  else if (bind)
    {
      cleanup_free char *src = m->source ? abs_source (ctx, m->source) : NULL;
      cleanup_close int mfd = ctx->bind_fds ? ctx->bind_fds[index] : -1;
      struct stat st;
      if (ctx->bind_fds)
        ctx->bind_fds[index] = -1;
      if (!src)
        ar_err (err, 0, "%s.source: missing for a bind mount", where);
      else if (mfd < 0 && (mfd = open_source (ctx->spec, src, o.rbind)) < 0)
        ar_err (err, errno, "%s: mount source `%s`", what, src);
      else if (fstat (mfd, &st) < 0)
        ar_err (err, errno, "%s: stat mount source `%s`", what, src);
      else if ((target = ar_mk_in_root (ctx->rootfs_fd, m->destination, S_ISDIR (st.st_mode) ? AR_MK_DIR : AR_MK_FILE, err))
               >= 0)
        ret = mount_bind (m, src, mfd, &o, target, what, err);
      if (ret < 0 && target >= 0 && err && *err && (*err)->errnum == ENOENT)
        ret = bind_again (ctx, m, src, &o, what, err);
    }
  else if (o.idmap)
    ar_err (err, 0, "%s.options: idmap applies to bind mounts only", where);
  else if (!m->type)
    ar_err (err, 0, "%s.type: missing", where);
  else if (kernel_fs_on_symlink (ctx, m, what, err))
    ;
  else if ((target = ar_mk_in_root (ctx->rootfs_fd, m->destination, AR_MK_DIR, err)) < 0)
    ;
  else if (strcmp (m->type, "cgroup") == 0 || strcmp (m->type, "cgroup2") == 0)
    ret = ar_mount_cgroup (ctx, m, &o, target, what, err);
  else
    {
      cleanup_error ar_error *fresh_err = NULL;
      /* tmpcopyup: fill the detached tmpfs before its flags (ro) and before
       * anything in the container can see it. */
      struct ar_mount_opts fo = o;
      if (o.copyup)
        fo.attr_set &= ~(uint64_t) MOUNT_ATTR_RDONLY;
      /* a read-only /dev still gets its nodes and mount points first (rootfs.c) */
      if (strcmp (m->destination, "/dev") == 0 && (o.attr_set & MOUNT_ATTR_RDONLY))
        {
          ctx->dev_ro = true;
          o.attr_set &= ~(uint64_t) MOUNT_ATTR_RDONLY;
          fo.attr_set &= ~(uint64_t) MOUNT_ATTR_RDONLY;
        }
      cleanup_close int mfd = o.copyup && strcmp (m->type, "tmpfs")
                                  ? ar_err (&fresh_err, 0, "%s.options: tmpcopyup applies to tmpfs only", where)
                                  : ar_mount_fresh (m->type, m->source, &fo, what, &fresh_err);
      if (mfd >= 0)
        ret = (o.copyup && (ar_copyup (target, mfd, what, err) < 0 || ar_mount_setattr (mfd, &o, what, err) < 0))
                  ? -1
                  : ar_mount_attach (mfd, target, &o, what, err);
      else if (strcmp (m->type, "sysfs") == 0 && ctx->new_userns && fresh_err->errnum == EPERM
               && !spec_has_ns (ctx->spec, AR_NS_NETWORK))
        {
          /* sysfs belongs to the network namespace's owner: like runc, show the host's, recursively. */
          o.rbind = true;
          o.rattr_set |= o.attr_set; /* ro/nosuid/... for the host's submounts too */
          cleanup_close int sys = open_tree (AT_FDCWD, "/sys", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
          ret = sys < 0 ? ar_err (err, errno, "%s: open mount source `/sys`", what)
                        : mount_bind (m, "/sys", sys, &o, target, what, err);
        }
      else if (err && !*err)
        *err = ar_steal_ptr (fresh_err);
    }
  ar_mount_opts_clear (&o);
  return ret;
}

/* What the container sees at /sys/fs/cgroup. With its own cgroup namespace a
 * fresh cgroup filesystem shows only its subtree; without one, the host's
 * hierarchies are bind-mounted at the container's own cgroup, never above. */
struct cg_mnt {
  char *mountpoint, *root, *fstype, *superopts;
};

static void
cg_mnts_free (struct cg_mnt *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      free (v[i].mountpoint);
      free (v[i].root);
      free (v[i].fstype);
      free (v[i].superopts);
    }
  free (v);
}

/* Whether a mount at mp is hidden by a later one at later: on the same
 * mount point or on one of its parents. mountinfo lists a namespace's mounts
 * in the order they were attached, so "later" is "below in the file". */
static bool
cg_covered_by (const char *mp, const char *later)
{
  size_t l = strlen (later);
  if (strcmp (later, "/") == 0)
    return true;
  return strncmp (mp, later, l) == 0 && (mp[l] == '/' || mp[l] == '\0');
}

/* The host's visible cgroup and cgroup2 mounts, from mountinfo. A mount
 * covered by a later one (cgroup2 mounted over /sys/fs/cgroup in a private
 * namespace hides the v1 hierarchies under it) cannot be opened by its path
 * and is left out. Those under the rootfs (e.g. from an rbind of /sys) are
 * the container's, not the host's. */
static int
cg_host_mounts (const char *rootfs, struct cg_mnt **out, size_t *n, ar_error **err)
{
  size_t rl = strlen (rootfs);
  cleanup_fclose FILE *f = fopen ("/proc/self/mountinfo", "re");
  if (!f)
    return ar_err (err, errno, "open /proc/self/mountinfo");
  cleanup_free char *line = NULL;
  size_t cap = 0, nall = 0;
  char **all = NULL; /* every mount point, in order */
  size_t *at = NULL; /* index in all of each cgroup mount */
  *out = NULL;
  *n = 0;
  while (getline (&line, &cap, f) > 0)
    {
      char root[4096], mp[4096], fstype[64], src[4096], sopts[4096];
      char *dash = strstr (line, " - ");
      if (!dash || sscanf (line, "%*s %*s %*s %4095s %4095s", root, mp) != 2
          || sscanf (dash + 3, "%63s %4095s %4095s", fstype, src, sopts) != 3)
        continue;
      all = xrealloc (all, (nall + 1) * sizeof *all);
      all[nall++] = xstrdup (mp);
      if ((strcmp (fstype, "cgroup") && strcmp (fstype, "cgroup2"))
          || (strncmp (mp, rootfs, rl) == 0 && (mp[rl] == '/' || mp[rl] == '\0')))
        continue;
      *out = xrealloc (*out, (*n + 1) * sizeof **out);
      at = xrealloc (at, (*n + 1) * sizeof *at);
      at[*n] = nall - 1;
      (*out)[(*n)++] = (struct cg_mnt){ xstrdup (mp), xstrdup (root), xstrdup (fstype), xstrdup (sopts) };
    }
  size_t kept = 0;
  for (size_t i = 0; i < *n; i++)
    {
      bool hidden = false;
      for (size_t j = at[i] + 1; j < nall && !hidden; j++)
        hidden = cg_covered_by ((*out)[i].mountpoint, all[j]);
      if (hidden)
        {
          free ((*out)[i].mountpoint);
          free ((*out)[i].root);
          free ((*out)[i].fstype);
          free ((*out)[i].superopts);
        }
      else
        (*out)[kept++] = (*out)[i];
    }
  *n = kept;
  for (size_t j = 0; j < nall; j++)
    free (all[j]);
  free (all);
  free (at);
  return 0;
}

static bool
has_token (const char *list, const char *tok, size_t len)
{
  for (const char *p = list; p && *p;)
    {
      const char *e = strchrnul (p, ',');
      if ((size_t) (e - p) == len && strncmp (p, tok, len) == 0)
        return true;
      p = *e ? e + 1 : e;
    }
  return false;
}

/* This process's path in the hierarchy mounted as c, from /proc/self/cgroup. */
static char *
cg_own_path (const struct cg_mnt *c)
{
  cleanup_fclose FILE *f = fopen ("/proc/self/cgroup", "re");
  cleanup_free char *line = NULL;
  size_t cap = 0;
  bool v2 = strcmp (c->fstype, "cgroup2") == 0;
  while (f && getline (&line, &cap, f) > 0)
    {
      char *c1 = strchr (line, ':'), *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
      if (!c2)
        continue;
      line[strcspn (line, "\n")] = '\0';
      bool match = c2 > c1 + 1;
      for (const char *p = c1 + 1; match && p < c2;)
        {
          const char *e = memchr (p, ',', (size_t) (c2 - p));
          e = e ? e : c2;
          match = has_token (c->superopts, p, (size_t) (e - p));
          p = e < c2 ? e + 1 : e;
        }
      if ((v2 && c2 == c1 + 1) || (!v2 && match))
        return xstrdup (c2 + 1);
    }
  return NULL;
}

/* Of a v1 hierarchy's super options, those that name it: its controllers and name=. */
static bool
is_controller_opt (const char *t)
{
  static const char *const generic[] = { "rw",          "ro", "clone_children", "noprefix", "xattr", "cpuset_v2_mode",
                                         "favordynmods" };
  if (strncmp (t, "name=", 5) == 0)
    return true;
  if (strchr (t, '='))
    return false;
  for (size_t i = 0; i < ARRAY_SIZE (generic); i++)
    if (strcmp (t, generic[i]) == 0)
      return false;
  return true;
}

/* One hierarchy into dir_fd (an attached directory). */
static int
cg_mount_hierarchy (const struct cg_mnt *c, bool cgroupns, const struct ar_mount_opts *o, int dir_fd, const char *what,
                    ar_error **err)
{
  bool v2 = strcmp (c->fstype, "cgroup2") == 0;
  cleanup_close int mfd = -1;
  if (cgroupns)
    {
      struct ar_mount_opts fo = *o;
      cleanup_free char *sub = xstrdup (c->superopts);
      char *ctrls[32], *save = NULL;
      size_t n = 0;
      for (char *t = strtok_r (sub, ",", &save); t && n < ARRAY_SIZE (ctrls); t = strtok_r (NULL, ",", &save))
        if (is_controller_opt (t))
          ctrls[n++] = t;
      fo.data = v2 ? NULL : ctrls;
      fo.n_data = v2 ? 0 : n;
      mfd = ar_mount_fresh (c->fstype, c->fstype, &fo, what, err);
      if (mfd < 0)
        return -1;
    }
  else
    {
      cleanup_free char *own = cg_own_path (c);
      if (!own)
        return ar_err (err, ENOENT, "%s: own cgroup in the hierarchy at %s", what, c->mountpoint);
      size_t rl = strcmp (c->root, "/") ? strlen (c->root) : 0;
      if (rl && strncmp (own, c->root, rl))
        return ar_err (err, EXDEV, "%s: own cgroup %s is outside the host mount of %s", what, own, c->mountpoint);
      cleanup_free char *src = xasprintf ("%s%s", c->mountpoint, own + rl);
      mfd = open_tree (AT_FDCWD, src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
      if (mfd < 0)
        return ar_err (err, errno, "%s: open %s", what, src);
      if (ar_mount_setattr (mfd, o, what, err) < 0)
        return -1;
    }
  return ar_mount_attach (mfd, dir_fd, NULL, what, err);
}

/* v1 (and hybrid): a tmpfs holding one directory per hierarchy, named as on
 * the host, with a symlink per controller of a co-mounted one (cpu,cpuacct). */
static int
cg_mount_v1 (const struct cg_mnt *v, size_t n, bool cgroupns, const struct ar_mount_opts *o, int target_fd,
             const char *what, ar_error **err)
{
  struct ar_mount_opts to = { 0 };
  char *mode[] = { (char *) "mode=755" };
  to.data = mode;
  to.n_data = 1;
  to.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
  cleanup_close int tfd = ar_mount_fresh ("tmpfs", "tmpfs", &to, what, err);
  if (tfd < 0 || ar_mount_attach (tfd, target_fd, NULL, what, err) < 0)
    return -1;
  for (size_t i = 0; i < n; i++)
    {
      const char *name = strrchr (v[i].mountpoint, '/');
      name = name ? name + 1 : v[i].mountpoint;
      if (!*name || strcmp (name, "..") == 0 || strcmp (name, ".") == 0)
        continue;
      if (mkdirat (tfd, name, 0755) < 0)
        return ar_err (err, errno, "%s: mkdir %s", what, name);
      cleanup_close int dfd = openat (tfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (dfd < 0)
        return ar_err (err, errno, "%s: open %s", what, name);
      if (cg_mount_hierarchy (&v[i], cgroupns, o, dfd, what, err) < 0)
        return -1;
      if (strchr (name, ','))
        {
          cleanup_free char *parts = xstrdup (name);
          char *save = NULL;
          for (char *t = strtok_r (parts, ",", &save); t; t = strtok_r (NULL, ",", &save))
            if (symlinkat (name, tfd, t) < 0 && errno != EEXIST)
              return ar_err (err, errno, "%s: symlink %s", what, t);
        }
    }
  /* Last, so the directories above could be made: the tmpfs takes o's flags (ro). */
  return ar_mount_setattr (tfd, o, what, err);
}

/* The cgroup and cgroup2 mount types (cgroups.c in this folder is about
 * resources; this is about what the container sees at /sys/fs/cgroup). */
static int
ar_mount_cgroup (struct ar_rootfs_ctx *ctx, const struct ar_mount *m, const struct ar_mount_opts *o, int target_fd,
                 const char *what, ar_error **err)
{
  bool cgroupns = spec_has_ns (ctx->spec, AR_NS_CGROUP);
  bool want_v2 = strcmp (m->type, "cgroup2") == 0;
  struct cg_mnt *v = NULL;
  size_t n = 0, nv1 = 0;
  int ret = -1;

  if (want_v2 && cgroupns)
    {
      cleanup_close int mfd = ar_mount_fresh ("cgroup2", m->source ? m->source : "cgroup2", o, what, err);
      return mfd < 0 ? -1 : ar_mount_attach (mfd, target_fd, o, what, err);
    }
  if (cg_host_mounts (ctx->rootfs, &v, &n, err) < 0)
    return -1;
  for (size_t i = 0; i < n; i++)
    nv1 += strcmp (v[i].fstype, "cgroup") == 0;
  if (!want_v2 && cgroupns && ctx->new_userns && nv1)
    ar_err (err, 0,
            "%s: cgroup v1 cannot be mounted inside a user namespace with its own cgroup namespace; "
            "use a cgroup2 mount or drop the cgroup namespace",
            what);
  else if (want_v2 || nv1 == 0)
    {
      /* cgroup2 without a namespace of its own, or a pure v2 host: bind the own subtree. */
      size_t i;
      for (i = 0; i < n && strcmp (v[i].fstype, "cgroup2"); i++)
        ;
      if (i == n)
        ar_err (err, ENOENT, "%s: no cgroup2 hierarchy on the host", what);
      else
        ret = cg_mount_hierarchy (&v[i], false, o, target_fd, what, err);
    }
  else
    ret = cg_mount_v1 (v, n, cgroupns, o, target_fd, what, err);
  cg_mnts_free (v, n);
  return ret;
}
