#!/usr/bin/env bash
# demo/enwiki-demo.xml: well-formed, regenerated from demo/pages/, and shaped like a real pages-articles dump
# (checked by parsing it, independently of the generator).
source "$(dirname "$0")/lib.sh"
PY=${PYTHON:-python3}
[ -x "$PY" ] || PY=python3
XML="$SRC/demo/enwiki-demo.xml"

run "$PY" "$SRC/demo/make_corpus.py" --check
expect_rc 0 "demo/enwiki-demo.xml matches demo/pages/*.wiki (run demo/make_corpus.py after editing a page)"

run "$PY" - "$XML" <<'EOF'
import hashlib, sys, xml.etree.ElementTree as ET
NS = "{http://www.mediawiki.org/xml/export-0.10/}"
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == NS + "mediawiki" and root.get("version") == "0.10", root.tag
assert len(root.find(NS + "siteinfo").find(NS + "namespaces")) >= 20
pages = root.findall(NS + "page")
namespaces, redirects, articles, ids = set(), 0, 0, set()
for page in pages:
    title = page.find(NS + "title").text
    ns = int(page.find(NS + "ns").text)
    ids.add(page.find(NS + "id").text)
    namespaces.add(ns)
    rev = page.find(NS + "revision")
    text = rev.find(NS + "text")
    body = (text.text or "").encode("utf-8")
    assert int(text.get("bytes")) == len(body), title
    digest = int(hashlib.sha1(body).hexdigest(), 16)
    b36 = ""
    while digest:
        digest, d = divmod(digest, 36)
        b36 = "0123456789abcdefghijklmnopqrstuvwxyz"[d] + b36
    assert rev.find(NS + "sha1").text == b36.rjust(31, "0"), title
    assert rev.find(NS + "model").text == "wikitext" and rev.find(NS + "format").text == "text/x-wiki"
    if page.find(NS + "redirect") is not None:
        redirects += 1
        assert body.startswith(b"#REDIRECT [["), title
    elif ns == 0:
        articles += 1
assert len(ids) == len(pages), "page ids must be unique"
assert {0, 1, 4, 10, 14} <= namespaces, namespaces
assert redirects >= 1 and articles >= 30, (redirects, articles)
all_text = "".join(p.find(NS + "revision").find(NS + "text").text for p in pages)
for feature in ("{{Infobox", "{{convert|", "{{#if:", "{| class=\"wikitable\"", "<ref name=", "<ref>", "<math>",
                "[[File:", "[[Category:", "[[de:", "&nbsp;", "&ndash;", "<!--", "'''", "''", "== ", "=== ",
                "\n* ", "\n# ", "[http", "{{disambiguation"):
    assert feature in all_text, feature
print(f"{len(pages)} pages, {articles} articles, {redirects} redirects, namespaces {sorted(namespaces)}")
EOF
expect_rc 0 "the demo dump has the structure and markup of a real one"
echo "demo corpus: $OUT"
finish
