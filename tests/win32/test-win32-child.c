/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The child the win32 tests spawn (Windows only).  Modes (argv[1]):
 *   report HANDLE  print every argument, every environment variable,
 *                  whether HANDLE (a number) is a valid handle here and
 *                  whether this process is in a Job, one "key=value" per line
 *   sleep          sleep 60 s
 *   spawn          try to start "sleep" of this program; print
 *                  "grandchild=ok" or "grandchild=failed <error>"
 *   exit N         exit with status N
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <shellapi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
put (const char *text)
{
  DWORD written;

  WriteFile (GetStdHandle (STD_OUTPUT_HANDLE), text, (DWORD) strlen (text), &written, NULL);
}

static void
put_wide (const char    *key,
          const wchar_t *value)
{
  char buf[8192];
  int n;

  put (key);
  put ("=");
  n = WideCharToMultiByte (CP_UTF8, 0, value, -1, buf, sizeof buf, NULL, NULL);
  if (n > 0)
    put (buf);
  put ("\n");
}

int
main (void)
{
  int argc = 0;
  wchar_t **argv = CommandLineToArgvW (GetCommandLineW (), &argc);

  if (argv == NULL || argc < 2)
    return 2;
  if (wcscmp (argv[1], L"report") == 0 && argc >= 3)
    {
      HANDLE probe = (HANDLE) (uintptr_t) _wcstoui64 (argv[2], NULL, 10);
      DWORD flags = 0;
      BOOL in_job = FALSE;
      wchar_t *env = GetEnvironmentStringsW ();

      for (int i = 0; i < argc; i++)
        put_wide ("arg", argv[i]);
      for (wchar_t *e = env; e != NULL && *e != L'\0'; e += wcslen (e) + 1)
        put_wide ("env", e);
      put (GetHandleInformation (probe, &flags) ? "handle=valid\n" : "handle=invalid\n");
      put (IsProcessInJob (GetCurrentProcess (), NULL, &in_job) && in_job ? "injob=1\n" : "injob=0\n");
      return 0;
    }
  if (wcscmp (argv[1], L"sleep") == 0)
    {
      Sleep (60000);
      return 0;
    }
  if (wcscmp (argv[1], L"spawn") == 0)
    {
      wchar_t self[MAX_PATH];
      wchar_t cmd[MAX_PATH + 16];
      STARTUPINFOW si;
      PROCESS_INFORMATION pi;
      char line[64];

      GetModuleFileNameW (NULL, self, MAX_PATH);
      _snwprintf (cmd, sizeof cmd / sizeof cmd[0], L"\"%ls\" sleep", self);
      memset (&si, 0, sizeof si);
      si.cb = sizeof si;
      if (CreateProcessW (self, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi))
        {
          put ("grandchild=ok\n");
          TerminateProcess (pi.hProcess, 0);
          CloseHandle (pi.hProcess);
          CloseHandle (pi.hThread);
          return 0;
        }
      snprintf (line, sizeof line, "grandchild=failed %lu\n", (unsigned long) GetLastError ());
      put (line);
      return 0;
    }
  if (wcscmp (argv[1], L"exit") == 0 && argc >= 3)
    return (int) wcstol (argv[2], NULL, 10);
  return 2;
}
