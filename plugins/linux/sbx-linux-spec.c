/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * compile(): policy -> SbxLinuxSpec, once per executor.  Everything a spawn
 * replays is built here: the mount plan, the Landlock plan (lsm), the
 * seccomp program (lsm), rlimits, the uid/gid map lines, the directory the
 * view's root is attached to.  The level, guarantee bits and report entries
 * say exactly what the spec enforces on this host.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "sbx-linux-private.h"
#include "sbx-linux-view-start.h"
#include "sbx-linux-audit.h"
#include "sbx-linux-claims.h"
#include "sbx-linux-egress.h"
#include "sbx-linux-zygote.h"

static gboolean
access_restricted (const SbxPolicyV1 *policy,
                   uint32_t           mask)
{
  uint32_t at_root;
  guint32 i;

  for (i = 0; i < policy->n_fs_rules; i++)
    {
      const SbxFsRuleV1 *r = &policy->fs_rules[i];

      if ((r->deny & mask) || (r->allow == 0 && r->deny == 0))
        return TRUE;
    }
  at_root = sbx_linux_resolve (policy->fs_rules, policy->n_fs_rules, "/", TRUE);
  return (at_root & mask) != mask;
}

static void
report (const SbxLinuxReporter *reporter,
        const char             *feature,
        uint32_t                status,
        const char             *detail)
{
  sbx_linux_report (reporter, feature, status, detail);
}

static void
reportf (const SbxLinuxReporter *reporter,
         const char             *feature,
         uint32_t                status,
         const char             *format,
         ...) G_GNUC_PRINTF (4, 5);

static void
reportf (const SbxLinuxReporter *reporter,
         const char             *feature,
         uint32_t                status,
         const char             *format,
         ...)
{
  g_autofree char *detail = NULL;
  va_list args;

  va_start (args, format);
  detail = g_strdup_vprintf (format, args);
  va_end (args);
  sbx_linux_report (reporter, feature, status, detail);
}

static void
spec_add_rlimit (SbxLinuxSpec *spec,
                 int           resource,
                 guint64       value)
{
  SbxLinuxRlimit *rl = &spec->rlimits[spec->n_rlimits++];

  rl->resource = resource;
  rl->limit.rlim_cur = (rlim_t) value;
  rl->limit.rlim_max = (rlim_t) value;
}

/* The limits of @policy.  Sandbox-wide ones come from a cgroup per sandbox
 * (sbx-linux-cgroup.c) whenever the host offers one to this caller, root
 * included; otherwise rlimits are the fallback and the report says how far
 * they reach.  Returns TRUE when the resource-limits guarantee holds: both a
 * process and a memory limit were asked for and both bound the whole
 * sandbox. */
static gboolean
compile_limits (SbxLinuxSpec           *spec,
                const SbxPolicyV1      *policy,
                const SbxLinuxReporter *reporter)
{
  const SbxLimitsV1 *limits = policy->limits;
  g_autoptr(GString) summary = g_string_new (NULL);
  gboolean root = geteuid () == 0;
  const SbxCgroupBase *base = NULL;
  const char *cgv = NULL;
  gboolean cg = FALSE;

  /* No core file leaves the sandbox (a host core_pattern helper would run
   * outside it with the target's memory). */
  spec_add_rlimit (spec, RLIMIT_CORE, 0);
  report (reporter, "core-dumps", SBX_ABI_REPORT_ENFORCED, "RLIMIT_CORE=0: no core dumps");

  if (limits == NULL
      || (limits->max_processes == 0 && limits->max_memory_bytes == 0 && limits->max_open_files == 0))
    {
      report (reporter, SBX_ABI_FEATURE_RESOURCE_LIMITS, SBX_ABI_REPORT_UNENFORCED, "no limits requested");
      return FALSE;
    }

  if (limits->max_processes > 0 || limits->max_memory_bytes > 0)
    {
      base = sbx_cgroup_base_get ();
      cg = base->mode != SBX_CGROUP_NONE;
    }
  if (cg)
    {
      guint reaped = sbx_cgroup_base_reap_stale (base);

      cgv = base->mode == SBX_CGROUP_V2 ? "cgroup v2" : "cgroup v1";
      spec->cgroup_base = base;
      /* The limit is the command's: the sandbox's own PID 1 (sbx-init) is
       * one more task in the cgroup, so a limit of N leaves N tasks to the
       * command and a limit of 1 still lets it start. */
      spec->cgroup_max_pids = limits->max_processes > 0 ? limits->max_processes + 1 : 0;
      spec->cgroup_max_memory = limits->max_memory_bytes;
      if (reaped > 0)
        reportf (reporter, "cgroup-leftovers", SBX_ABI_REPORT_ENFORCED,
                 "removed %u cgroups that supervisors which are gone left behind", reaped);
    }

  if (limits->max_processes > 0)
    {
      if (cg)
        {
          reportf (reporter, "process-limit", SBX_ABI_REPORT_ENFORCED,
                   "at most %" G_GUINT64_FORMAT " tasks of the command in the whole sandbox (%s "
                   "pids.max %" G_GUINT64_FORMAT ", read back: sbx-init is the one more; threads "
                   "count as tasks; %s)",
                   limits->max_processes, cgv, limits->max_processes + 1, base->mechanism);
          g_string_append_printf (summary, "processes: %" G_GUINT64_FORMAT " sandbox-wide (%s pids); ",
                                  limits->max_processes, cgv);
        }
      else if (spec->rung == SBX_LINUX_RUNG_USERNS && !root)
        {
          /* Since Linux 5.14 RLIMIT_NPROC counts the tasks of a uid per user
           * namespace: in the fresh namespace it counts the sandbox only. */
          /* +1: sbx-init, the namespace's PID 1, runs as the same uid and
           * counts; the limit is the command's. */
          spec_add_rlimit (spec, RLIMIT_NPROC, limits->max_processes + 1);
          reportf (reporter, "process-limit", SBX_ABI_REPORT_ENFORCED,
                   "at most %" G_GUINT64_FORMAT " processes (rlimit fallback: RLIMIT_NPROC counts per "
                   "user namespace: the sandboxes of this executor share one, the caller's other "
                   "processes do not count)", limits->max_processes);
          g_string_append_printf (summary, "processes: %" G_GUINT64_FORMAT " per executor (RLIMIT_NPROC); ",
                                  limits->max_processes);
        }
      else if (spec->rung == SBX_LINUX_RUNG_USERNS)
        {
          reportf (reporter, "process-limit", SBX_ABI_REPORT_UNENFORCED,
                   "not enforced: the kernel exempts uid 0 from RLIMIT_NPROC and no cgroup can be "
                   "used (%s)", base->failure);
          g_string_append (summary, "processes: unenforced (uid 0); ");
        }
      else
        {
          reportf (reporter, "process-limit", SBX_ABI_REPORT_UNENFORCED,
                   "not enforced: without a user namespace RLIMIT_NPROC would count every process "
                   "of the user, not the sandbox, and no cgroup can be used (%s)", base->failure);
          g_string_append (summary, "processes: unenforced; ");
        }
    }
  if (limits->max_memory_bytes > 0)
    {
      /* Per process too, so one process over the limit fails its
       * allocation instead of being killed by the cgroup's OOM killer. */
      spec_add_rlimit (spec, RLIMIT_DATA, limits->max_memory_bytes);
      if (cg)
        {
          reportf (reporter, "memory-limit", SBX_ABI_REPORT_ENFORCED,
                   "at most %" G_GUINT64_FORMAT " bytes for the whole sandbox (%s %s, read back; "
                   "the kernel kills a process of the sandbox when it is reached), and each process "
                   "at most as much data (RLIMIT_DATA); %s", limits->max_memory_bytes, cgv,
                   base->mode == SBX_CGROUP_V2 ? "memory.max with memory.swap.max=0"
                   : base->memsw ? "memory.limit_in_bytes and memory.memsw.limit_in_bytes"
                   : "memory.limit_in_bytes", base->mechanism);
          g_string_append_printf (summary, "memory: %" G_GUINT64_FORMAT " bytes sandbox-wide (%s memory); ",
                                  limits->max_memory_bytes, cgv);
        }
      else
        {
          reportf (reporter, "memory-limit", SBX_ABI_REPORT_UNENFORCED,
                   "not sandbox-wide (rlimit fallback): each process is capped at %" G_GUINT64_FORMAT
                   " bytes of data (RLIMIT_DATA), but the sandbox as a whole is not: %s",
                   limits->max_memory_bytes, base->failure);
          g_string_append_printf (summary, "memory: %" G_GUINT64_FORMAT " bytes per process only; ",
                                  limits->max_memory_bytes);
        }
    }
  if (limits->max_open_files > 0)
    {
      spec_add_rlimit (spec, RLIMIT_NOFILE, limits->max_open_files);
      reportf (reporter, "open-files-limit", SBX_ABI_REPORT_ENFORCED,
               "at most %" G_GUINT64_FORMAT " open files per process (RLIMIT_NOFILE)",
               limits->max_open_files);
      g_string_append_printf (summary, "open files: %" G_GUINT64_FORMAT " per process; ",
                              limits->max_open_files);
    }
  if (summary->len >= 2)
    g_string_truncate (summary, summary->len - 2);
  if (cg && limits->max_processes > 0 && limits->max_memory_bytes > 0)
    {
      reportf (reporter, SBX_ABI_FEATURE_RESOURCE_LIMITS, SBX_ABI_REPORT_ENFORCED,
               "processes and memory are bounded for the whole sandbox: %s", summary->str);
      return TRUE;
    }
  reportf (reporter, SBX_ABI_FEATURE_RESOURCE_LIMITS, SBX_ABI_REPORT_UNENFORCED,
           "the resource-limits guarantee needs both a process and a memory limit for the whole "
           "sandbox (a cgroup); %s%s%s; enforced here: %s",
           cg ? "one of them was not asked for" : "rlimit fallback, no cgroup can be used",
           !cg && base != NULL ? ": " : "", !cg && base != NULL ? base->failure : "",
           summary->str);
  return FALSE;
}

static char *
make_root_dir (const SbxPolicyV1  *policy,
               GError            **error)
{
  g_autofree char *template = NULL;
  int saved_errno;

  if (policy->state_dir != NULL)
    template = g_build_filename (policy->state_dir, "linux-root-XXXXXX", NULL);
  else
    template = g_build_filename (g_get_tmp_dir (), "sbx-linux-root-XXXXXX", NULL);
  if (g_mkdtemp_full (template, 0700) == NULL)
    {
      saved_errno = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "creating the mount point of the sandbox root under %s: %s",
                   policy->state_dir != NULL ? policy->state_dir : g_get_tmp_dir (),
                   g_strerror (saved_errno));
      return NULL;
    }
  return g_steal_pointer (&template);
}

/* lsm's modules report mechanism entries, some under the names of the
 * guarantee features the glue reports ("write-boundary", ...).  The glue is
 * the one voice for those (it alone knows which bits the whole spec
 * achieves), so the modules' details are held back and folded into its
 * entries. */
typedef struct
{
  const SbxLinuxReporter *outer;
  GHashTable             *held;   /* feature -> detail */
} ModuleReporter;

static gboolean
is_guarantee_feature (const char *feature)
{
  static const char *const names[] = { "process-boundary", "write-boundary", "read-boundary",
                                       "env-scrub", "network-boundary", "address-network",
                                       "resource-limits", "target-network" };
  gsize i;

  for (i = 0; i < G_N_ELEMENTS (names); i++)
    if (strcmp (feature, names[i]) == 0)
      return TRUE;
  return FALSE;
}

static void
module_report (void       *data,
               const char *feature,
               uint32_t    status,
               const char *detail)
{
  ModuleReporter *m = data;

  if (is_guarantee_feature (feature))
    {
      const char *prev = g_hash_table_lookup (m->held, feature);
      char *joined = prev != NULL ? g_strdup_printf ("%s; %s", prev, detail != NULL ? detail : "")
                                  : g_strdup (detail != NULL ? detail : "");

      g_hash_table_replace (m->held, g_strdup (feature), joined);
      return;
    }
  sbx_linux_report (m->outer, feature, status, detail);
}

/* Reports a guarantee feature with the modules' detail appended. */
static void
report_guarantee (const SbxLinuxReporter *reporter,
                  GHashTable             *held,
                  const char             *feature,
                  uint32_t                status,
                  const char             *detail)
{
  const char *more = g_hash_table_lookup (held, feature);
  g_autofree char *joined = NULL;

  if (more != NULL && more[0] != '\0' && strcmp (more, detail) != 0)
    joined = g_strdup_printf ("%s (%s)", detail, more);
  sbx_linux_report (reporter, feature, status, joined != NULL ? joined : detail);
}

/* Reports the decision of @claims for @feature (nothing when it decided
 * nothing), with the modules' detail and @more appended. */
static void
report_claim (const SbxLinuxReporter *reporter,
              GHashTable             *held,
              const SbxLinuxClaims   *claims,
              SbxLinuxClaimFeature    feature,
              const char             *more)
{
  const SbxLinuxClaim *c = &claims->claims[feature];
  g_autofree char *detail = NULL;

  if (c->status == 0)
    return;
  if (more != NULL && more[0] != '\0')
    detail = g_strdup_printf ("%s. %s", c->detail, more);
  report_guarantee (reporter, held, sbx_linux_claim_feature_name (feature), c->status,
                    detail != NULL ? detail : c->detail);
}

/* The policy's host sockets, re-checked (defense in depth: the backend
 * does not trust the core's validation): absolute, shorter than a socket
 * address, no NUL-less garbage.  FALSE with @error naming the entry. */
static gboolean
copy_host_sockets (SbxLinuxSpec      *spec,
                   const SbxPolicyV1 *policy,
                   GError           **error)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func (g_free);

  if (policy->struct_size >= SBX_POLICY_V1_HOST_SOCKETS_SIZE && policy->host_sockets != NULL)
    for (guint i = 0; policy->host_sockets[i] != NULL; i++)
      {
        const char *path = policy->host_sockets[i];

        if (path[0] != '/' || strlen (path) >= 108 || !g_utf8_validate (path, -1, NULL) || i >= 64)
          {
            g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                         "policy.host_sockets[%u]: not an absolute path shorter than 108 bytes (or more than 64 "
                         "entries)", i);
            return FALSE;
          }
        g_ptr_array_add (out, g_strdup (path));
      }
  g_ptr_array_add (out, NULL);
  spec->host_sockets = (char **) g_ptr_array_free (g_steal_pointer (&out), FALSE);
  return TRUE;
}

/* Which host sockets the connect supervisor lets the target reach, with a
 * warning for the ones that hand over the host. */
static void
report_host_sockets (const SbxLinuxReporter *reporter,
                     const SbxLinuxSpec     *spec)
{
  g_autoptr(GString) detail = g_string_new (NULL);

  if (spec->host_sockets[0] == NULL)
    {
      report (reporter, "unix-host-sockets", SBX_ABI_REPORT_ENFORCED,
              "no host unix socket is reachable (the supervisor refuses every one the sandbox did not bind, "
              "by pathname or abstract name); the profile member \"host-sockets\" names the ones to reach");
      return;
    }
  g_string_append (detail, "the profile names these host sockets, which the sandbox may connect to by "
                           "exactly this path (every other host socket is refused):");
  for (guint i = 0; spec->host_sockets[i] != NULL; i++)
    {
      const char *path = spec->host_sockets[i];
      const char *base = strrchr (path, '/') + 1;

      g_string_append_printf (detail, " %s", path);
      if (strcmp (base, "docker.sock") == 0 || strcmp (base, "containerd.sock") == 0
          || strcmp (base, "podman.sock") == 0)
        g_string_append (detail, " (WARNING: a container engine's socket is equivalent to root on the host)");
      else if (strcmp (base, "system_bus_socket") == 0)
        g_string_append (detail, " (WARNING: the system D-Bus bus is equivalent to root on the host through "
                                 "its privileged services)");
      else if (strcmp (base, "bus") == 0)
        g_string_append (detail, " (the session bus: acts as the user, outside the sandbox)");
    }
  g_string_append (detail, ". A named socket's daemon acts for the sandbox outside every boundary; a "
                           "docker.sock or the system bus is host-root-equivalent");
  report (reporter, "unix-host-sockets", SBX_ABI_REPORT_NARROWED, detail->str);
}

/* What the steps of sbx_linux_spec_new() hand each other: its inputs, the
 * spec being built and the facts one step leaves for the next. */
typedef struct
{
  const SbxLinuxProbe    *probe;
  const SbxPolicyV1      *policy;   /* rung 2 with a proxy: the closed-network rewrite */
  int                     rung;
  const SbxLinuxReporter *reporter;
  ModuleReporter         *module;
  SbxLinuxReporter       *module_reporter;
  int32_t                *status;   /* the status of a failed step */
  SbxLinuxSpec           *spec;
  gboolean                net_proxy;
  gboolean                net_deny;
  gboolean                net_ports;
  gboolean                allow_unix;
  uint32_t                landlock_bits;
  uint32_t                seccomp_bits;
  SbxLinuxClaims          claims;
} SpecBuild;

/* The host offers what @rung needs: the init program, user namespaces
 * (rung 1), Landlock and seccomp (rung 2). */
static gboolean
spec_check_host (const SpecBuild  *b,
                 GError          **error)
{
  const SbxLinuxProbe *probe = b->probe;

  *b->status = SBX_STATUS_UNAVAILABLE;
  if (probe->init_fd < 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   "the sandbox init program cannot be executed on this host (%s)",
                   g_strerror (probe->init_errno));
      return FALSE;
    }
  if (b->rung == SBX_LINUX_RUNG_USERNS && !probe->userns)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   "unprivileged user namespaces do not work here (step %s: %s). %s",
                   sbx_linux_probe_step_name (probe->userns_step), g_strerror (probe->userns_errno),
                   probe->hint_userns != NULL ? probe->hint_userns : "");
      return FALSE;
    }
  if (b->rung == SBX_LINUX_RUNG_LANDLOCK && (probe->landlock_abi < 1 || !probe->seccomp))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           "rung 2 needs Landlock and seccomp, and this kernel lacks one of them. "
                           "Hint: boot with lsm=landlock,... and a kernel with CONFIG_SECCOMP_FILTER");
      return FALSE;
    }
  return TRUE;
}

/* The spec and the policy's network facts the later steps read. */
static void
spec_add_base (SpecBuild *b)
{
  const SbxPolicyV1 *policy = b->policy;
  SbxLinuxSpec *spec = g_new0 (SbxLinuxSpec, 1);

  spec->rung = b->rung;
  spec->probe = b->probe;
  for (guint32 k = 0; k < policy->n_fs_rules; k++)
    spec->transient |= policy->fs_rules[k].origin == SBX_FS_ORIGIN_GRANT;
  b->net_deny = policy->net->mode == SBX_NET_MODE_DENY;
  /* Ports (a network.broad.v1 grant): the host network namespace at both
   * rungs, narrowed by Landlock TCP rules and the seccomp TCP-only rules
   * (the claims refuse the spec when either is missing). */
  b->net_ports = policy->net->mode == SBX_NET_MODE_PORTS;
  spec->dns_over_tcp = b->net_ports && (policy->net->flags & SBX_NET_FLAG_DNS) != 0;
  b->spec = spec;
}

/* Rung 1: the sandbox's hostname and hosts file, the mount view, the
 * directory its root is attached to, the network namespace and the proxy's
 * files, the id maps and the zygote. */
static gboolean
spec_add_namespaces (SpecBuild  *b,
                     GError    **error)
{
  const SbxPolicyV1 *policy = b->policy;
  SbxLinuxSpec *spec = b->spec;
  g_autoptr(GError) local_error = NULL;

  if (b->rung != SBX_LINUX_RUNG_USERNS)
    return TRUE;
  /* The sandbox's hostname, and a hosts file that resolves it (a proxy
   * network's own hosts file names it too: sbx-linux-egress.c). */
  spec->hostname = g_strdup ("sbx");
  if (!b->net_proxy && !sbx_linux_hosts_file_new (spec, policy, error))
    {
      *b->status = SBX_STATUS_FAILED;
      return FALSE;
    }
  spec->mounts = sbx_linux_mount_plan_new (policy, b->probe->landlock_abi >= 1, spec->hosts_file,
                                           &local_error);
  if (spec->mounts == NULL)
    {
      *b->status = SBX_STATUS_INVALID;
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  /* The view supervisor's FUSE root (sbx-linux-view-server.h): where the
   * root is ours and the probe mounted FUSE in a user namespace. */
  spec->view_fuse = !spec->mounts->root_is_host && b->probe->fuse_errno == 0;
  spec->view_uid = (long) geteuid ();
  spec->view_gid = (long) getegid ();
  spec->policy_flags = policy->flags;
  /* The first spawn's FUSE root, made while the compile and the caller go
   * on to that spawn (it reads only what is set above). */
  spec->early = sbx_linux_view_early_start (spec);
  spec->root_dir = make_root_dir (policy, error);
  if (spec->root_dir == NULL)
    {
      *b->status = SBX_STATUS_FAILED;
      return FALSE;
    }
  spec->root_dir_created = TRUE;
  spec->netns = b->net_deny || b->net_proxy;
  spec->proxy_port = b->net_proxy ? policy->net->proxy_port : 0;
  if (b->net_proxy && !sbx_linux_egress_files_new (spec, policy, error))
    {
      *b->status = SBX_STATUS_FAILED;
      return FALSE;
    }
  spec->uid_map = g_strdup_printf ("%u %u 1\n", (unsigned) geteuid (), (unsigned) geteuid ());
  spec->gid_map = g_strdup_printf ("%u %u 1\n", (unsigned) getegid (), (unsigned) getegid ());
  spec->uid_map_len = strlen (spec->uid_map);
  spec->gid_map_len = strlen (spec->gid_map);
  /* A spec with grants serves one spawn, and a proxy spec gets a network
   * namespace per spawn (each run its own listener): no zygote. */
  spec->zygote = spec->transient || b->net_proxy ? NULL : sbx_linux_zygote_new ();
  return TRUE;
}

/* A root caller's sandbox runs as the caller's uid 0 (host root, unless the
 * caller itself runs in a user namespace), so the root-only kernel files of
 * the fresh /proc that rung 1 adds to the view are masked.  For any other
 * caller the kernel's own checks keep them from the sandbox already (and
 * masking them for a root that is not the host's hides nothing it could
 * read). */
static void
spec_add_proc_mask (SpecBuild *b)
{
  const SbxLinuxReporter *reporter = b->reporter;

  if (geteuid () != 0)
    return;
  if (b->rung == SBX_LINUX_RUNG_USERNS)
    {
      b->spec->mask_proc = TRUE;
      reportf (reporter, "proc-masked", SBX_ABI_REPORT_ENFORCED,
               "uid 0 inside is the caller's uid 0: root-only kernel files of the fresh /proc (keys, kmsg, "
               "kallsyms, timer_list, slabinfo, vmallocinfo, iomem, pagetypeinfo, ... and the acpi, "
               "scsi, asound, driver directories) are masked; /proc is read-only");
    }
  else if (sbx_linux_resolve (b->policy->fs_rules, b->policy->n_fs_rules, "/proc/keys", FALSE) & SBX_FS_READ)
    /* Rung 2 shows the host /proc only where the profile itself lets the
     * host be read: then these files are part of what it granted.  Denying
     * them would carve /proc (Landlock can only add allows), and every
     * process started later, the target included, would lose its
     * /proc/PID (/proc/self, /dev/fd). */
    reportf (reporter, "proc-masked", SBX_ABI_REPORT_UNENFORCED,
             "the target runs as uid 0 and the profile lets it read the host /proc: root-only kernel "
             "files (keys, kmsg, timer_list, slabinfo, ...) are readable as the profile says; Landlock "
             "could only deny them by cutting later processes off /proc/PID. Hint: deny host read, or "
             "use the linux-userns backend (its /proc is masked)");
  else
    reportf (reporter, "proc-masked", SBX_ABI_REPORT_VACUOUS,
             "the target runs as uid 0, but the profile does not let it read /proc");
}

/* Landlock (lsm's plan): the filesystem boundary at rung 2, defense in
 * depth on top of the mount view at rung 1. */
static gboolean
spec_add_landlock (SpecBuild  *b,
                   GError    **error)
{
  const SbxLinuxProbe *probe = b->probe;
  SbxLandlockOptions options = { 0 };
  g_autoptr(GError) local_error = NULL;

  if (probe->landlock_abi < 1)
    {
      reportf (b->reporter, "landlock", SBX_ABI_REPORT_UNENFORCED,
               "Landlock is not available (%s); the mount view alone is the filesystem boundary. "
               "Hint: boot with lsm=landlock,... (CONFIG_SECURITY_LANDLOCK)",
               g_strerror (probe->landlock_errno));
      return TRUE;
    }
  options.abi = probe->landlock_abi;
  options.rung = b->rung == SBX_LINUX_RUNG_USERNS ? SBX_LANDLOCK_RUNG_USERNS : SBX_LANDLOCK_RUNG_LANDLOCK;
  options.net = ((b->rung == SBX_LINUX_RUNG_LANDLOCK && b->net_deny) || b->net_ports)
                && probe->landlock_abi >= 4;
  options.mount_roots = b->spec->mounts != NULL ? (const char *const *) b->spec->mounts->bind_sources : NULL;
  b->spec->landlock = sbx_landlock_plan_new (b->policy, &options, b->module_reporter, &local_error);
  if (b->spec->landlock == NULL)
    {
      *b->status = SBX_STATUS_FAILED;
      g_propagate_prefixed_error (error, g_steal_pointer (&local_error), "landlock: ");
      return FALSE;
    }
  b->landlock_bits = sbx_landlock_plan_enforces (b->spec->landlock);
  return TRUE;
}

/* Unix sockets are supervised on both rungs unless the profile opened
 * them: a host daemon's pathname socket inside any root (the workspace, a
 * read-only root) accepts a connection that needs no write access to the
 * mount, and Landlock below ABI 9 (LANDLOCK_ACCESS_FS_RESOLVE_UNIX) cannot
 * mediate connect(), so the filter hands every connect to the connect
 * supervisor (sbx-linux-unotify.c), which lets the sandbox reach its own
 * sockets and the host sockets the policy names (reported).  Then the
 * seccomp programs: the spec's, and the same with the caller's terminal
 * shared. */
static gboolean
spec_add_seccomp (SpecBuild  *b,
                  GError    **error)
{
  SbxLinuxSpec *spec = b->spec;
  SbxSeccompOptions options = { 0 };
  g_autoptr(GError) local_error = NULL;

  b->allow_unix = (b->policy->flags & SBX_POLICY_UNIX_SOCKETS) != 0;
  if (!copy_host_sockets (spec, b->policy, error))
    {
      *b->status = SBX_STATUS_INVALID;
      return FALSE;
    }
  if (!b->probe->seccomp)
    {
      reportf (b->reporter, "seccomp", SBX_ABI_REPORT_UNENFORCED,
               "seccomp filters are not available (%s). Hint: a kernel with CONFIG_SECCOMP_FILTER",
               g_strerror (b->probe->seccomp_errno));
      return TRUE;
    }
  options.rung = b->rung;
  options.net_mode = b->policy->net->mode;
  options.landlock_abi = spec->landlock != NULL ? b->probe->landlock_abi : 0;
  options.allow_unix_sockets = b->allow_unix;
  spec->seccomp = sbx_seccomp_program_new (&options, b->module_reporter, &local_error);
  if (spec->seccomp == NULL)
    {
      *b->status = SBX_STATUS_FAILED;
      g_propagate_prefixed_error (error, g_steal_pointer (&local_error), "seccomp: ");
      return FALSE;
    }
  b->seccomp_bits = sbx_seccomp_program_enforces (spec->seccomp);
  if (b->seccomp_bits & SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED)
    report_host_sockets (b->reporter, spec);
  /* The same program for a spawn that shares the caller's terminal
   * (sbx_linux_spawn_shares_terminal()); reported through "terminal" by
   * spec_add_process_reports(), its other rules are the ones just
   * reported. */
  options.caller_terminal_shared = TRUE;
  spec->seccomp_terminal = sbx_seccomp_program_new (&options, NULL, &local_error);
  if (spec->seccomp_terminal == NULL)
    {
      *b->status = SBX_STATUS_FAILED;
      g_propagate_prefixed_error (error, g_steal_pointer (&local_error), "seccomp: ");
      return FALSE;
    }
  return TRUE;
}

/* The limits (which report themselves), then what the whole spec can claim
 * (sbx-linux-claims.c); a spec that could only claim less than its rung
 * promises is refused. */
static gboolean
spec_add_claims (SpecBuild  *b,
                 GError    **error)
{
  SbxLinuxClaimsInput in = { 0 };

  in.rung = b->rung;
  in.landlock = b->spec->landlock != NULL;
  in.seccomp = b->spec->seccomp != NULL;
  in.proc_children = b->probe->proc_children;
  in.landlock_bits = b->landlock_bits;
  in.seccomp_bits = b->seccomp_bits;
  in.limits = compile_limits (b->spec, b->policy, b->reporter);
  in.write_restricted = access_restricted (b->policy, SBX_FS_WRITE);
  in.read_restricted = access_restricted (b->policy, SBX_FS_READ | SBX_FS_EXEC);
  in.net_mode = b->policy->net->mode;
  in.allow_unix = b->allow_unix;
  in.unreadable_binds = b->spec->mounts != NULL && b->spec->mounts->n_unreadable_binds > 0;
  sbx_linux_claims_decide (&in, &b->claims);
  if (b->claims.refusal != NULL)
    {
      *b->status = SBX_STATUS_UNSUPPORTED;
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "%s: %s",
                   b->rung == SBX_LINUX_RUNG_USERNS ? SBX_LINUX_BACKEND_USERNS : SBX_LINUX_BACKEND_LANDLOCK,
                   b->claims.refusal);
      return FALSE;
    }
  /* Unix sockets the profile allows, where only the sockets under the
   * mounted roots are reachable (rung 1): the boundaries hold with that
   * exception.  Where host daemons' sockets are reachable the claims
   * withdrew the boundaries and unix-sockets says why. */
  if (b->allow_unix && !b->claims.host_sockets)
    {
      module_report (b->module, SBX_ABI_FEATURE_NETWORK_BOUNDARY, SBX_ABI_REPORT_NARROWED,
                     "except unix sockets, which the profile allows: a daemon's pathname socket under "
                     "the roots is reachable and may relay anywhere");
      module_report (b->module, SBX_ABI_FEATURE_PROCESS_BOUNDARY, SBX_ABI_REPORT_NARROWED,
                     "except unix sockets, which the profile allows: a host process listening on a "
                     "pathname socket under the roots is reachable");
    }
  b->spec->containment = b->claims.containment;
  return TRUE;
}

/* What every spawn of the spec does to the target's process: its
 * environment, capabilities, session and terminal, and its parent's
 * death. */
static void
spec_add_process_reports (const SpecBuild *b)
{
  const SbxLinuxReporter *reporter = b->reporter;
  const char *env_detail;

  env_detail = b->spec->dns_over_tcp
               ? "the target gets exactly the environment the core built, nothing inherited, plus "
                 "RES_OPTIONS=use-vc (DNS over TCP: the granted network has no UDP)"
               : "the target gets exactly the environment the core built, nothing inherited";
  report (reporter, SBX_ABI_FEATURE_ENV_SCRUB, SBX_ABI_REPORT_ENFORCED, env_detail);
  report (reporter, "capabilities", SBX_ABI_REPORT_ENFORCED,
          "every capability dropped (bounding, ambient, effective, permitted, inheritable), "
          "securebits locked, no_new_privs; the target runs as the caller's own uid and gid");
  if (b->spec->seccomp_terminal != NULL)
    report (reporter, "terminal", SBX_ABI_REPORT_ENFORCED,
            "new session (setsid): no controlling terminal, so TIOCSTI injection is refused. A command "
            "whose stdin, stdout or stderr is the caller's terminal (not one sbx created for it, as --pty "
            "does) cannot set that terminal's modes: for such a run the terminal-setting ioctl requests "
            "(modes, window size, line discipline, flow control and flushes, breaks, controlling terminal, "
            "console redirection, exclusive mode) return EPERM on every descriptor, reading them works, "
            "and the caller's terminal is left as it was");
  else
    report (reporter, "terminal", SBX_ABI_REPORT_NARROWED,
            "new session (setsid): no controlling terminal, so TIOCSTI injection is refused; but without "
            "seccomp a command whose standard stream is the caller's terminal can set its modes, window "
            "size and line discipline, and they stay so after the run. Hint: --pty gives the command a "
            "terminal of its own");
  report (reporter, "parent-death", SBX_ABI_REPORT_ENFORCED,
          "the tree is killed when the supervisor process goes away (sbx-init watches the "
          "exit-record pipe; the target has PR_SET_PDEATHSIG)");
}

/* The view's /sys, as the mount plan built it. */
static void
spec_report_sys (const SpecBuild *b)
{
  const SbxLinuxMountPlan *plan = b->spec->mounts;
  const SbxCgroupBase *cg = b->spec->cgroup_base;

  if (plan->curated_sys)
    reportf (b->reporter, "sys", SBX_ABI_REPORT_WIDENED,
             "a read-only /sys of what programs commonly read: CPU topology and online CPUs "
             "(/sys/devices/system/cpu), NUMA nodes (/sys/devices/system/node)%s; no other part "
             "of the host's sysfs, nothing writable",
             cg != NULL && cg->mode == SBX_CGROUP_V2
             ? ", and the sandbox's own cgroup at /sys/fs/cgroup where the kernel lets the sandbox "
               "mount it (cgroup v2, in a cgroup namespace rooted there: its limits and nothing above "
               "or beside it)"
             : cg != NULL && cg->mode == SBX_CGROUP_V1
             ? ", and the sandbox's own cgroups at /sys/fs/cgroup/memory and /sys/fs/cgroup/pids "
               "where the kernel lets the sandbox mount them (cgroup v1, in a cgroup namespace rooted "
               "there: their limits and nothing above or beside them)"
             : "; /sys/fs/cgroup is empty: the sandbox has no cgroup of its own (rlimits), and "
               "the cgroup it shares with its caller is not shown");
  else if (plan->root_is_host)
    report (b->reporter, "sys", SBX_ABI_REPORT_WIDENED,
            "the host's /sys, read-only, through the host root the policy lets the sandbox read");
}

/* Rung 1: whether attempts on paths outside the view are observed (the
 * view supervisor's FUSE root answers and reports them), and if not, why.
 * Rung 2's entry of the same name is the Landlock audit's. */
static void
spec_report_fs_denials (const SpecBuild *b)
{
  const SbxLinuxSpec *spec = b->spec;
  const SbxLinuxMountPlan *plan = spec->mounts;
  gboolean not_found = (spec->policy_flags & SBX_POLICY_DENIED_NOT_FOUND) != 0;
  int open_errno = 0;

  if (spec->view_fuse)
    {
      reportf (b->reporter, "fs-denials", SBX_ABI_REPORT_ENFORCED,
               "names outside the view are answered by the view supervisor (FUSE): a denied host "
               "path that exists answers %s, and each attempt is reported (every spawn has a "
               "server of its own, also through the executor's zygote and its warm sandboxes); "
               "in a run that asks, a read of a gated host file is asked and served once approved "
               "(reads only: writes, execs and listings are refused)",
               not_found ? "ENOENT (denied-paths: not-found)" : "EACCES");
      return;
    }
  if (plan->root_is_host)
    {
      report (b->reporter, "fs-denials", SBX_ABI_REPORT_UNENFORCED,
              plan->root_flags & SBX_MOUNT_F_RDONLY
              ? "the view shows the host read-only: writes are refused with EROFS and not reported"
              : "the view shows the host writable: nothing outside the view is refused");
      return;
    }
  /* Which step failed, for the words: the device's open, or the mount. */
  {
    int fd = open ("/dev/fuse", O_RDWR | O_CLOEXEC);

    if (fd < 0)
      open_errno = errno;
    else
      close (fd);
  }
  if (open_errno != 0)
    reportf (b->reporter, "fs-denials", SBX_ABI_REPORT_UNENFORCED,
             "/dev/fuse cannot be opened (%s): a path outside the view answers ENOENT and is not "
             "reported", g_strerror (open_errno));
  else
    reportf (b->reporter, "fs-denials", SBX_ABI_REPORT_UNENFORCED,
             "FUSE cannot be mounted in the sandbox's user namespace (%s): a path outside the view "
             "answers ENOENT and is not reported", g_strerror (b->probe->fuse_errno));
}

/* Rung 1's boundaries: the namespaces and the mount view. */
static void
spec_report_namespaces (const SpecBuild *b)
{
  const SbxLinuxReporter *reporter = b->reporter;
  const SbxLinuxSpec *spec = b->spec;
  const SbxLinuxMountPlan *plan = spec->mounts;
  GHashTable *held = b->module->held;
  g_autofree char *hidden = plan->masked[0] != NULL ? g_strjoinv (", ", plan->masked) : NULL;

  report_claim (reporter, held, &b->claims, SBX_LINUX_CLAIM_PROCESS_BOUNDARY, NULL);
  report (reporter, SBX_ABI_FEATURE_PROCESS_CONTAINMENT, SBX_ABI_REPORT_ENFORCED,
          "the pid namespace dies with sbx-init: no descendant outlives the run");
  reportf (reporter, "mount-view", SBX_ABI_REPORT_ENFORCED,
           "%s; %u bind mounts (read-only unless writable by policy, nosuid, nodev)%s%s%s%s",
           plan->root_is_host ? "root: the host's / bound with the policy's flags"
           : spec->view_fuse ? "root: the view supervisor's read-only FUSE filesystem showing only "
                               "the view's skeleton (a spawn that cannot make it fails: "
                               "setup step view-supervisor-root)"
           : "root: a private read-only tmpfs",
           plan->n_binds, plan->own_run ? "; /run: an empty read-only tmpfs of the sandbox's own" : "",
           hidden != NULL ? "; hidden: " : "", hidden != NULL ? hidden : "",
           plan->n_unreadable_binds > 0 ? "; write-only paths are mounted for writing, "
                                          "Landlock refuses reading them" : "");
  report (reporter, "proc", SBX_ABI_REPORT_ENFORCED,
          "a fresh procfs of the sandbox's pid namespace, mounted read-only "
          "(kernel tunables cannot be written)");
  report (reporter, "dev", SBX_ABI_REPORT_ENFORCED,
          "a minimal /dev: null, zero, full, random, urandom, tty, a private devpts and /dev/shm");
  spec_report_sys (b);
  if (plan->own_hosts)
    reportf (reporter, "hostname", SBX_ABI_REPORT_WIDENED,
             "hostname '%s' (a UTS namespace); /etc/hosts is the sandbox's own read-only copy of "
             "the host's with '" SBX_LINUX_HOSTNAME_ADDRESS " %s' added, so the name resolves",
             spec->hostname, spec->hostname);
  else if (spec->egress_hosts != NULL)
    reportf (reporter, "hostname", SBX_ABI_REPORT_WIDENED,
             "hostname '%s' (a UTS namespace); the proxy network's own /etc/hosts (localhost only) "
             "names it too, so the name resolves", spec->hostname);
  if (plan->hides_host_sockets)
    report (reporter, "host-sockets", SBX_ABI_REPORT_NARROWED,
            "/run, /var/run and /tmp of the visible host are hidden: unix sockets there "
            "(D-Bus, systemd, docker, ssh-agent, tmux) ignore read-only mounts");
  report_claim (reporter, held, &b->claims, SBX_LINUX_CLAIM_WRITE_BOUNDARY, NULL);
  report_claim (reporter, held, &b->claims, SBX_LINUX_CLAIM_READ_BOUNDARY, NULL);
  spec_report_fs_denials (b);
}

/* Rung 2's boundaries: Landlock, seccomp and sbx-init as subreaper. */
static void
spec_report_landlock_rung (const SpecBuild *b)
{
  const SbxLinuxReporter *reporter = b->reporter;
  GHashTable *held = b->module->held;

  report_claim (reporter, held, &b->claims, SBX_LINUX_CLAIM_PROCESS_BOUNDARY, b->probe->hint_userns);
  if (b->claims.containment == SBX_CONTAINMENT_ENFORCED)
    report (reporter, SBX_ABI_FEATURE_PROCESS_CONTAINMENT, SBX_ABI_REPORT_ENFORCED,
            "sbx-init is a child subreaper owning the tree: orphans are reparented to it and "
            "every descendant is killed and reaped when the target exits");
  else
    reportf (reporter, SBX_ABI_FEATURE_PROCESS_CONTAINMENT, SBX_ABI_REPORT_NARROWED,
             "sbx-init is a child subreaper, but %s",
             !(b->landlock_bits & SBX_LANDLOCK_ENFORCES_SCOPE)
             ? "without Landlock scoping (ABI 6) the target can kill it and orphan the tree"
             : "/proc/PID/task/TID/children is missing (CONFIG_PROC_CHILDREN): orphans are "
               "found by process group only");
  report_claim (reporter, held, &b->claims, SBX_LINUX_CLAIM_WRITE_BOUNDARY, NULL);
  if (b->claims.claims[SBX_LINUX_CLAIM_WRITE_BOUNDARY].status == SBX_ABI_REPORT_ENFORCED)
    report (reporter, "file-metadata", SBX_ABI_REPORT_UNENFORCED,
            "Landlock does not mediate chmod, chown, utimes or extended attributes: the "
            "target can change the mode, times and attributes of files its user owns outside "
            "the writable roots (contents and names stay protected). Hint: the linux-userns "
            "backend's read-only mounts refuse these too");
  report_claim (reporter, held, &b->claims, SBX_LINUX_CLAIM_READ_BOUNDARY, NULL);
  /* Whether Landlock's refusals can be observed (sbx-linux-audit.c). */
  sbx_linux_audit_report (b->probe->landlock_abi, reporter);
}

/* The network claims, the same at both rungs. */
static void
spec_report_network (const SpecBuild *b)
{
  GHashTable *held = b->module->held;

  report_claim (b->reporter, held, &b->claims, SBX_LINUX_CLAIM_NETWORK_BOUNDARY, NULL);
  report_claim (b->reporter, held, &b->claims, SBX_LINUX_CLAIM_ADDRESS_NETWORK, NULL);
  report_claim (b->reporter, held, &b->claims, SBX_LINUX_CLAIM_TARGET_NETWORK, NULL);
  report_claim (b->reporter, held, &b->claims, SBX_LINUX_CLAIM_NETWORK, NULL);
  /* What /tmp and TMPDIR are for the target (sbx-linux-tmp.c). */
  sbx_linux_view_tmp_report (b->reporter, b->spec, b->policy);
  /* With unix sockets supervised, the seccomp module reported
   * "unix-sockets: narrowed" with the reason; the claims speak otherwise. */
  report_claim (b->reporter, held, &b->claims, SBX_LINUX_CLAIM_UNIX_SOCKETS, NULL);
}

SbxLinuxSpec *
sbx_linux_spec_new (const SbxLinuxProbe     *probe,
                    const SbxPolicyV1       *policy,
                    int                      rung,
                    const SbxLinuxReporter  *reporter,
                    uint32_t                *out_level,
                    uint64_t                *out_guarantees,
                    int32_t                 *out_status,
                    GError                 **error)
{
  g_autoptr(SbxLinuxSpec) spec = NULL;
  g_autoptr(GHashTable) held = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  ModuleReporter module = { reporter, held };
  SbxLinuxReporter module_reporter = { module_report, &module };
  SpecBuild b = { probe, policy, rung, reporter, &module, &module_reporter, out_status, NULL };
  SbxPolicyV1 rung2_policy;
  SbxNetPolicyV1 rung2_net;

  if (!sbx_linux_policy_validate (policy, out_status, error))
    return NULL;
  /* Egress (sbx-linux-egress.c): rung 1 puts the proxy listener in the
   * sandbox's own network namespace; rung 2 has none, so it closes the
   * network instead (reported; target-network does not hold). */
  b.net_proxy = policy->net->mode == SBX_NET_MODE_PROXY;
  if (b.net_proxy && rung == SBX_LINUX_RUNG_LANDLOCK)
    b.policy = sbx_linux_egress_rung2_policy (policy, &rung2_policy, &rung2_net, reporter);
  if (!spec_check_host (&b, error))
    return NULL;
  spec_add_base (&b);
  spec = b.spec;
  if (!spec_add_namespaces (&b, error))
    return NULL;
  spec_add_proc_mask (&b);
  if (!spec_add_landlock (&b, error) || !spec_add_seccomp (&b, error) || !spec_add_claims (&b, error))
    return NULL;
  spec_add_process_reports (&b);
  if (rung == SBX_LINUX_RUNG_USERNS)
    spec_report_namespaces (&b);
  else
    spec_report_landlock_rung (&b);
  spec_report_network (&b);

  spec->level = b.claims.level;
  spec->guarantees = b.claims.guarantees;
  *out_level = spec->level;
  *out_guarantees = spec->guarantees;
  *out_status = SBX_STATUS_OK;
  return g_steal_pointer (&spec);
}

void
sbx_linux_spec_free (SbxLinuxSpec *spec)
{
  if (spec == NULL)
    return;
  /* First: the early root's thread reads the mount plan, and the zygote
   * holds the view mounted on root_dir. */
  sbx_linux_view_early_free (g_steal_pointer (&spec->early));
  sbx_linux_zygote_free (spec->zygote);
  if (spec->root_dir != NULL && spec->root_dir_created)
    rmdir (spec->root_dir);
  sbx_linux_mount_plan_free (spec->mounts);
  if (spec->landlock != NULL)
    sbx_landlock_plan_free (spec->landlock);
  if (spec->seccomp != NULL)
    sbx_seccomp_program_free (spec->seccomp);
  if (spec->seccomp_terminal != NULL)
    sbx_seccomp_program_free (spec->seccomp_terminal);
  g_free (spec->uid_map);
  g_free (spec->gid_map);
  g_free (spec->root_dir);
  /* The mounts of its sandboxes' servers, which the view supervisor's
   * thread closes after them: closed too once the spec is gone. */
  sbx_view_hub_flush ();
  g_free (spec->hostname);
  g_strfreev (spec->host_sockets);
  sbx_linux_egress_files_free (spec);
  sbx_linux_hosts_file_free (spec);
  g_free (spec);
}
