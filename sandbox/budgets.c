/* See budgets.h. Why each: tmpfs pages are neither swapped here nor freed
 * by the OOM killer, so an unbounded /tmp is the host's RAM; fs.file-max is
 * one table for the whole host, and --pids processes times RLIMIT_NOFILE
 * must stay well inside it; inotify and fanotify counts are charged to the
 * user who made the user namespace (root through sudo), so a sandbox could
 * otherwise take all of them from that user's editors and services (and
 * two sandboxes at once as much as two). */
#include "config.h"
#include "budgets.h"
#include "cgroups.h"
#include "unixconn.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <unistd.h>

static long long
read_ll (const char *path, long long fallback)
{
  char buf[32] = "";
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || read (fd, buf, sizeof buf - 1) <= 0)
    return fallback;
  long long v = strtoll (buf, NULL, 10);
  return v > 0 ? v : fallback;
}

static int64_t
tmpfs_default (void)
{
  struct sysinfo si;
  if (sysinfo (&si) < 0)
    return AR_BUDGET_TMPFS_MAX / 4;
  int64_t ram = (int64_t) si.totalram * si.mem_unit;
  return ram / 8 < AR_BUDGET_TMPFS_MAX ? ram / 8 : AR_BUDGET_TMPFS_MAX;
}

/* Half of the file table for the sandbox at most, whatever --pids says;
 * 1024 by default (the usual soft limit), never above the caller's hard
 * limit (raising it needs CAP_SYS_RESOURCE on the host). */
static int
fill_nofile (struct ar_agent_opts *o, ar_error **err)
{
  struct rlimit rl;
  if (getrlimit (RLIMIT_NOFILE, &rl) < 0)
    return ar_err (err, errno, "getrlimit RLIMIT_NOFILE");
  long long hard = rl.rlim_max == RLIM_INFINITY ? 1 << 20 : (long long) rl.rlim_max;
  if (o->nofile > 0)
    return o->nofile > hard ? ar_err (err, 0, "--nofile %lld: above this caller's hard limit (%lld)", o->nofile, hard)
                            : 0;
  long long share = read_ll ("/proc/sys/fs/file-max", 1 << 20) / 2 / (o->pids > 0 ? o->pids : 1);
  long long v = share < 1024 ? share : 1024;
  v = v < 64 ? 64 : v;
  o->nofile = v < hard ? v : hard;
  return 0;
}

/* The host level's count (this caller's user namespace) in *all, and a
 * part of it in *part (at least 1); both 0 when this kernel has no such
 * count. */
static void
part_of (const char *key, long long div, long long *all, long long *part)
{
  cleanup_free char *p = xasprintf ("/proc/sys/user/%s", key);
  long long v = read_ll (p, 0);
  *all = v > 0 ? v : access (p, F_OK) == 0 ? 1 : 0;
  *part = v / div > 0 ? v / div : *all ? 1 : 0;
}

/* inotify: a fixed, small budget, and a small part of the user's, not
 * half: the counts of every sandbox the user runs at once (and of its
 * editors and services) add up at the host level. A value given is kept,
 * unless the user does not have that many at all. */
static int
fill_inotify (struct ar_agent_opts *o, ar_error **err)
{
  const struct {
    const char *key, *what;
    long long *v, fixed, div;
  } b[] = {
    { "max_inotify_instances", "instances", &o->inotify_instances, AR_BUDGET_INOTIFY_INSTANCES, 4 },
    { "max_inotify_watches", "watches", &o->inotify_watches, AR_BUDGET_INOTIFY_WATCHES, 8 },
  };
  for (size_t i = 0; i < ARRAY_SIZE (b); i++)
    {
      long long user, share;
      part_of (b[i].key, b[i].div, &user, &share);
      if (user <= 0)
        return ar_err (err, ENOENT, "budget step: /proc/sys/user/%s", b[i].key);
      if (*b[i].v > user)
        return ar_err (err, 0, "--inotify: %lld %s, more than this user has in all (%lld, /proc/sys/user/%s)", *b[i].v,
                       b[i].what, user, b[i].key);
      if (*b[i].v <= 0)
        *b[i].v = share < b[i].fixed ? share : b[i].fixed;
    }
  return 0;
}

static int64_t
memory_default (void)
{
  struct sysinfo si;
  if (sysinfo (&si) < 0)
    return AR_BUDGET_MEMORY_MAX / 4;
  int64_t half = (int64_t) si.totalram * si.mem_unit / 2;
  return half < AR_BUDGET_MEMORY_MAX ? half : AR_BUDGET_MEMORY_MAX;
}

/* The host's TCP buffers are one pool (net.ipv4.tcp_mem, in pages, for
 * every network namespace): past its third figure every TCP allocation on
 * the host fails. A part of it, in bytes; 0 when it cannot be read. */
static int64_t
tcp_share (void)
{
  long long lo, mid, hi;
  cleanup_fclose FILE *f = fopen ("/proc/sys/net/ipv4/tcp_mem", "re");
  if (!f || fscanf (f, "%lld %lld %lld", &lo, &mid, &hi) != 3 || hi <= 0)
    return 0;
  return (int64_t) hi * sysconf (_SC_PAGESIZE) / AR_BUDGET_TCP_DIV;
}

/* The largest buffer of a sysctl triple ("min default max"). */
static int64_t
triple_max (const char *v)
{
  const char *last = strrchr (v, ' ');
  return strtoll (last ? last + 1 : v, NULL, 10);
}

/* The socket cap by default: every socket of the sandbox's network
 * namespace is counted (both ends of a loopback connection, those queued
 * and closing: runtime/unixconn_sockets.c), each with up to tcp_rmem's and
 * tcp_wmem's largest buffers. The cap at full buffers stays within the
 * quarter of the host's tcp_mem the cgroup's TCP limit takes (the bound
 * where there is no memory cgroup: a plain user's), and a few dozen
 * connections are always had. The supervisor that makes and accepts the
 * sockets is in the sandbox's memory cgroup, so where that cgroup counts
 * TCP buffers its limit bounds them; where it does not (v1 without
 * memory.kmem.tcp), the cap stays within the memory limit too. */
static void
fill_sockets (struct ar_agent_opts *o)
{
  if (o->max_sockets > 0 || o->max_sockets_unlimited)
    return;
  int64_t per = triple_max (AR_AGENT_TCP_RMEM) + triple_max (AR_AGENT_TCP_WMEM);
  int64_t share = tcp_share ();
  struct ar_cgroup_memory_caps caps = { 0 };
  if (o->has_memory && o->memory > 0)
    ar_cgroup_memory_caps (&caps);
  if (o->has_memory && o->memory > 0 && !caps.tcp && (share <= 0 || o->memory < share))
    share = o->memory;
  int64_t v = share / per;
  o->max_sockets = v < AR_BUDGET_SOCKETS_MIN ? AR_BUDGET_SOCKETS_MIN : v > AR_SOCKCAP_MAX ? AR_SOCKCAP_MAX : v;
}

/* A memory limit by default wherever a memory cgroup can be made (root, or
 * a delegated cgroup); --memory unlimited lifts it. A plain user without a
 * cgroup gets none, and says nothing: --memory asked there fails instead
 * (cmd_sandbox.c). The limit covers what a cgroup charges: the processes,
 * their tmpfs pages (/tmp, the home, /dev/shm, SysV shm), swap where it is
 * accounted, and TCP buffers (cgroup2 counts them in; v1 apart, under
 * a limit of their own). */
static void
fill_memory (struct ar_agent_opts *o)
{
  if (!o->has_memory && !o->memory_unlimited && ar_cgroup_usable ("cgroupfs:memory", "sandbox", NULL))
    {
      o->has_memory = o->memory_default = true;
      o->memory = memory_default ();
    }
  if (!o->has_memory)
    return;
  struct ar_cgroup_memory_caps caps;
  ar_cgroup_memory_caps (&caps);
  o->memory_swap = caps.swap;
  int64_t tcp = caps.kernel_tcp ? tcp_share () : 0;
  o->kernel_tcp = caps.kernel_tcp ? (tcp > 0 && tcp < o->memory ? tcp : o->memory) : 0;
}

int
ar_budgets_fill (struct ar_agent_opts *o, ar_error **err)
{
  int64_t tmpfs = o->tmp_size <= 0 || o->home_size <= 0 ? tmpfs_default () : 0;
  if (o->tmp_size <= 0)
    o->tmp_size = tmpfs;
  if (o->home_size <= 0)
    o->home_size = tmpfs;
  if (fill_nofile (o, err) < 0)
    return -1;
  if (fill_inotify (o, err) < 0)
    return -1;
  long long all;
  part_of ("max_fanotify_groups", 4, &all, &o->fanotify_groups);
  part_of ("max_fanotify_marks", 8, &all, &o->fanotify_marks);
  fill_memory (o);
  fill_sockets (o);
  /* root's init writes them before it takes the agent's uid (the runtime's
   * init.c); a plain user's, as root of an outer user namespace, before the
   * agent's nested one is made, if two user namespaces can be had */
  long long userns_room = read_ll ("/proc/sys/user/max_user_namespaces", 0);
  o->nested_userns = geteuid () != 0 && userns_room >= 2;
  o->ipc_limits = geteuid () == 0 || o->nested_userns;
  /* asked for, it is there or the sandbox does not run */
  if (!o->ipc_limits && o->shm_size > 0)
    return ar_err (err, 0,
                   "--shm-size: run by a plain user, the sandbox's IPC limits need two user namespaces (one "
                   "nested in the other), and /proc/sys/user/max_user_namespaces is %lld; raise it, run agentrun "
                   "as root (sudo), or drop --shm-size",
                   userns_room);
  if (o->ipc_limits && o->shm_size <= 0)
    o->shm_size = AR_AGENT_SHM_SIZE;
  return 0;
}
