/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <sbx/sbx.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/*
 * libFuzzer target for the JSON profile loader.  Every input must either be
 * refused with a SBX_PROFILE_ERROR whose message is valid UTF-8, or give a
 * profile whose normalized JSON loads again into an equal profile (same
 * fingerprint) that restricts to itself.  Anything else aborts.
 * Relative workspace roots resolve against "/" (so "usr" can exist).
 */

int LLVMFuzzerTestOneInput (const uint8_t *data,
                            size_t         size);

static void
fail (const char *what,
      const char *detail)
{
  fprintf (stderr, "fuzz-profile-json: %s: %s\n", what, detail != NULL ? detail : "");
  abort ();
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxProfile) again = NULL;
  g_autoptr(SbxProfile) self_restricted = NULL;
  g_autofree char *text = NULL;
  g_autofree char *text_again = NULL;
  SbxAccess access;

  profile = sbx_profile_new_from_json ((const char *) data, (gssize) size, "/", &error);
  if (profile == NULL)
    {
      if (error == NULL || error->domain != SBX_PROFILE_ERROR)
        fail ("refused without a profile error", error != NULL ? error->message : NULL);
      if (!g_utf8_validate (error->message, -1, NULL))
        fail ("error message is not UTF-8", NULL);
      return 0;
    }

  text = sbx_profile_to_json (profile);
  again = sbx_profile_new_from_json (text, -1, "/nonexistent", &error);
  if (again == NULL)
    fail ("normalized JSON does not load", error->message);
  if (!sbx_profile_equal (again, profile)
      || g_strcmp0 (sbx_profile_get_fingerprint (again), sbx_profile_get_fingerprint (profile)) != 0)
    fail ("round trip changed the profile", text);
  text_again = sbx_profile_to_json (again);
  if (g_strcmp0 (text, text_again) != 0)
    fail ("normalized JSON is not stable", text);

  self_restricted = sbx_profile_restrict (profile, profile, &error);
  if (self_restricted == NULL || !sbx_profile_equal (self_restricted, profile))
    fail ("restrict (p, p) differs from p", text);

  if (!sbx_profile_access_for (profile, "filesystem.write", sbx_profile_get_workspace_root (profile), &access, &error)
      || access != sbx_profile_get_workspace_write (profile))
    fail ("access_for the workspace root", text);
  return 0;
}
