/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Filesystem denials at rung 2 (linux-landlock): whether this host lets
 * the backend observe Landlock's refusals, and the report entry
 * "fs-denials" that says what holds.
 *
 * At rung 2 Landlock refuses on its own (EACCES) and tells no one but the
 * kernel's audit subsystem: from Landlock ABI 7 (Linux 6.15) a refusal is
 * an AUDIT_LANDLOCK_ACCESS record (domain id, blocked rights, path, pid)
 * followed, the first time a domain shows, by an AUDIT_LANDLOCK_DOMAIN
 * record (domain id, the pid and exe that called landlock_restrict_self).
 * Three conditions must all hold for the backend to see them:
 *  - the kernel's audit is enabled: landlock_log_denial() returns before
 *    writing anything while audit_enabled is 0 (no auditd, no "audit=1"
 *    on the kernel command line).  Enabling it is a system-wide setting
 *    (AUDIT_SET) that changes what every process on the host logs, so the
 *    backend never does;
 *  - the caller may read records: joining the NETLINK_AUDIT multicast
 *    group AUDIT_NLGRP_READLOG needs CAP_AUDIT_READ in the initial user
 *    namespace (root on the host, never an unprivileged user or a
 *    container's root);
 *  - Landlock ABI 7 or later.
 * The backend does not read the records yet (no reader is built), so the
 * entry is always "not observed", with the first condition the host fails,
 * or, where all three hold, with that reason.  It never says "observed".
 *
 * What is measured is measured at each compile (audit can be switched on
 * and off while the process lives), with two short-lived netlink sockets;
 * nothing is left open and nothing on the host is changed.
 */
#pragma once

#include <stddef.h>   /* NULL, for sbx-linux-report.h */
#include <stdint.h>

#include "sbx-linux-report.h"

/* The report entry's feature name; the mount view's supervisor uses the
 * same name at rung 1. */
#define SBX_LINUX_FEATURE_FS_DENIALS "fs-denials"

/* The first condition for reading Landlock's audit records that this host
 * fails, in the order they are checked. */
typedef enum
{
  SBX_LINUX_AUDIT_READABLE = 0,   /* all hold: records would be readable */
  SBX_LINUX_AUDIT_LANDLOCK_OLD,   /* Landlock ABI < 7 logs nothing */
  SBX_LINUX_AUDIT_ABSENT,         /* socket (NETLINK_AUDIT): EPROTONOSUPPORT (no audit in the
                                   * kernel, or an outer sbx sandbox's filter) */
  SBX_LINUX_AUDIT_NO_SOCKET,      /* socket (NETLINK_AUDIT) fails otherwise (a filter of an outer
                                   * sandbox, no memory) */
  SBX_LINUX_AUDIT_NO_CAP,         /* joining AUDIT_NLGRP_READLOG refused (CAP_AUDIT_READ) */
  SBX_LINUX_AUDIT_NO_GROUP,       /* joining it failed otherwise */
  SBX_LINUX_AUDIT_STATE_UNKNOWN,  /* AUDIT_GET failed or went unanswered */
  SBX_LINUX_AUDIT_DISABLED,       /* AUDIT_GET says audit is disabled */
} SbxLinuxAuditHost;

typedef struct
{
  int host;          /* SbxLinuxAuditHost */
  int landlock_abi;  /* the kernel's, as probed */
  int err;           /* errno of the failed step (all but READABLE, LANDLOCK_OLD, DISABLED) */
} SbxLinuxAudit;

/* Measures this host for the calling process (never fails; what it could
 * not learn is a state of its own).  @landlock_abi: the probe's. */
void  sbx_linux_audit_measure (int            landlock_abi,
                               SbxLinuxAudit *out);
/* The entry's detail for @audit, "not observed: ...", and its status
 * (SBX_ABI_REPORT_UNENFORCED) in *status.  Free with g_free(). */
char *sbx_linux_audit_detail  (const SbxLinuxAudit *audit,
                               uint32_t            *status);
/* Measures and adds the "fs-denials" entry of a rung-2 compile. */
void  sbx_linux_audit_report  (int                     landlock_abi,
                               const SbxLinuxReporter *reporter);
