/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One inline-assembly system call, shared by the child path of the backend
 * (sbx-raw-syscall.h) and by the freestanding sbx-init (no libc at all), so
 * the register conventions and clobber lists exist once.
 *
 * Freestanding on purpose: no include, no errno.  sbx_arch_syscall6()
 * returns the kernel's value (-errno in [-4095, -1] on failure) and touches no
 * memory but its arguments.  Defines SBX_HAVE_ARCH_SYSCALL on the
 * architectures it covers; elsewhere the includer provides a fallback.
 *
 * An includer may define SBX_ARCH_SYSCALL_ATTRS first (e.g. no_sanitize).
 */
#ifndef SBX_SYSCALL_ARCH_H
#define SBX_SYSCALL_ARCH_H

#ifndef SBX_ARCH_SYSCALL_ATTRS
#define SBX_ARCH_SYSCALL_ATTRS
#endif

#if defined(__x86_64__)

#define SBX_HAVE_ARCH_SYSCALL 1

SBX_ARCH_SYSCALL_ATTRS static inline long
sbx_arch_syscall6 (long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
  register long r10 __asm__ ("r10") = a4;
  register long r8 __asm__ ("r8") = a5;
  register long r9 __asm__ ("r9") = a6;
  long ret;

  /* The kernel clobbers rcx (return address) and r11 (flags). */
  __asm__ volatile ("syscall"
                    : "=a" (ret)
                    : "a" (n), "D" (a1), "S" (a2), "d" (a3), "r" (r10), "r" (r8), "r" (r9)
                    : "rcx", "r11", "memory");
  return ret;
}

#elif defined(__aarch64__)

#define SBX_HAVE_ARCH_SYSCALL 1

SBX_ARCH_SYSCALL_ATTRS static inline long
sbx_arch_syscall6 (long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
  register long x8 __asm__ ("x8") = n;
  register long x0 __asm__ ("x0") = a1;
  register long x1 __asm__ ("x1") = a2;
  register long x2 __asm__ ("x2") = a3;
  register long x3 __asm__ ("x3") = a4;
  register long x4 __asm__ ("x4") = a5;
  register long x5 __asm__ ("x5") = a6;

  __asm__ volatile ("svc 0"
                    : "+r" (x0)
                    : "r" (x8), "r" (x1), "r" (x2), "r" (x3), "r" (x4), "r" (x5)
                    : "memory", "cc");
  return x0;
}

#endif

#endif /* SBX_SYSCALL_ARCH_H */
