/* The pod sandbox's process for tests/cri.bats: sleeps until a signal
 * ends it (the role of Kubernetes' pause image), and reaps children so
 * that it is a proper pid 1. Built static, it is the whole image. */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void
on_stop (int sig)
{
  (void) sig;
  _exit (0);
}

static void
on_child (int sig)
{
  (void) sig;
  while (waitpid (-1, NULL, WNOHANG) > 0)
    ;
}

int
main (void)
{
  signal (SIGINT, on_stop);
  signal (SIGTERM, on_stop);
  signal (SIGCHLD, on_child);
  for (;;)
    pause ();
}
