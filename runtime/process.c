/* The container process: settings applied in the child, then execve. */
#include "config.h"
#include "process.h"
#include "kfile.h"
#include "caps.h"
#include "seccomp.h"
#include "spec.h"
#include "util.h"

#include <ctype.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/close_range.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sched.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* Write one sysctl under the container's /proc/sys, reached from its
 * rootfs fd without following any symlink: the rootfs is the user's. */
static int
set_sysctl_at (int procfd, bool at_sys, const char *key, const char *value, ar_error **err)
{
  struct open_how how = { .flags = O_WRONLY | O_CLOEXEC,
                          .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV };
  if (!*key || strstr (key, "..") || key[0] == '/' || key[0] == '.' || strchr (key, '/'))
    return ar_err (err, 0, "config.json: linux.sysctl.%s: invalid key", key);
  cleanup_free char *rel = xasprintf ("sys/%s", key);
  for (char *p = rel + 4; *p; p++)
    if (*p == '.')
      *p = '/';
  /* at_sys: procfd is the container's /proc/sys itself */
  cleanup_close int fd = (int) syscall (SYS_openat2, procfd, at_sys ? rel + 4 : rel, &how, sizeof how);
  if (fd < 0)
    return ar_err (err, errno, "sysctl %s: open /proc/%s", key, rel);
  size_t len = strlen (value);
  ssize_t n = write (fd, value, len);
  if (n < 0 || (size_t) n != len)
    return ar_err (err, n < 0 ? errno : EIO, "sysctl %s: write \"%s\"", key, value);
  return 0;
}

static int
set_sysctl (int procfd, const char *key, const char *value, ar_error **err)
{
  return set_sysctl_at (procfd, false, key, value, err);
}

static bool
ar_sysctl_is_ipc (const char *key)
{
  return strncmp (key, "kernel.shm", 10) == 0 || strncmp (key, "kernel.msg", 10) == 0 || strcmp (key, "kernel.sem") == 0
         || strncmp (key, "fs.mqueue.", 10) == 0;
}

bool
ar_process_has_ipc_sysctl (const struct ar_spec *spec)
{
  for (size_t i = 0; spec->linux_ && i < spec->linux_->n_sysctl; i++)
    if (ar_sysctl_is_ipc (spec->linux_->sysctl[i].key))
      return true;
  return false;
}

int
ar_process_setup_ipc_sysctl (const struct ar_spec *spec, ar_error **err)
{
  cleanup_close int procfd = open ("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct statfs sfs;
  if (procfd < 0 || fstatfs (procfd, &sfs) < 0)
    return ar_err (err, errno, "linux.sysctl: open /proc");
  if (sfs.f_type != PROC_SUPER_MAGIC)
    return ar_err (err, 0, "linux.sysctl: no proc mounted on /proc");
  for (size_t i = 0; i < spec->linux_->n_sysctl; i++)
    if (ar_sysctl_is_ipc (spec->linux_->sysctl[i].key)
        && set_sysctl (procfd, spec->linux_->sysctl[i].key, spec->linux_->sysctl[i].value, err) < 0)
      return -1;
  return 0;
}

/* Which of linux.sysctl's keys a pass writes, and where. */
enum sysctl_pass {
  SYSCTL_ALL,
  SYSCTL_NOT_IPC, /* the IPC namespace's are written already */
  /* the outer user namespace of a nested one (namespaces.h): all of them,
   * but user.max_user_namespaces is 1 there, room for the nested one alone */
  SYSCTL_OUTER,
  /* from the nested user namespace: its own user.* budgets, and no user
   * namespace of its own, whatever the spec says */
  SYSCTL_NESTED,
};

/* fd: the container's /proc, or its /proc/sys for the nested passes */
static int
write_sysctls (int fd, const struct ar_spec *spec, enum sysctl_pass pass, ar_error **err)
{
  static const char max_userns[] = "user.max_user_namespaces";
  bool nested = pass == SYSCTL_OUTER || pass == SYSCTL_NESTED;
  for (size_t i = 0; i < spec->linux_->n_sysctl; i++)
    {
      const char *key = spec->linux_->sysctl[i].key;
      if ((pass == SYSCTL_NOT_IPC && ar_sysctl_is_ipc (key))
          || (pass == SYSCTL_NESTED && strncmp (key, "user.", 5) != 0) || (nested && strcmp (key, max_userns) == 0))
        continue;
      if (set_sysctl_at (fd, nested, key, spec->linux_->sysctl[i].value, err) < 0)
        return -1;
    }
  return nested ? set_sysctl_at (fd, true, max_userns, pass == SYSCTL_OUTER ? "1" : "0", err) : 0;
}

static int
open_container_proc (int rootfs_fd, ar_error **err)
{
  struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS };
  struct statfs sfs;
  int procfd = (int) syscall (SYS_openat2, rootfs_fd, "proc", &how, sizeof how);
  if (procfd < 0)
    return ar_err (err, errno, "linux.sysctl: open the container's /proc");
  if (fstatfs (procfd, &sfs) < 0)
    {
      int e = errno;
      close (procfd);
      return ar_err (err, e, "linux.sysctl: statfs the container's /proc");
    }
  if (sfs.f_type != PROC_SUPER_MAGIC)
    {
      close (procfd);
      return ar_err (err, 0, "linux.sysctl: the container has no proc mounted on /proc");
    }
  return procfd;
}

/* /proc/sys itself: the read-only mask the pivot puts on it is a mount
 * over that folder, which a lookup from /proc would walk into. */
int
ar_process_open_sysctl (int rootfs_fd, ar_error **err)
{
  struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                          .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV };
  cleanup_close int procfd = open_container_proc (rootfs_fd, err);
  if (procfd < 0)
    return -1;
  int fd = (int) syscall (SYS_openat2, procfd, "sys", &how, sizeof how);
  if (fd < 0)
    return ar_err (err, errno, "linux.sysctl: open the container's /proc/sys");
  return fd;
}

int
ar_process_setup_sysctl (const struct ar_spec *spec, int rootfs_fd, bool skip_ipc, ar_error **err)
{
  if (!spec->linux_ || !spec->linux_->n_sysctl)
    return 0;
  cleanup_close int procfd = open_container_proc (rootfs_fd, err);
  if (procfd < 0)
    return -1;
  return write_sysctls (procfd, spec, skip_ipc ? SYSCTL_NOT_IPC : SYSCTL_ALL, err);
}

int
ar_process_setup_sysctl_outer (const struct ar_spec *spec, int sysfd, ar_error **err)
{
  return write_sysctls (sysfd, spec, SYSCTL_OUTER, err);
}

int
ar_process_setup_sysctl_nested (const struct ar_spec *spec, int sysfd, ar_error **err)
{
  return write_sysctls (sysfd, spec, SYSCTL_NESTED, err);
}

int
ar_process_setup_ns (const struct ar_spec *spec, ar_error **err)
{
  if (spec->hostname && *spec->hostname && sethostname (spec->hostname, strlen (spec->hostname)) < 0)
    return ar_err (err, errno, "sethostname %s", spec->hostname);
  if (spec->domainname && *spec->domainname && setdomainname (spec->domainname, strlen (spec->domainname)) < 0)
    return ar_err (err, errno, "setdomainname %s", spec->domainname);
  return 0;
}

static int
set_rlimits (const struct ar_process *p, ar_error **err)
{
  for (size_t i = 0; i < p->n_rlimits; i++)
    {
      int res = ar_rlimit_from_name (p->rlimits[i].type);
      if (res < 0)
        return ar_err (err, 0, "config.json: process.rlimits[%zu].type: unknown limit \"%s\"", i, p->rlimits[i].type);
      struct rlimit rl = { .rlim_cur = p->rlimits[i].soft, .rlim_max = p->rlimits[i].hard };
      if (setrlimit ((__rlimit_resource_t) res, &rl) < 0)
        return ar_err (err, errno, "setrlimit %s soft %llu hard %llu", p->rlimits[i].type,
                       (unsigned long long) rl.rlim_cur, (unsigned long long) rl.rlim_max);
    }
  return 0;
}

static int
set_personality (const struct ar_personality *pers, ar_error **err)
{
  unsigned long persona;
  if (!pers)
    return 0;
  if (!pers->domain || strcmp (pers->domain, "LINUX") == 0)
    persona = PER_LINUX;
  else if (strcmp (pers->domain, "LINUX32") == 0)
    persona = PER_LINUX32;
  else
    return ar_err (err, 0, "config.json: linux.personality.domain: unknown domain \"%s\"", pers->domain);
  if (pers->n_flags)
    return ar_err (err, 0, "config.json: linux.personality.flags: no flag is supported (got \"%s\")", pers->flags[0]);
  if (personality (persona) < 0)
    return ar_err (err, errno, "personality %s", pers->domain);
  return 0;
}

static int
set_oom_score_adj (const struct ar_process *p, ar_error **err)
{
  char want[32], cur[32] = "";
  if (!p->has_oom_score_adj)
    return 0;
  snprintf (want, sizeof want, "%d", p->oom_score_adj);
  /* Writing the current value needs no privilege; lowering needs CAP_SYS_RESOURCE. */
  int fd = open ("/proc/self/oom_score_adj", O_RDONLY | O_CLOEXEC);
  if (fd >= 0)
    {
      ssize_t n = read (fd, cur, sizeof cur - 1);
      close (fd);
      if (n > 0)
        cur[n] = '\0';
      if (atoi (cur) == p->oom_score_adj)
        return 0;
    }
  return ar_kfile_write ("/proc/self/oom_score_adj", want, strlen (want), err);
}

#define IOPRIO_CLASS_SHIFT 13
static int
set_io_priority (const struct ar_io_priority *io, ar_error **err)
{
  int cls;
  if (!io)
    return 0;
  if (strcmp (io->class_name, "IOPRIO_CLASS_RT") == 0)
    cls = 1;
  else if (strcmp (io->class_name, "IOPRIO_CLASS_BE") == 0)
    cls = 2;
  else if (strcmp (io->class_name, "IOPRIO_CLASS_IDLE") == 0)
    cls = 3;
  else
    return ar_err (err, 0, "config.json: process.ioPriority.class: unknown class \"%s\"", io->class_name);
  if (syscall (SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, 0, (cls << IOPRIO_CLASS_SHIFT) | io->priority) < 0)
    return ar_err (err, errno, "ioprio_set %s %d", io->class_name, io->priority);
  return 0;
}

struct sched_attr_v1 {
  uint32_t size, sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime, sched_deadline, sched_period;
};

static int
sched_policy (const char *name)
{
  static const struct {
    const char *n;
    int v;
  } t[] = {
    { "SCHED_OTHER", 0 }, { "SCHED_FIFO", 1 }, { "SCHED_RR", 2 },       { "SCHED_BATCH", 3 },
    { "SCHED_ISO", 4 },   { "SCHED_IDLE", 5 }, { "SCHED_DEADLINE", 6 },
  };
  for (size_t i = 0; i < ARRAY_SIZE (t); i++)
    if (strcmp (t[i].n, name) == 0)
      return t[i].v;
  return -1;
}

static int
sched_flag (const char *name)
{
  static const struct {
    const char *n;
    int v;
  } t[] = {
    { "SCHED_FLAG_RESET_ON_FORK", 0x01 },  { "SCHED_FLAG_RECLAIM", 0x02 },     { "SCHED_FLAG_DL_OVERRUN", 0x04 },
    { "SCHED_FLAG_KEEP_POLICY", 0x08 },    { "SCHED_FLAG_KEEP_PARAMS", 0x10 }, { "SCHED_FLAG_UTIL_CLAMP_MIN", 0x20 },
    { "SCHED_FLAG_UTIL_CLAMP_MAX", 0x40 },
  };
  for (size_t i = 0; i < ARRAY_SIZE (t); i++)
    if (strcmp (t[i].n, name) == 0)
      return t[i].v;
  return -1;
}

static int
set_scheduler (const struct ar_scheduler *s, ar_error **err)
{
  struct sched_attr_v1 a = { .size = sizeof a };
  if (!s)
    return 0;
  int pol = sched_policy (s->policy);
  if (pol < 0)
    return ar_err (err, 0, "config.json: process.scheduler.policy: unknown policy \"%s\"", s->policy);
  a.sched_policy = (uint32_t) pol;
  for (size_t i = 0; i < s->n_flags; i++)
    {
      int f = sched_flag (s->flags[i]);
      if (f < 0)
        return ar_err (err, 0, "config.json: process.scheduler.flags: unknown flag \"%s\"", s->flags[i]);
      a.sched_flags |= (uint64_t) f;
    }
  a.sched_nice = s->nice;
  a.sched_priority = (uint32_t) s->priority;
  a.sched_runtime = s->runtime;
  a.sched_deadline = s->deadline;
  a.sched_period = s->period;
  if (syscall (SYS_sched_setattr, 0, &a, 0) < 0)
    return ar_err (err, errno, "sched_setattr %s", s->policy);
  return 0;
}

int
ar_process_setup_limits (const struct ar_process *p, const struct ar_personality *pers, ar_error **err)
{
  if (set_rlimits (p, err) < 0 || set_personality (pers, err) < 0 || set_oom_score_adj (p, err) < 0
      || set_io_priority (p->io_priority, err) < 0 || set_scheduler (p->scheduler, err) < 0)
    return -1;
  return 0;
}

/* A cwd reached through a leaked fd (/proc/self/fd/N) is outside the root:
 * getcwd then fails or does not start with '/' (CVE-2024-21626). */
static int
check_cwd_inside (const char *cwd, ar_error **err)
{
  char buf[PATH_MAX];
  if (!getcwd (buf, sizeof buf) || buf[0] != '/')
    return ar_err (err, 0, "process.cwd \"%s\": resolves outside the container's root", cwd);
  return 0;
}

int
ar_process_setup_cwd (const struct ar_process *p, ar_error **err)
{
  const char *cwd = p->cwd && *p->cwd ? p->cwd : "/";
  if (cwd[0] != '/')
    return ar_err (err, 0, "config.json: process.cwd: \"%s\" is not absolute", cwd);
  if (chdir (cwd) == 0)
    return check_cwd_inside (cwd, err);
  if (errno != ENOENT)
    return ar_err (err, errno, "chdir %s", cwd);
  /* mkdir -p: we are inside the container's root already. */
  cleanup_free char *copy = xstrdup (cwd);
  for (char *s = copy + 1;; s++)
    {
      if (*s != '/' && *s != '\0')
        continue;
      char c = *s;
      *s = '\0';
      if (mkdir (copy, 0755) < 0 && errno != EEXIST)
        return ar_err (err, errno, "create cwd %s", copy);
      *s = c;
      if (!c)
        break;
    }
  if (chdir (cwd) < 0)
    return ar_err (err, errno, "chdir %s", cwd);
  return check_cwd_inside (cwd, err);
}

/* PATH from an env array, or the default. */
static const char *
ar_process_path_env (const struct ar_process *p)
{
  for (size_t i = 0; i < p->n_env; i++)
    if (strncmp (p->env[i], "PATH=", 5) == 0)
      return p->env[i] + 5;
  return DEFAULT_PATH;
}

static bool
is_executable_file (const char *path, int *why)
{
  struct stat st;
  if (stat (path, &st) < 0)
    {
      *why = errno;
      return false;
    }
  if (S_ISDIR (st.st_mode))
    {
      *why = EACCES;
      return false;
    }
  if (!(st.st_mode & 0111))
    {
      *why = EACCES;
      return false;
    }
  return true;
}

int
ar_process_lookup (const struct ar_process *p, char **path, ar_error **err)
{
  int why = 0;
  if (!p->n_args || !p->args[0] || !*p->args[0])
    return ar_err (err, 0, "config.json: process.args: empty");
  const char *name = p->args[0];
  if (strchr (name, '/'))
    {
      if (!is_executable_file (name, &why))
        {
          if (why == EACCES)
            return ar_err_coded (err, why, AR_STEP_LOOKUP, "exec: \"%s\": permission denied", name);
          /* Go's errno words, lower case: Docker maps "no such file or
           * directory" in the runtime's message to exit status 127. */
          char reason[128];
          snprintf (reason, sizeof reason, "%s", strerror (why));
          reason[0] = (char) tolower ((unsigned char) reason[0]);
          return ar_err_coded (err, why, AR_STEP_LOOKUP, "exec: \"%s\": stat %s: %s", name, name, reason);
        }
      *path = xstrdup (name);
      return 0;
    }
  cleanup_free char *dirs = xstrdup (ar_process_path_env (p));
  bool denied = false;
  char *save = NULL;
  for (char *d = strtok_r (dirs, ":", &save); d; d = strtok_r (NULL, ":", &save))
    {
      cleanup_free char *cand = xasprintf ("%s/%s", *d ? d : ".", name);
      if (is_executable_file (cand, &why))
        {
          *path = ar_steal_ptr (cand);
          return 0;
        }
      if (why == EACCES)
        denied = true;
    }
  if (denied)
    return ar_err_coded (err, EACCES, AR_STEP_LOOKUP, "exec: \"%s\": permission denied", name);
  return ar_err_coded (err, ENOENT, AR_STEP_LOOKUP, "exec: \"%s\": executable file not found in $PATH", name);
}

int
ar_process_exit_status (int step, int errnum)
{
  if ((step == AR_STEP_LOOKUP || step == AR_STEP_EXECVE) && errnum == EACCES)
    return 126;
  /* at execve the file was there: ENOENT names a missing interpreter */
  if (step == AR_STEP_LOOKUP && (errnum == ENOENT || errnum == ENOTDIR))
    return 127;
  return 1;
}

/* additionalGids, gid, uid (keeping capabilities across it), umask. */
static int
ar_process_set_user (const struct ar_process *p, ar_error **err)
{
  const struct ar_user *u = &p->user;
  gid_t *gids = xmalloc0 (u->n_additional_gids * sizeof *gids);
  for (size_t i = 0; i < u->n_additional_gids; i++)
    gids[i] = u->additional_gids[i];
  /* setgroups is denied in a user namespace with setgroups=deny: only fail
   * when groups were asked for. */
  if (setgroups (u->n_additional_gids, gids) < 0 && (u->n_additional_gids || errno != EPERM))
    {
      int e = errno;
      free (gids);
      return ar_err (err, e, "setgroups");
    }
  free (gids);
  if (setresgid (u->gid, u->gid, u->gid) < 0)
    return ar_err (err, errno, "setresgid %u", u->gid);
  if (prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
    return ar_err (err, errno, "prctl PR_SET_KEEPCAPS");
  if (setresuid (u->uid, u->uid, u->uid) < 0)
    return ar_err (err, errno, "setresuid %u", u->uid);
  if (prctl (PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
    return ar_err (err, errno, "prctl PR_SET_KEEPCAPS");
  umask (u->has_umask ? (mode_t) u->umask : 022);
  return 0;
}

static int
fd_hygiene (int preserve_fds, ar_error **err)
{
  /* Belt on top of O_CLOEXEC everywhere: whatever leaked, it closes at exec. */
  if (syscall (SYS_close_range, 3 + preserve_fds, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
    return ar_err (err, errno, "close_range");
  /* 3 .. 3+preserve_fds-1 are left as they are, on purpose: an fd the
   * caller passed reached us across execve, so it is not close-on-exec and
   * stays open; one the runtime opened (always O_CLOEXEC) on a number the
   * caller left free closes at exec. Clearing FD_CLOEXEC here would hand the
   * runtime's own files (exec.fifo, sockets) to the container. */
  return 0;
}

char **
ar_env_merge (char **base, size_t nb, char *const *add, size_t na, size_t *n)
{
  char **out = xmalloc0 ((nb + na + 1) * sizeof *out);
  *n = 0;
  for (size_t i = 0; i < nb; i++)
    out[(*n)++] = base[i];
  for (size_t i = 0; i < na; i++)
    {
      size_t klen = strcspn (add[i], "=");
      size_t j = 0;
      for (; j < *n; j++)
        if (strncmp (out[j], add[i], klen) == 0 && out[j][klen] == '=')
          break;
      out[j] = add[i];
      if (j == *n)
        (*n)++;
    }
  out[*n] = NULL;
  return out;
}

/* The order is runc's: everything the runtime itself does (the user switch,
 * capabilities, no_new_privs, fd hygiene) comes before the filter, so a
 * profile need not allow the runtime's own calls; only what cannot come
 * earlier follows it: without no_new_privs the kernel wants CAP_SYS_ADMIN
 * to load the filter, so the final capabilities are set after it. */
int
ar_process_exec (const struct ar_process *p, const char *path, struct ar_seccomp_prog *prog, bool seccomp_loaded,
                 const struct ar_exec_tail *t, ar_error **err)
{
  bool load = prog && !seccomp_loaded;
  bool caps_late = load && !p->no_new_privileges;
  int listener = -1;

  if (ar_caps_drop_bounding (p->capabilities, err) < 0 || ar_process_set_user (p, err) < 0)
    return -1;
  if (t->after_user && t->after_user (t->ctx, err) < 0)
    return -1;
  if (caps_late ? ar_caps_raise_effective (err) < 0 : ar_caps_apply (p->capabilities, err) < 0)
    return -1;
  if (p->no_new_privileges && prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return ar_err (err, errno, "prctl PR_SET_NO_NEW_PRIVS");
  if (fd_hygiene (t->preserve_fds, err) < 0)
    return -1;
  if (load && ar_seccomp_load (prog, &listener, err) < 0)
    return -1;
  if (listener >= 0)
    {
      int r = t->listener ? t->listener (t->ctx, listener, err)
                          : ar_err (err, 0, "seccomp: a listener fd appeared after the runtime left");
      close (listener);
      if (r < 0)
        return -1;
    }
  if (caps_late && ar_caps_apply (p->capabilities, err) < 0)
    return -1;
  if (t->last && t->last (t->ctx, err) < 0)
    return -1;
  execve (path, p->args, p->env ? p->env : (char *[]){ NULL });
  int e = errno;
  if (e == EACCES)
    return ar_err_coded (err, e, AR_STEP_EXECVE, "exec: \"%s\": permission denied", p->args[0]);
  return ar_err_coded (err, e, AR_STEP_EXECVE, "exec %s: %s", path, strerror (e));
}
