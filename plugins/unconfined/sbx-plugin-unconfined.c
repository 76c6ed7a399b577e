/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Backend "unconfined": runs acknowledged Unconfined profiles, and nothing
 * else.  It never claims isolation: probe and compile report LEVEL_NONE and
 * only ENV_SCRUB (the host builds the scrubbed environment; this backend
 * passes it on unchanged), every spawn reports LifetimeContainment
 * UNSPECIFIED, and compile refuses every policy without
 * SBX_POLICY_UNCONFINED with SBX_STATUS_UNAVAILABLE.
 *
 * Spawn is fork + execve in a new session (and so a new process group),
 * the SDK's fork-based spawn contract (<sbx/sbx-plugin-posix.h>): the
 * child makes async-signal-safe calls only, an exec failure travels back
 * through a close-on-exec pipe.  signal() and finish() address the whole
 * process group; finish() then sweeps /proc until no live member of the
 * group remains.  A descendant that leaves the group (setsid, setpgid)
 * escapes: that is why containment is UNSPECIFIED.
 *
 * Plain C against the plugin SDK (sbx-plugin-1) only.
 */
#include <sbx/sbx-plugin-abi.h>
#include <sbx/sbx-plugin-posix.h>
#include <sbx/sbx-plugin-util.h>
#include <sbx/sbx-cleanup.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* Every entry point, declared through its ABI typedef (a signature that
 * does not match the slot it fills cannot compile). */
static SbxBackendProbeFunc   unconfined_probe;
static SbxBackendCompileFunc unconfined_compile;
static SbxBackendSpawnFunc   unconfined_spawn;
static SbxBackendSignalFunc  unconfined_signal;
static SbxBackendFinishFunc  unconfined_finish;
static SbxBackendReleaseFunc unconfined_release;
static SbxPluginInitFunc     unconfined_init;
static SbxPluginFiniFunc     unconfined_fini;

#define PLUGIN_DOMAIN "sbx-unconfined"
/* How long finish() waits for the killed group to disappear. */
#define SWEEP_TIMEOUT_NS (2LL * 1000 * 1000 * 1000)

typedef struct
{
  const SbxHostV1 *host;
} UnconfinedPlugin;

typedef struct
{
  uint32_t magic;
} UnconfinedSpec;

typedef struct
{
  SbxPluginGroup group;  /* the target; its pid is also the process group id (setsid) */
} UnconfinedChild;

#define SPEC_MAGIC 0x756e6366u /* "uncf" */

static int32_t
unconfined_init (const SbxHostV1 *host,
                 void           **plugin_ctx)
{
  UnconfinedPlugin *plugin;

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
unconfined_fini (void *plugin_ctx)
{
  free (plugin_ctx);
}

static int32_t
unconfined_probe (void             *plugin_ctx,
                  SbxHostCall      *call,
                  SbxProbeResultV1 *result)
{
  UnconfinedPlugin *plugin = plugin_ctx;

  result->level = SBX_ABI_LEVEL_NONE;
  result->guarantees = SBX_ABI_GUARANTEE_ENV_SCRUB;
  result->flags = SBX_PROBE_UNCONFINED_ONLY;
  plugin->host->report (call, SBX_ABI_FEATURE_CONFINEMENT, SBX_ABI_REPORT_UNENFORCED,
                        "no OS confinement: runs only acknowledged Unconfined profiles");
  return SBX_STATUS_OK;
}

static int32_t
unconfined_compile (void               *plugin_ctx,
                    SbxHostCall        *call,
                    const SbxPolicyV1  *policy,
                    void              **spec_out,
                    SbxCompileResultV1 *result)
{
  UnconfinedPlugin *plugin = plugin_ctx;
  UnconfinedSpec   *spec;

  if (policy == NULL || policy->struct_size < SBX_POLICY_V1_MIN_SIZE)
    return sbx_plugin_fail (plugin->host, call, SBX_STATUS_INVALID, "unconfined: policy table too small");
  if ((policy->flags & SBX_POLICY_UNCONFINED) == 0)
    return sbx_plugin_fail (plugin->host, call, SBX_STATUS_UNAVAILABLE,
                            "unconfined: refusing a Sandboxed policy; this backend gives no OS confinement "
                            "and runs only acknowledged Unconfined profiles");

  spec = calloc (1, sizeof *spec);
  if (spec == NULL)
    return sbx_plugin_fail (plugin->host, call, SBX_STATUS_NO_MEMORY, "unconfined: out of memory");
  spec->magic = SPEC_MAGIC;
  result->level = SBX_ABI_LEVEL_NONE;
  result->guarantees = SBX_ABI_GUARANTEE_ENV_SCRUB;
  plugin->host->report (call, SBX_ABI_FEATURE_CONFINEMENT, SBX_ABI_REPORT_UNENFORCED,
                        "no OS confinement: the child has the caller's authority");
  plugin->host->report (call, SBX_ABI_FEATURE_ENV_SCRUB, SBX_ABI_REPORT_ENFORCED,
                        "the child environment is the host's scrubbed one");
  plugin->host->report (call, SBX_ABI_FEATURE_PROCESS_LIFETIME, SBX_ABI_REPORT_NARROWED,
                        "best effort: the process group is killed after the target exits; "
                        "a descendant that leaves the group escapes");
  *spec_out = spec;
  return SBX_STATUS_OK;
}

SBX_DEFINE_CLEANUP (dir, DIR *, NULL, closedir)

static int32_t
unconfined_spawn (void                    *plugin_ctx,
                  SbxHostCall             *call,
                  void                    *spec_ptr,
                  const SbxSpawnRequestV1 *request,
                  SbxSpawnResultV1        *result)
{
  UnconfinedPlugin             *plugin = plugin_ctx;
  UnconfinedSpec               *spec = spec_ptr;
  sbx_autofree UnconfinedChild *child = NULL;
  int32_t                       status;

  /* Defense in depth: re-validate what the host hands us. */
  if (spec == NULL || spec->magic != SPEC_MAGIC)
    return sbx_plugin_fail (plugin->host, call, SBX_STATUS_INVALID, "unconfined: spawn with a foreign spec");
  status = sbx_plugin_check_spawn_request (plugin->host, call, "unconfined", request, result,
                                           SBX_SPAWN_IGNORED_SIGNALS);
  if (status != SBX_STATUS_OK)
    return status;
  child = calloc (1, sizeof *child);
  if (child == NULL)
    return sbx_plugin_fail (plugin->host, call, SBX_STATUS_NO_MEMORY, "unconfined: out of memory");

  /* No confinement between fork and exec: that is this backend's claim. */
  status = sbx_plugin_fork_spawn (plugin->host, call, "unconfined", request, NULL, NULL, &child->group, result);
  if (status != SBX_STATUS_OK)
    return status;
  result->containment = SBX_CONTAINMENT_UNSPECIFIED;
  result->child = sbx_steal_pointer (&child);
  return SBX_STATUS_OK;
}

static int32_t
unconfined_signal (void   *plugin_ctx,
                   void   *child_ptr,
                   int32_t signo)
{
  UnconfinedChild *child = child_ptr;

  /* A signal the command started ignoring reaches the command alone, as it
   * would a plain child: the rest of its group never gets it from us. */
  return child != NULL ? sbx_plugin_group_signal (&child->group, signo) : SBX_STATUS_INVALID;
}

/* Does a live (non-zombie) process in group @pgid remain? */
static int
group_has_live_member (pid_t pgid)
{
  sbx_auto (dir) DIR *proc = opendir ("/proc");
  struct dirent      *entry;
  int                 found = 0;

  if (proc == NULL)
    return -1;
  while (!found && (entry = readdir (proc)) != NULL)
    {
      char           path[288];
      char           buf[512];
      const char    *close_paren;
      char           state;
      int            ppid;
      int            pgrp;
      ssize_t        n;
      sbx_autofd int fd = -1;

      if (entry->d_name[0] < '1' || entry->d_name[0] > '9')
        continue;
      snprintf (path, sizeof path, "/proc/%s/stat", entry->d_name);
      fd = open (path, O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        continue;
      n = read (fd, buf, sizeof buf - 1);
      sbx_clear_fd (&fd);
      if (n <= 0)
        continue;
      buf[n] = '\0';
      /* "pid (comm) state ppid pgrp ...": comm may hold ')' and spaces. */
      close_paren = strrchr (buf, ')');
      if (close_paren == NULL
          || sscanf (close_paren + 1, " %c %d %d", &state, &ppid, &pgrp) != 3)
        continue;
      if (pgrp == pgid && state != 'Z' && state != 'X')
        found = 1;
    }
  return found;
}

static int32_t
unconfined_finish (void        *plugin_ctx,
                   SbxHostCall *call,
                   void        *child_ptr,
                   int32_t      wait_status,
                   SbxExitV1   *out)
{
  UnconfinedPlugin *plugin = plugin_ctx;
  UnconfinedChild  *child = child_ptr;
  int               live;
  pid_t             pgid;

  if (child == NULL || child->group.pid <= 0)
    return sbx_plugin_fail (plugin->host, call, SBX_STATUS_INVALID, "unconfined: finish without a child");
  pgid = child->group.pid;
  free (child);

  sbx_plugin_exit_from_wait_status (wait_status, out);
  /* Kill what is left of the group and wait until nothing of it runs. */
  live = sbx_plugin_group_sweep (pgid, SWEEP_TIMEOUT_NS, group_has_live_member);
  if (live < 0)
    return sbx_plugin_fail (plugin->host, call, SBX_STATUS_FAILED,
                            "unconfined: cannot read /proc to sweep process group %d. "
                            "Hint: is /proc mounted?",
                            (int) pgid);
  if (live > 0)
    return sbx_plugin_fail (plugin->host, call, SBX_STATUS_FAILED,
                            "unconfined: process group %d still has live members after SIGKILL", (int) pgid);
  return SBX_STATUS_OK;
}

static void
unconfined_release (void *plugin_ctx,
                    void *spec)
{
  free (spec);
}

static const SbxBackendVTableV1 unconfined_vtable = {
  .struct_size = sizeof (SbxBackendVTableV1),
  .probe = unconfined_probe,
  .compile = unconfined_compile,
  .spawn = unconfined_spawn,
  .signal = unconfined_signal,
  .finish = unconfined_finish,
  .release = unconfined_release,
  .supports_grant_class = NULL,
};

static const SbxPluginExtension unconfined_extensions[] = {
  {
    .struct_size = sizeof (SbxPluginExtension),
    .kind = SBX_EXT_BACKEND,
    .name = "unconfined",
    .priority = -100,
    .vtable = &unconfined_vtable,
  },
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_END },
};

SBX_PLUGIN_DEFINE (unconfined, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURES_NONE, unconfined_init, unconfined_fini, unconfined_extensions)
