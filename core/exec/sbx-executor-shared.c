/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SbxExecutorShared: the lifecycle barrier, the reporters and the close
 * hooks of an executor set (see sbx-executor-shared-private.h for the
 * contract).  This file calls no other executor module: the set, the
 * executors, admissions and processes call it.
 */
#include "sbx-executor-shared-private.h"

#include <unistd.h>

#include "sbx-compile-report-private.h"
#include "sbx-denial-private.h"
#include "sbx-executor-set.h"
#include "sbx-scratch-private.h"

typedef struct
{
  GObject      *object;   /* strong */
  SbxCloseHook  hook;
} Tracked;

struct _SbxExecutorShared
{
  gatomicrefcount   ref;

  /* Immutable after the set is constructed. */
  char             *set_id;         /* random UUID, names the set in events */
  SbxProfile       *profile;
  SbxBackend       *backend;
  SbxCompileReport *selection_report;
  char             *owned_dir;      /* scratch/sandbox-executors-XXXXXX */
  char             *scratch_root;   /* canonical scratch root holding owned_dir */
  int               live_fd;        /* owned_dir/SBX_SET_LIVE_MARKER, flock()ed for the set's life */
  GTimeSpan         grant_ttl;

  GMutex            mutex;
  GCond             cond;           /* signalled when `active` drops */
  gboolean          closing;        /* (mutex) */
  guint             active;         /* (mutex) guards alive */
  GPtrArray        *sinks;          /* (mutex for the pointer) SbxReporterSink*; NULL once closing */
  GPtrArray        *closed_sinks;   /* taken out of use by close_begin, closed by close_end */
  GPtrArray        *tracked[SBX_N_CLOSE_PHASES];  /* (mutex) Tracked* */
  guint64           next_run_id;    /* (mutex) */
};

struct _SbxSharedGuard
{
  SbxExecutorShared *shared;   /* strong */
};

static void
tracked_free (gpointer data)
{
  Tracked *t = data;

  g_object_unref (t->object);
  g_free (t);
}

SbxExecutorShared *
sbx_executor_shared_new (SbxProfile  *profile,
                         GTimeSpan    grant_ttl,
                         GError     **error)
{
  g_autoptr(SbxExecutorShared) shared = g_new0 (SbxExecutorShared, 1);

  g_return_val_if_fail (profile != NULL, NULL);

  g_atomic_ref_count_init (&shared->ref);
  g_mutex_init (&shared->mutex);
  g_cond_init (&shared->cond);
  shared->live_fd = -1;
  shared->sinks = g_ptr_array_new ();
  for (guint i = 0; i < SBX_N_CLOSE_PHASES; i++)
    shared->tracked[i] = g_ptr_array_new_with_free_func (tracked_free);
  shared->set_id = g_uuid_string_random ();
  shared->profile = sbx_profile_ref (profile);
  shared->grant_ttl = grant_ttl;
  return g_steal_pointer (&shared);
}

SbxExecutorShared *
sbx_executor_shared_ref (SbxExecutorShared *shared)
{
  g_return_val_if_fail (shared != NULL, NULL);

  g_atomic_ref_count_inc (&shared->ref);
  return shared;
}

static void
close_sinks (GPtrArray *sinks)
{
  if (sinks == NULL)
    return;
  for (guint i = 0; i < sinks->len; i++)
    sbx_reporter_sink_close (sinks->pdata[i]);
  g_ptr_array_unref (sinks);
}

/* Frees @shared once its last reference is gone. */
static void
shared_free (SbxExecutorShared *shared)
{
  close_sinks (g_steal_pointer (&shared->sinks));
  close_sinks (g_steal_pointer (&shared->closed_sinks));
  /* Empty: a tracked object leaves its list before it lets go of the
   * shared state (through its executor or its guard). */
  for (guint i = 0; i < SBX_N_CLOSE_PHASES; i++)
    g_ptr_array_unref (shared->tracked[i]);
  g_free (shared->set_id);
  g_clear_pointer (&shared->profile, sbx_profile_unref);
  g_clear_pointer (&shared->backend, sbx_backend_unref);
  g_clear_pointer (&shared->selection_report, sbx_compile_report_unref);
  g_free (shared->owned_dir);
  g_free (shared->scratch_root);
  if (shared->live_fd >= 0)
    close (shared->live_fd);   /* releases the liveness lock */
  g_mutex_clear (&shared->mutex);
  g_cond_clear (&shared->cond);
  g_free (shared);
}

void
sbx_executor_shared_unref (SbxExecutorShared *shared)
{
  g_return_if_fail (shared != NULL);

  if (g_atomic_ref_count_dec (&shared->ref))
    shared_free (shared);
}

void
sbx_executor_shared_set_backend (SbxExecutorShared *shared,
                                 SbxBackend        *backend,
                                 SbxCompileReport  *selection_report)
{
  g_return_if_fail (shared->backend == NULL);

  shared->backend = backend;
  shared->selection_report = selection_report;
}

void
sbx_executor_shared_add_sink (SbxExecutorShared *shared,
                              SbxReporterSink   *sink)
{
  g_ptr_array_add (shared->sinks, sink);
}

void
sbx_executor_shared_set_scratch (SbxExecutorShared *shared,
                                 char              *scratch_root,
                                 char              *owned_dir,
                                 int                live_fd)
{
  g_return_if_fail (shared->owned_dir == NULL);

  shared->scratch_root = scratch_root;
  shared->owned_dir = owned_dir;
  shared->live_fd = live_fd;
}

const char *
sbx_executor_shared_get_set_id (SbxExecutorShared *shared)
{
  return shared->set_id;
}

SbxProfile *
sbx_executor_shared_get_profile (SbxExecutorShared *shared)
{
  return shared->profile;
}

SbxBackend *
sbx_executor_shared_get_backend (SbxExecutorShared *shared)
{
  return shared->backend;
}

SbxCompileReport *
sbx_executor_shared_get_selection_report (SbxExecutorShared *shared)
{
  return shared->selection_report;
}

const char *
sbx_executor_shared_get_owned_dir (SbxExecutorShared *shared)
{
  return shared->owned_dir;
}

const char *
sbx_executor_shared_get_scratch_root (SbxExecutorShared *shared)
{
  return shared->scratch_root;
}

GTimeSpan
sbx_executor_shared_get_grant_ttl (SbxExecutorShared *shared)
{
  return shared->grant_ttl;
}

gboolean
sbx_executor_shared_is_closing (SbxExecutorShared *shared)
{
  gboolean closing;

  g_mutex_lock (&shared->mutex);
  closing = shared->closing;
  g_mutex_unlock (&shared->mutex);
  return closing;
}

/* ------------------------------------------------------------------------- */
/* The admission guard                                                        */
/* ------------------------------------------------------------------------- */

SbxSharedGuard *
sbx_executor_shared_admit (SbxExecutorShared *shared)
{
  SbxSharedGuard *guard;
  gboolean admitted;

  g_return_val_if_fail (shared != NULL, NULL);

  g_mutex_lock (&shared->mutex);
  admitted = !shared->closing;
  if (admitted)
    shared->active++;
  g_mutex_unlock (&shared->mutex);
  if (!admitted)
    return NULL;
  guard = g_new (SbxSharedGuard, 1);
  guard->shared = sbx_executor_shared_ref (shared);
  return guard;
}

SbxSharedGuard *
sbx_shared_guard_hold (SbxSharedGuard *guard)
{
  SbxExecutorShared *shared;
  SbxSharedGuard *held;

  if (guard == NULL)
    return NULL;
  shared = guard->shared;
  /* Not refused while closing: @guard keeps the count above zero, so a
   * close has not passed its wait and will wait for this one too. */
  g_mutex_lock (&shared->mutex);
  g_assert (shared->active > 0);
  shared->active++;
  g_mutex_unlock (&shared->mutex);
  held = g_new (SbxSharedGuard, 1);
  held->shared = sbx_executor_shared_ref (shared);
  return held;
}

void
sbx_shared_guard_release (SbxSharedGuard *guard)
{
  SbxExecutorShared *shared;
  gboolean last;

  if (guard == NULL)
    return;
  shared = guard->shared;
  g_free (guard);
  g_mutex_lock (&shared->mutex);
  g_assert (shared->active > 0);
  shared->active--;
  if (shared->active == 0)
    g_cond_broadcast (&shared->cond);
  /* The guard's reference goes under the lock: a close woken by this
   * release returns only after it, so its caller's reference can be the
   * last (and the close fd and the backend go with it, on the caller's
   * thread).  When this one is the last, nobody can be waiting. */
  last = g_atomic_ref_count_dec (&shared->ref);
  g_mutex_unlock (&shared->mutex);
  if (last)
    shared_free (shared);
}

SbxExecutorShared *
sbx_shared_guard_get_shared (SbxSharedGuard *guard)
{
  return guard->shared;
}

gboolean
sbx_executor_shared_next_run_id (SbxExecutorShared *shared,
                                 guint64           *out_run_id)
{
  gboolean closing;

  g_mutex_lock (&shared->mutex);
  closing = shared->closing;
  *out_run_id = ++shared->next_run_id;
  g_mutex_unlock (&shared->mutex);
  return !closing;
}

/* ------------------------------------------------------------------------- */
/* Events                                                                     */
/* ------------------------------------------------------------------------- */

void
sbx_executor_shared_emit (SbxExecutorShared *shared,
                          const char        *event,
                          const char        *key,
                          void             (*add_members) (JsonBuilder *builder,
                                                           gpointer     data),
                          gpointer           data)
{
  g_autoptr(JsonBuilder) builder = NULL;
  g_autoptr(JsonGenerator) generator = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GDateTime) now = NULL;
  g_autofree char *timestamp = NULL;
  g_autofree char *json = NULL;
  GPtrArray *sinks;

  /* Inside an admission `sinks` cannot be closed; without reporters there
   * is nothing to build. */
  g_mutex_lock (&shared->mutex);
  sinks = shared->sinks;
  g_mutex_unlock (&shared->mutex);
  if (sinks == NULL || sinks->len == 0)
    return;

  now = g_date_time_new_now_utc ();
  timestamp = g_date_time_format_iso8601 (now);
  builder = json_builder_new ();
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "schema");
  json_builder_add_int_value (builder, SBX_EVENT_SCHEMA);
  json_builder_set_member_name (builder, "event");
  json_builder_add_string_value (builder, event);
  json_builder_set_member_name (builder, "time");
  json_builder_add_string_value (builder, timestamp);
  json_builder_set_member_name (builder, "set");
  json_builder_add_string_value (builder, shared->set_id);
  if (key != NULL)
    {
      json_builder_set_member_name (builder, "executor");
      json_builder_add_string_value (builder, key);
    }
  if (add_members != NULL)
    add_members (builder, data);
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  generator = json_generator_new ();
  json_generator_set_pretty (generator, FALSE);
  json_generator_set_root (generator, root);
  json = json_generator_to_data (generator, NULL);

  for (guint i = 0; i < sinks->len; i++)
    sbx_reporter_sink_emit (sinks->pdata[i], json);
}

/* ------------------------------------------------------------------------- */
/* Close hooks and the close                                                  */
/* ------------------------------------------------------------------------- */

gboolean
sbx_executor_shared_track (SbxExecutorShared *shared,
                           SbxClosePhase      phase,
                           GObject           *object,
                           SbxCloseHook       hook)
{
  gboolean closing;

  g_return_val_if_fail (phase < SBX_N_CLOSE_PHASES, FALSE);
  g_return_val_if_fail (G_IS_OBJECT (object) && hook != NULL, FALSE);

  g_mutex_lock (&shared->mutex);
  closing = shared->closing;
  if (!closing)
    {
      Tracked *t = g_new (Tracked, 1);

      t->object = g_object_ref (object);
      t->hook = hook;
      g_ptr_array_add (shared->tracked[phase], t);
    }
  g_mutex_unlock (&shared->mutex);
  return !closing;
}

gboolean
sbx_executor_shared_untrack (SbxExecutorShared *shared,
                             SbxClosePhase      phase,
                             GObject           *object)
{
  Tracked *found = NULL;
  GPtrArray *list;

  g_return_val_if_fail (phase < SBX_N_CLOSE_PHASES, FALSE);

  g_mutex_lock (&shared->mutex);
  list = shared->tracked[phase];
  for (guint i = 0; i < list->len; i++)
    if (((Tracked *) list->pdata[i])->object == object)
      {
        found = g_ptr_array_steal_index_fast (list, i);
        break;
      }
  g_mutex_unlock (&shared->mutex);
  /* The caller holds its own reference: this one is never the last. */
  if (found != NULL)
    tracked_free (found);
  return found != NULL;
}

static void
run_hooks (SbxExecutorShared *shared,
           SbxClosePhase      phase)
{
  g_autoptr(GPtrArray) objects = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GArray) hooks = g_array_new (FALSE, FALSE, sizeof (SbxCloseHook));

  /* A copy, so each hook runs without the lock and may untrack itself. */
  g_mutex_lock (&shared->mutex);
  for (guint i = 0; i < shared->tracked[phase]->len; i++)
    {
      Tracked *t = shared->tracked[phase]->pdata[i];

      g_ptr_array_add (objects, g_object_ref (t->object));
      g_array_append_val (hooks, t->hook);
    }
  g_mutex_unlock (&shared->mutex);
  for (guint i = 0; i < objects->len; i++)
    g_array_index (hooks, SbxCloseHook, i) (objects->pdata[i]);
}

void
sbx_executor_shared_close_begin (SbxExecutorShared *shared)
{
  /* Stop admissions; the close hooks kill what runs. */
  g_mutex_lock (&shared->mutex);
  shared->closing = TRUE;
  g_mutex_unlock (&shared->mutex);

  /* Each phase's objects: a reservation never started holds the barrier
   * until its close; a running process's admission lasts until its tree is
   * reaped, and this thread may be the one whose main loop would have
   * reaped it.  An object racing this either was listed before `closing`
   * (and is found here) or is refused by sbx_executor_shared_track(). */
  for (guint phase = 0; phase < SBX_N_CLOSE_PHASES; phase++)
    run_hooks (shared, phase);

  /* Until every admitted run and construction has returned. */
  g_mutex_lock (&shared->mutex);
  while (shared->active > 0)
    g_cond_wait (&shared->cond, &shared->mutex);
  shared->closed_sinks = g_steal_pointer (&shared->sinks);
  g_mutex_unlock (&shared->mutex);
}

gboolean
sbx_executor_shared_close_end (SbxExecutorShared  *shared,
                               GError            **error)
{
  gboolean removed;

  close_sinks (g_steal_pointer (&shared->closed_sinks));
  removed = shared->owned_dir == NULL || sbx_remove_tree (shared->owned_dir, error);
  if (shared->live_fd >= 0)
    {
      close (shared->live_fd);
      shared->live_fd = -1;
    }
  return removed;
}

typedef struct
{
  guint64    run_id;
  SbxDenial *denial;
} DenialEvent;

static void
add_denial_event_members (JsonBuilder *builder,
                          gpointer     data)
{
  const DenialEvent *ev = data;

  if (ev->run_id != 0)
    {
      json_builder_set_member_name (builder, "run");
      json_builder_add_int_value (builder, (gint64) ev->run_id);
    }
  sbx_denial_add_json_members (ev->denial, builder);
}

void
sbx_executor_shared_emit_denial (SbxExecutorShared *shared,
                                 const char        *key,
                                 guint64            run_id,
                                 SbxDenial         *denial)
{
  DenialEvent ev = { run_id, denial };

  sbx_executor_shared_emit (shared, SBX_EVENT_DENIED, key, add_denial_event_members, &ev);
}
