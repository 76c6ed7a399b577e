#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Second pass of scripts/check-format.sh over what uncrustify wrote.

The house style puts a space between every pair of back-to-back parentheses,
as in a function type, and after a cast: `void (*done) (Conn *c)`,
`(void (*) (void)) fn`.
uncrustify 0.72 (Debian 12) does so where it recognises a function type, but
where it takes the second parenthesis for an indirect call (a member of an
anonymous typedef struct, a parameter, a cast) (and after a cast to such a
type) it removes the space whatever the configuration says (`sp_cparen_oparen` only governs that case from 0.73
on).  This pass puts the space back and moves the continuation lines that
uncrustify aligned under a parenthesis of that line by the same column, so
that the result is what a newer uncrustify makes of the same uncrustify.cfg.

It also puts a string literal that continues a concatenation on the next
line under the literal that began it, as the tree writes them
(`"a regular file "` / `"with one link"` under each other, also after a `?`
or a format macro); uncrustify 0.72 can only align it under the open
parenthesis, or under the last literal of the line above.

Reads C on stdin and writes it on stdout, or rewrites each FILE given.  String and character literals,
comments and preprocessor lines are left as they are.
"""
import re
import sys

OPENERS = "([{"
CLOSERS = ")]}"
TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|[A-Za-z_][A-Za-z0-9_]*|\S')


def chain_column(line):
    """Column of the string literal that starts the concatenation a line ends
    with ("a" "b" MACRO "c"), or -1 when the line does not end with one."""
    tokens = [(m.group(0), m.start()) for m in TOKEN.finditer(line)]
    col = -1
    for text, start in reversed(tokens):
        if text.startswith('"'):
            col = start
        elif re.fullmatch(r"[A-Z_][A-Z0-9_]*", text):
            continue
        else:
            break
    return col


def fix(text):
    out = []
    stack = []          # one delta (columns added before it) per open bracket
    in_comment = False
    continued_pp = False
    for line in text.split("\n"):
        stripped = line.lstrip(" ")
        # A continuation line aligned under the innermost open bracket moves
        # with it.
        shift = 0
        if stack and not in_comment and not continued_pp and stripped and not stripped.startswith("#"):
            shift = stack[-1]
        if shift:
            line = " " * shift + line
        # A string literal continued on the next line goes under the string
        # that began it (uncrustify puts it under the open parenthesis).
        if (stripped.startswith('"') and not in_comment and not continued_pp and out
                and not out[-1].lstrip().startswith("#")):
            col = chain_column(out[-1])
            if col >= 0:
                line = " " * col + stripped
        is_pp = continued_pp or stripped.startswith("#")
        continued_pp = is_pp and line.endswith("\\")
        if is_pp:
            out.append(line)
            continue
        res = []
        added = shift
        i = 0
        n = len(line)
        while i < n:
            c = line[i]
            if in_comment:
                end = line.find("*/", i)
                if end < 0:
                    res.append(line[i:])
                    i = n
                else:
                    res.append(line[i:end + 2])
                    i = end + 2
                    in_comment = False
                continue
            if line.startswith("/*", i):
                in_comment = True
                res.append("/*")
                i += 2
                continue
            if line.startswith("//", i):
                res.append(line[i:])
                break
            if c in "\"'":
                j = i + 1
                while j < n and line[j] != c:
                    j += 2 if line[j] == "\\" else 1
                res.append(line[i:j + 1])
                i = j + 1
                continue
            if i > 0 and line[i - 1] == ")" and (c == "(" or c.isalnum() or c == "_"):
                res.append(" ")
                added += 1
            if c in OPENERS:
                stack.append(added)
            elif c in CLOSERS and stack:
                stack.pop()
            res.append(c)
            i += 1
        out.append("".join(res))
    return "\n".join(out)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        # FILE...: rewrite each in place.
        for path in sys.argv[1:]:
            with open(path, encoding="utf-8", newline="") as f:
                text = f.read()
            fixed = fix(text)
            if fixed != text:
                with open(path, "w", encoding="utf-8", newline="") as f:
                    f.write(fixed)
    else:
        sys.stdout.write(fix(sys.stdin.read()))
