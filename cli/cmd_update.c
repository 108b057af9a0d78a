/* agentrun update [--resources FILE|-] [--memory N ...] ID: change the
 * limits of a live container. --resources takes a linux.resources object
 * (runtime-spec JSON); the per-field flags are runc's and override it. */
#include "config.h"
#include "cgroups.h"
#include "cli.h"
#include "commands.h"
#include "log.h"
#include "size.h"
#include "spec.h"
#include "state.h"
#include "strio.h"
#include "util.h"

#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>

enum {
  U_RESOURCES = 1,
  U_MEMORY,
  U_MEMORY_RES,
  U_MEMORY_SWAP,
  U_CPU_SHARES,
  U_CPU_QUOTA,
  U_CPU_PERIOD,
  U_CPUSET_CPUS,
  U_CPUSET_MEMS,
  U_PIDS,
  U_BLKIO,
  U_RT_RUNTIME,
  U_RT_PERIOD,
  U_HELP
};

static const struct ar_opt update_opts[] = {
  { "resources", 'r', true, U_RESOURCES },
  { "memory", 0, true, U_MEMORY },
  { "memory-reservation", 0, true, U_MEMORY_RES },
  { "memory-swap", 0, true, U_MEMORY_SWAP },
  { "cpu-shares", 0, true, U_CPU_SHARES },
  { "cpu-share", 0, true, U_CPU_SHARES }, /* runc's spelling */
  { "cpu-quota", 0, true, U_CPU_QUOTA },
  { "cpu-period", 0, true, U_CPU_PERIOD },
  { "cpuset-cpus", 0, true, U_CPUSET_CPUS },
  { "cpuset-mems", 0, true, U_CPUSET_MEMS },
  { "pids-limit", 0, true, U_PIDS },
  { "blkio-weight", 0, true, U_BLKIO },
  { "cpu-rt-runtime", 0, true, U_RT_RUNTIME },
  { "cpu-rt-period", 0, true, U_RT_PERIOD },
  { "help", 'h', false, U_HELP },
  { NULL, 0, false, 0 },
};

static int
update_usage (void)
{
  printf ("usage: agentrun update [options] ID [options]\n"
          "  --resources, -r FILE|-   a linux.resources JSON object (- reads stdin)\n"
          "  --memory N               memory limit in bytes (k, m, g suffixes; -1: none, swap included)\n"
          "  --memory-reservation N   soft limit\n"
          "  --memory-swap N          memory+swap limit (-1: none)\n"
          "  --cpu-shares (--cpu-share) N  --cpu-quota N  --cpu-period N  --cpu-rt-runtime N  --cpu-rt-period N\n"
          "  --cpuset-cpus LIST  --cpuset-mems LIST\n"
          "  --pids-limit N           (-1: none; 0 leaves it)\n"
          "  --blkio-weight N         10 to 1000\n");
  return 0;
}

/* "512m", "1G", "-1", "1048576": binary multiples, as runc's RAMInBytes;
 * -1 ("no limit") takes no suffix. */
static int
parse_bytes (const char *opt, const char *s, int64_t *out, ar_error **err)
{
  if (strcmp (s, "-1") == 0)
    {
      *out = -1;
      return 0;
    }
  if (ar_parse_size (s, out) != AR_SIZE_OK)
    return ar_err (err, 0, "--%s: \"%s\" is not a size", opt, s);
  return 0;
}

static int
parse_int (const char *opt, const char *s, int64_t min, int64_t *out, ar_error **err)
{
  char *end;
  errno = 0;
  long long v = strtoll (s, &end, 10);
  if (end == s || *end || errno || v < min)
    return ar_err (err, 0, "--%s: \"%s\" is not a number%s", opt, s, min >= 0 ? " >= 0" : "");
  *out = v;
  return 0;
}

static int
read_resources (const char *file, struct ar_resources *r, ar_error **err)
{
  cleanup_close int fd = strcmp (file, "-") == 0 ? fcntl (0, F_DUPFD_CLOEXEC, 0) : open (file, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return ar_err (err, errno, "open %s", file);
  size_t len = 0;
  cleanup_free char *buf = NULL;
  if (ar_read_all (fd, AR_SPEC_MAX_FILE_SIZE, &buf, &len) < 0)
    return ar_err (err, errno, "read %s", file);
  return ar_resources_parse (buf, len, strcmp (file, "-") == 0 ? "<stdin>" : file, r, err);
}

static void *
need (void **p, size_t size)
{
  if (!*p)
    *p = xmalloc0 (size);
  return *p;
}

/* Apply one per-field flag on top of what --resources gave. */
static int
set_flag (struct ar_resources *r, int id, const char *arg, ar_error **err)
{
  const char *name = NULL;
  for (const struct ar_opt *o = update_opts; o->name; o++)
    if (o->id == id)
      name = o->name;
  int64_t v = 0;
  struct ar_memory *m = id <= U_MEMORY_SWAP ? need ((void **) &r->memory, sizeof *r->memory) : NULL;
  struct ar_cpu *c = id >= U_CPU_SHARES && id != U_PIDS && id != U_BLKIO ? need ((void **) &r->cpu, sizeof *r->cpu)
                                                                         : NULL;
  switch (id)
    {
    case U_MEMORY:
      if (parse_bytes (name, arg, &v, err) < 0)
        return -1;
      m->has_limit = true;
      m->limit = v;
      break;
    case U_MEMORY_RES:
      if (parse_bytes (name, arg, &v, err) < 0)
        return -1;
      m->has_reservation = true;
      m->reservation = v;
      break;
    case U_MEMORY_SWAP:
      if (parse_bytes (name, arg, &v, err) < 0)
        return -1;
      m->has_swap = true;
      m->swap = v;
      break;
    case U_CPU_SHARES:
      if (parse_int (name, arg, 0, &v, err) < 0)
        return -1;
      c->has_shares = true;
      c->shares = v;
      break;
    case U_CPU_QUOTA:
      if (parse_int (name, arg, -1, &v, err) < 0)
        return -1;
      c->has_quota = true;
      c->quota = v;
      break;
    case U_CPU_PERIOD:
      if (parse_int (name, arg, 0, &v, err) < 0)
        return -1;
      c->has_period = true;
      c->period = v;
      break;
    case U_RT_RUNTIME:
      if (parse_int (name, arg, -1, &v, err) < 0)
        return -1;
      c->has_realtime_runtime = true;
      c->realtime_runtime = v;
      break;
    case U_RT_PERIOD:
      if (parse_int (name, arg, 0, &v, err) < 0)
        return -1;
      c->has_realtime_period = true;
      c->realtime_period = v;
      break;
    case U_CPUSET_CPUS:
      free (c->cpus);
      c->cpus = xstrdup (arg);
      break;
    case U_CPUSET_MEMS:
      free (c->mems);
      c->mems = xstrdup (arg);
      break;
    case U_PIDS:
      if (parse_int (name, arg, -1, &v, err) < 0)
        return -1;
      r->has_pids_limit = true;
      r->pids_limit = v;
      break;
    case U_BLKIO:
      if (parse_int (name, arg, 0, &v, err) < 0)
        return -1;
      if (v && (v < 10 || v > 1000))
        return ar_err (err, 0, "--blkio-weight: %" PRId64 " is not between 10 and 1000", v);
      need ((void **) &r->block_io, sizeof *r->block_io);
      r->block_io->has_weight = true;
      r->block_io->weight = (uint16_t) v;
      break;
    }
  return 0;
}

static int
do_update (struct ar_ctx *ctx, const char *id, const struct ar_resources *r, ar_error **err)
{
  cleanup_close int dirfd = -1;
  struct ar_cstate st = { 0 };
  int ret = -1;
  if (ar_validate_id (id, err) < 0 || ar_state_open (ctx->root, id, true, &dirfd, err) < 0)
    return -1;
  int rd = ar_cstate_read (dirfd, &st, err);
  if (rd == 0)
    ar_err (err, 0, "container \"%s\" is still being created", id);
  else if (rd > 0 && strcmp (ar_cstate_status (dirfd, &st), "stopped") == 0)
    ar_err (err, 0, "container \"%s\" is stopped: container not running", id);
  else if (rd > 0)
    ret = ar_cgroup_update (st.cgroup_path, r, err);
  ar_cstate_clear (&st);
  return ret;
}

int
cmd_update (struct ar_ctx *ctx, int argc, char **argv)
{
  struct ar_optparser p = { .argc = argc, .argv = argv, .i = 1, .opts = update_opts };
  cleanup_error ar_error *err = NULL;
  const char *arg, *file = NULL;
  struct {
    int id;
    const char *arg;
  } flags[U_HELP];
  size_t nflags = 0;
  int opt;

  const char *id = NULL;
  /* The id may come before, between or after the options, as with runc. */
  while ((opt = ar_opt_next (&p, &arg, &err)) >= 0)
    {
      if (opt == 0)
        {
          if (p.i >= argc)
            break;
          if (id)
            {
              ar_err (&err, 0, "expected exactly one container id, got \"%s\" and \"%s\"", id, argv[p.i]);
              break;
            }
          id = argv[p.i++];
          continue;
        }
      if (opt == U_HELP)
        return update_usage ();
      if (opt == U_RESOURCES)
        file = arg;
      else if (nflags < ARRAY_SIZE (flags))
        flags[nflags++] = (typeof (flags[0])){ opt, arg };
      else
        ar_err (&err, 0, "too many flags");
    }
  if (!err && !id)
    ar_err (&err, 0, "expected exactly one container id");
  struct ar_resources *r = xmalloc0 (sizeof *r);
  if (!err && file)
    read_resources (file, r, &err);
  for (size_t i = 0; !err && i < nflags; i++)
    set_flag (r, flags[i].id, flags[i].arg, &err);
  if (!err)
    do_update (ctx, id, r, &err);
  ar_resources_free (r);
  if (err)
    {
      ar_log_error (ar_steal_ptr (err));
      return 1;
    }
  return 0;
}
