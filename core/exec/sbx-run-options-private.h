/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The readers of a SbxRunOptions that the core needs and applications do
 * not.
 */
#pragma once

#include "sbx-run-options.h"
#include "sbx-ask-settings-private.h"

G_BEGIN_DECLS

/* The options' settings (NULL: the run does not ask); replace takes
 * @ask (sbx-run-options.c). */
SbxAskSettings     *sbx_run_options_peek_ask    (const SbxRunOptions *options);
void                sbx_run_options_replace_ask (SbxRunOptions      *options,
                                                 SbxAskSettings     *ask);

G_END_DECLS
