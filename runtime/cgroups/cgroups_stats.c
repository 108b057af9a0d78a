/* `events` statistics in runc's JSON shape ({"type":"stats","id":..,
 * "data":{"cpu","memory","pids","blkio","hugetlb"}}), read from whichever
 * hierarchy carries each controller. Statistics are a report, not a
 * confinement step: a controller that is not there leaves its part out. */
#include "config.h"
#include "cgroups.h"
#include "cgroups_internal.h"
#include "jsongen.h"
#include "util.h"

#include <dirent.h>
#include <inttypes.h>

static void
kv_u64 (struct ar_gen *g, const char *k, uint64_t v)
{
  ar_gen_str (g, k);
  ar_gen_u64 (g, v);
}

/* A number file; "max" reads as 0 (no limit), as runc prints it. */
static uint64_t
num (const char *dir, const char *file)
{
  cleanup_free char *s = NULL;
  if (ar_cg_read (dir, file, &s, NULL) < 0)
    return 0;
  return strtoull (s, NULL, 10);
}

/* "key value" per line (memory.stat, cpu.stat, memory.events, ...). */
static uint64_t
field (const char *dir, const char *file, const char *k)
{
  cleanup_free char *s = NULL;
  if (ar_cg_read (dir, file, &s, NULL) < 0)
    return 0;
  size_t n = strlen (k);
  for (char *l = s; l; l = strchr (l, '\n'), l = l ? l + 1 : NULL)
    if (strncmp (l, k, n) == 0 && l[n] == ' ')
      return strtoull (l + n + 1, NULL, 10);
  return 0;
}

static void
raw_map (struct ar_gen *g, const char *dir, const char *file)
{
  cleanup_free char *s = NULL;
  ar_gen_str (g, "raw");
  ar_gen_map_open (g);
  if (ar_cg_read (dir, file, &s, NULL) == 0)
    for (char *save = NULL, *l = strtok_r (s, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
      {
        char *sp = strchr (l, ' ');
        if (!sp)
          continue;
        *sp = '\0';
        kv_u64 (g, l, strtoull (sp + 1, NULL, 10));
      }
  ar_gen_map_close (g);
}

static void
cpu_stats (struct ar_gen *g, const char *dir, bool v2, const char *acct)
{
  ar_gen_str (g, "cpu");
  ar_gen_map_open (g);
  ar_gen_str (g, "usage");
  ar_gen_map_open (g);
  if (v2)
    {
      kv_u64 (g, "total", field (dir, "cpu.stat", "usage_usec") * 1000);
      kv_u64 (g, "kernel", field (dir, "cpu.stat", "system_usec") * 1000);
      kv_u64 (g, "user", field (dir, "cpu.stat", "user_usec") * 1000);
    }
  else if (acct)
    {
      /* cpuacct.stat counts USER_HZ ticks; runc reports nanoseconds. */
      long hz = sysconf (_SC_CLK_TCK) > 0 ? sysconf (_SC_CLK_TCK) : 100;
      kv_u64 (g, "total", num (acct, "cpuacct.usage"));
      kv_u64 (g, "kernel", field (acct, "cpuacct.stat", "system") * (1000000000ull / hz));
      kv_u64 (g, "user", field (acct, "cpuacct.stat", "user") * (1000000000ull / hz));
      cleanup_free char *per = NULL;
      ar_gen_str (g, "percpu_usage");
      ar_gen_array_open (g);
      if (ar_cg_read (acct, "cpuacct.usage_percpu", &per, NULL) == 0)
        for (char *t = per, *end; *t; t = end)
          {
            uint64_t v = strtoull (t, &end, 10);
            if (end == t)
              break;
            ar_gen_u64 (g, v);
          }
      ar_gen_array_close (g);
    }
  ar_gen_map_close (g);
  ar_gen_str (g, "throttling");
  ar_gen_map_open (g);
  kv_u64 (g, "periods", field (dir, "cpu.stat", "nr_periods"));
  kv_u64 (g, "throttled_periods", field (dir, "cpu.stat", "nr_throttled"));
  kv_u64 (g, "throttled_time",
          v2 ? field (dir, "cpu.stat", "throttled_usec") * 1000 : field (dir, "cpu.stat", "throttled_time"));
  ar_gen_map_close (g);
  ar_gen_map_close (g);
}

static void
mem_entry (struct ar_gen *g, const char *name, const char *dir, const char *usage, const char *max, const char *failcnt,
           const char *limit)
{
  ar_gen_str (g, name);
  ar_gen_map_open (g);
  kv_u64 (g, "limit", limit ? num (dir, limit) : 0);
  kv_u64 (g, "usage", num (dir, usage));
  kv_u64 (g, "max", max ? num (dir, max) : 0);
  kv_u64 (g, "failcnt", failcnt ? num (dir, failcnt) : 0);
  ar_gen_map_close (g);
}

static void
memory_stats (struct ar_gen *g, const char *dir, bool v2)
{
  ar_gen_str (g, "memory");
  ar_gen_map_open (g);
  if (v2)
    {
      kv_u64 (g, "cache", field (dir, "memory.stat", "file"));
      mem_entry (g, "usage", dir, "memory.current", "memory.peak", NULL, "memory.max");
      mem_entry (g, "swap", dir, "memory.swap.current", "memory.swap.peak", NULL, "memory.swap.max");
    }
  else
    {
      kv_u64 (g, "cache", field (dir, "memory.stat", "cache"));
      mem_entry (g, "usage", dir, "memory.usage_in_bytes", "memory.max_usage_in_bytes", "memory.failcnt",
                 "memory.limit_in_bytes");
      mem_entry (g, "swap", dir, "memory.memsw.usage_in_bytes", "memory.memsw.max_usage_in_bytes",
                 "memory.memsw.failcnt", "memory.memsw.limit_in_bytes");
    }
  raw_map (g, dir, "memory.stat");
  ar_gen_map_close (g);
}

/* v1 "MAJ:MIN Op value" lines, or v2 io.stat "MAJ:MIN rbytes=.. wbytes=..". */
static void
blkio_list (struct ar_gen *g, const char *name, const char *dir, const char *file, bool v2, const char *rk, const char *wk)
{
  cleanup_free char *s = NULL;
  ar_gen_str (g, name);
  ar_gen_array_open (g);
  if (ar_cg_read (dir, file, &s, NULL) == 0)
    for (char *save = NULL, *l = strtok_r (s, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
      {
        unsigned maj, min;
        char op[16];
        uint64_t v;
        if (!v2 && sscanf (l, "%u:%u %15s %" SCNu64, &maj, &min, op, &v) == 4)
          {
            ar_gen_map_open (g);
            kv_u64 (g, "major", maj);
            kv_u64 (g, "minor", min);
            ar_gen_str (g, "op");
            ar_gen_strn (g, op, strlen (op));
            kv_u64 (g, "value", v);
            ar_gen_map_close (g);
          }
        else if (v2 && sscanf (l, "%u:%u", &maj, &min) == 2)
          for (int i = 0; i < 2; i++)
            {
              const char *k = i ? wk : rk, *at = strstr (l, k);
              if (!at)
                continue;
              ar_gen_map_open (g);
              kv_u64 (g, "major", maj);
              kv_u64 (g, "minor", min);
              ar_gen_str (g, "op");
              ar_gen_strn (g, (i ? "Write" : "Read"), i ? 5 : 4);
              kv_u64 (g, "value", strtoull (at + strlen (k), NULL, 10));
              ar_gen_map_close (g);
            }
      }
  ar_gen_array_close (g);
}

static void
hugetlb_stats (struct ar_gen *g, const char *dir, bool v2)
{
  ar_gen_str (g, "hugetlb");
  ar_gen_map_open (g);
  DIR *d = opendir ("/sys/kernel/mm/hugepages");
  struct dirent *e;
  while (d && (e = readdir (d)))
    {
      unsigned long kb;
      if (sscanf (e->d_name, "hugepages-%lukB", &kb) != 1)
        continue;
      char size[32];
      if (kb >= 1048576 && kb % 1048576 == 0)
        snprintf (size, sizeof size, "%luGB", kb / 1048576);
      else if (kb >= 1024 && kb % 1024 == 0)
        snprintf (size, sizeof size, "%luMB", kb / 1024);
      else
        snprintf (size, sizeof size, "%luKB", kb);
      cleanup_free char *u = xasprintf ("hugetlb.%s.%s", size, v2 ? "current" : "usage_in_bytes");
      cleanup_free char *m = xasprintf ("hugetlb.%s.%s", size, v2 ? "events" : "max_usage_in_bytes");
      cleanup_free char *f = xasprintf ("hugetlb.%s.failcnt", size);
      ar_gen_str (g, size);
      ar_gen_map_open (g);
      kv_u64 (g, "usage", num (dir, u));
      kv_u64 (g, "max", v2 ? 0 : num (dir, m));
      kv_u64 (g, "failcnt", v2 ? field (dir, m, "max") : num (dir, f));
      ar_gen_map_close (g);
    }
  if (d)
    closedir (d);
  ar_gen_map_close (g);
}

static void
group (const struct ar_cg_layout *l, const char *path, struct ar_gen *g, const char *c1, const char *c2,
       void (*fn) (struct ar_gen *, const char *, bool))
{
  struct ar_cg_target t;
  if (ar_cg_target (l, path, c1, c2, false, &t, NULL) < 0)
    return;
  if (ar_cg_exists (t.dir, "cgroup.procs"))
    fn (g, t.dir, t.v2);
  ar_cg_target_clear (&t);
}

static void
pids_stats (struct ar_gen *g, const char *dir, bool v2)
{
  (void) v2;
  ar_gen_str (g, "pids");
  ar_gen_map_open (g);
  kv_u64 (g, "current", num (dir, "pids.current"));
  kv_u64 (g, "limit", num (dir, "pids.max"));
  ar_gen_map_close (g);
}

static void
blkio_stats (struct ar_gen *g, const char *dir, bool v2)
{
  ar_gen_str (g, "blkio");
  ar_gen_map_open (g);
  blkio_list (g, "ioServiceBytesRecursive", dir, v2 ? "io.stat" : "blkio.throttle.io_service_bytes_recursive", v2,
              "rbytes=", "wbytes=");
  blkio_list (g, "ioServicedRecursive", dir, v2 ? "io.stat" : "blkio.throttle.io_serviced_recursive", v2,
              "rios=", "wios=");
  ar_gen_map_close (g);
}

int
ar_cgroup_stats_json (const char *record, const char *id, char **out, ar_error **err)
{
  if (!record)
    return ar_err (err, 0, "the container has no cgroup (created with --cgroup-manager disabled)");
  const char *path = NULL;
  const struct ar_cg_layout *l = ar_cg_layout_of (record, &path, err);
  if (!l)
    return -1;
  cleanup_free char *probe = ar_cg_procs_dir (l, path);
  if (!ar_cg_exists (probe, "cgroup.procs"))
    return ar_err (err, ENOENT, "cgroup: %s", probe);
  struct ar_gen G, *g = &G;
  ar_gen_init (g, NULL);
  ar_gen_map_open (g);
  ar_gen_str (g, "type");
  ar_gen_strn (g, "stats", 5);
  ar_gen_str (g, "id");
  ar_gen_strn (g, id, strlen (id));
  ar_gen_str (g, "data");
  ar_gen_map_open (g);
  {
    struct ar_cg_target t, a;
    if (ar_cg_target (l, path, "cpu", "cpu", false, &t, NULL) == 0)
      {
        bool acct = !t.v2 && ar_cg_target (l, path, "cpuacct", NULL, false, &a, NULL) == 0;
        cpu_stats (g, t.dir, t.v2, acct ? a.dir : NULL);
        if (acct)
          ar_cg_target_clear (&a);
        ar_cg_target_clear (&t);
      }
  }
  group (l, path, g, "memory", "memory", memory_stats);
  group (l, path, g, "pids", "pids", pids_stats);
  group (l, path, g, "blkio", "io", blkio_stats);
  group (l, path, g, "hugetlb", "hugetlb", hugetlb_stats);
  ar_gen_map_close (g);
  ar_gen_map_close (g);
  return ar_gen_done (g, "cgroup stats", out, NULL, err);
}
