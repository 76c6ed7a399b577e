/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Landlock for the Linux backend (both rungs).
 *
 * Compile once, spawn many: sbx_landlock_plan_new() runs in the parent when
 * the executor is created (GLib allowed).  It resolves the policy into a flat
 * list of (O_PATH fd, access mask) rules, opened O_CLOEXEC with
 * openat2(RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS) where the path must not
 * be followed, plus the handled access masks for this ABI.
 *
 * sbx_landlock_plan_apply() runs in the child between clone() and execve():
 * raw syscalls only (no malloc, no locks, no GLib, async-signal-safe).  It
 * creates a fresh ruleset, replays the rules (plus @extra rules for inodes that
 * exist only inside the child, such as a fresh /proc, the minimal /dev tmpfs
 * and devpts at rung 1), and restricts the calling thread.  The plan is
 * read-only after creation and may be applied concurrently by many children.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include <sbx/sbx-plugin-abi.h>
#include "sbx-linux-report.h"

G_BEGIN_DECLS

/* Best Landlock ABI of this kernel (0 when Landlock is unavailable or disabled).
 * Never cached here: the caller caches. */
int sbx_landlock_probe_abi (void);

/* SbxLandlockOptions.rung */
#define SBX_LANDLOCK_RUNG_USERNS    1  /* rung 1: on top of a mount view in fresh namespaces */
#define SBX_LANDLOCK_RUNG_LANDLOCK  2  /* rung 2: Landlock is the filesystem boundary */

typedef struct
{
  int      abi;       /* sbx_landlock_probe_abi() result, >= 1; a lower value simulates an
                       * older kernel (tests); a higher one than the kernel's is refused */
  int      rung;      /* SBX_LANDLOCK_RUNG_* */
  gboolean net;       /* also handle TCP bind/connect per policy->net (rung 2; needs ABI >= 4) */
  /* Rung 1 only, may be NULL:
   * NULL-terminated host paths that become mount roots of the child's view
   * (bind-mount sources).  Landlock accumulates rules along the path walk the
   * child makes, and that walk never reaches the host ancestors of a bind
   * mount, so a tree rule on a host ancestor (for example "/" when host read
   * is allowed) would not cover the bound subtree.  For each root the plan
   * adds the access the policy grants there, carved like any other rule. */
  const char *const *mount_roots;
} SbxLandlockOptions;

typedef struct _SbxLandlockPlan SbxLandlockPlan;

/* Achieved bits: what the plan enforces, for the backend's guarantee bits. */
#define SBX_LANDLOCK_ENFORCES_READ    (1u << 0)  /* read/exec boundary as the policy asks (or narrower) */
#define SBX_LANDLOCK_ENFORCES_WRITE   (1u << 1)  /* write boundary */
#define SBX_LANDLOCK_ENFORCES_NET     (1u << 2)  /* TCP connect/bind per policy->net */
#define SBX_LANDLOCK_ENFORCES_SCOPE   (1u << 3)  /* signals and abstract unix sockets scoped (ABI >= 6) */
/* ABI 1..2: the write boundary holds except truncate(2) by path and
 * open(O_RDONLY|O_TRUNC), which Landlock mediates only from ABI 3
 * (LANDLOCK_ACCESS_FS_TRUNCATE).  The seccomp program closes that gap when
 * built with SbxSeccompOptions.landlock_abi set; then the glue may claim the
 * write boundary. */
#define SBX_LANDLOCK_ENFORCES_WRITE_EXCEPT_TRUNCATE (1u << 4)

SbxLandlockPlan *sbx_landlock_plan_new      (const SbxPolicyV1        *policy,
                                             const SbxLandlockOptions *options,
                                             const SbxLinuxReporter   *reporter,
                                             GError                  **error);
void             sbx_landlock_plan_free     (SbxLandlockPlan          *plan);
uint32_t         sbx_landlock_plan_enforces (const SbxLandlockPlan    *plan);

typedef struct
{
  int      fd;        /* O_PATH fd valid in the child */
  uint64_t access;    /* LANDLOCK_ACCESS_FS_* (masked to the plan's handled set by apply) */
} SbxLandlockExtraRule;

/* Introspection (tests, doctor): the ABI the plan was built for and the
 * handled masks of its ruleset (LANDLOCK_ACCESS_FS_*, LANDLOCK_ACCESS_NET_*,
 * LANDLOCK_SCOPE_*), and the number of rules it replays. */
int      sbx_landlock_plan_abi                 (const SbxLandlockPlan *plan);
uint64_t sbx_landlock_plan_handled_access_fs   (const SbxLandlockPlan *plan);
uint64_t sbx_landlock_plan_handled_access_net  (const SbxLandlockPlan *plan);
/* The ports TCP connects may reach when the plan handles
 * LANDLOCK_ACCESS_NET_CONNECT_TCP (for the connect supervisor, whose own
 * connects Landlock does not see). */
const uint64_t *sbx_landlock_plan_tcp_ports (const SbxLandlockPlan *plan,
                                             size_t                *n_ports);
uint64_t sbx_landlock_plan_scoped              (const SbxLandlockPlan *plan);
size_t   sbx_landlock_plan_n_rules             (const SbxLandlockPlan *plan);

/* Access masks for @extra rules, already limited to the plan's ABI. */
uint64_t sbx_landlock_plan_access_read_dir   (const SbxLandlockPlan *plan);  /* read + list a tree */
uint64_t sbx_landlock_plan_access_rw_dir     (const SbxLandlockPlan *plan);  /* read + write a tree */
uint64_t sbx_landlock_plan_access_rw_file    (const SbxLandlockPlan *plan);  /* read + write a file (device) */

/* Child side.  Sets no_new_privs, builds and applies the ruleset.  Returns 0,
 * or a negative errno with *failed_step pointing at a static string naming the
 * syscall ("landlock_create_ruleset", "landlock_add_rule", ...).
 *
 * Async-signal-safe and errno-neutral: raw system calls only (see
 * sbx-raw-syscall.h), no allocation, no locks, no sanitizer instrumentation,
 * so it may run in a CLONE_VM child.  Rules whose inode no longer matches the
 * snapshot (a carved child replaced, a file that gained a hard link) are
 * skipped, which only narrows; a file that gains a link while its rule is
 * being added fails the whole call (-EMLINK), one deleted meanwhile does not
 * (no name reaches it any more). */
int sbx_landlock_plan_apply (const SbxLandlockPlan       *plan,
                             const SbxLandlockExtraRule  *extra,
                             size_t                       n_extra,
                             const char                 **failed_step);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxLandlockPlan, sbx_landlock_plan_free)

G_END_DECLS
