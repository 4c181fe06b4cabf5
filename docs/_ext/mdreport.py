"""Markdown to reStructuredText for the subset ``paper_checks/report.py`` writes.

Headings (``#`` to ``####``), pipe tables (a header row, a ``|---|`` rule, ``\\|`` escaped
bars), bullet items with two-space continuation lines, paragraphs, inline code spans and
bold. Everything else in the text is escaped, so no character of a claim's statement can turn
into reStructuredText markup.
"""

from __future__ import annotations

import re

UNDERLINES = "=-~^"
_INLINE = re.compile(r"\*\*`([^`]+)`\*\*|`([^`]+)`|\*\*([^*]+)\*\*")
_SPECIAL = re.compile(r"([\\*`|_<>\[\]:])")


def escape(text: str) -> str:
    """Plain text with every character reStructuredText could read as markup escaped."""
    return _SPECIAL.sub(r"\\\1", text)


def inline(text: str) -> str:
    """Convert code spans (``**`x`**`` too) and bold; escape the rest."""
    out, pos = [], 0
    for m in _INLINE.finditer(text):
        out.append(escape(text[pos:m.start()]))
        code = m.group(1) or m.group(2)
        if code is not None and code.strip() == code:
            token = f":code:`{code.replace('`', '')}`"
        elif code is not None:
            token = escape(code)
        else:
            token = f"**{escape(m.group(3))}**"
        # Inline markup must be delimited by non-word characters: "\ " is an empty separator.
        before = "\\ " if m.start() > 0 and text[m.start() - 1].isalnum() else ""
        after = "\\ " if m.end() < len(text) and text[m.end()].isalnum() else ""
        out.append(before + token + after)
        pos = m.end()
    out.append(escape(text[pos:]))
    return "".join(out)


def _cells(line: str) -> list:
    cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [c.strip().replace("\\|", "|") for c in cells]


def convert(markdown: str) -> list:
    """The reStructuredText lines of ``markdown``."""
    lines = markdown.splitlines()
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        head = re.match(r"^(#{1,4}) (.*)$", line)
        if head:
            title = inline(head.group(2).strip())
            out += [title, UNDERLINES[len(head.group(1)) - 1] * max(len(title), 4), ""]
            i += 1
        elif line.startswith("|") and i + 1 < len(lines) and re.match(r"^\|[-| :]+\|$",
                                                                          lines[i + 1]):
            header = _cells(line)
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(_cells(lines[i]))
                i += 1
            out += [".. list-table::", "   :header-rows: 1", ""]
            for row in [header] + rows:
                out.append(f"   * - {inline(row[0])}")
                out += [f"     - {inline(c)}" for c in row[1:]]
            out.append("")
        elif line.startswith("- "):
            item = [line[2:]]
            i += 1
            while i < len(lines) and lines[i].startswith("  ") and lines[i].strip():
                item.append(lines[i].strip())
                i += 1
            out.append("- " + inline(item[0]))
            out += ["  " + inline(c) for c in item[1:]]
            if i < len(lines) and not lines[i].startswith("- "):
                out.append("")
        elif not line.strip():
            out.append("")
            i += 1
        else:
            out.append(inline(line.strip()))
            i += 1
    return out + [""]


def section(markdown: str, title: str) -> str:
    """The body of the ``## title`` section of ``markdown`` (up to the next ``##``)."""
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", markdown, re.S | re.M)
    if m is None:
        raise ValueError(f"no section '## {title}'")
    return m.group(1)
