/* Linux security module labels (AppArmor, SELinux): applied when the host
 * runs the LSM, accepted with a debug line when it does not (lsm.c). */
#ifndef AR_LSM_H
#define AR_LSM_H

#include "error.h"
#include "model.h"

/* process.apparmorProfile, process.selinuxLabel, linux.mountLabel: an empty
 * string counts as absent. Notes (debug) what the host cannot apply. */
int ar_lsm_check (const struct ar_spec *s, const char *label, ar_error **err);
/* The process part alone; prefix is the JSON path of the process object
 * with a trailing dot ("process." in config.json, "" in process.json). */
int ar_lsm_check_process (const struct ar_process *p, const char *label, const char *prefix, ar_error **err);
/* linux.mountLabel when SELinux is enabled (context= on new filesystems), else NULL. */
const char *ar_lsm_mount_label (const struct ar_spec *s);

/* The exec attributes to write, opened while the host's /proc is in view. */
struct ar_lsm_exec {
  int apparmor_fd, selinux_fd; /* -1: nothing to write */
  const char *apparmor, *selinux;
};
int ar_lsm_prepare (const struct ar_process *p, struct ar_lsm_exec *x, ar_error **err);
/* Write them (the calling task's own attributes, taking effect at execve); closes. */
int ar_lsm_apply (struct ar_lsm_exec *x, ar_error **err);

#endif
