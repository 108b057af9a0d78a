/* cgroup v2 writers: the v1-shaped spec values converted the way the
 * runtime-spec and runc document (cpu shares to weight, blkio weight to
 * io.weight, memory+swap to swap alone). */
#include "config.h"
#include "cgroups_internal.h"
#include "log.h"
#include "util.h"

#include <inttypes.h>

uint64_t
ar_cg_shares_to_weight (uint64_t shares)
{
  /* [2, 262144] onto [1, 10000]; 0 means unset. */
  if (shares == 0)
    return 0;
  if (shares < 2)
    shares = 2;
  if (shares > 262144)
    shares = 262144;
  return 1 + ((shares - 2) * 9999) / 262142;
}

uint64_t
ar_cg_blkio_to_io_weight (uint64_t w)
{
  /* [10, 1000] onto [1, 10000]. */
  if (w == 0)
    return 0;
  if (w < 10)
    w = 10;
  if (w > 1000)
    w = 1000;
  return 1 + ((w - 10) * 9999) / 990;
}

int
ar_cg_v2_enable (const char *mnt, const char *path, const char *ctrl, ar_error **err)
{
  cleanup_free char *leaf = ar_cg_dir (mnt, path);
  if (ar_cg_v2_has (leaf, ctrl))
    return 0;
  cleanup_free char *cur = xstrdup (mnt);
  cleanup_free char *copy = xstrdup (path);
  cleanup_free char *plus = xasprintf ("+%s", ctrl);
  char *save = NULL;
  for (char *c = strtok_r (copy, "/", &save); c; c = strtok_r (NULL, "/", &save))
    {
      if (ar_cg_write (cur, "cgroup.subtree_control", plus, err) < 0)
        return -1;
      char *next = xasprintf ("%s/%s", cur, c);
      free (cur);
      cur = next;
    }
  return 0;
}

static int
write_max (const char *dir, const char *file, int64_t v, ar_error **err)
{
  if (v < 0)
    return ar_cg_write (dir, file, "max", err);
  return ar_cg_writef (err, dir, file, "%" PRId64, v);
}

/* OCI swap is memory+swap (v1 memsw); v2's memory.swap.max is swap alone. */
static int
swap_v2 (const struct ar_memory *m, int64_t *out, ar_error **err)
{
  int64_t limit = m->has_limit ? m->limit : 0;
  if (!m->has_swap || m->swap < 0)
    return *out = -1, 0;
  if (limit <= 0)
    return ar_err (err, 0, "cgroup: linux.resources.memory.swap needs memory.limit on cgroup v2");
  if (m->swap < limit)
    return ar_err (err, 0, "cgroup: linux.resources.memory.swap (%" PRId64 ") is below memory.limit (%" PRId64 ")",
                   m->swap, limit);
  return *out = m->swap - limit, 0;
}

int
ar_cg_v2_memory (const char *dir, const struct ar_memory *m, ar_error **err)
{
  if (m->has_swappiness)
    return ar_err (err, 0, "cgroup: linux.resources.memory.swappiness has no cgroup v2 equivalent");
  if (m->has_disable_oom_killer && m->disable_oom_killer)
    return ar_err (err, 0, "cgroup: linux.resources.memory.disableOOMKiller has no cgroup v2 equivalent");
  if (m->has_kernel_tcp)
    ar_warn ("linux.resources.memory.kernelTCP is ignored on cgroup v2 (no such limit)");
  /* A limit of -1 with no swap asked lifts swap too, as on v1. */
  if (m->has_swap || (m->has_limit && m->limit == -1 && ar_cg_exists (dir, "memory.swap.max")))
    {
      int64_t s;
      if (swap_v2 (m, &s, err) < 0)
        return -1;
      if (!ar_cg_exists (dir, "memory.swap.max"))
        return ar_err (err, 0,
                       "cgroup: linux.resources.memory.swap: %s/memory.swap.max is missing "
                       "(swap accounting is off)",
                       dir);
      if (write_max (dir, "memory.swap.max", s, err) < 0)
        return -1;
    }
  if (m->has_limit && write_max (dir, "memory.max", m->limit, err) < 0)
    return -1;
  if (m->has_reservation && write_max (dir, "memory.low", m->reservation, err) < 0)
    return -1;
  return 0;
}

/* cpu.max is "QUOTA PERIOD"; keep the half the update does not name. */
static int
cpu_max (const char *dir, const struct ar_cpu *c, ar_error **err)
{
  char quota[32] = "max";
  uint64_t period = 100000;
  cleanup_free char *cur = NULL;
  if (ar_cg_read (dir, "cpu.max", &cur, err) < 0)
    return -1;
  if (sscanf (cur, "%31s %" SCNu64, quota, &period) < 1)
    return ar_err (err, 0, "cgroup: %s/cpu.max: unexpected content \"%s\"", dir, cur);
  if (c->has_quota)
    {
      if (c->quota > 0)
        snprintf (quota, sizeof quota, "%" PRId64, c->quota);
      else
        strcpy (quota, "max");
    }
  if (c->has_period && c->period > 0)
    period = c->period;
  return ar_cg_writef (err, dir, "cpu.max", "%s %" PRIu64, quota, period);
}

int
ar_cg_v2_cpu (const char *dir, const struct ar_cpu *c, ar_error **err)
{
  if (c->has_realtime_runtime || c->has_realtime_period)
    return ar_err (err, 0, "cgroup: linux.resources.cpu.realtimeRuntime/realtimePeriod have no cgroup v2 equivalent");
  if (c->has_shares && c->shares
      && ar_cg_writef (err, dir, "cpu.weight", "%" PRIu64, ar_cg_shares_to_weight (c->shares)) < 0)
    return -1;
  if ((c->has_quota || c->has_period) && cpu_max (dir, c, err) < 0)
    return -1;
  if (c->has_burst && ar_cg_writef (err, dir, "cpu.max.burst", "%" PRIu64, c->burst) < 0)
    return -1;
  if (c->has_idle && ar_cg_writef (err, dir, "cpu.idle", "%" PRId64, c->idle) < 0)
    return -1;
  return 0;
}

int
ar_cg_v2_cpuset (const char *dir, const struct ar_cpu *c, ar_error **err)
{
  if (c->cpus && *c->cpus && ar_cg_write (dir, "cpuset.cpus", c->cpus, err) < 0)
    return -1;
  if (c->mems && *c->mems && ar_cg_write (dir, "cpuset.mems", c->mems, err) < 0)
    return -1;
  return 0;
}

int
ar_cg_v2_pids (const char *dir, int64_t limit, ar_error **err)
{
  return write_max (dir, "pids.max", limit <= 0 ? -1 : limit, err);
}

static int
io_max (const char *dir, const char *key, const struct ar_throttle_device *t, size_t n, ar_error **err)
{
  for (size_t i = 0; i < n; i++)
    if (ar_cg_writef (err, dir, "io.max", "%" PRId64 ":%" PRId64 " %s=%" PRIu64, t[i].major, t[i].minor, key, t[i].rate)
        < 0)
      return -1;
  return 0;
}

int
ar_cg_v2_io (const char *dir, const struct ar_blkio *b, ar_error **err)
{
  /* BFQ takes blkio's own scale; io.weight wants the converted one. */
  bool bfq = ar_cg_exists (dir, "io.bfq.weight");
  if (b->has_leaf_weight)
    return ar_err (err, 0, "cgroup: linux.resources.blockIO.leafWeight has no cgroup v2 equivalent");
  if (b->has_weight)
    {
      int r = bfq ? ar_cg_writef (err, dir, "io.bfq.weight", "%u", b->weight)
                  : ar_cg_writef (err, dir, "io.weight", "%" PRIu64, ar_cg_blkio_to_io_weight (b->weight));
      if (r < 0)
        return -1;
    }
  for (size_t i = 0; i < b->n_weight_device; i++)
    {
      const struct ar_weight_device *w = &b->weight_device[i];
      if (w->has_leaf_weight)
        return ar_err (err, 0,
                       "cgroup: linux.resources.blockIO.weightDevice[%zu].leafWeight has no cgroup v2 equivalent", i);
      if (!w->has_weight || !w->weight)
        continue;
      int r = bfq ? ar_cg_writef (err, dir, "io.bfq.weight", "%" PRId64 ":%" PRId64 " %u", w->major, w->minor, w->weight)
                  : ar_cg_writef (err, dir, "io.weight", "%" PRId64 ":%" PRId64 " %" PRIu64, w->major, w->minor,
                                  ar_cg_blkio_to_io_weight (w->weight));
      if (r < 0)
        return -1;
    }
  if (io_max (dir, "rbps", b->throttle_read_bps, b->n_throttle_read_bps, err) < 0
      || io_max (dir, "wbps", b->throttle_write_bps, b->n_throttle_write_bps, err) < 0
      || io_max (dir, "riops", b->throttle_read_iops, b->n_throttle_read_iops, err) < 0
      || io_max (dir, "wiops", b->throttle_write_iops, b->n_throttle_write_iops, err) < 0)
    return -1;
  return 0;
}

int
ar_cg_v2_hugetlb (const char *dir, const struct ar_hugepage_limit *h, ar_error **err)
{
  cleanup_free char *file = xasprintf ("hugetlb.%s.max", h->page_size);
  return ar_cg_writef (err, dir, file, "%" PRIu64, h->limit);
}

/* linux.resources.unified: file name to value, written as given. Names are
 * plain files of this cgroup: no path, no dot files, and not the files that
 * move processes or reshape the tree (that is the runtime's job). */
int
ar_cg_v2_unified (const char *dir, const struct ar_kv *kv, size_t n, ar_error **err)
{
  static const char *const refused[] = { "cgroup.procs", "cgroup.threads", "cgroup.subtree_control",
                                         "cgroup.type",  "cgroup.kill",    "cgroup.freeze" };
  for (size_t i = 0; i < n; i++)
    {
      const char *k = kv[i].key;
      if (!*k || strchr (k, '/') || k[0] == '.')
        return ar_err (err, 0, "cgroup: linux.resources.unified: \"%s\" is not a cgroup file name", k);
      for (size_t j = 0; j < ARRAY_SIZE (refused); j++)
        if (strcmp (k, refused[j]) == 0)
          return ar_err (err, 0, "cgroup: linux.resources.unified: \"%s\" is managed by the runtime", k);
      if (!ar_cg_exists (dir, k))
        return ar_err (err, ENOENT,
                       "cgroup: invalid configuration: linux.resources.unified.%s: %s/%s (controller not enabled?)", k,
                       dir, k);
      if (ar_cg_write (dir, k, kv[i].value ? kv[i].value : "", err) < 0)
        return -1;
    }
  return 0;
}
