/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Backend "darwin-seatbelt": macOS Seatbelt (SBPL profile via sandbox-exec).
 *
 * Built on every host.  The SBPL compiler (sbx-sbpl.c) is portable and its
 * output is what explain() prints everywhere.  Everything that confines a
 * process (sbx-darwin-spawn.c) is compiled on macOS only; on any other host
 * probe() reports SBX_STATUS_UNAVAILABLE ("not applicable on this host")
 * with the reason, so the registry never selects this backend, and
 * compile() and spawn() refuse with the same reason should anything call
 * them anyway.
 *
 * Plain C against the plugin SDK (sbx-plugin-1) only.
 */
#include <sbx/sbx-plugin-abi.h>
#include <sbx/sbx-plugin-util.h>
#include "sbx-sbpl.h"
#include "sbx-darwin-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BACKEND_NAME "darwin-seatbelt"

#if defined(__APPLE__) && defined(__MACH__)
#define DARWIN_HOST 1
#else
#define DARWIN_HOST 0
#endif

#if !DARWIN_HOST
static const char not_applicable[] =
  BACKEND_NAME ": not applicable on this host: Seatbelt (sandbox-exec, sandbox_init) exists only "
               "on macOS; this build has the SBPL compiler only (see sbx profile explain --backend " BACKEND_NAME ")";
#endif

typedef struct
{
  const SbxHostV1 *host;
} DarwinPlugin;

static int32_t
darwin_init (const SbxHostV1 *host,
             void           **plugin_ctx)
{
  DarwinPlugin *plugin;

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
darwin_fini (void *plugin_ctx)
{
  free (plugin_ctx);
}

static int32_t
darwin_probe (void             *plugin_ctx,
              SbxHostCall      *call,
              SbxProbeResultV1 *result)
{
  DarwinPlugin *plugin = plugin_ctx;
#if DARWIN_HOST
  char why[512];

  if (!sbx_darwin_host_usable (why, sizeof why))
    return sbx_plugin_fail (plugin->host, call, SBX_STATUS_UNAVAILABLE, BACKEND_NAME ": %s", why);
  result->level = SBX_ABI_LEVEL_FULL;
  result->guarantees = SBX_DARWIN_GUARANTEES;
  result->flags = 0;
  plugin->host->report (call, "seatbelt", SBX_ABI_REPORT_ENFORCED, "sandbox-exec is present and executable");
  plugin->host->report (call, SBX_ABI_FEATURE_PROCESS_LIFETIME, SBX_ABI_REPORT_NARROWED,
                        "best effort: the process group is swept; a descendant that leaves it "
                        "stays confined by Seatbelt but may outlive the run");
  plugin->host->report (call, SBX_ABI_FEATURE_RESOURCE_LIMITS, SBX_ABI_REPORT_UNENFORCED,
                        "Seatbelt has no sandbox-wide limits");
  return SBX_STATUS_OK;
#else
  (void) result;
  return sbx_plugin_fail (plugin->host, call, SBX_STATUS_UNAVAILABLE, "%s", not_applicable);
#endif
}

static void
forward_entries (const DarwinPlugin   *plugin,
                 SbxHostCall          *call,
                 const SbxSbplProfile *profile)
{
  for (size_t i = 0; i < profile->n_entries; i++)
    plugin->host->report (call, profile->entries[i].feature, profile->entries[i].status,
                          profile->entries[i].detail);
}

static int32_t
darwin_compile (void               *plugin_ctx,
                SbxHostCall        *call,
                const SbxPolicyV1  *policy,
                void              **spec_out,
                SbxCompileResultV1 *result)
{
  DarwinPlugin *plugin = plugin_ctx;
#if DARWIN_HOST
  SbxSbplProfile *profile = NULL;
  SbxSbplOptions  options = { sbx_darwin_resolve_path, NULL };
  char            err[512] = "";
  int32_t         status;

  status = sbx_sbpl_compile (policy, &options, &profile, err, sizeof err);
  if (status != SBX_STATUS_OK)
    return sbx_plugin_fail (plugin->host, call, status, "%s", err);
  forward_entries (plugin, call, profile);
  result->level = profile->level;
  result->guarantees = profile->guarantees;
  status = sbx_darwin_spec_new (profile, spec_out, err, sizeof err);
  if (status != SBX_STATUS_OK)
    return sbx_plugin_fail (plugin->host, call, status, "%s", err);
  return SBX_STATUS_OK;
#else
  (void) policy;
  (void) spec_out;
  (void) result;
  return sbx_plugin_fail (plugin->host, call, SBX_STATUS_UNAVAILABLE, "%s", not_applicable);
#endif
}

static int32_t
darwin_spawn (void                    *plugin_ctx,
              SbxHostCall             *call,
              void                    *spec,
              const SbxSpawnRequestV1 *request,
              SbxSpawnResultV1        *result)
{
  DarwinPlugin *plugin = plugin_ctx;
#if DARWIN_HOST
  return sbx_darwin_spawn (plugin->host, call, spec, request, result);
#else
  (void) spec;
  (void) request;
  (void) result;
  return sbx_plugin_fail (plugin->host, call, SBX_STATUS_UNAVAILABLE, "%s", not_applicable);
#endif
}

static int32_t
darwin_signal (void   *plugin_ctx,
               void   *child,
               int32_t signo)
{
#if DARWIN_HOST
  return sbx_darwin_signal (child, signo);
#else
  (void) child;
  (void) signo;
  return SBX_STATUS_UNAVAILABLE;
#endif
}

static int32_t
darwin_finish (void        *plugin_ctx,
               SbxHostCall *call,
               void        *child,
               int32_t      wait_status,
               SbxExitV1   *out)
{
  DarwinPlugin *plugin = plugin_ctx;
#if DARWIN_HOST
  return sbx_darwin_finish (plugin->host, call, child, wait_status, out);
#else
  (void) child;
  (void) wait_status;
  (void) out;
  return sbx_plugin_fail (plugin->host, call, SBX_STATUS_UNAVAILABLE, "%s", not_applicable);
#endif
}

static void
darwin_release (void *plugin_ctx,
                void *spec)
{
#if DARWIN_HOST
  sbx_darwin_spec_free (spec);
#else
  (void) spec;
#endif
}

/* Grants need identity-pinned paths, which Seatbelt cannot take by fd;
 * refused rather than enforced by path. */
static uint32_t
darwin_supports_grant_class (void       *plugin_ctx,
                             const char *grant_class)
{
  return grant_class != NULL && strcmp (grant_class, "command.start.v1") == 0;
}

/* The SBPL text (and its parameters, escaped) compile() would hand
 * sandbox-exec.  Runs on every host: the compiler is portable.  Off macOS
 * the /private aliases are the lexical ones only (no realpath of the macOS
 * file system is possible here), which the report says. */
static int32_t
darwin_explain (void              *plugin_ctx,
                SbxHostCall       *call,
                const SbxPolicyV1 *policy,
                char             **text_out)
{
  DarwinPlugin   *plugin = plugin_ctx;
  SbxSbplProfile *profile = NULL;
#if DARWIN_HOST
  SbxSbplOptions options = { sbx_darwin_resolve_path, NULL };
#else
  SbxSbplOptions options = { NULL, NULL };
#endif
  char    err[512] = "";
  char   *described;
  size_t  len;
  int32_t status;

  status = sbx_sbpl_compile (policy, &options, &profile, err, sizeof err);
  if (status != SBX_STATUS_OK)
    return sbx_plugin_fail (plugin->host, call, status, "%s", err);
  forward_entries (plugin, call, profile);
  described = sbx_sbpl_profile_describe (profile);
  sbx_sbpl_profile_free (profile);
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

static const SbxBackendVTableV1 darwin_vtable = {
  .struct_size = sizeof (SbxBackendVTableV1),
  .probe = darwin_probe,
  .compile = darwin_compile,
  .spawn = darwin_spawn,
  .signal = darwin_signal,
  .finish = darwin_finish,
  .release = darwin_release,
  .supports_grant_class = darwin_supports_grant_class,
  .explain = darwin_explain,
};

static const SbxPluginExtension darwin_extensions[] = {
  {
    .struct_size = sizeof (SbxPluginExtension),
    .kind = SBX_EXT_BACKEND,
    .name = BACKEND_NAME,
    .priority = 100,
    .vtable = &darwin_vtable,
  },
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_END },
};

SBX_PLUGIN_DEFINE (darwin, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURES_NONE, darwin_init, darwin_fini, darwin_extensions)
