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

/* Element @index of a fresh snapshot taken by @list. */
static inline gpointer
registry_nth (SbxRegistry *registry,
              GPtrArray *(*list) (SbxRegistry *registry),
              guint        index)
{
  GPtrArray *items = registry_keep (registry, list (registry));

  g_assert_cmpuint (index, <, items->len);
  return items->pdata[index];
}

#define registry_n_directories(r) (registry_keep ((r), sbx_registry_list_directories (r))->len)
#define registry_n_plugins(r)     (registry_keep ((r), sbx_registry_list_plugins (r))->len)
#define registry_n_extensions(r)  (registry_keep ((r), sbx_registry_list_extensions (r))->len)
#define registry_directory(r, i)  ((SbxDirectoryInfo *) registry_nth ((r), sbx_registry_list_directories, (i)))
#define registry_plugin(r, i)     ((SbxPluginInfo *) registry_nth ((r), sbx_registry_list_plugins, (i)))
#define registry_extension(r, i)  ((SbxExtensionInfo *) registry_nth ((r), sbx_registry_list_extensions, (i)))
