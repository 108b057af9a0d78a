/* linux.resources onto the hierarchy that carries each controller: on a
 * hybrid host memory goes to v1 while hugetlb (bound to cgroup2 here) goes
 * to the unified half. Nothing requested is skipped: a controller that is
 * missing is an error naming it. */
#include "config.h"
#include "cgroups_internal.h"
#include "log.h"
#include "util.h"

#include <inttypes.h>

static bool
memory_set (const struct ar_memory *m)
{
  return m->has_limit || m->has_reservation || m->has_swap || m->has_swappiness || m->has_disable_oom_killer
         || m->has_kernel_tcp || m->has_use_hierarchy;
}

static bool
cpu_set (const struct ar_cpu *c)
{
  return c->has_shares || c->has_quota || c->has_burst || c->has_period || c->has_realtime_runtime
         || c->has_realtime_period || c->has_idle;
}

static bool
blkio_set (const struct ar_blkio *b)
{
  return b->has_weight || b->has_leaf_weight || b->n_weight_device || b->n_throttle_read_bps || b->n_throttle_write_bps
         || b->n_throttle_read_iops || b->n_throttle_write_iops;
}

/* linux.resources as runc reads it: zero is "not asked" for the values that
 * have no meaningful zero (Docker sends cpu.shares 0, blockIO.weight 0,
 * memory.reservation 0 and cpu quota/period 0 when the user set none), and
 * disableOOMKiller false leaves the kernel's default. The copies share the
 * original's pointers. */
struct effective {
  struct ar_resources r;
  struct ar_memory m;
  struct ar_cpu c;
  struct ar_blkio b;
};

static const struct ar_resources *
effective (const struct ar_resources *in, struct effective *e)
{
  e->r = *in;
  e->r.has_pids_limit = in->has_pids_limit && in->pids_limit != 0;
  if (in->memory)
    {
      struct ar_memory *m = &e->m;
      *m = *in->memory;
      m->has_limit = m->has_limit && m->limit != 0;
      m->has_reservation = m->has_reservation && m->reservation != 0;
      m->has_swap = m->has_swap && m->swap != 0;
      m->has_kernel = m->has_kernel && m->kernel != 0;
      m->has_kernel_tcp = m->has_kernel_tcp && m->kernel_tcp != 0;
      m->has_disable_oom_killer = m->has_disable_oom_killer && m->disable_oom_killer;
      e->r.memory = m;
    }
  if (in->cpu)
    {
      struct ar_cpu *c = &e->c;
      *c = *in->cpu;
      c->has_shares = c->has_shares && c->shares != 0;
      c->has_quota = c->has_quota && c->quota != 0;
      c->has_period = c->has_period && c->period != 0;
      c->has_realtime_runtime = c->has_realtime_runtime && c->realtime_runtime != 0;
      c->has_realtime_period = c->has_realtime_period && c->realtime_period != 0;
      e->r.cpu = c;
    }
  if (in->block_io)
    {
      struct ar_blkio *b = &e->b;
      *b = *in->block_io;
      b->has_weight = b->has_weight && b->weight != 0;
      b->has_leaf_weight = b->has_leaf_weight && b->leaf_weight != 0;
      e->r.block_io = b;
    }
  return &e->r;
}

bool
ar_cg_resources_asked (const struct ar_resources *in)
{
  struct effective e;
  if (!in)
    return false;
  const struct ar_resources *r = effective (in, &e);
  return (r->memory && memory_set (r->memory))
         || (r->cpu && (cpu_set (r->cpu) || (r->cpu->cpus && *r->cpu->cpus) || (r->cpu->mems && *r->cpu->mems)))
         || r->has_pids_limit || (r->block_io && blkio_set (r->block_io)) || r->n_hugepage_limits || r->network
         || r->n_unified;
}

/* Resolve the controller and call the v1 or v2 writer with arg. */
static int
drive (const struct ar_cg_layout *l, const char *path, const char *c1, const char *c2, const void *arg,
       int (*f1) (const char *, const void *, ar_error **), int (*f2) (const char *, const void *, ar_error **),
       ar_error **err)
{
  struct ar_cg_target t;
  if (ar_cg_target (l, path, c1, c2, true, &t, err) < 0)
    return -1;
  int r = t.v2 ? f2 (t.dir, arg, err) : f1 (t.dir, arg, err);
  ar_cg_target_clear (&t);
  return r;
}

/* Adapters so one drive() serves every writer. */
#define ADAPT(name, type, call)                                                                                        \
  static int name (const char *dir, const void *a, ar_error **err)                                                     \
  {                                                                                                                    \
    const type *x = a;                                                                                                 \
    return call;                                                                                                       \
  }
ADAPT (mem1, struct ar_memory, ar_cg_v1_memory (dir, x, err))
ADAPT (mem2, struct ar_memory, ar_cg_v2_memory (dir, x, err))
ADAPT (cpu1, struct ar_cpu, ar_cg_v1_cpu (dir, x, err))
ADAPT (cpu2, struct ar_cpu, ar_cg_v2_cpu (dir, x, err))
ADAPT (cpuset1, struct ar_cpu, ar_cg_v1_cpuset (dir, x, err))
ADAPT (cpuset2, struct ar_cpu, ar_cg_v2_cpuset (dir, x, err))
ADAPT (pids1, int64_t, ar_cg_v1_pids (dir, *x, err))
ADAPT (pids2, int64_t, ar_cg_v2_pids (dir, *x, err))
ADAPT (blk1, struct ar_blkio, ar_cg_v1_blkio (dir, x, err))
ADAPT (blk2, struct ar_blkio, ar_cg_v2_io (dir, x, err))
ADAPT (huge1, struct ar_hugepage_limit, ar_cg_v1_hugetlb (dir, x, err))
ADAPT (huge2, struct ar_hugepage_limit, ar_cg_v2_hugetlb (dir, x, err))
ADAPT (classid1, uint32_t, ar_cg_writef (err, dir, "net_cls.classid", "%" PRIu32, *x))
ADAPT (prio1, struct ar_net_priority, ar_cg_writef (err, dir, "net_prio.ifpriomap", "%s %" PRIu32, x->name, x->priority))
#undef ADAPT

static int
apply_network (const struct ar_cg_layout *l, const char *path, const struct ar_network_res *n, ar_error **err)
{
  if (n->has_class_id && drive (l, path, "net_cls", NULL, &n->class_id, classid1, NULL, err) < 0)
    return -1;
  for (size_t i = 0; i < n->n_priorities; i++)
    if (drive (l, path, "net_prio", NULL, &n->priorities[i], prio1, NULL, err) < 0)
      return -1;
  return 0;
}

/* unified keys name their controller before the dot ("memory.high"):
 * enable it along the path first, so the file exists. */
static int
apply_unified (const struct ar_cg_layout *l, const char *path, const struct ar_resources *r, ar_error **err)
{
  if (!l->unified)
    return ar_err (err, 0, "cgroup: linux.resources.unified needs cgroup v2, and this host has cgroup v1 only");
  for (size_t i = 0; i < r->n_unified; i++)
    {
      const char *k = r->unified[i].key, *dot = strchr (k, '.');
      if (!dot || dot == k)
        continue;
      cleanup_free char *ctrl = strndup (k, dot - k);
      if (!ctrl)
        abort ();
      if (strcmp (ctrl, "cgroup") && ar_cg_v2_has (l->unified, ctrl) && ar_cg_v2_enable (l->unified, path, ctrl, err) < 0)
        return -1;
    }
  cleanup_free char *dir = ar_cg_dir (l->unified, path);
  return ar_cg_v2_unified (dir, r->unified, r->n_unified, err);
}

static int
apply_devices (const struct ar_cg_layout *l, const char *path, const struct ar_device_cgroup *d, size_t n, ar_error **err)
{
  const char *m = l->mode != AR_CG_V2 ? ar_cg_v1_mount (l, "devices") : NULL;
  const char *base = m ? m : l->unified;
  if (!base)
    return ar_err (err, 0, "cgroup: cannot confine devices: no v1 devices hierarchy and no cgroup2");
  cleanup_free char *dir = ar_cg_dir (base, path);
  return m ? ar_cg_v1_devices (dir, d, n, err) : ar_cg_ebpf_devices (dir, d, n, err);
}

static int
apply_resources (const struct ar_cg_layout *l, const char *path, const struct ar_resources *r, ar_error **err)
{
  if (r->memory)
    {
      if (r->memory->has_kernel)
        ar_warn ("linux.resources.memory.kernel is ignored: kernel memory limits are deprecated by the runtime-spec "
                 "and no longer enforced by Linux 6.x");
      if (memory_set (r->memory) && drive (l, path, "memory", "memory", r->memory, mem1, mem2, err) < 0)
        return -1;
    }
  if (r->cpu && cpu_set (r->cpu) && drive (l, path, "cpu", "cpu", r->cpu, cpu1, cpu2, err) < 0)
    return -1;
  if (r->cpu && ((r->cpu->cpus && *r->cpu->cpus) || (r->cpu->mems && *r->cpu->mems))
      && drive (l, path, "cpuset", "cpuset", r->cpu, cpuset1, cpuset2, err) < 0)
    return -1;
  if (r->has_pids_limit && drive (l, path, "pids", "pids", &r->pids_limit, pids1, pids2, err) < 0)
    return -1;
  if (r->block_io && blkio_set (r->block_io) && drive (l, path, "blkio", "io", r->block_io, blk1, blk2, err) < 0)
    return -1;
  for (size_t i = 0; i < r->n_hugepage_limits; i++)
    if (drive (l, path, "hugetlb", "hugetlb", &r->hugepage_limits[i], huge1, huge2, err) < 0)
      return -1;
  if (r->network && apply_network (l, path, r->network, err) < 0)
    return -1;
  if (r->n_unified && apply_unified (l, path, r, err) < 0)
    return -1;
  return 0;
}

int
ar_cg_apply (const struct ar_cg_layout *l, const char *path, const struct ar_resources *r,
             const struct ar_device_cgroup *devs, size_t n_devs, bool with_devices, ar_error **err)
{
  struct effective e;
  if (r && apply_resources (l, path, effective (r, &e), err) < 0)
    return -1;
  if (with_devices && apply_devices (l, path, devs, n_devs, err) < 0)
    return -1;
  return 0;
}
