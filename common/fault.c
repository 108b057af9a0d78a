/* Fault injection for tests (see fault.h). The check is one getenv and one
 * strcmp, cheap enough to leave in every build: the variable only lets the
 * caller kill its own runtime process, which it can do anyway. */
#include "config.h"
#include "fault.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void
ar_fault_point (const char *phase)
{
  const char *want = getenv ("AGENTRUN_FAULT");

  if (want == NULL || phase == NULL || strcmp (want, phase) != 0)
    return;
  /* raise() can in theory return if the signal is blocked; SIGKILL cannot
   * be blocked, but fall through to _exit so a phase never continues. */
  raise (SIGKILL);
  _exit (137);
}

bool
ar_fault_fails (const char *phase)
{
  const char *want = getenv ("AGENTRUN_FAULT");
  return want != NULL && phase != NULL && strcmp (want, phase) == 0;
}
