"""wordpiece encode against google-research/bert's own tokenization.py (PyPI bert-tensorflow 1.0.4).

Every input line goes through both; outputs are compared line by line (files are split on '\n' only, so
U+2028, U+0085 and U+001C..U+001E inside a line stay inside it). Prints identical/total per input and
vocabulary, then asserts 100%. The only allowed differences are the `unicode15` lines, which hold characters
that Unicode 15.0 (our ICU 72) assigns and Python 3.11's Unicode 14.0 does not; those are printed and named:
Kawi U+11F00 (Mn: stripped when uncased) and U+11F43 (Po: split off), Egyptian format controls U+13439..F
(Cf: dropped), Arabic U+10EFD and Nag Mundari U+1E4EC (Mn: stripped). Python sees all of them as unassigned
(Cn) letters, so its words containing them become [UNK]. Every character 14.0 assigns is checked (every_char).

Differences between the packaged bert-tensorflow 1.0.4 and google-research/bert at HEAD (DESIGN.md 5), and
what this test does about them:
  * load_vocab: 1.0.4 keeps the FIRST line of a repeated token and numbers tokens densely (len(vocab));
    HEAD assigns vocab[token] = line index, so the LAST line wins and ids are line numbers. We follow HEAD,
    so the test replaces tokenization.load_vocab with the HEAD rule (the fixture vocabularies have no
    repeated token, so the real vocabularies load the same either way; the duplicate case is checked below).
  * 1.0.4 adds a --preserve_unused_tokens absl flag (default False, which is HEAD behaviour); absl needs its
    flags marked as parsed before the tokenizer reads it.
  * Chinese ranges, clean/whitespace/control/punctuation rules and WordPiece are the same as HEAD.
"""
import collections
import json
import os
import subprocess
import sys
import tempfile
import unicodedata

import hostile_lines
from compat_common import BIN, FIXTURES, require_fixtures, skip

WORDPIECE = os.path.join(BIN, "wordpiece")
require_fixtures()
if not os.access(WORDPIECE, os.X_OK):
    skip(f"no wordpiece binary at '{WORDPIECE}'")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
try:
    from absl import flags
    from bert import tokenization
    import six
except Exception as e:  # noqa: BLE001 - any import failure means the peer is not installed
    skip(f"cannot import bert.tokenization: {e}")

flags.FLAGS.mark_as_parsed()  # 1.0.4 reads FLAGS.preserve_unused_tokens (default False = HEAD behaviour)


def head_load_vocab(vocab_file):
    """google-research/bert HEAD: id = line number, a repeated token keeps its last line."""
    vocab = collections.OrderedDict()
    index = 0
    with tokenization.tf.io.gfile.GFile(vocab_file, "r") as reader:
        while True:
            token = tokenization.convert_to_unicode(reader.readline())
            if not token:
                break
            vocab[token.strip()] = index
            index += 1
    return vocab


packaged_load_vocab = tokenization.load_vocab
tokenization.load_vocab = head_load_vocab

VOCABS = {
    "uncased": (os.path.join(FIXTURES, "vocab/bert-base-uncased-vocab.txt"), False),
    "cased": (os.path.join(FIXTURES, "vocab/bert-base-cased-vocab.txt"), True),
    "chinese": (os.path.join(FIXTURES, "vocab/chinese_L-12_H-768_A-12-vocab.txt"), False),
}


def read_lines(path):
    with open(path, "rb") as f:
        data = f.read().decode("utf-8")
    lines = data.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def xquad_lines():
    with open(os.path.join(FIXTURES, "squad/xquad.en.json"), encoding="utf-8") as f:
        squad = json.load(f)
    out = []
    for article in squad["data"]:
        for paragraph in article["paragraphs"]:
            # '\n' and '\r' are whitespace to BERT; replacing them keeps one text per line.
            out.append(paragraph["context"].replace("\n", " ").replace("\r", " "))
            for qa in paragraph["qas"]:
                out.append(qa["question"].replace("\n", " ").replace("\r", " "))
    return out


def run_ours(lines, workdir, name, vocab, cased, fmt="tokens", threads=2):
    path = os.path.join(workdir, name + ".txt")
    with open(path, "wb") as f:
        f.write("".join(line + "\n" for line in lines).encode("utf-8"))
    cmd = [WORDPIECE, "encode", "-q", "--vocab", vocab, "--format", fmt, "--threads", str(threads), path]
    if cased:
        cmd.insert(3, "--cased")
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE).stdout.decode("utf-8").split("\n")
    assert out[-1] == "", "output does not end with a newline"
    return out[:-1]


def unicode15_chars(line):
    return sorted({c for c in line if unicodedata.category(c) == "Cn"})


def main():
    print(f"peer: bert-tensorflow {tokenization.__file__}; Python Unicode {unicodedata.unidata_version}")
    inputs = {
        "wiki_00": read_lines(os.path.join(FIXTURES, "wiki/mlperf-extracted/wiki_00")),
        "sample_text": read_lines(os.path.join(FIXTURES, "pretraining_text/sample_text.txt")),
        "xquad": xquad_lines(),
        "hostile": hostile_lines.hostile_lines(),
        "fuzz": hostile_lines.fuzz_lines(),
        "every_char": hostile_lines.every_char_lines(),
        "unicode15": hostile_lines.unicode15_lines(),
    }
    for split in ("train", "dev", "test"):
        inputs[f"mrpc_{split}"] = read_lines(os.path.join(FIXTURES, f"glue/MRPC/{split}.tsv"))
    inputs["cjk"] = hostile_lines.cjk_lines(VOCABS["chinese"][0])

    plan = [(name, v) for name in inputs if name != "cjk" for v in ("uncased", "cased")]
    plan += [("cjk", "chinese"), ("hostile", "chinese"), ("fuzz", "chinese"), ("xquad", "chinese")]

    tokenizers = {}
    failures = 0
    version_lines = 0
    with tempfile.TemporaryDirectory() as workdir:
        print(f"{'input':<12} {'vocab':<8} {'identical':>10} {'lines':>7}  note")
        for name, vocab_name in plan:
            vocab, cased = VOCABS[vocab_name]
            if vocab_name not in tokenizers:
                tokenizers[vocab_name] = tokenization.FullTokenizer(vocab, do_lower_case=not cased)
            google = tokenizers[vocab_name]
            lines = inputs[name]
            ours = run_ours(lines, workdir, f"{name}-{vocab_name}", vocab, cased)
            assert len(ours) == len(lines), f"{name}/{vocab_name}: {len(ours)} output lines for {len(lines)} input"
            same, explained, notes = 0, 0, []
            for number, (line, got) in enumerate(zip(lines, ours), 1):
                expected = " ".join(google.tokenize(line))
                if got == expected:
                    same += 1
                    continue
                # Only the dedicated Unicode 15.0 lines may differ; a difference anywhere else is a failure.
                new_chars = unicode15_chars(line) if name == "unicode15" else []
                if new_chars:
                    explained += 1
                    notes.append("Unicode 15.0-only " + " ".join(f"U+{ord(c):04X}" for c in new_chars))
                    print(f"  version difference {name}/{vocab_name} line {number}: google {expected!r} ours {got!r}")
                    continue
                failures += 1
                if failures <= 10:
                    print(f"MISMATCH {name}/{vocab_name} line {number}: {line[:200]!r}\n  google: {expected[:300]!r}"
                          f"\n  ours:   {got[:300]!r}")
            version_lines += explained
            note = f"{explained} differ by Unicode version: {'; '.join(sorted(set(notes)))}" if explained else ""
            print(f"{name:<12} {vocab_name:<8} {same:>10} {len(lines):>7}  {100.0 * same / max(1, len(lines)):.2f}% {note}")

        # ids: the same tokens through the vocabulary, with one thread this time.
        vocab, cased = VOCABS["uncased"]
        lines = inputs["wiki_00"] + inputs["hostile"]
        ours_ids = run_ours(lines, workdir, "ids", vocab, cased, fmt="ids", threads=1)
        google = tokenizers["uncased"]
        id_same = sum(
            got == " ".join(str(i) for i in google.convert_tokens_to_ids(google.tokenize(line)))
            for line, got in zip(lines, ours_ids))
        print(f"ids          uncased  {id_same:>10} {len(lines):>7}  {100.0 * id_same / len(lines):.2f}%")
        failures += len(lines) - id_same

        # A vocabulary with a repeated token and no trailing newline: HEAD ids (line numbers, last line wins).
        dup_vocab = os.path.join(workdir, "dup-vocab.txt")
        with open(dup_vocab, "w", encoding="utf-8") as f:
            f.write("[PAD]\n[UNK]\nhello\n##s\n  world \t\nhello\n,\n\u3000world\u00a0\nworld")
        dup_lines = ["Hello, worlds!", "hello hellos world"]
        head = tokenization.FullTokenizer(dup_vocab, do_lower_case=True)
        expected_ids = [" ".join(str(i) for i in head.convert_tokens_to_ids(head.tokenize(line))) for line in dup_lines]
        got_ids = run_ours(dup_lines, workdir, "dup", dup_vocab, False, fmt="ids")
        packaged = packaged_load_vocab(dup_vocab)
        print(f"repeated-token vocab: HEAD ids {expected_ids}, ours {got_ids} "
              f"(bert-tensorflow 1.0.4 would give 'hello'={packaged['hello']}, 'world'={packaged['world']})")
        failures += sum(a != b for a, b in zip(expected_ids, got_ids))

    print(f"lines differing only by Unicode 14.0 (Python) vs 15.0 (ICU 72) assignments: {version_lines}")
    if failures:
        print(f"FAILED: {failures} lines differ from google-research/bert")
        return 1
    print("all lines identical to google-research/bert tokenization")
    return 0


if __name__ == "__main__":
    sys.exit(main())
