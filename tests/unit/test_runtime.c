/* Unit tests of pure parts of the container library: the cgroup v2
 * conversions, the blkio and memory writers of v1 and v2 (recorded as a
 * plan of writes, so no cgroup is touched), the device rules a container
 * gets, the key of the compiled seccomp filter cache, the exit status of a
 * command that could not start, which configs run one unprivileged uid
 * (the sealed re-exec), and which ask a nested user namespace rightly. */
#include "config.h"
#include "tap.h"
#include "cgroups_internal.h"
#include "container.h"
#include "error.h"
#include "namespaces.h"
#include "process.h"
#include "seccomp_cache.h"
#include "sha256.h"
#include "spec.h"
#include "strio.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <unistd.h>

static struct ar_spec *
parse (const char *linux_json)
{
  char buf[4096];
  ar_error *err = NULL;
  struct ar_spec *s = NULL;
  snprintf (buf, sizeof buf,
            "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"rootfs\"},"
            " \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"user\": {\"uid\": 0, \"gid\": 0}},"
            " \"linux\": %s}",
            linux_json);
  if (ar_spec_parse (buf, strlen (buf), "config.json", &s, &err) < 0)
    {
      printf ("Bail out! %s\n", err->msg);
      exit (1);
    }
  return s;
}

static void
test_conversions (void)
{
  is_int (ar_cg_blkio_to_io_weight (0), 0, "blkio weight 0 stays unset");
  is_int (ar_cg_blkio_to_io_weight (10), 1, "blkio weight 10 -> io.weight 1");
  is_int (ar_cg_blkio_to_io_weight (1000), 10000, "blkio weight 1000 -> io.weight 10000");
  is_int (ar_cg_blkio_to_io_weight (500), 1 + (490 * 9999) / 990, "blkio weight 500 -> io.weight 4950");
  is_int (ar_cg_blkio_to_io_weight (1), 1, "blkio weight below 10 is clamped");
  is_int (ar_cg_blkio_to_io_weight (65535), 10000, "blkio weight above 1000 is clamped");
  is_int (ar_cg_shares_to_weight (0), 0, "cpu shares 0 stays unset");
  is_int (ar_cg_shares_to_weight (2), 1, "cpu shares 2 -> weight 1");
  is_int (ar_cg_shares_to_weight (1024), 39, "cpu shares 1024 -> weight 39");
  is_int (ar_cg_shares_to_weight (262144), 10000, "cpu shares 262144 -> weight 10000");
  is_int (ar_cg_shares_to_weight (1ULL << 40), 10000, "cpu shares above the range are clamped");
}

/* A cgroup record "CTRL[,CTRL]:PATH" names the hierarchies by their
 * controllers: a v1 mount's list ("cpu,cpuacct") carries one of them. */
static void
test_controller_lists (void)
{
  ok (ar_cg_carries_any ("memory", "memory", 6), "memory carries memory");
  ok (ar_cg_carries_any ("cpu,cpuacct", "memory,cpu", 10), "cpu,cpuacct carries one of memory,cpu");
  ok (!ar_cg_carries_any ("cpuacct", "memory,cpu", 10), "cpuacct is not cpu");
  ok (!ar_cg_carries_any ("cpu", "cpuacct", 7), "cpu is not cpuacct");
  ok (!ar_cg_carries_any ("name=systemd", "memory", 6), "a named hierarchy carries no controller");
  ok (ar_cg_carries_any ("pids", "memory,pids:/agentrun/x", 11), "the list stops at its length");
  ok (!ar_cg_carries_any ("agentrun", "memory:/agentrun/x", 6), "nor is the path read as a controller");
}

static char cgdir[256];

/* A file of the fake cgroup folder, so that a writer that looks for it
 * (io.bfq.weight, memory.swap.max) finds it. */
static void
cg_file (const char *name, bool present)
{
  char p[512];
  snprintf (p, sizeof p, "%s/%s", cgdir, name);
  if (!present)
    {
      unlink (p);
      return;
    }
  FILE *f = fopen (p, "we");
  if (!f || fclose (f) != 0)
    {
      printf ("Bail out! cannot make %s\n", p);
      exit (1);
    }
}

/* The writes a writer makes, one "file=value" a line. */
typedef int (*writer) (const char *dir, const void *what, ar_error **err);

static int
record (writer w, const void *what, char *out, size_t len, ar_error **err)
{
  struct ar_cg_plan plan = { 0 };
  ar_cg_plan_record_into (&plan);
  int r = w (cgdir, what, err);
  ar_cg_plan_record_into (NULL);
  out[0] = '\0';
  for (size_t i = 0; i < plan.n; i++)
    snprintf (out + strlen (out), len - strlen (out), "%s=%s\n", plan.w[i].file, plan.w[i].value);
  ar_cg_plan_clear (&plan);
  return r;
}

static int
v2_io (const char *dir, const void *b, ar_error **err)
{
  return ar_cg_v2_io (dir, b, err);
}

static int
v1_blkio (const char *dir, const void *b, ar_error **err)
{
  return ar_cg_v1_blkio (dir, b, err);
}

static int
v2_memory (const char *dir, const void *m, ar_error **err)
{
  return ar_cg_v2_memory (dir, m, err);
}

#define BLKIO                                                                                                          \
  "{\"resources\": {\"blockIO\": {\"weight\": 500,"                                                                    \
  " \"weightDevice\": [{\"major\": 8, \"minor\": 0, \"weight\": 100}, {\"major\": 8, \"minor\": 16, \"weight\": 0}],"  \
  " \"throttleReadBpsDevice\": [{\"major\": 8, \"minor\": 0, \"rate\": 1048576}],"                                     \
  " \"throttleWriteBpsDevice\": [{\"major\": 8, \"minor\": 0, \"rate\": 2097152}],"                                    \
  " \"throttleReadIOPSDevice\": [{\"major\": 8, \"minor\": 0, \"rate\": 300}],"                                        \
  " \"throttleWriteIOPSDevice\": [{\"major\": 8, \"minor\": 0, \"rate\": 200}]}}}"

/* blockIO as the runtime-spec gives it, onto cgroup v2's io files: the
 * weight on io.weight's scale (1 + (w - 10) * 9999 / 990), or BFQ's own
 * scale unchanged; each throttle one io.max line "MAJ:MIN KEY=RATE"; a zero
 * device weight is "not set". */
static void
test_blkio (void)
{
  char got[2048], want[2048];
  ar_error *err = NULL;
  struct ar_spec *s = parse (BLKIO);
  const struct ar_blkio *b = s->linux_->resources->block_io;
  unsigned w500 = 1 + (490 * 9999) / 990, w100 = 1 + (90 * 9999) / 990;

  cg_file ("io.bfq.weight", false);
  is_int (record (v2_io, b, got, sizeof got, &err), 0, "v2 io: blockIO applies");
  snprintf (want, sizeof want,
            "io.weight=%u\nio.weight=8:0 %u\nio.max=8:0 rbps=1048576\nio.max=8:0 wbps=2097152\n"
            "io.max=8:0 riops=300\nio.max=8:0 wiops=200\n",
            w500, w100);
  is_str (got, want, "v2 io: weights converted to io.weight's scale, throttles as io.max lines");

  cg_file ("io.bfq.weight", true);
  is_int (record (v2_io, b, got, sizeof got, &err), 0, "v2 io under BFQ: blockIO applies");
  ok (strncmp (got, "io.bfq.weight=500\nio.bfq.weight=8:0 100\nio.max=", 47) == 0,
      "v2 io under BFQ: io.bfq.weight takes blkio's own scale, unconverted");
  if (strncmp (got, "io.bfq.weight=500\n", 18))
    diag ("got %s", got);
  cg_file ("io.bfq.weight", false);

  cg_file ("blkio.weight", true);
  cg_file ("blkio.weight_device", true);
  is_int (record (v1_blkio, b, got, sizeof got, &err), 0, "v1 blkio: blockIO applies");
  is_str (got,
          "blkio.weight=500\nblkio.weight_device=8:0 100\n"
          "blkio.throttle.read_bps_device=8:0 1048576\nblkio.throttle.write_bps_device=8:0 2097152\n"
          "blkio.throttle.read_iops_device=8:0 300\nblkio.throttle.write_iops_device=8:0 200\n",
          "v1 blkio: values as given, one line per device, a zero weight skipped");
  cg_file ("blkio.weight", false);
  cg_file ("blkio.weight_device", false);
  record (v1_blkio, b, got, sizeof got, &err);
  ok (strncmp (got, "blkio.bfq.weight=500\nblkio.bfq.weight_device=8:0 100\n", 52) == 0,
      "v1 blkio without CFQ's files: BFQ's blkio.bfq.weight instead");
  ar_spec_free (s);

  s = parse ("{\"resources\": {\"blockIO\": {\"leafWeight\": 300}}}");
  ok (record (v2_io, s->linux_->resources->block_io, got, sizeof got, &err) < 0 && err
          && strstr (err->msg, "leafWeight") && strstr (err->msg, "no cgroup v2 equivalent") && !got[0],
      "v2 io: leafWeight is refused, nothing written");
  ar_error_free (err);
  err = NULL;
  ar_spec_free (s);
  s = parse ("{\"resources\": {\"blockIO\": {\"weightDevice\": [{\"major\": 8, \"minor\": 0, \"leafWeight\": 50}]}}}");
  ok (record (v2_io, s->linux_->resources->block_io, got, sizeof got, &err) < 0 && err
          && strstr (err->msg, "weightDevice[0].leafWeight"),
      "v2 io: a device's leafWeight is refused, naming it");
  ar_error_free (err);
  ar_spec_free (s);
}

/* memory.swap in the spec is memory+swap (v1's memsw); cgroup v2's
 * memory.swap.max is swap alone: the difference, and only with a limit. */
static void
test_memory_swap (void)
{
  char got[1024];
  ar_error *err = NULL;
  cg_file ("memory.swap.max", true);
  struct ar_spec *s = parse ("{\"resources\": {\"memory\": {\"limit\": 1073741824, \"swap\": 3221225472}}}");
  is_int (record (v2_memory, s->linux_->resources->memory, got, sizeof got, &err), 0, "v2 memory with swap applies");
  ok (strstr (got, "memory.swap.max=2147483648\n") && strstr (got, "memory.max=1073741824\n"),
      "v2 memory: swap.max is memory+swap less the limit");
  ar_spec_free (s);
  s = parse ("{\"resources\": {\"memory\": {\"limit\": 1073741824, \"swap\": 1073741824}}}");
  record (v2_memory, s->linux_->resources->memory, got, sizeof got, &err);
  ok (strstr (got, "memory.swap.max=0\n") != NULL, "v2 memory: swap equal to the limit is no swap at all");
  ar_spec_free (s);
  s = parse ("{\"resources\": {\"memory\": {\"limit\": 1073741824, \"swap\": 536870912}}}");
  ok (record (v2_memory, s->linux_->resources->memory, got, sizeof got, &err) < 0 && err && strstr (err->msg, "below"),
      "v2 memory: memory+swap below the limit is refused");
  ar_error_free (err);
  err = NULL;
  ar_spec_free (s);
  s = parse ("{\"resources\": {\"memory\": {\"swap\": 536870912}}}");
  ok (record (v2_memory, s->linux_->resources->memory, got, sizeof got, &err) < 0 && err
          && strstr (err->msg, "needs memory.limit"),
      "v2 memory: swap without a limit is refused");
  ar_error_free (err);
  err = NULL;
  ar_spec_free (s);
  s = parse ("{\"resources\": {\"memory\": {\"limit\": -1}}}");
  record (v2_memory, s->linux_->resources->memory, got, sizeof got, &err);
  ok (strstr (got, "memory.swap.max=max\n") && strstr (got, "memory.max=max\n"),
      "v2 memory: a limit of -1 lifts swap too, as on v1");
  ar_spec_free (s);
  s = parse ("{\"resources\": {\"memory\": {\"swappiness\": 10}}}");
  ok (record (v2_memory, s->linux_->resources->memory, got, sizeof got, &err) < 0 && err
          && strstr (err->msg, "swappiness"),
      "v2 memory: swappiness has no v2 equivalent: refused");
  ar_error_free (err);
  ar_spec_free (s);
  cg_file ("memory.swap.max", false);
}

static void
test_device_rules (void)
{
  size_t n = 99;
  struct ar_device_cgroup *d = ar_cg_device_rules (NULL, &n);
  is_int (n, 9, "no linux section: the nine default devices");
  ok (n == 9 && d[0].allow && d[0].type == 'c' && d[0].major == 1 && d[0].minor == 3 && strcmp (d[0].access, "rwm") == 0,
      "first default is /dev/null, c 1:3 rwm");
  ok (n == 9 && d[8].major == 136 && d[8].minor == -1, "last default is every pty slave, c 136:*");
  free (d);

  struct ar_spec *s = parse ("{\"resources\": {\"devices\": [{\"allow\": false, \"access\": \"rwm\"}]},"
                             " \"devices\": [{\"path\": \"/dev/fuse\", \"type\": \"c\", \"major\": 10, \"minor\": 229},"
                             "  {\"path\": \"/dev/loop9\", \"type\": \"b\", \"major\": 7, \"minor\": 9},"
                             "  {\"path\": \"/dev/fifo\", \"type\": \"p\", \"major\": 0, \"minor\": 0},"
                             "  {\"path\": \"/dev/u\", \"type\": \"u\", \"major\": 4, \"minor\": 64}]}");
  d = ar_cg_device_rules (s->linux_, &n);
  is_int (n, 1 + 9, "config rules, then the defaults; created devices add no rule (runc's semantics)");
  ok (n == 10 && !d[0].allow, "the config's deny-all comes first, so the defaults after it still hold");
  bool fuse = false, loop = false, u = false;
  for (size_t i = 0; i < n; i++)
    {
      fuse = fuse || (d[i].major == 10 && d[i].minor == 229);
      loop = loop || d[i].type == 'b';
      u = u || d[i].major == 4;
    }
  ok (!fuse, "a created char device is not allowed by being created");
  ok (!loop, "nor a created block device");
  ok (!u, "nor an unbuffered 'u' device: resources.devices governs them all");
  free (d);
  ar_spec_free (s);
}

static void
key_of (const char *seccomp, unsigned char key[AR_SHA256_LEN])
{
  char buf[2048];
  snprintf (buf, sizeof buf, "{\"seccomp\": %s}", seccomp);
  struct ar_spec *s = parse (buf);
  ar_seccomp_cache_key (s->linux_->seccomp, key);
  ar_spec_free (s);
}

#define BASE "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"architectures\": [\"SCMP_ARCH_X86_64\"], \"syscalls\": ["
static void
key_differs (const char *a, const char *b, const char *what)
{
  unsigned char ka[AR_SHA256_LEN], kb[AR_SHA256_LEN];
  key_of (a, ka);
  key_of (b, kb);
  ok (memcmp (ka, kb, sizeof ka) != 0, "seccomp cache key differs: %s", what);
}

static void
test_seccomp_key (void)
{
  static const unsigned char abc[AR_SHA256_LEN] = {
    0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
    0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad,
  };
  unsigned char k1[AR_SHA256_LEN], k2[AR_SHA256_LEN];
  ar_sha256 ("abc", 3, k1);
  ok (memcmp (k1, abc, sizeof abc) == 0, "sha256 of \"abc\" is the FIPS 180-2 vector");

  const char *p = BASE "{\"names\": [\"read\", \"write\"], \"action\": \"SCMP_ACT_ALLOW\"}]}";
  key_of (p, k1);
  key_of (p, k2);
  ok (memcmp (k1, k2, sizeof k1) == 0, "seccomp cache key is the same for the same profile");
  unsigned char k3[AR_SHA256_LEN];
  key_of ("{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"architectures\": [\"SCMP_ARCH_X86_64\"],"
          " \"listenerMetadata\": \"other\", \"syscalls\": [{\"names\": [\"read\", \"write\"], \"action\": "
          "\"SCMP_ACT_ALLOW\"}]}",
          k3);
  ok (memcmp (k1, k3, sizeof k1) == 0, "seccomp cache key ignores what is not compiled (listenerMetadata)");
  key_differs (p, BASE "{\"names\": [\"read\", \"writev\"], \"action\": \"SCMP_ACT_ALLOW\"}]}", "a name");
  key_differs (p, BASE "{\"names\": [\"readwrite\"], \"action\": \"SCMP_ACT_ALLOW\"}]}", "names split differently");
  key_differs (p, BASE "{\"names\": [\"read\", \"write\"], \"action\": \"SCMP_ACT_LOG\"}]}", "an action");
  key_differs (BASE "{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 1}]}",
               BASE "{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 2}]}", "an errnoRet");
  key_differs (BASE "{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ERRNO\"}]}",
               BASE "{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 1}]}",
               "errnoRet absent or given");
  key_differs (p,
               BASE "{\"names\": [\"read\", \"write\"], \"action\": \"SCMP_ACT_ALLOW\","
                    " \"args\": [{\"index\": 0, \"value\": 1, \"op\": \"SCMP_CMP_EQ\"}]}]}",
               "an argument");
  key_differs (BASE "{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\","
                    " \"args\": [{\"index\": 0, \"value\": 1, \"op\": \"SCMP_CMP_EQ\"}]}]}",
               BASE "{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\","
                    " \"args\": [{\"index\": 0, \"value\": 1, \"op\": \"SCMP_CMP_NE\"}]}]}",
               "an argument's op");
  key_differs (p,
               "{\"defaultAction\": \"SCMP_ACT_KILL\", \"architectures\": [\"SCMP_ARCH_X86_64\"],"
               " \"syscalls\": [{\"names\": [\"read\", \"write\"], \"action\": \"SCMP_ACT_ALLOW\"}]}",
               "the default action");
  key_differs (p,
               "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"architectures\": [\"SCMP_ARCH_X86_64\", \"SCMP_ARCH_X86\"],"
               " \"syscalls\": [{\"names\": [\"read\", \"write\"], \"action\": \"SCMP_ACT_ALLOW\"}]}",
               "the architectures");
  key_differs (p,
               BASE "{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\"},"
                    " {\"names\": [\"write\"], \"action\": \"SCMP_ACT_ALLOW\"}]}",
               "rules split in two");
}

static void
test_exit_status (void)
{
  is_int (ar_process_exit_status (AR_STEP_LOOKUP, ENOENT), 127, "lookup: no such command -> 127");
  is_int (ar_process_exit_status (AR_STEP_LOOKUP, ENOTDIR), 127, "lookup: a path through a file -> 127");
  is_int (ar_process_exit_status (AR_STEP_LOOKUP, EACCES), 126, "lookup: found, not executable -> 126");
  is_int (ar_process_exit_status (AR_STEP_EXECVE, EACCES), 126, "execve: EACCES -> 126");
  is_int (ar_process_exit_status (AR_STEP_EXECVE, ENOENT), 1, "execve: ENOENT (the interpreter) -> 1");
  is_int (ar_process_exit_status (AR_STEP_EXECVE, ENOEXEC), 1, "execve: ENOEXEC -> 1");
  is_int (ar_process_exit_status (0, EACCES), 1, "another step's EACCES -> 1");
  is_int (ar_process_exit_status (0, 0), 1, "no step, no errno -> 1");

  /* the error object carries them, and the words stay the caller's */
  ar_error *err = NULL;
  ar_err_coded (&err, EACCES, AR_STEP_EXECVE, "exec: \"%s\": permission denied", "/x");
  is_str (err->msg, "exec: \"/x\": permission denied", "ar_err_coded appends no strerror");
  is_int (err->errnum, EACCES, "ar_err_coded keeps errnum");
  is_int (err->code, AR_STEP_EXECVE, "ar_err_coded keeps the step");
  ar_err_coded (&err, ENOENT, AR_STEP_LOOKUP, "second");
  is_str (err->msg, "exec: \"/x\": permission denied", "ar_err_coded keeps the first error");
  ar_error_free (err);
  err = NULL;
  ar_err (&err, ENOENT, "open x");
  is_int (err->code, 0, "ar_err names no step");
  ar_error_free (err);

  /* what ar_process_lookup says, with a PATH that has no such command */
  struct ar_spec *s = parse ("{\"namespaces\": [{\"type\": \"mount\"}]}");
  char *path = NULL;
  free (s->process->args[0]);
  s->process->args[0] = strdup ("agentrun-unit-no-such-command");
  err = NULL;
  ok (ar_process_lookup (s->process, &path, &err) < 0, "lookup of a missing command fails");
  is_int (ar_process_exit_status (err->code, err->errnum), 127, "... and its error maps to 127");
  ok (strstr (err->msg, "executable file not found in $PATH") != NULL, "... in runc's words");
  ar_error_free (err);
  ar_spec_free (s);
}

static struct ar_spec *
parse_process (const char *process_extra, const char *linux_json)
{
  char buf[4096];
  ar_error *err = NULL;
  struct ar_spec *s = NULL;
  snprintf (buf, sizeof buf,
            "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"rootfs\"},"
            " \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"user\": {\"uid\": 1000, \"gid\": 1000}%s},"
            " \"linux\": %s}",
            process_extra, linux_json);
  if (ar_spec_parse (buf, strlen (buf), "config.json", &s, &err) < 0)
    {
      printf ("Bail out! %s\n", err->msg);
      exit (1);
    }
  return s;
}

static void
confined (const char *process_extra, const char *linux_json, uid_t uid, bool want, const char *what)
{
  struct ar_spec *s = parse_process (process_extra, linux_json);
  ok (ar_container_confined_to (s, uid) == want, "%s: %s", want ? "one uid" : "not one uid", what);
  ar_spec_free (s);
}

#define NO_CAPS                                                                                                        \
  ", \"noNewPrivileges\": true, \"capabilities\": {\"bounding\": [], \"effective\": [],"                               \
  " \"inheritable\": [], \"permitted\": [], \"ambient\": []}"
#define USERNS(uidmap, gidmap)                                                                                         \
  "{\"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"user\"}], \"uidMappings\": [" uidmap "],"                     \
  " \"gidMappings\": [" gidmap "]}"
#define MAP(c, h, n) "{\"containerID\": " #c ", \"hostID\": " #h ", \"size\": " #n "}"

static void
test_confined (void)
{
  confined (NO_CAPS, USERNS (MAP (1000, 1000, 1), MAP (1000, 1000, 1)), 1000, true, "the sandbox's config");
  confined (NO_CAPS, USERNS (MAP (0, 1000, 1), MAP (0, 1000, 1)), 1000, true, "root of the namespace mapped to it");
  confined (", \"noNewPrivileges\": true", USERNS (MAP (1000, 1000, 1), MAP (1000, 1000, 1)), 1000, true,
            "no capabilities object at all (none are given)");
  confined (NO_CAPS, USERNS (MAP (1000, 1000, 1), MAP (1000, 1000, 1)), 1001, false, "another uid mapped");
  confined (NO_CAPS, USERNS (MAP (0, 1000, 2), MAP (1000, 1000, 1)), 1000, false, "two uids mapped");
  confined (NO_CAPS, USERNS (MAP (1000, 1000, 1) "," MAP (0, 0, 1), MAP (1000, 1000, 1)), 1000, false,
            "a second uid mapping");
  confined (NO_CAPS, USERNS (MAP (1000, 1000, 1), MAP (0, 1000, 10)), 1000, false, "ten gids mapped");
  confined (", \"capabilities\": {}", USERNS (MAP (1000, 1000, 1), MAP (1000, 1000, 1)), 1000, false, "no no_new_privs");
  confined (", \"noNewPrivileges\": true, \"capabilities\": {\"bounding\": [\"CAP_CHOWN\"]}",
            USERNS (MAP (1000, 1000, 1), MAP (1000, 1000, 1)), 1000, false, "a capability in bounding");
  confined (", \"noNewPrivileges\": true, \"capabilities\": {\"ambient\": [\"CAP_NET_RAW\"]}",
            USERNS (MAP (1000, 1000, 1), MAP (1000, 1000, 1)), 1000, false, "a capability in ambient");
  confined (NO_CAPS, "{\"namespaces\": [{\"type\": \"mount\"}]}", 1000, false, "no user namespace");
  confined (NO_CAPS, "{\"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"user\", \"path\": \"/proc/1/ns/user\"}]}",
            1000, false, "a user namespace joined, not its own");
}

/* run.agentrun.nested-userns VALUE on a config whose process is 1000:1000
 * (plus PROCESS_EXTRA): accepted (want) or refused with a message naming
 * the annotation. */
static void
nested (const char *value, const char *process_extra, const char *linux_json, bool want, const char *what)
{
  char buf[4096];
  ar_error *err = NULL;
  struct ar_spec *s = NULL;
  struct ar_nested_userns n;
  snprintf (buf, sizeof buf,
            "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"rootfs\"},"
            " \"annotations\": {\"" AR_NESTED_USERNS_ANNOTATION "\": \"%s\"},"
            " \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"user\": {\"uid\": 1000, \"gid\": 1000%s}},"
            " \"linux\": %s}",
            value, process_extra, linux_json);
  if (ar_spec_parse (buf, strlen (buf), "config.json", &s, &err) < 0)
    {
      printf ("Bail out! %s\n", err->msg);
      exit (1);
    }
  int r = ar_ns_nested_read (s, &n, &err);
  if (want)
    ok (r == 0 && n.on && n.uid == 1000 && n.gid == 1000, "nested user namespace: %s", what);
  else
    ok (r < 0 && !n.on && strstr (err->msg, AR_NESTED_USERNS_ANNOTATION), "nested user namespace refused: %s", what);
  ar_error_free (err);
  ar_spec_free (s);
}

static void
test_nested (void)
{
  const char *root_alone = USERNS (MAP (0, 1000, 1), MAP (0, 1000, 1));
  nested ("1000:1000", "", root_alone, true, "the sandbox's config");
  nested ("1000", "", root_alone, false, "no gid");
  nested ("1000:", "", root_alone, false, "an empty gid");
  nested ("+1000:1000", "", root_alone, false, "a sign");
  nested ("1000:1000 ", "", root_alone, false, "a trailing space");
  nested ("4294967295:1000", "", root_alone, false, "the kernel's invalid id");
  nested ("99999999999:1000", "", root_alone, false, "an id beyond 32 bits");
  nested ("0:0", "", root_alone, false, "the outer root itself");
  nested ("1001:1000", "", root_alone, false, "not the process's uid");
  nested ("1000:1000", ", \"additionalGids\": [27]", root_alone, false, "an additional gid it cannot map");
  nested ("1000:1000", "", USERNS (MAP (1000, 1000, 1), MAP (0, 1000, 1)), false, "the outer map is not root's");
  nested ("1000:1000", "", USERNS (MAP (0, 1000, 2), MAP (0, 1000, 1)), false, "two ids in the outer map");
  nested ("1000:1000", "", "{\"namespaces\": [{\"type\": \"mount\"}]}", false, "no user namespace");
  nested ("1000:1000", "", "{\"namespaces\": [{\"type\": \"user\", \"path\": \"/proc/1/ns/user\"}]}", false,
          "a user namespace joined");
}

/* In a child: fds on chosen numbers, the runtime's close-on-exec, the
 * caller's not; which survive ar_close_fds_except, one bit each. */
static int
fds_left (void)
{
  static const struct {
    int fd;
    bool cloexec;
  } made[] = { { 5, false }, { 6, true }, { 20, true }, { 21, true }, { 40, false }, { 41, false } };
  pid_t pid = fork ();
  if (pid == 0)
    {
      /* above every number made: the caller (bats, make) may hold 3 to 5 */
      int null = fcntl (open ("/dev/null", O_RDONLY | O_CLOEXEC), F_DUPFD_CLOEXEC, 100);
      for (size_t i = 0; i < sizeof made / sizeof *made; i++)
        if (null < 0 || dup3 (null, made[i].fd, made[i].cloexec ? O_CLOEXEC : 0) < 0)
          _exit (255);
      int keep[] = { 41, -1, 20 };
      /* 3 .. 6 preserved: 5 (the caller's) stays, 6 (the runtime's) goes */
      if (ar_close_fds_except (keep, 3, 4) < 0)
        _exit (255);
      int bits = 0;
      for (size_t i = 0; i < sizeof made / sizeof *made; i++)
        if (fcntl (made[i].fd, F_GETFD) >= 0)
          bits |= 1 << i;
      _exit (bits);
    }
  int st;
  return pid > 0 && waitpid (pid, &st, 0) == pid && WIFEXITED (st) ? WEXITSTATUS (st) : -1;
}

static void
test_close_fds (void)
{
  /* bits: 5, 6, 20, 21, 40, 41 */
  is_int (fds_left (), (1 << 0) | (1 << 2) | (1 << 5),
          "close_fds_except: the kept ones and the caller's preserved ones stay, nothing else");
}

int
main (void)
{
  snprintf (cgdir, sizeof cgdir, "%s/agentrun-unit-cg.XXXXXX", getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp");
  if (!mkdtemp (cgdir))
    {
      printf ("Bail out! mkdtemp\n");
      return 1;
    }
  test_conversions ();
  test_controller_lists ();
  test_blkio ();
  test_memory_swap ();
  rmdir (cgdir);
  test_device_rules ();
  test_seccomp_key ();
  test_exit_status ();
  test_confined ();
  test_nested ();
  test_close_fds ();
  return done_testing ();
}
