/* Shared between the cgroup files (cgroups.c, cgroups_v1.c, cgroups_v2.c,
 * cgroups_ebpf.c, cgroups_systemd.c, cgroups_stats.c); not a contract for
 * other folders: they use runtime/cgroups/cgroups.h. */
#ifndef AR_CGROUPS_INTERNAL_H
#define AR_CGROUPS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "error.h"
#include "model.h"

enum ar_cg_mode { AR_CG_V1, AR_CG_HYBRID, AR_CG_V2 };

/* One mounted v1 hierarchy: its comma-separated controllers ("cpu,cpuacct",
 * "name=systemd") and where it is mounted. */
struct ar_cg_hier {
  char *ctrls;
  char *mnt;
};

struct ar_cg_layout {
  enum ar_cg_mode mode;
  char *unified; /* cgroup2 mount point; NULL on v1 only */
  struct ar_cg_hier *v1;
  size_t n_v1;
};

/* Detected once per process from statfs + /proc/self/mountinfo, below
 * /sys/fs/cgroup or $AGENTRUN_CGROUP_ROOT (test-only: point the runtime at
 * another cgroup mount, e.g. the cgroup2 half of a hybrid host). */
const struct ar_cg_layout *ar_cg_layout_get (ar_error **err);
/* The layout a stored cgroup record names, and *path its cgroup path: a
 * plain path ("/agentrun/ID") is in every hierarchy; "CTRL[,CTRL]:PATH"
 * only in those carrying one of the controllers (a container that needs
 * no other: each hierarchy joined costs a write to its cgroup.procs, and
 * on cgroup2 that write waits for an RCU grace period). */
const struct ar_cg_layout *ar_cg_layout_of (const char *record, const char **path, ar_error **err);
/* Does ctrls ("cpu,cpuacct") name one of list's len bytes ("memory,pids")? */
bool ar_cg_carries_any (const char *ctrls, const char *list, size_t len);
/* The mount of the v1 hierarchy that carries controller ctrl, or NULL. */
const char *ar_cg_v1_mount (const struct ar_cg_layout *l, const char *ctrl);
/* The directory of `path` in the hierarchy mounted at mnt (caller frees). */
char *ar_cg_dir (const char *mnt, const char *path);

/* Files: one write per call, so the kernel sees one value. Errors name the
 * full file path and errno. */
int ar_cg_write (const char *dir, const char *file, const char *value, ar_error **err);
int ar_cg_writef (ar_error **err, const char *dir, const char *file, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
/* Update's plan (cgroups_plan.c): while recording into a plan, ar_cg_write
 * appends the write to it instead (and succeeds); ar_cg_plan_run then makes
 * the writes in order and, when one fails, puts back what the earlier ones
 * changed. Recording into NULL stops. */
struct ar_cg_plan_write {
  char *dir, *file, *value;
};
struct ar_cg_plan {
  struct ar_cg_plan_write *w;
  size_t n;
};
void ar_cg_plan_record_into (struct ar_cg_plan *p);
bool ar_cg_plan_record (const char *dir, const char *file, const char *value);
int ar_cg_plan_run (const struct ar_cg_plan *p, ar_error **err);
void ar_cg_plan_clear (struct ar_cg_plan *p);
/* Read a whole (small) file; trailing newline stripped. */
int ar_cg_read (const char *dir, const char *file, char **out, ar_error **err);
bool ar_cg_exists (const char *dir, const char *file);
/* Does this cgroup2 directory offer ctrl (cgroup.controllers)? */
bool ar_cg_v2_has (const char *dir, const char *ctrl);

/* mkdir -p of path under mnt, marking each directory it made (xattr) so
 * destroy removes exactly those; cpuset copies the parent's cpus/mems down. */
int ar_cg_mkdir_path (const char *mnt, const char *path, bool cpuset, ar_error **err);
/* rmdir the leaf (and any child cgroups), retrying while busy, then the
 * ancestors this runtime made, while they are empty. Absent is fine. */
int ar_cg_rmdir_path (const char *mnt, const char *path, ar_error **err);

/* Where a given controller is to be driven: a v1 directory or a v2 one. */
struct ar_cg_target {
  const char *ctrl;
  char *dir;
  bool v2;
};
/* Resolve a controller for path: v1 (ctrl_v1) when mounted there, else
 * cgroup2 (pure or the unified half of a hybrid) when it offers ctrl_v2
 * (NULL: v1 only), enabling it along path when enable; else an error naming
 * the missing controller. */
int ar_cg_target (const struct ar_cg_layout *l, const char *path, const char *ctrl_v1, const char *ctrl_v2, bool enable,
                  struct ar_cg_target *t, ar_error **err);
void ar_cg_target_clear (struct ar_cg_target *t);

/* Apply resources (may be NULL) and, when with_devices, the device rules. */
int ar_cg_apply (const struct ar_cg_layout *l, const char *path, const struct ar_resources *r,
                 const struct ar_device_cgroup *devs, size_t n_devs, bool with_devices, ar_error **err);
/* Does r ask for any limit, zeros read as unset (as ar_cg_apply does)? */
bool ar_cg_resources_asked (const struct ar_resources *r);
/* The directory that lists the container's processes (cgroup2 when there
 * is one, else a v1 hierarchy), caller frees. */
char *ar_cg_procs_dir (const struct ar_cg_layout *l, const char *path);

/* v1 writers for each resource group (dir is the controller's directory). */
int ar_cg_v1_memory (const char *dir, const struct ar_memory *m, ar_error **err);
int ar_cg_v1_cpu (const char *dir, const struct ar_cpu *c, ar_error **err);
int ar_cg_v1_cpuset (const char *dir, const struct ar_cpu *c, ar_error **err);
int ar_cg_v1_pids (const char *dir, int64_t limit, ar_error **err);
int ar_cg_v1_blkio (const char *dir, const struct ar_blkio *b, ar_error **err);
int ar_cg_v1_hugetlb (const char *dir, const struct ar_hugepage_limit *h, ar_error **err);
int ar_cg_v1_devices (const char *dir, const struct ar_device_cgroup *d, size_t n, ar_error **err);
/* v2 writers. */
int ar_cg_v2_memory (const char *dir, const struct ar_memory *m, ar_error **err);
int ar_cg_v2_cpu (const char *dir, const struct ar_cpu *c, ar_error **err);
int ar_cg_v2_cpuset (const char *dir, const struct ar_cpu *c, ar_error **err);
int ar_cg_v2_pids (const char *dir, int64_t limit, ar_error **err);
int ar_cg_v2_io (const char *dir, const struct ar_blkio *b, ar_error **err);
int ar_cg_v2_hugetlb (const char *dir, const struct ar_hugepage_limit *h, ar_error **err);
int ar_cg_v2_unified (const char *dir, const struct ar_kv *kv, size_t n, ar_error **err);
/* Enable ctrl in cgroup.subtree_control of every ancestor of path. */
int ar_cg_v2_enable (const char *mnt, const char *path, const char *ctrl, ar_error **err);

/* The v2 device controller: a BPF_PROG_TYPE_CGROUP_DEVICE program built
 * from the rules (last match wins, default deny), attached to dir. */
int ar_cg_ebpf_devices (const char *dir, const struct ar_device_cgroup *d, size_t n, ar_error **err);

/* The device rules a container gets: linux.resources.devices followed by
 * the runtime-spec default devices and linux.devices (allowed rwm). Caller
 * frees the array (not the strings, which are borrowed or static). */
struct ar_device_cgroup *ar_cg_device_rules (const struct ar_linux *lnx, size_t *n);

/* The systemd manager: starts the transient scope "prefix-name.scope" in
 * the slice of "slice:prefix:name" with pid in it over D-Bus, and returns
 * its cgroup path and unit name. Without systemd (no /run/systemd/system)
 * and no DBUS_SYSTEM_BUS_ADDRESS it fails with a clear message. */
int ar_cg_systemd_create (const char *id, const struct ar_linux *lnx, pid_t pid, char **path_out, char **unit_out,
                          ar_error **err);
/* The unit name create would use, from cgroupsPath (or id). */
int ar_cg_systemd_unit (const char *id, const struct ar_linux *lnx, char **unit, ar_error **err);
/* The cgroup of a loaded unit, or *path NULL when systemd has no such unit. */
int ar_cg_systemd_lookup (const char *unit, char **path, ar_error **err);

/* Conversions documented by the runtime-spec and runc for cgroup v2. */
uint64_t ar_cg_shares_to_weight (uint64_t shares);
uint64_t ar_cg_blkio_to_io_weight (uint64_t w);

#endif
