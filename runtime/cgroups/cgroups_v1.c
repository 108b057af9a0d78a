/* cgroup v1 writers, one per controller. Each gets the controller's
 * directory for the container and writes only what the spec sets; a value
 * the kernel refuses is an error naming the file. */
#include "config.h"
#include "cgroups_internal.h"
#include "log.h"
#include "util.h"

#include <inttypes.h>

/* The value of a v1 file holding one integer ("-1" for none). */
static int
read_i64 (const char *dir, const char *file, int64_t *out, ar_error **err)
{
  cleanup_free char *s = NULL;
  char *end;
  if (ar_cg_read (dir, file, &s, err) < 0)
    return -1;
  errno = 0;
  *out = strtoll (s, &end, 10);
  if (end == s || *end || errno)
    return ar_err (err, 0, "cgroup: %s/%s: unexpected content \"%s\"", dir, file, s);
  return 0;
}

/* Memory limit and memory+swap limit must keep memsw >= limit at every
 * step. Swap goes first when it is lifted or grows past the limit in force
 * (then it is above the old limit, and the new limit is below it), else
 * the limit goes first (it is then below the old limit, so below memsw).
 * A limit of -1 with no swap asked lifts swap too, as runc does. */
static int
v1_limit_and_swap (const char *dir, const struct ar_memory *m, ar_error **err)
{
  bool memsw = ar_cg_exists (dir, "memory.memsw.limit_in_bytes");
  bool has_swap = m->has_swap || (m->has_limit && m->limit == -1 && memsw);
  int64_t swap = m->has_swap ? m->swap : -1;
  if (m->has_swap && !memsw)
    return ar_err (err, 0,
                   "cgroup: linux.resources.memory.swap: %s/memory.memsw.limit_in_bytes is missing "
                   "(swap accounting is off in this kernel)",
                   dir);
  bool swap_first = false;
  if (m->has_limit && has_swap)
    {
      int64_t cur;
      if (read_i64 (dir, "memory.limit_in_bytes", &cur, err) < 0)
        return -1;
      swap_first = swap == -1 || (cur >= 0 && cur < swap);
    }
  if (swap_first && ar_cg_writef (err, dir, "memory.memsw.limit_in_bytes", "%" PRId64, swap) < 0)
    return -1;
  if (m->has_limit && ar_cg_writef (err, dir, "memory.limit_in_bytes", "%" PRId64, m->limit) < 0)
    return -1;
  if (!swap_first && has_swap && ar_cg_writef (err, dir, "memory.memsw.limit_in_bytes", "%" PRId64, swap) < 0)
    return -1;
  return 0;
}

int
ar_cg_v1_memory (const char *dir, const struct ar_memory *m, ar_error **err)
{
  if (v1_limit_and_swap (dir, m, err) < 0)
    return -1;
  if (m->has_reservation && ar_cg_writef (err, dir, "memory.soft_limit_in_bytes", "%" PRId64, m->reservation) < 0)
    return -1;
  if (m->has_swappiness && ar_cg_writef (err, dir, "memory.swappiness", "%" PRIu64, m->swappiness) < 0)
    return -1;
  if (m->has_disable_oom_killer && ar_cg_write (dir, "memory.oom_control", m->disable_oom_killer ? "1" : "0", err) < 0)
    return -1;
  if (m->has_kernel_tcp && ar_cg_writef (err, dir, "memory.kmem.tcp.limit_in_bytes", "%" PRId64, m->kernel_tcp) < 0)
    return -1;
  if (m->has_use_hierarchy && ar_cg_write (dir, "memory.use_hierarchy", m->use_hierarchy ? "1" : "0", err) < 0)
    return -1;
  return 0;
}

/* Under a parent with a quota, the kernel refuses any step whose
 * quota/period ratio exceeds the parent's: of the two orders, take the one
 * whose halfway state (old quota, new period) or (new quota, old period)
 * asks for less CPU; no quota (-1) asks for none of the parent's checks. */
static int
quota_goes_first (const char *dir, const struct ar_cpu *c, bool *first, ar_error **err)
{
  int64_t q0, p0;
  if (read_i64 (dir, "cpu.cfs_quota_us", &q0, err) < 0 || read_i64 (dir, "cpu.cfs_period_us", &p0, err) < 0)
    return -1;
  if (q0 < 0 || p0 <= 0)
    *first = false;
  else if (c->quota < 0)
    *first = true;
  else /* q0/new_period against new_quota/p0, cross-multiplied */
    *first = (unsigned __int128) c->quota * c->period < (unsigned __int128) q0 * (uint64_t) p0;
  return 0;
}

int
ar_cg_v1_cpu (const char *dir, const struct ar_cpu *c, ar_error **err)
{
  if (c->has_shares && ar_cg_writef (err, dir, "cpu.shares", "%" PRIu64, c->shares) < 0)
    return -1;
  bool quota_first = false;
  if (c->has_period && c->has_quota && quota_goes_first (dir, c, &quota_first, err) < 0)
    return -1;
  if (quota_first && ar_cg_writef (err, dir, "cpu.cfs_quota_us", "%" PRId64, c->quota) < 0)
    return -1;
  if (c->has_period && ar_cg_writef (err, dir, "cpu.cfs_period_us", "%" PRIu64, c->period) < 0)
    return -1;
  if (c->has_quota && !quota_first && ar_cg_writef (err, dir, "cpu.cfs_quota_us", "%" PRId64, c->quota) < 0)
    return -1;
  if (c->has_burst && ar_cg_writef (err, dir, "cpu.cfs_burst_us", "%" PRIu64, c->burst) < 0)
    return -1;
  /* Likewise the rt period before the runtime. */
  if (c->has_realtime_period && ar_cg_writef (err, dir, "cpu.rt_period_us", "%" PRIu64, c->realtime_period) < 0)
    return -1;
  if (c->has_realtime_runtime && ar_cg_writef (err, dir, "cpu.rt_runtime_us", "%" PRId64, c->realtime_runtime) < 0)
    return -1;
  if (c->has_idle && ar_cg_writef (err, dir, "cpu.idle", "%" PRId64, c->idle) < 0)
    return -1;
  return 0;
}

int
ar_cg_v1_cpuset (const char *dir, const struct ar_cpu *c, ar_error **err)
{
  if (c->cpus && *c->cpus && ar_cg_write (dir, "cpuset.cpus", c->cpus, err) < 0)
    return -1;
  if (c->mems && *c->mems && ar_cg_write (dir, "cpuset.mems", c->mems, err) < 0)
    return -1;
  return 0;
}

int
ar_cg_v1_pids (const char *dir, int64_t limit, ar_error **err)
{
  /* runc's reading of the spec: zero or negative means no limit. */
  if (limit <= 0)
    return ar_cg_write (dir, "pids.max", "max", err);
  return ar_cg_writef (err, dir, "pids.max", "%" PRId64, limit);
}

/* blkio.weight is gone with CFQ; BFQ offers blkio.bfq.weight instead. */
static const char *
weight_file (const char *dir, bool device)
{
  if (ar_cg_exists (dir, device ? "blkio.weight_device" : "blkio.weight"))
    return device ? "blkio.weight_device" : "blkio.weight";
  return device ? "blkio.bfq.weight_device" : "blkio.bfq.weight";
}

static int
throttle (const char *dir, const char *file, const struct ar_throttle_device *t, size_t n, ar_error **err)
{
  for (size_t i = 0; i < n; i++)
    if (ar_cg_writef (err, dir, file, "%" PRId64 ":%" PRId64 " %" PRIu64, t[i].major, t[i].minor, t[i].rate) < 0)
      return -1;
  return 0;
}

int
ar_cg_v1_blkio (const char *dir, const struct ar_blkio *b, ar_error **err)
{
  if (b->has_weight && ar_cg_writef (err, dir, weight_file (dir, false), "%u", b->weight) < 0)
    return -1;
  if (b->has_leaf_weight && ar_cg_writef (err, dir, "blkio.leaf_weight", "%u", b->leaf_weight) < 0)
    return -1;
  for (size_t i = 0; i < b->n_weight_device; i++)
    {
      const struct ar_weight_device *w = &b->weight_device[i];
      /* a zero weight is "not set", as for the cgroup's own weight */
      if (w->has_weight && w->weight
          && ar_cg_writef (err, dir, weight_file (dir, true), "%" PRId64 ":%" PRId64 " %u", w->major, w->minor, w->weight)
                 < 0)
        return -1;
      if (w->has_leaf_weight && w->leaf_weight
          && ar_cg_writef (err, dir, "blkio.leaf_weight_device", "%" PRId64 ":%" PRId64 " %u", w->major, w->minor,
                           w->leaf_weight)
                 < 0)
        return -1;
    }
  if (throttle (dir, "blkio.throttle.read_bps_device", b->throttle_read_bps, b->n_throttle_read_bps, err) < 0
      || throttle (dir, "blkio.throttle.write_bps_device", b->throttle_write_bps, b->n_throttle_write_bps, err) < 0
      || throttle (dir, "blkio.throttle.read_iops_device", b->throttle_read_iops, b->n_throttle_read_iops, err) < 0
      || throttle (dir, "blkio.throttle.write_iops_device", b->throttle_write_iops, b->n_throttle_write_iops, err) < 0)
    return -1;
  return 0;
}

int
ar_cg_v1_hugetlb (const char *dir, const struct ar_hugepage_limit *h, ar_error **err)
{
  cleanup_free char *file = xasprintf ("hugetlb.%s.limit_in_bytes", h->page_size);
  return ar_cg_writef (err, dir, file, "%" PRIu64, h->limit);
}

/* v1 keeps an allow/deny list that each write edits. We start from "deny
 * everything" so the result does not depend on the parent (fail closed),
 * then replay the rules in order. */
int
ar_cg_v1_devices (const char *dir, const struct ar_device_cgroup *d, size_t n, ar_error **err)
{
  if (ar_cg_write (dir, "devices.deny", "a", err) < 0)
    return -1;
  for (size_t i = 0; i < n; i++)
    {
      char maj[24] = "*", min[24] = "*";
      if (d[i].has_major && d[i].major >= 0)
        snprintf (maj, sizeof maj, "%" PRId64, d[i].major);
      if (d[i].has_minor && d[i].minor >= 0)
        snprintf (min, sizeof min, "%" PRId64, d[i].minor);
      char type = d[i].type ? d[i].type : 'a';
      const char *acc = d[i].access && *d[i].access ? d[i].access : "rwm";
      if (type == 'a')
        { /* "a" takes no numbers in v1 */
          if (ar_cg_write (dir, d[i].allow ? "devices.allow" : "devices.deny", "a", err) < 0)
            return -1;
          continue;
        }
      if (ar_cg_writef (err, dir, d[i].allow ? "devices.allow" : "devices.deny", "%c %s:%s %s", type, maj, min, acc) < 0)
        return -1;
    }
  return 0;
}
