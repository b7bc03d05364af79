"""Every link into a section of a doc (``results.md#exploiters``) names a heading that exists.

tests/test_docs.py checks that a linked file exists; this checks the part after ``#``, which
breaks silently when a section is renamed or moved (docs/results.md is reorganised by policy).
Anchors are GitHub's: the heading lower-cased, punctuation dropped, spaces as hyphens, a repeated
heading numbered ``-1``, ``-2``.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)#\s]*)#([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*$")


def anchors(text: str) -> set[str]:
    found, seen, fenced = set(), {}, False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        match = None if fenced else HEADING.match(line)
        if match:
            slug = re.sub(r"[^\w\- ]", "", match[1].lower()).replace(" ", "-")
            found.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
            seen[slug] = seen.get(slug, 0) + 1
    return found


def test_every_section_link_names_a_heading():
    broken = []
    for page in PAGES:
        for target, anchor in LINK.findall(page.read_text()):
            linked = (page.parent / target) if target else page
            if linked.suffix == ".md" and linked.is_file() and anchor not in anchors(linked.read_text()):
                broken.append(f"{page.relative_to(ROOT)} -> {target}#{anchor}")
    assert not broken, broken


def test_anchors_are_githubs():
    text = "# Results\n## The crowd's champion: `champion-mixture` (PSRO 3)\n## Speed\n### Speed\n```\n# not one\n```\n"
    assert anchors(text) == {"results", "the-crowds-champion-champion-mixture-psro-3", "speed", "speed-1"}
