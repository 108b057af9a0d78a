/* The OCI runtime-spec model (1.0 - 1.3), as typed C structs.
 * Every string is owned (heap) and may be NULL when absent. Arrays come with a
 * count. Optional numbers have a has_* flag. Parsing is in parse.c, checks that
 * need more than one field are in validate.c; this header holds no behaviour. */
#ifndef AR_MODEL_H
#define AR_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define AR_SPEC_VERSION "1.3.0"
#define AR_SPEC_VERSION_STRING AR_SPEC_VERSION

struct ar_kv {
  char *key;
  char *value;
}; /* annotations, sysctl, unified */

struct ar_root {
  char *path;
  bool readonly;
};

struct ar_mount {
  char *destination;
  char *type;
  char *source;
  char **options;
  size_t n_options;
  struct ar_idmap *uid_mappings;
  size_t n_uid_mappings; /* idmapped mounts */
  struct ar_idmap *gid_mappings;
  size_t n_gid_mappings;
};

struct ar_idmap {
  uint32_t container_id, host_id, size;
};

struct ar_rlimit {
  char *type;
  int resource;
  uint64_t soft, hard;
};

struct ar_caps { /* each set may be absent (NULL, 0) */
  char **bounding;
  size_t n_bounding;
  char **effective;
  size_t n_effective;
  char **inheritable;
  size_t n_inheritable;
  char **permitted;
  size_t n_permitted;
  char **ambient;
  size_t n_ambient;
};

struct ar_user {
  uint32_t uid, gid;
  bool has_umask;
  uint32_t umask;
  uint32_t *additional_gids;
  size_t n_additional_gids;
  char *username; /* windows-only in the spec; kept for completeness */
};

struct ar_console_size {
  uint32_t height, width;
};

struct ar_io_priority {
  char *class_name;
  int class;
  int priority;
};

struct ar_scheduler {
  char *policy;
  int policy_num;
  int32_t nice;
  int32_t priority;
  char **flags;
  size_t n_flags;
  uint64_t runtime, deadline, period;
};

struct ar_process {
  bool terminal;
  bool has_console_size;
  struct ar_console_size console_size;
  struct ar_user user;
  char **args;
  size_t n_args;
  char *command_line;
  char **env;
  size_t n_env;
  char *cwd;
  struct ar_caps *capabilities; /* NULL: none given */
  struct ar_rlimit *rlimits;
  size_t n_rlimits;
  bool no_new_privileges;
  bool has_oom_score_adj;
  int oom_score_adj;
  char *apparmor_profile;
  char *selinux_label;
  struct ar_io_priority *io_priority; /* NULL: not set */
  struct ar_scheduler *scheduler; /* NULL: not set */
};

struct ar_hook {
  char *path;
  char **args;
  size_t n_args;
  char **env;
  size_t n_env;
  bool has_timeout;
  int timeout; /* seconds, > 0 */
};

enum ar_hook_stage {
  AR_HOOK_PRESTART,
  AR_HOOK_CREATE_RUNTIME,
  AR_HOOK_CREATE_CONTAINER,
  AR_HOOK_START_CONTAINER,
  AR_HOOK_POSTSTART,
  AR_HOOK_POSTSTOP,
  AR_HOOK_N_STAGES
};

struct ar_hooks {
  struct ar_hook *stage[AR_HOOK_N_STAGES];
  size_t n[AR_HOOK_N_STAGES];
};

enum ar_ns_type {
  AR_NS_PID,
  AR_NS_NETWORK,
  AR_NS_MOUNT,
  AR_NS_IPC,
  AR_NS_UTS,
  AR_NS_USER,
  AR_NS_CGROUP,
  AR_NS_TIME,
  AR_NS_N
};

struct ar_namespace {
  enum ar_ns_type type;
  char *path;
};

struct ar_time_offset {
  char *clock;
  int64_t secs;
  uint32_t nanosecs;
};

struct ar_device {
  char *path;
  char type; /* 'c', 'b', 'u' or 'p' */
  int64_t major, minor;
  bool has_file_mode;
  uint32_t file_mode;
  bool has_uid;
  uint32_t uid;
  bool has_gid;
  uint32_t gid;
};

/* linux.resources */
struct ar_device_cgroup {
  bool allow;
  char type;
  bool has_major;
  int64_t major;
  bool has_minor;
  int64_t minor;
  char *access;
};
struct ar_memory {
  bool has_limit;
  int64_t limit;
  bool has_reservation;
  int64_t reservation;
  bool has_swap;
  int64_t swap;
  bool has_kernel;
  int64_t kernel;
  bool has_kernel_tcp;
  int64_t kernel_tcp;
  bool has_swappiness;
  uint64_t swappiness;
  bool has_disable_oom_killer;
  bool disable_oom_killer;
  bool has_use_hierarchy;
  bool use_hierarchy;
  bool has_check_before_update;
  bool check_before_update;
};
struct ar_cpu {
  bool has_shares;
  uint64_t shares;
  bool has_quota;
  int64_t quota;
  bool has_burst;
  uint64_t burst;
  bool has_period;
  uint64_t period;
  bool has_realtime_runtime;
  int64_t realtime_runtime;
  bool has_realtime_period;
  uint64_t realtime_period;
  char *cpus;
  char *mems;
  bool has_idle;
  int64_t idle;
};
struct ar_weight_device {
  int64_t major, minor;
  bool has_weight;
  uint16_t weight;
  bool has_leaf_weight;
  uint16_t leaf_weight;
};
struct ar_throttle_device {
  int64_t major, minor;
  uint64_t rate;
};
struct ar_blkio {
  bool has_weight;
  uint16_t weight;
  bool has_leaf_weight;
  uint16_t leaf_weight;
  struct ar_weight_device *weight_device;
  size_t n_weight_device;
  struct ar_throttle_device *throttle_read_bps;
  size_t n_throttle_read_bps;
  struct ar_throttle_device *throttle_write_bps;
  size_t n_throttle_write_bps;
  struct ar_throttle_device *throttle_read_iops;
  size_t n_throttle_read_iops;
  struct ar_throttle_device *throttle_write_iops;
  size_t n_throttle_write_iops;
};
struct ar_hugepage_limit {
  char *page_size;
  uint64_t limit;
};
struct ar_net_priority {
  char *name;
  uint32_t priority;
};
struct ar_network_res {
  bool has_class_id;
  uint32_t class_id;
  struct ar_net_priority *priorities;
  size_t n_priorities;
};
struct ar_resources {
  struct ar_device_cgroup *devices;
  size_t n_devices;
  struct ar_memory *memory; /* NULL when absent, likewise below */
  struct ar_cpu *cpu;
  bool has_pids_limit;
  int64_t pids_limit;
  struct ar_blkio *block_io;
  struct ar_hugepage_limit *hugepage_limits;
  size_t n_hugepage_limits;
  struct ar_network_res *network;
  struct ar_kv *unified;
  size_t n_unified;
};

/* linux.seccomp */
enum ar_seccomp_op { AR_OP_NE, AR_OP_LT, AR_OP_LE, AR_OP_EQ, AR_OP_GE, AR_OP_GT, AR_OP_MASKED_EQ };
struct ar_seccomp_arg {
  uint32_t index;
  uint64_t value;
  uint64_t value_two;
  enum ar_seccomp_op op;
};
struct ar_seccomp_rule {
  char **names;
  size_t n_names;
  char *action; /* "SCMP_ACT_..." (validated) */
  bool has_errno_ret;
  uint32_t errno_ret;
  struct ar_seccomp_arg *args;
  size_t n_args;
};
struct ar_seccomp {
  char *default_action;
  bool has_default_errno_ret;
  uint32_t default_errno_ret;
  char **architectures;
  size_t n_architectures;
  char **flags;
  size_t n_flags;
  char *listener_path;
  char *listener_metadata;
  struct ar_seccomp_rule *syscalls;
  size_t n_syscalls;
};

struct ar_personality {
  char *domain;
  char **flags;
  size_t n_flags;
};

struct ar_linux {
  struct ar_namespace *namespaces;
  size_t n_namespaces;
  struct ar_idmap *uid_mappings;
  size_t n_uid_mappings;
  struct ar_idmap *gid_mappings;
  size_t n_gid_mappings;
  struct ar_time_offset *time_offsets;
  size_t n_time_offsets;
  struct ar_device *devices;
  size_t n_devices;
  char *cgroups_path;
  struct ar_resources *resources; /* NULL when absent */
  char *rootfs_propagation;
  struct ar_seccomp *seccomp; /* NULL when absent */
  struct ar_kv *sysctl;
  size_t n_sysctl;
  char **masked_paths;
  size_t n_masked_paths;
  char **readonly_paths;
  size_t n_readonly_paths;
  char *mount_label;
  struct ar_personality *personality; /* NULL when absent */
  char *intel_rdt_clos_id; /* parsed, refused if set (not supported) */
};

struct ar_spec {
  char *oci_version;
  struct ar_root *root; /* NULL when absent */
  struct ar_mount *mounts;
  size_t n_mounts;
  struct ar_process *process; /* NULL when absent */
  char *hostname;
  char *domainname;
  struct ar_hooks hooks;
  struct ar_kv *annotations;
  size_t n_annotations;
  struct ar_linux *linux_; /* NULL when absent ("linux" is a macro in gcc's gnu mode) */
};

#endif
