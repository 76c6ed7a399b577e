/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The registry as one JSON object (what `sbx doctor --json` prints): plugin
 * directories, plugins with their state and refusal, backends with their
 * probe, egress routes and reporters.  Built from the registry's public
 * getters only.
 */
#include "sbx-registry.h"
#include "sbx-registry-private.h"
#include "sbx-plugin-private.h"
#include "sbx-plugin-host-private.h"
#include "sbx-compile-report-private.h"
#include "sbx-enum-types.h"

#include <json-glib/json-glib.h>

/* ------------------------------------------------------------------------- */
/* JSON listing                                                               */
/* ------------------------------------------------------------------------- */

static const char *
plugin_error_nick (const GError *error)
{
  GEnumClass *klass;
  GEnumValue *value;

  if (error == NULL || error->domain != SBX_PLUGIN_ERROR)
    return NULL;
  klass = g_type_class_ref (SBX_TYPE_PLUGIN_ERROR);
  value = g_enum_get_value (klass, error->code);
  g_type_class_unref (klass);
  return value != NULL ? value->value_nick : NULL;
}

static void
add_error_members (JsonBuilder  *builder,
                   const GError *error)
{
  const char *nick = plugin_error_nick (error);

  json_builder_set_member_name (builder, "error");
  if (error != NULL)
    json_builder_add_string_value (builder, error->message);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "error_code");
  if (nick != NULL)
    json_builder_add_string_value (builder, nick);
  else
    json_builder_add_null_value (builder);
}

static void
add_nullable_string (JsonBuilder *builder,
                     const char  *member,
                     const char  *value)
{
  json_builder_set_member_name (builder, member);
  if (value != NULL)
    json_builder_add_string_value (builder, value);
  else
    json_builder_add_null_value (builder);
}

/**
 * sbx_registry_to_json:
 * @self: a [class@Sbx.Registry]
 *
 * Describes the registry as one JSON object (what `sbx doctor --json`
 * prints), probing every backend first (probes are cached):
 *
 * ```json
 * {"schema":1,
 *  "directories":[{"path":"...","error":null,"error_code":null}],
 *  "plugins":[{"name":"linux","path":"...","state":"loaded","version":"0.1.0",
 *              "license":"LGPL-2.1-or-later","error":null,"error_code":null}],
 *  "backends":[{"name":"linux-userns","plugin":"linux","priority":100,
 *               "probe":{"ok":true,"level":"full","guarantees":[...],
 *                        "unconfined_only":false,"entries":[...]}}],
 *  "egress":[{"name":"...","plugin":"...","priority":0}],
 *  "reporters":[{"name":"...","plugin":"...","priority":0}]}
 * ```
 *
 * A failed probe is `"probe":{"ok":false,"error":"...","error_code":"..."}`;
 * a refused plugin has `"state":"refused"` and its error.
 *
 * Returns: (transfer full): the JSON text, without a trailing newline
 *
 * Since: 0.1
 */
char *
sbx_registry_to_json (SbxRegistry *self)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  static const struct
  {
    SbxExtensionKind kind;
    const char      *member;
  } kinds[] = {
    { SBX_EXTENSION_KIND_BACKEND, "backends" },
    { SBX_EXTENSION_KIND_EGRESS, "egress" },
    { SBX_EXTENSION_KIND_REPORTER, "reporters" },
  };
  g_autoptr(GPtrArray) directories = NULL;
  g_autoptr(GPtrArray) plugins = NULL;
  g_autoptr(GPtrArray) extensions = NULL;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), NULL);

  directories = sbx_registry_list_directories (self);
  plugins = sbx_registry_list_plugins (self);
  extensions = sbx_registry_list_extensions (self);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "schema");
  json_builder_add_int_value (builder, 1);

  json_builder_set_member_name (builder, "directories");
  json_builder_begin_array (builder);
  for (guint i = 0; i < directories->len; i++)
    {
      SbxDirectoryInfo *dir = directories->pdata[i];

      json_builder_begin_object (builder);
      add_nullable_string (builder, "path", sbx_directory_info_get_path (dir));
      add_error_members (builder, sbx_directory_info_get_error (dir));
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);

  json_builder_set_member_name (builder, "plugins");
  json_builder_begin_array (builder);
  for (guint i = 0; i < plugins->len; i++)
    {
      SbxPluginInfo *plugin = plugins->pdata[i];

      json_builder_begin_object (builder);
      add_nullable_string (builder, "name", sbx_plugin_info_get_name (plugin));
      add_nullable_string (builder, "path", sbx_plugin_info_get_path (plugin));
      add_nullable_string (builder, "state",
                           sbx_plugin_info_get_state (plugin) == SBX_PLUGIN_STATE_LOADED ? "loaded" : "refused");
      add_nullable_string (builder, "version", sbx_plugin_info_get_version (plugin));
      add_nullable_string (builder, "license", sbx_plugin_info_get_license (plugin));
      add_error_members (builder, sbx_plugin_info_get_error (plugin));
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);

  for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
    {
      json_builder_set_member_name (builder, kinds[k].member);
      json_builder_begin_array (builder);
      for (guint i = 0; i < extensions->len; i++)
        {
          SbxExtensionInfo *ext = extensions->pdata[i];
          const char *name = sbx_extension_info_get_name (ext);

          if (sbx_extension_info_get_kind (ext) != kinds[k].kind)
            continue;
          json_builder_begin_object (builder);
          add_nullable_string (builder, "name", name);
          add_nullable_string (builder, "plugin", sbx_extension_info_get_plugin_name (ext));
          json_builder_set_member_name (builder, "priority");
          json_builder_add_int_value (builder, sbx_extension_info_get_priority (ext));
          if (kinds[k].kind == SBX_EXTENSION_KIND_BACKEND)
            {
              g_autoptr(GError) error = NULL;
              gboolean unconfined_only = FALSE;
              g_autoptr(SbxCompileReport) probe = sbx_registry_probe_backend (self, name, &unconfined_only, &error);

              json_builder_set_member_name (builder, "probe");
              json_builder_begin_object (builder);
              json_builder_set_member_name (builder, "ok");
              json_builder_add_boolean_value (builder, probe != NULL);
              if (probe != NULL)
                {
                  g_autoptr(JsonNode) node = sbx_compile_report_to_json_node (probe);
                  JsonObject *object = json_node_get_object (node);
                  const char *members[] = { "level", "guarantees", "entries" };

                  for (guint m = 0; m < G_N_ELEMENTS (members); m++)
                    {
                      json_builder_set_member_name (builder, members[m]);
                      json_builder_add_value (builder, json_node_copy (json_object_get_member (object, members[m])));
                    }
                  json_builder_set_member_name (builder, "unconfined_only");
                  json_builder_add_boolean_value (builder, unconfined_only);
                }
              else
                add_error_members (builder, error);
              json_builder_end_object (builder);
            }
          json_builder_end_object (builder);
        }
      json_builder_end_array (builder);
    }
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  return json_to_string (root, FALSE);
}
