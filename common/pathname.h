/* Path names as strings, compared component by component. */
#ifndef AR_PATHNAME_H
#define AR_PATHNAME_H

#include <stdbool.h>

/* path (absolute, normalized) is root or lies below it; "/" holds every path. */
bool ar_path_under (const char *path, const char *root);

/* path made absolute against the working folder (not resolved: no
 * symlink followed, no ".." removed); a copy when it already is. NULL
 * with errno when the working folder cannot be read. Caller frees. */
char *ar_path_absolute (const char *path);

#endif
