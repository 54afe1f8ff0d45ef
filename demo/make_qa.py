#!/usr/bin/env python3
"""Builds demo/qa-demo.json and demo/qa-demo-dev.json, a small SQuAD v1.1 question-answering set about the demo corpus.

The questions and their answers are written by hand in demo/qa.txt (its header describes the format). Each answer is
marked inside a phrase that occurs exactly once in the corpus text; the paragraph holding that phrase is the
question's context, exactly as `wiki-clean` prints it for demo/enwiki-demo.xml (its default text format: one
paragraph per line, a blank line after each article), and answer_start is the offset in code points of the marked
occurrence in that paragraph. Questions marked "(dev)" go to qa-demo-dev.json, the others to qa-demo.json. In both,
articles come in corpus order, paragraphs in article order and questions in the order of demo/qa.txt.

The script reads wiki-clean's output instead of running it, so that it needs no built tools:

    build/tools/wiki-clean -q demo/enwiki-demo.xml > /tmp/clean.txt
    python3 demo/make_qa.py /tmp/clean.txt             # rewrites demo/qa-demo.json and demo/qa-demo-dev.json
    python3 demo/make_qa.py --check /tmp/clean.txt     # exits 1 if either committed file is stale

Run it again after editing demo/qa.txt or a page of the corpus (then demo/make_corpus.py first). An answer that the
text no longer holds, a phrase found twice or in another article, or a duplicate id is reported with its line in
demo/qa.txt, and nothing is written.
"""

import argparse
import json
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
SOURCE = HERE / "qa.txt"
TRAIN = HERE / "qa-demo.json"
DEV = HERE / "qa-demo-dev.json"

QUESTION = re.compile(r"Q (demo-\d{3})( \(dev\))?: (\S.*\?)$")
PHRASE = re.compile(r"A: ([^\[\]]*)\[([^\[\]]+)\]([^\[\]]*)$")


class SourceError(Exception):
    pass


def read_articles(path: pathlib.Path) -> list:
    """wiki-clean's text output -> [[paragraph, ...], ...], one list per article."""
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines[-1] != "":
        raise SourceError(f"{path}: does not end with a newline; is it wiki-clean's text output?")
    articles, current = [], []
    for line in lines[:-1]:
        if line:
            current.append(line)
        elif current:
            articles.append(current)
            current = []
    if current:
        articles.append(current)
    if not articles:
        raise SourceError(f"{path}: no articles")
    return articles


def read_source(path: pathlib.Path) -> list:
    """demo/qa.txt -> [(title, lead, [question, ...]), ...]; a question is a dict with its line number."""
    articles, pending = [], None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        where = f"{path.name}:{number}"
        if not line.strip() or line.startswith("#"):
            continue
        if pending is not None and not line.startswith("A: "):
            raise SourceError(f"{where}: expected 'A: ...' after the question on line {pending['line']}")
        if line.startswith("= "):
            title, _, lead = line[2:].partition(" | ")
            articles.append((title.strip(), lead.strip(), []))
        elif line.startswith("Q "):
            match = QUESTION.match(line)
            if not match:
                raise SourceError(f"{where}: expected 'Q demo-NNN: QUESTION?' or 'Q demo-NNN (dev): QUESTION?'")
            if not articles:
                raise SourceError(f"{where}: a question before the first '= TITLE' line")
            pending = {"line": number, "id": match[1], "dev": bool(match[2]), "question": match[3]}
            articles[-1][2].append(pending)
        elif line.startswith("A: ") and pending is not None:
            match = PHRASE.match(line)
            if not match:
                raise SourceError(f"{where}: expected 'A: PHRASE' with the answer marked once as [answer]")
            before, answer, after = match[1], match[2], match[3]
            if answer != answer.strip() or not 1 <= len(answer.split()) <= 5:
                raise SourceError(f"{where}: an answer is 1-5 words without surrounding spaces: [{answer}]")
            pending.update(before=before, answer=answer, phrase=before + answer + after)
            pending = None
        else:
            raise SourceError(f"{where}: expected '= TITLE', 'Q ...' or 'A: ...'")
    if pending is not None:
        raise SourceError(f"{path.name}:{pending['line']}: the question has no 'A: ...' line")
    return articles


def find_article(corpus: list, title: str, lead: str) -> int:
    """The article whose first paragraph opens with the title (or LEAD), as in "[The ]TITLE is" or "TITLE (..."."""
    name = lead or title
    opening = re.compile(rf"(?:The |A )?{re.escape(name)} (?:\(|[a-z])")
    found = [i for i, paragraphs in enumerate(corpus) if opening.match(paragraphs[0])]
    if len(found) != 1:
        raise SourceError(f"{len(found)} articles open with '{name}', expected 1")
    return found[0]


def build(corpus: list, source: list) -> tuple:
    """Returns (train, dev) as SQuAD v1.1 objects."""
    ids, located = set(), []  # located: (article index, paragraph index, title, question, answer_start)
    for title, lead, questions in source:
        try:
            article = find_article(corpus, title, lead)
        except SourceError as e:
            raise SourceError(f"{SOURCE.name}: article '{title}': {e}") from None
        for q in questions:
            where = f"{SOURCE.name}:{q['line']}"
            if q["id"] in ids:
                raise SourceError(f"{where}: duplicate id {q['id']}")
            ids.add(q["id"])
            hits = [(a, p, text.find(q["phrase"])) for a, paragraphs in enumerate(corpus)
                    for p, text in enumerate(paragraphs) if q["phrase"] in text]
            if len(hits) != 1 or corpus[hits[0][0]][hits[0][1]].count(q["phrase"]) != 1:
                count = sum(corpus[a][p].count(q["phrase"]) for a, p, _ in hits)
                raise SourceError(f"{where}: the phrase occurs {count} times in the corpus text, expected once: "
                                  f"{q['phrase']!r}")
            a, p, offset = hits[0]
            if a != article:
                raise SourceError(f"{where}: the phrase is in another article than '{title}'")
            located.append((a, p, title, q, offset + len(q["before"])))

    sets = ({"version": "1.1", "data": []}, {"version": "1.1", "data": []})
    for a, p, title, q, start in sorted(located, key=lambda x: (x[0], x[1])):  # stable: qa.txt order within one
        data = sets[q["dev"]]["data"]
        if not data or data[-1]["title"] != title:
            data.append({"title": title, "paragraphs": []})
        paragraphs = data[-1]["paragraphs"]
        context = corpus[a][p]
        if not paragraphs or paragraphs[-1]["context"] != context:
            paragraphs.append({"context": context, "qas": []})
        assert context[start:start + len(q["answer"])] == q["answer"]
        paragraphs[-1]["qas"].append({"id": q["id"], "question": q["question"],
                                      "answers": [{"text": q["answer"], "answer_start": start}]})
    return sets


def render(squad: dict) -> str:
    return json.dumps(squad, ensure_ascii=False, indent=1) + "\n"


def summary(squad: dict) -> str:
    questions = sum(len(p["qas"]) for article in squad["data"] for p in article["paragraphs"])
    paragraphs = sum(len(article["paragraphs"]) for article in squad["data"])
    return f"{questions} questions on {paragraphs} paragraphs of {len(squad['data'])} articles"


def main() -> int:
    parser = argparse.ArgumentParser(description="Writes demo/qa-demo.json and demo/qa-demo-dev.json from "
                                                 "demo/qa.txt and wiki-clean's output for demo/enwiki-demo.xml.")
    parser.add_argument("clean", metavar="CLEAN.txt", help="output of `wiki-clean demo/enwiki-demo.xml`")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a committed file is stale")
    args = parser.parse_args()
    try:
        train, dev = build(read_articles(pathlib.Path(args.clean)), read_source(SOURCE))
    except (SourceError, OSError, UnicodeDecodeError) as e:
        print(f"make_qa.py: error: {e}", file=sys.stderr)
        return 1
    outputs = [(TRAIN, render(train)), (DEV, render(dev))]
    if args.check:
        stale = [path for path, text in outputs
                 if not path.exists() or path.read_text(encoding="utf-8") != text]
        for path in stale:
            print(f"{path} is stale; run {sys.argv[0]} CLEAN.txt", file=sys.stderr)
        return 1 if stale else 0
    for path, text in outputs:
        path.write_text(text, encoding="utf-8")
    print(f"{TRAIN.name}: {summary(train)}; {DEV.name}: {summary(dev)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
