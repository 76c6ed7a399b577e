/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target for the grant token parser and verifier
 * (core/grant/sbx-grant.c).  Every input is tried three ways:
 *   - as a token, under a fixed key: it must be refused with MALFORMED or
 *     BAD_MAC, or (a token minted with that key, as the seed corpus holds)
 *     open to a payload that mints back to exactly the same token;
 *   - as a payload: refused with MALFORMED, or parsed into values that
 *     serialize back to exactly the input, and mint/open round-trips;
 *   - as unpadded base64url: refused, or decoded to bytes that encode back
 *     to exactly the input (one spelling per value).
 * Anything else aborts.
 */
#include <sbx/sbx.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbx-grant-private.h"

int LLVMFuzzerTestOneInput (const uint8_t *data,
                            size_t         size);

/* The seed corpus's tokens are minted with this key. */
static const guint8 fuzz_key[SBX_GRANT_KEY_SIZE] = {
  's', 'b', 'x', '-', 'f', 'u', 'z', 'z', '-', 'g', 'r', 'a', 'n', 't', '-', 'k',
  'e', 'y', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a', 'b', 'c',
};

static void
fail (const char *what,
      const char *detail)
{
  fprintf (stderr, "fuzz-grant-token: %s: %s\n", what, detail != NULL ? detail : "");
  abort ();
}

static void
try_token (const char *text)
{
  g_auto(SbxGrantPayload) p = { 0 };
  g_autoptr(GError) error = NULL;
  g_autofree char *again = NULL;

  if (!sbx_grant_token_open (fuzz_key, text, &p, &error))
    {
      if (error == NULL || error->domain != SBX_GRANT_ERROR
          || (error->code != SBX_GRANT_ERROR_MALFORMED && error->code != SBX_GRANT_ERROR_BAD_MAC))
        fail ("token refused with an unexpected error", error != NULL ? error->message : NULL);
      if (!g_utf8_validate (error->message, -1, NULL))
        fail ("error message is not UTF-8", NULL);
      return;
    }
  again = sbx_grant_token_mint (fuzz_key, &p);
  if (strcmp (again, text) != 0)
    fail ("an accepted token does not mint back to itself", text);
}

static void
try_payload (const char *text,
             size_t      size)
{
  guint8 other_key[SBX_GRANT_KEY_SIZE] = { 1 };
  g_auto(SbxGrantPayload) p = { 0 };
  g_auto(SbxGrantPayload) q = { 0 };
  g_autoptr(GError) error = NULL;
  g_autofree char *serialized = NULL;
  g_autofree char *token = NULL;
  g_autofree char *again = NULL;

  if (!sbx_grant_payload_parse (text, size, &p, &error))
    {
      if (error == NULL || !g_error_matches (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_MALFORMED))
        fail ("payload refused with an unexpected error", error != NULL ? error->message : NULL);
      return;
    }
  serialized = sbx_grant_payload_serialize (&p);
  if (strlen (serialized) != size || memcmp (serialized, text, size) != 0)
    fail ("an accepted payload is not its own serialization", serialized);
  token = sbx_grant_token_mint (fuzz_key, &p);
  if (!sbx_grant_token_open (fuzz_key, token, &q, &error))
    fail ("a minted token does not open", error->message);
  again = sbx_grant_payload_serialize (&q);
  if (strcmp (again, serialized) != 0)
    fail ("mint/open changed the payload", again);
  sbx_grant_payload_clear (&q);
  if (sbx_grant_token_open (other_key, token, &q, &error)
      || !g_error_matches (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_BAD_MAC))
    fail ("a token verified under another key", token);
}

static void
try_base64 (const char *text,
            size_t      size)
{
  g_autofree guint8 *bytes = NULL;
  g_autofree char *again = NULL;
  gsize len = 0;

  bytes = sbx_grant_b64url_decode (text, size, &len);
  if (bytes == NULL)
    return;
  again = sbx_grant_b64url_encode (bytes, len);
  if (strlen (again) != size || memcmp (again, text, size) != 0)
    fail ("base64url has a second spelling", again);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autofree char *text = g_strndup ((const char *) data, size);

  try_token (text);
  try_payload ((const char *) data, size);
  try_base64 ((const char *) data, size);
  return 0;
}
