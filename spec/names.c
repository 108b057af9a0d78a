/* Name tables of the OCI model (see names.h and spec.h). */
#include "config.h"
#include "names.h"
#include "spec.h"
#include "util.h"

#include <linux/capability.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

const char *const ar_seccomp_actions[] = {
  "SCMP_ACT_KILL",  "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD", "SCMP_ACT_TRAP",   "SCMP_ACT_ERRNO",
  "SCMP_ACT_TRACE", "SCMP_ACT_ALLOW",        "SCMP_ACT_LOG",         "SCMP_ACT_NOTIFY", NULL,
};

const char *const ar_seccomp_archs[] = {
  "SCMP_ARCH_X86",     "SCMP_ARCH_X86_64",   "SCMP_ARCH_X32",         "SCMP_ARCH_ARM",
  "SCMP_ARCH_AARCH64", "SCMP_ARCH_MIPS",     "SCMP_ARCH_MIPS64",      "SCMP_ARCH_MIPS64N32",
  "SCMP_ARCH_MIPSEL",  "SCMP_ARCH_MIPSEL64", "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC",
  "SCMP_ARCH_PPC64",   "SCMP_ARCH_PPC64LE",  "SCMP_ARCH_S390",        "SCMP_ARCH_S390X",
  "SCMP_ARCH_PARISC",  "SCMP_ARCH_PARISC64", "SCMP_ARCH_RISCV64",     "SCMP_ARCH_LOONGARCH64",
  "SCMP_ARCH_M68K",    "SCMP_ARCH_SH",       "SCMP_ARCH_SHEB",        NULL,
};

/* Same order as enum ar_seccomp_op. */
const char *const ar_seccomp_operators[] = {
  "SCMP_CMP_NE", "SCMP_CMP_LT", "SCMP_CMP_LE", "SCMP_CMP_EQ", "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_MASKED_EQ", NULL,
};

const char *const ar_seccomp_flags[] = {
  "SECCOMP_FILTER_FLAG_TSYNC",
  "SECCOMP_FILTER_FLAG_LOG",
  "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
  "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
  NULL,
};

const char *const ar_rootfs_propagations[] = {
  "shared", "slave", "private", "unbindable", "rshared", "rslave", "rprivate", "runbindable", NULL,
};

/* Index + 1 is the kernel's class number (uapi/linux/ioprio.h). */
static const char *const ar_ioprio_classes[] = { "IOPRIO_CLASS_RT", "IOPRIO_CLASS_BE", "IOPRIO_CLASS_IDLE", NULL };

/* Index is the kernel's policy number (uapi/linux/sched.h). */
static const char *const ar_sched_policies[] = {
  "SCHED_OTHER", "SCHED_FIFO", "SCHED_RR", "SCHED_BATCH", "SCHED_ISO", "SCHED_IDLE", "SCHED_DEADLINE", NULL,
};

const char *const ar_sched_flags[] = {
  "SCHED_FLAG_RESET_ON_FORK", "SCHED_FLAG_RECLAIM",        "SCHED_FLAG_DL_OVERRUN",     "SCHED_FLAG_KEEP_POLICY",
  "SCHED_FLAG_KEEP_PARAMS",   "SCHED_FLAG_UTIL_CLAMP_MIN", "SCHED_FLAG_UTIL_CLAMP_MAX", NULL,
};

const char *const ar_personality_domains[] = { "LINUX", "LINUX32", NULL };

const char *const ar_time_clocks[] = { "monotonic", "boottime", NULL };

const char *const ar_mount_options[] = {
  "async",       "atime",          "bind",     "defaults",     "dev",
  "diratime",    "dirsync",        "exec",     "idmap",        "lazytime",
  "loud",        "mand",           "noatime",  "nodev",        "nodiratime",
  "noexec",      "nolazytime",     "nomand",   "norelatime",   "nostrictatime",
  "nosuid",      "nosymfollow",    "private",  "ratime",       "rbind",
  "rdev",        "rdiratime",      "relatime", "remount",      "rexec",
  "ridmap",      "rnoatime",       "rnodev",   "rnodiratime",  "rnoexec",
  "rnorelatime", "rnostrictatime", "rnosuid",  "rnosymfollow", "ro",
  "rprivate",    "rrelatime",      "rro",      "rrw",          "rshared",
  "rslave",      "rstrictatime",   "rsuid",    "rsymfollow",   "runbindable",
  "rw",          "shared",         "silent",   "slave",        "strictatime",
  "suid",        "symfollow",      "sync",     "unbindable",   NULL,
};

const char *const ar_hook_stage_names[] = {
  "prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop", NULL,
};

static const char *const ns_names[AR_NS_N] = {
  [AR_NS_PID] = "pid", [AR_NS_NETWORK] = "network", [AR_NS_MOUNT] = "mount",   [AR_NS_IPC] = "ipc",
  [AR_NS_UTS] = "uts", [AR_NS_USER] = "user",       [AR_NS_CGROUP] = "cgroup", [AR_NS_TIME] = "time",
};

#define CAP(n) [CAP_##n] = "CAP_" #n
static const char *const cap_names[] = {
  CAP (CHOWN),
  CAP (DAC_OVERRIDE),
  CAP (DAC_READ_SEARCH),
  CAP (FOWNER),
  CAP (FSETID),
  CAP (KILL),
  CAP (SETGID),
  CAP (SETUID),
  CAP (SETPCAP),
  CAP (LINUX_IMMUTABLE),
  CAP (NET_BIND_SERVICE),
  CAP (NET_BROADCAST),
  CAP (NET_ADMIN),
  CAP (NET_RAW),
  CAP (IPC_LOCK),
  CAP (IPC_OWNER),
  CAP (SYS_MODULE),
  CAP (SYS_RAWIO),
  CAP (SYS_CHROOT),
  CAP (SYS_PTRACE),
  CAP (SYS_PACCT),
  CAP (SYS_ADMIN),
  CAP (SYS_BOOT),
  CAP (SYS_NICE),
  CAP (SYS_RESOURCE),
  CAP (SYS_TIME),
  CAP (SYS_TTY_CONFIG),
  CAP (MKNOD),
  CAP (LEASE),
  CAP (AUDIT_WRITE),
  CAP (AUDIT_CONTROL),
  CAP (SETFCAP),
  CAP (MAC_OVERRIDE),
  CAP (MAC_ADMIN),
  CAP (SYSLOG),
  CAP (WAKE_ALARM),
  CAP (BLOCK_SUSPEND),
  CAP (AUDIT_READ),
  CAP (PERFMON),
  CAP (BPF),
  CAP (CHECKPOINT_RESTORE),
};
#undef CAP
_Static_assert(ARRAY_SIZE (cap_names) == CAP_LAST_CAP + 1, "capability table out of date with linux/capability.h");

#define RL(n)                                                                                                          \
  {                                                                                                                    \
    "RLIMIT_" #n, RLIMIT_##n                                                                                           \
  }
static const struct {
  const char *name;
  int resource;
} rlimits[] = {
  RL (AS),   RL (CORE),   RL (CPU),   RL (DATA), RL (FSIZE),  RL (LOCKS),  RL (MEMLOCK),    RL (MSGQUEUE),
  RL (NICE), RL (NOFILE), RL (NPROC), RL (RSS),  RL (RTPRIO), RL (RTTIME), RL (SIGPENDING), RL (STACK),
};
#undef RL

#define SIG(n)                                                                                                         \
  {                                                                                                                    \
#n, SIG##n                                                                                                         \
  }
static const struct {
  const char *name;
  int sig;
} signals[] = {
  SIG (HUP),  SIG (INT),   SIG (QUIT), SIG (ILL),  SIG (TRAP), SIG (ABRT), SIG (IOT),  SIG (BUS),    SIG (FPE),
  SIG (KILL), SIG (USR1),  SIG (SEGV), SIG (USR2), SIG (PIPE), SIG (ALRM), SIG (TERM), SIG (STKFLT), SIG (CHLD),
  SIG (CONT), SIG (STOP),  SIG (TSTP), SIG (TTIN), SIG (TTOU), SIG (URG),  SIG (XCPU), SIG (XFSZ),   SIG (VTALRM),
  SIG (PROF), SIG (WINCH), SIG (IO),   SIG (POLL), SIG (PWR),  SIG (SYS),
};
#undef SIG

int
ar_name_index (const char *const *table, const char *s)
{
  if (!s)
    return -1;
  for (int i = 0; table[i]; i++)
    if (strcmp (table[i], s) == 0)
      return i;
  return -1;
}

int
ar_ns_type_from_name (const char *name)
{
  for (int i = 0; i < AR_NS_N; i++)
    if (strcmp (ns_names[i], name) == 0)
      return i;
  return -1;
}

const char *
ar_ns_type_name (enum ar_ns_type t)
{
  return (unsigned) t < AR_NS_N ? ns_names[t] : NULL;
}

int
ar_capability_last (void)
{
  return (int) ARRAY_SIZE (cap_names) - 1;
}

int
ar_capability_from_name (const char *name)
{
  for (size_t i = 0; i < ARRAY_SIZE (cap_names); i++)
    if (strcmp (cap_names[i], name) == 0)
      return (int) i;
  return -1;
}

const char *
ar_capability_name (int cap)
{
  return cap >= 0 && (size_t) cap < ARRAY_SIZE (cap_names) ? cap_names[cap] : NULL;
}

int
ar_rlimit_from_name (const char *name)
{
  for (size_t i = 0; i < ARRAY_SIZE (rlimits); i++)
    if (strcmp (rlimits[i].name, name) == 0)
      return rlimits[i].resource;
  return -1;
}

int
ar_ioprio_class_from_name (const char *name)
{
  int i = ar_name_index (ar_ioprio_classes, name);
  return i < 0 ? -1 : i + 1;
}

int
ar_sched_policy_from_name (const char *name)
{
  return ar_name_index (ar_sched_policies, name);
}

/* "N" with 1 <= N <= SIGRTMAX, exactly. */
static int
signal_number (const char *s)
{
  char *end;
  if (*s < '0' || *s > '9')
    return -1;
  errno = 0;
  long n = strtol (s, &end, 10);
  return errno || *end || n < 1 || n > SIGRTMAX ? -1 : (int) n;
}

/* "RTMIN", "RTMIN+3", "RTMAX-2" */
static int
rt_signal (const char *s)
{
  int base, sign;
  if (strncmp (s, "RTMIN", 5) == 0)
    base = SIGRTMIN, sign = 1;
  else if (strncmp (s, "RTMAX", 5) == 0)
    base = SIGRTMAX, sign = -1;
  else
    return -1;
  s += 5;
  if (!*s)
    return base;
  if (*s != (sign > 0 ? '+' : '-'))
    return -1;
  int off = signal_number (s + 1);
  if (off < 0)
    return -1;
  int sig = base + sign * off;
  return sig >= SIGRTMIN && sig <= SIGRTMAX ? sig : -1;
}

int
ar_signal_from_name (const char *name)
{
  if (!name || !*name)
    return -1;
  if (*name >= '0' && *name <= '9')
    return signal_number (name);
  if (strncmp (name, "SIG", 3) == 0)
    name += 3;
  for (size_t i = 0; i < ARRAY_SIZE (signals); i++)
    if (strcmp (signals[i].name, name) == 0)
      return signals[i].sig;
  return rt_signal (name);
}
