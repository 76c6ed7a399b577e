/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Live decisions: SbxDecisionRequest (the question an application
 * answers), a run's SbxDecisionBroker (merging, timeouts, the run's end)
 * and the run options that turn asking on.  See sbx-decision-private.h.
 *
 * Rules:
 *  - a request is answered exactly once: the first of the application's
 *    answer, its timeout and the run's end wins; later answers do nothing;
 *  - nothing asked is allowed by default: no delivery (no function, no
 *    signal handler), the timeout and the run's end all deny;
 *  - an approval opens what the request's grant names for this run only
 *    (the broker dies with the run) and is recorded as a spent grant.
 */
#include "sbx-decision-private.h"

#include <string.h>

/* ------------------------------------------------------------------------- */
/* Run options                                                                */
/* ------------------------------------------------------------------------- */

typedef struct
{
  gatomicrefcount ref;
  SbxDecisionFunc func;
  gpointer        data;
  GDestroyNotify  destroy;
} AskClosure;

static void
ask_closure_unref (AskClosure *closure)
{
  if (closure != NULL && g_atomic_ref_count_dec (&closure->ref))
    {
      if (closure->destroy != NULL)
        closure->destroy (closure->data);
      g_free (closure);
    }
}

static void
ask_settings_clear (gpointer data)
{
  SbxAskSettings *self = data;

  ask_closure_unref (self->closure);
}

SbxAskSettings *
sbx_ask_settings_new (void)
{
  SbxAskSettings *self = g_atomic_rc_box_new0 (SbxAskSettings);

  self->clear = ask_settings_clear;
  self->timeout = SBX_DECISION_DEFAULT_TIMEOUT;
  return self;
}

gboolean
sbx_ask_settings_get_ask (const SbxAskSettings *self)
{
  return self != NULL && self->ask;
}

/* A fresh copy of the options' settings, for a setter to change. */
static SbxAskSettings *
settings_for_change (SbxRunOptions *options)
{
  SbxAskSettings *old = sbx_run_options_peek_ask (options);
  SbxAskSettings *fresh = sbx_ask_settings_new ();

  if (old != NULL)
    {
      fresh->ask = old->ask;
      fresh->timeout = old->timeout;
      if (old->closure != NULL)
        {
          AskClosure *closure = old->closure;

          g_atomic_ref_count_inc (&closure->ref);
          fresh->closure = closure;
        }
    }
  return fresh;
}

/**
 * sbx_run_options_set_ask:
 * @self: options
 * @ask: whether to ask
 *
 * Makes the run ask instead of refusing: when the tool reaches a `Gated`
 * capability it holds no grant for, the run holds the attempt and asks the
 * application (the [signal@Sbx.Process::approval-requested] signal of a
 * spawned process, or the function of
 * [method@Sbx.RunOptions.set_decision_func]) whether to allow it once,
 * allow it for the rest of the run, or deny it.  Nobody answering within
 * the timeout ([method@Sbx.RunOptions.set_ask_timeout], 60 seconds by
 * default), no handler and the end of the run all deny.  A capability the
 * profile denies is never asked.
 *
 * Asked: network connections through the egress route's proxy and names
 * the sandbox's DNS stub refuses (a `Gated` network), and connects to a
 * host unix socket the profile gates (such a run claims no read, write or
 * network boundary: an approved host daemon acts outside them), and at
 * rung 1 reads of host files outside the view that the profile gates (an
 * approval lets the tool read exactly that file).  Not asked: writes,
 * execs and listings of files, and files at rung 2, which are refused with
 * a denial as without asking.
 *
 * Since: 0.2
 */
void
sbx_run_options_set_ask (SbxRunOptions *self,
                         gboolean       ask)
{
  SbxAskSettings *fresh;

  g_return_if_fail (self != NULL);
  fresh = settings_for_change (self);
  fresh->ask = ask;
  sbx_run_options_replace_ask (self, fresh);
}

/**
 * sbx_run_options_set_ask_timeout:
 * @self: options
 * @timeout: how long a question waits for its answer, in microseconds
 *   (0: the default, 60 seconds)
 *
 * Sets how long a question of an asking run ([method@Sbx.RunOptions.set_ask])
 * waits; past it the request is denied.
 *
 * Since: 0.2
 */
void
sbx_run_options_set_ask_timeout (SbxRunOptions *self,
                                 GTimeSpan      timeout)
{
  SbxAskSettings *fresh;

  g_return_if_fail (self != NULL);
  g_return_if_fail (timeout >= 0);
  fresh = settings_for_change (self);
  fresh->timeout = timeout > 0 ? timeout : SBX_DECISION_DEFAULT_TIMEOUT;
  sbx_run_options_replace_ask (self, fresh);
}

/**
 * sbx_run_options_set_decision_func:
 * @self: options
 * @func: (nullable) (scope notified) (closure user_data) (destroy destroy):
 *   called for each question of the run
 * @user_data: data for @func
 * @destroy: (nullable): frees @user_data
 *
 * Where an asking run ([method@Sbx.RunOptions.set_ask]) started with
 * [method@Sbx.Executor.run_async] or [method@Sbx.PreparedProcess.run_async]
 * sends its questions: @func is called on the thread-default main context
 * of the thread that started the run (which must keep running it).  A
 * process from [method@Sbx.Executor.spawn] emits
 * [signal@Sbx.Process::approval-requested] instead.
 *
 * Since: 0.2
 */
void
sbx_run_options_set_decision_func (SbxRunOptions  *self,
                                   SbxDecisionFunc func,
                                   gpointer        user_data,
                                   GDestroyNotify  destroy)
{
  SbxAskSettings *fresh;

  g_return_if_fail (self != NULL);
  fresh = settings_for_change (self);
  ask_closure_unref (g_steal_pointer (&fresh->closure));
  if (func != NULL)
    {
      AskClosure *closure = g_new0 (AskClosure, 1);

      g_atomic_ref_count_init (&closure->ref);
      closure->func = func;
      closure->data = user_data;
      closure->destroy = destroy;
      fresh->closure = closure;
    }
  else if (destroy != NULL)
    destroy (user_data);
  sbx_run_options_replace_ask (self, fresh);
}

/* ------------------------------------------------------------------------- */
/* The broker                                                                 */
/* ------------------------------------------------------------------------- */

typedef struct
{
  SbxDecisionAnswerFunc answer;
  void                 *ticket;
} Waiter;

struct _SbxDecisionBroker
{
  gatomicrefcount    ref;
  GTimeSpan          timeout;
  GMutex             lock;
  gboolean           closed;        /* (lock) */
  GHashTable        *pending;       /* (lock) key -> SbxDecisionRequest (owned ref) */
  GHashTable        *for_run;       /* (lock) keys approved for the rest of the run */
  GPtrArray         *spent;         /* (lock) char* */
  guint              n_asked;       /* (lock) */
  guint              n_waiting;     /* (lock) */
  GMainContext      *context;       /* (lock) (nullable) (owned) where questions go */
  SbxDecisionDeliver deliver;       /* (lock) (nullable) */
  gpointer           deliver_data;  /* (lock) */
  GDestroyNotify     deliver_destroy;
  AskClosure        *closure;       /* (nullable) (owned) the options' function */
};

struct _SbxDecisionRequest
{
  GObject            parent_instance;
  SbxDecisionBroker *broker;     /* (owned) */
  SbxDenial         *denial;     /* (owned) */
  char              *key;
  GArray            *waiters;    /* (broker lock) Waiter; NULL once answered */
  GSource           *timeout;    /* (broker lock) (nullable) (owned) */
};

/**
 * SbxDecisionRequest:
 *
 * A question of an asking run ([method@Sbx.RunOptions.set_ask]): the tool
 * reached a `Gated` capability it holds no grant for, and the attempt waits
 * for the application's answer.  [method@Sbx.DecisionRequest.get_denial]
 * says what was tried and which grant an approval spends; answer once with
 * [method@Sbx.DecisionRequest.allow_once],
 * [method@Sbx.DecisionRequest.allow_for_run] or
 * [method@Sbx.DecisionRequest.deny], from any thread.  The first of the
 * answer, the run's timeout and the run's end wins; afterwards
 * [method@Sbx.DecisionRequest.is_pending] is %FALSE and answers do nothing.
 *
 * Since: 0.2
 */
G_DEFINE_FINAL_TYPE (SbxDecisionRequest, sbx_decision_request, G_TYPE_OBJECT)

static void
sbx_decision_request_finalize (GObject *object)
{
  SbxDecisionRequest *self = SBX_DECISION_REQUEST (object);

  /* A request is finalized only once it is answered: the broker's table
   * holds it until then. */
  g_clear_pointer (&self->waiters, g_array_unref);
  g_clear_pointer (&self->denial, sbx_denial_unref);
  g_clear_pointer (&self->broker, sbx_decision_broker_unref);
  g_free (self->key);
  G_OBJECT_CLASS (sbx_decision_request_parent_class)->finalize (object);
}

static void
sbx_decision_request_class_init (SbxDecisionRequestClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sbx_decision_request_finalize;
}

static void
sbx_decision_request_init (SbxDecisionRequest *self)
{
  (void) self;
}

/* The timers of every broker: one thread, so a question times out even
 * when the application's main context does not run. */
static gpointer
timer_thread (gpointer data)
{
  GMainContext *context = data;

  g_main_context_push_thread_default (context);
  for (;;)
    g_main_context_iteration (context, TRUE);
  return NULL;
}

static GMainContext *
timer_context (void)
{
  static GMainContext *context;

  if (g_once_init_enter (&context))
    {
      GMainContext *fresh = g_main_context_new ();

      g_thread_unref (g_thread_new ("sbx-decisions", timer_thread, fresh));
      g_once_init_leave (&context, fresh);
    }
  return context;
}

SbxDecisionBroker *
sbx_decision_broker_new (SbxAskSettings *settings,
                         GMainContext   *context)
{
  SbxDecisionBroker *self = g_new0 (SbxDecisionBroker, 1);

  g_atomic_ref_count_init (&self->ref);
  g_mutex_init (&self->lock);
  self->timeout = settings != NULL ? settings->timeout : SBX_DECISION_DEFAULT_TIMEOUT;
  self->pending = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_object_unref);
  self->for_run = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->spent = g_ptr_array_new_with_free_func (g_free);
  if (settings != NULL && settings->closure != NULL)
    {
      self->closure = settings->closure;
      g_atomic_ref_count_inc (&self->closure->ref);
    }
  self->context = context != NULL ? g_main_context_ref (context) : NULL;
  return self;
}

SbxDecisionBroker *
sbx_decision_broker_ref (SbxDecisionBroker *self)
{
  g_atomic_ref_count_inc (&self->ref);
  return self;
}

void
sbx_decision_broker_unref (SbxDecisionBroker *self)
{
  if (self == NULL || !g_atomic_ref_count_dec (&self->ref))
    return;
  /* The table holds requests that hold the broker: none is left here. */
  g_assert (g_hash_table_size (self->pending) == 0);
  g_hash_table_unref (self->pending);
  g_hash_table_unref (self->for_run);
  g_ptr_array_unref (self->spent);
  if (self->deliver_destroy != NULL)
    self->deliver_destroy (self->deliver_data);
  g_clear_pointer (&self->context, g_main_context_unref);
  ask_closure_unref (self->closure);
  g_mutex_clear (&self->lock);
  g_free (self);
}

void
sbx_decision_broker_set_deliver (SbxDecisionBroker *self,
                                 GMainContext      *context,
                                 SbxDecisionDeliver deliver,
                                 gpointer           data,
                                 GDestroyNotify     destroy)
{
  GDestroyNotify old_destroy;
  gpointer old_data;
  GMainContext *old_context;

  g_mutex_lock (&self->lock);
  if (self->closed)
    {
      g_mutex_unlock (&self->lock);
      if (destroy != NULL)
        destroy (data);
      return;
    }
  old_destroy = self->deliver_destroy;
  old_data = self->deliver_data;
  old_context = self->context;
  self->context = context != NULL ? g_main_context_ref (context) : NULL;
  self->deliver = deliver;
  self->deliver_data = data;
  self->deliver_destroy = destroy;
  g_mutex_unlock (&self->lock);
  if (old_destroy != NULL)
    old_destroy (old_data);
  if (old_context != NULL)
    g_main_context_unref (old_context);
}

/* Answers @self: the first answer wins. */
void
sbx_decision_request_answer (SbxDecisionRequest *self,
                             SbxDecision         decision)
{
  SbxDecisionBroker *broker = self->broker;
  g_autoptr(GArray) waiters = NULL;
  GSource *timeout;

  g_mutex_lock (&broker->lock);
  if (self->waiters == NULL)
    {
      g_mutex_unlock (&broker->lock);
      return;
    }
  waiters = g_steal_pointer (&self->waiters);
  timeout = g_steal_pointer (&self->timeout);
  broker->n_waiting -= waiters->len;
  if (decision != SBX_DECISION_DENY)
    {
      const char *grant_class = sbx_denial_get_grant_class (self->denial);

      g_ptr_array_add (broker->spent,
                       g_strdup_printf ("%s %s: approved while running, %s", grant_class, self->key,
                                        decision == SBX_DECISION_FOR_RUN ? "for the rest of this run"
                                        : "once"));
      if (decision == SBX_DECISION_FOR_RUN)
        g_hash_table_add (broker->for_run, g_strdup (self->key));
    }
  /* Keeps self alive past the table's reference. */
  g_object_ref (self);
  if (g_hash_table_lookup (broker->pending, self->key) == self)
    g_hash_table_remove (broker->pending, self->key);
  g_mutex_unlock (&broker->lock);

  if (timeout != NULL)
    {
      g_source_destroy (timeout);
      g_source_unref (timeout);
    }
  for (guint i = 0; i < waiters->len; i++)
    {
      Waiter *w = &g_array_index (waiters, Waiter, i);

      w->answer (w->ticket, (guint32) decision);
    }
  g_object_unref (self);
}

static gboolean
request_timed_out (gpointer data)
{
  sbx_decision_request_answer (data, SBX_DECISION_DENY);
  return G_SOURCE_REMOVE;
}

static gboolean
deliver_request (gpointer data)
{
  SbxDecisionRequest *request = data;
  SbxDecisionBroker *broker = request->broker;
  SbxDecisionDeliver deliver;
  gpointer deliver_data;

  g_mutex_lock (&broker->lock);
  deliver = broker->deliver;
  deliver_data = broker->deliver_data;
  g_mutex_unlock (&broker->lock);
  if (!sbx_decision_request_is_pending (request))
    return G_SOURCE_REMOVE;
  if (deliver != NULL)
    deliver (request, deliver_data);
  else if (broker->closure != NULL)
    broker->closure->func (request, broker->closure->data);
  else
    sbx_decision_request_answer (request, SBX_DECISION_DENY);
  return G_SOURCE_REMOVE;
}

void
sbx_decision_broker_ask (SbxDecisionBroker    *self,
                         SbxDenial            *denial,
                         SbxDecisionAnswerFunc answer,
                         void                 *ticket)
{
  const char *key = sbx_denial_get_grant_target (denial);
  SbxDecisionRequest *request;
  Waiter waiter = { answer, ticket };
  guint32 at_once = SBX_DECISION_DENY;
  g_autoptr(GSource) idle = NULL;

  g_mutex_lock (&self->lock);
  if (key == NULL || self->closed || self->context == NULL
      || (self->deliver == NULL && self->closure == NULL))
    goto answer_now;
  if (g_hash_table_contains (self->for_run, key))
    {
      /* approved for the run while this request was on its way */
      at_once = SBX_DECISION_FOR_RUN;
      goto answer_now;
    }
  request = g_hash_table_lookup (self->pending, key);
  if (request != NULL)
    {
      g_array_append_val (request->waiters, waiter);
      self->n_waiting++;
      g_mutex_unlock (&self->lock);
      return;
    }
  if (g_hash_table_size (self->pending) >= SBX_DECISION_MAX_PENDING)
    goto answer_now;

  request = g_object_new (SBX_TYPE_DECISION_REQUEST, NULL);
  request->broker = sbx_decision_broker_ref (self);
  request->denial = sbx_denial_ref (denial);
  request->key = g_strdup (key);
  request->waiters = g_array_new (FALSE, FALSE, sizeof (Waiter));
  g_array_append_val (request->waiters, waiter);
  self->n_waiting++;
  self->n_asked++;
  g_hash_table_insert (self->pending, request->key, request);   /* the table's ref */
  request->timeout = g_timeout_source_new ((guint) MIN (self->timeout / 1000, G_MAXUINT));
  g_source_set_callback (request->timeout, request_timed_out, g_object_ref (request), g_object_unref);
  g_source_set_static_name (request->timeout, "[sbx] decision timeout");
  g_source_attach (request->timeout, timer_context ());
  idle = g_idle_source_new ();
  g_source_set_callback (idle, deliver_request, g_object_ref (request), g_object_unref);
  g_source_set_static_name (idle, "[sbx] decision request");
  g_source_attach (idle, self->context);
  g_mutex_unlock (&self->lock);
  return;

answer_now:
  g_mutex_unlock (&self->lock);
  answer (ticket, at_once);
}

void
sbx_decision_broker_ask_or_deny (SbxDecisionBroker    *self,
                                 SbxDenial            *denial,
                                 SbxDecisionAnswerFunc answer,
                                 void                 *ticket)
{
  if (self == NULL || denial == NULL || sbx_denial_get_grant_target (denial) == NULL)
    answer (ticket, SBX_DECISION_DENY);
  else
    sbx_decision_broker_ask (self, denial, answer, ticket);
}

void
sbx_decision_broker_close (SbxDecisionBroker *self)
{
  g_autoptr(GPtrArray) requests = g_ptr_array_new_with_free_func (g_object_unref);
  GHashTableIter iter;
  gpointer value;
  GDestroyNotify destroy;
  gpointer data;

  g_mutex_lock (&self->lock);
  self->closed = TRUE;
  g_hash_table_iter_init (&iter, self->pending);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_ptr_array_add (requests, g_object_ref (value));
  destroy = g_steal_pointer (&self->deliver_destroy);
  data = g_steal_pointer (&self->deliver_data);
  self->deliver = NULL;
  g_mutex_unlock (&self->lock);
  for (guint i = 0; i < requests->len; i++)
    sbx_decision_request_answer (requests->pdata[i], SBX_DECISION_DENY);
  if (destroy != NULL)
    destroy (data);
}

char **
sbx_decision_broker_dup_spent (SbxDecisionBroker *self)
{
  char **lines;

  g_mutex_lock (&self->lock);
  lines = g_new0 (char *, self->spent->len + 1);
  for (guint i = 0; i < self->spent->len; i++)
    lines[i] = g_strdup (self->spent->pdata[i]);
  g_mutex_unlock (&self->lock);
  return lines;
}

guint
sbx_decision_broker_get_n_asked (SbxDecisionBroker *self)
{
  guint n;

  g_mutex_lock (&self->lock);
  n = self->n_asked;
  g_mutex_unlock (&self->lock);
  return n;
}

guint
sbx_decision_broker_get_n_waiting (SbxDecisionBroker *self)
{
  guint n;

  g_mutex_lock (&self->lock);
  n = self->n_waiting;
  g_mutex_unlock (&self->lock);
  return n;
}

SbxDecisionBroker *
sbx_decision_request_get_broker (SbxDecisionRequest *request)
{
  return request->broker;
}

/* ------------------------------------------------------------------------- */
/* The request's API                                                          */
/* ------------------------------------------------------------------------- */

/**
 * sbx_decision_request_get_denial:
 * @self: a request
 *
 * What the tool tried: the operation, the target, the process when known,
 * and the grant an approval spends ([method@Sbx.Denial.get_grant_class],
 * [method@Sbx.Denial.get_grant_target]).
 *
 * Returns: (transfer none): the denial the request would otherwise be
 *
 * Since: 0.2
 */
SbxDenial *
sbx_decision_request_get_denial (SbxDecisionRequest *self)
{
  g_return_val_if_fail (SBX_IS_DECISION_REQUEST (self), NULL);
  return self->denial;
}

/**
 * sbx_decision_request_is_pending:
 * @self: a request
 *
 * Whether @self still waits for its answer: FALSE once it was answered,
 * timed out or its run ended (a dialog for it can then close).
 *
 * Returns: whether an answer is still taken
 *
 * Since: 0.2
 */
gboolean
sbx_decision_request_is_pending (SbxDecisionRequest *self)
{
  gboolean pending;

  g_return_val_if_fail (SBX_IS_DECISION_REQUEST (self), FALSE);
  g_mutex_lock (&self->broker->lock);
  pending = self->waiters != NULL;
  g_mutex_unlock (&self->broker->lock);
  return pending;
}

/**
 * sbx_decision_request_allow_once:
 * @self: a request
 *
 * Allows this attempt (a network connection: this one, and identical ones
 * that arrived while the question was pending); the next attempt on the
 * same target asks again.  Recorded as a spent grant of the run.  Does
 * nothing when the request is no longer pending.
 *
 * Since: 0.2
 */
void
sbx_decision_request_allow_once (SbxDecisionRequest *self)
{
  g_return_if_fail (SBX_IS_DECISION_REQUEST (self));
  sbx_decision_request_answer (self, SBX_DECISION_ONCE);
}

/**
 * sbx_decision_request_allow_for_run:
 * @self: a request
 *
 * Allows the request's target (exactly the grant target of
 * [method@Sbx.DecisionRequest.get_denial]) until the run ends; nothing
 * carries over to another run.  Recorded as a spent grant of the run.
 * Does nothing when the request is no longer pending.
 *
 * Since: 0.2
 */
void
sbx_decision_request_allow_for_run (SbxDecisionRequest *self)
{
  g_return_if_fail (SBX_IS_DECISION_REQUEST (self));
  sbx_decision_request_answer (self, SBX_DECISION_FOR_RUN);
}

/**
 * sbx_decision_request_deny:
 * @self: a request
 *
 * Refuses the attempt, as the run would have without asking (it is a
 * denial of the run).  Does nothing when the request is no longer pending.
 *
 * Since: 0.2
 */
void
sbx_decision_request_deny (SbxDecisionRequest *self)
{
  g_return_if_fail (SBX_IS_DECISION_REQUEST (self));
  sbx_decision_request_answer (self, SBX_DECISION_DENY);
}
