/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Landlock user-space API values newer than the build host's kernel headers.
 *
 * Debian 12 ships linux-libc-dev 6.1 (Landlock ABI 2 in the headers: no
 * TRUNCATE, no network rules, no IOCTL_DEV, no scoping).  The values below are
 * the upstream kernel's (include/uapi/linux/landlock.h); each is guarded so a
 * newer header wins.  The structs are our own spellings of the kernel's
 * extensible structs, because the 6.1 `struct landlock_ruleset_attr` lacks the
 * later members: the kernel reads them by size (copy_struct_from_user), so
 * passing the size that matches the ABI in use is what matters.
 *
 * Private to plugins/linux; never installed.
 */
#pragma once

#include <stdint.h>
#include <linux/landlock.h>
#include <sys/syscall.h>

/* Syscall numbers: unified (424+) on every architecture we build for. */
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif

/* Rule types (enum values upstream, so not testable with #ifdef: our own
 * names with the kernel's stable values). */
#define SBX_LANDLOCK_RULE_PATH_BENEATH 1
#define SBX_LANDLOCK_RULE_NET_PORT     2  /* ABI 4, Linux 6.7 */

/* Filesystem access rights.  ABI 1: bits 0..12 (present in the 6.1 headers). */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER        (1ULL << 13)  /* ABI 2, Linux 5.19 */
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE     (1ULL << 14)  /* ABI 3, Linux 6.2 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV    (1ULL << 15)  /* ABI 5, Linux 6.10 */
#endif

/* Network access rights (ABI 4, Linux 6.7) */
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP    (1ULL << 0)
#endif
#ifndef LANDLOCK_ACCESS_NET_CONNECT_TCP
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif

/* Scopes (ABI 6, Linux 6.12) */
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL               (1ULL << 1)
#endif

/* The highest ABI whose semantics this code knows.  ABI 7 (Linux 6.15) only
 * added audit-logging flags for landlock_restrict_self(); we keep the kernel's
 * default logging.  A kernel reporting more is used at this level. */
#define SBX_LANDLOCK_ABI_MAX 7

/* struct landlock_ruleset_attr as of ABI 6.  Size by ABI: 8 bytes (ABI 1..3),
 * 16 (ABI 4..5: handled_access_net), 24 (ABI 6+: scoped). */
struct sbx_landlock_ruleset_attr
{
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

/* struct landlock_path_beneath_attr: packed upstream (12 bytes). */
struct sbx_landlock_path_beneath_attr
{
  uint64_t allowed_access;
  int32_t  parent_fd;
} __attribute__ ((packed));

/* struct landlock_net_port_attr (ABI 4): not packed, 16 bytes. */
struct sbx_landlock_net_port_attr
{
  uint64_t allowed_access;
  uint64_t port;
};

_Static_assert (sizeof (struct sbx_landlock_path_beneath_attr) == 12, "packed path_beneath_attr");
_Static_assert (sizeof (struct sbx_landlock_net_port_attr) == 16, "net_port_attr");
_Static_assert (sizeof (struct sbx_landlock_ruleset_attr) == 24, "ruleset_attr (ABI 6)");
