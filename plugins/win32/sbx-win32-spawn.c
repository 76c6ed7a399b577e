/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Windows glue of win32-restricted: token, Job, handle list, spawn,
 * teardown.  Compiled only for _WIN32 (mingw-w64); against the ABI header,
 * <windows.h> and the C library, never GLib.
 *
 * A spawn:
 *  1. a restricted token of the caller's primary token (plan->token_flags,
 *     the administrator-class groups the token has enabled made deny-only),
 *     read back: no privilege but SeChangeNotifyPrivilege, every such group
 *     deny-only;
 *  2. a Job object with plan->job_limit_flags, the process and memory
 *     limits and the UI restrictions, read back (equal values, no breakaway
 *     bit);
 *  3. argv[0] resolved against the PATH of the child's own environment;
 *     the command line quoted so CommandLineToArgvW gives argv back; the
 *     environment as a sorted UTF-16 block;
 *  4. the three standard handles duplicated inheritable and listed in
 *     PROC_THREAD_ATTRIBUTE_HANDLE_LIST: no other handle crosses;
 *  5. CreateProcessAsUserW suspended, AssignProcessToJobObject, a check
 *     that the process is in the Job, ResumeThread.  Nothing of the target
 *     runs outside the Job; any failure terminates the suspended process.
 */
#ifdef _WIN32

#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <sddl.h>
#include <io.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbx-win32-private.h"
#include <sbx/sbx-cleanup.h>

/* A kernel object handle closed at scope exit. */
SBX_DEFINE_CLEANUP (handle, HANDLE, NULL, CloseHandle)

_Static_assert (SBX_W32_DISABLE_MAX_PRIVILEGE == DISABLE_MAX_PRIVILEGE, "DISABLE_MAX_PRIVILEGE");
_Static_assert (SBX_W32_LUA_TOKEN == LUA_TOKEN, "LUA_TOKEN");
_Static_assert (SBX_W32_JOB_LIMIT_ACTIVE_PROCESS == JOB_OBJECT_LIMIT_ACTIVE_PROCESS, "ACTIVE_PROCESS");
_Static_assert (SBX_W32_JOB_LIMIT_JOB_MEMORY == JOB_OBJECT_LIMIT_JOB_MEMORY, "JOB_MEMORY");
_Static_assert (SBX_W32_JOB_LIMIT_DIE_ON_UNHANDLED_EXCEPTION == JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION,
                "DIE_ON_UNHANDLED_EXCEPTION");
_Static_assert (SBX_W32_JOB_LIMIT_BREAKAWAY_OK == JOB_OBJECT_LIMIT_BREAKAWAY_OK, "BREAKAWAY_OK");
_Static_assert (SBX_W32_JOB_LIMIT_SILENT_BREAKAWAY_OK == JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK, "SILENT_BREAKAWAY_OK");
_Static_assert (SBX_W32_JOB_LIMIT_KILL_ON_JOB_CLOSE == JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, "KILL_ON_JOB_CLOSE");
_Static_assert (SBX_W32_UILIMIT_HANDLES == JOB_OBJECT_UILIMIT_HANDLES, "UILIMIT_HANDLES");
_Static_assert (SBX_W32_UILIMIT_READCLIPBOARD == JOB_OBJECT_UILIMIT_READCLIPBOARD, "UILIMIT_READCLIPBOARD");
_Static_assert (SBX_W32_UILIMIT_WRITECLIPBOARD == JOB_OBJECT_UILIMIT_WRITECLIPBOARD, "UILIMIT_WRITECLIPBOARD");
_Static_assert (SBX_W32_UILIMIT_SYSTEMPARAMETERS == JOB_OBJECT_UILIMIT_SYSTEMPARAMETERS, "UILIMIT_SYSTEMPARAMETERS");
_Static_assert (SBX_W32_UILIMIT_DISPLAYSETTINGS == JOB_OBJECT_UILIMIT_DISPLAYSETTINGS, "UILIMIT_DISPLAYSETTINGS");
_Static_assert (SBX_W32_UILIMIT_GLOBALATOMS == JOB_OBJECT_UILIMIT_GLOBALATOMS, "UILIMIT_GLOBALATOMS");
_Static_assert (SBX_W32_UILIMIT_DESKTOP == JOB_OBJECT_UILIMIT_DESKTOP, "UILIMIT_DESKTOP");
_Static_assert (SBX_W32_UILIMIT_EXITWINDOWS == JOB_OBJECT_UILIMIT_EXITWINDOWS, "UILIMIT_EXITWINDOWS");
_Static_assert (SBX_W32_CREATE_SUSPENDED == CREATE_SUSPENDED, "CREATE_SUSPENDED");
_Static_assert (SBX_W32_CREATE_NEW_PROCESS_GROUP == CREATE_NEW_PROCESS_GROUP, "CREATE_NEW_PROCESS_GROUP");
_Static_assert (SBX_W32_CREATE_UNICODE_ENVIRONMENT == CREATE_UNICODE_ENVIRONMENT, "CREATE_UNICODE_ENVIRONMENT");
_Static_assert (SBX_W32_EXTENDED_STARTUPINFO_PRESENT == EXTENDED_STARTUPINFO_PRESENT, "EXTENDED_STARTUPINFO_PRESENT");

#define TEARDOWN_TIMEOUT_MS 5000

typedef struct
{
  HANDLE process;
  HANDLE job;
  DWORD  pid;
} Win32Child;

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

  va_start (args, fmt);
  vsnprintf (err, err_size, fmt, args);
  va_end (args);
}

/* "win32-restricted: WHAT: error N (text)" from GetLastError(). */
static void
set_win_err (char       *err,
             size_t      err_size,
             const char *what)
{
  DWORD code = GetLastError ();
  char text[256] = "";

  FormatMessageA (FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, code, 0, text,
                  sizeof text, NULL);
  for (char *p = text; *p != '\0'; p++)
    if (*p == '\r' || *p == '\n')
      *p = ' ';
  set_err (err, err_size, "win32-restricted: %s: error %lu (%s)", what, (unsigned long) code, text);
}

static void *
token_info (HANDLE                  token,
            TOKEN_INFORMATION_CLASS klass)
{
  DWORD size = 0;
  void *buf;

  GetTokenInformation (token, klass, NULL, 0, &size);
  if (size == 0)
    return NULL;
  buf = malloc (size);
  if (buf != NULL && !GetTokenInformation (token, klass, buf, size, &size))
    {
      free (buf);
      return NULL;
    }
  return buf;
}

/* Read back of a restricted token: SeChangeNotifyPrivilege at most, and
 * every group in @disabled deny-only. */
static int
check_restricted (HANDLE                     restricted,
                  const SID_AND_ATTRIBUTES  *disabled,
                  DWORD                      n_disabled,
                  char                      *err,
                  size_t                     err_size)
{
  sbx_autofree TOKEN_PRIVILEGES *privileges = token_info (restricted, TokenPrivileges);
  sbx_autofree TOKEN_GROUPS *groups = NULL;

  if (privileges == NULL)
    {
      set_win_err (err, err_size, "GetTokenInformation(TokenPrivileges) of the restricted token");
      return 0;
    }
  for (DWORD i = 0; i < privileges->PrivilegeCount; i++)
    {
      char name[128];
      DWORD name_len = sizeof name;

      if (!LookupPrivilegeNameA (NULL, &privileges->Privileges[i].Luid, name, &name_len))
        {
          set_win_err (err, err_size, "LookupPrivilegeNameA");
          return 0;
        }
      if (strcmp (name, "SeChangeNotifyPrivilege") != 0)
        {
          set_err (err, err_size, "win32-restricted: the restricted token still holds %s", name);
          return 0;
        }
    }
  groups = token_info (restricted, TokenGroups);
  if (groups == NULL)
    {
      set_win_err (err, err_size, "GetTokenInformation(TokenGroups) of the restricted token");
      return 0;
    }
  for (DWORD d = 0; d < n_disabled; d++)
    for (DWORD g = 0; g < groups->GroupCount; g++)
      if (EqualSid (groups->Groups[g].Sid, disabled[d].Sid)
          && ((groups->Groups[g].Attributes & SE_GROUP_ENABLED)
              || !(groups->Groups[g].Attributes & SE_GROUP_USE_FOR_DENY_ONLY)))
        {
          set_err (err, err_size, "win32-restricted: a privileged group is not deny-only in the restricted token");
          return 0;
        }
  return 1;
}

HANDLE
sbx_win32_make_token (const SbxWin32Plan *plan,
                      char               *err,
                      size_t              err_size)
{
  sbx_auto (handle) HANDLE self_token = NULL;
  HANDLE restricted = NULL;
  sbx_autofree TOKEN_GROUPS *groups = NULL;
  SID_AND_ATTRIBUTES disable[32];
  PSID sids[32];
  DWORD n_disable = 0;
  size_t n_sids = 0;

  if (!OpenProcessToken (GetCurrentProcess (), TOKEN_DUPLICATE | TOKEN_QUERY | TOKEN_ASSIGN_PRIMARY
                         | TOKEN_ADJUST_DEFAULT | TOKEN_ADJUST_SESSIONID, &self_token))
    {
      set_win_err (err, err_size, "OpenProcessToken");
      return NULL;
    }
  groups = token_info (self_token, TokenGroups);
  if (groups == NULL)
    {
      set_win_err (err, err_size, "GetTokenInformation(TokenGroups)");
      return NULL;
    }
  /* The privileged groups this token has enabled become deny-only. */
  for (size_t i = 0; plan->deny_only_sids[i] != NULL && n_sids < 32; i++)
    {
      PSID sid = NULL;

      if (!ConvertStringSidToSidA (plan->deny_only_sids[i], &sid))
        continue;
      sids[n_sids++] = sid;
      for (DWORD g = 0; g < groups->GroupCount; g++)
        if (EqualSid (groups->Groups[g].Sid, sid) && (groups->Groups[g].Attributes & SE_GROUP_ENABLED)
            && n_disable < 32)
          {
            disable[n_disable].Sid = sid;
            disable[n_disable].Attributes = 0;
            n_disable++;
          }
    }
  free (sbx_steal_pointer (&groups));   /* not needed past here */

  if (!CreateRestrictedToken (self_token, plan->token_flags, n_disable, n_disable > 0 ? disable : NULL,
                              0, NULL, 0, NULL, &restricted))
    {
      set_win_err (err, err_size, "CreateRestrictedToken");
      restricted = NULL;
    }
  else if (!check_restricted (restricted, disable, n_disable, err, err_size))
    {
      CloseHandle (restricted);
      restricted = NULL;
    }
  for (size_t i = 0; i < n_sids; i++)
    LocalFree (sids[i]);
  return restricted;
}

HANDLE
sbx_win32_make_job (const SbxWin32Plan *plan,
                    char               *err,
                    size_t              err_size)
{
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits;
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION back;
  JOBOBJECT_BASIC_UI_RESTRICTIONS ui;
  JOBOBJECT_BASIC_UI_RESTRICTIONS ui_back;
  sbx_auto (handle) HANDLE job = NULL;

  if (plan->job_limit_flags & (SBX_W32_JOB_LIMIT_BREAKAWAY_OK | SBX_W32_JOB_LIMIT_SILENT_BREAKAWAY_OK))
    {
      set_err (err, err_size, "win32-restricted: refusing a Job plan that allows breakaway");
      return NULL;
    }
  job = CreateJobObjectW (NULL, NULL);
  if (job == NULL)
    {
      set_win_err (err, err_size, "CreateJobObjectW");
      return NULL;
    }
  memset (&limits, 0, sizeof limits);
  limits.BasicLimitInformation.LimitFlags = plan->job_limit_flags;
  limits.BasicLimitInformation.ActiveProcessLimit = plan->active_process_limit;
  limits.JobMemoryLimit = (SIZE_T) plan->job_memory_limit;
  if (!SetInformationJobObject (job, JobObjectExtendedLimitInformation, &limits, sizeof limits))
    {
      set_win_err (err, err_size, "SetInformationJobObject(JobObjectExtendedLimitInformation)");
      return NULL;
    }
  memset (&ui, 0, sizeof ui);
  ui.UIRestrictionsClass = plan->ui_restrictions;
  if (!SetInformationJobObject (job, JobObjectBasicUIRestrictions, &ui, sizeof ui))
    {
      set_win_err (err, err_size, "SetInformationJobObject(JobObjectBasicUIRestrictions)");
      return NULL;
    }

  /* Read back everything: a limit the system did not keep is not claimed. */
  memset (&back, 0, sizeof back);
  if (!QueryInformationJobObject (job, JobObjectExtendedLimitInformation, &back, sizeof back, NULL))
    {
      set_win_err (err, err_size, "QueryInformationJobObject(JobObjectExtendedLimitInformation)");
      return NULL;
    }
  if (back.BasicLimitInformation.LimitFlags != plan->job_limit_flags
      || ((plan->job_limit_flags & SBX_W32_JOB_LIMIT_ACTIVE_PROCESS)
          && back.BasicLimitInformation.ActiveProcessLimit != plan->active_process_limit)
      || ((plan->job_limit_flags & SBX_W32_JOB_LIMIT_JOB_MEMORY)
          && (uint64_t) back.JobMemoryLimit != plan->job_memory_limit))
    {
      set_err (err, err_size, "win32-restricted: the Job's limits read back differ from those set "
                              "(flags 0x%lx, processes %lu, memory %llu)",
               (unsigned long) back.BasicLimitInformation.LimitFlags,
               (unsigned long) back.BasicLimitInformation.ActiveProcessLimit,
               (unsigned long long) back.JobMemoryLimit);
      return NULL;
    }
  memset (&ui_back, 0, sizeof ui_back);
  if (!QueryInformationJobObject (job, JobObjectBasicUIRestrictions, &ui_back, sizeof ui_back, NULL)
      || ui_back.UIRestrictionsClass != plan->ui_restrictions)
    {
      set_win_err (err, err_size, "QueryInformationJobObject(JobObjectBasicUIRestrictions) read-back");
      return NULL;
    }
  return sbx_steal_pointer (&job);
}

static wchar_t *
utf8_to_wide (const char *s)
{
  int n = MultiByteToWideChar (CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
  wchar_t *w;

  if (n <= 0)
    return NULL;
  w = malloc ((size_t) n * sizeof (wchar_t));
  if (w != NULL && MultiByteToWideChar (CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n) != n)
    {
      free (w);
      return NULL;
    }
  return w;
}

/* Quoting that CommandLineToArgvW (and the MSVCRT) reverse exactly: a
 * backslash run is doubled before a quote and at the end of a quoted arg. */
wchar_t *
sbx_win32_command_line (const char *const *argv)
{
  size_t cap = 16;
  size_t len = 0;
  char *line;
  wchar_t *wide;

  for (size_t i = 0; argv[i] != NULL; i++)
    cap += 3 + 2 * strlen (argv[i]);
  line = malloc (cap);
  if (line == NULL)
    return NULL;
  for (size_t i = 0; argv[i] != NULL; i++)
    {
      const char *a = argv[i];

      if (i > 0)
        line[len++] = ' ';
      if (a[0] != '\0' && strpbrk (a, " \t\n\v\"") == NULL)
        {
          memcpy (line + len, a, strlen (a));
          len += strlen (a);
          continue;
        }
      line[len++] = '"';
      for (const char *p = a;; p++)
        {
          size_t backslashes = 0;

          while (*p == '\\')
            {
              backslashes++;
              p++;
            }
          if (*p == '\0')
            {
              for (size_t k = 0; k < 2 * backslashes; k++)
                line[len++] = '\\';
              break;
            }
          if (*p == '"')
            {
              for (size_t k = 0; k < 2 * backslashes + 1; k++)
                line[len++] = '\\';
              line[len++] = '"';
            }
          else
            {
              for (size_t k = 0; k < backslashes; k++)
                line[len++] = '\\';
              line[len++] = *p;
            }
        }
      line[len++] = '"';
    }
  line[len] = '\0';
  wide = utf8_to_wide (line);
  free (line);
  return wide;
}

static int
compare_env (const void *a,
             const void *b)
{
  const char *x = *(const char *const *) a;
  const char *y = *(const char *const *) b;

  /* By name, case-insensitively, as CreateProcess expects the block. */
  for (;; x++, y++)
    {
      int cx = (*x == '=' || *x == '\0') ? 0 : (*x >= 'a' && *x <= 'z' ? *x - 32 : (unsigned char) *x);
      int cy = (*y == '=' || *y == '\0') ? 0 : (*y >= 'a' && *y <= 'z' ? *y - 32 : (unsigned char) *y);

      if (cx != cy || cx == 0)
        return cx - cy;
    }
}

wchar_t *
sbx_win32_env_block (const char *const *envp)
{
  size_t n = 0;
  const char **sorted;
  wchar_t *block;
  size_t total = 1;
  size_t pos = 0;

  while (envp[n] != NULL)
    n++;
  sorted = malloc ((n + 1) * sizeof *sorted);
  if (sorted == NULL)
    return NULL;
  memcpy (sorted, envp, n * sizeof *sorted);
  qsort (sorted, n, sizeof *sorted, compare_env);
  for (size_t i = 0; i < n; i++)
    {
      int w = MultiByteToWideChar (CP_UTF8, MB_ERR_INVALID_CHARS, sorted[i], -1, NULL, 0);

      if (w <= 0 || strchr (sorted[i], '=') == NULL || sorted[i][0] == '=')
        {
          free (sorted);
          return NULL;
        }
      total += (size_t) w;
    }
  if (n == 0)
    total = 2;
  block = calloc (total, sizeof (wchar_t));
  if (block == NULL)
    {
      free (sorted);
      return NULL;
    }
  for (size_t i = 0; i < n; i++)
    pos += (size_t) MultiByteToWideChar (CP_UTF8, 0, sorted[i], -1, block + pos, (int) (total - pos));
  free (sorted);
  return block;
}

/* argv[0] against the PATH of the child's environment (".exe" added when
 * the name has no extension); NULL with *code = EXEC_NOT_FOUND. */
static wchar_t *
resolve_program (const char        *file,
                 const char *const *envp)
{
  const char *path = NULL;
  char candidate[MAX_PATH * 2];
  int has_ext = strrchr (file, '.') != NULL && strrchr (file, '.') > strrchr (file, '\\');

  if (strpbrk (file, "\\/:") != NULL)
    return utf8_to_wide (file);
  for (size_t i = 0; envp[i] != NULL; i++)
    if (_strnicmp (envp[i], "PATH=", 5) == 0)
      path = envp[i] + 5;
  if (path == NULL)
    return NULL;
  for (const char *p = path;;)
    {
      const char *end = strchr (p, ';');
      size_t len = end != NULL ? (size_t) (end - p) : strlen (p);

      for (int ext = 0; ext < 2; ext++)
        {
          wchar_t *wide;
          DWORD attrs;

          if (ext == 1 && has_ext)
            break;
          if (len == 0 || (size_t) snprintf (candidate, sizeof candidate, "%.*s\\%s%s", (int) len, p, file,
                                             ext == 1 ? ".exe" : "") >= sizeof candidate)
            continue;
          wide = utf8_to_wide (candidate);
          if (wide == NULL)
            continue;
          attrs = GetFileAttributesW (wide);
          if (attrs != INVALID_FILE_ATTRIBUTES && !(attrs & FILE_ATTRIBUTE_DIRECTORY))
            return wide;
          free (wide);
        }
      if (end == NULL)
        break;
      p = end + 1;
    }
  return NULL;
}

int
sbx_win32_host_usable (char   *why,
                       size_t  why_size)
{
  char err[512] = "";
  SbxPolicyV1 policy;
  SbxWin32Plan *plan;
  HANDLE token;
  HANDLE job;

  memset (&policy, 0, sizeof policy);
  policy.struct_size = sizeof policy;
  policy.flags = SBX_POLICY_UNCONFINED;
  plan = sbx_win32_plan_new (&policy, err, sizeof err);
  if (plan == NULL)
    {
      set_err (why, why_size, "%s", err);
      return 0;
    }
  token = sbx_win32_make_token (plan, err, sizeof err);
  job = token != NULL ? sbx_win32_make_job (plan, err, sizeof err) : NULL;
  sbx_win32_plan_free (plan);
  if (token != NULL)
    CloseHandle (token);
  if (job == NULL)
    {
      set_err (why, why_size, "%s", err);
      return 0;
    }
  CloseHandle (job);
  return 1;
}

static HANDLE
inheritable_copy (int32_t  fd,
                  int      output,
                  char    *err,
                  size_t   err_size)
{
  HANDLE source;
  HANDLE copy = NULL;

  if (fd < 0)
    {
      SECURITY_ATTRIBUTES sa = { sizeof sa, NULL, TRUE };

      copy = CreateFileW (L"NUL", output ? GENERIC_WRITE : GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE,
                          &sa, OPEN_EXISTING, 0, NULL);
      if (copy == INVALID_HANDLE_VALUE)
        {
          set_win_err (err, err_size, "CreateFileW(NUL)");
          return NULL;
        }
      return copy;
    }
  source = (HANDLE) _get_osfhandle (fd);
  if (source == INVALID_HANDLE_VALUE
      || !DuplicateHandle (GetCurrentProcess (), source, GetCurrentProcess (), &copy, 0, TRUE,
                           DUPLICATE_SAME_ACCESS))
    {
      set_win_err (err, err_size, "DuplicateHandle of a standard fd");
      return NULL;
    }
  return copy;
}

/* Everything one launch holds; launch_clear() frees what is left, so every
 * exit path is one return. */
typedef struct
{
  HANDLE                       std[3];
  LPPROC_THREAD_ATTRIBUTE_LIST attrs;
  PROCESS_INFORMATION          pi;
  wchar_t                     *program;
  wchar_t                     *cmdline;
  wchar_t                     *env;
  wchar_t                     *cwd;
  Win32Child                  *child;
} Launch;

static int32_t
launch_clear (Launch  *l,
              int32_t  status)
{
  if (l->pi.hThread != NULL)
    CloseHandle (l->pi.hThread);
  if (l->pi.hProcess != NULL)
    CloseHandle (l->pi.hProcess);
  if (l->attrs != NULL)
    {
      DeleteProcThreadAttributeList (l->attrs);
      free (l->attrs);
    }
  for (int i = 0; i < 3; i++)
    if (l->std[i] != NULL)
      CloseHandle (l->std[i]);
  free (l->child);
  free (l->program);
  free (l->cmdline);
  free (l->env);
  free (l->cwd);
  return status;
}

int32_t
sbx_win32_launch (const SbxWin32Plan      *plan,
                  HANDLE                   token,
                  HANDLE                   job,
                  const SbxSpawnRequestV1 *request,
                  SbxSpawnResultV1        *result,
                  char                    *err,
                  size_t                   err_size)
{
  Launch l;
  SIZE_T attrs_size = 0;
  STARTUPINFOEXW si;
  BOOL in_job = FALSE;

  memset (&l, 0, sizeof l);
  l.program = resolve_program (request->argv[0], request->envp);
  if (l.program == NULL)
    {
      set_err (err, err_size, "win32-restricted: %s: not found in the PATH of the child's environment",
               request->argv[0]);
      return launch_clear (&l, SBX_STATUS_EXEC_NOT_FOUND);
    }
  l.cmdline = sbx_win32_command_line (request->argv);
  l.env = sbx_win32_env_block (request->envp);
  l.cwd = utf8_to_wide (request->cwd);
  l.child = calloc (1, sizeof *l.child);
  if (l.cmdline == NULL || l.env == NULL || l.cwd == NULL || l.child == NULL)
    {
      set_err (err, err_size, "win32-restricted: argv, environment or cwd is not valid UTF-8 (or out of memory)");
      return launch_clear (&l, SBX_STATUS_INVALID);
    }

  for (int i = 0; i < 3; i++)
    {
      int32_t fd = i == 0 ? request->stdin_fd : i == 1 ? request->stdout_fd : request->stderr_fd;

      l.std[i] = inheritable_copy (fd, i > 0, err, err_size);
      if (l.std[i] == NULL)
        return launch_clear (&l, SBX_STATUS_FAILED);
    }
  InitializeProcThreadAttributeList (NULL, 1, 0, &attrs_size);
  l.attrs = malloc (attrs_size);
  if (l.attrs == NULL || !InitializeProcThreadAttributeList (l.attrs, 1, 0, &attrs_size))
    {
      free (l.attrs);
      l.attrs = NULL;
      set_win_err (err, err_size, "InitializeProcThreadAttributeList");
      return launch_clear (&l, SBX_STATUS_FAILED);
    }
  if (!UpdateProcThreadAttribute (l.attrs, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, l.std, sizeof l.std, NULL, NULL))
    {
      set_win_err (err, err_size, "UpdateProcThreadAttribute(PROC_THREAD_ATTRIBUTE_HANDLE_LIST)");
      return launch_clear (&l, SBX_STATUS_FAILED);
    }

  memset (&si, 0, sizeof si);
  si.StartupInfo.cb = sizeof si;
  si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
  si.StartupInfo.hStdInput = l.std[0];
  si.StartupInfo.hStdOutput = l.std[1];
  si.StartupInfo.hStdError = l.std[2];
  si.lpAttributeList = l.attrs;
  if (!CreateProcessAsUserW (token, l.program, l.cmdline, NULL, NULL, TRUE, plan->creation_flags, l.env, l.cwd,
                             &si.StartupInfo, &l.pi))
    {
      DWORD code = GetLastError ();

      set_win_err (err, err_size, "CreateProcessAsUserW");
      memset (&l.pi, 0, sizeof l.pi);
      return launch_clear (&l, (code == ERROR_FILE_NOT_FOUND || code == ERROR_PATH_NOT_FOUND)
                               ? SBX_STATUS_EXEC_NOT_FOUND
                               : (code == ERROR_ACCESS_DENIED || code == ERROR_BAD_EXE_FORMAT)
                               ? SBX_STATUS_EXEC_DENIED : SBX_STATUS_FAILED);
    }
  /* Suspended: nothing of the target has run.  Into the Job, checked, then
   * resumed; on any failure the suspended process dies. */
  if (!AssignProcessToJobObject (job, l.pi.hProcess)
      || !IsProcessInJob (l.pi.hProcess, job, &in_job) || !in_job)
    {
      set_win_err (err, err_size, "AssignProcessToJobObject");
      TerminateProcess (l.pi.hProcess, 1);
      WaitForSingleObject (l.pi.hProcess, TEARDOWN_TIMEOUT_MS);
      return launch_clear (&l, SBX_STATUS_FAILED);
    }
  if (ResumeThread (l.pi.hThread) == (DWORD) -1)
    {
      set_win_err (err, err_size, "ResumeThread");
      TerminateJobObject (job, 1);
      WaitForSingleObject (l.pi.hProcess, TEARDOWN_TIMEOUT_MS);
      return launch_clear (&l, SBX_STATUS_FAILED);
    }

  l.child->process = l.pi.hProcess;
  l.child->job = job;
  l.child->pid = l.pi.dwProcessId;
  l.pi.hProcess = NULL;
  result->containment = SBX_CONTAINMENT_ENFORCED;
  result->pid = (int64_t) l.child->pid;
  result->pidfd = -1;
  result->proxy_listen_fd = -1;
  result->child = l.child;
  l.child = NULL;
  return launch_clear (&l, SBX_STATUS_OK);
}

int32_t
sbx_win32_spawn (const SbxWin32Plan      *plan,
                 const SbxSpawnRequestV1 *request,
                 SbxSpawnResultV1        *result,
                 char                    *err,
                 size_t                   err_size)
{
  sbx_auto (handle) HANDLE token = NULL;
  sbx_auto (handle) HANDLE job = NULL;
  int32_t status;

  /* Defense in depth: re-validate what the host hands us. */
  if (plan == NULL || plan->status != SBX_STATUS_OK || request == NULL
      || request->struct_size < SBX_SPAWN_REQUEST_V1_MIN_SIZE || request->argv == NULL
      || request->argv[0] == NULL || request->argv[0][0] == '\0' || request->envp == NULL
      || request->cwd == NULL)
    {
      set_err (err, err_size, "win32-restricted: spawn request needs a compiled plan, argv[0], an environment and a cwd");
      return SBX_STATUS_INVALID;
    }
  if (request->flags & SBX_SPAWN_PTY)
    {
      set_err (err, err_size, "win32-restricted: PTY spawns are not supported");
      return SBX_STATUS_UNSUPPORTED;
    }
  if (request->flags & SBX_SPAWN_IGNORED_SIGNALS)
    {
      set_err (err, err_size, "win32-restricted: Windows has no POSIX signal dispositions to start "
                              "the command with (SBX_SPAWN_IGNORED_SIGNALS)");
      return SBX_STATUS_UNSUPPORTED;
    }
  token = sbx_win32_make_token (plan, err, err_size);
  if (token == NULL)
    return SBX_STATUS_FAILED;
  job = sbx_win32_make_job (plan, err, err_size);
  if (job == NULL)
    return SBX_STATUS_FAILED;
  status = sbx_win32_launch (plan, token, job, request, result, err, err_size);
  /* On success the Job belongs to the child (closed by finish). */
  if (status == SBX_STATUS_OK)
    job = NULL;
  return status;
}

HANDLE
sbx_win32_child_process (void *child)
{
  return ((Win32Child *) child)->process;
}

HANDLE
sbx_win32_child_job (void *child)
{
  return ((Win32Child *) child)->job;
}

int32_t
sbx_win32_signal (void    *child_ptr,
                  int32_t  signo)
{
  Win32Child *child = child_ptr;

  if (child == NULL || child->job == NULL)
    return SBX_STATUS_INVALID;
  /* 128+N, as a POSIX shell reports a death by signal N. */
  if (!TerminateJobObject (child->job, 128u + (UINT) (signo & 0x7f)))
    return SBX_STATUS_FAILED;
  return SBX_STATUS_OK;
}

int32_t
sbx_win32_finish (void      *child_ptr,
                  SbxExitV1 *out,
                  char      *err,
                  size_t     err_size)
{
  Win32Child *child = child_ptr;
  JOBOBJECT_BASIC_ACCOUNTING_INFORMATION accounting;
  DWORD code = 0;
  ULONGLONG start;
  int32_t status = SBX_STATUS_OK;

  if (child == NULL)
    {
      set_err (err, err_size, "win32-restricted: finish without a child");
      return SBX_STATUS_INVALID;
    }
  WaitForSingleObject (child->process, INFINITE);
  GetExitCodeProcess (child->process, &code);
  out->kind = SBX_EXIT_EXITED;
  out->code = (int32_t) code;
  out->signo = 0;

  /* The rest of the tree ends with the Job; wait until it is empty. */
  TerminateJobObject (child->job, 1);
  start = GetTickCount64 ();
  for (;;)
    {
      memset (&accounting, 0, sizeof accounting);
      if (!QueryInformationJobObject (child->job, JobObjectBasicAccountingInformation, &accounting,
                                      sizeof accounting, NULL))
        {
          set_win_err (err, err_size, "QueryInformationJobObject(JobObjectBasicAccountingInformation)");
          status = SBX_STATUS_FAILED;
          break;
        }
      if (accounting.ActiveProcesses == 0)
        break;
      if (GetTickCount64 () - start > TEARDOWN_TIMEOUT_MS)
        {
          set_err (err, err_size, "win32-restricted: the Job still has %lu process(es) after termination",
                   (unsigned long) accounting.ActiveProcesses);
          status = SBX_STATUS_FAILED;
          break;
        }
      Sleep (5);
    }
  CloseHandle (child->process);
  CloseHandle (child->job);
  free (child);
  return status;
}

#endif /* _WIN32 */
