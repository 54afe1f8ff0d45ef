"""wiki-clean against WikiExtractor 3.1.0 (PyPI `wikiextractor`) on a real enwiki pages-articles dump.

Both tools run here on the same dump. Reported per article common to both outputs (matched by page id):
bag-of-words precision (share of our words found in theirs), recall (share of theirs found in ours) and F1,
then micro-averaged over all articles. Words are lower-cased runs of letters and digits, so punctuation and
WikiExtractor's habit of turning ''italics'' into "quotes" do not count. The tools differ by design (we drop
lists, headings and reference sections; WikiExtractor keeps headings), hence a floor, not equality.
Also checks: zero markup remnants in our output, the expected article count, --threads independence.
"""
import collections
import json
import os
import re
import subprocess
import sys

from compat_common import BIN, FIXTURES, skip

DUMP = os.path.join(FIXTURES, "wiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
F1_FLOOR = 0.85
REMNANTS = ["{{", "}}", "[[", "]]", "{|", "|}", "<ref", "</ref", "&amp;", "&lt;", "&gt;", "&quot;", "&nbsp;"]
WORD = re.compile(r"[^\W_]+", re.UNICODE)


def wikiextractor_articles():
    try:
        import wikiextractor  # noqa: F401
    except ImportError:
        skip("wikiextractor is not installed in " + sys.executable)
    run = subprocess.run([sys.executable, "-m", "wikiextractor.WikiExtractor", DUMP, "-o", "-", "--json",
                          "--processes", "1", "-q"], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit("WikiExtractor failed: " + run.stderr[-2000:])
    articles = {}
    for line in run.stdout.splitlines():
        if line.strip():
            record = json.loads(line)
            articles[record["id"]] = record
    return articles


def our_articles(extra=()):
    tool = os.path.join(BIN, "wiki-clean") if BIN else "wiki-clean"
    run = subprocess.run([tool, "--format", "jsonl", "-q", *extra, DUMP], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit("wiki-clean failed: " + run.stderr)
    return run.stdout, {r["id"]: r for r in map(json.loads, run.stdout.splitlines())}


def words(text):
    return collections.Counter(w.lower() for w in WORD.findall(text))


def main():
    if not os.path.exists(DUMP):
        skip("fixture missing: " + DUMP)
    theirs = wikiextractor_articles()
    raw, ours = our_articles()
    failures = []

    remnants = {r: raw.count(r) for r in REMNANTS}
    print("markup remnants in wiki-clean output:", remnants, "total", sum(remnants.values()))
    if sum(remnants.values()):
        failures.append("markup remnants left: %s" % remnants)

    # WikiExtractor keeps disambiguation pages and list-only pages (as a title); we drop them.
    print("articles: wiki-clean %d, WikiExtractor %d" % (len(ours), len(theirs)))
    _, with_dab = our_articles(["--keep-disambiguation"])
    print("articles with --keep-disambiguation: %d" % len(with_dab))
    missing = sorted(set(ours) - set(theirs))
    if missing:
        failures.append("articles WikiExtractor does not have: %s" % missing)
    if not 95 <= len(ours) <= 106 or len(with_dab) < len(ours):
        failures.append("unexpected article counts %d / %d" % (len(ours), len(with_dab)))

    common = sorted(set(ours) & set(theirs), key=int)
    tp = ours_total = theirs_total = 0
    per_article = []
    for pid in common:
        a, b = words(ours[pid]["text"]), words(theirs[pid]["text"])
        # WikiExtractor's text starts with nothing extra in --json mode; the title is a separate field.
        overlap = sum((a & b).values())
        tp += overlap
        ours_total += sum(a.values())
        theirs_total += sum(b.values())
        p = overlap / max(1, sum(a.values()))
        r = overlap / max(1, sum(b.values()))
        per_article.append((2 * p * r / (p + r) if p + r else 0.0, ours[pid]["title"], p, r))
        if ours[pid]["title"] != theirs[pid]["title"]:
            failures.append("title differs for id %s: %r vs %r" % (pid, ours[pid]["title"], theirs[pid]["title"]))
    precision = tp / max(1, ours_total)
    recall = tp / max(1, theirs_total)
    f1 = 2 * precision * recall / (precision + recall)
    per_article.sort()
    print("common articles: %d; words: wiki-clean %d, WikiExtractor %d" % (len(common), ours_total, theirs_total))
    print("word agreement: precision %.4f (our words found in theirs), recall %.4f (theirs found in ours), "
          "F1 %.4f" % (precision, recall, f1))
    print("mean per-article F1 %.4f; lowest:" % (sum(x[0] for x in per_article) / max(1, len(per_article))))
    for f, title, p, r in per_article[:5]:
        print("  %.3f (P %.3f R %.3f) %s" % (f, p, r, title))
    if f1 < F1_FLOOR:
        failures.append("word F1 %.4f below the floor %.2f" % (f1, F1_FLOOR))

    raw4, _ = our_articles(["--threads", "4"])
    if raw4 != raw:
        failures.append("--threads 4 output differs from --threads 1")

    if failures:
        print("FAIL:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
