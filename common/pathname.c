/* See pathname.h. */
#include "config.h"
#include "pathname.h"

#include <string.h>

bool
ar_path_under (const char *path, const char *root)
{
  size_t n = strlen (root);
  if (n == 1 && root[0] == '/')
    return true;
  return strncmp (path, root, n) == 0 && (path[n] == '/' || path[n] == '\0');
}
