/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Core-side wrappers around a backend extension's vtable.
 *
 * LOCKING: each SbxBackend has probe_lock, which protects the probe cache
 * (probe_state, probe_generation, the cached level/guarantees/flags/report and
 * last_probe_error).  It is a leaf lock: nothing else is taken while holding
 * it, and it is never held across the plugin's probe() — a thread that finds
 * a probe in flight waits on probe_cond (which releases the lock) until the
 * prober publishes.  Every other field is immutable after sbx_backend_new().
 * Spec refcounts are atomic.
 */
#include "sbx-backend-private.h"
#include "sbx-plugin-private.h"
#include "sbx-plugin-host-private.h"

#include "sbx-compile-report-private.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef enum
{
  PROBE_NOT_DONE,
  PROBE_IN_FLIGHT,
  PROBE_DONE,
} ProbeState;

struct _SbxBackend
{
  gatomicrefcount           ref_count;
  SbxPlugin                *plugin;      /* (owned) */
  char                     *name;
  int                       priority;
  guint                     load_index;  /* registration order, for stable sorting */
  const SbxBackendVTableV1 *vtable;      /* points into the (resident) plugin */

  GMutex                    probe_lock;
  GCond                     probe_cond;
  ProbeState                probe_state;       /* (locked probe_lock) */
  guint                     probe_generation;  /* (locked probe_lock) bumped per finished attempt */
  guint                     n_probe_calls;     /* (locked probe_lock) */
  SbxLevel                  level;             /* (locked probe_lock) valid when DONE */
  SbxGuarantees             guarantees;        /* (locked probe_lock) valid when DONE */
  guint32                   probe_flags;       /* (locked probe_lock) valid when DONE */
  SbxCompileReport         *probe_report;      /* (locked probe_lock) (owned) frozen, when DONE */
  GError                   *last_probe_error;  /* (locked probe_lock) (owned) (nullable) */
};

struct _SbxBackendSpec
{
  gatomicrefcount  ref_count;
  SbxBackend      *backend;  /* (owned) */
  void            *spec;     /* the plugin's; released exactly once */
  guint32          spawn_flags;  /* SbxCompileResultV1.spawn_flags (SBX_SPAWN_STAGED) */
};

SbxBackend *
sbx_backend_new (SbxPlugin                *plugin,
                 const char               *name,
                 int                       priority,
                 guint                     load_index,
                 const SbxBackendVTableV1 *vtable)
{
  SbxBackend *self = g_new0 (SbxBackend, 1);

  g_atomic_ref_count_init (&self->ref_count);
  self->plugin = sbx_plugin_ref (plugin);
  self->name = g_strdup (name);
  self->priority = priority;
  self->load_index = load_index;
  self->vtable = vtable;
  g_mutex_init (&self->probe_lock);
  g_cond_init (&self->probe_cond);
  self->probe_state = PROBE_NOT_DONE;
  return self;
}

SbxBackend *
sbx_backend_ref (SbxBackend *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

void
sbx_backend_unref (SbxBackend *self)
{
  g_return_if_fail (self != NULL);

  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;
  g_clear_pointer (&self->probe_report, sbx_compile_report_unref);
  g_clear_error (&self->last_probe_error);
  g_mutex_clear (&self->probe_lock);
  g_cond_clear (&self->probe_cond);
  g_free (self->name);
  sbx_plugin_unref (self->plugin);
  g_free (self);
}

const char *
sbx_backend_get_name (SbxBackend *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->name;
}

const char *
sbx_backend_get_plugin_name (SbxBackend *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->plugin->name;
}

SbxPlugin *
sbx_backend_get_plugin (SbxBackend *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->plugin;
}

int
sbx_backend_get_priority (SbxBackend *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->priority;
}

guint
sbx_backend_get_load_index (SbxBackend *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->load_index;
}

SbxLevel
sbx_backend_get_probe_level (SbxBackend *self)
{
  SbxLevel level = SBX_LEVEL_NONE;

  g_return_val_if_fail (self != NULL, SBX_LEVEL_NONE);

  g_mutex_lock (&self->probe_lock);
  if (self->probe_state == PROBE_DONE)
    level = self->level;
  g_mutex_unlock (&self->probe_lock);
  return level;
}

SbxGuarantees
sbx_backend_get_probe_guarantees (SbxBackend *self)
{
  SbxGuarantees guarantees = SBX_GUARANTEE_NONE;

  g_return_val_if_fail (self != NULL, SBX_GUARANTEE_NONE);

  g_mutex_lock (&self->probe_lock);
  if (self->probe_state == PROBE_DONE)
    guarantees = self->guarantees;
  g_mutex_unlock (&self->probe_lock);
  return guarantees;
}

gboolean
sbx_backend_is_unconfined_only (SbxBackend *self)
{
  /* Fail closed: before a successful probe, assume the restrictive flag. */
  gboolean unconfined_only = TRUE;

  g_return_val_if_fail (self != NULL, TRUE);

  g_mutex_lock (&self->probe_lock);
  if (self->probe_state == PROBE_DONE)
    unconfined_only = (self->probe_flags & SBX_PROBE_UNCONFINED_ONLY) != 0;
  g_mutex_unlock (&self->probe_lock);
  return unconfined_only;
}

guint
sbx_backend_get_n_probe_calls (SbxBackend *self)
{
  guint n;

  g_return_val_if_fail (self != NULL, 0);

  g_mutex_lock (&self->probe_lock);
  n = self->n_probe_calls;
  g_mutex_unlock (&self->probe_lock);
  return n;
}

gboolean
sbx_backend_supports_grant_class (SbxBackend *self,
                                  const char *grant_class)
{
  uint32_t supported;

  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (grant_class != NULL, FALSE);

  /* Optional function: absent means "supported when the guarantees allow
   * it", which the executor decides. */
  if (!SBX_ABI_HAS (self->vtable, SbxBackendVTableV1, supports_grant_class) ||
      self->vtable->supports_grant_class == NULL)
    return TRUE;
  supported = self->vtable->supports_grant_class (self->plugin->ctx, grant_class);
  return supported == 1;
}

/* Calls the plugin's probe() without any lock held and validates what it
 * returned.  On success fills the out values and returns the frozen report. */
static SbxCompileReport *
probe_unlocked (SbxBackend     *self,
                SbxLevel       *out_level,
                SbxGuarantees  *out_guarantees,
                guint32        *out_flags,
                GError        **error)
{
  g_autoptr(SbxCompileReport) report = sbx_compile_report_new ();
  SbxProbeResultV1 result = { 0 };
  SbxHostCall call;
  SbxCrashGuard guard;
  int32_t status;

  result.struct_size = sizeof result;
  sbx_host_call_init (&call, self->plugin->name, self->name, "probe", report);
  sbx_crash_guard_enter (&guard, self->plugin->name, "probe", self->name);
  status = self->vtable->probe (self->plugin->ctx, &call, &result);
  sbx_crash_guard_leave (&guard);

  if (status != SBX_STATUS_OK)
    {
      sbx_host_call_fail (&call, status, error);
      sbx_host_call_clear (&call);
      return NULL;
    }
  sbx_host_call_clear (&call);

  if (result.level > SBX_ABI_LEVEL_FULL)
    {
      g_set_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_INVALID,
                   "plugin '%s', extension '%s': probe reported unknown level %u",
                   self->plugin->name, self->name, (unsigned) result.level);
      return NULL;
    }
  if ((result.flags & ~(guint32) SBX_PROBE_UNCONFINED_ONLY) != 0)
    {
      /* An unknown flag may restrict what the backend accepts: fail closed. */
      g_set_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_INVALID,
                   "plugin '%s', extension '%s': probe reported unknown flags 0x%x",
                   self->plugin->name, self->name, (unsigned) result.flags);
      return NULL;
    }

  *out_level = (SbxLevel) result.level;
  /* Unknown guarantee bits claim nothing we could check: drop them. */
  *out_guarantees = (SbxGuarantees) (result.guarantees & SBX_GUARANTEES_ALL);
  *out_flags = result.flags;
  sbx_compile_report_set_backend (report, self->name);
  sbx_compile_report_set_level (report, *out_level);
  sbx_compile_report_set_guarantees (report, *out_guarantees);
  sbx_compile_report_freeze (report);
  return g_steal_pointer (&report);
}

gboolean
sbx_backend_probe (SbxBackend        *self,
                   SbxCompileReport **out_report,
                   GError           **error)
{
  g_autoptr(SbxCompileReport) report = NULL;
  g_autoptr(GError) local_error = NULL;
  SbxLevel level = SBX_LEVEL_NONE;
  SbxGuarantees guarantees = SBX_GUARANTEE_NONE;
  guint32 flags = 0;

  g_return_val_if_fail (self != NULL, FALSE);

  g_mutex_lock (&self->probe_lock);
  while (self->probe_state == PROBE_IN_FLIGHT)
    {
      guint generation = self->probe_generation;

      while (self->probe_state == PROBE_IN_FLIGHT && self->probe_generation == generation)
        g_cond_wait (&self->probe_cond, &self->probe_lock);
      if (self->probe_state != PROBE_DONE && self->probe_generation != generation)
        {
          /* The attempt we waited for failed: share its verdict rather than
           * probing again right away. */
          if (self->last_probe_error != NULL)
            g_propagate_error (error, g_error_copy (self->last_probe_error));
          else
            g_set_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_FAILED,
                         "plugin '%s', extension '%s': probe failed",
                         self->plugin->name, self->name);
          g_mutex_unlock (&self->probe_lock);
          return FALSE;
        }
    }
  if (self->probe_state == PROBE_DONE)
    {
      if (out_report != NULL)
        *out_report = sbx_compile_report_ref (self->probe_report);
      g_mutex_unlock (&self->probe_lock);
      return TRUE;
    }
  self->probe_state = PROBE_IN_FLIGHT;
  self->n_probe_calls++;
  g_mutex_unlock (&self->probe_lock);

  /* No lock held across the plugin call. */
  report = probe_unlocked (self, &level, &guarantees, &flags, &local_error);

  g_mutex_lock (&self->probe_lock);
  self->probe_generation++;
  if (report != NULL)
    {
      self->probe_state = PROBE_DONE;
      self->level = level;
      self->guarantees = guarantees;
      self->probe_flags = flags;
      self->probe_report = sbx_compile_report_ref (report);
      g_clear_error (&self->last_probe_error);
    }
  else
    {
      self->probe_state = PROBE_NOT_DONE;
      g_clear_error (&self->last_probe_error);
      self->last_probe_error = g_error_copy (local_error);
    }
  g_cond_broadcast (&self->probe_cond);
  g_mutex_unlock (&self->probe_lock);

  if (report == NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  if (out_report != NULL)
    *out_report = g_steal_pointer (&report);
  return TRUE;
}

/* ------------------------------------------------------------------------- */
/* Compile and specs                                                          */
/* ------------------------------------------------------------------------- */

/* The guarantees of @claimed that an entry from @first on reports as
 * unenforced under the guarantee's own feature name. */
static SbxGuarantees
contradicted_guarantees (SbxCompileReport *report,
                         guint             first,
                         SbxGuarantees     claimed)
{
  SbxGuarantees contradicted = SBX_GUARANTEE_NONE;
  guint n = sbx_compile_report_get_n_entries (report);

  for (guint i = first; i < n; i++)
    {
      SbxGuarantees bit;

      if (sbx_compile_report_get_entry_status (report, i) == SBX_REPORT_STATUS_UNENFORCED
          && sbx_guarantee_from_string (sbx_compile_report_get_entry_feature (report, i), &bit))
        contradicted |= bit & claimed;
    }
  return contradicted;
}

SbxBackendSpec *
sbx_backend_compile (SbxBackend         *self,
                     const SbxPolicyV1  *policy,
                     SbxCompileReport   *report,
                     SbxLevel           *out_level,
                     SbxGuarantees      *out_guarantees,
                     GError            **error)
{
  g_autoptr(SbxCompileReport) local_report = NULL;
  SbxCompileResultV1 result = { 0 };
  SbxBackendSpec *spec;
  SbxHostCall call;
  SbxCrashGuard guard;
  void *plugin_spec = NULL;
  SbxLevel probed_level;
  SbxGuarantees probed_guarantees;
  SbxGuarantees compiled_guarantees;
  SbxGuarantees excess;
  SbxGuarantees contradicted;
  guint first_entry;
  int32_t status;

  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (policy != NULL, NULL);
  g_return_val_if_fail (policy->struct_size >= sizeof (SbxPolicyV1), NULL);
  g_return_val_if_fail (report == NULL || !sbx_compile_report_is_frozen (report), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  /* The probe is the upper bound a compile is held to: make sure there is
   * one (cached after the first success). */
  if (!sbx_backend_probe (self, NULL, error))
    return NULL;
  g_mutex_lock (&self->probe_lock);
  probed_level = self->level;
  probed_guarantees = self->guarantees;
  g_mutex_unlock (&self->probe_lock);

  if (report == NULL)
    report = local_report = sbx_compile_report_new ();

  first_entry = sbx_compile_report_get_n_entries (report);
  result.struct_size = sizeof result;
  sbx_host_call_init (&call, self->plugin->name, self->name, "compile", report);
  sbx_crash_guard_enter (&guard, self->plugin->name, "compile", self->name);
  status = self->vtable->compile (self->plugin->ctx, &call, policy, &plugin_spec, &result);
  sbx_crash_guard_leave (&guard);

  if (status != SBX_STATUS_OK)
    {
      /* The ABI says a failed compile leaves nothing allocated; a spec
       * pointer written anyway is not ours to release. */
      sbx_host_call_fail (&call, status, error);
      sbx_host_call_clear (&call);
      return NULL;
    }
  sbx_host_call_clear (&call);

  if (result.level > SBX_ABI_LEVEL_FULL)
    {
      self->vtable->release (self->plugin->ctx, plugin_spec);
      g_set_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_INVALID,
                   "plugin '%s', extension '%s': compile reported unknown level %u",
                   self->plugin->name, self->name, (unsigned) result.level);
      return NULL;
    }

  /* A spec may narrow what the probe found, never exceed it: a backend that
   * claims more at compile than its probe measured is claiming something no
   * mechanism check backs. */
  compiled_guarantees = (SbxGuarantees) (result.guarantees & SBX_GUARANTEES_ALL);
  excess = compiled_guarantees & ~probed_guarantees;
  if ((SbxLevel) result.level > probed_level || excess != 0)
    {
      g_auto(GStrv) names = sbx_guarantees_to_strv (excess);
      g_autofree char *joined = g_strjoinv (", ", names);

      self->vtable->release (self->plugin->ctx, plugin_spec);
      g_set_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_INVALID,
                   "plugin '%s', extension '%s': compile claims more than probe found "
                   "(level %s, probed %s; guarantees beyond the probe: [%s]); the spec is refused",
                   self->plugin->name, self->name, sbx_level_to_string ((SbxLevel) result.level),
                   sbx_level_to_string (probed_level), joined);
      return NULL;
    }

  /* A guarantee claimed and reported unenforced under its own feature name
   * (SBX_ABI_FEATURE_*) is a report that contradicts itself: believe the
   * weaker half, which means refusing the spec rather than picking one. */
  contradicted = contradicted_guarantees (report, first_entry, compiled_guarantees);
  if (contradicted != 0)
    {
      g_auto(GStrv) names = sbx_guarantees_to_strv (contradicted);
      g_autofree char *joined = g_strjoinv (", ", names);

      self->vtable->release (self->plugin->ctx, plugin_spec);
      g_set_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_INVALID,
                   "plugin '%s', extension '%s': compile claims [%s] and reports it unenforced; "
                   "the spec is refused", self->plugin->name, self->name, joined);
      return NULL;
    }

  sbx_compile_report_set_backend (report, self->name);
  sbx_compile_report_set_level (report, (SbxLevel) result.level);
  sbx_compile_report_set_guarantees (report, compiled_guarantees);
  if (out_level != NULL)
    *out_level = (SbxLevel) result.level;
  if (out_guarantees != NULL)
    *out_guarantees = compiled_guarantees;

  spec = g_new0 (SbxBackendSpec, 1);
  g_atomic_ref_count_init (&spec->ref_count);
  spec->backend = sbx_backend_ref (self);
  spec->spec = plugin_spec;
  spec->spawn_flags = result.spawn_flags & SBX_SPAWN_STAGED;
  return spec;
}

char *
sbx_backend_explain (SbxBackend         *self,
                     const SbxPolicyV1  *policy,
                     SbxCompileReport   *report,
                     GError            **error)
{
  SbxHostCall call;
  SbxCrashGuard guard;
  char *text = NULL;
  char *copy;
  int32_t status;

  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (policy != NULL, NULL);
  g_return_val_if_fail (report == NULL || !sbx_compile_report_is_frozen (report), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  /* Optional, appended entry: read only when the table's size covers it. */
  if (!SBX_ABI_HAS (self->vtable, SbxBackendVTableV1, explain) || self->vtable->explain == NULL)
    {
      g_set_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_UNSUPPORTED,
                   "plugin '%s', extension '%s': this backend cannot explain a profile "
                   "(no explain entry in its vtable)", self->plugin->name, self->name);
      return NULL;
    }

  sbx_host_call_init (&call, self->plugin->name, self->name, "explain", report);
  sbx_crash_guard_enter (&guard, self->plugin->name, "explain", self->name);
  status = self->vtable->explain (self->plugin->ctx, &call, policy, &text);
  sbx_crash_guard_leave (&guard);
  if (status != SBX_STATUS_OK)
    {
      /* Nothing is ours to free on failure (as for compile). */
      sbx_host_call_fail (&call, status, error);
      sbx_host_call_clear (&call);
      return NULL;
    }
  sbx_host_call_clear (&call);
  if (text == NULL)
    {
      g_set_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_INVALID,
                   "plugin '%s', extension '%s': explain returned OK and no text",
                   self->plugin->name, self->name);
      return NULL;
    }
  /* The text was allocated with host->alloc: copy it into GLib memory and
   * release the original through the same table. */
  copy = g_strdup (text);
  sbx_host_table ()->release (text);
  if (!g_utf8_validate (copy, -1, NULL))
    {
      g_free (copy);
      g_set_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_INVALID,
                   "plugin '%s', extension '%s': explain returned text that is not UTF-8",
                   self->plugin->name, self->name);
      return NULL;
    }
  return copy;
}

SbxBackendSpec *
sbx_backend_spec_ref (SbxBackendSpec *spec)
{
  g_return_val_if_fail (spec != NULL, NULL);

  g_atomic_ref_count_inc (&spec->ref_count);
  return spec;
}

void
sbx_backend_spec_unref (SbxBackendSpec *spec)
{
  SbxBackend *backend;

  g_return_if_fail (spec != NULL);

  if (!g_atomic_ref_count_dec (&spec->ref_count))
    return;
  backend = spec->backend;
  /* Exactly once: only the thread that dropped the last reference gets here. */
  backend->vtable->release (backend->plugin->ctx, spec->spec);
  sbx_backend_unref (backend);
  g_free (spec);
}

gboolean
sbx_backend_spec_can_stage (SbxBackendSpec *spec)
{
  return (spec->spawn_flags & SBX_SPAWN_STAGED) != 0;
}

SbxBackend *
sbx_backend_spec_get_backend (SbxBackendSpec *spec)
{
  g_return_val_if_fail (spec != NULL, NULL);

  return spec->backend;
}

/* ------------------------------------------------------------------------- */
/* Spawn, signal, finish                                                      */
/* ------------------------------------------------------------------------- */

/* TRUE when @pid is a child of this process, exited or not (nothing is
 * reaped: WNOWAIT).  ECHILD is the only answer that says "not ours"; unless
 * the application ignores SIGCHLD (or set SA_NOCLDWAIT), when the kernel
 * reaps children itself and a quick one is gone before we look: then the
 * check cannot be made and supervision reports the lost status instead. */
static gboolean
pid_is_our_child (pid_t pid)
{
  struct sigaction current;
  siginfo_t info;

  memset (&info, 0, sizeof info);
  while (waitid (P_PID, (id_t) pid, &info, WEXITED | WNOHANG | WNOWAIT) < 0)
    {
      if (errno == EINTR)
        continue;
      if (errno != ECHILD)
        return TRUE;
      if (sigaction (SIGCHLD, NULL, &current) == 0
          && (current.sa_handler == SIG_IGN || (current.sa_flags & SA_NOCLDWAIT) != 0))
        return TRUE;
      return FALSE;
    }
  return TRUE;
}

gboolean
sbx_backend_spawn (SbxBackendSpec          *spec,
                   const SbxSpawnRequestV1 *request,
                   SbxSpawnResultV1        *out_result,
                   GError                 **error)
{
  SbxBackend *backend;
  SbxSpawnResultV1 result = { 0 };
  SbxHostCall call;
  int32_t status;

  g_return_val_if_fail (spec != NULL, FALSE);
  g_return_val_if_fail (request != NULL, FALSE);
  g_return_val_if_fail (request->struct_size >= sizeof (SbxSpawnRequestV1), FALSE);
  g_return_val_if_fail (request->argv != NULL && request->argv[0] != NULL, FALSE);
  g_return_val_if_fail (out_result != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  backend = spec->backend;
  /* A staged request goes only to a spec that announced it: a backend that
   * does not know the flag would run the target unstaged. */
  if ((request->flags & SBX_SPAWN_STAGED) && !(spec->spawn_flags & SBX_SPAWN_STAGED))
    {
      g_set_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_UNSUPPORTED,
                   "backend '%s' cannot stage a run (it has no overlay of the workspace); "
                   "the run is refused rather than run unstaged", backend->name);
      return FALSE;
    }
  result.struct_size = sizeof result;
  result.pid = -1;
  result.pidfd = -1;
  result.proxy_listen_fd = -1;
  result.pty_master_fd = -1;
  sbx_host_call_init (&call, backend->plugin->name, backend->name, "spawn", NULL);
  status = backend->vtable->spawn (backend->plugin->ctx, &call, spec->spec, request, &result);
  if (status != SBX_STATUS_OK)
    {
      sbx_host_call_fail (&call, status, error);
      sbx_host_call_clear (&call);
      return FALSE;
    }
  sbx_host_call_clear (&call);

  if (result.pid <= 0 || result.pid > G_MAXINT)
    {
      /* Nothing we could wait for: the spawn contract is broken. */
      g_set_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_INVALID,
                   "plugin '%s', extension '%s': spawn reported success with invalid pid %" G_GINT64_FORMAT,
                   backend->plugin->name, backend->name, (gint64) result.pid);
      return FALSE;
    }
  if (!pid_is_our_child ((pid_t) result.pid)
      || ((request->flags & SBX_SPAWN_PTY_SANDBOX) && result.pty_master_fd < 0)
      || ((request->flags & SBX_SPAWN_IGNORED_SIGNALS) && !(result.honoured_flags & SBX_SPAWN_IGNORED_SIGNALS))
      || ((request->flags & SBX_SPAWN_STAGED) && !(result.honoured_flags & SBX_SPAWN_STAGED)))
    {
      gboolean ours = pid_is_our_child ((pid_t) result.pid);
      gboolean no_master = ours && (request->flags & SBX_SPAWN_PTY_SANDBOX) && result.pty_master_fd < 0;
      SbxExitV1 ignored = { .struct_size = sizeof ignored };
      SbxHostCall finish_call;

      /* The host could neither wait for nor reap it: let the backend kill
       * and free its tree, then refuse the run. */
      int wait_status = W_EXITCODE (0, SIGKILL);

      backend->vtable->signal (backend->plugin->ctx, result.child, SIGKILL);
      /* Our own child is reaped first, as finish() expects. */
      while (ours && waitpid ((pid_t) result.pid, &wait_status, 0) < 0 && errno == EINTR)
        ;
      sbx_host_call_init (&finish_call, backend->plugin->name, backend->name, "finish", NULL);
      backend->vtable->finish (backend->plugin->ctx, &finish_call, result.child,
                               wait_status, &ignored);
      sbx_host_call_clear (&finish_call);
      if (result.pidfd >= 0)
        close (result.pidfd);
      if (result.proxy_listen_fd >= 0)
        close (result.proxy_listen_fd);
      if (result.pty_master_fd >= 0)
        close (result.pty_master_fd);
      if (no_master)
        {
          /* A backend that predates SBX_SPAWN_PTY_SANDBOX ignored the flag:
           * the target did not get the terminal that was asked for. */
          g_set_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_UNSUPPORTED,
                       "plugin '%s', extension '%s': spawn returned no terminal master for a "
                       "sandbox terminal request (SBX_SPAWN_PTY_SANDBOX); its tree was killed",
                       backend->plugin->name, backend->name);
          return FALSE;
        }
      if (ours && (request->flags & SBX_SPAWN_STAGED) && !(result.honoured_flags & SBX_SPAWN_STAGED))
        {
          g_set_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_UNSUPPORTED,
                       "plugin '%s', extension '%s': spawn did not confirm staging the run "
                       "(SBX_SPAWN_STAGED); its tree was killed", backend->plugin->name, backend->name);
          return FALSE;
        }
      if (ours)
        {
          /* A backend that predates SBX_SPAWN_IGNORED_SIGNALS ignored the
           * flag: the command started with default dispositions for
           * signals its caller ignores (a hang-up would kill it). */
          g_set_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_UNSUPPORTED,
                       "plugin '%s', extension '%s': spawn did not confirm starting the command "
                       "with the caller's ignored signals ignored (SBX_SPAWN_IGNORED_SIGNALS); "
                       "its tree was killed", backend->plugin->name, backend->name);
          return FALSE;
        }
      g_set_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_INVALID,
                   "plugin '%s', extension '%s': spawn returned pid %" G_GINT64_FORMAT ", which is not "
                   "a child of this process (the spawn contract requires a direct child); its tree was killed",
                   backend->plugin->name, backend->name, (gint64) result.pid);
      return FALSE;
    }
  if (!(request->flags & SBX_SPAWN_PTY_SANDBOX) && result.pty_master_fd >= 0)
    {
      /* Not asked for: nobody would ever close it. */
      close (result.pty_master_fd);
      result.pty_master_fd = -1;
    }
  *out_result = result;
  return TRUE;
}

gboolean
sbx_backend_signal (SbxBackendSpec *spec,
                    void           *child,
                    int             signo,
                    GError        **error)
{
  SbxBackend *backend;
  int32_t status;

  g_return_val_if_fail (spec != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  backend = spec->backend;
  status = backend->vtable->signal (backend->plugin->ctx, child, signo);
  if (status != SBX_STATUS_OK)
    {
      g_set_error (error, SBX_PLUGIN_ERROR, sbx_plugin_error_from_status (status),
                   "plugin '%s', extension '%s': signal %d failed with status %d (%s)",
                   backend->plugin->name, backend->name, signo, (int) status,
                   sbx_status_to_string (status));
      return FALSE;
    }
  return TRUE;
}

gboolean
sbx_backend_finish (SbxBackendSpec *spec,
                    void           *child,
                    int             wait_status,
                    SbxExitV1      *out_exit,
                    GError        **error)
{
  SbxBackend *backend;
  SbxExitV1 exit_info = { 0 };
  SbxHostCall call;
  int32_t status;

  g_return_val_if_fail (spec != NULL, FALSE);
  g_return_val_if_fail (out_exit != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  backend = spec->backend;
  exit_info.struct_size = sizeof exit_info;
  sbx_host_call_init (&call, backend->plugin->name, backend->name, "finish", NULL);
  status = backend->vtable->finish (backend->plugin->ctx, &call, child, wait_status, &exit_info);
  if (status != SBX_STATUS_OK)
    {
      sbx_host_call_fail (&call, status, error);
      sbx_host_call_clear (&call);
      return FALSE;
    }
  sbx_host_call_clear (&call);

  if (exit_info.kind != SBX_EXIT_EXITED && exit_info.kind != SBX_EXIT_SIGNALED)
    {
      g_set_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_INVALID,
                   "plugin '%s', extension '%s': finish reported unknown exit kind %u",
                   backend->plugin->name, backend->name, (unsigned) exit_info.kind);
      return FALSE;
    }
  *out_exit = exit_info;
  return TRUE;
}
