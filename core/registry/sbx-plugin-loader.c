/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The plugin loader: one plugin file from "found in a directory" to
 * "initialised" (or refused, with the reason), and the SbxPlugin record's
 * lifetime.  It knows nothing of registries: the registry (sbx-registry.c)
 * decides which files to try, reserves names and publishes what loaded.
 *
 * The steps, each of which refuses the plugin with a message naming the file
 * and the rule it broke:
 *   1. sbx_plugin_open_checked(): a well-formed name, a regular file opened
 *      without following symlinks, owned by root or the current user (or,
 *      inside a user namespace that does not map root, by the owner root's
 *      files show there: sbx_registry_foreign_owner) and not writable by
 *      group or others;
 *   2. sbx_plugin_map(): dlopen(RTLD_NOW | RTLD_LOCAL) of that very inode,
 *      the entry symbol derived from the file name, the descriptor validated
 *      field by field (ABI version, sizes, required host features within the
 *      implemented ones, names, strings, extension tables, vtables) before
 *      any other plugin code runs;
 *   3. sbx_plugin_initialise(): init under the crash guard.  From then on the
 *      code stays mapped for the life of the process (a plugin that
 *      initialised may have started threads or registered callbacks).
 *
 * No lock: a plugin record is written by the one thread loading it and is
 * immutable once the registry publishes it.
 */
#include "sbx-plugin-loader-private.h"
#include "sbx-plugin-abi.h"       /* every kind of extension it validates */
#include "sbx-plugin-private.h"
#include "sbx-plugin-host-private.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <stdio.h>
#include <unistd.h>

#include "sbx-cleanup.h"

/* A mapped object not (yet) kept: dlclose'd at scope exit. */
SBX_DEFINE_CLEANUP (dl_handle, void *, NULL, dlclose)

#define MAX_NAME_LENGTH       SBX_PLUGIN_MAX_NAME_LENGTH
#define MAX_EXTENSIONS        64
#define MAX_EXTENSION_STRIDE  4096
#define MAX_DESCRIPTOR_TEXT   256

/* ------------------------------------------------------------------------- */
/* Names and file safety                                                      */
/* ------------------------------------------------------------------------- */

/* Lowercase words of [a-z0-9] joined by single dashes, at most 64 bytes. */
gboolean
sbx_plugin_name_is_well_formed (const char *name)
{
  gsize len;

  if (name == NULL)
    return FALSE;
  len = strnlen (name, MAX_NAME_LENGTH + 1);
  if (len == 0 || len > MAX_NAME_LENGTH || name[0] == '-' || name[len - 1] == '-')
    return FALSE;
  for (gsize i = 0; i < len; i++)
    {
      if (name[i] == '-')
        {
          if (name[i + 1] == '-')
            return FALSE;
        }
      else if (!g_ascii_islower (name[i]) && !g_ascii_isdigit (name[i]))
        return FALSE;
    }
  return TRUE;
}

/* "sbx-plugin-mock-ok.so" -> "mock-ok"; NULL unless the file name has the
 * plugin prefix and suffix (other files in a plugin directory are ignored). */
char *
sbx_plugin_name_from_file (const char *file_name)
{
  gsize len = strlen (file_name);
  gsize prefix = strlen (PLUGIN_FILE_PREFIX);
  gsize suffix = strlen (PLUGIN_FILE_SUFFIX);

  if (len <= prefix + suffix ||
      !g_str_has_prefix (file_name, PLUGIN_FILE_PREFIX) ||
      !g_str_has_suffix (file_name, PLUGIN_FILE_SUFFIX))
    return NULL;
  return g_strndup (file_name + prefix, len - prefix - suffix);
}

gboolean
sbx_registry_overflow_unmapped (const char *uid_map,
                                uid_t       overflow)
{
  g_auto(GStrv) lines = g_strsplit (uid_map != NULL ? uid_map : "", "\n", -1);
  gboolean initial = FALSE, any = FALSE;

  for (gsize i = 0; lines[i] != NULL; i++)
    {
      guint64 inside, outside, count;

      if (sscanf (lines[i], "%" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT,
                  &inside, &outside, &count) != 3)
        continue;
      any = TRUE;
      if (inside == 0 && outside == 0 && count == G_GUINT64_CONSTANT (4294967295))
        initial = TRUE;
      if ((guint64) overflow >= inside && (guint64) overflow - inside < count)
        return FALSE;   /* a real identity of this namespace */
    }
  /* No readable line: the map could not be judged; the initial namespace
   * always has its one line. */
  return any && !initial;
}

uid_t
sbx_registry_foreign_owner (int          fd,
                            const char  *dir,
                            char       **why_not)
{
  g_autofree char *uid_map = NULL;
  g_autofree char *overflow_text = NULL;
  struct statvfs sv;
  guint64 overflow;

  if (why_not != NULL)
    *why_not = NULL;
  if (!g_file_get_contents ("/proc/self/uid_map", &uid_map, NULL, NULL)
      || !g_file_get_contents ("/proc/sys/kernel/overflowuid", &overflow_text, NULL, NULL)
      || !g_ascii_string_to_unsigned (g_strstrip (overflow_text), 10, 1, G_MAXUINT32 - 1, &overflow, NULL)
      || !sbx_registry_overflow_unmapped (uid_map, (uid_t) overflow))
    return (uid_t) -1;
  /* From here on, this namespace shows root's files as owned by @overflow:
   * say which condition is missing. */
  if (dir == NULL || strcmp (dir, SBX_PLUGINDIR) != 0)
    {
      if (why_not != NULL)
        *why_not = g_strdup_printf ("In this user namespace root's files show uid %u; of the plugin "
                                    "directories only the built-in one (%s) may have that owner",
                                    (unsigned) overflow, SBX_PLUGINDIR);
      return (uid_t) -1;
    }
  if (fstatvfs (fd, &sv) != 0 || (sv.f_flag & ST_RDONLY) == 0)
    {
      if (why_not != NULL)
        *why_not = g_strdup_printf ("In this user namespace root's files show uid %u; the built-in "
                                    "plugin directory is accepted with that owner only on a read-only "
                                    "mount (as Flatpak and sbx itself mount /usr): mount it read-only",
                                    (unsigned) overflow);
      return (uid_t) -1;
    }
  return (uid_t) overflow;
}

gboolean
sbx_registry_check_file_safety (const struct stat  *st,
                                const char         *path,
                                gboolean            want_directory,
                                uid_t               euid,
                                uid_t               foreign_uid,
                                const char         *owner_hint,
                                GError            **error)
{
  unsigned mode = (unsigned) (st->st_mode & 07777);

  if (want_directory && !S_ISDIR (st->st_mode))
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_LOAD_FAILED,
                                 "plugin directory '%s' is not a directory", path);
  if (!want_directory && !S_ISREG (st->st_mode))
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_UNSAFE_PERMISSIONS,
                                 "plugin file '%s' is not a regular file", path);
  if (st->st_uid != 0 && st->st_uid != euid && (foreign_uid == (uid_t) -1 || st->st_uid != foreign_uid))
    {
      g_autofree char *hint = owner_hint != NULL ? g_strdup (owner_hint)
                                                 : g_strdup_printf ("Hint: chown root %s", path);

      return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_UNSAFE_PERMISSIONS,
                                   "plugin %s '%s' is owned by uid %u, not by root or the current user (uid %u); "
                                   "refused. %s",
                                   want_directory ? "directory" : "file", path,
                                   (unsigned) st->st_uid, (unsigned) euid, hint);
    }
  if ((st->st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_UNSAFE_PERMISSIONS,
                                 "plugin %s '%s' is writable by %s (mode %04o); refused. Hint: chmod go-w %s",
                                 want_directory ? "directory" : "file", path,
                                 (st->st_mode & S_IWGRP) != 0 && (st->st_mode & S_IWOTH) != 0 ? "group and others"
                                 : (st->st_mode & S_IWGRP) != 0 ? "its group" : "others",
                                 mode, path);
  return TRUE;
}

/* ------------------------------------------------------------------------- */
/* Descriptor validation                                                      */
/* ------------------------------------------------------------------------- */

static gboolean
descriptor_text_ok (const char *text)
{
  return text != NULL && text[0] != '\0' &&
         strnlen (text, MAX_DESCRIPTOR_TEXT + 1) <= MAX_DESCRIPTOR_TEXT &&
         g_utf8_validate (text, -1, NULL);
}

/* Checks that a vtable is large enough for its mandatory functions and that
 * they are all set.  @vtable starts with struct_size in every kind. */
static gboolean
validate_vtable (const char        *plugin,
                 const SbxExtensionView *ext,
                 GError           **error)
{
  const uint32_t *struct_size = ext->vtable;

  switch (ext->kind)
    {
    case SBX_EXTENSION_KIND_BACKEND:
      {
        const SbxBackendVTableV1 *vt = ext->vtable;

        if (vt->struct_size < SBX_BACKEND_VTABLE_V1_MIN_SIZE)
          break;
        if (vt->probe == NULL || vt->compile == NULL || vt->spawn == NULL ||
            vt->signal == NULL || vt->finish == NULL || vt->release == NULL)
          return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                       "plugin '%s': backend '%s' lacks a mandatory function "
                                       "(probe, compile, spawn, signal, finish and release are required)",
                                       plugin, ext->name);
        return TRUE;
      }
    case SBX_EXTENSION_KIND_EGRESS:
      {
        const SbxEgressVTableV1 *vt = ext->vtable;

        if (vt->struct_size < SBX_EGRESS_VTABLE_V1_MIN_SIZE)
          break;
        if (vt->start == NULL || vt->authorize == NULL || vt->serve == NULL ||
            vt->revoke == NULL || vt->stop == NULL)
          return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                       "plugin '%s': egress '%s' lacks a mandatory function "
                                       "(start, authorize, serve, revoke and stop are required)",
                                       plugin, ext->name);
        return TRUE;
      }
    case SBX_EXTENSION_KIND_REPORTER:
      {
        const SbxReporterVTableV1 *vt = ext->vtable;

        if (vt->struct_size < SBX_REPORTER_VTABLE_V1_MIN_SIZE)
          break;
        if (vt->open == NULL || vt->emit == NULL || vt->close == NULL)
          return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                       "plugin '%s': reporter '%s' lacks a mandatory function "
                                       "(open, emit and close are required)",
                                       plugin, ext->name);
        return TRUE;
      }
    default:
      return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                   "plugin '%s': extension '%s' has unknown kind %u",
                                   plugin, ext->name, (unsigned) ext->kind);
    }
  return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                               "plugin '%s': the vtable of extension '%s' is too small "
                               "(struct_size %u does not cover the mandatory functions)",
                               plugin, ext->name, (unsigned) *struct_size);
}

/* "rule-fds, proxy-listen-fd" for the defined bits of @bits. */
static char *
host_feature_names (uint64_t bits)
{
  static const struct { uint64_t bit; const char *name; } names[] = {
    { SBX_HOST_FEATURE_RULE_FDS, "rule-fds" },
    { SBX_HOST_FEATURE_PROXY_LISTEN_FD, "proxy-listen-fd" },
    { SBX_HOST_FEATURE_EGRESS_V1, "egress-v1" },
  };
  g_autoptr(GString) out = g_string_new (NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    if (bits & names[i].bit)
      g_string_append_printf (out, "%s%s", out->len > 0 ? ", " : "", names[i].name);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* Validates everything the host will read from @desc before any call into
 * the plugin other than the entry function.  Fills @views. */
static gboolean
validate_descriptor (const SbxPluginDescriptor  *desc,
                     const char                 *file_name,
                     const char                 *plugin,
                     uint64_t                    implemented,
                     GArray                     *views,
                     GError                    **error)
{
  g_autofree char *dashed = NULL;
  g_autoptr(GHashTable) seen = NULL;
  const char *base;
  uint32_t stride;
  uint64_t unknown;

  if (desc == NULL)
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                 "plugin '%s': the entry function returned no descriptor", plugin);
  /* struct_size and abi_version sit at offsets 0 and 4 in every ABI version. */
  if (desc->abi_version != SBX_PLUGIN_ABI_VERSION)
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_ABI_MISMATCH,
                                 "plugin '%s' speaks plugin ABI version %u; this library speaks version %u. "
                                 "Hint: rebuild the plugin against this version of sbx-plugin-1",
                                 plugin, (unsigned) desc->abi_version, (unsigned) SBX_PLUGIN_ABI_VERSION);
  if (desc->struct_size < SBX_PLUGIN_DESCRIPTOR_MIN_SIZE)
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                 "plugin '%s': descriptor struct_size %u is smaller than the minimum %u",
                                 plugin, (unsigned) desc->struct_size, (unsigned) SBX_PLUGIN_DESCRIPTOR_MIN_SIZE);
  /* required_host_features must be a subset of what this host implements
   * (and advertises), not merely of the bits it knows. */
  unknown = desc->required_host_features & ~SBX_HOST_FEATURES_KNOWN;
  if (unknown != 0)
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_MISSING_HOST_FEATURE,
                                 "plugin '%s' requires host features 0x%" G_GINT64_MODIFIER "x that this library "
                                 "does not know (it knows 0x%" G_GINT64_MODIFIER "x). Hint: update libsbx-1",
                                 plugin, (guint64) unknown, (guint64) SBX_HOST_FEATURES_KNOWN);
  if ((desc->required_host_features & ~implemented) != 0)
    {
      g_autofree char *names = host_feature_names (desc->required_host_features & ~implemented);

      return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_MISSING_HOST_FEATURE,
                                   "plugin '%s' requires host features 0x%" G_GINT64_MODIFIER "x (%s) that this "
                                   "library does not implement (it implements 0x%" G_GINT64_MODIFIER "x)",
                                   plugin, (guint64) (desc->required_host_features & ~implemented), names,
                                   (guint64) implemented);
    }
  if (desc->name == NULL || strnlen (desc->name, MAX_NAME_LENGTH + 1) > MAX_NAME_LENGTH)
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                 "plugin '%s': the descriptor has no name or an over-long one", plugin);
  /* SBX_PLUGIN_DEFINE spells the name as a C identifier (mock_ok); the file
   * spells it with dashes (sbx-plugin-mock-ok.so). */
  dashed = g_strdelimit (g_strdup (desc->name), "_", '-');
  if (!g_str_equal (dashed, plugin))
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                 "plugin file '%s' holds a descriptor named '%s'; the name must match the file name",
                                 file_name, desc->name);
  if (!descriptor_text_ok (desc->version))
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                 "plugin '%s': the descriptor's version is missing, empty or not UTF-8", plugin);
  if (!descriptor_text_ok (desc->license))
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                 "plugin '%s': the descriptor's license is missing, empty or not UTF-8", plugin);
  if (desc->extensions == NULL)
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                 "plugin '%s': the descriptor has no extension list", plugin);

  /* The list is an array of the plugin's SbxPluginExtension, whose size may
   * grow in later versions: walk it with the stride the plugin declares in
   * its first entry.  The terminator is recognised by kind == SBX_EXT_END
   * (a zeroed entry), which sits at offset 4 in every version. */
  base = (const char *) desc->extensions;
  if (desc->extensions[0].kind == SBX_EXT_END)
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                 "plugin '%s' declares no extensions", plugin);
  stride = desc->extensions[0].struct_size;
  if (stride < sizeof (SbxPluginExtension) || stride > MAX_EXTENSION_STRIDE || stride % sizeof (void *) != 0)
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                 "plugin '%s': extension struct_size %u is invalid (at least %u, a multiple of %u)",
                                 plugin, (unsigned) stride, (unsigned) sizeof (SbxPluginExtension),
                                 (unsigned) sizeof (void *));

  seen = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0;; i++)
    {
      const SbxPluginExtension *ext = (const SbxPluginExtension *) (const void *) (base + (gsize) i * stride);
      SbxExtensionView view;

      if (ext->kind == SBX_EXT_END)
        break;
      if (i >= MAX_EXTENSIONS)
        return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                     "plugin '%s' declares more than %u extensions (unterminated list?)",
                                     plugin, (unsigned) MAX_EXTENSIONS);
      if (ext->struct_size != stride)
        return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                     "plugin '%s': extension #%u has struct_size %u, the first one %u",
                                     plugin, i, (unsigned) ext->struct_size, (unsigned) stride);
      if (!sbx_plugin_name_is_well_formed (ext->name))
        return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                     "plugin '%s': extension #%u has a malformed name "
                                     "(lowercase words joined with dashes, at most %u bytes)",
                                     plugin, i, (unsigned) MAX_NAME_LENGTH);
      if (ext->kind != SBX_EXT_BACKEND && ext->kind != SBX_EXT_EGRESS && ext->kind != SBX_EXT_REPORTER)
        return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                     "plugin '%s': extension '%s' has unknown kind %u",
                                     plugin, ext->name, (unsigned) ext->kind);
      if (ext->vtable == NULL)
        return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                     "plugin '%s': extension '%s' has no vtable", plugin, ext->name);
      if (ext->kind == SBX_EXT_EGRESS && (desc->required_host_features & SBX_HOST_FEATURE_EGRESS_V1) == 0)
        return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                     "plugin '%s': egress extension '%s' is listed but the descriptor does not "
                                     "require SBX_HOST_FEATURE_EGRESS_V1 (the egress vtable is provisional)",
                                     plugin, ext->name);
      if (!g_hash_table_add (seen, (gpointer) ext->name))
        return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                     "plugin '%s' declares extension '%s' twice", plugin, ext->name);
      view.kind = (SbxExtensionKind) ext->kind;
      view.name = ext->name;
      view.priority = ext->priority;
      view.vtable = ext->vtable;
      if (!validate_vtable (plugin, &view, error))
        return FALSE;
      g_array_append_val (views, view);
    }
  return TRUE;
}
/* ------------------------------------------------------------------------- */
/* Loading one file                                                           */
/* ------------------------------------------------------------------------- */

/*
 * dlopen()s @path, which was opened as @fd and checked with fstat (owner,
 * mode, regular file).  The path is loaded, not /proc/self/fd/N: glibc
 * matches dlopen() names against already-loaded objects before it compares
 * file identities, so a recycled fd number would hand back a different,
 * earlier plugin.  The window between the check and the load is closed by
 * the directory check (only root or the current user can replace a file in
 * a directory that passed it) and verified: after loading, the path must
 * still name the inode we checked, or the plugin is refused.
 */
static void *
dlopen_checked (int          fd,
                const char  *path,
                char       **out_error)
{
  struct stat checked, now;
  sbx_auto (dl_handle) void *handle = NULL;

  if (fstat (fd, &checked) != 0)
    {
      int saved_errno = errno;

      *out_error = g_strdup_printf ("fstat: %s", g_strerror (saved_errno));
      return NULL;
    }
  dlerror ();
  handle = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL)
    {
      const char *message = dlerror ();

      *out_error = g_strdup (message != NULL ? message : "unknown dlopen error");
      return NULL;
    }
  if (stat (path, &now) != 0 || now.st_dev != checked.st_dev || now.st_ino != checked.st_ino)
    {
      *out_error = g_strdup ("the file was replaced while it was being loaded");
      return NULL;
    }
  return sbx_steal_pointer (&handle);
}

int
sbx_plugin_open_checked (SbxPlugin  *plugin,
                         int         dirfd,
                         const char *dir,
                         gboolean    foreign_dir,
                         const char *file_name)
{
  GError *error = NULL;
  struct stat st;
  sbx_autofd int fd = -1;

  if (!sbx_plugin_name_is_well_formed (plugin->name))
    {
      sbx_plugin_refuse (plugin, g_error_new (SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_LOAD_FAILED,
                                              "plugin file '%s': '%s' is not a well-formed plugin name "
                                              "(lowercase words joined with dashes)", plugin->path,
                                              plugin->name != NULL ? plugin->name : file_name));
      return -1;
    }
  fd = openat (dirfd, file_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  if (fd < 0)
    {
      int saved_errno = errno;

      if (saved_errno == ELOOP)
        sbx_plugin_refuse (plugin, g_error_new (SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_UNSAFE_PERMISSIONS,
                                                "plugin file '%s' is a symbolic link; refused (install the "
                                                "file itself)", plugin->path));
      else
        sbx_plugin_refuse (plugin, g_error_new (SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_LOAD_FAILED,
                                                "cannot open plugin file '%s': %s", plugin->path,
                                                g_strerror (saved_errno)));
      return -1;
    }
  if (fstat (fd, &st) != 0)
    {
      int saved_errno = errno;

      sbx_plugin_refuse (plugin, g_error_new (SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_LOAD_FAILED,
                                              "cannot stat plugin file '%s': %s", plugin->path,
                                              g_strerror (saved_errno)));
      return -1;
    }
  {
    g_autofree char *why_not = NULL;
    uid_t foreign = foreign_dir && st.st_uid != 0 && st.st_uid != geteuid ()
                    ? sbx_registry_foreign_owner (fd, dir, &why_not) : (uid_t) -1;

    if (!sbx_registry_check_file_safety (&st, plugin->path, FALSE, geteuid (), foreign, why_not, &error))
      {
        sbx_plugin_refuse (plugin, error);
        return -1;
      }
  }
  return sbx_steal_fd (&fd);
}

gboolean
sbx_plugin_map (SbxPlugin  *plugin,
                int         fd,
                const char *file_name,
                uint64_t    implemented,
                GArray     *views)
{
  g_autofree char *dl_error = NULL;
  g_autofree char *symbol = NULL;
  const SbxPluginDescriptor *desc;
  SbxPluginEntryFunc *entry;
  SbxCrashGuard guard;
  GError *error = NULL;
  /* Unloaded on every refusal below; kept (stolen into @plugin) only when
   * the descriptor validated. */
  sbx_auto (dl_handle) void *handle = dlopen_checked (fd, plugin->path, &dl_error);

  if (handle == NULL)
    {
      sbx_plugin_refuse (plugin, g_error_new (SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_LOAD_FAILED,
                                              "cannot load plugin '%s' from '%s': %s", plugin->name,
                                              plugin->path, dl_error));
      return FALSE;
    }

  symbol = g_strdup_printf ("sbx_plugin_%s_entry", plugin->name);
  g_strdelimit (symbol, "-", '_');
  entry = (SbxPluginEntryFunc *) dlsym (handle, symbol);
  if (entry == NULL)
    {
      sbx_plugin_refuse (plugin, g_error_new (SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_LOAD_FAILED,
                                              "plugin '%s' ('%s') does not export its entry symbol %s",
                                              plugin->name, plugin->path, symbol));
      return FALSE;
    }

  sbx_crash_guard_enter (&guard, plugin->name, "entry", NULL);
  desc = entry ();
  sbx_crash_guard_leave (&guard);

  if (!validate_descriptor (desc, file_name, plugin->name, implemented, views, &error))
    {
      sbx_plugin_refuse (plugin, error);
      return FALSE;
    }
  plugin->dl_handle = sbx_steal_pointer (&handle);
  plugin->desc = desc;
  plugin->version = g_strdup (desc->version);
  plugin->license = g_strdup (desc->license);
  return TRUE;
}

void
sbx_plugin_unmap (SbxPlugin *plugin,
                  GError    *error)
{
  g_return_if_fail (!plugin->initialised);

  plugin->desc = NULL;
  sbx_cleanup_dl_handle (&plugin->dl_handle);
  sbx_plugin_refuse (plugin, error);
}

gboolean
sbx_plugin_initialise (SbxPlugin       *plugin,
                       const SbxHostV1 *host)
{
  SbxCrashGuard guard;
  int32_t status = SBX_STATUS_OK;
  void *ctx = NULL;

  if (plugin->desc->init != NULL)
    {
      sbx_crash_guard_enter (&guard, plugin->name, "init", NULL);
      status = plugin->desc->init (host, &ctx);
      sbx_crash_guard_leave (&guard);
    }
  if (status != SBX_STATUS_OK)
    {
      /* Kept mapped: init ran and may have left anything behind. */
      sbx_plugin_refuse (plugin, g_error_new (SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_INIT_FAILED,
                                              "plugin '%s' ('%s'): init failed with status %d (%s)",
                                              plugin->name, plugin->path, (int) status,
                                              sbx_status_to_string (status)));
      return FALSE;
    }
  plugin->ctx = ctx;
  plugin->initialised = TRUE;
  plugin->state = SBX_PLUGIN_STATE_LOADED;
  return TRUE;
}
