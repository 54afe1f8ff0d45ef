"""bert-finetune features with a byte-level BPE tokenizer against HF tokenizers, the library RoBERTa's and
ModernBERT's fine-tuning scripts (transformers' run_glue.py, run_qa.py) make their inputs with.

Two tokenizers are learned here by `bpe train` on the fixtures' own text (MRPC train, the XQuAD contexts and
questions): RoBERTa's specials (template <s> A </s></s> B </s>) and BERT's ([CLS] A [SEP] B [SEP], as ModernBERT's).
For each:
- GLUE (MRPC dev and test, SST-2 dev; two max lengths): every record's input_ids are HF's
  `Tokenizer.encode(a, b)` with `enable_truncation(max_length, strategy="longest_first")`, padded with zeros;
  input_mask covers them; segment 1 starts at HF's first token of B's sequence (sequence_ids) and runs to the end.
- SQuAD (xquad.en.json, training features): the question is HF's encoding of question.lstrip() cut to
  max_query_length; the context is HF's encoding of the whole context; windows are run_squad.py's (doc_stride is
  the step between window starts) and each record is HF's post-processor applied to the question and the window
  (`post_processor.process`); answer positions follow run_qa.py's walk over HF's offsets (whitespace trimmed from
  them): the last piece starting at or before the answer's first character, the first piece ending at or after
  its end, and 0/0 for a window that does not hold both. Where a character is split into byte pieces, HF gives each
  piece the whole character's offsets and the walk would keep only part of it: the answer takes all of its pieces.
  Questions are in run_squad.py's shuffled order.
"""
import json
import os
import random
import subprocess
import sys
import tempfile

from compat_common import BIN, FIXTURES, Checks, require_fixtures, skip

require_fixtures()
try:
    import tensorflow as tf
    from tokenizers import Encoding, Tokenizer
except ImportError as e:
    skip(f"no tensorflow or tokenizers: {e}")

MRPC = os.path.join(FIXTURES, "glue", "MRPC")
SST2 = os.path.join(FIXTURES, "glue", "SST-2", "dev.tsv")
XQUAD = os.path.join(FIXTURES, "squad", "xquad.en.json")


def tool(*args):
    return subprocess.run([os.path.join(BIN, args[0]), *args[1:]], check=True, capture_output=True, text=True)


def records(path):
    out = []
    for raw in tf.data.TFRecordDataset(path):
        ex = tf.train.Example.FromString(raw.numpy())
        out.append({k: list(v.int64_list.value) for k, v in ex.features.feature.items()})
    return out


def training_text(tmp):
    lines = []
    for row in open(os.path.join(MRPC, "train.tsv"), encoding="utf-8").read().split("\n")[1:]:
        lines += row.split("\t")[3:5]
    for article in json.load(open(XQUAD, encoding="utf-8"))["data"]:
        for p in article["paragraphs"]:
            lines.append(p["context"].replace("\n", " "))
            lines += [q["question"] for q in p["qas"]]
    path = os.path.join(tmp, "text.txt")
    open(path, "w", encoding="utf-8").write("\n".join(lines) + "\n")
    return path


def glue_rows(path, columns):
    rows = [r.split("\t") for r in open(path, encoding="utf-8").read().split("\n")[1:] if r]
    return [(r[columns[0]], r[columns[1]] if len(columns) > 1 else "") for r in rows]


def check_glue(check, name, tok_path, task, path, columns, length, tmp):
    out = os.path.join(tmp, "glue.tfrecord")
    tool("bert-finetune", "features", "-q", "-f", "--task", task, "--tokenizer", tok_path, "--max-seq-length",
         str(length), "-o", out, path)
    hf = Tokenizer.from_file(tok_path)
    hf.enable_truncation(max_length=length, strategy="longest_first")
    got, bad = records(out), 0
    rows = glue_rows(path, columns)
    check(len(got) == len(rows), f"{name} {task} {os.path.basename(path)} L={length}: one record per row ({len(got)})")
    for rec, (a, b) in zip(got, rows):
        enc = hf.encode(a, b) if b else hf.encode(a)
        n = len(enc.ids)
        seq = enc.sequence_ids
        first_b = next((i for i, s in enumerate(seq) if s == 1), n) if b else n
        want_segments = [0] * first_b + [1] * (n - first_b) + [0] * (length - n)
        ok = (rec["input_ids"] == enc.ids + [0] * (length - n) and rec["input_mask"] == [1] * n + [0] * (length - n)
              and rec["segment_ids"] == want_segments)
        if not ok and bad < 2:
            print(f"  {name} {a[:60]!r}\n    ours {rec['input_ids'][:n + 2]}\n    HF   {enc.ids}")
        bad += not ok
    check(bad == 0, f"{name} {task} {os.path.basename(path)} L={length}: input_ids, input_mask, segment_ids are HF's "
                    f"({bad} of {len(got)} differ)")


def trimmed(context, offsets):
    out = []
    for b, e in offsets:
        while b < e and context[b] in " \t\n\r":
            b += 1
        while e > b and context[e - 1] in " \t\n\r":
            e -= 1
        out.append((b, e))
    return out


def doc_spans(n, max_tokens, stride):
    spans, start = [], 0
    while start < n:
        length = min(n - start, max_tokens)
        spans.append((start, length))
        if start + length == n:
            break
        start += min(length, stride)
    return spans


def window(enc, start, length):
    """The encoding of pieces [start, start + length) of `enc`, through HF's own truncation."""
    w = Encoding.merge([enc])
    w.truncate(start + length)
    w.truncate(length, direction="left")
    return w


def expected_squad(hf, L, stride, max_query):
    questions = []
    for article in json.load(open(XQUAD, encoding="utf-8"))["data"]:
        for p in article["paragraphs"]:
            for q in p["qas"]:
                questions.append((p["context"], q["question"], q["answers"][0]))
    random.Random(12345).shuffle(questions)  # run_squad.py's main
    specials = hf.post_processor.num_special_tokens_to_add(True)
    out, unheld = [], 0
    for context, question, answer in questions:
        q = hf.encode(question.lstrip(), add_special_tokens=False)
        q.truncate(max_query)
        c = hf.encode(context, add_special_tokens=False)
        offsets = trimmed(context, c.offsets)
        start_char = answer["answer_start"]
        end_char = start_char + len(answer["text"])
        tok_start = max([i for i, (b, _) in enumerate(offsets) if b <= start_char] or [0])
        tok_end = min([i for i, (_, e) in enumerate(offsets) if e >= end_char] or [len(offsets) - 1])
        # A character split into byte pieces gives each of them its whole span: the answer takes all of them.
        while tok_start > 0 and offsets[tok_start - 1] == offsets[tok_start]:
            tok_start -= 1
        while tok_end + 1 < len(offsets) and offsets[tok_end + 1] == offsets[tok_end]:
            tok_end += 1
        tok_end = max(tok_start, tok_end)
        held = False
        for start, length in doc_spans(len(c.ids), L - len(q.ids) - specials, stride):
            full = hf.post_processor.process(q, window(c, start, length), add_special_tokens=True)
            doc_offset = full.sequence_ids.index(1)
            if start <= tok_start and tok_end < start + length:
                positions = (tok_start - start + doc_offset, tok_end - start + doc_offset)
                held = True
            else:
                positions = (0, 0)
            out.append((full.ids, doc_offset, positions))
        unheld += not held
    return out, unheld, len(questions)


def check_squad(check, name, tok_path, L, stride, max_query, tmp):
    out = os.path.join(tmp, "squad.tfrecord")
    r = tool("bert-finetune", "features", "-f", "--task", "squad", "--train", "--tokenizer", tok_path,
             "--max-seq-length", str(L), "--doc-stride", str(stride), "--max-query-length", str(max_query), "-o", out,
             XQUAD)
    check(" 0 skipped" in r.stderr, f"{name} squad: no question skipped ({r.stderr.strip()[-120:]})")
    got = records(out)
    want, unheld, questions = expected_squad(Tokenizer.from_file(tok_path), L, stride, max_query)
    check(len(got) == len(want), f"{name} squad L={L} stride={stride}: {len(got)} features, HF's windows make {len(want)}")
    bad_ids = bad_pos = 0
    for rec, (ids, doc_offset, positions) in zip(got, want):
        n = len(ids)
        ids_ok = (rec["input_ids"] == ids + [0] * (L - n) and rec["input_mask"] == [1] * n + [0] * (L - n)
                  and rec["segment_ids"] == [0] * doc_offset + [1] * (n - doc_offset) + [0] * (L - n))
        pos_ok = (rec["start_positions"][0], rec["end_positions"][0]) == positions
        if not (ids_ok and pos_ok) and bad_ids + bad_pos < 2:
            print(f"  {name}: ours {rec['input_ids'][:n]} {rec['start_positions']} {rec['end_positions']}\n"
                  f"    HF   {ids} {positions}")
        bad_ids += not ids_ok
        bad_pos += not pos_ok
    check(bad_ids == 0, f"{name} squad L={L} stride={stride}: every record's ids are HF's template over its "
                        f"question and window ({bad_ids} of {len(got)} differ)")
    check(bad_pos == 0, f"{name} squad L={L} stride={stride}: answer positions by HF's offsets "
                        f"({bad_pos} of {len(got)} differ)")
    check(unheld < questions // 20, f"{name} squad L={L}: nearly every answer lies whole in a window "
                                    f"({questions - unheld} of {questions})")


def main():
    check = Checks()
    with tempfile.TemporaryDirectory() as tmp:
        text = training_text(tmp)
        for name, specials in (("roberta", "<s>,<pad>,</s>,<unk>,<mask>"), ("bert", "[CLS],[PAD],[SEP],[UNK],[MASK]")):
            tok_path = os.path.join(tmp, f"{name}.json")
            tool("bpe", "train", "-q", "--vocab-size", "2000", "--special-tokens", specials, "-o", tok_path, text)
            for length in (128, 40):
                check_glue(check, name, tok_path, "mrpc", os.path.join(MRPC, "dev.tsv"), (3, 4), length, tmp)
            check_glue(check, name, tok_path, "mrpc", os.path.join(MRPC, "test.tsv"), (3, 4), 64, tmp)
            check_glue(check, name, tok_path, "sst-2", SST2, (0,), 32, tmp)
            check_squad(check, name, tok_path, 192, 64, 24, tmp)
        check_squad(check, "roberta", os.path.join(tmp, "roberta.json"), 96, 32, 64, tmp)
    return check.exit_code("compat.bpe_finetune_features")


if __name__ == "__main__":
    sys.exit(main())
