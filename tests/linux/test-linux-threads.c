/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Linux backend under thread churn: callers are threaded GLib programs
 * whose pool threads come and go, and a run's result must be that run's.
 *
 *  - zygote-after-thread-exit (deterministic regression): the rung-1 zygote
 *    is a CLONE_VM child that inherits the thread pointer of the thread that
 *    started it.  Start it from a thread whose stack (and so, with glibc,
 *    its TLS block) the test unmaps after the thread exits, then spawn from
 *    other threads: every spawn must succeed with the exact result.  Child
 *    code that read TLS (a stack-protector canary, errno) faulted here.
 *  - load: 8 worker slots x 500 runs over 4 executors of one set, each slot
 *    served by a short-lived thread that exits every 25 runs and is replaced
 *    by a new one; every run checks its own exit code and output exactly.
 *  - load-close: the same, with the set closed mid-flight; every run either
 *    returns its exact result or fails with SBX_EXECUTOR_ERROR_CLOSED (or
 *    the spawn refused because the set closed), never a wrong result.
 *  Afterwards no child process, no new fd and no scratch directory is left.
 *
 * Figures (runs, wrong results, runs per second) go to the test log with
 * g_test_message so the issue note can quote them; no timing is asserted.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "backend-test-util.h"
#include "executor-test-util.h"

/* ------------------------------------------------------------------------- */
/* Deterministic regression: the zygote's starting thread is gone            */
/* ------------------------------------------------------------------------- */

typedef struct
{
  LinuxTestBackend *backend;
  LinuxTestPolicy  *policy;
  const char       *workspace;
  int               first;      /* index of the first run */
  int               count;
  int               wrong;      /* runs with a result that is not theirs */
  char             *first_wrong;
} SpawnBatch;

static void
spawn_batch_run (SpawnBatch *b)
{
  for (int i = b->first; i < b->first + b->count; i++)
    {
      g_autofree char *script = g_strdup_printf ("echo run-%d; exit %d", i, 1 + i % 100);
      g_autofree char *expect = g_strdup_printf ("run-%d\n", i);
      g_autoptr(LinuxTestRun) run = linux_test_backend_sh (b->backend, b->policy, b->workspace, script);

      if (run->spawn_status != SBX_STATUS_OK || run->finish_status != SBX_STATUS_OK
          || run->exit.kind != SBX_EXIT_EXITED || run->exit.code != 1 + i % 100
          || g_strcmp0 (run->out, expect) != 0)
        {
          if (b->wrong++ == 0)
            b->first_wrong = g_strdup_printf ("run %d: spawn %d (%s), finish %d, kind %u code %d signo %d, "
                                              "out \"%s\"",
                                              i, run->spawn_status, run->spawn_error ? run->spawn_error : "",
                                              run->finish_status, run->exit.kind, run->exit.code,
                                              run->exit.signo, run->out ? run->out : "");
        }
    }
}

static void *
spawn_batch_thread (void *data)
{
  spawn_batch_run (data);
  return NULL;
}

static void
test_zygote_after_thread_exit (gconstpointer data)
{
  const char *rung = data;
  g_autofree char *why = NULL;
  g_autofree char *workspace = NULL;
  g_autoptr(LinuxTestPolicy) policy = NULL;
  g_autoptr(LinuxTestBackend) backend = NULL;
  const size_t stack_size = 1024 * 1024;
  pthread_attr_t attr;
  pthread_t thread;
  SpawnBatch first = { 0 }, starter = { 0 }, later = { 0 };
  void *stack;
  int status;

  if (!linux_test_have_rung (rung, &why))
    {
      g_test_skip (why);
      return;
    }
  workspace = etu_make_tmpdir ("sbx-ws-XXXXXX");
  policy = linux_test_policy_new (workspace, 2, 2, 0, 0);
  backend = linux_test_backend_new (rung);
  g_assert_cmpint (linux_test_backend_compile (backend, linux_test_policy_get (policy)), ==, SBX_STATUS_OK);

  /* The first spawn of a spec goes directly (no zygote yet). */
  first = (SpawnBatch) { backend, policy, workspace, 0, 1, 0, NULL };
  spawn_batch_run (&first);
  g_assert_cmpstr (first.first_wrong, ==, NULL);

  /* The second starts the zygote, from a thread on a stack we own: glibc
   * puts that thread's TLS block (canary included) at the top of it. */
  stack = mmap (NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  g_assert_true (stack != MAP_FAILED);
  g_assert_cmpint (pthread_attr_init (&attr), ==, 0);
  g_assert_cmpint (pthread_attr_setstack (&attr, stack, stack_size), ==, 0);
  starter = (SpawnBatch) { backend, policy, workspace, 1, 1, 0, NULL };
  g_assert_cmpint (pthread_create (&thread, &attr, spawn_batch_thread, &starter), ==, 0);
  g_assert_cmpint (pthread_join (thread, NULL), ==, 0);
  pthread_attr_destroy (&attr);
  g_assert_cmpstr (starter.first_wrong, ==, NULL);
  /* The thread is gone; now its stack and TLS are too.  The range is then
   * reserved PROT_NONE, so a later thread's stack cannot be placed there
   * and make a stray TLS access look harmless (it would read the new
   * thread's memory instead of faulting). */
  g_assert_cmpint (munmap (stack, stack_size), ==, 0);
  g_assert_true (mmap (stack, stack_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0)
                 == stack);

  /* 100 spawns in a row from another thread, each with its own result. */
  later = (SpawnBatch) { backend, policy, workspace, 2, 100, 0, NULL };
  g_assert_cmpint (pthread_create (&thread, NULL, spawn_batch_thread, &later), ==, 0);
  g_assert_cmpint (pthread_join (thread, NULL), ==, 0);
  if (later.first_wrong != NULL)
    g_test_message ("%d wrong results; first: %s", later.wrong, later.first_wrong);
  g_assert_cmpint (later.wrong, ==, 0);
  g_free (later.first_wrong);

  g_clear_pointer (&backend, linux_test_backend_free);
  g_clear_pointer (&policy, linux_test_policy_free);
  g_assert_cmpint (munmap (stack, stack_size), ==, 0);
  etu_rm_rf (workspace);
  /* Released: no sandbox process and no zygote is left. */
  g_assert_cmpint (waitpid (-1, &status, WNOHANG | __WALL), ==, -1);
  g_assert_cmpint (errno, ==, ECHILD);
}

/* ------------------------------------------------------------------------- */
/* Load through the library: threads come and go                             */
/* ------------------------------------------------------------------------- */

#define LOAD_SLOTS         8
#define LOAD_RUNS_PER_SLOT 500
#define LOAD_EXECUTORS     4
#define LOAD_THREAD_RUNS   25   /* a thread exits after this many runs */

typedef struct
{
  SbxExecutor *executors[LOAD_EXECUTORS];
  const char  *workspace;
  gint         ok;          /* exact results */
  gint         closed;      /* refused because the set closed (load-close only) */
  gint         wrong;       /* anything else: the bug class */
  gint         started;     /* runs begun, to close the set mid-flight */
  GMutex       lock;
  char        *first_wrong;
} LoadState;

typedef struct
{
  LoadState *state;
  int        slot;
  int        first;
} LoadChunk;

static void
load_note_wrong (LoadState  *state,
                 const char *what)
{
  g_atomic_int_inc (&state->wrong);
  g_mutex_lock (&state->lock);
  if (state->first_wrong == NULL)
    state->first_wrong = g_strdup (what);
  g_mutex_unlock (&state->lock);
}

static gpointer
load_chunk_thread (gpointer data)
{
  LoadChunk *chunk = data;
  LoadState *state = chunk->state;

  for (int i = chunk->first; i < chunk->first + LOAD_THREAD_RUNS; i++)
    {
      int code = 1 + (chunk->slot * 31 + i) % 120;
      g_autofree char *script = g_strdup_printf ("echo slot-%d-run-%d; exit %d", chunk->slot, i, code);
      g_autofree char *expect = g_strdup_printf ("slot-%d-run-%d\n", chunk->slot, i);
      const char *argv[] = { "sh", "-c", script, NULL };
      SbxExecutor *executor = state->executors[(chunk->slot + i) % LOAD_EXECUTORS];
      g_autoptr(GError) error = NULL;
      g_autoptr(SbxRunResult) result = NULL;

      g_atomic_int_inc (&state->started);
      result = sbx_executor_run (executor, state->workspace, argv, NULL, NULL, &error);
      if (result == NULL)
        {
          g_autofree char *what = NULL;

          if (g_error_matches (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CLOSED))
            {
              g_atomic_int_inc (&state->closed);
              continue;
            }
          what = g_strdup_printf ("slot %d run %d: %s", chunk->slot, i, error->message);
          load_note_wrong (state, what);
          continue;
        }
      {
        GBytes *bytes = sbx_run_result_get_output (result);
        gsize len = 0;
        const char *out = g_bytes_get_data (bytes, &len);

        if (!sbx_run_result_get_if_exited (result) || sbx_run_result_get_exit_status (result) != code
            || len != strlen (expect) || memcmp (out, expect, len) != 0)
          {
            g_autofree char *got = g_strndup (out, len);
            g_autofree char *what = g_strdup_printf ("slot %d run %d: exited %d status %d signaled %d, "
                                                     "output \"%s\", expected exit %d \"%s\"",
                                                     chunk->slot, i, sbx_run_result_get_if_exited (result),
                                                     sbx_run_result_get_exit_status (result),
                                                     sbx_run_result_get_if_signaled (result), got, code, expect);

            load_note_wrong (state, what);
          }
        else
          g_atomic_int_inc (&state->ok);
      }
    }
  g_free (chunk);
  return NULL;
}

/* One slot: its runs in chunks, each chunk on a fresh thread. */
static gpointer
load_slot_thread (gpointer data)
{
  LoadChunk *slot = data;

  for (int first = 0; first < LOAD_RUNS_PER_SLOT; first += LOAD_THREAD_RUNS)
    {
      LoadChunk *chunk = g_new0 (LoadChunk, 1);
      GThread *thread;

      *chunk = (LoadChunk) { slot->state, slot->slot, first };
      thread = g_thread_new ("sbx-load-chunk", load_chunk_thread, chunk);
      g_thread_join (thread);
    }
  g_free (slot);
  return NULL;
}

/* Entries of @dir (scratch children left behind), or -1 when it is gone. */
static int
count_entries (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  int n = 0;

  if (d == NULL)
    return -1;
  while (g_dir_read_name (d) != NULL)
    n++;
  return n;
}

static void
run_load (const char *rung,
          gboolean    close_mid_flight)
{
  g_autofree char *why = NULL;
  g_autoptr(SbxRegistry) registry = NULL;
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(GError) error = NULL;
  GThread *slots[LOAD_SLOTS];
  LoadState state = { 0 };
  EtuTree tree = { 0 };
  gint64 start, elapsed;
  guint fds_before;
  int total = LOAD_SLOTS * LOAD_RUNS_PER_SLOT;

  if (!linux_test_have_rung (rung, &why))
    {
      g_test_skip (why);
      return;
    }
  etu_warm_up ();
  etu_tree_init (&tree);
  registry = etu_registry ("linux", NULL);
  /* The plugin's process-wide probe cache (its sealed init memfd among it)
   * and the view supervisor's hub (its epoll descriptor) are made on first
   * use and live as long as the process: one run makes both. */
  {
    g_autoptr(SbxProfile) warm_profile = sbx_profile_new_default (tree.ws, NULL);
    g_autoptr(SbxExecutorSetOptions) warm_options = etu_options (tree.scratch, 1, registry);
    g_autoptr(SbxExecutorSet) warm = NULL;
    g_autoptr(SbxExecutor) warm_executor = NULL;
    g_autoptr(SbxRunResult) warm_result = NULL;
    const char *true_argv[] = { "true", NULL };

    sbx_executor_set_options_set_backend (warm_options, rung);
    warm = sbx_executor_set_new (warm_profile, warm_options, &error);
    g_assert_no_error (error);
    warm_executor = sbx_executor_set_for_key (warm, "warm", &error);
    g_assert_no_error (error);
    warm_result = sbx_executor_run (warm_executor, tree.ws, true_argv, NULL, NULL, &error);
    g_assert_no_error (error);
    g_assert_true (sbx_executor_set_close (warm, NULL, &error));
    g_assert_no_error (error);
  }
  fds_before = etu_count_fds ();
  profile = sbx_profile_new_default (tree.ws, &error);
  g_assert_no_error (error);
  options = etu_options (tree.scratch, LOAD_EXECUTORS, registry);
  sbx_executor_set_options_set_backend (options, rung);
  set = sbx_executor_set_new (profile, options, &error);
  g_assert_no_error (error);
  g_mutex_init (&state.lock);
  state.workspace = tree.ws;
  for (int k = 0; k < LOAD_EXECUTORS; k++)
    {
      g_autofree char *key = g_strdup_printf ("agent-%d", k);

      state.executors[k] = sbx_executor_set_for_key (set, key, &error);
      g_assert_no_error (error);
    }

  start = g_get_monotonic_time ();
  for (int s = 0; s < LOAD_SLOTS; s++)
    {
      LoadChunk *slot = g_new0 (LoadChunk, 1);

      *slot = (LoadChunk) { &state, s, 0 };
      slots[s] = g_thread_new ("sbx-load-slot", load_slot_thread, slot);
    }
  if (close_mid_flight)
    {
      /* Close once about a third of the runs have begun. */
      while (g_atomic_int_get (&state.started) < total / 3)
        g_usleep (1000);
      g_assert_true (sbx_executor_set_close (set, NULL, &error));
      g_assert_no_error (error);
    }
  for (int s = 0; s < LOAD_SLOTS; s++)
    g_thread_join (slots[s]);
  elapsed = g_get_monotonic_time () - start;

  g_test_message ("%s%s: %d runs, %d exact, %d refused as closed, %d wrong, %.0f runs/s",
                  rung, close_mid_flight ? " (closed mid-flight)" : "", total, state.ok, state.closed,
                  state.wrong, (state.ok + state.closed) / (elapsed / 1e6));
  if (state.first_wrong != NULL)
    g_test_message ("first wrong result: %s", state.first_wrong);
  g_assert_cmpint (state.wrong, ==, 0);
  g_assert_cmpint (state.ok + state.closed, ==, total);
  if (close_mid_flight)
    {
      g_assert_cmpint (state.ok, >=, total / 3 - LOAD_SLOTS);   /* runs begun before close could finish */
      g_assert_cmpint (state.closed, >, 0);
    }
  else
    g_assert_cmpint (state.closed, ==, 0);

  g_assert_true (sbx_executor_set_close (set, NULL, &error));
  g_assert_no_error (error);
  for (int k = 0; k < LOAD_EXECUTORS; k++)
    g_clear_object (&state.executors[k]);
  g_clear_object (&set);
  g_clear_object (&registry);

  /* Nothing is left: no child, no fd, no scratch directory of the set. */
  g_assert_cmpuint (etu_count_children (), ==, 0);
  if (etu_count_fds () != fds_before)
    {
      g_autofree char *fds = etu_list_fds ();

      g_test_message ("fds now: %s", fds);
    }
  g_assert_cmpuint (etu_count_fds (), ==, fds_before);
  g_assert_cmpint (count_entries (tree.scratch), ==, 0);
  etu_tree_clear (&tree);
  g_free (state.first_wrong);
  g_mutex_clear (&state.lock);
}

static void
test_load (gconstpointer data)
{
  run_load (data, FALSE);
}

static void
test_load_close (gconstpointer data)
{
  run_load (data, TRUE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  linux_test_add_both ("threads/zygote-after-thread-exit", test_zygote_after_thread_exit);
  linux_test_add_both ("threads/load", test_load);
  linux_test_add_both ("threads/load-close", test_load_close);
  return g_test_run ();
}
