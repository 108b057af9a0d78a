/* The "linux" object of config.json: namespaces, id mappings, time offsets,
 * devices, seccomp, personality and the plain strings. resources is in
 * parse_resources.c. */
#include "config.h"
#include "names.h"
#include "parse_internal.h"
#include "util.h"

static int
parse_namespace (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_namespace *ns = out;
  cleanup_free char *type = NULL;
  if (ar_json_str (c, o, "type", true, &type) < 0)
    return -1;
  int t = ar_ns_type_from_name (type);
  if (t < 0)
    return ar_jerr_at (c, "type", "unknown namespace type \"%s\"", type);
  ns->type = (enum ar_ns_type) t;
  return ar_json_str (c, o, "path", false, &ns->path);
}

/* {"monotonic": {"secs": N, "nanosecs": N}, ...} as an array. */
static int
parse_time_offsets (struct ar_jctx *c, yajl_val o, struct ar_linux *l)
{
  yajl_val v;
  int r = ar_json_member (c, o, "timeOffsets", yajl_t_object, &v);
  if (r <= 0)
    return r;
  size_t old = ar_jpath_key (c, "timeOffsets");
  l->time_offsets = xmalloc0 (v->u.object.len * sizeof *l->time_offsets);
  for (size_t i = 0; i < v->u.object.len && r >= 0; i++)
    {
      const char *clock = v->u.object.keys[i];
      yajl_val e = v->u.object.values[i];
      struct ar_time_offset *t = &l->time_offsets[i];
      l->n_time_offsets = i + 1;
      t->clock = xstrdup (clock);
      size_t old2 = ar_jpath_key (c, clock);
      for (size_t j = 0; j < i && r >= 0; j++)
        if (strcmp (l->time_offsets[j].clock, clock) == 0)
          r = ar_jerr (c, "duplicate key");
      if (r >= 0 && !YAJL_IS_OBJECT (e))
        r = ar_jerr (c, "expected an object, got %s", ar_json_type_name (e));
      if (r >= 0)
        r = get_i64 (c, e, "secs", false, &t->secs, NULL);
      if (r >= 0)
        r = get_u32 (c, e, "nanosecs", false, &t->nanosecs, NULL);
      ar_jpath_pop (c, old2);
    }
  ar_jpath_pop (c, old);
  return r < 0 ? -1 : 0;
}

static int
parse_device (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_device *d = out;
  cleanup_free char *type = NULL;
  bool has_major = false, has_minor = false;
  if (ar_json_str (c, o, "path", true, &d->path) < 0 || ar_json_str (c, o, "type", true, &type) < 0)
    return -1;
  if (strlen (type) != 1 || !strchr ("cbup", type[0]))
    return ar_jerr_at (c, "type", "unknown device type \"%s\" (c, b, u or p)", type);
  d->type = type[0];
  if (get_i64 (c, o, "major", false, &d->major, &has_major) < 0
      || get_i64 (c, o, "minor", false, &d->minor, &has_minor) < 0
      || get_u32 (c, o, "fileMode", false, &d->file_mode, &d->has_file_mode) < 0
      || get_u32 (c, o, "uid", false, &d->uid, &d->has_uid) < 0 || get_u32 (c, o, "gid", false, &d->gid, &d->has_gid) < 0)
    return -1;
  /* A fifo has no numbers; every other type needs both. */
  if (d->type != 'p' && !has_major)
    return ar_jerr_at (c, "major", "missing required field (device type %c)", d->type);
  if (d->type != 'p' && !has_minor)
    return ar_jerr_at (c, "minor", "missing required field (device type %c)", d->type);
  return 0;
}

static int
parse_seccomp_arg (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_seccomp_arg *a = out;
  cleanup_free char *op = NULL;
  if (get_u32 (c, o, "index", true, &a->index, NULL) < 0 || get_u64 (c, o, "value", true, &a->value, NULL) < 0
      || get_u64 (c, o, "valueTwo", false, &a->value_two, NULL) < 0 || ar_json_str (c, o, "op", true, &op) < 0)
    return -1;
  int i = ar_name_index (ar_seccomp_operators, op);
  if (i < 0)
    return ar_jerr_at (c, "op", "unknown operator \"%s\"", op);
  a->op = (enum ar_seccomp_op) i;
  return 0;
}

static int
parse_seccomp_rule (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_seccomp_rule *r = out;
  if (ar_json_strv (c, o, "names", true, &r->names, &r->n_names) < 0 || ar_json_str (c, o, "action", true, &r->action) < 0
      || get_u32 (c, o, "errnoRet", false, &r->errno_ret, &r->has_errno_ret) < 0
      || ar_json_objarray (c, o, "args", false, sizeof *r->args, parse_seccomp_arg, (void **) &r->args, &r->n_args) < 0)
    return -1;
  return 0;
}

static int
parse_seccomp (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_seccomp *s = out;
  if (ar_json_str (c, o, "defaultAction", true, &s->default_action) < 0
      || get_u32 (c, o, "defaultErrnoRet", false, &s->default_errno_ret, &s->has_default_errno_ret) < 0
      || ar_json_strv (c, o, "architectures", false, &s->architectures, &s->n_architectures) < 0
      || ar_json_strv (c, o, "flags", false, &s->flags, &s->n_flags) < 0
      || ar_json_str (c, o, "listenerPath", false, &s->listener_path) < 0
      || ar_json_str (c, o, "listenerMetadata", false, &s->listener_metadata) < 0
      || ar_json_objarray (c, o, "syscalls", false, sizeof *s->syscalls, parse_seccomp_rule, (void **) &s->syscalls,
                           &s->n_syscalls)
             < 0)
    return -1;
  return 0;
}

static int
parse_personality (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_personality *p = out;
  if (ar_json_str (c, o, "domain", true, &p->domain) < 0
      || ar_json_strv (c, o, "flags", false, &p->flags, &p->n_flags) < 0)
    return -1;
  return 0;
}

static int
parse_intel_rdt (struct ar_jctx *c, yajl_val o, void *out)
{
  char **clos = out;
  if (ar_json_str (c, o, "closID", false, clos) < 0)
    return -1;
  /* Any intelRdt setting asks for a confinement we do not apply: refuse. */
  return ar_jerr (c, "Intel RDT is not supported");
}

int
ar_parse_linux (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_linux *l = out;
  if (ar_json_objarray (c, o, "namespaces", false, sizeof *l->namespaces, parse_namespace, (void **) &l->namespaces,
                        &l->n_namespaces)
          < 0
      || ar_json_objarray (c, o, "uidMappings", false, sizeof (struct ar_idmap), ar_parse_idmap,
                           (void **) &l->uid_mappings, &l->n_uid_mappings)
             < 0
      || ar_json_objarray (c, o, "gidMappings", false, sizeof (struct ar_idmap), ar_parse_idmap,
                           (void **) &l->gid_mappings, &l->n_gid_mappings)
             < 0
      || parse_time_offsets (c, o, l) < 0
      || ar_json_objarray (c, o, "devices", false, sizeof *l->devices, parse_device, (void **) &l->devices, &l->n_devices)
             < 0
      || ar_json_str (c, o, "cgroupsPath", false, &l->cgroups_path) < 0
      || ar_json_object_alloc (c, o, "resources", false, sizeof *l->resources, ar_parse_resources, (void **) &l->resources)
             < 0
      || ar_json_str (c, o, "rootfsPropagation", false, &l->rootfs_propagation) < 0
      || ar_json_object_alloc (c, o, "seccomp", false, sizeof *l->seccomp, parse_seccomp, (void **) &l->seccomp) < 0
      || ar_json_kv (c, o, "sysctl", &l->sysctl, &l->n_sysctl) < 0
      || ar_json_strv (c, o, "maskedPaths", false, &l->masked_paths, &l->n_masked_paths) < 0
      || ar_json_strv (c, o, "readonlyPaths", false, &l->readonly_paths, &l->n_readonly_paths) < 0
      || ar_json_str (c, o, "mountLabel", false, &l->mount_label) < 0
      || ar_json_object_alloc (c, o, "personality", false, sizeof *l->personality, parse_personality,
                               (void **) &l->personality)
             < 0
      || ar_json_object (c, o, "intelRdt", false, parse_intel_rdt, &l->intel_rdt_clos_id) < 0)
    return -1;
  return 0;
}
