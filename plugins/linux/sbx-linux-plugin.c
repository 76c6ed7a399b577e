/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Linux backend plugin: one shared module, two backend extensions.
 *
 *   linux-userns    (priority 100) rung 1: namespaces, mount view, Landlock,
 *                   seccomp, sbx-init as PID 1.  LevelFull when all of it holds.
 *   linux-landlock  (priority  90) rung 2: Landlock, seccomp, sbx-init as a
 *                   subreaper.  LevelDegraded.
 *
 * Two extensions make rung 2 selectable on a host that has rung 1 through
 * the registry's ordinary selection (SBX_BACKEND=linux-landlock).  That is the
 * only switch that "forces" rung 2, and it can only narrow: the registry still
 * refuses a backend whose probed guarantees do not cover the profile's
 * required bits, and it never falls back to another backend.
 */
#include <string.h>

#include "sbx-linux-private.h"

/* Every entry point, declared through its ABI typedef (a signature that
 * does not match the slot it fills cannot compile). */
static SbxBackendProbeFunc probe_userns;
static SbxBackendCompileFunc compile_userns;
static SbxBackendSpawnFunc linux_spawn;
static SbxBackendSignalFunc linux_signal;
static SbxBackendFinishFunc linux_finish;
static SbxBackendReleaseFunc linux_release;
static SbxBackendSupportsGrantClassFunc linux_supports_grant_class;
static SbxBackendExplainFunc explain_userns;
static SbxBackendExplainFunc explain_landlock;
static SbxBackendProbeFunc probe_landlock;
static SbxBackendCompileFunc compile_landlock;
static SbxPluginInitFunc linux_init;
static SbxPluginFiniFunc linux_fini;

/* One per init.  The probe is this instance's (sbx-linux-probe.c says why
 * it is not process-wide): measured on first use by whichever call needs it
 * first (probe, compile and explain may race on different threads, so it is
 * published once with g_once), read-only after that, freed by fini after
 * the last spec that points at it was released. */
typedef struct
{
  const SbxHostV1 *host;
  SbxLinuxProbe   *probe;   /* (owned) (nullable) set once through g_once_init_* */
} SbxLinuxPlugin;

static const SbxLinuxProbe *
plugin_probe (SbxLinuxPlugin *self)
{
  if (g_once_init_enter (&self->probe))
    g_once_init_leave (&self->probe, sbx_linux_probe_new ());
  return self->probe;
}

typedef struct
{
  const SbxHostV1 *host;
  SbxHostCall     *call;
} ReportTarget;

static void
forward_report (void       *data,
                const char *feature,
                uint32_t    status,
                const char *detail)
{
  ReportTarget *target = data;

  target->host->report (target->call, feature, status, detail);
}

static int32_t
linux_init (const SbxHostV1  *host,
            void            **plugin_ctx)
{
  SbxLinuxPlugin *self;

  if (host == NULL || host->abi_version != SBX_PLUGIN_ABI_VERSION
      || !SBX_ABI_HAS (host, SbxHostV1, release)
      || host->set_error == NULL || host->report == NULL)
    return SBX_STATUS_INVALID;
  self = g_new0 (SbxLinuxPlugin, 1);
  self->host = host;
  *plugin_ctx = self;
  return SBX_STATUS_OK;
}

static void
linux_fini (void *plugin_ctx)
{
  SbxLinuxPlugin *self = plugin_ctx;

  sbx_linux_probe_free (self->probe);
  g_free (self);
}

static int32_t
probe_rung (void             *plugin_ctx,
            SbxHostCall      *call,
            SbxProbeResultV1 *result,
            int               rung)
{
  SbxLinuxPlugin *self = plugin_ctx;
  const SbxLinuxProbe *probe = plugin_probe (self);
  ReportTarget target = { self->host, call };
  SbxLinuxReporter reporter = { forward_report, &target };
  g_autofree char *message = NULL;

  sbx_linux_probe_report (probe, rung, &reporter);
  if (probe->init_fd < 0)
    message = g_strdup_printf ("the sandbox init program cannot be executed (%s). Hint: sysctl "
                               "vm.memfd_noexec=0", g_strerror (probe->init_errno));
  else if (rung == SBX_LINUX_RUNG_USERNS && !probe->userns)
    message = g_strdup_printf ("unprivileged user namespaces do not work here: step %s failed: %s. %s",
                               sbx_linux_probe_step_name (probe->userns_step),
                               g_strerror (probe->userns_errno), probe->hint_userns);
  else if (rung == SBX_LINUX_RUNG_LANDLOCK && (probe->landlock_abi < 1 || !probe->seccomp))
    message = g_strdup_printf ("rung 2 needs Landlock and seccomp: Landlock %s, seccomp %s. Hint: "
                               "boot with lsm=landlock,... and CONFIG_SECCOMP_FILTER",
                               probe->landlock_abi >= 1 ? "present" : g_strerror (probe->landlock_errno),
                               probe->seccomp ? "present" : g_strerror (probe->seccomp_errno));
  if (message != NULL)
    {
      self->host->set_error (call, SBX_STATUS_UNAVAILABLE, message);
      return SBX_STATUS_UNAVAILABLE;
    }

  result->flags = 0;
  if (rung == SBX_LINUX_RUNG_USERNS)
    {
      result->level = probe->landlock_abi >= 1 && probe->seccomp ? SBX_ABI_LEVEL_FULL
                                                                 : SBX_ABI_LEVEL_DEGRADED;
      result->guarantees = SBX_ABI_GUARANTEE_PROCESS_BOUNDARY | SBX_ABI_GUARANTEE_WRITE_BOUNDARY
                           | SBX_ABI_GUARANTEE_READ_BOUNDARY | SBX_ABI_GUARANTEE_ENV_SCRUB
                           | SBX_ABI_GUARANTEE_NETWORK_BOUNDARY | SBX_ABI_GUARANTEE_ADDRESS_NETWORK
                           | SBX_ABI_GUARANTEE_TARGET_NETWORK;   /* egress: a proxy spec's listener */
    }
  else
    {
      result->level = SBX_ABI_LEVEL_DEGRADED;
      result->guarantees = SBX_ABI_GUARANTEE_WRITE_BOUNDARY | SBX_ABI_GUARANTEE_READ_BOUNDARY
                           | SBX_ABI_GUARANTEE_ENV_SCRUB | SBX_ABI_GUARANTEE_NETWORK_BOUNDARY;
    }
  /* Sandbox-wide limits, where a cgroup is there for this caller without
   * asking anyone (a scope from the systemd user manager is asked for only
   * at compile, and claimed there). */
  if (probe->cgroup_direct)
    result->guarantees |= SBX_ABI_GUARANTEE_RESOURCE_LIMITS;
  return SBX_STATUS_OK;
}

static int32_t
probe_userns (void             *plugin_ctx,
              SbxHostCall      *call,
              SbxProbeResultV1 *result)
{
  return probe_rung (plugin_ctx, call, result, SBX_LINUX_RUNG_USERNS);
}

static int32_t
probe_landlock (void             *plugin_ctx,
                SbxHostCall      *call,
                SbxProbeResultV1 *result)
{
  return probe_rung (plugin_ctx, call, result, SBX_LINUX_RUNG_LANDLOCK);
}

static int32_t
compile_rung (void                *plugin_ctx,
              SbxHostCall         *call,
              const SbxPolicyV1   *policy,
              void               **spec_out,
              SbxCompileResultV1  *result,
              int                  rung)
{
  SbxLinuxPlugin *self = plugin_ctx;
  ReportTarget target = { self->host, call };
  SbxLinuxReporter reporter = { forward_report, &target };
  g_autoptr(GError) error = NULL;
  uint32_t level = SBX_ABI_LEVEL_NONE;
  uint64_t guarantees = 0;
  int32_t status = SBX_STATUS_FAILED;
  SbxLinuxSpec *spec;

  /* A grant rule must carry the core's pinned fd (only "/" of a host grant
   * has none): never enforce a grant by path alone. */
  for (uint32_t i = 0; policy != NULL && policy->fs_rules != NULL && i < policy->n_fs_rules; i++)
    {
      const SbxFsRuleV1 *r = &policy->fs_rules[i];

      if (r->origin == SBX_FS_ORIGIN_GRANT && r->fd < 0
          && (r->path == NULL || strcmp (r->path, "/") != 0))
        {
          g_autofree char *message =
            g_strdup_printf ("linux: grant rule %u (%s) has no pinned fd; a grant is never "
                             "enforced by path alone", i, r->path != NULL ? r->path : "(null)");

          self->host->set_error (call, SBX_STATUS_UNSUPPORTED, message);
          return SBX_STATUS_UNSUPPORTED;
        }
    }
  spec = sbx_linux_spec_new (plugin_probe (self), policy, rung, &reporter, &level, &guarantees, &status, &error);
  if (spec == NULL)
    {
      if (status == SBX_STATUS_OK)
        status = SBX_STATUS_FAILED;
      self->host->set_error (call, status, error != NULL ? error->message : "compile failed");
      return status;
    }
  result->level = level;
  result->guarantees = guarantees;
  /* Staging needs rung 1's mount namespace (sbx-linux-stage.c). */
  if (rung == SBX_LINUX_RUNG_USERNS && SBX_ABI_HAS (result, SbxCompileResultV1, spawn_flags))
    result->spawn_flags |= SBX_SPAWN_STAGED;
  *spec_out = spec;
  return SBX_STATUS_OK;
}

static int32_t
compile_userns (void                *plugin_ctx,
                SbxHostCall         *call,
                const SbxPolicyV1   *policy,
                void               **spec_out,
                SbxCompileResultV1  *result)
{
  return compile_rung (plugin_ctx, call, policy, spec_out, result, SBX_LINUX_RUNG_USERNS);
}

static int32_t
compile_landlock (void                *plugin_ctx,
                  SbxHostCall         *call,
                  const SbxPolicyV1   *policy,
                  void               **spec_out,
                  SbxCompileResultV1  *result)
{
  return compile_rung (plugin_ctx, call, policy, spec_out, result, SBX_LINUX_RUNG_LANDLOCK);
}

static int32_t
linux_spawn (void                    *plugin_ctx,
             SbxHostCall             *call,
             void                    *spec,
             const SbxSpawnRequestV1 *request,
             SbxSpawnResultV1        *result)
{
  SbxLinuxPlugin *self = plugin_ctx;
  g_autofree char *message = NULL;
  int32_t status;

  status = sbx_linux_spawn (spec, request, result, &message);
  if (status != SBX_STATUS_OK)
    self->host->set_error (call, status, message != NULL ? message : "spawn failed");
  return status;
}

static int32_t
linux_signal (void    *plugin_ctx,
              void    *child,
              int32_t  signo)
{
  return sbx_linux_signal (child, signo);
}

static int32_t
linux_finish (void        *plugin_ctx,
              SbxHostCall *call,
              void        *child,
              int32_t      wait_status,
              SbxExitV1   *out)
{
  SbxLinuxPlugin *self = plugin_ctx;
  g_autofree char *message = NULL;
  int32_t status;

  status = sbx_linux_finish (child, wait_status, out, &message);
  if (status != SBX_STATUS_OK)
    self->host->set_error (call, status, message != NULL ? message : "finish failed");
  return status;
}

static void
linux_release (void *plugin_ctx,
               void *spec)
{
  sbx_linux_spec_free (spec);
}

/* Grants this backend enforces: the command start, and the filesystem
 * classes, whose rules arrive with the core's identity-pinned O_PATH fds
 * (SBX_HOST_FEATURE_RULE_FDS): Landlock rules go on those inodes at both
 * rungs, and rung 1 binds them from the fd.  network.broad.v1 (MODE_PORTS)
 * where Landlock has TCP rules (ABI >= 4) and seccomp is there to keep the
 * sockets to plain TCP: at both rungs the spawn then runs in the host
 * network namespace with TCP connect open to the granted port and 53 only
 * (rung 1 keeps every other namespace; the spec claims no network
 * guarantee).  Proxy targets are refused rather than widened. */
static uint32_t
linux_supports_grant_class (void       *plugin_ctx,
                            const char *grant_class)
{
  static const char *const supported[] = {
    "command.start.v1",
    "filesystem.path.read.v1", "filesystem.path.write.v1",
    "filesystem.tree.read.v1", "filesystem.tree.write.v1",
    "filesystem.host.read.v1", "filesystem.host.write.v1",
  };

  SbxLinuxPlugin *self = plugin_ctx;

  if (grant_class != NULL && strcmp (grant_class, "network.broad.v1") == 0)
    {
      const SbxLinuxProbe *probe = plugin_probe (self);

      return probe->landlock_abi >= 4 && probe->seccomp ? 1 : 0;
    }
  /* egress: a proxy target needs the host to serve the listener a proxy
   * spec's spawn returns (and rung 2, without target-network, fails the
   * grant's guarantee check instead) */
  if (grant_class != NULL && strcmp (grant_class, "network.proxy-target.v1") == 0)
    return (self->host->features & SBX_HOST_FEATURE_PROXY_LISTEN_FD) ? 1 : 0;
  /* unix.connect.v1 adds the socket to the policy's host_sockets for one
   * spawn; only the connect supervisor (seccomp) reaches a host socket. */
  if (grant_class != NULL && strcmp (grant_class, "unix.connect.v1") == 0)
    return plugin_probe (self)->seccomp ? 1 : 0;
  for (gsize i = 0; grant_class != NULL && i < G_N_ELEMENTS (supported); i++)
    if (strcmp (grant_class, supported[i]) == 0)
      /* Path and tree grants only from a host that pins their fds. */
      return i < 1 || i >= 5 || (self->host->features & SBX_HOST_FEATURE_RULE_FDS) ? 1 : 0;
  return 0;
}

/* explain(): compile as compile() does, describe the spec, free it.  The
 * spec's fds and directories live only for this call. */
static int32_t
explain_rung (void               *plugin_ctx,
              SbxHostCall        *call,
              const SbxPolicyV1  *policy,
              char              **text_out,
              int                 rung)
{
  SbxLinuxPlugin *self = plugin_ctx;
  ReportTarget target = { self->host, call };
  SbxLinuxReporter reporter = { forward_report, &target };
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxLinuxSpec) spec = NULL;
  g_autofree char *text = NULL;
  uint32_t level = SBX_ABI_LEVEL_NONE;
  uint64_t guarantees = 0;
  int32_t status = SBX_STATUS_FAILED;
  gsize len;

  spec = sbx_linux_spec_new (plugin_probe (self), policy, rung, &reporter, &level, &guarantees, &status, &error);
  if (spec == NULL)
    {
      if (status == SBX_STATUS_OK)
        status = SBX_STATUS_FAILED;
      self->host->set_error (call, status, error != NULL ? error->message : "compile failed");
      return status;
    }
  text = sbx_linux_explain (spec);
  len = strlen (text);
  *text_out = self->host->alloc (len + 1);
  if (*text_out == NULL)
    {
      self->host->set_error (call, SBX_STATUS_NO_MEMORY, "explain: out of memory");
      return SBX_STATUS_NO_MEMORY;
    }
  memcpy (*text_out, text, len + 1);
  return SBX_STATUS_OK;
}

static int32_t
explain_userns (void               *plugin_ctx,
                SbxHostCall        *call,
                const SbxPolicyV1  *policy,
                char              **text_out)
{
  return explain_rung (plugin_ctx, call, policy, text_out, SBX_LINUX_RUNG_USERNS);
}

static int32_t
explain_landlock (void               *plugin_ctx,
                  SbxHostCall        *call,
                  const SbxPolicyV1  *policy,
                  char              **text_out)
{
  return explain_rung (plugin_ctx, call, policy, text_out, SBX_LINUX_RUNG_LANDLOCK);
}

static const SbxBackendVTableV1 userns_vtable = {
  .struct_size = sizeof (SbxBackendVTableV1),
  .probe = probe_userns,
  .compile = compile_userns,
  .spawn = linux_spawn,
  .signal = linux_signal,
  .finish = linux_finish,
  .release = linux_release,
  .supports_grant_class = linux_supports_grant_class,
  .explain = explain_userns,
};

static const SbxBackendVTableV1 landlock_vtable = {
  .struct_size = sizeof (SbxBackendVTableV1),
  .probe = probe_landlock,
  .compile = compile_landlock,
  .spawn = linux_spawn,
  .signal = linux_signal,
  .finish = linux_finish,
  .release = linux_release,
  .supports_grant_class = linux_supports_grant_class,
  .explain = explain_landlock,
};

static const SbxPluginExtension linux_extensions[] = {
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = SBX_LINUX_BACKEND_USERNS, .priority = 100,
    .vtable = &userns_vtable },
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = SBX_LINUX_BACKEND_LANDLOCK, .priority = 90,
    .vtable = &landlock_vtable },
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_END, .name = NULL, .priority = 0,
    .vtable = NULL },
};

SBX_PLUGIN_DEFINE (linux, SBX_LINUX_VERSION, "LGPL-2.1-or-later", SBX_HOST_FEATURES_NONE,
                   linux_init, linux_fini, linux_extensions)
