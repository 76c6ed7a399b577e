/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sbx-fingerprint-private.h"

#include <string.h>

/*
 * The profile fingerprint
 * =======================
 *
 * The fingerprint is the lowercase hex SHA-256 (64 characters, no prefix)
 * of one compact JSON object, written byte for byte as Go's encoding/json
 * writes upstream's fingerprint struct, so a profile without resource
 * limits has exactly upstream's fingerprint:
 *
 *   {"Version":1,"WorkspaceRoot":"/srv/app","WorkspaceRead":2,
 *    "WorkspaceWrite":2,"HostRead":2,"HostWrite":0,"Network":0,"Command":2,
 *    "Home":0,"Isolation":0,"AdditionalRoots":[{"Path":"/data","Read":1,
 *    "Write":0}],"AckUnconfined":false,"RequiredGuarantees":30}
 *
 * (one line, no whitespace at all).  Members appear in exactly that order.
 * Enum values and the guarantee mask are decimal numbers; the roots are the
 * profile's sorted, deduplicated canonical roots and the array is "[]" when
 * there are none (never null).
 *
 * Extension (sbx only): when any resource limit is set, one more member
 * follows RequiredGuarantees:
 *
 *   ,"Limits":{"Processes":1024,"Memory":4294967296,"OpenFiles":0}
 *
 * with all three values in bytes or counts, 0 meaning "no limit".  Without
 * limits the member is absent, which keeps upstream compatibility.
 * sbx's own members follow, each only when set, so a profile without them
 * keeps its fingerprint: ,"UnixSockets":true; ,"HostSockets":[...];
 * ,"GatedHostSockets":[...]; ,"DeniedPaths":1 ("denied-paths": "not-found").
 *
 * Strings use Go's escaping (json.Marshal, HTML-safe):
 *   - '"' and '\\' get a backslash;
 *   - \b \f \n \r \t use their short forms, every other byte below 0x20 is
 *     \u00XX with lowercase hex;
 *   - '<', '>' and '&' are \u003c, \u003e and \u0026;
 *   - U+2028 and U+2029 are \u2028 and \u2029;
 *   - each byte that does not start a valid UTF-8 sequence (Go's rules:
 *     no overlong forms, no surrogates, nothing above U+10FFFF) becomes
 *     \ufffd, and decoding resumes at the next byte;
 *   - everything else, including DEL and other non-ASCII, is written raw.
 *
 * docs/profile-format.md repeats this description for users.
 */

static const char hex_digits[] = "0123456789abcdef";

/* Go's utf8.DecodeRune, returning the length of a valid sequence at @s or 0
 * when the byte at @s does not start one. */
static gsize
go_utf8_sequence (const guchar *s,
                  gsize         n,
                  gunichar     *out)
{
  guchar b0 = s[0];
  guchar lo = 0x80, hi = 0xBF;
  gsize size;
  gunichar c;

  if (b0 < 0x80)
    {
      *out = b0;
      return 1;
    }
  if (b0 < 0xC2 || b0 > 0xF4)
    return 0;
  if (b0 < 0xE0)
    {
      size = 2;
      c = b0 & 0x1F;
    }
  else if (b0 < 0xF0)
    {
      size = 3;
      c = b0 & 0x0F;
      if (b0 == 0xE0)
        lo = 0xA0;
      else if (b0 == 0xED)
        hi = 0x9F;
    }
  else
    {
      size = 4;
      c = b0 & 0x07;
      if (b0 == 0xF0)
        lo = 0x90;
      else if (b0 == 0xF4)
        hi = 0x8F;
    }
  if (n < size)
    return 0;
  if (s[1] < lo || s[1] > hi)
    return 0;
  c = (c << 6) | (s[1] & 0x3F);
  for (gsize i = 2; i < size; i++)
    {
      if (s[i] < 0x80 || s[i] > 0xBF)
        return 0;
      c = (c << 6) | (s[i] & 0x3F);
    }
  *out = c;
  return size;
}

/*
 * sbx_fingerprint_append_go_string:
 * @out: the buffer
 * @text: the string bytes
 * @length: length of @text in bytes, or -1 when it is NUL-terminated
 *
 * Appends @text as a JSON string literal (with its quotes) escaped exactly
 * as Go's encoding/json escapes it (see the comment at the top of this
 * file).
 */
void
sbx_fingerprint_append_go_string (GString    *out,
                                  const char *text,
                                  gssize      length)
{
  const guchar *s = (const guchar *) text;
  gsize n = length < 0 ? strlen (text) : (gsize) length;
  gsize i = 0;

  g_string_append_c (out, '"');
  while (i < n)
    {
      guchar b = s[i];
      gunichar c;
      gsize size;

      if (b < 0x80)
        {
          switch (b)
            {
            case '"':
            case '\\':
              g_string_append_c (out, '\\');
              g_string_append_c (out, (char) b);
              break;
            case '\b':
              g_string_append (out, "\\b");
              break;
            case '\f':
              g_string_append (out, "\\f");
              break;
            case '\n':
              g_string_append (out, "\\n");
              break;
            case '\r':
              g_string_append (out, "\\r");
              break;
            case '\t':
              g_string_append (out, "\\t");
              break;
            case '<':
            case '>':
            case '&':
              g_string_append (out, "\\u00");
              g_string_append_c (out, hex_digits[b >> 4]);
              g_string_append_c (out, hex_digits[b & 0xF]);
              break;
            default:
              if (b < 0x20)
                {
                  g_string_append (out, "\\u00");
                  g_string_append_c (out, hex_digits[b >> 4]);
                  g_string_append_c (out, hex_digits[b & 0xF]);
                }
              else
                g_string_append_c (out, (char) b);
              break;
            }
          i++;
          continue;
        }

      size = go_utf8_sequence (s + i, n - i, &c);
      if (size == 0)
        {
          g_string_append (out, "\\ufffd");
          i++;
          continue;
        }
      if (c == 0x2028 || c == 0x2029)
        g_string_append_printf (out, "\\u%04x", c);
      else
        g_string_append_len (out, (const char *) s + i, (gssize) size);
      i += size;
    }
  g_string_append_c (out, '"');
}

/* sbx's socket lists: `,"NAME":[...]`, only when not empty (a profile
 * without them keeps its fingerprint). */
static void
append_socket_list (GString            *out,
                    const char         *name,
                    const char * const *paths)
{
  if (paths == NULL || paths[0] == NULL)
    return;
  g_string_append_printf (out, ",\"%s\":[", name);
  for (gsize i = 0; paths[i] != NULL; i++)
    {
      if (i > 0)
        g_string_append_c (out, ',');
      sbx_fingerprint_append_go_string (out, paths[i], -1);
    }
  g_string_append_c (out, ']');
}

/*
 * sbx_fingerprint_serialize:
 * @settings: the normalized profile fields
 *
 * Writes the canonical serialization the fingerprint hashes (format at the
 * top of this file).
 *
 * Returns: (transfer full): the serialization, NUL-terminated
 */
char *
sbx_fingerprint_serialize (const SbxFingerprintSettings *settings)
{
  GString *out = g_string_sized_new (256);

  g_string_append_printf (out, "{\"Version\":%u,\"WorkspaceRoot\":", settings->version);
  sbx_fingerprint_append_go_string (out, settings->workspace_root, -1);
  g_string_append_printf (out,
                          ",\"WorkspaceRead\":%u,\"WorkspaceWrite\":%u"
                          ",\"HostRead\":%u,\"HostWrite\":%u"
                          ",\"Network\":%u,\"Command\":%u"
                          ",\"Home\":%u,\"Isolation\":%u"
                          ",\"AdditionalRoots\":[",
                          settings->workspace_read, settings->workspace_write,
                          settings->host_read, settings->host_write,
                          settings->network, settings->command,
                          settings->home, settings->isolation);
  for (gsize i = 0; i < settings->n_roots; i++)
    {
      const SbxFingerprintRoot *root = &settings->roots[i];

      if (i > 0)
        g_string_append_c (out, ',');
      g_string_append (out, "{\"Path\":");
      sbx_fingerprint_append_go_string (out, root->path, -1);
      g_string_append_printf (out, ",\"Read\":%u,\"Write\":%u}", root->read, root->write);
    }
  g_string_append_printf (out, "],\"AckUnconfined\":%s,\"RequiredGuarantees\":%" G_GUINT64_FORMAT,
                          settings->ack_unconfined ? "true" : "false",
                          settings->required_guarantees);
  if (settings->max_processes != 0 || settings->max_memory != 0 || settings->max_open_files != 0)
    g_string_append_printf (out,
                            ",\"Limits\":{\"Processes\":%" G_GUINT64_FORMAT
                            ",\"Memory\":%" G_GUINT64_FORMAT
                            ",\"OpenFiles\":%" G_GUINT64_FORMAT "}",
                            settings->max_processes, settings->max_memory,
                            settings->max_open_files);
  /* sbx's own member, after upstream's fields and only when set, so every
   * profile without it keeps its (upstream-compatible) fingerprint */
  if (settings->unix_sockets)
    g_string_append (out, ",\"UnixSockets\":true");
  append_socket_list (out, "HostSockets", settings->host_sockets);
  append_socket_list (out, "GatedHostSockets", settings->gated_host_sockets);
  if (settings->denied_paths != 0)
    g_string_append_printf (out, ",\"DeniedPaths\":%u", settings->denied_paths);
  g_string_append_c (out, '}');
  return g_string_free (out, FALSE);
}

/*
 * sbx_fingerprint_compute:
 * @settings: the normalized profile fields
 *
 * Returns: (transfer full): the lowercase hex SHA-256 of
 *   sbx_fingerprint_serialize() (64 characters)
 */
char *
sbx_fingerprint_compute (const SbxFingerprintSettings *settings)
{
  g_autofree char *serialized = sbx_fingerprint_serialize (settings);

  return g_compute_checksum_for_string (G_CHECKSUM_SHA256, serialized, -1);
}
