/* kill and delete: signalling a container and taking it down. */
#include "config.h"
#include "container.h"
#include "cgroups.h"
#include "fault.h"
#include "hooks.h"
#include "log.h"
#include "spec.h"
#include "state.h"
#include "util.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>

static int
open_state (struct ar_ctx *ctx, const char *id, bool exclusive, int *dirfd, struct ar_cstate *st, ar_error **err)
{
  if (ar_validate_id (id, err) < 0 || ar_state_open (ctx->root, id, exclusive, dirfd, err) < 0)
    return -1;
  int r = ar_cstate_read (*dirfd, st, err);
  if (r < 0)
    {
      close (*dirfd);
      *dirfd = -1;
    }
  return r;
}

static int
send_signal (int pidfd, int sig)
{
  /* Tests stand in for an init reaped between the pidfd and the signal:
   * ESRCH, whose "No such process" containerd takes as already gone. */
  if (ar_fault_fails ("kill-reaped"))
    return errno = ESRCH, -1;
  return (int) syscall (SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

int
ar_container_kill (struct ar_ctx *ctx, const char *id, int sig, bool all, ar_error **err)
{
  cleanup_close int dirfd = -1;
  struct ar_cstate st;
  int r = open_state (ctx, id, false, &dirfd, &st, err);

  if (r < 0)
    return -1;
  if (r == 0)
    return ar_err (err, 0, "container \"%s\" is still being created", id);
  r = -1;
  cleanup_close int pidfd = ar_cstate_pidfd (&st);
  /* Without a pid namespace of its own the container's processes outlive
   * its init: --all still reaches them through the cgroup. */
  if (all && st.cgroup_path)
    {
      if (ar_cgroup_kill_all (st.cgroup_path, sig, err) < 0)
        goto out;
    }
  else if (pidfd < 0)
    {
      /* runc's words: containerd's shim takes "container not running" as
       * "already gone" and stops retrying the kill of an exited task. */
      ar_err (err, 0, "cannot signal container \"%s\": container not running", id);
      goto out;
    }
  else if (send_signal (pidfd, sig) < 0)
    {
      ar_err (err, errno, "kill container \"%s\" (pid %d) with signal %d", id, (int) st.pid, sig);
      goto out;
    }
  r = 0;
out:
  ar_cstate_clear (&st);
  return r;
}

/* Wait for the pidfd to report exit, up to ms milliseconds. */
static bool
wait_exit (int pidfd, int ms)
{
  struct pollfd p = { .fd = pidfd, .events = POLLIN };
  int r;
  do
    r = poll (&p, 1, ms);
  while (r < 0 && errno == EINTR);
  return r > 0;
}

static int
kill_and_wait (struct ar_cstate *st, ar_error **err)
{
  cleanup_close int pidfd = ar_cstate_pidfd (st);
  if (st->cgroup_path)
    ar_cgroup_kill_all (st->cgroup_path, SIGKILL, NULL);
  if (pidfd < 0)
    return 0;
  if (syscall (SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) < 0 && errno != ESRCH)
    return ar_err (err, errno, "kill container \"%s\" (pid %d)", st->id, (int) st->pid);
  if (!wait_exit (pidfd, 10000))
    return ar_err (err, ETIMEDOUT, "container \"%s\": init %d did not exit after SIGKILL", st->id, (int) st->pid);
  return 0;
}

/* The poststop hooks of the config snapshot, or of spec when the caller
 * holds it already (run: it is what was created, and parsing the snapshot
 * again is a good part of the cost of deleting). */
static void
run_poststop (const struct ar_cstate *st, const struct ar_spec *spec)
{
  cleanup_error ar_error *err = NULL;
  struct ar_spec *loaded = NULL;
  if (!spec && (!st->config_path || ar_spec_load_file (st->config_path, &loaded, &err) < 0))
    {
      if (err)
        ar_warn ("poststop hooks: %s", err->msg);
      return;
    }
  if (!spec)
    spec = loaded;
  cleanup_free char *json = spec->hooks.n[AR_HOOK_POSTSTOP] ? ar_cstate_hook_json (st, st->id, "stopped") : NULL;
  if (json && ar_hooks_run (&spec->hooks, AR_HOOK_POSTSTOP, json, &err) < 0)
    ar_warn ("poststop hook: %s", err->msg);
  if (loaded)
    ar_spec_free (loaded);
}

/* Every process is gone, so systemd collects the scope by itself; StopUnit
 * makes that happen now. A bus that fails here leaves nothing of ours:
 * warn, and remove the cgroup directories anyway. */
static void
stop_scope (const struct ar_cstate *st)
{
  cleanup_error ar_error *err = NULL;
  if (ar_cgroup_systemd_stop (st->systemd_unit, &err) < 0)
    ar_warn ("delete: %s", err->msg);
}

/* A create killed after making its cgroup and before writing state.json
 * left the path in cgroup.pending: kill what is in it and remove it. */
static int
remove_pending_cgroup (int dirfd, ar_error **err)
{
  char path[4096];
  cleanup_close int fd = openat (dirfd, AR_STATE_CGROUP_PENDING, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return errno == ENOENT ? 0 : ar_err (err, errno, "open %s in the state folder", AR_STATE_CGROUP_PENDING);
  ssize_t n = read (fd, path, sizeof path - 1);
  if (n < 0)
    return ar_err (err, errno, "read %s in the state folder", AR_STATE_CGROUP_PENDING);
  path[n] = '\0';
  if (ar_cgroup_destroy_pending (path, err) < 0)
    return ar_err_prefix (err, "%s in the state folder", AR_STATE_CGROUP_PENDING);
  return 0;
}

int
ar_container_delete (struct ar_ctx *ctx, const char *id, bool force, ar_error **err)
{
  return ar_container_delete_spec (ctx, id, force, NULL, err);
}

int
ar_container_delete_spec (struct ar_ctx *ctx, const char *id, bool force, const struct ar_spec *spec, ar_error **err)
{
  cleanup_close int dirfd = -1;
  struct ar_cstate st;
  /* Like runc and crun, `delete --force` of a container that is gone
   * succeeds: podman and conmon call it after a failed create. */
  if (force && ctx->root && ar_validate_id (id, NULL) == 0)
    {
      cleanup_free char *path = xasprintf ("%s/%s", ctx->root, id);
      if (faccessat (AT_FDCWD, path, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
        return 0;
    }
  int r = open_state (ctx, id, true, &dirfd, &st, err);

  if (r < 0)
    return -1;
  if (r == 0)
    {
      /* A create that died half way: only --force cleans it. */
      if (!force)
        return ar_err (err, 0, "container \"%s\" is being created (use --force to remove a broken one)", id);
      if (remove_pending_cgroup (dirfd, err) < 0)
        return -1;
      return ar_state_remove (ctx->root, id, err);
    }
  r = -1;
  const char *status = ar_cstate_status (dirfd, &st);
  if (!force && (strcmp (status, "running") == 0 || strcmp (status, "paused") == 0))
    {
      ar_err (err, 0, "cannot delete container \"%s\" that is not stopped: %s", id, status);
      goto out;
    }
  if (strcmp (status, "paused") == 0 && ar_cgroup_freeze (st.cgroup_path, false, err) < 0)
    goto out;
  if (kill_and_wait (&st, err) < 0)
    goto out;
  ar_fault_point ("delete-after-kill");
  stop_scope (&st);
  if (st.cgroup_path && ar_cgroup_destroy (st.cgroup_path, err) < 0)
    goto out;
  ar_fault_point ("delete-after-cgroup");
  run_poststop (&st, spec);
  ar_fault_point ("delete-before-remove");
  if (ar_state_remove (ctx->root, id, err) < 0)
    goto out;
  r = 0;
out:
  ar_cstate_clear (&st);
  return r;
}

int
ar_container_delete_told (struct ar_ctx *ctx, const char *id, const struct ar_spec *spec, char **cgroup, ar_error **err)
{
  cleanup_close int dirfd = -1;
  struct ar_cstate st;
  *cgroup = NULL;
  int r = open_state (ctx, id, true, &dirfd, &st, err);
  if (r <= 0)
    return r < 0 ? -1 : ar_err (err, 0, "container \"%s\" is being created", id);
  r = -1;
  /* a scope is systemd's to remove, once it is empty: as delete */
  if (st.systemd_unit)
    {
      if (kill_and_wait (&st, err) < 0)
        goto out;
      stop_scope (&st);
      if (st.cgroup_path && ar_cgroup_destroy (st.cgroup_path, err) < 0)
        goto out;
    }
  run_poststop (&st, spec);
  if (ar_state_remove (ctx->root, id, err) < 0)
    goto out;
  if (!st.systemd_unit)
    *cgroup = ar_steal_ptr (st.cgroup_path);
  r = 0;
out:
  ar_cstate_clear (&st);
  return r;
}
