/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-baseline: the floor the CLI's start-up is compared with.  A bare
 * GObject program linked against GIO and json-glib (the libraries sbx links)
 * that initialises the type system, touches one GIO and one json-glib type
 * (so neither link is dropped by --as-needed) and prints a version line, as
 * `sbx --version` does.  Nothing else: no plugins, no profile, no probe.
 */
#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include <stdio.h>

int
main (void)
{
  /* Referencing the types keeps the libraries linked and registers them,
   * which is what a GObject program pays at start-up. */
  volatile GType types[] = { G_TYPE_OBJECT, G_TYPE_CANCELLABLE, JSON_TYPE_NODE };

  printf ("bench-baseline %s %u\n", glib_check_version (2, 0, 0) == NULL ? "glib" : "?",
          (unsigned) G_N_ELEMENTS (types));
  return 0;
}
