/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-plugin-skeleton: a complete, minimal backend plugin for sbx, to be
 * finished into a confining one.
 *
 * It gives NO OS confinement, and says so: probe and compile report level
 * none, only the env-scrub guarantee (the host builds the scrubbed
 * environment; this backend passes it on unchanged) and the flag
 * SBX_PROBE_UNCONFINED_ONLY, so the host uses it only for acknowledged
 * Unconfined profiles and never for a Sandboxed one.
 *
 * Everything a backend must get right besides the confinement itself comes
 * from the SDK's helpers: <sbx/sbx-plugin-util.h> checks the host table and
 * the spawn request and fails with a host message; <sbx/sbx-plugin-posix.h>
 * keeps the fork backend's spawn contract (direct child in a new session,
 * standard fds, nothing else inherited, signals reset, PATH search, exec
 * failures reported with the step and errno, "returns after exec"), signals
 * the whole group and sweeps it in finish().
 *
 * To make a confining backend out of it (the four places marked "TODO"):
 *  1. probe(): measure that the mechanism works on this host; report a
 *     level and guarantees no higher than it can give, and drop
 *     SBX_PROBE_UNCONFINED_ONLY;
 *  2. compile(): turn the policy IR (SbxPolicyV1) into the spec, report what
 *     it achieves, and accept Sandboxed policies;
 *  3. skeleton_confine(): enforce the spec in the child, last before exec;
 *  4. claim a guarantee only when every path of it is enforced, then run
 *     sbx-conformance on the .so.
 *
 * Plain C11 + POSIX against the plugin SDK (sbx-plugin-1) only.
 */
#include <sbx/sbx-plugin-abi.h>
#include <sbx/sbx-plugin-posix.h>
#include <sbx/sbx-plugin-util.h>

#include <stdlib.h>

/* How long finish() waits for the killed process group to disappear. */
#define SKELETON_SWEEP_NS (INT64_C (2) * 1000 * 1000 * 1000)
#define SKELETON_SPEC_MAGIC 0x736b656cu  /* "skel" */

/* Per-registry state: init runs once per registry, so nothing lives in
 * globals. */
typedef struct
{
  const SbxHostV1 *host;
} SkeletonPlugin;

/* The compiled policy.  TODO (2): what skeleton_confine() enforces. */
typedef struct
{
  uint32_t magic;
} SkeletonSpec;

typedef struct
{
  SbxPluginGroup group;  /* the direct child; also its process group (setsid) */
} SkeletonChild;

static int32_t
skeleton_init (const SbxHostV1  *host,
               void            **plugin_ctx)
{
  SkeletonPlugin *plugin;

  /* Use a host field only when the host's table is large enough for it. */
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
skeleton_fini (void *plugin_ctx)
{
  free (plugin_ctx);
}

static int32_t
skeleton_probe (void             *plugin_ctx,
                SbxHostCall      *call,
                SbxProbeResultV1 *result)
{
  SkeletonPlugin *plugin = plugin_ctx;

  /* TODO (1): measure the mechanism; never claim what was not measured. */
  result->level = SBX_ABI_LEVEL_NONE;
  result->guarantees = SBX_ABI_GUARANTEE_ENV_SCRUB;
  result->flags = SBX_PROBE_UNCONFINED_ONLY;
  plugin->host->report (call, "confinement", SBX_ABI_REPORT_UNENFORCED,
                        "skeleton: no OS confinement; runs acknowledged Unconfined profiles only");
  return SBX_STATUS_OK;
}

static int32_t
skeleton_compile (void                *plugin_ctx,
                  SbxHostCall         *call,
                  const SbxPolicyV1   *policy,
                  void               **spec_out,
                  SbxCompileResultV1  *result)
{
  SkeletonPlugin *plugin = plugin_ctx;
  SkeletonSpec *spec;

  /* Re-validate what the host hands over; refuse what cannot be honoured. */
  if (policy == NULL || !SBX_ABI_HAS (policy, SbxPolicyV1, flags))
    return sbx_plugin_fail (plugin->host, call, SBX_STATUS_INVALID, "skeleton: the policy table is too small");
  /* TODO (2): compile policy->fs, ->net ... instead of refusing them. */
  if ((policy->flags & SBX_POLICY_UNCONFINED) == 0)
    return sbx_plugin_fail (plugin->host, call, SBX_STATUS_UNAVAILABLE,
                            "skeleton: refusing a Sandboxed policy (this backend confines nothing)");
  spec = calloc (1, sizeof *spec);
  if (spec == NULL)
    return sbx_plugin_fail (plugin->host, call, SBX_STATUS_NO_MEMORY, "skeleton: out of memory");
  spec->magic = SKELETON_SPEC_MAGIC;
  /* Never more than probe claimed: the host refuses a spec that does. */
  result->level = SBX_ABI_LEVEL_NONE;
  result->guarantees = SBX_ABI_GUARANTEE_ENV_SCRUB;
  plugin->host->report (call, "env-scrub", SBX_ABI_REPORT_ENFORCED,
                        "the child gets the host's scrubbed environment, unchanged");
  plugin->host->report (call, "process-lifetime", SBX_ABI_REPORT_NARROWED,
                        "best effort: the process group is killed; a descendant that leaves it escapes");
  *spec_out = spec;
  return SBX_STATUS_OK;
}

/* Runs in the forked child after chdir, last before execve: async-signal-
 * safe calls only.  Returns 0, or the errno that fails the spawn. */
static int
skeleton_confine (void *data)
{
  const SkeletonSpec *spec = data;

  /* TODO (3): enforce @spec here (a confining backend's whole point). */
  (void) spec;
  return 0;
}

static int32_t
skeleton_spawn (void                    *plugin_ctx,
                SbxHostCall             *call,
                void                    *spec_ptr,
                const SbxSpawnRequestV1 *request,
                SbxSpawnResultV1        *result)
{
  SkeletonPlugin *plugin = plugin_ctx;
  SkeletonSpec *spec = spec_ptr;
  SkeletonChild *child;
  int32_t status;

  if (spec == NULL || spec->magic != SKELETON_SPEC_MAGIC)
    return sbx_plugin_fail (plugin->host, call, SBX_STATUS_INVALID, "skeleton: spawn with a foreign spec");
  /* Terminals are left out: SBX_SPAWN_PTY* get SBX_STATUS_UNSUPPORTED. */
  status = sbx_plugin_check_spawn_request (plugin->host, call, "skeleton", request, result,
                                           SBX_SPAWN_IGNORED_SIGNALS);
  if (status != SBX_STATUS_OK)
    return status;
  child = calloc (1, sizeof *child);
  if (child == NULL)
    return sbx_plugin_fail (plugin->host, call, SBX_STATUS_NO_MEMORY, "skeleton: out of memory");
  status = sbx_plugin_fork_spawn (plugin->host, call, "skeleton", request, skeleton_confine, spec,
                                  &child->group, result);
  if (status != SBX_STATUS_OK)
    {
      free (child);
      return status;
    }
  result->containment = SBX_CONTAINMENT_BEST_EFFORT;
  result->child = child;
  return SBX_STATUS_OK;
}

static int32_t
skeleton_signal (void    *plugin_ctx,
                 void    *child_ptr,
                 int32_t  signo)
{
  SkeletonChild *child = child_ptr;

  (void) plugin_ctx;
  return child != NULL ? sbx_plugin_group_signal (&child->group, signo) : SBX_STATUS_INVALID;
}

static int32_t
skeleton_finish (void        *plugin_ctx,
                 SbxHostCall *call,
                 void        *child_ptr,
                 int32_t      wait_status,
                 SbxExitV1   *out)
{
  SkeletonPlugin *plugin = plugin_ctx;
  SkeletonChild *child = child_ptr;
  pid_t group;

  if (child == NULL || child->group.pid <= 0)
    return sbx_plugin_fail (plugin->host, call, SBX_STATUS_INVALID, "skeleton: finish without a child");
  group = child->group.pid;
  free (child);
  sbx_plugin_exit_from_wait_status (wait_status, out);
  /* Kill what is left of the group until not even a zombie of it remains. */
  if (sbx_plugin_group_sweep (group, SKELETON_SWEEP_NS, NULL) != 0)
    return sbx_plugin_fail (plugin->host, call, SBX_STATUS_FAILED,
                            "skeleton: process group %d still has members after SIGKILL", (int) group);
  return SBX_STATUS_OK;
}

static void
skeleton_release (void *plugin_ctx,
                  void *spec)
{
  (void) plugin_ctx;
  free (spec);
}

static const SbxBackendVTableV1 skeleton_backend = {
  .struct_size = sizeof (SbxBackendVTableV1),
  .probe = skeleton_probe,
  .compile = skeleton_compile,
  .spawn = skeleton_spawn,
  .signal = skeleton_signal,
  .finish = skeleton_finish,
  .release = skeleton_release,
  .supports_grant_class = NULL,  /* optional */
};

static const SbxPluginExtension skeleton_extensions[] = {
  {
    .struct_size = sizeof (SbxPluginExtension),
    .kind = SBX_EXT_BACKEND,
    .name = "skeleton",
    .priority = -50,   /* below every confining backend */
    .vtable = &skeleton_backend,
  },
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_END },
};

/* Exports sbx_plugin_skeleton_entry; the file must be sbx-plugin-skeleton.so. */
SBX_PLUGIN_DEFINE (skeleton, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURES_NONE,
                   skeleton_init, skeleton_fini, skeleton_extensions)
