/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The egress-http module as built, through the real plugin loader: this
 * library does not implement SBX_HOST_FEATURE_EGRESS_V1 yet, so the default
 * host refuses it with MISSING_HOST_FEATURE; a registry that advertises the
 * bit (sbx_registry_new_with_host_features, tests only) loads it and lists
 * its extension. */
#include <sbx/sbx.h>

#include "sbx-registry-private.h"
#include "sbx-plugin-abi.h"
#include "../registry-list-util.h"

static int
find_plugin (SbxRegistry *registry,
             const char  *name)
{
  for (guint i = 0; i < registry_n_plugins (registry); i++)
    if (g_str_equal (sbx_plugin_info_get_name (registry_plugin (registry, i)), name))
      return (int) i;
  return -1;
}

static void
test_refused_without_feature (void)
{
  const char *dirs[] = { g_getenv ("SBX_TEST_EGRESS_HTTP_PLUGIN_DIR"), NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxRegistry) registry = NULL;
  int index;

  g_assert_nonnull (dirs[0]);
  /* A host implementing everything but egress. */
  registry = sbx_registry_new_with_host_features (dirs, SBX_HOST_FEATURE_RULE_FDS | SBX_HOST_FEATURE_PROXY_LISTEN_FD,
                                                  &error);
  g_assert_no_error (error);
  index = find_plugin (registry, "egress-http");
  g_assert_cmpint (index, >=, 0);
  g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, (guint) index)), ==, SBX_PLUGIN_STATE_REFUSED);
  g_assert_error (sbx_plugin_info_get_error (registry_plugin (registry, (guint) index)), SBX_PLUGIN_ERROR,
                  SBX_PLUGIN_ERROR_MISSING_HOST_FEATURE);
  g_assert_cmpuint (registry_n_extensions (registry), ==, 0);
}

static void
test_loaded_with_feature (void)
{
  const char *dirs[] = { g_getenv ("SBX_TEST_EGRESS_HTTP_PLUGIN_DIR"), NULL };
  g_autoptr(GError) error = NULL;
  /* This library's own host table implements egress. */
  g_autoptr(SbxRegistry) registry = sbx_registry_new_for_directories (dirs, &error);
  int index;

  g_assert_no_error (error);
  index = find_plugin (registry, "egress-http");
  g_assert_cmpint (index, >=, 0);
  g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, (guint) index)), ==, SBX_PLUGIN_STATE_LOADED);
  g_assert_cmpuint (registry_n_extensions (registry), ==, 1);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/egress-http/load/refused-without-egress-feature", test_refused_without_feature);
  g_test_add_func ("/egress-http/load/loaded-with-egress-feature", test_loaded_with_feature);
  return g_test_run ();
}
