/* Capabilities through libcap: the bounding set is reduced while still
 * root, the other sets are applied after the uid switch (which keeps the
 * permitted set thanks to PR_SET_KEEPCAPS). */
#ifndef AR_CAPS_H
#define AR_CAPS_H

#include "error.h"
#include "model.h"

/* Check every name is a capability this kernel knows. */
int ar_caps_check (const struct ar_caps *c, ar_error **err);
/* Drop from the bounding set what caps->bounding does not list. */
int ar_caps_drop_bounding (const struct ar_caps *c, ar_error **err);
/* Set effective, permitted, inheritable, then ambient. NULL: drop everything. */
int ar_caps_apply (const struct ar_caps *c, ar_error **err);
/* Effective = permitted again (a switch to a non-zero uid clears it). */
int ar_caps_raise_effective (ar_error **err);

#endif
