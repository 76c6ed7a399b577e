/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sbx-http-head.h"

#include <string.h>

/* RFC 9110 tchar */
static gboolean
is_tchar (guchar c)
{
  return g_ascii_isalnum (c) || (c != '\0' && strchr ("!#$%&'*+-.^_`|~", c) != NULL);
}

/* field-value characters: VCHAR, SP, HTAB, obs-text */
static gboolean
is_value_char (guchar c)
{
  return c == '\t' || c == ' ' || (c >= 0x21 && c != 0x7f);
}

void
sbx_http_head_free (SbxHttpHead *head)
{
  if (head == NULL)
    return;
  g_free (head->method);
  g_free (head->target);
  g_free (head->reason);
  g_ptr_array_unref (head->names);
  g_ptr_array_unref (head->values);
  g_free (head);
}

/* Find the end of the head: the first CRLF CRLF.  A bare LF anywhere before
 * it is refused by the line parser below. */
static const char *
find_head_end (const char *data,
               gsize       length)
{
  for (gsize i = 0; i + 3 < length; i++)
    if (data[i] == '\r' && data[i + 1] == '\n' && data[i + 2] == '\r' && data[i + 3] == '\n')
      return data + i + 4;
  return NULL;
}

static gboolean
parse_version (const char *s,
               gsize       len,
               guint      *minor)
{
  if (len != 8 || memcmp (s, "HTTP/1.", 7) != 0 || (s[7] != '0' && s[7] != '1'))
    return FALSE;
  *minor = (guint) (s[7] - '0');
  return TRUE;
}

static gboolean
parse_start_line (SbxHttpHead *head,
                  const char  *line,
                  gsize        len,
                  gboolean     response,
                  const char **why)
{
  const char *sp1 = memchr (line, ' ', len);
  const char *sp2;

  if (sp1 == NULL)
    {
      *why = "malformed start line";
      return FALSE;
    }
  sp2 = memchr (sp1 + 1, ' ', len - (gsize) (sp1 + 1 - line));

  if (response)
    {
      /* HTTP/1.x SP 3DIGIT SP reason-phrase (the reason may be empty) */
      const char *code;

      if (!parse_version (line, (gsize) (sp1 - line), &head->minor_version))
        {
          *why = "unsupported HTTP version";
          return FALSE;
        }
      code = sp1 + 1;
      if (sp2 == NULL || sp2 - code != 3 || !g_ascii_isdigit (code[0]) || !g_ascii_isdigit (code[1]) ||
          !g_ascii_isdigit (code[2]) || code[0] == '0')
        {
          *why = "malformed status code";
          return FALSE;
        }
      head->status = (guint) ((code[0] - '0') * 100 + (code[1] - '0') * 10 + (code[2] - '0'));
      for (const char *c = sp2 + 1; c < line + len; c++)
        if (!is_value_char ((guchar) *c))
          {
            *why = "control character in reason phrase";
            return FALSE;
          }
      head->reason = g_strndup (sp2 + 1, (gsize) (line + len - sp2 - 1));
      return TRUE;
    }

  /* method SP request-target SP HTTP-version, exactly one SP each */
  if (sp1 == line || sp2 == NULL || sp2 == sp1 + 1)
    {
      *why = "malformed request line";
      return FALSE;
    }
  for (const char *c = line; c < sp1; c++)
    if (!is_tchar ((guchar) *c))
      {
        *why = "invalid method";
        return FALSE;
      }
  for (const char *c = sp1 + 1; c < sp2; c++)
    if ((guchar) *c <= 0x20 || (guchar) *c >= 0x7f)
      {
        *why = "invalid request target";
        return FALSE;
      }
  if (!parse_version (sp2 + 1, (gsize) (line + len - sp2 - 1), &head->minor_version))
    {
      *why = "unsupported HTTP version";
      return FALSE;
    }
  head->method = g_strndup (line, (gsize) (sp1 - line));
  head->target = g_strndup (sp1 + 1, (gsize) (sp2 - sp1 - 1));
  return TRUE;
}

static gboolean
parse_field (SbxHttpHead *head,
             const char  *line,
             gsize        len,
             const char **why)
{
  const char *colon = memchr (line, ':', len);
  const char *v, *end;

  if (colon == NULL || colon == line)
    {
      *why = "malformed header field";
      return FALSE;
    }
  for (const char *c = line; c < colon; c++)
    if (!is_tchar ((guchar) *c))
      {
        /* includes whitespace before ':' and obs-fold (a line starting with
         * SP or HTAB), both of which RFC 9112 says to reject */
        *why = "invalid header field name";
        return FALSE;
      }
  v = colon + 1;
  end = line + len;
  for (const char *c = v; c < end; c++)
    if (!is_value_char ((guchar) *c))
      {
        *why = "control character in header field value";
        return FALSE;
      }
  while (v < end && (*v == ' ' || *v == '\t'))
    v++;
  while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
    end--;
  if (head->names->len >= SBX_HTTP_MAX_FIELDS)
    {
      *why = "too many header fields";
      return FALSE;
    }
  g_ptr_array_add (head->names, g_strndup (line, (gsize) (colon - line)));
  g_ptr_array_add (head->values, g_strndup (v, (gsize) (end - v)));
  return TRUE;
}

SbxHttpParse
sbx_http_head_parse (const char   *data,
                     gsize         length,
                     gsize         max_size,
                     gboolean      response,
                     SbxHttpHead **out,
                     const char  **why)
{
  g_autoptr(SbxHttpHead) head = NULL;
  const char *end, *p;
  const char *dummy;
  static const char *const single[] = { "host", "content-length", "transfer-encoding",
                                        "proxy-authorization" };

  if (why == NULL)
    why = &dummy;
  *why = NULL;
  *out = NULL;

  end = find_head_end (data, MIN (length, max_size));
  if (end == NULL)
    {
      if (memchr (data, '\0', MIN (length, max_size)) != NULL)
        {
          *why = "NUL byte in message head";
          return SBX_HTTP_PARSE_INVALID;
        }
      return length >= max_size ? SBX_HTTP_PARSE_TOO_LARGE : SBX_HTTP_PARSE_INCOMPLETE;
    }

  head = g_new0 (SbxHttpHead, 1);
  head->names = g_ptr_array_new_with_free_func (g_free);
  head->values = g_ptr_array_new_with_free_func (g_free);
  head->head_length = (gsize) (end - data);

  p = data;
  for (gboolean first = TRUE;; first = FALSE)
    {
      const char *cr = p;

      /* the line ends at CR, which must be followed by LF; LF alone, CR
       * alone and NUL are refused */
      while (*cr != '\r' && *cr != '\n' && *cr != '\0')
        cr++;
      if (*cr != '\r' || cr[1] != '\n')
        {
          *why = *cr == '\0' ? "NUL byte in message head" : "bare CR or LF in message head";
          return SBX_HTTP_PARSE_INVALID;
        }
      if (cr == p)
        {
          if (first)
            {
              *why = "empty start line";
              return SBX_HTTP_PARSE_INVALID;
            }
          break;  /* the empty line: end of head */
        }
      if (first ? !parse_start_line (head, p, (gsize) (cr - p), response, why)
                : !parse_field (head, p, (gsize) (cr - p), why))
        return SBX_HTTP_PARSE_INVALID;
      p = cr + 2;
    }

  /* framing and authority fields must not be repeated */
  for (gsize i = 0; i < G_N_ELEMENTS (single); i++)
    {
      guint count = 0;

      sbx_http_head_get (head, single[i], &count);
      if (count > 1)
        {
          *why = "repeated Host, Content-Length, Transfer-Encoding or Proxy-Authorization field";
          return SBX_HTTP_PARSE_INVALID;
        }
    }
  *out = g_steal_pointer (&head);
  return SBX_HTTP_PARSE_OK;
}

const char *
sbx_http_head_get (SbxHttpHead *head,
                   const char  *name,
                   guint       *count)
{
  const char *found = NULL;
  guint n = 0;

  for (guint i = 0; i < head->names->len; i++)
    if (g_ascii_strcasecmp (head->names->pdata[i], name) == 0)
      {
        if (found == NULL)
          found = head->values->pdata[i];
        n++;
      }
  if (count != NULL)
    *count = n;
  return found;
}

gboolean
sbx_http_list_has_token (const char *list,
                         const char *token)
{
  g_auto(GStrv) parts = NULL;

  if (list == NULL)
    return FALSE;
  parts = g_strsplit (list, ",", -1);
  for (gsize i = 0; parts[i] != NULL; i++)
    if (g_ascii_strcasecmp (g_strstrip (parts[i]), token) == 0)
      return TRUE;
  return FALSE;
}
