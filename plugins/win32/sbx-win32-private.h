/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Windows-only part of win32-restricted (sbx-win32-spawn.c): declared
 * everywhere, defined and called only in a _WIN32 build.
 */
#ifndef SBX_WIN32_PRIVATE_H
#define SBX_WIN32_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include <sbx/sbx-plugin-abi.h>
#include "sbx-win32-plan.h"

/* 1 when a restricted token and a kill-on-close Job can be made here. */
int     sbx_win32_host_usable (char *why, size_t why_size);
/* Starts request->argv under @plan: restricted token, created suspended,
 * assigned to a fresh Job whose limits were set and read back, then
 * resumed.  result->child owns the process and Job handles. */
int32_t sbx_win32_spawn       (const SbxWin32Plan *plan, const SbxSpawnRequestV1 *request,
                               SbxSpawnResultV1 *result, char *err, size_t err_size);
/* Any signal ends the whole Job (Windows has no signals to forward). */
int32_t sbx_win32_signal      (void *child, int32_t signo);
/* Terminates the Job, waits until it has no process left, reads the
 * target's exit code, frees @child. */
int32_t sbx_win32_finish      (void *child, SbxExitV1 *out, char *err, size_t err_size);

#ifdef _WIN32
/* For the unit tests (tests/win32): the pieces of a spawn, each checked. */
#include <windows.h>
HANDLE  sbx_win32_make_token     (const SbxWin32Plan *plan, char *err, size_t err_size);
HANDLE  sbx_win32_make_job       (const SbxWin32Plan *plan, char *err, size_t err_size);
wchar_t *sbx_win32_command_line  (const char *const *argv);
wchar_t *sbx_win32_env_block     (const char *const *envp);
/* The launch step of a spawn with a caller-made @token and @job (the Job
 * passes to the child on success): lets the tests check argv, environment,
 * handle list and Job membership where the host's token or Job cannot be
 * made as the plan asks (wine). */
int32_t sbx_win32_launch         (const SbxWin32Plan *plan, HANDLE token, HANDLE job,
                                  const SbxSpawnRequestV1 *request, SbxSpawnResultV1 *result,
                                  char *err, size_t err_size);
HANDLE  sbx_win32_child_process  (void *child);
HANDLE  sbx_win32_child_job      (void *child);
#endif

#endif /* SBX_WIN32_PRIVATE_H */
