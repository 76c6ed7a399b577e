/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Live decisions inside the library (sbx-decision.c).  Never installed.
 *
 * A run that asks (sbx_run_options_set_ask) has one SbxDecisionBroker.  A
 * mechanism that would refuse a Gated access (today the egress plugin's
 * proxy) hands it to the broker with a key (what makes two requests the
 * same: the grant target) and an answer function; the broker turns the
 * first request for a key into one SbxDecisionRequest, delivered on the
 * run's delivery context, and merges every identical request that arrives
 * while it is pending into it.  The answer (or the timeout, or the run's
 * end) reaches every merged request exactly once.
 *
 * Bounds: at most SBX_DECISION_MAX_PENDING distinct questions wait at a
 * time; past it a new one is refused at once (a tool that floods gets
 * refusals, not a queue).  Merged requests only cost an entry each.
 *
 * Thread safety: every function may be called from any thread; answer
 * functions are called with no lock held.
 */
#pragma once

#include "sbx-decision.h"
#include "sbx-denial-private.h"
#include "sbx-ask-settings-private.h"
#include "sbx-run-options-private.h"

G_BEGIN_DECLS

/* Equal to SBX_ABI_DECISION_* of the plugin ABI. */
typedef enum
{
  SBX_DECISION_DENY    = 0,
  SBX_DECISION_ONCE    = 1,
  SBX_DECISION_FOR_RUN = 2,
} SbxDecision;

/* The most distinct questions a run keeps waiting. */
#define SBX_DECISION_MAX_PENDING 64
/* The default time a question waits for its answer. */
#define SBX_DECISION_DEFAULT_TIMEOUT (60 * G_TIME_SPAN_SECOND)

SbxAskSettings     *sbx_ask_settings_new        (void);
gboolean            sbx_ask_settings_get_ask    (const SbxAskSettings *self);

typedef struct _SbxDecisionBroker SbxDecisionBroker;

/* Delivers @request on the broker's delivery context (the request is
 * pending; the function answers it or keeps it). */
typedef void (*SbxDecisionDeliver) (SbxDecisionRequest *request,
                                    gpointer            data);
typedef void (*SbxDecisionAnswerFunc) (void    *ticket,
                                       guint32  decision);

/* A broker for one run asking as @settings say, delivering to the
 * settings' function on @context (the caller's thread-default context). */
SbxDecisionBroker  *sbx_decision_broker_new     (SbxAskSettings     *settings,
                                                 GMainContext       *context);
SbxDecisionBroker  *sbx_decision_broker_ref     (SbxDecisionBroker  *self);
void                sbx_decision_broker_unref   (SbxDecisionBroker  *self);
/* Replaces the delivery (an SbxProcess emits its signal): @deliver on
 * @context with @data, @destroy called when it is replaced or the broker
 * closes. */
void                sbx_decision_broker_set_deliver (SbxDecisionBroker *self,
                                                     GMainContext      *context,
                                                     SbxDecisionDeliver deliver,
                                                     gpointer           data,
                                                     GDestroyNotify     destroy);
/* One request: @denial (it names the grant, whose target is the key);
 * @answer(@ticket, decision) is called exactly once, possibly before this
 * returns. */
void                sbx_decision_broker_ask     (SbxDecisionBroker  *self,
                                                 SbxDenial          *denial,
                                                 SbxDecisionAnswerFunc answer,
                                                 void               *ticket);
/* A mechanism's ask: sbx_decision_broker_ask() when @self (nullable) and
 * @denial (nullable) name a grant, else @answer(@ticket, DENY) at once. */
void                sbx_decision_broker_ask_or_deny (SbxDecisionBroker    *self,
                                                     SbxDenial            *denial,
                                                     SbxDecisionAnswerFunc answer,
                                                     void                 *ticket);
/* Denies every pending request and every later one; drops the delivery. */
void                sbx_decision_broker_close   (SbxDecisionBroker  *self);
/* The approvals given so far, one "CLASS TARGET: approved while running,
 * ..." line each (transfer full, NULL-terminated). */
char              **sbx_decision_broker_dup_spent (SbxDecisionBroker *self);
/* Questions delivered so far, and requests waiting now (tests). */
guint               sbx_decision_broker_get_n_asked   (SbxDecisionBroker *self);
guint               sbx_decision_broker_get_n_waiting (SbxDecisionBroker *self);

/* The run's broker of @request (transfer none; tests). */
SbxDecisionBroker  *sbx_decision_request_get_broker (SbxDecisionRequest *request);

/* SbxDecisionRequest's answer, with the reason recorded in the spent line
 * (internal: the timeout and the run's end). */
void                sbx_decision_request_answer (SbxDecisionRequest *self,
                                                 SbxDecision         decision);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxDecisionBroker, sbx_decision_broker_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxAskSettings, sbx_ask_settings_unref)

G_END_DECLS
