/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A run's asking settings (live decisions): the box the run options hold
 * and sbx-decision.c fills.  Header only, so the options hold it without
 * depending on the decision broker.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A run's asking options (sbx_run_options_set_ask and friends): shared
 * between copies of the options, immutable once a start request holds it. */
typedef struct _SbxAskSettings SbxAskSettings;

/* An atomic reference-counted box (g_atomic_rc_box), so that the run
 * options hold it without calling into this file: @clear frees what it
 * holds. */
struct _SbxAskSettings
{
  GDestroyNotify  clear;
  gboolean        ask;
  GTimeSpan       timeout;
  gpointer        closure;   /* (nullable) (owned) the decision function */
};

static inline SbxAskSettings *
sbx_ask_settings_ref (SbxAskSettings *self)
{
  return g_atomic_rc_box_acquire (self);
}

static inline void
sbx_ask_settings_unref (SbxAskSettings *self)
{
  if (self != NULL)
    g_atomic_rc_box_release_full (self, self->clear);
}

G_END_DECLS
