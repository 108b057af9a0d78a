/* Test-only fault injection: AGENTRUN_FAULT=<phase> makes the runtime kill
 * itself with SIGKILL when it reaches that named phase, so tests can check
 * that `delete --force` cleans up after a runtime that died at any point.
 * SIGKILL, not exit(): nothing of ours (atexit, cleanup attributes, unwind
 * code) may run, exactly as when the OOM killer or a user kills us. */
#ifndef AR_FAULT_H
#define AR_FAULT_H

#include <stdbool.h>

/* Phase names are "<command>-<step>", e.g. "create-after-clone".
 * No effect unless the environment names this exact phase. "<phase>:stop"
 * stops the process there instead (SIGSTOP), each time it gets there, and
 * it goes on once continued: a test changes the files it works on at that
 * very step (a race made deterministic). */
void ar_fault_point (const char *phase);

/* The same variable, for a step that must fail the way it would on a host
 * that refuses it (an error, not a kill): true when it names this phase. */
bool ar_fault_fails (const char *phase);

#endif
