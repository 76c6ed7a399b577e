#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Turns a guide of docs/ into a gi-docgen content page.

    gi-docgen-page.py INPUT.md OUTPUT.md

gi-docgen takes a page's title from a "Title:" metadata line; the guides
are plain Markdown read on their own too, so the title is their first
"# " heading.  Links between guides (other.md, other.md#anchor) point at
the generated other.html.
"""
import re
import sys


def main():
    source, output = sys.argv[1], sys.argv[2]
    with open(source, encoding="utf-8") as f:
        text = f.read()
    match = re.search(r"^# (.+)$", text, re.MULTILINE)
    if match is None:
        sys.exit(f"{source}: no '# ' heading to take the page title from")
    title = match.group(1).replace("`", "")
    text = re.sub(r"\]\(([A-Za-z0-9_-]+)\.md(#[^)]*)?\)", r"](\1.html\2)", text)
    with open(output, "w", encoding="utf-8") as f:
        f.write(f"Title: {title}\n\n{text}")


if __name__ == "__main__":
    main()
