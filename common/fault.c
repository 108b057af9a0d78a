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
  size_t n = phase ? strlen (phase) : 0;

  if (want == NULL || phase == NULL || strncmp (want, phase, n) != 0)
    return;
  if (strcmp (want + n, ":stop") == 0)
    {
      raise (SIGSTOP);
      return;
    }
  if (want[n])
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
