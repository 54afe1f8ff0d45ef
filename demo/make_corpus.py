#!/usr/bin/env python3
"""Builds demo/enwiki-demo.xml, the small MediaWiki export the demo pipeline starts from.

The pages are written by hand in demo/pages/*.wiki (original prose about invented places, people and machines,
marked up the way real Wikipedia articles are). Each file is a header of `key: value` lines, a line `---`, then the
page's wikitext exactly as an editor would type it. This script wraps them in the XML of a `pages-articles` dump
(export schema 0.10): siteinfo with the namespace table, one <page> per file in file-name order, XML escaping,
the `bytes` attribute and the base-36 SHA-1 that MediaWiki computes over the wikitext.

Header keys: title (required), ns (default 0), redirect (target title), timestamp, user or ip, comment, minor.
Everything is derived from the files, so the output is byte-for-byte reproducible:

    python3 demo/make_corpus.py            # rewrites demo/enwiki-demo.xml
    python3 demo/make_corpus.py --check    # exits 1 if the committed XML is stale

The demo itself never runs Python; the generated XML is committed next to this script.
"""

import hashlib
import pathlib
import sys
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape, quoteattr

HERE = pathlib.Path(__file__).resolve().parent
PAGES = HERE / "pages"
OUTPUT = HERE / "enwiki-demo.xml"

NAMESPACES = [
    (-2, "Media"), (-1, "Special"), (0, ""), (1, "Talk"), (2, "User"), (3, "User talk"), (4, "Wikipedia"),
    (5, "Wikipedia talk"), (6, "File"), (7, "File talk"), (8, "MediaWiki"), (9, "MediaWiki talk"),
    (10, "Template"), (11, "Template talk"), (12, "Help"), (13, "Help talk"), (14, "Category"),
    (15, "Category talk"), (100, "Portal"), (101, "Portal talk"), (118, "Draft"), (119, "Draft talk"),
    (828, "Module"), (829, "Module talk"),
]

HEADER = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" \
xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
xsi:schemaLocation="http://www.mediawiki.org/xml/export-0.10/ http://www.mediawiki.org/xml/export-0.10.xsd" \
version="0.10" xml:lang="en">
  <siteinfo>
    <sitename>Wikipedia</sitename>
    <dbname>enwiki</dbname>
    <base>https://en.wikipedia.org/wiki/Main_Page</base>
    <generator>MediaWiki 1.36.0-wmf.4</generator>
    <case>first-letter</case>
    <namespaces>
"""


def sha1_base36(text: bytes) -> str:
    """MediaWiki's revision checksum: SHA-1 of the wikitext as a 31-digit base-36 number."""
    value = int(hashlib.sha1(text).hexdigest(), 16)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while value:
        value, d = divmod(value, 36)
        out = digits[d] + out
    return out.rjust(31, "0")


def parse_page(path: pathlib.Path) -> dict:
    raw = path.read_text(encoding="utf-8")
    head, sep, body = raw.partition("\n---\n")
    if not sep:
        sys.exit(f"{path}: no '---' line between header and wikitext")
    page = {"ns": "0", "timestamp": "2020-06-01T12:00:00Z", "comment": ""}
    for number, line in enumerate(head.splitlines(), 1):
        key, colon, value = line.partition(":")
        if not colon:
            sys.exit(f"{path}:{number}: expected 'key: value'")
        page[key.strip()] = value.strip()
    if "title" not in page:
        sys.exit(f"{path}: no title")
    page["text"] = body.rstrip("\n")  # MediaWiki stores the text without trailing newlines
    return page


def render(pages: list) -> str:
    out = [HEADER]
    for key, name in NAMESPACES:
        if name:
            out.append(f'      <namespace key="{key}" case="first-letter">{escape(name)}</namespace>\n')
        else:
            out.append(f'      <namespace key="{key}" case="first-letter" />\n')
    out.append("    </namespaces>\n  </siteinfo>\n")
    for index, page in enumerate(pages):
        page_id = 1000 + 37 * index
        rev_id = 960000000 + 7919 * index
        text = page["text"].encode("utf-8")
        out.append("  <page>\n")
        out.append(f"    <title>{escape(page['title'])}</title>\n")
        out.append(f"    <ns>{page['ns']}</ns>\n")
        out.append(f"    <id>{page_id}</id>\n")
        if "redirect" in page:
            out.append(f"    <redirect title={quoteattr(page['redirect'])} />\n")
        out.append("    <revision>\n")
        out.append(f"      <id>{rev_id}</id>\n")
        out.append(f"      <parentid>{rev_id - 104729}</parentid>\n")
        out.append(f"      <timestamp>{page['timestamp']}</timestamp>\n")
        out.append("      <contributor>\n")
        if "ip" in page:
            out.append(f"        <ip>{escape(page['ip'])}</ip>\n")
        else:
            user = page.get("user", "Demo Editor")
            out.append(f"        <username>{escape(user)}</username>\n")
            out.append(f"        <id>{40000 + sum(user.encode()) * 13}</id>\n")
        out.append("      </contributor>\n")
        if "minor" in page:
            out.append("      <minor />\n")
        if page["comment"]:
            out.append(f"      <comment>{escape(page['comment'])}</comment>\n")
        out.append("      <model>wikitext</model>\n")
        out.append("      <format>text/x-wiki</format>\n")
        out.append(f'      <text bytes="{len(text)}" xml:space="preserve">{escape(page["text"])}</text>\n')
        out.append(f"      <sha1>{sha1_base36(text)}</sha1>\n")
        out.append("    </revision>\n  </page>\n")
    out.append("</mediawiki>\n")
    return "".join(out)


def main() -> int:
    pages = [parse_page(p) for p in sorted(PAGES.glob("*.wiki"))]
    xml = render(pages)
    ET.fromstring(xml.encode("utf-8"))  # must be well-formed; raises ParseError otherwise
    if "--check" in sys.argv[1:]:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != xml:
            print(f"{OUTPUT} is stale; run {sys.argv[0]}", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(xml, encoding="utf-8")
    articles = sum(1 for p in pages if p["ns"] == "0" and "redirect" not in p)
    print(f"{OUTPUT.name}: {len(pages)} pages, {articles} articles, {len(xml.encode())} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
