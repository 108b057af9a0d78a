/* The state folder each container owns: <root>/<id>/ holding state.json
 * (written once create has finished), config.json (a copy of the bundle's,
 * for exec and poststop hooks) and exec.fifo (present between create and
 * start). The folder itself is the lock: flock() on its fd serialises every
 * command on one id. */
#ifndef AR_RUNTIME_STATE_H
#define AR_RUNTIME_STATE_H

#include <stdbool.h>
#include <sys/types.h>
#include "spec_state.h"
#include "error.h"
#include "model.h"

#define AR_STATE_FILE "state.json"
#define AR_STATE_CONFIG "config.json"
/* The cgroup a create is about to make, until state.json records it. */
#define AR_STATE_CGROUP_PENDING "cgroup.pending"
#define AR_STATE_FIFO "exec.fifo"

struct ar_cstate {
  char *id;
  pid_t pid;
  unsigned long long pid_start; /* /proc/PID/stat field 22: detects pid reuse */
  char *bundle;
  char *rootfs;
  char *created; /* RFC3339 with nanoseconds, UTC */
  char *owner;
  char *cgroup_path; /* NULL when cgroups are disabled */
  char *systemd_unit; /* the transient scope under --systemd-cgroup, else NULL */
  char *config_path; /* the copy of config.json in the state folder */
  struct ar_kv *annotations;
  size_t n_annotations;
};

/* mkdir <root>/<id> (0700) and lock it; fails when the id is taken. */
int ar_state_create (const char *root, const char *id, int *dirfd, ar_error **err);
/* Open and lock <root>/<id>; fails when the id is unknown. Shared or exclusive. */
int ar_state_open (const char *root, const char *id, bool exclusive, int *dirfd, ar_error **err);
/* Remove the folder and everything in it (files only: it holds no subfolder). */
int ar_state_remove (const char *root, const char *id, ar_error **err);

int ar_cstate_write (int dirfd, const struct ar_cstate *st, ar_error **err);
/* Returns 1 when read, 0 when state.json is not there yet (status creating). */
int ar_cstate_read (int dirfd, struct ar_cstate *st, ar_error **err);
void ar_cstate_clear (struct ar_cstate *st);

/* creating | created | running | stopped | paused */
const char *ar_cstate_status (int dirfd, const struct ar_cstate *st);
/* True when st->pid runs and is still the process the state names. */
bool ar_cstate_alive (const struct ar_cstate *st);
/* A pidfd for the container's init, or -1 (errno set) when it is gone. */
int ar_cstate_pidfd (const struct ar_cstate *st);

/* runc's `state` JSON (pretty), caller frees. */
char *ar_cstate_to_json (const struct ar_cstate *st, const char *status, bool pretty);
/* The runtime-spec state (for hooks), caller frees. */
char *ar_cstate_hook_json (const struct ar_cstate *st, const char *id, const char *status);

/* Process helpers used by state and ps. */
unsigned long long ar_proc_start_time (pid_t pid);
pid_t ar_proc_ppid (pid_t pid);
char *ar_rfc3339_now (void);

#endif
