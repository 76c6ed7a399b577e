/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The win32-restricted compiler: policy IR -> token and Job object settings.
 *
 * Portable C11 against sbx-plugin-abi.h and libc only (no <windows.h>, no
 * GLib): it runs on Linux for explain() and the unit tests, and in the
 * mingw-w64 build where sbx-win32-spawn.c applies it.  The numeric values
 * below are the Windows SDK's; the Windows glue _Static_asserts each one
 * against <windows.h>.
 *
 * What the backend is, honestly: a restricted token (every privilege but
 * SeChangeNotifyPrivilege removed, the administrator-class groups made
 * deny-only) inside a Job object (kill on close, no breakaway, the process
 * and memory limits, UI limits, each read back) with an explicit handle list
 * (only the three standard handles cross) and the host's scrubbed
 * environment.  A restricted token is neither a process boundary (the
 * child can still reach the user's session brokers and processes) nor a
 * file or network boundary (it runs with the user's file and network
 * access).  So it claims only ENV_SCRUB, RESOURCE_LIMITS when limits are
 * asked and LEVEL_NONE, and accepts only acknowledged Unconfined policies
 * (SBX_PROBE_UNCONFINED_ONLY): it runs them with more hardening than
 * promised, and refuses every Sandboxed policy with the reason.
 */
#ifndef SBX_WIN32_PLAN_H
#define SBX_WIN32_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include <sbx/sbx-plugin-abi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CreateRestrictedToken flags */
#define SBX_W32_DISABLE_MAX_PRIVILEGE  0x1u
#define SBX_W32_LUA_TOKEN              0x4u
/* JOBOBJECT_BASIC_LIMIT_INFORMATION.LimitFlags */
#define SBX_W32_JOB_LIMIT_ACTIVE_PROCESS            0x00000008u
#define SBX_W32_JOB_LIMIT_JOB_MEMORY                0x00000200u
#define SBX_W32_JOB_LIMIT_DIE_ON_UNHANDLED_EXCEPTION 0x00000400u
#define SBX_W32_JOB_LIMIT_BREAKAWAY_OK              0x00000800u
#define SBX_W32_JOB_LIMIT_SILENT_BREAKAWAY_OK       0x00001000u
#define SBX_W32_JOB_LIMIT_KILL_ON_JOB_CLOSE         0x00002000u
/* JOBOBJECT_BASIC_UI_RESTRICTIONS.UIRestrictionsClass */
#define SBX_W32_UILIMIT_HANDLES          0x01u
#define SBX_W32_UILIMIT_READCLIPBOARD    0x02u
#define SBX_W32_UILIMIT_WRITECLIPBOARD   0x04u
#define SBX_W32_UILIMIT_SYSTEMPARAMETERS 0x08u
#define SBX_W32_UILIMIT_DISPLAYSETTINGS  0x10u
#define SBX_W32_UILIMIT_GLOBALATOMS      0x20u
#define SBX_W32_UILIMIT_DESKTOP          0x40u
#define SBX_W32_UILIMIT_EXITWINDOWS      0x80u
/* CreateProcess dwCreationFlags */
#define SBX_W32_CREATE_SUSPENDED              0x00000004u
#define SBX_W32_CREATE_NEW_PROCESS_GROUP      0x00000200u
#define SBX_W32_CREATE_UNICODE_ENVIRONMENT    0x00000400u
#define SBX_W32_EXTENDED_STARTUPINFO_PRESENT  0x00080000u

typedef struct
{
  char    *feature;
  uint32_t status;    /* SBX_ABI_REPORT_* */
  char    *detail;
} SbxWin32Entry;

typedef struct
{
  uint32_t            token_flags;        /* SBX_W32_DISABLE_MAX_PRIVILEGE | SBX_W32_LUA_TOKEN */
  const char *const  *deny_only_sids;     /* NULL-terminated string SIDs made deny-only when enabled */
  uint32_t            job_limit_flags;    /* SBX_W32_JOB_LIMIT_*; never a breakaway bit */
  uint32_t            active_process_limit; /* with JOB_LIMIT_ACTIVE_PROCESS */
  uint64_t            job_memory_limit;   /* bytes, with JOB_LIMIT_JOB_MEMORY */
  uint32_t            ui_restrictions;    /* SBX_W32_UILIMIT_* */
  uint32_t            creation_flags;     /* SBX_W32_CREATE_* */
  uint32_t            level;              /* SBX_ABI_LEVEL_* */
  uint64_t            guarantees;         /* SBX_ABI_GUARANTEE_* */
  int32_t             status;             /* SBX_STATUS_OK, or why compile refuses */
  char               *refusal;            /* (nullable) the reason when status != OK */
  size_t              n_entries;
  SbxWin32Entry      *entries;
} SbxWin32Plan;

/* Builds the plan for @policy.  Returns NULL only on OOM or an invalid
 * policy table (message in @err); a policy this backend cannot enforce
 * still gets a plan, with plan->status and plan->refusal saying why, so
 * explain can show both. */
SbxWin32Plan *sbx_win32_plan_new      (const SbxPolicyV1 *policy,
                                       char              *err,
                                       size_t             err_size);
void          sbx_win32_plan_free     (SbxWin32Plan      *plan);
/* The settings as text (malloc'd), one "key: value" per line. */
char         *sbx_win32_plan_describe (const SbxWin32Plan *plan);

/* The string SIDs made deny-only (administrators and the other privileged
 * local groups). */
extern const char *const sbx_win32_deny_only_sids[];

#ifdef __cplusplus
}
#endif

#endif /* SBX_WIN32_PLAN_H */
