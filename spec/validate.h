/* Shared by validate.c and validate_linux.c; internal to spec/. */
#ifndef AR_VALIDATE_H
#define AR_VALIDATE_H

#include "json.h"
#include "model.h"

/* Each sets nothing on success; on failure reports at the path already set. */
int ar_check_abs (struct ar_jctx *c, const char *path);
/* `what` is the array's path ("linux.maskedPaths"); elements get "[i]". */
int ar_check_strv_abs (struct ar_jctx *c, const char *what, char **v, size_t n);
int ar_check_idmaps (struct ar_jctx *c, const char *what, const struct ar_idmap *m, size_t n);
int ar_linux_validate (struct ar_jctx *c, const struct ar_spec *s);

#endif
