"""bert-finetune features against google-research/bert's run_squad.py and run_classifier.py.

The reference is the scripts themselves (PyPI bert-tensorflow 1.0.4), run in this process:
- SQuAD: run_squad.read_squad_examples, then (for training) random.Random(12345).shuffle as run_squad.py's main
  does, then run_squad.convert_examples_to_features writing through run_squad.FeatureWriter. On xquad.en.json
  (SQuAD v1.1) with several max_seq_length / doc_stride / max_query_length, both vocabularies, with and without
  training; on a v2.0 file made here from it (every fourth question impossible: is_impossible true, no answers);
  and on a small hostile file written here (leading whitespace and answers starting in it, U+202F, NBSP,
  zero-width characters, CJK, accents, answers that cannot be found again, a context of whitespace only).
- GLUE: the processors' _read_tsv and _create_examples (CoLA, MNLI, MRPC), then
  run_classifier.file_based_convert_examples_to_features. On MRPC train/dev/test and SST-2 dev, both vocabularies,
  two max lengths; on small files in each other task's layout made here from MRPC rows; on a hostile MRPC file
  ('\\r\\n' and stray '\\r', an empty or control-only second text, long texts). The fixture
  tfrecord/mrpc-run_classifier/train.tf_record (run_classifier.py on MRPC train, uncased vocab, do_lower_case,
  max_seq_length 128) must be reproduced record by record.
Records are parsed by TensorFlow on both sides and compared one by one in order: feature names, kinds and values.

Google has no processor for SST-2, STS-B, QQP, QNLI, RTE, WNLI (nor MNLI mismatched): for those the test holds
the column rules of HF transformers' glue.py processors (transformers 4.x; transformers 5 in the venv no longer
ships them), written below, and hands their examples to Google's conversion. STS-B's label is a float: its records
are the reference's conversion with label_ids replaced by float(label) as a float feature.

The shim (what this test changes in the reference's environment, nothing in its feature code):
- the packaged modeling.py imports tensorflow.contrib (gone from TensorFlow 2): a stub module stands in for it;
  modeling is never used by the feature code;
- run_squad.py and run_classifier.py define the same absl flags (bert_config_file, vocab_file, ...), which absl
  refuses twice: run_squad's flags are removed before run_classifier is imported, and version_2_with_negative,
  the one flag the feature code reads, is defined again; the flags are then marked parsed.
The 1.0.4 scripts already use tf.compat.v1 (tf.gfile, tf.python_io.TFRecordWriter, tf.logging), which TensorFlow
2 still has, so their feature code runs unchanged.

Difference between bert-tensorflow 1.0.4 and google-research/bert HEAD found here: the feature code of
run_squad.py and run_classifier.py is the same (only TensorFlow API names differ); 1.0.4's tokenization.py
load_vocab numbers the distinct tokens densely, a repeated token keeping the id of its first line (HEAD: every
line is an id, a repeated token takes its last line's, which bertkit follows), and it has the
preserve_unused_tokens flag (default off, the HEAD behaviour). The fixture vocabularies repeat no token, so the
ids agree; the test checks that.
Besides the records, the counts of our summary line (examples, features, skipped questions or rows) must be the
reference's.
"""
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import types

from compat_common import BIN, FIXTURES, make_squad2, require_fixtures, skip

BERT_FINETUNE = os.path.join(BIN, "bert-finetune")
require_fixtures()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
try:
    import tensorflow as tf
    from absl import flags

    # Shim 1: modeling.py's `from tensorflow.contrib import layers`.
    contrib = types.ModuleType("tensorflow.contrib")
    contrib.layers = types.ModuleType("tensorflow.contrib.layers")
    sys.modules.setdefault("tensorflow.contrib", contrib)
    sys.modules.setdefault("tensorflow.contrib.layers", contrib.layers)
    from bert import run_squad, tokenization

    # Shim 2: the two scripts' flags.
    for flag in list(flags.FLAGS.flags_by_module_dict().get(run_squad.__name__, [])):
        delattr(flags.FLAGS, flag.name)
    from bert import run_classifier
    if "version_2_with_negative" not in flags.FLAGS:
        flags.DEFINE_bool("version_2_with_negative", False, "run_squad.py's flag")
    flags.FLAGS.mark_as_parsed()
except Exception as e:  # noqa: BLE001 - the peer is not installed
    skip(f"cannot import the reference: {e}")

UNCASED = f"{FIXTURES}/vocab/bert-base-uncased-vocab.txt"
CASED = f"{FIXTURES}/vocab/bert-base-cased-vocab.txt"
XQUAD = f"{FIXTURES}/squad/xquad.en.json"
MRPC = f"{FIXTURES}/glue/MRPC"
SST2_DEV = f"{FIXTURES}/glue/SST-2/dev.tsv"
MRPC_FIXTURE = f"{FIXTURES}/tfrecord/mrpc-run_classifier/train.tf_record"


def parse_records(path):
    """Each record as {feature: (kind, values)}, parsed by TensorFlow."""
    out = []
    for raw in tf.data.TFRecordDataset(path):
        ex = tf.train.Example.FromString(raw.numpy())
        record = {}
        for name, feature in ex.features.feature.items():
            kind = feature.WhichOneof("kind")
            record[name] = (kind, list(getattr(feature, kind).value))
        out.append(record)
    return out


def run_ours(args, out):
    """Runs bert-finetune features; returns the counts of its summary line (examples, features, skipped)."""
    done = subprocess.run([BERT_FINETUNE, "features", "-f", "-o", out] + args, check=True, capture_output=True,
                          text=True)
    m = re.search(r"(\d+) examples, (\d+) features, (\d+) skipped", done.stderr)
    assert m, f"no summary line in: {done.stderr}"
    return tuple(int(x) for x in m.groups())


class Results:
    def __init__(self):
        self.ok = True
        self.rows = []

    def compare(self, name, ours_path, ref_path, minimum=1):
        ours, ref = parse_records(ours_path), parse_records(ref_path)
        same = sum(a == b for a, b in zip(ours, ref))
        first = next((i for i, (a, b) in enumerate(zip(ours, ref)) if a != b), None)
        print(f"{name}: reference {len(ref)} records, ours {len(ours)}, identical {same}/{len(ref)}"
              + (f" (first difference at record {first})" if first is not None else ""))
        if first is not None:
            for key in sorted(set(ours[first]) | set(ref[first])):
                if ours[first].get(key) != ref[first].get(key):
                    print(f"  {key}: ours {ours[first].get(key)}\n  {' ' * len(key)}  ref  {ref[first].get(key)}")
        good = len(ref) >= minimum and len(ours) == len(ref) and same == len(ref)
        self.ok &= good
        self.rows.append((name, same, len(ref)))
        return good


# ---------------------------------------------------------------- SQuAD

def squad_reference(path, out, vocab, lower, seq, stride, query, training, v2):
    """Returns (examples, features, questions skipped), as our summary line counts them."""
    flags.FLAGS.version_2_with_negative = v2
    tokenizer = tokenization.FullTokenizer(vocab_file=vocab, do_lower_case=lower)
    examples = run_squad.read_squad_examples(input_file=path, is_training=training)
    questions = sum(len(p["qas"]) for e in json.load(open(path, encoding="utf-8"))["data"] for p in e["paragraphs"])
    if training:
        random.Random(12345).shuffle(examples)  # run_squad.py's main, before the features
    writer = run_squad.FeatureWriter(filename=out, is_training=training)
    run_squad.convert_examples_to_features(examples=examples, tokenizer=tokenizer, max_seq_length=seq,
                                           doc_stride=stride, max_query_length=query, is_training=training,
                                           output_fn=writer.process_feature)
    writer.close()
    return len(examples), writer.num_features, questions - len(examples)


def make_hostile_squad(out):
    def qa(qid, question, text, start):
        return {"id": qid, "question": question, "answers": [{"text": text, "answer_start": start}]}
    lead = "  \u202fLeading words here. Tabs\there and\u00a0nbsp, caf\u00e9 \u039f\u0394\u039f\u03a3 \u4e2d\u6587\u5b57 x\u200by end."
    long_text = " ".join(f"word{i % 37} ({i})," if i % 11 == 0 else f"tok{i}" for i in range(420))
    zero = "\u200b\u200b first \u200b second\u00ad third"
    paragraphs = [
        {"context": lead, "qas": [
            qa("ws-only", "What is at the start?", "  \u202f", 0),
            qa("ws-then-word", "Which word leads?", "Leading", 0),
            qa("nbsp", "What follows and?", "nbsp,", lead.index("nbsp")),
            qa("partial", "Which cafe?", "caf", lead.index("caf")),
            qa("cjk", "Which characters?", "\u4e2d\u6587", lead.index("\u4e2d")),
            qa("spaces", "What about tabs?", "Tabs  here", lead.index("Tabs")),
            qa("missing", "Not there?", "zzz", lead.index("caf")),
            qa("greek", "Which ΟΔΟΣ road?" * 6, "\u039f\u0394\u039f\u03a3", lead.index("\u039f")),
            qa("last", "Last word?", "end.", lead.index("end.")),
        ]},
        {"context": long_text, "qas": [
            qa(f"long-{k}", f"Where is token {k}?", f"tok{k}", long_text.index(f"tok{k} ")) for k in range(1, 419, 29) if k % 11
        ] + [qa("long-paren", "Which number?", "22", long_text.index("(22)") + 1)]},
        {"context": zero, "qas": [qa("zero-width", "Which is second?", "second", zero.index("second")),
                                  qa("soft-hyphen", "Which third?", "third", zero.index("third"))]},
        {"context": "   ", "qas": [qa("empty-context", "Anything?", "abc", 0)]},
    ]
    json.dump({"version": "1.1", "data": [{"title": "hostile", "paragraphs": paragraphs}]},
              open(out, "w", encoding="utf-8"), ensure_ascii=False)


def squad_cases(results, tmp):
    squad2 = f"{tmp}/xquad-v2.json"
    make_squad2(XQUAD, squad2)
    hostile = f"{tmp}/hostile.json"
    make_hostile_squad(hostile)
    cases = [
        # name, file, task, vocab, lower, (L, S, Q) or None for the defaults, train
        ("xquad uncased defaults", XQUAD, "squad", UNCASED, True, None, False),
        ("xquad uncased defaults --train", XQUAD, "squad", UNCASED, True, None, True),
        ("xquad cased L=128 S=32 Q=16", XQUAD, "squad", CASED, False, (128, 32, 16), False),
        ("xquad cased L=128 S=32 Q=16 --train", XQUAD, "squad", CASED, False, (128, 32, 16), True),
        ("xquad uncased L=64 S=16 Q=8 --train", XQUAD, "squad", UNCASED, True, (64, 16, 8), True),
        ("xquad uncased L=200 S=64 Q=30", XQUAD, "squad", UNCASED, True, (200, 64, 30), False),
        ("xquad cased L=512 S=256 Q=64 --train", XQUAD, "squad", CASED, False, (512, 256, 64), True),
        ("squad2 uncased defaults --train", squad2, "squad2", UNCASED, True, None, True),
        ("squad2 uncased L=128 S=48 Q=32", squad2, "squad2", UNCASED, True, (128, 48, 32), False),
        ("squad2 cased L=96 S=24 Q=20 --train", squad2, "squad2", CASED, False, (96, 24, 20), True),
        ("hostile uncased --train", hostile, "squad", UNCASED, True, None, True),
        ("hostile cased L=32 S=4 Q=8 --train", hostile, "squad", CASED, False, (32, 4, 8), True),
        ("hostile uncased L=32 S=8 Q=8", hostile, "squad", UNCASED, True, (32, 8, 8), False),
        ("hostile squad2-read uncased L=48 S=5 Q=12", hostile, "squad2", UNCASED, True, (48, 5, 12), False),
    ]
    for name, path, task, vocab, lower, lengths, training in cases:
        seq, stride, query = lengths or (384, 128, 64)  # run_squad.py's defaults
        ref, mine = f"{tmp}/ref.tfrecord", f"{tmp}/ours.tfrecord"
        counts = squad_reference(path, ref, vocab, lower, seq, stride, query, training, task == "squad2")
        args = ["--task", task, "--vocab", vocab]
        if lengths:
            args += ["--max-seq-length", str(seq), "--doc-stride", str(stride), "--max-query-length", str(query)]
        if not lower:
            args.append("--cased")
        if training:
            args.append("--train")
        ours = run_ours(args + [path], mine)
        results.compare(f"squad {name}", mine, ref)
        print(f"  examples, features, skipped questions: reference {counts}, ours {ours}")
        results.ok &= counts == ours


# ---------------------------------------------------------------- GLUE

class HfProcessor(run_classifier.DataProcessor):
    """The column rules of HF transformers' glue.py processors (transformers 4.x), for the tasks Google has no
    processor for. Reading stays the reference's _read_tsv."""

    def __init__(self, task, set_type):
        self.task, self.set_type = task, set_type

    def get_labels(self):
        return {"sst-2": ["0", "1"], "qqp": ["0", "1"], "wnli": ["0", "1"], "sts-b": [None],
                "qnli": ["entailment", "not_entailment"], "rte": ["entailment", "not_entailment"]}[self.task]

    def create_examples(self, lines):
        task, set_type, test = self.task, self.set_type, self.set_type.startswith("test")
        examples = []
        for i, line in enumerate(lines):
            if i == 0:
                continue
            if task == "sst-2":
                guid, a, b, label = f"{set_type}-{i}", line[1 if test else 0], None, None if test else line[1]
            elif task == "sts-b":
                guid, a, b, label = f"{set_type}-{line[0]}", line[7], line[8], None if test else line[-1]
            elif task == "qqp":
                guid = f"{set_type}-{line[0]}"
                try:
                    a, b, label = line[1 if test else 3], line[2 if test else 4], None if test else line[5]
                except IndexError:
                    continue
            else:  # qnli, rte, wnli
                guid, a, b, label = f"{set_type}-{line[0]}", line[1], line[2], None if test else line[-1]
            examples.append(run_classifier.InputExample(guid=guid, text_a=a, text_b=b, label=label))
        return examples


def glue_examples(task, path, set_type):
    lines = run_classifier.DataProcessor._read_tsv(path)
    google = {"cola": run_classifier.ColaProcessor, "mnli": run_classifier.MnliProcessor,
              "mrpc": run_classifier.MrpcProcessor}
    if task in google:
        processor = google[task]()
        return processor, processor._create_examples(lines, set_type)
    processor = HfProcessor(task, set_type)
    return processor, processor.create_examples(lines)


def glue_reference(task, path, out, vocab, lower, seq, set_type):
    tokenizer = tokenization.FullTokenizer(vocab_file=vocab, do_lower_case=lower)
    processor, examples = glue_examples(task, path, set_type)
    if set_type.startswith("test"):  # HF's test examples have no label; ours (like Google's) get label id 0
        for e in examples:
            e.label = e.label if task in ("cola", "mnli", "mrpc") else processor.get_labels()[0]
    if task != "sts-b":
        run_classifier.file_based_convert_examples_to_features(examples, processor.get_labels(), seq, tokenizer, out)
        return len(examples)
    # STS-B: Google's conversion with a label list that accepts every score, then label_ids as float(label).
    values = [0.0 if e.label is None else float(e.label) for e in examples]
    labels = sorted({e.label for e in examples}, key=str)
    with tf.io.TFRecordWriter(out) as writer:
        for i, (e, value) in enumerate(zip(examples, values)):
            f = run_classifier.convert_single_example(i, e, labels, seq, tokenizer)
            ints = lambda v: tf.train.Feature(int64_list=tf.train.Int64List(value=v))  # noqa: E731
            feature = {"input_ids": ints(f.input_ids), "input_mask": ints(f.input_mask),
                       "segment_ids": ints(f.segment_ids),
                       "label_ids": tf.train.Feature(float_list=tf.train.FloatList(value=[value])),
                       "is_real_example": ints([1])}
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
    return len(examples)


def make_glue_files(tmp):
    """Small files in each task's official layout, made from MRPC rows (texts) with labels cycled."""
    rows = [r.rstrip("\n").split("\t") for r in open(f"{MRPC}/dev.tsv", encoding="utf-8-sig")][1:121]
    files = {}

    def write(name, header, lines):
        path = f"{tmp}/{name}"
        with open(path, "w", encoding="utf-8") as f:
            if header is not None:
                f.write("\t".join(header) + "\n")
            for line in lines:
                f.write("\t".join(line) + "\n")
        return path

    files["cola-train"] = write("cola/train.tsv", None,
                                [["gj04", str(i % 2), "" if i % 2 else "*", r[3]] for i, r in enumerate(rows)])
    files["cola-test"] = write("cola/test.tsv", ["index", "sentence"], [[str(i), r[4]] for i, r in enumerate(rows)])
    mnli_header = ["index", "promptID", "pairID", "genre", "sentence1_binary_parse", "sentence2_binary_parse",
                   "sentence1_parse", "sentence2_parse", "sentence1", "sentence2", "label1", "gold_label"]
    mnli_labels = ["contradiction", "entailment", "neutral"]
    mnli_rows = [[str(i), r[1], r[2], "fiction", "( x )", "( y )", "(ROOT x)", "(ROOT y)", r[3], r[4],
                  mnli_labels[i % 3], mnli_labels[(i * 7) % 3]] for i, r in enumerate(rows)]
    files["mnli-dev_matched"] = write("mnli/dev_matched.tsv", mnli_header, mnli_rows)
    files["mnli-dev_mismatched"] = write("mnli/dev_mismatched.tsv", mnli_header, mnli_rows[::-1])
    files["mnli-test_matched"] = write("mnli/test_matched.tsv", mnli_header[:10], [r[:10] for r in mnli_rows])
    files["sts-b-dev"] = write("sts-b/dev.tsv", ["index", "genre", "filename", "year", "old_index", "source1",
                                                 "source2", "sentence1", "sentence2", "score"],
                               [[str(i), "main-news", "x", "2012", str(i), "none", "none", r[3], r[4],
                                 f"{(i * 0.37) % 5:.3f}"] for i, r in enumerate(rows)])
    qqp = [[str(i), r[1], r[2], r[3], r[4], str(i % 2)] for i, r in enumerate(rows)]
    qqp[5] = qqp[5][:4]  # rows HF's QqpProcessor skips
    qqp[17] = qqp[17][:1]
    files["qqp-train"] = write("qqp/train.tsv", ["id", "qid1", "qid2", "question1", "question2", "is_duplicate"], qqp)
    files["qnli-dev"] = write("qnli/dev.tsv", ["index", "question", "sentence", "label"],
                              [[str(i), r[3], r[4], ["entailment", "not_entailment"][i % 2]] for i, r in enumerate(rows)])
    files["rte-train"] = write("rte/train.tsv", ["index", "sentence1", "sentence2", "label"],
                               [[str(i), r[4], r[3], ["not_entailment", "entailment"][i % 2]] for i, r in enumerate(rows)])
    files["wnli-dev"] = write("wnli/dev.tsv", ["index", "sentence1", "sentence2", "label"],
                              [[str(i), r[3], r[4], str((i // 3) % 2)] for i, r in enumerate(rows)])
    # Hostile MRPC: CRLF endings, a stray CR inside a text, a BOM, an empty and a control-only second text,
    # long texts that need truncation on both sides.
    hostile = ["\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\r\n"]
    for i, r in enumerate(rows[:40]):
        a, b = r[3], r[4]
        if i == 3:
            b = ""
        elif i == 4:
            b = "\u200b\u0007"
        elif i == 5:
            a = "long " * 200 + a
        elif i == 6:
            a, b = a + "\r stray", (b + " ") * 30
        hostile.append(f"{r[0]}\t{r[1]}\t{r[2]}\t{a}\t{b}\r\n")
    with open(f"{tmp}/hostile-mrpc.tsv", "w", encoding="utf-8", newline="") as f:
        f.write("".join(hostile))
    files["hostile-mrpc"] = f"{tmp}/hostile-mrpc.tsv"
    return files


def glue_cases(results, tmp):
    for sub in ("cola", "mnli", "sts-b", "qqp", "qnli", "rte", "wnli"):
        os.makedirs(f"{tmp}/{sub}", exist_ok=True)
    made = make_glue_files(tmp)
    cases = []
    for split in ("train", "dev", "test"):
        for vocab, lower in ((UNCASED, True), (CASED, False)):
            for seq in (128, 48):
                cases.append((f"mrpc {split}", "mrpc", f"{MRPC}/{split}.tsv", split, vocab, lower, seq))
    for vocab, lower in ((UNCASED, True), (CASED, False)):
        for seq in (128, 32):
            cases.append(("sst-2 dev", "sst-2", SST2_DEV, "dev", vocab, lower, seq))
    cases += [
        ("cola train (made here)", "cola", made["cola-train"], "train", UNCASED, True, 64),
        ("cola test (made here)", "cola", made["cola-test"], "test", CASED, False, 64),
        ("mnli dev_matched (made here)", "mnli", made["mnli-dev_matched"], "dev_matched", UNCASED, True, 96),
        ("mnli dev_mismatched (made here)", "mnli", made["mnli-dev_mismatched"], "dev_mismatched", UNCASED, True, 40),
        ("mnli test_matched (made here)", "mnli", made["mnli-test_matched"], "test", CASED, False, 128),
        ("sts-b dev (made here)", "sts-b", made["sts-b-dev"], "dev", UNCASED, True, 64),
        ("qqp train (made here, 2 short rows)", "qqp", made["qqp-train"], "train", UNCASED, True, 64),
        ("qnli dev (made here)", "qnli", made["qnli-dev"], "dev", CASED, False, 64),
        ("rte train (made here)", "rte", made["rte-train"], "train", UNCASED, True, 50),
        ("wnli dev (made here)", "wnli", made["wnli-dev"], "dev", UNCASED, True, 64),
        ("hostile mrpc dev", "mrpc", made["hostile-mrpc"], "dev", UNCASED, True, 64),
        ("hostile mrpc dev", "mrpc", made["hostile-mrpc"], "dev", CASED, False, 3),
    ]
    for name, task, path, set_type, vocab, lower, seq in cases:
        ref, mine = f"{tmp}/ref.tfrecord", f"{tmp}/ours.tfrecord"
        examples = glue_reference(task, path, ref, vocab, lower, seq, set_type)
        args = ["--task", task, "--vocab", vocab, "--max-seq-length", str(seq)]
        if not lower:
            args.append("--cased")
        if set_type == "train":
            args.append("--train")
        ours = run_ours(args + [path], mine)
        results.compare(f"glue {name} {'uncased' if lower else 'cased'} L={seq}", mine, ref)
        if ours[:2] != (examples, examples) or ours[2] != (2 if task == "qqp" else 0):
            print(f"  FAIL: our summary counts {ours}, the reference made {examples} examples")
            results.ok = False

    # The fixture written by run_classifier.py itself; our default length is its 128.
    mine = f"{tmp}/mrpc-train.tfrecord"
    run_ours(["--task", "mrpc", "--vocab", UNCASED, "--train", f"{MRPC}/train.tsv"], mine)
    results.compare("fixture mrpc-run_classifier/train.tf_record", mine, MRPC_FIXTURE, minimum=3668)


def main():
    results = Results()
    # 1.0.4's load_vocab and HEAD's agree only for a vocabulary without repeated tokens (see the docstring).
    for vocab in (UNCASED, CASED):
        lines = [tokenization.convert_to_unicode(l).strip() for l in open(vocab, encoding="utf-8")]
        ok = len(set(lines)) == len(lines)
        print(f"{os.path.basename(vocab)}: {len(lines)} tokens, none repeated: {ok}")
        results.ok &= ok
    with tempfile.TemporaryDirectory() as tmp:
        squad_cases(results, tmp)
        glue_cases(results, tmp)
    total_same = sum(r[1] for r in results.rows)
    total = sum(r[2] for r in results.rows)
    print(f"{len(results.rows)} cases, {total_same}/{total} features identical")
    print("PASS" if results.ok else "FAIL")
    return 0 if results.ok else 1


if __name__ == "__main__":
    sys.exit(main())
