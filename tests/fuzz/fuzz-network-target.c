/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sbx-netrules-private.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * libFuzzer target for the egress rules (core/netrules/sbx-netrules.c): target
 * normalization and upstream proxy URLs.  A target either is refused with an
 * INVALID_TARGET error or normalizes to a canonical form that parses to
 * itself (idempotent) and names a host the address rules can classify; an
 * upstream URL either is refused with an INVALID_ROUTE error whose message
 * never contains the password, or parses.  Anything else aborts.
 */

int LLVMFuzzerTestOneInput (const uint8_t *data,
                            size_t         size);

static void
fail (const char *what,
      const char *detail)
{
  fprintf (stderr, "fuzz-network-target: %s: %s\n", what, detail != NULL ? detail : "");
  abort ();
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autofree char *text = g_strndup ((const char *) data, size);
  g_autofree char *prefixed = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *canonical = NULL;
  g_autofree char *again = NULL;

  if (strlen (text) != size)
    return 0;  /* embedded NUL: C strings cannot carry it */

  canonical = sbx_netrules_canonical_target (text, &error);
  if (canonical == NULL)
    {
      if (!g_error_matches (error, SBX_NETRULES_ERROR, SBX_NETRULES_ERROR_INVALID_TARGET))
        fail ("target refused with an unexpected error", text);
    }
  else
    {
      g_autofree char *host = NULL;
      guint16 port = 0;
      gboolean literal = FALSE;

      again = sbx_netrules_canonical_target (canonical, NULL);
      if (again == NULL || strcmp (again, canonical) != 0)
        fail ("canonical target is not idempotent", canonical);
      if (!sbx_netrules_parse_target (canonical, &host, &port, &literal, NULL) || port == 0)
        fail ("canonical target does not parse", canonical);
      if (literal != (sbx_netrules_classify_literal (host) >= 0))
        fail ("literal flag disagrees with the classifier", host);
    }
  g_clear_error (&error);

  /* the same bytes as an upstream URL */
  {
    g_autofree char *password = NULL;

    if (!sbx_netrules_parse_upstream_url (text, NULL, NULL, NULL, NULL, &password, &error))
      {
        if (!g_error_matches (error, SBX_NETRULES_ERROR, SBX_NETRULES_ERROR_INVALID_ROUTE))
          fail ("URL refused with an unexpected error", text);
        if (size > 16 && strstr (error->message, text) != NULL)
          fail ("error repeats the URL", error->message);
      }
  }
  prefixed = g_strconcat ("tcp:", text, NULL);
  g_free (sbx_netrules_canonical_target (prefixed, NULL));
  return 0;
}
