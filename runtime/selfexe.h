/* CVE-2019-5736: a container process that can open /proc/<runtime pid>/exe
 * for writing could overwrite the host's agentrun binary. Commands that
 * create or join a container first re-execute themselves from a sealed
 * memfd copy, so /proc/self/exe is an unwritable anonymous file. */
#ifndef AR_SELFEXE_H
#define AR_SELFEXE_H

#include "error.h"

/* Returns 0 when already running sealed; otherwise re-executes (and only
 * returns -1 on failure). */
int ar_selfexe_ensure_sealed (ar_error **err);

#endif
