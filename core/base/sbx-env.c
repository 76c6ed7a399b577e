/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Environment scrubbing: the child sees only allowlisted variables of the
 * parent plus the forced ones.  Nothing else of the parent's environment
 * (GITHUB_TOKEN, AWS_*, ANTHROPIC_API_KEY, SSH_AUTH_SOCK, ...) reaches it.
 */
#include "sbx-env-private.h"

#include <string.h>

static const char *const baseline_allowlist[] = {
  "PATH", "HOME", "TERM", "LANG", "LC_*", "USER", "LOGNAME", "SHELL", "TZ", NULL,
};

const char *const *
sbx_env_baseline_allowlist (void)
{
  return baseline_allowlist;
}

typedef enum
{
  ENV_GLOB_LITERAL,
  ENV_GLOB_STAR,
  ENV_GLOB_QUESTION,
  ENV_GLOB_CLASS,
} EnvGlobKind;

typedef struct
{
  EnvGlobKind kind;
  gunichar    literal;
  gboolean    negated;
  GArray     *ranges;   /* pairs of gunichar (first, last) */
} EnvGlobToken;

static void
env_glob_token_clear (gpointer data)
{
  EnvGlobToken *token = data;

  g_clear_pointer (&token->ranges, g_array_unref);
}

static gboolean
read_char (const char **p,
           gunichar    *out)
{
  gunichar c;

  if (**p == '\0')
    return FALSE;
  c = g_utf8_get_char_validated (*p, -1);
  if (c == (gunichar) -1 || c == (gunichar) -2)
    {
      (*p)++;
      *out = 0xFFFD;
      return TRUE;
    }
  *p = g_utf8_next_char (*p);
  *out = c;
  return TRUE;
}

/* One class character: c (not '\\', '-', ']') or "\\c". */
static gboolean
read_class_char (const char **p,
                 gunichar    *out)
{
  if (**p == '-' || **p == ']' || **p == '\0')
    return FALSE;
  if (**p == '\\')
    (*p)++;
  return read_char (p, out);
}

static GArray *
env_glob_compile (const char *pattern)
{
  g_autoptr(GArray) tokens = g_array_new (FALSE, TRUE, sizeof (EnvGlobToken));
  const char *p = pattern;

  g_array_set_clear_func (tokens, env_glob_token_clear);
  while (*p != '\0')
    {
      EnvGlobToken token = { .kind = ENV_GLOB_LITERAL };

      if (*p == '*')
        {
          token.kind = ENV_GLOB_STAR;
          p++;
        }
      else if (*p == '?')
        {
          token.kind = ENV_GLOB_QUESTION;
          p++;
        }
      else if (*p == '[')
        {
          token.kind = ENV_GLOB_CLASS;
          token.ranges = g_array_new (FALSE, FALSE, sizeof (gunichar));
          g_array_append_val (tokens, token);   /* owned by tokens from here */
          p++;
          if (*p == '^')
            {
              g_array_index (tokens, EnvGlobToken, tokens->len - 1).negated = TRUE;
              p++;
            }
          /* Non-empty: at least one range before ']'. */
          do
            {
              gunichar lo;
              gunichar hi;

              if (!read_class_char (&p, &lo))
                return NULL;
              hi = lo;
              if (*p == '-')
                {
                  p++;
                  if (!read_class_char (&p, &hi) || hi < lo)
                    return NULL;
                }
              g_array_append_val (token.ranges, lo);
              g_array_append_val (token.ranges, hi);
            }
          while (*p != ']');
          p++;
          continue;
        }
      else
        {
          if (*p == '\\')
            {
              p++;
              if (*p == '\0')
                return NULL;
            }
          read_char (&p, &token.literal);
        }
      g_array_append_val (tokens, token);
    }
  return g_steal_pointer (&tokens);
}

static gboolean
env_glob_match_at (const EnvGlobToken *tokens,
                   guint               n_tokens,
                   const char         *name)
{
  gunichar c;

  for (guint i = 0; i < n_tokens; i++)
    {
      const EnvGlobToken *token = &tokens[i];

      if (token->kind == ENV_GLOB_STAR)
        {
          /* Try every split within the current segment. */
          const char *p = name;

          for (;;)
            {
              if (env_glob_match_at (tokens + i + 1, n_tokens - i - 1, p))
                return TRUE;
              if (!read_char (&p, &c) || c == '/')
                return FALSE;
            }
        }
      if (!read_char (&name, &c))
        return FALSE;
      switch (token->kind)
        {
        case ENV_GLOB_LITERAL:
          if (c != token->literal)
            return FALSE;
          break;
        case ENV_GLOB_QUESTION:
          if (c == '/')
            return FALSE;
          break;
        case ENV_GLOB_CLASS:
          {
            gboolean in = FALSE;

            for (guint k = 0; k + 1 < token->ranges->len && !in; k += 2)
              in = c >= g_array_index (token->ranges, gunichar, k)
                   && c <= g_array_index (token->ranges, gunichar, k + 1);
            if (in == token->negated)
              return FALSE;
          }
          break;
        case ENV_GLOB_STAR:
        default:
          return FALSE;
        }
    }
  return *name == '\0';
}

gboolean
sbx_env_name_match (const char *pattern,
                    const char *name,
                    gboolean   *out_valid)
{
  g_autoptr(GArray) tokens = NULL;

  g_return_val_if_fail (pattern != NULL && name != NULL, FALSE);

  tokens = env_glob_compile (pattern);
  if (out_valid != NULL)
    *out_valid = tokens != NULL;
  if (tokens == NULL)
    return FALSE;
  return env_glob_match_at ((const EnvGlobToken *) (void *) tokens->data, tokens->len, name);
}

static gboolean
name_allowed (const char        *name,
              const char *const *allow)
{
  for (gsize i = 0; allow != NULL && allow[i] != NULL; i++)
    if (sbx_env_name_match (allow[i], name, NULL))
      return TRUE;
  return FALSE;
}

/* Orders "NAME=value" entries by NAME. */
static gint
compare_names (gconstpointer a,
               gconstpointer b)
{
  const char *x = *(const char *const *) a;
  const char *y = *(const char *const *) b;
  gsize nx = strcspn (x, "=");
  gsize ny = strcspn (y, "=");
  int c = memcmp (x, y, MIN (nx, ny));

  if (c != 0)
    return c;
  return (nx > ny) - (nx < ny);
}

char **
sbx_env_scrub (const char *const *parent,
               const char *const *allow,
               const char *const *forced)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) appended = g_ptr_array_new ();

  for (gsize i = 0; parent != NULL && parent[i] != NULL; i++)
    {
      const char *eq = strchr (parent[i], '=');
      g_autofree char *name = NULL;

      if (eq == NULL)
        continue;
      name = g_strndup (parent[i], eq - parent[i]);
      if (name_allowed (name, allow))
        g_ptr_array_add (out, g_strdup (parent[i]));
    }

  for (gsize i = 0; forced != NULL && forced[i] != NULL; i++)
    {
      const char *eq = strchr (forced[i], '=');
      gsize name_len;
      gboolean replaced = FALSE;

      g_return_val_if_fail (eq != NULL && eq != forced[i], NULL);
      name_len = eq - forced[i] + 1;   /* including '=' */
      for (guint k = 0; k < out->len; k++)
        if (strncmp (out->pdata[k], forced[i], name_len) == 0)
          {
            g_free (out->pdata[k]);
            out->pdata[k] = g_strdup (forced[i]);
            replaced = TRUE;
            break;
          }
      if (!replaced)
        {
          /* A later forced value of the same name wins. */
          for (guint k = 0; k < appended->len; k++)
            if (strncmp (appended->pdata[k], forced[i], name_len) == 0)
              g_ptr_array_remove_index (appended, k--);
          g_ptr_array_add (appended, (gpointer) forced[i]);
        }
    }

  g_ptr_array_sort (appended, compare_names);
  for (guint k = 0; k < appended->len; k++)
    g_ptr_array_add (out, g_strdup (appended->pdata[k]));
  g_ptr_array_add (out, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&out), FALSE);
}
