/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-plugin-util.h: the checks every plugin repeats, for plugin authors.
 * Installed with sbx-plugin-1 (<sbx/sbx-plugin-util.h>) next to
 * sbx-plugin-abi.h; plain C11 and the C library, no GLib, so win32 (mingw)
 * and a third party's plugin use it as the bundled ones do.
 *
 *  - sbx_plugin_fail(): one failure shape: format a message, hand it to
 *    host->set_error() with the status, return the status.
 *  - sbx_plugin_check_host(): what init() checks before keeping the host
 *    table (size, ABI version, the callbacks a plugin calls).
 *  - sbx_plugin_check_spawn_request(): the spawn request's shape (argv[0],
 *    envp, an absolute cwd), the flags this backend implements, and the
 *    ignored-signals set (SBX_SPAWN_IGNORED_SIGNALS), re-validated as the
 *    backend must not trust the host's output either.
 *
 * The fork-based spawn contract (PATH from envp, the exec-error pipe,
 * process-group signal and sweep) is <sbx/sbx-plugin-posix.h>.
 *
 * Header-only (static inline): the SDK is headers and a pkg-config file,
 * with nothing to link, so a plugin built against the installed
 * sbx-plugin-1 gets these with its own compiler and flags (mingw included)
 * and never depends on a library version of sbx at run time.
 */
#ifndef SBX_PLUGIN_UTIL_H
#define SBX_PLUGIN_UTIL_H

#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include <sbx/sbx-plugin-abi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Longest message sbx_plugin_fail() hands the host; longer ones are cut. */
#define SBX_PLUGIN_MESSAGE_MAX 1024

/* Signal @signo's bit in SbxSpawnRequestV1.ignored_signals (bit N-1 stands
 * for signal N, 1..64). */
#define SBX_PLUGIN_SIGNAL_BIT(signo) (UINT64_C (1) << ((signo) - 1))

/* The signals that can never start ignored (none where the C library has
 * no SIGKILL and SIGSTOP: Windows). */
#if defined(SIGKILL) && defined(SIGSTOP)
#define SBX_PLUGIN_UNIGNORABLE_SIGNALS (SBX_PLUGIN_SIGNAL_BIT (SIGKILL) | SBX_PLUGIN_SIGNAL_BIT (SIGSTOP))
#else
#define SBX_PLUGIN_UNIGNORABLE_SIGNALS UINT64_C (0)
#endif

static inline int32_t
sbx_plugin_failv (const SbxHostV1 *host,
                  SbxHostCall     *call,
                  int32_t          status,
                  const char      *format,
                  va_list          args) __attribute__ ((format (printf, 4, 0)));

/* Records @status and the formatted message as the error of @call
 * (host->set_error) and returns @status, so a failing entry point reads
 * "return sbx_plugin_fail (host, call, SBX_STATUS_..., "...", ...);". */
static inline int32_t
sbx_plugin_failv (const SbxHostV1 *host,
                  SbxHostCall     *call,
                  int32_t          status,
                  const char      *format,
                  va_list          args)
{
  char message[SBX_PLUGIN_MESSAGE_MAX];

  vsnprintf (message, sizeof message, format, args);
  if (host != NULL && host->set_error != NULL)
    host->set_error (call, status, message);
  return status;
}

static inline int32_t
sbx_plugin_fail (const SbxHostV1 *host,
                 SbxHostCall     *call,
                 int32_t          status,
                 const char      *format,
                 ...) __attribute__ ((format (printf, 4, 5)));

static inline int32_t
sbx_plugin_fail (const SbxHostV1 *host,
                 SbxHostCall     *call,
                 int32_t          status,
                 const char      *format,
                 ...)
{
  va_list args;

  va_start (args, format);
  status = sbx_plugin_failv (host, call, status, format, args);
  va_end (args);
  return status;
}

/* What init() checks before it keeps @host: a table of this ABI version,
 * at least the first published layout (SBX_HOST_V1_MIN_SIZE), with the
 * callbacks a plugin calls.  Returns SBX_STATUS_OK or SBX_STATUS_INVALID
 * (there is no call to report on yet: init's status is the answer). */
static inline int32_t
sbx_plugin_check_host (const SbxHostV1 *host)
{
  if (host == NULL || host->struct_size < SBX_HOST_V1_MIN_SIZE
      || host->abi_version != SBX_PLUGIN_ABI_VERSION
      || host->set_error == NULL || host->report == NULL || host->log == NULL
      || host->alloc == NULL || host->release == NULL)
    return SBX_STATUS_INVALID;
  return SBX_STATUS_OK;
}

/* The set of signals @request asks to start ignored: its ignored_signals
 * with SBX_SPAWN_IGNORED_SIGNALS, else 0 (every signal at its default).
 * Call it after sbx_plugin_check_spawn_request() accepted @request. */
static inline uint64_t
sbx_plugin_spawn_ignored_signals (const SbxSpawnRequestV1 *request)
{
  return (request->flags & SBX_SPAWN_IGNORED_SIGNALS) != 0 ? request->ignored_signals : 0;
}

/* Re-validates @request and @result before a spawn (defense in depth: the
 * backend must not trust the host's output):
 *  - argv[0] non-empty, an environment, an absolute cwd;
 *  - no flag outside @supported_flags (SBX_SPAWN_*): a terminal flag is
 *    SBX_STATUS_UNSUPPORTED, as is any flag this header does not know;
 *  - with SBX_SPAWN_IGNORED_SIGNALS (when supported): a request and result
 *    large enough to carry it and a non-empty set without SIGKILL and
 *    SIGSTOP.
 * @who prefixes every message ("unconfined", the backend's name).  Returns
 * SBX_STATUS_OK, or the status with the host's error of @call set. */
static inline int32_t
sbx_plugin_check_spawn_request (const SbxHostV1         *host,
                                SbxHostCall             *call,
                                const char              *who,
                                const SbxSpawnRequestV1 *request,
                                const SbxSpawnResultV1  *result,
                                uint32_t                 supported_flags)
{
  const uint32_t known = SBX_SPAWN_PTY | SBX_SPAWN_PTY_SANDBOX | SBX_SPAWN_IGNORED_SIGNALS;
  uint32_t unsupported;

  if (request == NULL || request->struct_size < SBX_SPAWN_REQUEST_V1_MIN_SIZE
      || request->argv == NULL || request->argv[0] == NULL || request->argv[0][0] == '\0'
      || request->envp == NULL || request->cwd == NULL || request->cwd[0] != '/')
    return sbx_plugin_fail (host, call, SBX_STATUS_INVALID,
                            "%s: spawn request needs argv[0], an environment and an absolute cwd", who);
  if (result == NULL || result->struct_size < SBX_SPAWN_RESULT_V1_MIN_SIZE)
    return sbx_plugin_fail (host, call, SBX_STATUS_INVALID, "%s: spawn result table too small", who);
  unsupported = request->flags & ~supported_flags;
  if ((unsupported & (SBX_SPAWN_PTY | SBX_SPAWN_PTY_SANDBOX)) != 0)
    return sbx_plugin_fail (host, call, SBX_STATUS_UNSUPPORTED, "%s: PTY spawns are not supported", who);
  if ((unsupported & SBX_SPAWN_IGNORED_SIGNALS) != 0)
    return sbx_plugin_fail (host, call, SBX_STATUS_UNSUPPORTED,
                            "%s: signals that start ignored are not supported", who);
  if ((request->flags & ~known) != 0)
    return sbx_plugin_fail (host, call, SBX_STATUS_UNSUPPORTED, "%s: unknown spawn flags 0x%x", who,
                            (unsigned) (request->flags & ~known));
  if ((request->flags & SBX_SPAWN_IGNORED_SIGNALS) != 0
      && (request->struct_size < SBX_SPAWN_REQUEST_V1_SIGNALS_SIZE || request->ignored_signals == 0
          || (request->ignored_signals & SBX_PLUGIN_UNIGNORABLE_SIGNALS) != 0
          || result->struct_size < SBX_SPAWN_RESULT_V1_FLAGS_SIZE))
    return sbx_plugin_fail (host, call, SBX_STATUS_INVALID,
                            "%s: an ignored-signals request needs a non-empty set without SIGKILL and SIGSTOP "
                            "in a request and result large enough to carry it", who);
  return SBX_STATUS_OK;
}

#ifdef __cplusplus
}
#endif

#endif /* SBX_PLUGIN_UTIL_H */
