/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The win32-restricted compiler (see sbx-win32-plan.h).  Plain C11 + libc.
 */
#include "sbx-win32-plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Administrators, Power Users, Account/Server/Print/Backup Operators,
 * Replicator, Network Configuration Operators, Remote Desktop Users... as
 * upstream's restricted tier: the groups whose membership confers
 * administrative rights or remote access. */
const char *const sbx_win32_deny_only_sids[] = {
  "S-1-5-32-544", "S-1-5-32-547", "S-1-5-32-548", "S-1-5-32-549", "S-1-5-32-550",
  "S-1-5-32-551", "S-1-5-32-552", "S-1-5-32-555", "S-1-5-32-556", "S-1-5-32-569",
  "S-1-5-32-578", "S-1-5-32-579", "S-1-5-32-580",
  NULL,
};

static int
add_entry (SbxWin32Plan *plan,
           const char   *feature,
           uint32_t      status,
           const char   *detail)
{
  SbxWin32Entry *grown = realloc (plan->entries, (plan->n_entries + 1) * sizeof *grown);

  if (grown == NULL)
    return 0;
  plan->entries = grown;
  grown[plan->n_entries].feature = strdup (feature);
  grown[plan->n_entries].status = status;
  grown[plan->n_entries].detail = detail != NULL ? strdup (detail) : NULL;
  if (grown[plan->n_entries].feature == NULL || (detail != NULL && grown[plan->n_entries].detail == NULL))
    {
      free (grown[plan->n_entries].feature);
      free (grown[plan->n_entries].detail);
      return 0;
    }
  plan->n_entries++;
  return 1;
}

static void
set_err (char       *err,
         size_t      err_size,
         const char *fmt,
         ...) __attribute__ ((format (printf, 3, 4)));

static void
set_err (char       *err,
         size_t      err_size,
         const char *fmt,
         ...)
{
  va_list args;

  if (err == NULL || err_size == 0)
    return;
  va_start (args, fmt);
  vsnprintf (err, err_size, fmt, args);
  va_end (args);
}

void
sbx_win32_plan_free (SbxWin32Plan *plan)
{
  if (plan == NULL)
    return;
  for (size_t i = 0; i < plan->n_entries; i++)
    {
      free (plan->entries[i].feature);
      free (plan->entries[i].detail);
    }
  free (plan->entries);
  free (plan->refusal);
  free (plan);
}

SbxWin32Plan *
sbx_win32_plan_new (const SbxPolicyV1 *policy,
                    char              *err,
                    size_t             err_size)
{
  SbxWin32Plan *plan;
  const SbxLimitsV1 *limits;
  int ok = 1;
  char detail[256];

  if (policy == NULL || policy->struct_size < SBX_POLICY_V1_MIN_SIZE)
    {
      set_err (err, err_size, "win32-restricted: policy table too small");
      return NULL;
    }
  limits = policy->limits != NULL && policy->limits->struct_size >= SBX_LIMITS_V1_MIN_SIZE ? policy->limits : NULL;
  plan = calloc (1, sizeof *plan);
  if (plan == NULL)
    {
      set_err (err, err_size, "win32-restricted: out of memory");
      return NULL;
    }

  plan->token_flags = SBX_W32_DISABLE_MAX_PRIVILEGE | SBX_W32_LUA_TOKEN;
  plan->deny_only_sids = sbx_win32_deny_only_sids;
  plan->job_limit_flags = SBX_W32_JOB_LIMIT_KILL_ON_JOB_CLOSE | SBX_W32_JOB_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
  plan->ui_restrictions = SBX_W32_UILIMIT_HANDLES | SBX_W32_UILIMIT_READCLIPBOARD | SBX_W32_UILIMIT_WRITECLIPBOARD
                          | SBX_W32_UILIMIT_SYSTEMPARAMETERS | SBX_W32_UILIMIT_DISPLAYSETTINGS
                          | SBX_W32_UILIMIT_GLOBALATOMS | SBX_W32_UILIMIT_DESKTOP | SBX_W32_UILIMIT_EXITWINDOWS;
  plan->creation_flags = SBX_W32_CREATE_SUSPENDED | SBX_W32_CREATE_NEW_PROCESS_GROUP
                         | SBX_W32_CREATE_UNICODE_ENVIRONMENT | SBX_W32_EXTENDED_STARTUPINFO_PRESENT;
  plan->level = SBX_ABI_LEVEL_NONE;
  plan->guarantees = SBX_ABI_GUARANTEE_ENV_SCRUB;
  plan->status = SBX_STATUS_OK;

  if (limits != NULL && limits->max_processes != 0)
    {
      plan->job_limit_flags |= SBX_W32_JOB_LIMIT_ACTIVE_PROCESS;
      plan->active_process_limit = limits->max_processes > UINT32_MAX ? UINT32_MAX
                                                                      : (uint32_t) limits->max_processes;
    }
  if (limits != NULL && limits->max_memory_bytes != 0)
    {
      plan->job_limit_flags |= SBX_W32_JOB_LIMIT_JOB_MEMORY;
      plan->job_memory_limit = limits->max_memory_bytes;
    }
  /* ResourceLimits only when every requested sandbox-wide limit is a Job
   * limit (open files per process has no Job equivalent). */
  if (limits != NULL && (limits->max_processes != 0 || limits->max_memory_bytes != 0))
    {
      if (limits->max_open_files == 0)
        plan->guarantees |= SBX_ABI_GUARANTEE_RESOURCE_LIMITS;
      snprintf (detail, sizeof detail,
                "Job object: at most %u processes, %llu bytes of committed memory for the whole tree "
                "(written, then read back at every spawn)",
                (unsigned) plan->active_process_limit, (unsigned long long) plan->job_memory_limit);
      ok &= add_entry (plan, SBX_ABI_FEATURE_RESOURCE_LIMITS, SBX_ABI_REPORT_ENFORCED, detail);
    }
  if (limits != NULL && limits->max_open_files != 0)
    ok &= add_entry (plan, "open-files-limit", SBX_ABI_REPORT_UNENFORCED,
                     "Windows has no per-process handle limit a Job can set");

  ok &= add_entry (plan, "windows.token", SBX_ABI_REPORT_NARROWED,
                   "restricted token: every privilege but SeChangeNotifyPrivilege removed, the "
                   "administrator-class groups deny-only; it keeps the user's file and network access");
  ok &= add_entry (plan, "windows.job", SBX_ABI_REPORT_ENFORCED,
                   "created suspended, assigned to a Job (kill on close, no breakaway, UI limits) "
                   "before its first instruction; the whole tree dies with the Job");
  ok &= add_entry (plan, "windows.handle-list", SBX_ABI_REPORT_ENFORCED,
                   "only the three standard handles are inherited (PROC_THREAD_ATTRIBUTE_HANDLE_LIST)");
  ok &= add_entry (plan, SBX_ABI_FEATURE_ENV_SCRUB, SBX_ABI_REPORT_ENFORCED, "the child's environment is the host's scrubbed one");
  ok &= add_entry (plan, SBX_ABI_FEATURE_PROCESS_BOUNDARY, SBX_ABI_REPORT_UNENFORCED,
                   "the child runs on the user's desktop and can reach the user's session brokers "
                   "and processes");
  ok &= add_entry (plan, "filesystem", SBX_ABI_REPORT_UNENFORCED,
                   "no read or write boundary: the token keeps the user's file access");
  ok &= add_entry (plan, SBX_ABI_FEATURE_NETWORK, SBX_ABI_REPORT_UNENFORCED, "no network boundary");

  if ((policy->flags & SBX_POLICY_UNCONFINED) == 0)
    {
      plan->status = SBX_STATUS_UNAVAILABLE;
      plan->refusal = strdup ("win32-restricted: refusing a Sandboxed policy: a restricted token and a "
                              "Job object are neither a file, network nor process boundary, so this "
                              "backend runs only acknowledged Unconfined profiles");
      ok &= plan->refusal != NULL;
    }

  if (!ok)
    {
      sbx_win32_plan_free (plan);
      set_err (err, err_size, "win32-restricted: out of memory");
      return NULL;
    }
  return plan;
}

char *
sbx_win32_plan_describe (const SbxWin32Plan *plan)
{
  size_t cap = 4096;
  size_t len = 0;
  char *out = malloc (cap);

#define ADD(...)                                                                   \
  do {                                                                             \
    int n_ = snprintf (out != NULL ? out + len : NULL, out != NULL ? cap - len : 0, __VA_ARGS__); \
    if (out == NULL || n_ < 0)                                                     \
      { free (out); return NULL; }                                                 \
    if ((size_t) n_ >= cap - len)                                                  \
      {                                                                            \
        char *grown_;                                                              \
        cap = (len + (size_t) n_ + 1) * 2;                                         \
        grown_ = realloc (out, cap);                                               \
        if (grown_ == NULL)                                                        \
          { free (out); return NULL; }                                             \
        out = grown_;                                                              \
        snprintf (out + len, cap - len, __VA_ARGS__);                              \
      }                                                                            \
    len += (size_t) n_;                                                            \
  } while (0)

  ADD ("# win32-restricted: restricted token + Job object\n");
  ADD ("token: CreateRestrictedToken(primary token of the caller, 0x%x =%s%s)\n", plan->token_flags,
       (plan->token_flags & SBX_W32_DISABLE_MAX_PRIVILEGE) ? " DISABLE_MAX_PRIVILEGE" : "",
       (plan->token_flags & SBX_W32_LUA_TOKEN) ? " LUA_TOKEN" : "");
  ADD ("token-privileges: SeChangeNotifyPrivilege only (read back)\n");
  ADD ("token-deny-only-sids:");
  for (size_t i = 0; plan->deny_only_sids[i] != NULL; i++)
    ADD (" %s", plan->deny_only_sids[i]);
  ADD ("\n");
  ADD ("job-limit-flags: 0x%x =%s%s%s%s\n", plan->job_limit_flags,
       (plan->job_limit_flags & SBX_W32_JOB_LIMIT_KILL_ON_JOB_CLOSE) ? " KILL_ON_JOB_CLOSE" : "",
       (plan->job_limit_flags & SBX_W32_JOB_LIMIT_DIE_ON_UNHANDLED_EXCEPTION) ? " DIE_ON_UNHANDLED_EXCEPTION" : "",
       (plan->job_limit_flags & SBX_W32_JOB_LIMIT_ACTIVE_PROCESS) ? " ACTIVE_PROCESS" : "",
       (plan->job_limit_flags & SBX_W32_JOB_LIMIT_JOB_MEMORY) ? " JOB_MEMORY" : "");
  ADD ("job-breakaway: never (BREAKAWAY_OK and SILENT_BREAKAWAY_OK absent, checked on read-back)\n");
  if (plan->job_limit_flags & SBX_W32_JOB_LIMIT_ACTIVE_PROCESS)
    ADD ("job-active-process-limit: %u\n", (unsigned) plan->active_process_limit);
  if (plan->job_limit_flags & SBX_W32_JOB_LIMIT_JOB_MEMORY)
    ADD ("job-memory-limit: %llu\n", (unsigned long long) plan->job_memory_limit);
  ADD ("job-ui-restrictions: 0x%x (handles, clipboard, system parameters, display settings, "
       "global atoms, desktop, exit windows)\n", plan->ui_restrictions);
  ADD ("create-process-flags: 0x%x (CREATE_SUSPENDED, CREATE_NEW_PROCESS_GROUP, "
       "CREATE_UNICODE_ENVIRONMENT, EXTENDED_STARTUPINFO_PRESENT)\n", plan->creation_flags);
  ADD ("inherited-handles: stdin, stdout, stderr only (PROC_THREAD_ATTRIBUTE_HANDLE_LIST)\n");
  ADD ("environment: the host's scrubbed environment, as a UTF-16 block\n");
  if (plan->status != SBX_STATUS_OK)
    ADD ("compile: refused: %s\n", plan->refusal != NULL ? plan->refusal : "(no reason)");
#undef ADD
  return out;
}
