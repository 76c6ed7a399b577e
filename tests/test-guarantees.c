/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <sbx/sbx.h>

static void
test_level_names (void)
{
  SbxLevel level;

  g_assert_cmpstr (sbx_level_to_string (SBX_LEVEL_NONE), ==, "none");
  g_assert_cmpstr (sbx_level_to_string (SBX_LEVEL_DEGRADED), ==, "degraded");
  g_assert_cmpstr (sbx_level_to_string (SBX_LEVEL_FULL), ==, "full");
  g_assert_null (sbx_level_to_string ((SbxLevel) 3));
  g_assert_true (sbx_level_from_string ("degraded", &level));
  g_assert_cmpint (level, ==, SBX_LEVEL_DEGRADED);
  g_assert_false (sbx_level_from_string ("Full", &level));
}

static void
test_guarantee_bits_frozen (void)
{
  /* Upstream order, values 1..128. */
  g_assert_cmpint (SBX_GUARANTEE_PROCESS_BOUNDARY, ==, 1);
  g_assert_cmpint (SBX_GUARANTEE_WRITE_BOUNDARY, ==, 2);
  g_assert_cmpint (SBX_GUARANTEE_READ_BOUNDARY, ==, 4);
  g_assert_cmpint (SBX_GUARANTEE_ENV_SCRUB, ==, 8);
  g_assert_cmpint (SBX_GUARANTEE_NETWORK_BOUNDARY, ==, 16);
  g_assert_cmpint (SBX_GUARANTEE_ADDRESS_NETWORK, ==, 32);
  g_assert_cmpint (SBX_GUARANTEE_RESOURCE_LIMITS, ==, 64);
  g_assert_cmpint (SBX_GUARANTEE_TARGET_NETWORK, ==, 128);
}

static void
test_guarantee_names_roundtrip (void)
{
  /* Every one of the 256 combinations survives bits -> names -> bits. */
  for (guint bits = 0; bits < 256; bits++)
    {
      g_auto(GStrv) names = sbx_guarantees_to_strv ((SbxGuarantees) bits);
      guint back = 0;

      for (guint i = 0; names[i] != NULL; i++)
        {
          SbxGuarantees one;

          g_assert_true (sbx_guarantee_from_string (names[i], &one));
          g_assert_cmpstr (sbx_guarantee_to_string (one), ==, names[i]);
          back |= one;
        }
      g_assert_cmpuint (back, ==, bits);
      g_assert_cmpuint (g_strv_length (names), ==, (guint) __builtin_popcount (bits));
    }
  g_assert_null (sbx_guarantee_to_string (SBX_GUARANTEE_NONE));
  g_assert_null (sbx_guarantee_to_string (SBX_GUARANTEE_READ_BOUNDARY | SBX_GUARANTEE_WRITE_BOUNDARY));
  g_assert_null (sbx_guarantee_to_string ((SbxGuarantees) 256));
}

static void
test_enum_gtypes (void)
{
  GFlagsClass *flags = g_type_class_ref (SBX_TYPE_GUARANTEES);

  g_assert_nonnull (g_flags_get_value_by_nick (flags, "write-boundary"));
  g_type_class_unref (flags);
  g_assert_true (G_TYPE_IS_ENUM (SBX_TYPE_LEVEL));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/guarantees/level/names", test_level_names);
  g_test_add_func ("/guarantees/bits/frozen", test_guarantee_bits_frozen);
  g_test_add_func ("/guarantees/names/roundtrip-256", test_guarantee_names_roundtrip);
  g_test_add_func ("/guarantees/gtypes", test_enum_gtypes);
  return g_test_run ();
}
