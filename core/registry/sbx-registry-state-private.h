/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the registry's sibling files (selection, reporter sinks) may read of
 * its lists, each call a snapshot taken under the registry's lock.  The
 * registry's fields themselves stay private to sbx-registry.c.  Never
 * installed.
 */
#pragma once

#include <glib.h>
#include "sbx-registry.h"
#include "sbx-plugin-private.h"
#include "sbx-plugin-egress.h"
#include "sbx-plugin-reporter.h"

G_BEGIN_DECLS

/* New arrays (transfer full, with references) of the registry's backends in
 * load order (SbxBackend) and of its refused plugins (SbxPlugin). */
void       sbx_registry_snapshot_candidates (SbxRegistry                *self,
                                             GPtrArray                 **out_backends,
                                             GPtrArray                 **out_refused);
/* The plugin (a reference) and vtable of reporter extension @name, or NULL. */
SbxPlugin *sbx_registry_find_reporter       (SbxRegistry                *self,
                                             const char                 *name,
                                             const SbxReporterVTableV1 **vtable_out);
/* The plugin (a reference) and vtable of egress extension @name, or NULL. */
SbxPlugin *sbx_registry_find_egress         (SbxRegistry                *self,
                                             const char                 *name,
                                             const SbxEgressVTableV1   **vtable_out);

G_END_DECLS
