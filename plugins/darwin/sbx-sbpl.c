/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The SBPL compiler (see sbx-sbpl.h for the rules it keeps).  Plain C11 and
 * libc: it runs on every host.
 *
 * Shape of the output:
 *   1. the fixed preamble (PREAMBLE below);
 *   2. "; --- filesystem ---": one form per (rule, operation), with every
 *      spelling of the rule's path as filters of that one form, sorted by
 *      (precedence, allow before deny, emission order);
 *   3. glob denies;
 *   4. "; --- network ---".
 * Every string literal in the text is printable ASCII with '\\' and '"'
 * escaped; any other path travels as a parameter.
 *
 * This file is over a thousand lines (about 1,100) because it is one
 * compiler: the growable buffer, the path spellings, the filesystem forms
 * and the globs are passes that all write into one Compiler state, whose
 * invariants (sorted forms, parameters numbered in emission order, the
 * ASCII rule above) hold only across the whole output.  Split into files,
 * that state would become a header shared by four files of one function,
 * with no other reader; the sections below are the seams a reader follows.
 */
#include "sbx-sbpl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Internal axis bits: the IR's R/X/W plus the finer ones macOS rows use. */
#define AX_READ  SBX_FS_READ    /* file-read* */
#define AX_EXEC  SBX_FS_EXEC    /* process-exec* + file-map-executable */
#define AX_WRITE SBX_FS_WRITE   /* file-write* */
#define AX_MAP   SBX_SBPL_AXIS_MAP  /* file-map-executable only (libraries) */
#define AX_META  16u            /* file-read-metadata only (ancestors) */

#define ROW_EXACT SBX_SBPL_ROW_EXACT

/* The macOS runtime closure: what ordinary programs need to start with host
 * read denied, each row with the least it needs.  Canonical spellings; the
 * /private aliases are added like for every rule. */
typedef SbxSbplRuntimeRow DarwinRow;

static const DarwinRow darwin_closure[] = {
  /* Programs: read, execute, map. */
  { "/bin",                                  AX_READ | AX_EXEC, 0 },
  { "/sbin",                                 AX_READ | AX_EXEC, 0 },
  { "/usr/bin",                              AX_READ | AX_EXEC, 0 },
  { "/usr/sbin",                             AX_READ | AX_EXEC, 0 },
  { "/usr/libexec",                          AX_READ | AX_EXEC, 0 },
  /* Libraries, frameworks and the dyld shared cache: read and map, never
   * execute as a program. */
  { "/usr/lib",                              AX_READ | AX_MAP, 0 },
  { "/System/Library",                       AX_READ | AX_MAP, 0 },
  { "/System/Volumes/Preboot/Cryptexes/OS",  AX_READ | AX_MAP, 0 },
  { "/private/var/db/dyld",                  AX_READ | AX_MAP, 0 },
  /* Data: locale, zoneinfo, terminfo, trust anchors. */
  { "/usr/share",                            AX_READ, 0 },
  { "/private/var/db/timezone",              AX_READ, 0 },
  { "/private/etc/ssl",                      AX_READ, 0 },
  /* /bin/sh's selector link. */
  { "/private/var/select/sh",                AX_READ, ROW_EXACT },
  /* Name resolution and local time (files, not their directories). */
  { "/private/etc/hosts",                    AX_READ, ROW_EXACT },
  { "/private/etc/resolv.conf",              AX_READ, ROW_EXACT },
  { "/private/var/run/resolv.conf",          AX_READ, ROW_EXACT },
  { "/private/etc/services",                 AX_READ, ROW_EXACT },
  { "/private/etc/protocols",                AX_READ, ROW_EXACT },
  { "/private/etc/localtime",                AX_READ, ROW_EXACT },
  /* The minimal /dev. */
  { "/dev/null",                             AX_READ | AX_WRITE, ROW_EXACT },
  { "/dev/zero",                             AX_READ | AX_WRITE, ROW_EXACT },
  { "/dev/random",                           AX_READ, ROW_EXACT },
  { "/dev/urandom",                          AX_READ, ROW_EXACT },
  { "/dev/tty",                              AX_READ | AX_WRITE, ROW_EXACT },
  /* The process's own descriptors (bash process substitution). */
  { "/dev/fd",                               AX_READ | AX_WRITE, 0 },
};

const SbxSbplRuntimeRow *
sbx_sbpl_runtime_closure (size_t *n_rows)
{
  *n_rows = sizeof darwin_closure / sizeof darwin_closure[0];
  return darwin_closure;
}

/* Mach services libc and the security framework reach for ordinary work.
 * Anything else (notably LaunchServices, which starts programs outside the
 * sandbox) stays denied. */
static const char *const darwin_mach_services[] = {
  "com.apple.system.opendirectoryd.libinfo",
  "com.apple.system.opendirectoryd.membership",
  "com.apple.system.notification_center",
  "com.apple.system.logger",
  "com.apple.logd",
  "com.apple.trustd",
  "com.apple.trustd.agent",
};

static const char PREAMBLE_HEAD[] =
  "(version 1)\n"
  "(deny default)\n"
  "; --- process ---\n"
  "(allow process-fork)\n"
  "(allow signal (target same-sandbox))\n"
  "(allow process-info* (target same-sandbox))\n"
  "(allow sysctl-read)\n";

/* ------------------------------------------------------------------------- */
/* Growable buffer                                                            */
/* ------------------------------------------------------------------------- */

typedef struct
{
  char  *data;
  size_t len;
  size_t cap;
  int    failed;
} Buf;

static void
buf_reserve (Buf   *b,
             size_t extra)
{
  char *grown;
  size_t cap;

  if (b->failed || b->len + extra + 1 <= b->cap)
    return;
  cap = b->cap == 0 ? 256 : b->cap;
  while (cap < b->len + extra + 1)
    cap *= 2;
  grown = realloc (b->data, cap);
  if (grown == NULL)
    {
      b->failed = 1;
      return;
    }
  b->data = grown;
  b->cap = cap;
}

static void
buf_add_len (Buf        *b,
             const char *s,
             size_t      n)
{
  buf_reserve (b, n);
  if (b->failed)
    return;
  memcpy (b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

static void
buf_add (Buf        *b,
         const char *s)
{
  buf_add_len (b, s, strlen (s));
}

static void
buf_printf (Buf        *b,
            const char *fmt,
            ...) __attribute__ ((format (printf, 2, 3)));

static void
buf_printf (Buf        *b,
            const char *fmt,
            ...)
{
  va_list args;
  int n;

  va_start (args, fmt);
  n = vsnprintf (NULL, 0, fmt, args);
  va_end (args);
  if (n < 0)
    {
      b->failed = 1;
      return;
    }
  buf_reserve (b, (size_t) n);
  if (b->failed)
    return;
  va_start (args, fmt);
  vsnprintf (b->data + b->len, (size_t) n + 1, fmt, args);
  va_end (args);
  b->len += (size_t) n;
}

static char *
buf_steal (Buf *b)
{
  char *s;

  if (b->failed)
    {
      free (b->data);
      return NULL;
    }
  if (b->data == NULL)
    return strdup ("");
  s = b->data;
  b->data = NULL;
  return s;
}

/* ------------------------------------------------------------------------- */
/* Compilation state                                                          */
/* ------------------------------------------------------------------------- */

typedef struct
{
  int64_t prec;
  int     deny;
  size_t  seq;
  char   *text;
} Line;

typedef struct
{
  const SbxSbplOptions *options;
  SbxSbplProfile       *out;
  Line                 *lines;
  size_t                n_lines;
  size_t                cap_lines;
  char                **metas;     /* ancestor spellings already emitted */
  size_t                n_metas;
  size_t                cap_metas;
  int                   oom;
} Compiler;

static int
is_printable_ascii (const char *s)
{
  for (const unsigned char *p = (const unsigned char *) s; *p != '\0'; p++)
    if (*p < 0x20 || *p > 0x7e)
      return 0;
  return 1;
}

static int
add_entry (Compiler   *c,
           const char *feature,
           uint32_t    status,
           const char *detail)
{
  SbxSbplProfile *p = c->out;
  SbxSbplEntry *grown = realloc (p->entries, (p->n_entries + 1) * sizeof *grown);

  if (grown == NULL)
    return c->oom = 1, 0;
  p->entries = grown;
  grown[p->n_entries].feature = strdup (feature);
  grown[p->n_entries].status = status;
  grown[p->n_entries].detail = detail != NULL ? strdup (detail) : NULL;
  if (grown[p->n_entries].feature == NULL || (detail != NULL && grown[p->n_entries].detail == NULL))
    {
      free (grown[p->n_entries].feature);
      free (grown[p->n_entries].detail);
      return c->oom = 1, 0;
    }
  p->n_entries++;
  return 1;
}

/* Appends the SBPL string for @path: a quoted literal when printable ASCII,
 * otherwise (param "SBX_Pn") with the raw bytes registered as parameter n
 * (one parameter per distinct value). */
static void
emit_string (Compiler   *c,
             Buf        *b,
             const char *path)
{
  SbxSbplProfile *p = c->out;
  size_t i;

  if (is_printable_ascii (path))
    {
      buf_add (b, "\"");
      for (const char *s = path; *s != '\0'; s++)
        {
          if (*s == '\\' || *s == '"')
            buf_add (b, "\\");
          buf_add_len (b, s, 1);
        }
      buf_add (b, "\"");
      return;
    }
  for (i = 0; i < p->n_params; i++)
    if (strcmp (p->param_values[i], path) == 0)
      break;
  if (i == p->n_params)
    {
      char key[32];
      char **keys = realloc (p->param_keys, (p->n_params + 1) * sizeof *keys);
      char **values;

      if (keys == NULL)
        {
          c->oom = 1;
          return;
        }
      p->param_keys = keys;
      values = realloc (p->param_values, (p->n_params + 1) * sizeof *values);
      if (values == NULL)
        {
          c->oom = 1;
          return;
        }
      p->param_values = values;
      snprintf (key, sizeof key, "SBX_P%zu", p->n_params);
      keys[p->n_params] = strdup (key);
      values[p->n_params] = strdup (path);
      if (keys[p->n_params] == NULL || values[p->n_params] == NULL)
        {
          free (keys[p->n_params]);
          free (values[p->n_params]);
          c->oom = 1;
          return;
        }
      p->n_params++;
    }
  buf_printf (b, "(param \"%s\")", p->param_keys[i]);
}

static void
add_line (Compiler *c,
          int64_t   prec,
          int       deny,
          char     *text)
{
  if (text == NULL)
    {
      c->oom = 1;
      return;
    }
  if (c->n_lines == c->cap_lines)
    {
      size_t cap = c->cap_lines == 0 ? 64 : c->cap_lines * 2;
      Line *grown = realloc (c->lines, cap * sizeof *grown);

      if (grown == NULL)
        {
          free (text);
          c->oom = 1;
          return;
        }
      c->lines = grown;
      c->cap_lines = cap;
    }
  c->lines[c->n_lines].prec = prec;
  c->lines[c->n_lines].deny = deny;
  c->lines[c->n_lines].seq = c->n_lines;
  c->lines[c->n_lines].text = text;
  c->n_lines++;
}

static int
compare_lines (const void *a,
               const void *b)
{
  const Line *x = a;
  const Line *y = b;

  if (x->prec != y->prec)
    return x->prec < y->prec ? -1 : 1;
  if (x->deny != y->deny)
    return x->deny - y->deny;
  return x->seq < y->seq ? -1 : x->seq > y->seq ? 1 : 0;
}

/* ------------------------------------------------------------------------- */
/* Paths                                                                      */
/* ------------------------------------------------------------------------- */

/* Does @path equal @prefix or lie beneath it? */
static int
has_prefix (const char *path,
            const char *prefix)
{
  size_t n = strlen (prefix);

  return strncmp (path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static const char *const private_dirs[] = { "/tmp", "/var", "/etc" };

/* The canonical lexical spelling: macOS's /tmp, /var and /etc are symlinks
 * into /private.  malloc'd. */
static char *
canonical_path (const char *path)
{
  for (size_t i = 0; i < sizeof private_dirs / sizeof private_dirs[0]; i++)
    if (has_prefix (path, private_dirs[i]))
      {
        char *out = malloc (strlen ("/private") + strlen (path) + 1);

        if (out != NULL)
          {
            strcpy (out, "/private");
            strcat (out, path);
          }
        return out;
      }
  return strdup (path);
}

/* The public spelling of a canonical /private/{tmp,var,etc} path, or NULL. */
static char *
public_alias (const char *canonical)
{
  for (size_t i = 0; i < sizeof private_dirs / sizeof private_dirs[0]; i++)
    {
      char prefix[32];

      snprintf (prefix, sizeof prefix, "/private%s", private_dirs[i]);
      if (has_prefix (canonical, prefix))
        return strdup (canonical + strlen ("/private"));
    }
  return NULL;
}

typedef struct
{
  char  *items[6];
  size_t n;
} Spellings;

static void
spellings_add (Spellings *s,
               char      *owned)
{
  if (owned == NULL)
    return;
  for (size_t i = 0; i < s->n; i++)
    if (strcmp (s->items[i], owned) == 0)
      {
        free (owned);
        return;
      }
  if (s->n == sizeof s->items / sizeof s->items[0])
    {
      free (owned);
      return;
    }
  s->items[s->n++] = owned;
}

static void
spellings_clear (Spellings *s)
{
  for (size_t i = 0; i < s->n; i++)
    free (s->items[i]);
  s->n = 0;
}

/* Every spelling a rule on @path must name: the canonical one first, its
 * public alias, and what the resolver (macOS: realpath) makes of it, with
 * that one's alias too.  Returns 0 on OOM. */
static int
path_spellings (Compiler   *c,
                const char *path,
                Spellings  *out)
{
  char *canonical = canonical_path (path);

  out->n = 0;
  if (canonical == NULL)
    return 0;
  spellings_add (out, canonical);
  spellings_add (out, public_alias (out->items[0]));
  if (c->options != NULL && c->options->resolve != NULL)
    {
      char *resolved = c->options->resolve (path, c->options->resolve_data);

      if (resolved != NULL && resolved[0] == '/')
        {
          char *resolved_canonical = canonical_path (resolved);

          if (resolved_canonical != NULL)
            {
              char *alias = public_alias (resolved_canonical);

              spellings_add (out, resolved_canonical);
              spellings_add (out, alias);
            }
        }
      free (resolved);
    }
  return 1;
}

static int64_t
precedence_of (const char *canonical,
               int         exact)
{
  size_t len = strcmp (canonical, "/") == 0 ? 1 : strlen (canonical);

  return (int64_t) len * 2 + (exact ? 1 : 0);
}

/* ------------------------------------------------------------------------- */
/* Filesystem forms                                                           */
/* ------------------------------------------------------------------------- */

static void
emit_form (Compiler        *c,
           int64_t          prec,
           int              deny,
           const char      *operation,
           const char      *selector,
           const Spellings *spellings)
{
  Buf b = { 0 };

  buf_printf (&b, "(%s %s", deny ? "deny" : "allow", operation);
  for (size_t i = 0; i < spellings->n; i++)
    {
      buf_printf (&b, " (%s ", selector);
      emit_string (c, &b, spellings->items[i]);
      buf_add (&b, ")");
    }
  buf_add (&b, ")");
  add_line (c, prec, deny, buf_steal (&b));
}

/* The operations one axis set stands for. */
static void
emit_axes (Compiler        *c,
           int64_t          prec,
           int              deny,
           uint32_t         axes,
           int              exact,
           const Spellings *spellings)
{
  const char *selector = exact ? "literal" : "subpath";

  if (axes & AX_READ)
    emit_form (c, prec, deny, "file-read*", selector, spellings);
  else if (axes & AX_META)
    emit_form (c, prec, deny, "file-read-metadata", selector, spellings);
  if (axes & AX_EXEC)
    emit_form (c, prec, deny, "process-exec*", selector, spellings);
  if (axes & (AX_EXEC | AX_MAP))
    emit_form (c, prec, deny, "file-map-executable", selector, spellings);
  if (axes & AX_WRITE)
    emit_form (c, prec, deny, "file-write*", selector, spellings);
}

/* Metadata of every proper ancestor (but "/") of every spelling of an
 * allowed path: lookups, getcwd and realpath stat them.  Emitted once per
 * ancestor spelling, as an exact rule of that ancestor: it loses to an exact
 * deny there (tie, deny wins) and wins over tree denies at or above it,
 * which the report states as a widening (metadata only, never contents). */
static void
emit_ancestors (Compiler        *c,
                const Spellings *spellings)
{
  for (size_t i = 0; i < spellings->n; i++)
    {
      const char *path = spellings->items[i];
      size_t len = strlen (path);

      for (size_t cut = len; cut > 1; cut--)
        {
          Spellings one = { { NULL }, 0 };
          char *ancestor;
          char *canonical;
          size_t k;

          if (path[cut - 1] != '/' || cut - 1 == 0)
            continue;
          ancestor = strndup (path, cut - 1);
          if (ancestor == NULL)
            {
              c->oom = 1;
              return;
            }
          for (k = 0; k < c->n_metas; k++)
            if (strcmp (c->metas[k], ancestor) == 0)
              break;
          if (k < c->n_metas)
            {
              free (ancestor);
              continue;
            }
          if (c->n_metas == c->cap_metas)
            {
              size_t cap = c->cap_metas == 0 ? 32 : c->cap_metas * 2;
              char **grown = realloc (c->metas, cap * sizeof *grown);

              if (grown == NULL)
                {
                  free (ancestor);
                  c->oom = 1;
                  return;
                }
              c->metas = grown;
              c->cap_metas = cap;
            }
          c->metas[c->n_metas++] = ancestor;
          canonical = canonical_path (ancestor);
          if (canonical == NULL)
            {
              c->oom = 1;
              return;
            }
          one.items[0] = ancestor;
          one.n = 1;
          emit_axes (c, precedence_of (canonical, 1), 0, AX_META, 1, &one);
          free (canonical);
        }
    }
}

/* One literal (non-glob) rule: its allow and deny forms under every
 * spelling, and the metadata of its ancestors when it allows anything. */
static int
emit_rule (Compiler   *c,
           const char *path,
           uint32_t    allow,
           uint32_t    deny,
           int         exact)
{
  Spellings spellings;
  int64_t prec;

  if (!path_spellings (c, path, &spellings))
    return c->oom = 1, 0;
  prec = precedence_of (spellings.items[0], exact);
  if (allow != 0)
    {
      emit_axes (c, prec, 0, allow, exact, &spellings);
      emit_ancestors (c, &spellings);
    }
  if (deny != 0)
    emit_axes (c, prec, 1, deny, exact, &spellings);
  spellings_clear (&spellings);
  return !c->oom;
}

/* ------------------------------------------------------------------------- */
/* Globs                                                                      */
/* ------------------------------------------------------------------------- */

/* Translates a glob of the IR grammar (sbx-policy-private.h) into an
 * anchored POSIX-style regex, or returns NULL when it cannot be written as a
 * #"..." literal (a '"', a byte outside printable ASCII, a class with other
 * than [A-Za-z0-9._-] members).  *malformed is set for a reversed range,
 * which the IR defines as matching every path on the deny side. */
static char *
glob_to_regex (const char *glob,
               int        *malformed)
{
  Buf b = { 0 };
  const char *p = glob;

  *malformed = 0;
  if (!is_printable_ascii (glob) || strchr (glob, '"') != NULL)
    return NULL;
  buf_add (&b, "^");
  while (*p != '\0')
    {
      if (p[0] == '*' && p[1] == '*')
        {
          buf_add (&b, ".*");
          p += 2;
        }
      else if (*p == '*')
        {
          buf_add (&b, "[^/]*");
          p++;
        }
      else if (*p == '?')
        {
          buf_add (&b, "[^/]");
          p++;
        }
      else if (*p == '[')
        {
          const char *q = p + 1;
          int negate = 0;
          const char *end;

          if (*q == '!' || *q == '^')
            {
              negate = 1;
              q++;
            }
          end = q;
          if (*end == ']')
            end++;
          while (*end != '\0' && *end != ']')
            end++;
          if (*end == '\0')
            {
              /* An unclosed '[' is a literal '['. */
              buf_add (&b, "\\[");
              p++;
              continue;
            }
          buf_add (&b, negate ? "[^/" : "[");
          for (const char *m = q; m < end; m++)
            {
              int ok = (*m >= 'a' && *m <= 'z') || (*m >= 'A' && *m <= 'Z')
                       || (*m >= '0' && *m <= '9') || *m == '.' || *m == '_'
                       || (*m == '-' && m > q && m + 1 < end);

              if (!ok)
                {
                  free (buf_steal (&b));
                  return NULL;
                }
              if (*m == '-' && m[-1] > m[1])
                *malformed = 1;
              buf_add_len (&b, m, 1);
            }
          buf_add (&b, "]");
          p = end + 1;
        }
      else
        {
          if (strchr (".^$+(){}|\\]", *p) != NULL)
            buf_add (&b, "\\");
          buf_add_len (&b, p, 1);
          p++;
        }
    }
  buf_add (&b, "$");
  return buf_steal (&b);
}

static const char *
axis_operations (uint32_t axis)
{
  switch (axis)
    {
    case AX_READ:  return "file-read*";
    case AX_EXEC:  return "process-exec*";
    case AX_WRITE: return "file-write*";
    default:       return NULL;
    }
}

static int
emit_glob_deny (Compiler          *c,
                const SbxFsRuleV1 *rule,
                uint32_t           deny)
{
  static const uint32_t axes[] = { AX_READ, AX_EXEC, AX_WRITE };
  int malformed = 0;
  char *regex = glob_to_regex (rule->path, &malformed);
  char detail[512];

  if (regex != NULL && !malformed)
    {
      for (size_t i = 0; i < 3; i++)
        if (deny & axes[i])
          {
            Buf b = { 0 };

            buf_printf (&b, "(deny %s (regex #\"%s\"))", axis_operations (axes[i]), regex);
            add_line (c, INT64_MAX, 1, buf_steal (&b));
            if (axes[i] == AX_EXEC)
              {
                Buf m = { 0 };

                buf_printf (&m, "(deny file-map-executable (regex #\"%s\"))", regex);
                add_line (c, INT64_MAX, 1, buf_steal (&m));
              }
          }
      free (regex);
      return !c->oom;
    }
  free (regex);

  /* Narrower fallback: deny the directory of the literal prefix (or
   * everything, for a malformed pattern, as the IR defines it). */
  {
    size_t n = strcspn (rule->path, "*?[");
    char *prefix = strndup (rule->path, n);
    char *slash;
    Spellings spellings;

    if (prefix == NULL)
      return c->oom = 1, 0;
    slash = strrchr (prefix, '/');
    if (malformed || slash == NULL || slash == prefix)
      strcpy (prefix, "/");
    else
      *slash = '\0';
    if (!path_spellings (c, prefix, &spellings))
      {
        free (prefix);
        return c->oom = 1, 0;
      }
    emit_axes (c, INT64_MAX, 1, deny, 0, &spellings);
    spellings_clear (&spellings);
    snprintf (detail, sizeof detail,
              "a glob deny that SBPL cannot express as a regex literal%s is enforced as a deny "
              "of the whole tree %s (narrower)",
              malformed ? " (malformed: a reversed range)" : "", prefix);
    free (prefix);
    add_entry (c, "glob-deny", SBX_ABI_REPORT_NARROWED, detail);
  }
  return !c->oom;
}

/* ------------------------------------------------------------------------- */
/* Entry point                                                                */
/* ------------------------------------------------------------------------- */

static void
set_err (char       *err,
         size_t      err_size,
         const char *fmt,
         ...) __attribute__ ((format (printf, 3, 4)));

static void
set_err (char       *err,
         size_t      err_size,
         const char *fmt,
         ...)
{
  va_list args;

  if (err == NULL || err_size == 0)
    return;
  va_start (args, fmt);
  vsnprintf (err, err_size, fmt, args);
  va_end (args);
}

static void
emit_network (Compiler             *c,
              Buf                  *b,
              const SbxNetPolicyV1 *net)
{
  char detail[256];

  buf_add (b, "; --- network ---\n");
  switch (net->mode)
    {
    case SBX_NET_MODE_OPEN:
      buf_add (b, "(allow network*)\n");
      add_entry (c, SBX_ABI_FEATURE_NETWORK, SBX_ABI_REPORT_UNENFORCED, "network allowed by the profile: host network");
      break;
    case SBX_NET_MODE_PROXY:
      buf_printf (b, "(allow network-outbound (remote tcp \"localhost:%u\"))\n", (unsigned) net->proxy_port);
      snprintf (detail, sizeof detail,
                "only TCP to the egress proxy on localhost:%u; SBPL's localhost also names the "
                "host's own interface addresses on that port", (unsigned) net->proxy_port);
      add_entry (c, SBX_ABI_FEATURE_NETWORK_BOUNDARY, SBX_ABI_REPORT_NARROWED, detail);
      break;
    case SBX_NET_MODE_PORTS:
      for (uint32_t i = 0; i < net->n_tcp_ports && net->tcp_ports != NULL; i++)
        buf_printf (b, "(allow network-outbound (remote tcp \"*:%u\"))\n", (unsigned) net->tcp_ports[i]);
      if (net->flags & SBX_NET_FLAG_DNS)
        buf_add (b, "(allow network-outbound (remote unix-socket (path-literal \"/private/var/run/mDNSResponder\")))\n");
      add_entry (c, SBX_ABI_FEATURE_NETWORK_BOUNDARY, SBX_ABI_REPORT_ENFORCED, "only the listed TCP destination ports");
      add_entry (c, SBX_ABI_FEATURE_ADDRESS_NETWORK, SBX_ABI_REPORT_UNENFORCED,
                 "SBPL cannot scope by address: an allowed port reaches every host, metadata addresses included");
      break;
    case SBX_NET_MODE_DENY:
    default:
      buf_add (b, "; no network: (deny default) covers network-outbound, network-bind and unix sockets\n");
      add_entry (c, SBX_ABI_FEATURE_NETWORK_BOUNDARY, SBX_ABI_REPORT_ENFORCED, "no network operation is allowed");
      break;
    }
}

/* The policy re-validated (defense in depth: the backend must not trust
 * the core's compiler); *net the network policy to compile. */
static int32_t
sbpl_check_policy (const SbxPolicyV1     *policy,
                   const SbxNetPolicyV1 **net,
                   char                  *err,
                   size_t                 err_size)
{
  static const SbxNetPolicyV1 deny_net = { sizeof (SbxNetPolicyV1), SBX_NET_MODE_DENY, 0, 0, NULL, 0, 0, 0 };

  if (policy == NULL || policy->struct_size < SBX_POLICY_V1_MIN_SIZE)
    {
      set_err (err, err_size, "darwin-seatbelt: policy table too small");
      return SBX_STATUS_INVALID;
    }
  if (policy->flags & SBX_POLICY_UNCONFINED)
    {
      set_err (err, err_size, "darwin-seatbelt: an Unconfined policy is for the unconfined backend");
      return SBX_STATUS_UNSUPPORTED;
    }
  if (policy->n_fs_rules > 0 && policy->fs_rules == NULL)
    {
      set_err (err, err_size, "darwin-seatbelt: policy has %u rules and no rule array", policy->n_fs_rules);
      return SBX_STATUS_INVALID;
    }
  *net = policy->net != NULL ? policy->net : &deny_net;
  if ((*net)->struct_size < SBX_NET_POLICY_V1_MIN_SIZE || (*net)->mode > SBX_NET_MODE_PROXY)
    {
      set_err (err, err_size, "darwin-seatbelt: network policy invalid (mode %u)", (*net)->mode);
      return SBX_STATUS_INVALID;
    }
  if ((*net)->mode == SBX_NET_MODE_PROXY && (*net)->proxy_port == 0)
    {
      set_err (err, err_size, "darwin-seatbelt: network mode proxy without a proxy port");
      return SBX_STATUS_INVALID;
    }
  for (uint32_t i = 0; i < policy->n_fs_rules; i++)
    {
      const SbxFsRuleV1 *rule = &policy->fs_rules[i];

      if (rule->struct_size < SBX_FS_RULE_V1_MIN_SIZE || rule->path == NULL)
        {
          set_err (err, err_size, "darwin-seatbelt: fs rule %u: table too small or no path", i);
          return SBX_STATUS_INVALID;
        }
      if (!(rule->flags & SBX_FS_RULE_GLOB) && rule->path[0] != '/')
        {
          set_err (err, err_size, "darwin-seatbelt: fs rule %u: path \"%.200s\" is not absolute", i,
                   is_printable_ascii (rule->path) ? rule->path : "(non-printable bytes)");
          return SBX_STATUS_INVALID;
        }
    }
  return SBX_STATUS_OK;
}

/* What the filesystem rules left for the report and the guarantees. */
typedef struct
{
  uint32_t denied_axes;
  size_t   n_globs;
  size_t   n_runtime_skipped;
} SbplFsSummary;

/* The filesystem lines: stat("/"), the macOS runtime closure, then the
 * policy's rules (the host's runtime closure left out). */
static void
sbpl_emit_fs (Compiler          *c,
              const SbxPolicyV1 *policy,
              SbplFsSummary     *sum)
{
  /* stat("/") (dyld, getcwd, realpath), as an exact rule of "/": it wins
   * over a deny of the tree "/" and loses to nothing more specific. */
  add_line (c, precedence_of ("/", 1), 0, strdup ("(allow file-read-metadata (literal \"/\"))"));

  /* The macOS runtime closure. */
  for (size_t i = 0; i < sizeof darwin_closure / sizeof darwin_closure[0]; i++)
    emit_rule (c, darwin_closure[i].path, darwin_closure[i].axes, 0,
               (darwin_closure[i].flags & ROW_EXACT) != 0);

  for (uint32_t i = 0; i < policy->n_fs_rules && !c->oom; i++)
    {
      const SbxFsRuleV1 *rule = &policy->fs_rules[i];
      uint32_t allow = rule->allow & SBX_FS_ALL;
      uint32_t deny = (rule->allow == 0 && rule->deny == 0) ? SBX_FS_ALL : (rule->deny & SBX_FS_ALL);

      /* The host's closure names the host's paths; macOS gets its own. */
      if (rule->origin == SBX_FS_ORIGIN_RUNTIME || rule->origin == SBX_FS_ORIGIN_DEVICE)
        {
          sum->n_runtime_skipped++;
          continue;
        }
      sum->denied_axes |= deny;
      if (rule->flags & SBX_FS_RULE_GLOB)
        {
          sum->n_globs++;
          if (allow != 0)
            add_entry (c, "glob-allow", SBX_ABI_REPORT_NARROWED,
                       "a glob allow is dropped (globs only ever deny)");
          if (deny != 0)
            emit_glob_deny (c, rule, deny);
          continue;
        }
      emit_rule (c, rule->path, allow, deny, (rule->flags & SBX_FS_RULE_EXACT) != 0);
    }
}

/* The profile text: the preamble, the mach services, the filesystem lines
 * in ascending precedence, the network. */
static void
sbpl_write (Compiler             *c,
            Buf                  *b,
            const SbxNetPolicyV1 *net)
{
  qsort (c->lines, c->n_lines, sizeof *c->lines, compare_lines);

  buf_add (b, PREAMBLE_HEAD);
  buf_add (b, "(allow mach-lookup");
  for (size_t i = 0; i < sizeof darwin_mach_services / sizeof darwin_mach_services[0]; i++)
    buf_printf (b, "\n  (global-name \"%s\")", darwin_mach_services[i]);
  buf_add (b, ")\n");
  buf_add (b, "; --- filesystem (ascending precedence; the last matching rule decides) ---\n");
  for (size_t i = 0; i < c->n_lines; i++)
    {
      buf_add (b, c->lines[i].text);
      buf_add (b, "\n");
    }
  emit_network (c, b, net);
}

/* The report entries of every profile. */
static void
sbpl_report (Compiler              *c,
             const SbxPolicyV1     *policy,
             const SbxSbplOptions  *options,
             const SbplFsSummary   *sum)
{
  char detail[512];
  Buf services = { 0 };

  add_entry (c, "sbpl-default", SBX_ABI_REPORT_ENFORCED,
             "(deny default); no unconditional file-read*, file-write* or process-exec* allow");
  add_entry (c, SBX_ABI_FEATURE_PROCESS_BOUNDARY, SBX_ABI_REPORT_ENFORCED,
             "Seatbelt applies to every descendant; signals and process-info only within the same sandbox");
  for (size_t i = 0; i < sizeof darwin_mach_services / sizeof darwin_mach_services[0]; i++)
    buf_printf (&services, "%s%s", i > 0 ? ", " : "", darwin_mach_services[i]);
  snprintf (detail, sizeof detail, "only %s", services.data != NULL ? services.data : "");
  free (buf_steal (&services));
  add_entry (c, "mach-lookup", SBX_ABI_REPORT_NARROWED, detail);
  add_entry (c, "sysctl-read", SBX_ABI_REPORT_WIDENED, "every sysctl is readable (uname, hw.ncpu, ...)");
  add_entry (c, "ancestor-metadata", SBX_ABI_REPORT_WIDENED,
             "file-read-metadata of \"/\" and of every ancestor of an allowed path (stat only, never contents)");
  snprintf (detail, sizeof detail,
            "the macOS runtime closure (%zu paths, least bits each) replaces the host's %zu closure rules",
            sizeof darwin_closure / sizeof darwin_closure[0], sum->n_runtime_skipped);
  add_entry (c, "runtime-closure", SBX_ABI_REPORT_WIDENED, detail);
  add_entry (c, "path-aliases", SBX_ABI_REPORT_ENFORCED,
             options != NULL && options->resolve != NULL
             ? "every rule names /private and public spellings and the resolved path"
             : "every rule names /private and public spellings (lexical; no resolver on this host)");
  if (c->out->n_params > 0)
    {
      snprintf (detail, sizeof detail, "%zu path(s) with bytes outside printable ASCII travel as "
                                       "sandbox parameters, never as profile text", c->out->n_params);
      add_entry (c, "path-parameters", SBX_ABI_REPORT_ENFORCED, detail);
    }
  if (sum->n_globs > 0)
    add_entry (c, "glob-deny", SBX_ABI_REPORT_ENFORCED, "glob denies are (regex ...) rules applied last");
  if (policy->limits != NULL && policy->limits->struct_size >= SBX_LIMITS_V1_MIN_SIZE
      && (policy->limits->max_processes != 0 || policy->limits->max_memory_bytes != 0
          || policy->limits->max_open_files != 0))
    add_entry (c, SBX_ABI_FEATURE_RESOURCE_LIMITS, SBX_ABI_REPORT_UNENFORCED,
               "Seatbelt has no sandbox-wide limits; this backend sets none");
}

/* The compiler's own lines and ancestor set (the profile is not freed). */
static void
compiler_clear (Compiler *c)
{
  for (size_t i = 0; i < c->n_lines; i++)
    free (c->lines[i].text);
  free (c->lines);
  for (size_t i = 0; i < c->n_metas; i++)
    free (c->metas[i]);
  free (c->metas);
}

int32_t
sbx_sbpl_compile (const SbxPolicyV1     *policy,
                  const SbxSbplOptions  *options,
                  SbxSbplProfile       **out,
                  char                  *err,
                  size_t                 err_size)
{
  Compiler c = { 0 };
  Buf b = { 0 };
  SbplFsSummary sum = { 0 };
  const SbxNetPolicyV1 *net = NULL;
  int32_t status;

  *out = NULL;
  status = sbpl_check_policy (policy, &net, err, err_size);
  if (status != SBX_STATUS_OK)
    return status;
  c.options = options;
  c.out = calloc (1, sizeof *c.out);
  if (c.out == NULL)
    {
      set_err (err, err_size, "darwin-seatbelt: out of memory");
      return SBX_STATUS_NO_MEMORY;
    }

  sbpl_emit_fs (&c, policy, &sum);
  if (!c.oom)
    sbpl_write (&c, &b, net);
  sbpl_report (&c, policy, options, &sum);
  compiler_clear (&c);
  if (c.oom || b.failed)
    {
      free (buf_steal (&b));
      sbx_sbpl_profile_free (c.out);
      set_err (err, err_size, "darwin-seatbelt: out of memory");
      return SBX_STATUS_NO_MEMORY;
    }

  c.out->text = buf_steal (&b);
  c.out->level = SBX_ABI_LEVEL_FULL;
  c.out->guarantees = SBX_ABI_GUARANTEE_PROCESS_BOUNDARY | SBX_ABI_GUARANTEE_ENV_SCRUB;
  if (sum.denied_axes & (SBX_FS_READ | SBX_FS_EXEC))
    c.out->guarantees |= SBX_ABI_GUARANTEE_READ_BOUNDARY;
  if (sum.denied_axes & SBX_FS_WRITE)
    c.out->guarantees |= SBX_ABI_GUARANTEE_WRITE_BOUNDARY;
  if (net->mode != SBX_NET_MODE_OPEN)
    c.out->guarantees |= SBX_ABI_GUARANTEE_NETWORK_BOUNDARY;
  if (net->mode == SBX_NET_MODE_PROXY)
    c.out->guarantees |= SBX_ABI_GUARANTEE_TARGET_NETWORK;
  *out = c.out;
  return SBX_STATUS_OK;
}

void
sbx_sbpl_profile_free (SbxSbplProfile *profile)
{
  if (profile == NULL)
    return;
  free (profile->text);
  for (size_t i = 0; i < profile->n_params; i++)
    {
      free (profile->param_keys[i]);
      free (profile->param_values[i]);
    }
  free (profile->param_keys);
  free (profile->param_values);
  for (size_t i = 0; i < profile->n_entries; i++)
    {
      free (profile->entries[i].feature);
      free (profile->entries[i].detail);
    }
  free (profile->entries);
  free (profile);
}

char *
sbx_sbpl_profile_describe (const SbxSbplProfile *profile)
{
  Buf b = { 0 };

  buf_add (&b, profile->text);
  if (profile->n_params > 0)
    buf_add (&b, "; --- parameters (passed to sandbox-exec -D, shown escaped) ---\n");
  for (size_t i = 0; i < profile->n_params; i++)
    {
      buf_printf (&b, "; %s = \"", profile->param_keys[i]);
      for (const unsigned char *p = (const unsigned char *) profile->param_values[i]; *p != '\0'; p++)
        {
          if (*p == '\\' || *p == '"')
            buf_printf (&b, "\\%c", *p);
          else if (*p == '\n')
            buf_add (&b, "\\n");
          else if (*p < 0x20 || *p > 0x7e)
            buf_printf (&b, "\\x%02x", *p);
          else
            buf_add_len (&b, (const char *) p, 1);
        }
      buf_add (&b, "\"\n");
    }
  return buf_steal (&b);
}
