/* Linux security module labels, as runc and crun treat them: applied when
 * the host runs the LSM, accepted with a debug line when it does not (an
 * LSM that is not there confines nothing, and podman and Docker fill the
 * fields by default).
 *
 * AppArmor: "exec PROFILE" into the task's attr/apparmor/exec (attr/exec
 * on kernels without the per-LSM folder), so the profile takes hold at
 * execve. SELinux: the label into attr/exec; linux.mountLabel becomes
 * context= on the filesystems the runtime creates (mounts.c).
 *
 * The attr file is opened before pivot_root, through the host's /proc
 * (checked to be procfs), not the container's, and written by the task
 * itself just before the last steps.
 *
 * Tests: $AGENTRUN_LSM_ROOT names a folder standing for the host's / (its
 * sys/module/apparmor/parameters/enabled, sys/fs/selinux/enforce and
 * proc/thread-self/attr/...), honoured only for an LSM the real host does
 * not run: it can show what would be written, never unconfine a real one. */
#include "config.h"
#include "lsm.h"
#include "log.h"
#include "util.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

static void ar_lsm_exec_close (struct ar_lsm_exec *x);

#ifndef SELINUX_MAGIC
#define SELINUX_MAGIC 0xf97cff8c
#endif

static bool
set (const char *v)
{
  return v && *v;
}

static bool
apparmor_at (const char *root)
{
  cleanup_free char *p = xasprintf ("%s/sys/module/apparmor/parameters/enabled", root);
  cleanup_close int fd = open (p, O_RDONLY | O_CLOEXEC);
  char c = 0;
  return fd >= 0 && read (fd, &c, 1) == 1 && c == 'Y';
}

static bool
selinux_at (const char *root)
{
  cleanup_free char *p = xasprintf ("%s/sys/fs/selinux", root);
  struct statfs sf;
  if (!*root)
    return statfs (p, &sf) == 0 && (unsigned long) sf.f_type == (unsigned long) SELINUX_MAGIC;
  cleanup_free char *e = xasprintf ("%s/enforce", p);
  return access (e, F_OK) == 0;
}

/* The root to look under for one LSM: the host's, or the test's when the
 * host lacks that LSM. */
static const char *
lsm_root (bool (*on) (const char *))
{
  const char *t = getenv ("AGENTRUN_LSM_ROOT");
  if (on (""))
    return "";
  return t && *t ? t : "";
}

static bool
apparmor_on (void)
{
  return apparmor_at (lsm_root (apparmor_at));
}
static bool
selinux_on (void)
{
  return selinux_at (lsm_root (selinux_at));
}

int
ar_lsm_check_process (const struct ar_process *p, const char *label, const char *prefix, ar_error **err)
{
  (void) err;
  if (p && set (p->apparmor_profile) && !apparmor_on ())
    ar_debug ("%s: %sapparmorProfile \"%s\": AppArmor is not enabled on this host, not applied", label, prefix,
              p->apparmor_profile);
  if (p && set (p->selinux_label) && !selinux_on ())
    ar_debug ("%s: %sselinuxLabel \"%s\": SELinux is not enabled on this host, not applied", label, prefix,
              p->selinux_label);
  return 0;
}

int
ar_lsm_check (const struct ar_spec *s, const char *label, ar_error **err)
{
  if (ar_lsm_check_process (s->process, label, "process.", err) < 0)
    return -1;
  if (s->linux_ && set (s->linux_->mount_label) && !selinux_on ())
    ar_debug ("%s: linux.mountLabel \"%s\": SELinux is not enabled on this host, not applied", label,
              s->linux_->mount_label);
  return 0;
}

const char *
ar_lsm_mount_label (const struct ar_spec *s)
{
  return s->linux_ && set (s->linux_->mount_label) && selinux_on () ? s->linux_->mount_label : NULL;
}

static int
open_attr (const char *root, const char *name, bool must, int *fd, ar_error **err)
{
  cleanup_free char *p = xasprintf ("%s/proc/thread-self/attr/%s", root, name);
  struct statfs sf;
  *fd = open (p, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (*fd < 0 && (errno == ENOENT && !must))
    return 0;
  if (*fd < 0)
    return ar_err (err, errno, "open %s", p);
  /* the real one must be procfs: a file bound over it would take the label and confine nothing */
  if (!*root && (fstatfs (*fd, &sf) < 0 || (unsigned long) sf.f_type != PROC_SUPER_MAGIC))
    {
      close (*fd);
      *fd = -1;
      return ar_err (err, EXDEV, "%s is not on procfs", p);
    }
  return 0;
}

int
ar_lsm_prepare (const struct ar_process *p, struct ar_lsm_exec *x, ar_error **err)
{
  x->apparmor_fd = x->selinux_fd = -1;
  x->apparmor = x->selinux = NULL;
  if (set (p->apparmor_profile) && apparmor_on ())
    {
      const char *root = lsm_root (apparmor_at);
      if (open_attr (root, "apparmor/exec", false, &x->apparmor_fd, err) < 0
          || (x->apparmor_fd < 0 && open_attr (root, "exec", true, &x->apparmor_fd, err) < 0))
        return ar_err_prefix (err, "process.apparmorProfile");
      x->apparmor = p->apparmor_profile;
    }
  if (set (p->selinux_label) && selinux_on ())
    {
      if (open_attr (lsm_root (selinux_at), "exec", true, &x->selinux_fd, err) < 0)
        {
          ar_lsm_exec_close (x);
          return ar_err_prefix (err, "process.selinuxLabel");
        }
      x->selinux = p->selinux_label;
    }
  return 0;
}

static int
write_attr (int fd, const char *value, const char *what, ar_error **err)
{
  size_t len = strlen (value);
  ssize_t w;
  do
    w = write (fd, value, len);
  while (w < 0 && errno == EINTR);
  if (w != (ssize_t) len)
    return ar_err (err, w < 0 ? errno : EIO, "%s: write \"%s\" to the exec attribute", what, value);
  return 0;
}

int
ar_lsm_apply (struct ar_lsm_exec *x, ar_error **err)
{
  int r = 0;
  if (x->apparmor_fd >= 0)
    {
      cleanup_free char *v = xasprintf ("exec %s", x->apparmor);
      r = write_attr (x->apparmor_fd, v, "process.apparmorProfile", err);
    }
  if (r == 0 && x->selinux_fd >= 0)
    r = write_attr (x->selinux_fd, x->selinux, "process.selinuxLabel", err);
  ar_lsm_exec_close (x);
  return r;
}

static void
ar_lsm_exec_close (struct ar_lsm_exec *x)
{
  if (x->apparmor_fd >= 0)
    close (x->apparmor_fd);
  if (x->selinux_fd >= 0)
    close (x->selinux_fd);
  x->apparmor_fd = x->selinux_fd = -1;
}
