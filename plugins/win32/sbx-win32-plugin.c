/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Backend "win32-restricted": restricted token + Job object (see
 * sbx-win32-plan.h for what it claims and why so little).
 *
 * Built against the plugin SDK's headers and libc only, never GLib: as a DLL with
 * mingw-w64 (scripts/build-win32.sh), and natively on other hosts, where the
 * probe reports "not applicable on this host" (so it is never selected) and
 * explain() prints the token and Job settings the plan holds.
 */
#include <sbx/sbx-plugin-abi.h>
#include <sbx/sbx-plugin-util.h>
#include "sbx-win32-plan.h"
#include "sbx-win32-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BACKEND_NAME "win32-restricted"

#ifndef _WIN32
static const char not_applicable[] =
  BACKEND_NAME ": not applicable on this host: restricted tokens and Job objects exist only on "
               "Windows; this build has the token/Job compiler only (see sbx profile explain --backend " BACKEND_NAME ")";
#endif

typedef struct
{
  const SbxHostV1 *host;
} Win32Plugin;

static int32_t
win32_init (const SbxHostV1 *host,
            void           **plugin_ctx)
{
  Win32Plugin *plugin;

  if (sbx_plugin_check_host (host) != SBX_STATUS_OK)
    return SBX_STATUS_INVALID;
  plugin = calloc (1, sizeof *plugin);
  if (plugin == NULL)
    return SBX_STATUS_NO_MEMORY;
  plugin->host = host;
  *plugin_ctx = plugin;
  return SBX_STATUS_OK;
}

static void
win32_fini (void *plugin_ctx)
{
  free (plugin_ctx);
}

static int32_t
win32_probe (void             *plugin_ctx,
             SbxHostCall      *call,
             SbxProbeResultV1 *result)
{
  Win32Plugin *plugin = plugin_ctx;
#ifdef _WIN32
  char why[512] = "";

  if (!sbx_win32_host_usable (why, sizeof why))
    return sbx_plugin_fail (plugin->host, call, SBX_STATUS_UNAVAILABLE, BACKEND_NAME ": %s", why);
  result->level = SBX_ABI_LEVEL_NONE;
  result->guarantees = SBX_ABI_GUARANTEE_ENV_SCRUB | SBX_ABI_GUARANTEE_RESOURCE_LIMITS;
  result->flags = SBX_PROBE_UNCONFINED_ONLY;
  plugin->host->report (call, "windows.token", SBX_ABI_REPORT_NARROWED,
                        "a restricted token of the caller's token could be created");
  plugin->host->report (call, "windows.job", SBX_ABI_REPORT_ENFORCED,
                        "a Job object with kill-on-close could be created and read back");
  plugin->host->report (call, SBX_ABI_FEATURE_CONFINEMENT, SBX_ABI_REPORT_UNENFORCED,
                        "no file, network or process boundary: runs only acknowledged Unconfined profiles");
  return SBX_STATUS_OK;
#else
  (void) result;
  return sbx_plugin_fail (plugin->host, call, SBX_STATUS_UNAVAILABLE, "%s", not_applicable);
#endif
}

static void
forward_entries (const Win32Plugin  *plugin,
                 SbxHostCall        *call,
                 const SbxWin32Plan *plan)
{
  for (size_t i = 0; i < plan->n_entries; i++)
    plugin->host->report (call, plan->entries[i].feature, plan->entries[i].status, plan->entries[i].detail);
}

static int32_t
win32_compile (void               *plugin_ctx,
               SbxHostCall        *call,
               const SbxPolicyV1  *policy,
               void              **spec_out,
               SbxCompileResultV1 *result)
{
  Win32Plugin *plugin = plugin_ctx;
#ifdef _WIN32
  char          err[512] = "";
  SbxWin32Plan *plan = sbx_win32_plan_new (policy, err, sizeof err);
  int32_t       status;

  if (plan == NULL)
    return sbx_plugin_fail (plugin->host, call, SBX_STATUS_INVALID, "%s", err);
  if (plan->status != SBX_STATUS_OK)
    {
      status = sbx_plugin_fail (plugin->host, call, plan->status, "%s", plan->refusal);
      sbx_win32_plan_free (plan);
      return status;
    }
  forward_entries (plugin, call, plan);
  result->level = plan->level;
  result->guarantees = plan->guarantees;
  *spec_out = plan;
  return SBX_STATUS_OK;
#else
  (void) policy;
  (void) spec_out;
  (void) result;
  return sbx_plugin_fail (plugin->host, call, SBX_STATUS_UNAVAILABLE, "%s", not_applicable);
#endif
}

static int32_t
win32_spawn (void                    *plugin_ctx,
             SbxHostCall             *call,
             void                    *spec,
             const SbxSpawnRequestV1 *request,
             SbxSpawnResultV1        *result)
{
  Win32Plugin *plugin = plugin_ctx;
#ifdef _WIN32
  char    err[1024] = "";
  int32_t status = sbx_win32_spawn (spec, request, result, err, sizeof err);

  if (status != SBX_STATUS_OK)
    return sbx_plugin_fail (plugin->host, call, status, "%s", err);
  return SBX_STATUS_OK;
#else
  (void) spec;
  (void) request;
  (void) result;
  return sbx_plugin_fail (plugin->host, call, SBX_STATUS_UNAVAILABLE, "%s", not_applicable);
#endif
}

static int32_t
win32_signal (void   *plugin_ctx,
              void   *child,
              int32_t signo)
{
#ifdef _WIN32
  return sbx_win32_signal (child, signo);
#else
  (void) child;
  (void) signo;
  return SBX_STATUS_UNAVAILABLE;
#endif
}

static int32_t
win32_finish (void        *plugin_ctx,
              SbxHostCall *call,
              void        *child,
              int32_t      wait_status,
              SbxExitV1   *out)
{
  Win32Plugin *plugin = plugin_ctx;
#ifdef _WIN32
  char    err[512] = "";
  int32_t status = sbx_win32_finish (child, out, err, sizeof err);

  (void) wait_status;
  if (status != SBX_STATUS_OK)
    return sbx_plugin_fail (plugin->host, call, status, "%s", err);
  return SBX_STATUS_OK;
#else
  (void) child;
  (void) wait_status;
  (void) out;
  return sbx_plugin_fail (plugin->host, call, SBX_STATUS_UNAVAILABLE, "%s", not_applicable);
#endif
}

static void
win32_release (void *plugin_ctx,
               void *spec)
{
  sbx_win32_plan_free (spec);
}

/* No grant can be enforced by a token that keeps the user's access. */
static uint32_t
win32_supports_grant_class (void       *plugin_ctx,
                            const char *grant_class)
{
  return 0;
}

static int32_t
win32_explain (void              *plugin_ctx,
               SbxHostCall       *call,
               const SbxPolicyV1 *policy,
               char             **text_out)
{
  Win32Plugin  *plugin = plugin_ctx;
  char          err[512] = "";
  SbxWin32Plan *plan = sbx_win32_plan_new (policy, err, sizeof err);
  char         *described;
  size_t        len;

  if (plan == NULL)
    return sbx_plugin_fail (plugin->host, call, SBX_STATUS_INVALID, "%s", err);
  forward_entries (plugin, call, plan);
  described = sbx_win32_plan_describe (plan);
  sbx_win32_plan_free (plan);
  if (described == NULL)
    return sbx_plugin_fail (plugin->host, call, SBX_STATUS_NO_MEMORY, BACKEND_NAME ": out of memory");
  len = strlen (described);
  *text_out = plugin->host->alloc (len + 1);
  if (*text_out == NULL)
    {
      free (described);
      return sbx_plugin_fail (plugin->host, call, SBX_STATUS_NO_MEMORY, BACKEND_NAME ": out of memory");
    }
  memcpy (*text_out, described, len + 1);
  free (described);
  return SBX_STATUS_OK;
}

static const SbxBackendVTableV1 win32_vtable = {
  sizeof (SbxBackendVTableV1),
  0,
  win32_probe,
  win32_compile,
  win32_spawn,
  win32_signal,
  win32_finish,
  win32_release,
  win32_supports_grant_class,
  win32_explain,
};

static const SbxPluginExtension win32_extensions[] = {
  { sizeof (SbxPluginExtension), SBX_EXT_BACKEND, BACKEND_NAME, 50, 0, &win32_vtable },
  { sizeof (SbxPluginExtension), SBX_EXT_END, NULL, 0, 0, NULL },
};

SBX_PLUGIN_DEFINE (win32, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURES_NONE, win32_init, win32_fini, win32_extensions)
