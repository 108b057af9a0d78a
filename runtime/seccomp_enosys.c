/* A few BPF instructions put in front of libseccomp's program: a syscall
 * whose number is above every syscall the profile names (for that
 * architecture) fails with ENOSYS instead of the default action. Such a
 * call is newer than the profile (clone3 under a profile written before
 * it, or a number the kernel does not know at all), and ENOSYS is what
 * makes libc fall back to the older call; a borrowed EPERM would not.
 * libseccomp has no way to say this, so the prefix is ours; it is built
 * with the rest of the filter and cached with it. */
#include "config.h"
#include "seccomp.h"
#include "util.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#define MAX_ARCHES 16
#define X32_SYSCALL_BIT 0x40000000u

/* The highest number a name of the profile has on `arch`; -1 if none. */
static long
highest_named (const struct ar_seccomp *sc, uint32_t arch)
{
  long max = -1;
  size_t i, j;
  for (i = 0; i < sc->n_syscalls; i++)
    for (j = 0; j < sc->syscalls[i].n_names; j++)
      {
        int nr = seccomp_syscall_resolve_name_arch (arch, sc->syscalls[i].names[j]);
        /* negative: unknown, or a pseudo number for a call this arch lacks */
        if (nr >= 0 && nr > max)
          max = nr;
      }
  return max;
}

/* The architectures the filter covers that the kernel reports as such
 * (x32 shares x86-64's audit value: its calls are told by a number bit). */
static size_t
filter_arches (const struct ar_seccomp *sc, uint32_t *out)
{
  size_t n = 0, i, k;
  uint32_t a;
  out[n++] = seccomp_arch_native ();
  for (i = 0; i < sc->n_architectures && n < MAX_ARCHES; i++)
    {
      if (ar_seccomp_arch_value (sc->architectures[i], &a) < 0 || a == SCMP_ARCH_X32)
        continue;
      for (k = 0; k < n && out[k] != a; k++)
        ;
      if (k == n)
        out[n++] = a;
    }
  return n;
}

static struct sock_filter
stmt (unsigned short code, unsigned int k)
{
  return (struct sock_filter) BPF_STMT (code, k);
}

static struct sock_filter
jump (unsigned short code, unsigned int k, unsigned char jt, unsigned char jf)
{
  return (struct sock_filter) BPF_JUMP (code, k, jt, jf);
}

int
ar_seccomp_enosys_prefix (const struct ar_seccomp *sc, struct ar_seccomp_prog *prog, ar_error **err)
{
  uint32_t arches[MAX_ARCHES];
  size_t n_arches = filter_arches (sc, arches), i, n = 0;
  /* per arch at most 4 instructions; one load in front, a jump and a return after */
  struct sock_filter pre[MAX_ARCHES * 4 + 3];
  size_t jgt_at[MAX_ARCHES], x32_at[MAX_ARCHES], n_jgt = 0;

  pre[n++] = stmt (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch));
  for (i = 0; i < n_arches; i++)
    {
      long max = highest_named (sc, arches[i]);
      bool x86_64 = arches[i] == AUDIT_ARCH_X86_64;
      if (max < 0)
        continue;
      /* skip this block when the arch differs (the block's length less one) */
      pre[n++] = jump (BPF_JMP | BPF_JEQ | BPF_K, arches[i], 0, x86_64 ? 3 : 2);
      pre[n++] = stmt (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr));
      x32_at[n_jgt] = x86_64 ? n : (size_t) -1;
      if (x86_64)
        pre[n++] = jump (BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 0, 0);
      jgt_at[n_jgt++] = n;
      pre[n++] = jump (BPF_JMP | BPF_JGT | BPF_K, (unsigned int) max, 0, 0);
    }
  if (n_jgt == 0)
    return 0;
  pre[n++] = jump (BPF_JMP | BPF_JA, 1, 0, 0);
  size_t enosys = n, main = n + 1;
  pre[n++] = stmt (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA));
  for (i = 0; i < n_jgt; i++)
    {
      /* above the highest: ENOSYS; else on to libseccomp's program */
      pre[jgt_at[i]].jt = (unsigned char) (enosys - jgt_at[i] - 1);
      pre[jgt_at[i]].jf = (unsigned char) (main - jgt_at[i] - 1);
      /* an x32 number is libseccomp's to judge */
      if (x32_at[i] != (size_t) -1)
        pre[x32_at[i]].jt = (unsigned char) (main - x32_at[i] - 1);
    }
  if (prog->len + n > BPF_MAXINSNS)
    return ar_err (err, 0, "seccomp: the profile compiles to %zu BPF instructions, more than the kernel's %d",
                   prog->len + n, BPF_MAXINSNS);
  struct sock_filter *all = xmalloc0 ((prog->len + n) * sizeof *all);
  memcpy (all, pre, n * sizeof *all);
  memcpy (all + n, prog->insns, prog->len * sizeof *all);
  free (prog->insns);
  prog->insns = all;
  prog->len += n;
  return 0;
}
