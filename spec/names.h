/* The names the OCI model knows, as NULL-terminated tables: validation checks
 * values against them and `agentrun features` prints them, so the two cannot
 * disagree. Numbers (capabilities, rlimits, signals) are in spec.h. */
#ifndef AR_NAMES_H
#define AR_NAMES_H

#include <stdbool.h>
#include "model.h"

extern const char *const ar_seccomp_actions[]; /* "SCMP_ACT_ALLOW", ... */
extern const char *const ar_seccomp_archs[]; /* every arch the runtime-spec names */
extern const char *const ar_seccomp_operators[]; /* "SCMP_CMP_NE", ... (enum ar_seccomp_op order) */
extern const char *const ar_seccomp_flags[]; /* "SECCOMP_FILTER_FLAG_TSYNC", ... */
extern const char *const ar_rootfs_propagations[]; /* "shared", "rprivate", ... */
extern const char *const ar_sched_flags[];
extern const char *const ar_personality_domains[]; /* "LINUX", "LINUX32" */
extern const char *const ar_time_clocks[]; /* "monotonic", "boottime" */
extern const char *const ar_mount_options[]; /* options runtime/fs/mounts.c applies (keep in step) */
extern const char *const ar_hook_stage_names[]; /* config.json keys, enum ar_hook_stage order */

/* Index of s in a NULL-terminated table, or -1. */
int ar_name_index (const char *const *table, const char *s);
static inline bool
ar_name_known (const char *const *table, const char *s)
{
  return ar_name_index (table, s) >= 0;
}

/* "pid" -> AR_NS_PID; -1 if unknown. */
int ar_ns_type_from_name (const char *name);
/* Highest capability number in the table. */
int ar_capability_last (void);
/* IOPRIO_CLASS_* and SCHED_* values as the kernel numbers them. */
int ar_ioprio_class_from_name (const char *name);
int ar_sched_policy_from_name (const char *name);

#endif
