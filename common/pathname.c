/* See pathname.h. */
#include "config.h"
#include "pathname.h"

#include "util.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

bool
ar_path_under (const char *path, const char *root)
{
  size_t n = strlen (root);
  if (n == 1 && root[0] == '/')
    return true;
  return strncmp (path, root, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

char *
ar_path_absolute (const char *path)
{
  char cwd[PATH_MAX];
  if (path[0] == '/')
    return xasprintf ("%s", path);
  if (!getcwd (cwd, sizeof cwd))
    return NULL;
  return xasprintf ("%s/%s", cwd, path);
}
