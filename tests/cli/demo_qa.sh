#!/usr/bin/env bash
# demo/qa-demo.json and demo/qa-demo-dev.json: regenerated from demo/qa.txt and today's wiki-clean output for the demo
# dump, and valid SQuAD v1.1 whose every answer is where answer_start says (checked independently of the generator).
source "$(dirname "$0")/lib.sh"
PY=${PYTHON:-python3}
[ -x "$PY" ] || PY=python3

run wiki-clean -q -o "$TMP/clean.txt" "$SRC/demo/enwiki-demo.xml"
expect_rc 0 "wiki-clean on the demo dump"

run "$PY" "$SRC/demo/make_qa.py" --check "$TMP/clean.txt"
expect_rc 0 "demo/qa-demo*.json match demo/qa.txt and wiki-clean's output (run demo/make_qa.py after editing either)"

# Counts: 53 questions about 21 articles; 45 for training, 8 held out.
run "$PY" - "$TMP/clean.txt" "$SRC/demo/qa-demo.json" "$SRC/demo/qa-demo-dev.json" <<'EOF'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
paragraphs = {line for line in lines if line}
ids, titles, counts = set(), set(), []
for path in sys.argv[2:]:
    with open(path, encoding="utf-8") as f:
        squad = json.load(f)
    assert set(squad) == {"version", "data"} and squad["version"] == "1.1", path
    count = 0
    for article in squad["data"]:
        titles.add(article["title"])
        for paragraph in article["paragraphs"]:
            context = paragraph["context"]
            assert context in paragraphs, f"{path}: a context that is not a line of wiki-clean's output: {context[:60]!r}"
            assert paragraph["qas"], path
            for qa in paragraph["qas"]:
                assert qa["id"] not in ids, f"{path}: duplicate id {qa['id']}"
                ids.add(qa["id"])
                assert qa["question"].endswith("?"), qa["id"]
                [answer] = qa["answers"]
                text, start = answer["text"], answer["answer_start"]
                assert context[start:start + len(text)] == text, \
                    f"{path}: {qa['id']}: answer_start {start} points at {context[start:start + len(text)]!r}, not {text!r}"
                assert 1 <= len(text.split()) <= 5, qa["id"]
                count += 1
    counts.append(count)
assert counts == [45, 8], f"questions (train, dev): {counts}, expected [45, 8]"
assert len(titles) == 21, f"{len(titles)} articles, expected 21"
print(f"{sum(counts)} questions ({counts[0]} train, {counts[1]} dev) about {len(titles)} articles")
EOF
expect_rc 0 "every answer is at its answer_start in a paragraph of the corpus; ids unique; counts as stated"
expect_out "53 questions (45 train, 8 dev) about 21 articles" "the QA set's size"
echo "demo QA: $OUT"
finish
