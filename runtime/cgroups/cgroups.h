/* Cgroups on v1, hybrid (v1 + cgroup2 at /sys/fs/cgroup/unified) and pure v2.
 * A container's cgroup is named by one string (stored in its state) that
 * ar_cgroup_* functions take back later. manager is "cgroupfs", "systemd" or
 * "disabled" (then every function is a no-op and *path is NULL).
 *
 * The string is the cgroup path relative to each hierarchy's root:
 * linux.cgroupsPath when absolute, "/agentrun/<cgroupsPath>" when relative,
 * "/agentrun/<id>" when absent. The layout is detected at run time (statfs
 * and /proc/self/mountinfo under /sys/fs/cgroup, or $AGENTRUN_CGROUP_ROOT,
 * which is for tests only). The container gets a directory in every mounted
 * v1 hierarchy and, on hybrid and v2 hosts, in cgroup2; delete removes them
 * and the parents this runtime made (marked with the user.agentrun.made
 * xattr) once empty. "systemd" asks systemd over D-Bus for a transient scope
 * (cgroups_systemd.c), whose cgroup path is then stored and used the same
 * way; delete stops the scope (ar_cgroup_systemd_stop).
 * "cgroupfs:CTRL[,CTRL]" (internal, not a --cgroup-manager value) makes the
 * cgroup only in the hierarchies that carry those controllers (on cgroup2,
 * the one hierarchy, with no device program unless devices is named), and
 * the string stored is then "CTRL[,CTRL]:PATH", which every function here
 * takes back. */
#ifndef AR_CGROUPS_H
#define AR_CGROUPS_H

#include <stdbool.h>
#include <sys/types.h>
#include "error.h"
#include "model.h"

/* Create the container's cgroup from linux.cgroupsPath (or a default from
 * id), apply linux.resources and the device rules (config's, then the
 * runtime-spec default devices and linux.devices), and move pid into it.
 * *path_out is what to store. Anything that cannot be applied fails the
 * whole call and removes what was made. rootless: a cgroup that cannot be
 * made (EPERM/EACCES/EROFS) is skipped, logged at debug level (*path_out
 * NULL), when the config asks for no limit, and is an error naming the
 * missing delegation when it does; devices are left to the user namespace.
 * With "systemd", *unit_out is the scope's unit name (else NULL). */
int ar_cgroup_create (const char *manager, const char *id, const struct ar_linux *lnx, pid_t pid, bool rootless,
                      char **path_out, char **unit_out, ar_error **err);
/* Stop a container's systemd scope (StopUnit); one gone already is fine.
 * NULL unit: nothing to do. */
int ar_cgroup_systemd_stop (const char *unit, ar_error **err);
/* On a pure cgroup2 host, ar_cgroup_create's work but the join, before the
 * container's first process exists: *dirfd_out is the cgroup's directory
 * for clone3(CLONE_INTO_CGROUP), which starts that process inside. Joining
 * later by a write to cgroup.procs takes the kernel's cgroup threadgroup
 * rwsem for writing, which waits for an RCU grace period (3 to 20 ms, on v1
 * too). With "cgroupfs:CTRL,..." on v1 or hybrid, the same work but the
 * join, *path_out set and *dirfd_out -1: the caller joins with
 * ar_cgroup_enter when it can wait best (while the init sets itself up).
 * Elsewhere (v1, hybrid, "disabled", "systemd", rootless without a cgroup)
 * *dirfd_out is -1, *path_out NULL, and ar_cgroup_create does it all. */
int ar_cgroup_create_early (const char *manager, const char *id, const struct ar_linux *lnx, bool rootless,
                            char **path_out, int *dirfd_out, ar_error **err);
/* Does ar_cgroup_create_early make a cgroup to be joined after the clone
 * (a "cgroupfs:CTRL,..." manager on v1 or hybrid)? Then it may as well be
 * made after the clone too, while the init sets itself up. False on any
 * doubt: the caller makes it the usual way, whose errors say why. */
bool ar_cgroup_joined_after_clone (const char *manager, const char *id, const struct ar_linux *lnx);
/* The files through which a process moves itself into the cgroup a
 * record names: each v1 hierarchy's "tasks", and with unified the cgroup2
 * cgroup's "cgroup.procs" (else a cgroup on cgroup2 too is an error),
 * opened here (the kernel checks the opener's rights, so they serve a
 * process that has none), O_CLOEXEC; more than max files is an error.
 * Why: writing "0" into "tasks" moves the writer's one thread without the
 * threadgroup rwsem, so without the RCU grace period that a write of a pid
 * to cgroup.procs waits for; a single-threaded process is then all in.
 * "0" into cgroup.procs moves the whole writer and waits for that period
 * (cgroup2 moves no lone thread between domains). */
int ar_cgroup_self_join_fds (const char *record, bool unified, int *fds, size_t max, size_t *n, ar_error **err);
/* Could ar_cgroup_create make the container's cgroup with our rights
 * (every hierarchy's nearest existing folder writable)? For rootless
 * callers deciding before create, e.g. the sandbox's pids fallback. */
bool ar_cgroup_usable (const char *manager, const char *id, const struct ar_linux *lnx);
/* What a memory limit can also cover in a cgroup made here: swap
 * (memory.memsw on v1, memory.swap.max on v2, with swap accounting on),
 * and TCP buffers with a limit of their own (v1's memory.kmem.tcp; v2
 * counts them in memory.max): tcp, the cgroup counts them either way. */
struct ar_cgroup_memory_caps {
  bool swap, kernel_tcp, tcp;
};
void ar_cgroup_memory_caps (struct ar_cgroup_memory_caps *c);
/* What ar_cgroup_create will make, so that create can record it before
 * making it: a create killed half way leaves delete --force what to remove.
 * The cgroup path for cgroupfs; "systemd:UNIT" for systemd (the scope's
 * cgroup is known only once systemd made it); NULL for "disabled". */
int ar_cgroup_resolve (const char *manager, const char *id, const struct ar_linux *lnx, char **path_out, ar_error **err);
/* Remove what such a record names: kill what is in the cgroup and remove
 * it; for "systemd:UNIT", also stop the unit when it is still there. */
int ar_cgroup_destroy_pending (const char *record, ar_error **err);
/* The device rules wait while the init makes linux.devices' nodes (a node
 * they deny could not be made, as with runc, which sets them after its
 * mounts): ar_cgroup_create(_early) leaves them out when this is true, and
 * create applies them with ar_cgroup_apply_devices when the init stops
 * after its mounts, before any hook or container process runs. */
bool ar_cgroup_devices_deferred (const struct ar_linux *lnx);
int ar_cgroup_apply_devices (const char *manager, const char *path, const struct ar_linux *lnx, bool rootless,
                             ar_error **err);
/* Move another process (exec) into the container's cgroup. */
int ar_cgroup_enter (const char *path, pid_t pid, ar_error **err);
/* The same for exec, with its --cgroup [CTRL[,CTRL]:]SUB list (n may be 0). */
int ar_cgroup_enter_sub (const char *path, char *const *subs, size_t n, pid_t pid, ar_error **err);
/* Pids in the container's cgroup. */
int ar_cgroup_pids (const char *path, pid_t **pids, size_t *n, ar_error **err);
/* Kill every process in the cgroup with sig (for kill --all and delete --force). */
int ar_cgroup_kill_all (const char *path, int sig, ar_error **err);
/* Remove the cgroup in every hierarchy (child cgroups first, retrying
 * EBUSY for ~2s while killed processes leave). */
int ar_cgroup_destroy (const char *path, ar_error **err);
/* v1 freezer where mounted (hybrid too), else cgroup.freeze; returns once
 * the kernel reports the new state (error after ~5s). */
int ar_cgroup_freeze (const char *path, bool frozen, ar_error **err);
bool ar_cgroup_is_frozen (const char *path);
/* Apply new limits to a live container (update): all or nothing (a write
 * the kernel refuses puts back the ones made before it); devices are
 * ignored, as runc ignores them. */
int ar_cgroup_update (const char *path, const struct ar_resources *res, ar_error **err);

/* One runc-style stats event, {"type":"stats","id":ID,"data":{...}}, as a
 * JSON string (caller frees). Fails when the cgroup is gone. */
int ar_cgroup_stats_json (const char *path, const char *id, char **out, ar_error **err);

/* OOM notification: fd becomes readable when the kernel OOM-kills in the
 * cgroup (v1: memory.oom_control through an eventfd; v2: memory.events
 * through inotify). */
struct ar_cgroup_oom {
  int fd;
  int ctl_fd;
  bool v2;
  char *dir;
  unsigned long long last;
};
int ar_cgroup_oom_open (const char *path, struct ar_cgroup_oom *w, ar_error **err);
/* After fd polled readable: how many OOM events happened since last time
 * (0 for a wakeup that was not one). -1 when the cgroup is gone. */
int ar_cgroup_oom_read (struct ar_cgroup_oom *w, unsigned long long *n);
void ar_cgroup_oom_close (struct ar_cgroup_oom *w);

#endif
