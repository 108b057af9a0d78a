/* run.agentrun.init: pid 1 of the container is a small init of agentrun's
 * own instead of the command. The container's init, after its setup, starts
 * a child (sharing its memory until its execve, as posix_spawn does): the
 * child goes on to the command's final steps and execve, in a process
 * group of its own; the init stays as pid 1, without capabilities, not
 * dumpable (so nothing in the container can ptrace it, read its memory or
 * clear its parent-death signal), reaping every orphan, forwarding signals
 * to the command (job control's to its process group), and exiting with the
 * command's status. */
#ifndef AR_PID1_H
#define AR_PID1_H

#include <stdbool.h>
#include <sys/types.h>
#include "error.h"
#include "model.h"

#define AR_PID1_ANNOTATION "run.agentrun.init"

/* The annotation says "true". */
bool ar_pid1_wanted (const struct ar_spec *spec);

struct ar_pid1 {
  int sock; /* to the agentrun that waits in the foreground: stop reports (-1: none) */
  int report_fd; /* exec.fifo's write side: our failures go there (sync.h) */
  bool terminal; /* stdin is the container's pty: the command's group becomes its foreground */
  bool die_with_parent; /* PR_SET_PDEATHSIG: the container dies with that agentrun */
  uid_t uid; /* the command's ids, which pid 1 takes too: signals need no capability */
  gid_t gid;
  /* run once the command's process has exec'd, before exec.fifo is let
   * go: what ran beside its start is over (NULL: nothing); its failure is
   * start's, the command killed */
  int (*spawned) (void *data, ar_error **err);
  void *spawned_data;
};

/* Start the command's process: cmd (arg, NULL) runs in it, and must
 * execve the command or exit; cmd (arg, err) when its process group or
 * signal mask could not be set up, to report err and exit. It shares the
 * init's memory until then (the init waits, suspended), on a stack of its
 * own. Returns -1 with *err when no process could be started; the init
 * never returns from it otherwise. */
int ar_pid1_fork (const struct ar_pid1 *p, void (*cmd) (void *, ar_error *), void *arg, ar_error **err);

#endif
