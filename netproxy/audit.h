/* The audit log: one JSON object per line, appended with a single write(2)
 * so lines from the relay and several servers never interleave. */
#ifndef NP_AUDIT_H
#define NP_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "error.h"

struct audit {
  int fd; /* -1: auditing off */
  const char *source; /* "relay" or "netproxy" */
  const char *container; /* may be NULL */
};

int audit_open (struct audit *a, const char *path, const char *source, const char *container, ar_error **err);
/* Use an audit log already open: "FD" (inherited) or "PID:FD" (that
 * process's fd, through /proc). a->source and container set by audit_open. */
int audit_use_fd (struct audit *a, const char *ref, ar_error **err);

struct audit_conn {
  const char *endpoint; /* NAME:PORT */
  const char *outcome; /* ok, upstream-refused, upstream-timeout, ... */
  const char *detail; /* may be NULL: e.g. the refused SNI or the errno text */
  uint64_t bytes_up, bytes_down, duration_ms;
};
void audit_conn (const struct audit *a, const struct audit_conn *c);
/* A DNS lookup we refused (outcome "dns-refused"). */
void audit_dns (const struct audit *a, const char *name, const char *qtype);

/* An ask-mode decision about endpoint NAME:PORT (outcome "allowed" or
 * "denied"; detail says who decided or why). */
void audit_ask (const struct audit *a, const char *endpoint, bool allowed, const char *detail);

/* s as a quoted JSON string into out (ar_json_escape: always
 * NUL-terminated, truncated to fit). */
void audit_json_str (char *out, size_t cap, const char *s);

#endif
