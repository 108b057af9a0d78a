/* linux.resources: the cgroup settings. Only types and ranges here; whether
 * a controller exists on this host is the cgroup code's question. */
#include "config.h"
#include "parse_internal.h"
#include "spec.h"
#include "util.h"

/* A device rule's access is a set: r, w and m in any order, repeats
 * allowed, written back as "rwm"'s subset in that order (the form v1's
 * devices.allow and the eBPF filter both take). runc also takes letters
 * outside the set and drops them; we take only 'a' of those (runc's own
 * tests write "rwa"), and read it toward confinement: in a deny rule it
 * denies every access, in an allow rule it grants nothing more. */
static int
device_access_set (const char *acc, bool allow, char out[4])
{
  bool r = false, w = false, m = false;
  for (const char *p = acc; *p; p++)
    switch (*p)
      {
      case 'r': r = true; break;
      case 'w': w = true; break;
      case 'm': m = true; break;
      case 'a':
        if (!allow)
          r = w = m = true;
        break;
      default: return -1;
      }
  char *o = out;
  if (r)
    *o++ = 'r';
  if (w)
    *o++ = 'w';
  if (m)
    *o++ = 'm';
  *o = '\0';
  return 0;
}

static int
parse_device_cgroup (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_device_cgroup *d = out;
  cleanup_free char *type = NULL;
  if (ar_json_bool (c, o, "allow", true, &d->allow, NULL) < 0 || ar_json_str (c, o, "type", false, &type) < 0
      || get_i64 (c, o, "major", false, &d->major, &d->has_major) < 0
      || get_i64 (c, o, "minor", false, &d->minor, &d->has_minor) < 0
      || ar_json_str (c, o, "access", false, &d->access) < 0)
    return -1;
  d->type = 'a';
  if (type)
    {
      if (strlen (type) != 1 || !strchr ("abc", type[0]))
        return ar_jerr_at (c, "type", "unknown device type \"%s\" (a, b or c)", type);
      d->type = type[0];
    }
  if (d->access && *d->access)
    {
      char set[4];
      if (device_access_set (d->access, d->allow, set) < 0)
        return ar_jerr_at (c, "access", "\"%s\" is not a combination of r, w and m", d->access);
      if (!*set)
        return ar_jerr_at (c, "access", "\"%s\" allows nothing (a combination of r, w and m)", d->access);
      free (d->access);
      d->access = xstrdup (set);
    }
  return 0;
}

static int
parse_memory (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_memory *m = out;
  if (get_i64 (c, o, "limit", false, &m->limit, &m->has_limit) < 0
      || get_i64 (c, o, "reservation", false, &m->reservation, &m->has_reservation) < 0
      || get_i64 (c, o, "swap", false, &m->swap, &m->has_swap) < 0
      || get_i64 (c, o, "kernel", false, &m->kernel, &m->has_kernel) < 0
      || get_i64 (c, o, "kernelTCP", false, &m->kernel_tcp, &m->has_kernel_tcp) < 0
      || ar_json_uint (c, o, "swappiness", false, 100, &m->swappiness, &m->has_swappiness) < 0
      || ar_json_bool (c, o, "disableOOMKiller", false, &m->disable_oom_killer, &m->has_disable_oom_killer) < 0
      || ar_json_bool (c, o, "useHierarchy", false, &m->use_hierarchy, &m->has_use_hierarchy) < 0
      || ar_json_bool (c, o, "checkBeforeUpdate", false, &m->check_before_update, &m->has_check_before_update) < 0)
    return -1;
  return 0;
}

static int
parse_cpu (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_cpu *p = out;
  if (get_u64 (c, o, "shares", false, &p->shares, &p->has_shares) < 0
      || get_i64 (c, o, "quota", false, &p->quota, &p->has_quota) < 0
      || get_u64 (c, o, "burst", false, &p->burst, &p->has_burst) < 0
      || get_u64 (c, o, "period", false, &p->period, &p->has_period) < 0
      || get_i64 (c, o, "realtimeRuntime", false, &p->realtime_runtime, &p->has_realtime_runtime) < 0
      || get_u64 (c, o, "realtimePeriod", false, &p->realtime_period, &p->has_realtime_period) < 0
      || ar_json_str (c, o, "cpus", false, &p->cpus) < 0 || ar_json_str (c, o, "mems", false, &p->mems) < 0
      || get_i64 (c, o, "idle", false, &p->idle, &p->has_idle) < 0)
    return -1;
  return 0;
}

static int
parse_pids (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_resources *r = out;
  r->has_pids_limit = true;
  return get_i64 (c, o, "limit", true, &r->pids_limit, NULL);
}

static int
parse_weight_device (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_weight_device *w = out;
  if (get_i64 (c, o, "major", true, &w->major, NULL) < 0 || get_i64 (c, o, "minor", true, &w->minor, NULL) < 0
      || get_u16 (c, o, "weight", &w->weight, &w->has_weight) < 0
      || get_u16 (c, o, "leafWeight", &w->leaf_weight, &w->has_leaf_weight) < 0)
    return -1;
  return 0;
}

static int
parse_throttle_device (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_throttle_device *t = out;
  if (get_i64 (c, o, "major", true, &t->major, NULL) < 0 || get_i64 (c, o, "minor", true, &t->minor, NULL) < 0
      || get_u64 (c, o, "rate", true, &t->rate, NULL) < 0)
    return -1;
  return 0;
}

static int
parse_blkio (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_blkio *b = out;
  size_t sz = sizeof (struct ar_throttle_device);
  if (get_u16 (c, o, "weight", &b->weight, &b->has_weight) < 0
      || get_u16 (c, o, "leafWeight", &b->leaf_weight, &b->has_leaf_weight) < 0
      || ar_json_objarray (c, o, "weightDevice", false, sizeof *b->weight_device, parse_weight_device,
                           (void **) &b->weight_device, &b->n_weight_device)
             < 0
      || ar_json_objarray (c, o, "throttleReadBpsDevice", false, sz, parse_throttle_device,
                           (void **) &b->throttle_read_bps, &b->n_throttle_read_bps)
             < 0
      || ar_json_objarray (c, o, "throttleWriteBpsDevice", false, sz, parse_throttle_device,
                           (void **) &b->throttle_write_bps, &b->n_throttle_write_bps)
             < 0
      || ar_json_objarray (c, o, "throttleReadIOPSDevice", false, sz, parse_throttle_device,
                           (void **) &b->throttle_read_iops, &b->n_throttle_read_iops)
             < 0
      || ar_json_objarray (c, o, "throttleWriteIOPSDevice", false, sz, parse_throttle_device,
                           (void **) &b->throttle_write_iops, &b->n_throttle_write_iops)
             < 0)
    return -1;
  return 0;
}

static int
parse_hugepage (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_hugepage_limit *h = out;
  if (ar_json_str (c, o, "pageSize", true, &h->page_size) < 0 || get_u64 (c, o, "limit", true, &h->limit, NULL) < 0)
    return -1;
  return 0;
}

static int
parse_net_priority (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_net_priority *p = out;
  if (ar_json_str (c, o, "name", true, &p->name) < 0 || get_u32 (c, o, "priority", true, &p->priority, NULL) < 0)
    return -1;
  return 0;
}

static int
parse_network (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_network_res *n = out;
  if (get_u32 (c, o, "classID", false, &n->class_id, &n->has_class_id) < 0
      || ar_json_objarray (c, o, "priorities", false, sizeof *n->priorities, parse_net_priority,
                           (void **) &n->priorities, &n->n_priorities)
             < 0)
    return -1;
  return 0;
}

int
ar_parse_resources (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_resources *r = out;
  if (ar_json_objarray (c, o, "devices", false, sizeof *r->devices, parse_device_cgroup, (void **) &r->devices,
                        &r->n_devices)
          < 0
      || ar_json_object_alloc (c, o, "memory", false, sizeof *r->memory, parse_memory, (void **) &r->memory) < 0
      || ar_json_object_alloc (c, o, "cpu", false, sizeof *r->cpu, parse_cpu, (void **) &r->cpu) < 0
      || ar_json_object (c, o, "pids", false, parse_pids, r) < 0
      || ar_json_object_alloc (c, o, "blockIO", false, sizeof *r->block_io, parse_blkio, (void **) &r->block_io) < 0
      || ar_json_objarray (c, o, "hugepageLimits", false, sizeof *r->hugepage_limits, parse_hugepage,
                           (void **) &r->hugepage_limits, &r->n_hugepage_limits)
             < 0
      || ar_json_object_alloc (c, o, "network", false, sizeof *r->network, parse_network, (void **) &r->network) < 0
      || ar_json_kv (c, o, "unified", &r->unified, &r->n_unified) < 0)
    return -1;
  return 0;
}

int
ar_resources_parse (const char *buf, size_t len, const char *label, struct ar_resources *out, ar_error **err)
{
  yajl_val root = NULL;
  if (ar_json_parse (buf, len, label, &root, err) < 0)
    return -1;
  struct ar_jctx c;
  ar_jctx_init (&c, label, err);
  int ret = ar_parse_resources (&c, root, out);
  ar_json_tree_free (root);
  return ret;
}
