/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Index-shaped reads of a registry's lists for the tests: each call takes a
 * fresh snapshot (sbx_registry_list_*()) and keeps it alive as long as the
 * registry, so an assertion can hold a record's strings across calls.
 */
#pragma once

#include <sbx/sbx.h>

static inline GPtrArray *
registry_keep (SbxRegistry *registry,
               GPtrArray   *list)
{
  GPtrArray *kept = g_object_get_data (G_OBJECT (registry), "test-registry-lists");

  if (kept == NULL)
    {
      kept = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
      g_object_set_data_full (G_OBJECT (registry), "test-registry-lists", kept,
                              (GDestroyNotify) g_ptr_array_unref);
    }
  g_ptr_array_add (kept, list);
  return list;
}

static inline guint
registry_n_directories (SbxRegistry *registry)
{
  return registry_keep (registry, sbx_registry_list_directories (registry))->len;
}

static inline SbxDirectoryInfo *
registry_directory (SbxRegistry *registry,
                    guint        index)
{
  GPtrArray *list = registry_keep (registry, sbx_registry_list_directories (registry));

  g_assert_cmpuint (index, <, list->len);
  return list->pdata[index];
}

static inline guint
registry_n_plugins (SbxRegistry *registry)
{
  return registry_keep (registry, sbx_registry_list_plugins (registry))->len;
}

static inline SbxPluginInfo *
registry_plugin (SbxRegistry *registry,
                 guint        index)
{
  GPtrArray *list = registry_keep (registry, sbx_registry_list_plugins (registry));

  g_assert_cmpuint (index, <, list->len);
  return list->pdata[index];
}

static inline guint
registry_n_extensions (SbxRegistry *registry)
{
  return registry_keep (registry, sbx_registry_list_extensions (registry))->len;
}

static inline SbxExtensionInfo *
registry_extension (SbxRegistry *registry,
                    guint        index)
{
  GPtrArray *list = registry_keep (registry, sbx_registry_list_extensions (registry));

  g_assert_cmpuint (index, <, list->len);
  return list->pdata[index];
}
