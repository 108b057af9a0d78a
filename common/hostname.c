/* Host names and ports: see hostname.h. */
#include "config.h"
#include "hostname.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

bool
ar_host_name_ok (const char *name, bool wildcard_ok)
{
  size_t len = strlen (name);
  if (len == 0 || len > 253)
    return false;
  if (wildcard_ok && strncmp (name, "*.", 2) == 0)
    name += 2;
  if (!*name)
    return false;
  for (const char *p = name;;)
    {
      if (*p == '.' || *p == '-') /* an empty label, or one that starts with '-' */
        return false;
      for (; *p && *p != '.'; p++)
        if (!isalnum ((unsigned char) *p) && *p != '-' && *p != '_')
          return false;
      if (!*p || !*++p) /* the end, or the root's trailing '.' */
        return true;
    }
}

bool
ar_host_name_match (const char *pattern, const char *host)
{
  if (strncmp (pattern, "*.", 2) != 0)
    return strcasecmp (pattern, host) == 0;
  size_t pl = strlen (pattern + 1), hl = strlen (host); /* ".example.com" */
  return hl > pl && strcasecmp (host + hl - pl, pattern + 1) == 0;
}

int
ar_parse_port (const char *s)
{
  int v = 0;
  if (!*s)
    return -1;
  for (; *s; s++)
    {
      if (*s < '0' || *s > '9' || v > 6553)
        return -1;
      v = v * 10 + (*s - '0');
    }
  return v >= 1 && v <= 65535 ? v : -1;
}
