/* Path names as strings, compared component by component. */
#ifndef AR_PATHNAME_H
#define AR_PATHNAME_H

#include <stdbool.h>

/* path (absolute, normalized) is root or lies below it; "/" holds every path. */
bool ar_path_under (const char *path, const char *root);

#endif
