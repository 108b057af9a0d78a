#include "config.h"
#include "audit.h"
#include "clock.h"
#include "ev.h"
#include "strio.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int
audit_open (struct audit *a, const char *path, const char *source, const char *container, ar_error **err)
{
  a->fd = -1;
  a->source = source;
  a->container = container;
  if (!path)
    return 0;
  /* never through a symlink in its last component: whoever could write its
   * folder could point our appends (as root) at any file */
  a->fd = open (path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0640);
  if (a->fd < 0)
    return ar_err (err, errno, "open audit log %s", path);
  return 0;
}

int
audit_use_fd (struct audit *a, const char *ref, ar_error **err)
{
  char *end;
  long pid = 0, fd = strtol (ref, &end, 10);
  struct stat st;
  if (*end == ':')
    {
      pid = fd;
      fd = strtol (end + 1, &end, 10);
    }
  if (*end || end == ref || fd < 0 || fd > 1048576 || pid < 0)
    return ar_err (err, 0, "--audit-fd %s: needs FD or PID:FD", ref);
  if (pid > 0)
    {
      /* the fd of the process that opened the log (the runtime running this
       * hook): /proc hands over that very file, no path is looked up */
      char p[64];
      snprintf (p, sizeof p, "/proc/%ld/fd/%ld", pid, fd);
      a->fd = open (p, O_WRONLY | O_APPEND | O_CLOEXEC);
    }
  else
    a->fd = fcntl ((int) fd, F_DUPFD_CLOEXEC, 3);
  if (a->fd < 0)
    return ar_err (err, errno, "--audit-fd %s", ref);
  if (fstat (a->fd, &st) < 0 || !S_ISREG (st.st_mode))
    return ar_err (err, 0, "--audit-fd %s: not a regular file", ref);
  if (pid == 0)
    close ((int) fd);
  return 0;
}

void
audit_json_str (char *out, size_t cap, const char *s)
{
  if (cap < 3)
    return;
  size_t o = 1 + ar_json_escape (out + 1, cap - 2, s);
  out[0] = '"';
  out[o++] = '"';
  out[o] = '\0';
}

static void
emit (const struct audit *a, const char *body)
{
  char ts[AR_RFC3339_LEN], cont[300], line[2048];
  ar_rfc3339_now_buf (3, ts);
  if (a->container)
    audit_json_str (cont, sizeof cont, a->container);
  else
    strcpy (cont, "null");
  int n = snprintf (line, sizeof line, "{\"time\":\"%s\",\"source\":\"%s\",\"container\":%s,%s}\n", ts, a->source, cont,
                    body);
  if (n > 0 && (size_t) n < sizeof line)
    {
      /* Best effort: a full disk must not stop traffic. */
      ssize_t w = write (a->fd, line, (size_t) n);
      (void) w;
    }
}

void
audit_conn (const struct audit *a, const struct audit_conn *c)
{
  char ep[300], oc[64], det[300], body[1024];
  if (a->fd < 0)
    return;
  audit_json_str (ep, sizeof ep, c->endpoint);
  audit_json_str (oc, sizeof oc, c->outcome);
  if (c->detail)
    audit_json_str (det, sizeof det, c->detail);
  snprintf (body, sizeof body,
            "\"event\":\"connection\",\"endpoint\":%s,\"bytes_up\":%llu,\"bytes_down\":%llu,"
            "\"duration_ms\":%llu,\"outcome\":%s%s%s",
            ep, (unsigned long long) c->bytes_up, (unsigned long long) c->bytes_down,
            (unsigned long long) c->duration_ms, oc, c->detail ? ",\"detail\":" : "", c->detail ? det : "");
  emit (a, body);
}

void
audit_dns (const struct audit *a, const char *name, const char *qtype)
{
  char nm[600], qt[32], body[1024];
  if (a->fd < 0)
    return;
  audit_json_str (nm, sizeof nm, name);
  audit_json_str (qt, sizeof qt, qtype);
  snprintf (body, sizeof body,
            "\"event\":\"dns\",\"endpoint\":%s,\"qtype\":%s,\"bytes_up\":0,\"bytes_down\":0,"
            "\"duration_ms\":0,\"outcome\":\"dns-refused\"",
            nm, qt);
  emit (a, body);
}

void
audit_ask (const struct audit *a, const char *endpoint, bool allowed, const char *detail)
{
  char ep[300], det[300], body[1024];
  if (a->fd < 0)
    return;
  audit_json_str (ep, sizeof ep, endpoint);
  audit_json_str (det, sizeof det, detail ? detail : "");
  snprintf (body, sizeof body,
            "\"event\":\"ask\",\"endpoint\":%s,\"bytes_up\":0,\"bytes_down\":0,\"duration_ms\":0,"
            "\"outcome\":\"%s\",\"detail\":%s",
            ep, allowed ? "allowed" : "denied", det);
  emit (a, body);
}
