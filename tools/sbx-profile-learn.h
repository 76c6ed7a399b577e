/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What `sbx profile learn` learns from a run's denials
 * (tools/sbx-profile-learn.c): the narrowest change of a base profile that
 * would have allowed what the tool tried, the per-run approvals the profile
 * format cannot hold, and the denials no profile change should open, each
 * with its reason.  Pure computation over the base profile, the denial
 * records and the host's filesystem (which directories exist); it runs
 * nothing and writes nothing.
 */
#pragma once

#include <sbx/sbx.h>

G_BEGIN_DECLS

typedef struct _SbxLearn SbxLearn;

/* A learner against @base (referenced). */
SbxLearn   *sbx_learn_new           (SbxProfile          *base);
void        sbx_learn_free          (SbxLearn            *self);

/* One refusal of the run, as an SbxDenial carries it (its count is
 * irrelevant: one attempt needs the same change as ten). */
void        sbx_learn_add_denial    (SbxLearn            *self,
                                     SbxDenial           *denial);
/* The same from its parts (a refused command start has no SbxDenial the
 * CLI can hold): @grant_class and @grant_target together or neither;
 * @reason nullable. */
void        sbx_learn_add           (SbxLearn            *self,
                                     SbxDenialOperation   operation,
                                     const char          *target,
                                     const char          *grant_class,
                                     const char          *grant_target,
                                     const char          *reason);
/* Refusals the run's list had no room for: the change is incomplete. */
void        sbx_learn_set_dropped   (SbxLearn            *self,
                                     guint64              dropped);
/* A line for the notes after the diff (what was not observed, how the
 * command ended). */
void        sbx_learn_add_note      (SbxLearn            *self,
                                     const char          *format,
                                     ...) G_GNUC_PRINTF (2, 3);

/* How the command ended, the last line after the diff. */
void        sbx_learn_set_outcome   (SbxLearn            *self,
                                     const char          *outcome);

/* The changed profile (equal to the base when nothing is learned); a root
 * that fails the profile's own validation is left out with a note.  NULL
 * with @error only when the base itself no longer validates (a root of it
 * was removed since it was loaded). */
SbxProfile *sbx_learn_compute       (SbxLearn            *self,
                                     GError             **error);
/* After compute: the approvals a run of the changed profile would still
 * need, as "CLASS:TARGET" for `sbx run --approve` (NULL-terminated). */
const char *const *sbx_learn_get_approvals (SbxLearn     *self);
/* After compute: the notes, one line each without a newline. */
const char *const *sbx_learn_get_notes     (SbxLearn     *self);
/* After compute: a unified diff of the base's normalized JSON against the
 * changed profile's (labels @label and "@label (learned)"; empty when
 * nothing changes), then the approvals, the notes and the outcome as "# "
 * lines. */
char       *sbx_learn_format        (SbxLearn            *self,
                                     const char          *label);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxLearn, sbx_learn_free)

G_END_DECLS
