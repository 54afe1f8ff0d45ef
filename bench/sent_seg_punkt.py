#!/usr/bin/env python3
"""Helper of bench/sent_seg.sh: times sent-seg --threads 1 and NLTK punkt on the same paragraphs.

sent-seg is timed as a whole process (start-up, reading, segmenting, writing a file). punkt is timed inside one
Python process from the moment its model is loaded: reading the same file, segmenting every paragraph, writing
the same one-sentence-per-line format. Each side's best of --runs runs is reported.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "compat"))
from test_sent_seg import punkt_tokenizer, read_wikiextractor  # noqa: E402  (one preprocessing, one peer setup)


def punkt_segment_file(tokenizer, source, target):
    with open(source, encoding="utf-8") as f, open(target, "w", encoding="utf-8") as out:
        in_doc = False
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                if in_doc:
                    out.write("\n")
                in_doc = False
                continue
            in_doc = True
            for sentence in tokenizer.tokenize(line):
                out.write(sentence + "\n")


def best_of(runs, fn):
    best = None
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    return best


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("wiki")
    parser.add_argument("--sent-seg", required=True)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    docs = read_wikiextractor(args.wiki)
    block = "".join("\n".join(doc) + "\n\n" for doc in docs)
    tokenizer = punkt_tokenizer()
    with tempfile.TemporaryDirectory() as tmp:
        text = os.path.join(tmp, "paragraphs.txt")
        with open(text, "w", encoding="utf-8") as f:
            f.write(block * args.repeat)
        size = os.path.getsize(text)
        ours_out, punkt_out = os.path.join(tmp, "ours.txt"), os.path.join(tmp, "punkt.txt")
        ours = best_of(args.runs, lambda: subprocess.run(
            [args.sent_seg, "-q", "-f", "--threads", "1", text, "-o", ours_out], check=True))
        theirs = best_of(args.runs, lambda: punkt_segment_file(tokenizer, text, punkt_out))
        ours_lines = sum(1 for line in open(ours_out, encoding="utf-8") if line.strip())
        punkt_lines = sum(1 for line in open(punkt_out, encoding="utf-8") if line.strip())

    mb = size / 1e6
    print(f"input: wiki_00 paragraphs x{args.repeat} = {mb:.1f} MB, {len(docs) * args.repeat} documents; "
          f"best of {args.runs} runs; {os.cpu_count()} CPUs")
    print(f"sent-seg --threads 1 : {ours:8.3f} s  {mb / ours:8.1f} MB/s  ({ours_lines} sentences)")
    print(f"nltk punkt (1 proc)  : {theirs:8.3f} s  {mb / theirs:8.1f} MB/s  ({punkt_lines} sentences)")
    print(f"ratio (punkt time / sent-seg time): {theirs / ours:.1f}x  (target >= 20x)")


if __name__ == "__main__":
    main()
