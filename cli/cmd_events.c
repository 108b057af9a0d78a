/* agentrun events [--stats] [--interval 5s] ID: runc's event stream. With
 * --stats, one stats event and exit; otherwise a stats event every interval
 * and an {"type":"oom"} event each time the kernel OOM-kills in the
 * container, until the container is gone. One JSON object per line. */
#include "config.h"
#include "cgroups.h"
#include "cli.h"
#include "commands.h"
#include "log.h"
#include "spec.h"
#include "state.h"
#include "util.h"

#include <poll.h>
#include <stdio.h>
#include <time.h>

enum { E_STATS = 1, E_INTERVAL, E_HELP };

static const struct ar_opt events_opts[] = {
  { "stats", 0, false, E_STATS },
  { "interval", 0, true, E_INTERVAL },
  { "help", 'h', false, E_HELP },
  { NULL, 0, false, 0 },
};

/* Go durations as runc takes them: "5s", "500ms", "1m30s", "2h", "1.5s". */
static int
parse_duration (const char *s, long *ms, ar_error **err)
{
  double total = 0;
  const char *p = s;
  if (!*p)
    return ar_err (err, 0, "--interval: empty duration");
  while (*p)
    {
      char *end;
      double v = strtod (p, &end);
      if (end == p || v < 0)
        return ar_err (err, 0, "--interval: \"%s\" is not a duration", s);
      p = end;
      double unit;
      if (strncmp (p, "ms", 2) == 0)
        unit = 1, p += 2;
      else if (*p == 's')
        unit = 1000, p++;
      else if (*p == 'm')
        unit = 60000, p++;
      else if (*p == 'h')
        unit = 3600000, p++;
      else
        return ar_err (err, 0, "--interval: \"%s\" needs a unit (ms, s, m, h)", s);
      total += v * unit;
    }
  if (total < 1 || total > 86400000.0 * 365)
    return ar_err (err, 0, "--interval: \"%s\" is out of range", s);
  *ms = (long) (total + 0.5);
  return 0;
}

static int
print_line (const char *json)
{
  if (printf ("%s\n", json) < 0 || fflush (stdout) != 0)
    return -1;
  return 0;
}

/* Loop until the container's init exits (pidfd readable) or its cgroup is
 * gone; stats at each interval, OOM events as they come. */
static int
stream (const struct ar_cstate *st, long interval_ms, ar_error **err)
{
  struct ar_cgroup_oom w;
  cleanup_close int pidfd = ar_cstate_pidfd (st);
  cleanup_error ar_error *oom_err = NULL;
  if (pidfd < 0)
    return ar_err (err, 0, "container \"%s\" is not running", st->id);
  bool have_oom = ar_cgroup_oom_open (st->cgroup_path, &w, &oom_err) == 0;
  if (!have_oom)
    ar_warn ("events: no OOM notifications: %s", oom_err->msg);
  cleanup_free char *oom = xasprintf ("{\"type\":\"oom\",\"id\":\"%s\"}", st->id);
  struct timespec next;
  clock_gettime (CLOCK_MONOTONIC, &next);
  int ret = 0;
  for (;;)
    {
      struct timespec now;
      clock_gettime (CLOCK_MONOTONIC, &now);
      long wait = (next.tv_sec - now.tv_sec) * 1000 + (next.tv_nsec - now.tv_nsec) / 1000000;
      if (wait <= 0)
        {
          cleanup_free char *json = NULL;
          if (ar_cgroup_stats_json (st->cgroup_path, st->id, &json, NULL) < 0)
            break; /* the cgroup went away with the container */
          if (print_line (json) < 0)
            break;
          next.tv_sec += interval_ms / 1000;
          next.tv_nsec += (interval_ms % 1000) * 1000000;
          if (next.tv_nsec >= 1000000000)
            next.tv_sec++, next.tv_nsec -= 1000000000;
          continue;
        }
      struct pollfd pf[2] = { { pidfd, POLLIN, 0 }, { have_oom ? w.fd : -1, POLLIN, 0 } };
      int r = poll (pf, 2, (int) wait);
      if (r < 0 && errno != EINTR)
        {
          ret = ar_err (err, errno, "poll");
          break;
        }
      unsigned long long n = 0;
      if (r > 0 && (pf[1].revents & POLLIN) && ar_cgroup_oom_read (&w, &n) < 0)
        break;
      for (; n > 0; n--)
        if (print_line (oom) < 0)
          break;
      if (r > 0 && pf[0].revents)
        break; /* init exited */
    }
  ar_cgroup_oom_close (&w);
  return ret;
}

int
cmd_events (struct ar_ctx *ctx, int argc, char **argv)
{
  struct ar_optparser p = { .argc = argc, .argv = argv, .i = 1, .opts = events_opts };
  cleanup_error ar_error *err = NULL;
  cleanup_close int dirfd = -1;
  struct ar_cstate st = { 0 };
  const char *arg;
  bool stats = false;
  long interval = 5000;
  int opt, ret = 1;

  while ((opt = ar_opt_next (&p, &arg, &err)) > 0)
    switch (opt)
      {
      case E_STATS: stats = true; break;
      case E_INTERVAL: parse_duration (arg, &interval, &err); break;
      case E_HELP:
        printf ("usage: agentrun events [--stats] [--interval DURATION] ID\n"
                "  --stats              print one stats event and exit\n"
                "  --interval 5s        how often to print stats while streaming\n");
        return 0;
      }
  if (!err && opt == 0 && p.i + 1 != argc)
    ar_err (&err, 0, "expected exactly one container id");
  if (err || ar_validate_id (argv[p.i], &err) < 0 || ar_state_open (ctx->root, argv[p.i], false, &dirfd, &err) < 0)
    goto out;
  int r = ar_cstate_read (dirfd, &st, &err);
  if (r == 0)
    ar_err (&err, 0, "container \"%s\" is still being created", argv[p.i]);
  if (r <= 0)
    goto out;
  /* The shared lock is for reading the state only: a stream must not hold
   * up delete. */
  ar_closep (&dirfd);
  if (stats)
    {
      cleanup_free char *json = NULL;
      if (ar_cgroup_stats_json (st.cgroup_path, st.id, &json, &err) == 0 && print_line (json) == 0)
        ret = 0;
    }
  else if (stream (&st, interval, &err) == 0)
    ret = 0;
out:
  if (err)
    ar_log_error (ar_steal_ptr (err));
  ar_cstate_clear (&st);
  return ret;
}
