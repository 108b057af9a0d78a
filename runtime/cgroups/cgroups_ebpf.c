/* The cgroup v2 device controller is an eBPF program of type
 * BPF_PROG_TYPE_CGROUP_DEVICE attached at BPF_CGROUP_DEVICE. We generate it
 * from the OCI rules: they are tried last to first (the last matching rule
 * decides, as in v1), and a request no rule matches is denied.
 *
 * The program sees struct bpf_cgroup_dev_ctx { access_type, major, minor },
 * access_type = (access << 16) | type. It returns 1 to allow, 0 to deny. */
#include "config.h"
#include "cgroups_internal.h"
#include "util.h"

#include <fcntl.h>
#include <linux/bpf.h>
#include <stddef.h>
#include <sys/syscall.h>

#define R0 BPF_REG_0
#define R1 BPF_REG_1
#define R2 BPF_REG_2
#define R3 BPF_REG_3
#define R4 BPF_REG_4
#define R5 BPF_REG_5
#define R6 BPF_REG_6
#define R7 BPF_REG_7

struct prog {
  struct bpf_insn *insn;
  size_t n, cap;
};

static size_t
emit (struct prog *p, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
  if (p->n == p->cap)
    p->insn = xrealloc (p->insn, (p->cap = p->cap ? p->cap * 2 : 64) * sizeof *p->insn);
  p->insn[p->n] = (struct bpf_insn){ .code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm };
  return p->n++;
}

static void
ldx_w (struct prog *p, uint8_t dst, int16_t off)
{
  emit (p, BPF_LDX | BPF_MEM | BPF_W, dst, R1, off, 0);
}

static int
access_mask (const char *acc)
{
  int m = 0;
  for (const char *c = acc && *acc ? acc : "rwm"; *c; c++)
    m |= *c == 'r' ? BPF_DEVCG_ACC_READ : *c == 'w' ? BPF_DEVCG_ACC_WRITE : *c == 'm' ? BPF_DEVCG_ACC_MKNOD : 0;
  return m;
}

/* One rule: each test jumps past the block when it does not match; the
 * jumps are patched once the block's end is known. Returns 1 when the rule
 * matches every request (nothing after it can run), 0 otherwise. */
static int
emit_rule (struct prog *p, const struct ar_device_cgroup *d, size_t i, ar_error **err)
{
  size_t jumps[4], nj = 0;
  int acc = access_mask (d->access);
  int all = BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE | BPF_DEVCG_ACC_MKNOD;
  if (d->type == 'c' || d->type == 'b')
    jumps[nj++] = emit (p, BPF_JMP | BPF_JNE | BPF_K, R3, 0, 0,
                        d->type == 'c' ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK);
  else if (d->type && d->type != 'a')
    return ar_err (err, 0, "cgroup: linux.resources.devices[%zu].type: \"%c\" is not a, b or c", i, d->type);
  if (acc != all)
    {
      /* allow: every requested bit must be in the rule; deny: any one is. */
      emit (p, BPF_ALU64 | BPF_MOV | BPF_X, R7, R4, 0, 0);
      emit (p, BPF_ALU | BPF_AND | BPF_K, R7, 0, 0, d->allow ? (all & ~acc) : acc);
      jumps[nj++] = emit (p, BPF_JMP | (d->allow ? BPF_JNE : BPF_JEQ) | BPF_K, R7, 0, 0, 0);
    }
  if (d->has_major && d->major >= 0)
    {
      if (d->major > INT32_MAX)
        return ar_err (err, 0, "cgroup: linux.resources.devices[%zu].major is out of range", i);
      jumps[nj++] = emit (p, BPF_JMP | BPF_JNE | BPF_K, R5, 0, 0, (int32_t) d->major);
    }
  if (d->has_minor && d->minor >= 0)
    {
      if (d->minor > INT32_MAX)
        return ar_err (err, 0, "cgroup: linux.resources.devices[%zu].minor is out of range", i);
      jumps[nj++] = emit (p, BPF_JMP | BPF_JNE | BPF_K, R6, 0, 0, (int32_t) d->minor);
    }
  emit (p, BPF_ALU64 | BPF_MOV | BPF_K, R0, 0, 0, d->allow ? 1 : 0);
  emit (p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
  for (size_t j = 0; j < nj; j++)
    p->insn[jumps[j]].off = (int16_t) (p->n - jumps[j] - 1);
  return nj == 0;
}

static int
build (struct prog *p, const struct ar_device_cgroup *d, size_t n, ar_error **err)
{
  ldx_w (p, R2, offsetof (struct bpf_cgroup_dev_ctx, access_type));
  emit (p, BPF_ALU64 | BPF_MOV | BPF_X, R3, R2, 0, 0);
  emit (p, BPF_ALU | BPF_AND | BPF_K, R3, 0, 0, 0xffff); /* type */
  emit (p, BPF_ALU64 | BPF_MOV | BPF_X, R4, R2, 0, 0);
  emit (p, BPF_ALU | BPF_RSH | BPF_K, R4, 0, 0, 16); /* access */
  ldx_w (p, R5, offsetof (struct bpf_cgroup_dev_ctx, major));
  ldx_w (p, R6, offsetof (struct bpf_cgroup_dev_ctx, minor));
  int all = 0;
  /* The verifier refuses unreachable code: stop after a catch-all rule. */
  for (size_t i = n; !all && i-- > 0;)
    if ((all = emit_rule (p, &d[i], i, err)) < 0)
      return -1;
  if (!all)
    {
      emit (p, BPF_ALU64 | BPF_MOV | BPF_K, R0, 0, 0, 0); /* default deny */
      emit (p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
    }
  if (p->n > 4096)
    return ar_err (err, 0, "cgroup: linux.resources.devices: %zu rules make a device program over 4096 instructions", n);
  return 0;
}

static int
load (const struct prog *p, ar_error **err)
{
  static char log[16384];
  union bpf_attr a;
  memset (&a, 0, sizeof a);
  a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  a.insns = (uintptr_t) p->insn;
  a.insn_cnt = p->n;
  a.license = (uintptr_t) "GPL";
  int fd = syscall (SYS_bpf, BPF_PROG_LOAD, &a, sizeof a);
  if (fd >= 0)
    return fd;
  int saved = errno;
  /* Load again with the verifier log so the message says why. */
  a.log_buf = (uintptr_t) log;
  a.log_size = sizeof log;
  a.log_level = 1;
  log[0] = '\0';
  fd = syscall (SYS_bpf, BPF_PROG_LOAD, &a, sizeof a);
  if (fd >= 0)
    return fd;
  for (char *c = log; *c; c++)
    if (*c == '\n')
      *c = ' ';
  return ar_err (err, saved, "cgroup: load the device eBPF program (%zu instructions)%s%s", p->n, *log ? ": " : "", log);
}

int
ar_cg_ebpf_devices (const char *dir, const struct ar_device_cgroup *d, size_t n, ar_error **err)
{
  struct prog p = { 0 };
  cleanup_close int prog = -1;
  cleanup_close int cg = -1;
  int ret = -1;
  if (build (&p, d, n, err) < 0 || (prog = load (&p, err)) < 0)
    goto out;
  cg = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cg < 0)
    {
      ar_err (err, errno, "cgroup: open %s", dir);
      goto out;
    }
  /* No BPF_F_ALLOW_MULTI: attaching again replaces our previous program
   * (update), and nothing below the container can loosen it. */
  union bpf_attr a;
  memset (&a, 0, sizeof a);
  a.target_fd = cg;
  a.attach_bpf_fd = prog;
  a.attach_type = BPF_CGROUP_DEVICE;
  if (syscall (SYS_bpf, BPF_PROG_ATTACH, &a, sizeof a) < 0)
    {
      ar_err (err, errno, "cgroup: attach the device eBPF program to %s", dir);
      goto out;
    }
  ret = 0;
out:
  free (p.insn);
  return ret;
}
