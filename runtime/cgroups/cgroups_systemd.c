/* --systemd-cgroup: the container's cgroup is a transient scope that
 * systemd creates and owns, named by linux.cgroupsPath "slice:prefix:name"
 * ("prefix-name.scope" in the slice). We ask for it over the system bus
 * (Manager.StartTransientUnit with the init's pid, Delegate=yes and the
 * limits systemd can express), wait for its job (JobRemoved), and read the
 * scope's cgroup (ControlGroup); cgroups.c then writes every limit into the
 * scope's files itself, as with cgroupfs, so nothing systemd cannot express
 * is dropped. delete stops the unit (StopUnit). */
#include "config.h"
#include "cgroups.h"
#include "cgroups_internal.h"
#include "dbus.h"
#include "log.h"
#include "util.h"

#include <sys/stat.h>

#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"
#define TIMEOUT_MS 25000 /* the D-Bus reference implementation's default */

static bool
unit_chars_ok (const char *s, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (!(s[i] >= 'a' && s[i] <= 'z') && !(s[i] >= 'A' && s[i] <= 'Z') && !(s[i] >= '0' && s[i] <= '9')
        && !strchr ("-_.@\\", s[i]))
      return false;
  return true;
}

/* slice must end in ".slice" (or be empty: system.slice); prefix and name
 * must be non-empty and hold only what systemd allows in a unit name.
 * No cgroupsPath: system.slice, agentrun-<id>.scope. */
static int
parse_path (const char *id, const struct ar_linux *lnx, char **slice, char **unit, ar_error **err)
{
  const char *p = lnx && lnx->cgroups_path && *lnx->cgroups_path ? lnx->cgroups_path : NULL;
  if (!p)
    {
      *slice = xstrdup ("system.slice");
      *unit = xasprintf ("agentrun-%s.scope", id);
      return 0;
    }
  const char *c1 = strchr (p, ':'), *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
  if (!c1 || !c2 || strchr (c2 + 1, ':') || strchr (p, '/'))
    return ar_err (err, 0, "systemd cgroup manager: linux.cgroupsPath \"%s\" is not \"slice:prefix:name\"", p);
  size_t sl = c1 - p;
  if (sl && (sl < 7 || strncmp (c1 - 6, ".slice", 6) != 0))
    return ar_err (err, 0, "systemd cgroup manager: linux.cgroupsPath \"%s\": the slice must end in \".slice\"", p);
  if (c2 == c1 + 1 || !c2[1])
    return ar_err (err, 0, "systemd cgroup manager: linux.cgroupsPath \"%s\": prefix and name must not be empty", p);
  if (!unit_chars_ok (p, sl) || !unit_chars_ok (c1 + 1, c2 - c1 - 1) || !unit_chars_ok (c2 + 1, strlen (c2 + 1))
      || strlen (p) > 200)
    return ar_err (err, 0,
                   "systemd cgroup manager: linux.cgroupsPath \"%s\": a unit name holds only letters, digits "
                   "and \"-_.@\\\" (at most 200)",
                   p);
  *slice = sl ? xasprintf ("%.*s", (int) sl, p) : xstrdup ("system.slice");
  *unit = xasprintf ("%.*s-%s.scope", (int) (c2 - c1 - 1), c1 + 1, c2 + 1);
  return 0;
}

/* ---- the StartTransientUnit body ---- */

static void
prop_open (struct ar_dbus_buf *b, const char *name, const char *type)
{
  ar_dbus_put_align (b, 8);
  ar_dbus_put_str (b, name);
  ar_dbus_put_sig (b, type);
}

static void
prop_t (struct ar_dbus_buf *b, const char *name, uint64_t v)
{
  prop_open (b, name, "t");
  ar_dbus_put_u64 (b, v);
}

static void
prop_b (struct ar_dbus_buf *b, const char *name, bool v)
{
  prop_open (b, name, "b");
  ar_dbus_put_bool (b, v);
}

static void
prop_s (struct ar_dbus_buf *b, const char *name, const char *v)
{
  prop_open (b, name, "s");
  ar_dbus_put_str (b, v);
}

/* The limits systemd has properties for; the rest (and these again) are
 * written to the scope's files afterwards. */
static void
put_limits (struct ar_dbus_buf *b, const struct ar_resources *r)
{
  if (!r)
    return;
  if (r->memory && r->memory->has_limit && r->memory->limit > 0)
    prop_t (b, "MemoryMax", (uint64_t) r->memory->limit);
  if (r->memory && r->memory->has_reservation && r->memory->reservation > 0)
    prop_t (b, "MemoryLow", (uint64_t) r->memory->reservation);
  if (r->has_pids_limit)
    prop_t (b, "TasksMax", r->pids_limit > 0 ? (uint64_t) r->pids_limit : UINT64_MAX);
  const struct ar_cpu *c = r->cpu;
  if (c && c->has_shares && c->shares)
    prop_t (b, "CPUWeight", ar_cg_shares_to_weight (c->shares));
  uint64_t period = c && c->has_period && c->period ? c->period : 100000;
  if (c && c->has_period && c->period)
    prop_t (b, "CPUQuotaPeriodUSec", period);
  if (c && c->has_quota && c->quota > 0)
    prop_t (b, "CPUQuotaPerSecUSec", (uint64_t) c->quota * 1000000 / period);
}

static void
start_body (struct ar_dbus_buf *b, const char *id, const char *unit, const char *slice, pid_t pid,
            const struct ar_resources *r)
{
  ar_dbus_put_str (b, unit);
  ar_dbus_put_str (b, "fail");
  struct ar_dbus_arr props = ar_dbus_array_open (b, 8);
  cleanup_free char *desc = xasprintf ("agentrun container %s", id);
  prop_s (b, "Description", desc);
  prop_s (b, "Slice", slice);
  prop_b (b, "Delegate", true);
  prop_b (b, "DefaultDependencies", false);
  prop_open (b, "PIDs", "au");
  struct ar_dbus_arr pids = ar_dbus_array_open (b, 4);
  ar_dbus_put_u32 (b, (uint32_t) pid);
  ar_dbus_array_close (b, pids);
  put_limits (b, r);
  ar_dbus_array_close (b, props);
  struct ar_dbus_arr aux = ar_dbus_array_open (b, 8);
  ar_dbus_array_close (b, aux);
}

/* ---- talking to the Manager ---- */

struct job_wait {
  const char *unit;
  bool done;
  char result[32];
};

/* JobRemoved(u id, o job, s unit, s result) for our unit. Matched on the
 * unit, not the job path: the signal may come before the call's reply. */
static int
on_signal (const struct ar_dbus_msg *m, void *data)
{
  struct job_wait *w = data;
  const char *job, *unit, *result;
  uint32_t jid;
  struct ar_dbus_rd r;
  if (!m->member || strcmp (m->member, "JobRemoved") != 0 || !m->iface || strcmp (m->iface, SD_MANAGER) != 0
      || strcmp (m->sig, "uoss") != 0)
    return 0;
  ar_dbus_rd_init (&r, m);
  if (ar_dbus_get_u32 (&r, &jid, NULL) < 0 || ar_dbus_get_str (&r, &job, NULL) < 0
      || ar_dbus_get_str (&r, &unit, NULL) < 0 || ar_dbus_get_str (&r, &result, NULL) < 0 || strcmp (unit, w->unit) != 0)
    return 0;
  snprintf (w->result, sizeof w->result, "%s", result);
  w->done = true;
  return 1;
}

/* Connect, and ask for the Manager's signals (AddMatch at the bus, then
 * Subscribe: systemd sends job signals only to subscribers). */
static int
open_manager (struct ar_dbus **d, ar_error **err)
{
  struct ar_dbus_buf b = { 0 };
  struct ar_dbus_reply r = { 0 };
  if (ar_dbus_open_system (d, TIMEOUT_MS, err) < 0)
    return -1;
  ar_dbus_put_str (&b, "type='signal',sender='" SD_DEST "',interface='" SD_MANAGER "',member='JobRemoved'");
  int ret = ar_dbus_call (*d, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "AddMatch", "s",
                          &b, &r, NULL, NULL, err);
  ar_dbus_reply_clear (&r);
  ar_dbus_buf_free (&b);
  if (ret == 0)
    ret = ar_dbus_call (*d, SD_DEST, SD_PATH, SD_MANAGER, "Subscribe", NULL, NULL, &r, NULL, NULL, err);
  ar_dbus_reply_clear (&r);
  if (ret < 0)
    {
      ar_dbus_close (*d);
      *d = NULL;
    }
  return ret;
}

/* Wait for the unit's job to finish; "done" is success. */
static int
wait_job (struct ar_dbus *d, struct job_wait *w, ar_error **err)
{
  if (!w->done && ar_dbus_wait (d, on_signal, w, err) < 0)
    return ar_err_prefix (err, "waiting for the job of %s", w->unit);
  if (strcmp (w->result, "done") != 0)
    return ar_err (err, 0, "the job of %s finished with result \"%s\"", w->unit, w->result);
  return 0;
}

/* A call whose reply is one value of type sig1 (a string or object path). */
static int
call_str (struct ar_dbus *d, const char *path, const char *iface, const char *member, const char *sig,
          const struct ar_dbus_buf *body, char **out, ar_error **err)
{
  struct ar_dbus_reply r = { 0 };
  const char *s = NULL, *inner;
  struct ar_dbus_rd rd;
  int ret = ar_dbus_call (d, SD_DEST, path, iface, member, sig, body, &r, NULL, NULL, err);
  if (ret == 0)
    {
      ar_dbus_rd_init (&rd, &r.msg);
      if (strcmp (r.msg.sig, "o") == 0 || strcmp (r.msg.sig, "s") == 0)
        ret = ar_dbus_get_str (&rd, &s, err);
      else if (strcmp (r.msg.sig, "v") == 0 && ar_dbus_get_sig (&rd, &inner, err) == 0 && strcmp (inner, "s") == 0)
        ret = ar_dbus_get_str (&rd, &s, err);
      else
        ret = ar_err (err, 0, "%s: unexpected reply signature \"%.40s\"", member, r.msg.sig);
    }
  if (ret == 0)
    *out = xstrdup (s);
  ar_dbus_reply_clear (&r);
  return ret;
}

/* The scope's cgroup, as systemd names it: relative to each hierarchy's
 * root ("/system.slice/x.scope"). It must be one we can use as a path. */
static int
scope_cgroup (struct ar_dbus *d, const char *unit, char **out, ar_error **err)
{
  struct ar_dbus_buf b = { 0 };
  cleanup_free char *obj = NULL;
  ar_dbus_put_str (&b, unit);
  int ret = call_str (d, SD_PATH, SD_MANAGER, "GetUnit", "s", &b, &obj, err);
  b.len = 0;
  if (ret == 0)
    {
      ar_dbus_put_str (&b, "org.freedesktop.systemd1.Scope");
      ar_dbus_put_str (&b, "ControlGroup");
      ret = call_str (d, obj, "org.freedesktop.DBus.Properties", "Get", "ss", &b, out, err);
    }
  ar_dbus_buf_free (&b);
  if (ret < 0)
    return -1;
  bool bad = (*out)[0] != '/' || !(*out)[1] || strstr (*out, "/../") || strstr (*out, "/./") || strlen (*out) > 1024;
  for (const char *c = *out; *c && !bad; c++)
    bad = (unsigned char) *c < 0x20 || strcmp (c, "/..") == 0 || strcmp (c, "/.") == 0;
  if (bad)
    {
      ret = ar_err (err, 0, "ControlGroup of %s: \"%.100s\" is not a usable cgroup path", unit, *out);
      free (*out);
      *out = NULL;
    }
  return ret;
}

static int
stop_unit (struct ar_dbus *d, const char *unit, ar_error **err)
{
  struct ar_dbus_buf b = { 0 };
  struct ar_dbus_reply r = { 0 };
  struct job_wait w = { .unit = unit };
  ar_dbus_put_str (&b, unit);
  ar_dbus_put_str (&b, "replace");
  int ret = ar_dbus_call (d, SD_DEST, SD_PATH, SD_MANAGER, "StopUnit", "ss", &b, &r, on_signal, &w, err);
  ar_dbus_buf_free (&b);
  /* Gone already: systemd collects a scope once its last process exits. */
  if (ret < 0 && r.buf && r.msg.error_name && strcmp (r.msg.error_name, "org.freedesktop.systemd1.NoSuchUnit") == 0)
    {
      if (err)
        ar_error_freep (err);
      ar_dbus_reply_clear (&r);
      return 0;
    }
  ar_dbus_reply_clear (&r);
  if (ret < 0)
    return -1;
  return wait_job (d, &w, err);
}

static int
start_scope (struct ar_dbus *d, const char *id, const char *unit, const char *slice, pid_t pid,
             const struct ar_resources *res, char **path_out, ar_error **err)
{
  struct ar_dbus_buf b = { 0 };
  struct ar_dbus_reply r = { 0 };
  struct job_wait w = { .unit = unit };
  start_body (&b, id, unit, slice, pid, res);
  int ret = ar_dbus_call (d, SD_DEST, SD_PATH, SD_MANAGER, "StartTransientUnit", "ssa(sv)a(sa(sv))", &b, &r, on_signal,
                          &w, err);
  ar_dbus_buf_free (&b);
  ar_dbus_reply_clear (&r);
  if (ret < 0)
    return -1;
  if (wait_job (d, &w, err) < 0 || scope_cgroup (d, unit, path_out, err) < 0)
    {
      stop_unit (d, unit, NULL);
      return -1;
    }
  return 0;
}

/* Without a bus address in the environment, systemd's bus is there only
 * when systemd runs (sd_booted()'s test: it makes this folder as PID 1). */
static int
check_systemd (ar_error **err)
{
  struct stat st;
  const char *addr = getenv ("DBUS_SYSTEM_BUS_ADDRESS");
  if ((addr && *addr) || (lstat ("/run/systemd/system", &st) == 0 && S_ISDIR (st.st_mode)))
    return 0;
  return ar_err (err, 0,
                 "systemd cgroup manager: systemd is not running as PID 1 (/run/systemd/system missing) and "
                 "DBUS_SYSTEM_BUS_ADDRESS is not set; use --cgroup-manager cgroupfs");
}

int
ar_cg_systemd_create (const char *id, const struct ar_linux *lnx, pid_t pid, char **path_out, char **unit_out,
                      ar_error **err)
{
  cleanup_free char *slice = NULL, *unit = NULL;
  struct ar_dbus *d = NULL;
  *path_out = NULL;
  *unit_out = NULL;
  if (parse_path (id, lnx, &slice, &unit, err) < 0 || check_systemd (err) < 0)
    return -1;
  if (open_manager (&d, err) < 0 || start_scope (d, id, unit, slice, pid, lnx ? lnx->resources : NULL, path_out, err) < 0)
    {
      ar_dbus_close (d);
      return ar_err_prefix (err, "systemd cgroup manager: %s", unit);
    }
  ar_dbus_close (d);
  ar_debug ("systemd: scope %s in %s, cgroup %s", unit, slice, *path_out);
  *unit_out = ar_steal_ptr (unit);
  return 0;
}

int
ar_cg_systemd_unit (const char *id, const struct ar_linux *lnx, char **unit, ar_error **err)
{
  cleanup_free char *slice = NULL;
  return parse_path (id, lnx, &slice, unit, err);
}

int
ar_cg_systemd_lookup (const char *unit, char **path, ar_error **err)
{
  struct ar_dbus *d = NULL;
  cleanup_error ar_error *e = NULL;
  *path = NULL;
  if (open_manager (&d, err) < 0)
    return ar_err_prefix (err, "systemd cgroup manager: look up %s", unit);
  int ret = scope_cgroup (d, unit, path, &e);
  ar_dbus_close (d);
  if (ret < 0 && !strstr (e->msg, "org.freedesktop.systemd1.NoSuchUnit"))
    {
      if (err && !*err)
        *err = ar_steal_ptr (e);
      return ar_err_prefix (err, "systemd cgroup manager: look up %s", unit);
    }
  return 0;
}

int
ar_cgroup_systemd_stop (const char *unit, ar_error **err)
{
  struct ar_dbus *d = NULL;
  if (!unit)
    return 0;
  int ret = open_manager (&d, err) < 0 ? -1 : stop_unit (d, unit, err);
  ar_dbus_close (d);
  return ret < 0 ? ar_err_prefix (err, "systemd cgroup manager: stop %s", unit) : 0;
}
