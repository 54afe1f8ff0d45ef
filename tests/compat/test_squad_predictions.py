"""SQuAD predictions and scores against google-research/bert's run_squad.py and the official evaluation scripts.

Predictions: for each case, the features come from the reference itself (PyPI bert-tensorflow 1.0.4:
run_squad.read_squad_examples and convert_examples_to_features, collected through output_fn), each feature gets
seeded random float32 logits, written in the logits format (squad/squad_logits.h) by this test, and
run_squad.write_predictions turns them into predictions.json, nbest_predictions.json and (v2.0) null_odds.json.
tests/tools/squad_predict_probe does the same from the same logits file with bertkit's own features; the three
files must be byte-identical. The probe also writes the logits it read back out with the library's writer, which
must reproduce this test's file byte for byte (Python's repr of every float).
The logits are made to reach every branch: quantised features (ties among positions, among candidate scores, among
n-best texts), a boosted valid span in most features, boosted padding and question positions (filtered out),
boosted null positions (the null answer wins, above and below the threshold), features with no valid span (the
"empty" answer), and in the v2.0 hostile case an example whose null scores never drop below the reference's
starting 1000000 (its null logits stay Python ints). Datasets: xquad.en.json (v1.1), a v2.0 file made from it
(every fourth question impossible), and a small hostile file made here (accents, combining marks, NBSP and
zero-width characters, Greek final sigma, dotted capital I, CJK, emoji, full-width letters, punctuation-only
and article-only answers); both vocabularies; several n_best_size / max_answer_length / thresholds.
Cases the reference does not survive are left out of its runs (and documented in squad_predictions.h): a v2.0
example without any non-empty candidate, and a v2.0 example without features.

Scores: the official evaluate-v1.1.py and evaluate-v2.0.py are not on PyPI, but their functions ship verbatim in
the tf-models-official wheel (official/nlp/tools/squad_evaluate_v1_1.py and squad_evaluate_v2_0.py), which
scripts/setup.sh --python downloads without dependencies into $BERTKIT_CACHE/wheels (tests/peer_wheels.txt lists
it); this test loads those two files straight out of the wheel (the package is never imported). Their evaluate()
functions differ from the official scripts' mains in known ways: v1.1 returns exact_match / total and "final_f1"
without the official 100.0 *, so the test runs the official main loop over the file's own functions (checking
that its evaluate() agrees with that loop's sums) and applies 100.0 * x / total as the script does; v2.0 keeps
only the predicted questions (the official main fails on a missing one once it computes HasAns_*), names the
best-threshold keys final_* instead of best_*, always computes them and adds pr_* keys: compared are exact, f1,
total, HasAns_*, NoAns_* and (with null odds) best_* against final_*, each with ==. Scored are the predictions of
every case, a prediction set made from them with some ids removed and some answers replaced by variants of a gold
answer (so EM and partial F1 are hit), and a table of texts that take every rule of normalize_answer (Unicode
lowercasing, \\b beside letters, digits, numerics and marks of many scripts, Python's whitespace), each as the
gold answer of each.
"""
import collections
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import types
import zipfile

from compat_common import (BIN, FIXTURES, TEST_TOOLS, TORCH_TEST_TOOLS, Checks, make_squad2, peer_wheel, require_fixtures,
                           skip)

PROBE = os.path.join(TEST_TOOLS, "squad_predict_probe")
require_fixtures()
if not os.access(PROBE, os.X_OK):
    skip(f"no {PROBE} (build the tests)")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
try:
    import numpy as np
    import tensorflow as tf  # noqa: F401 - the reference needs it
    from absl import flags, logging

    logging.set_verbosity(logging.FATAL)  # the scorers log every missing id

    # modeling.py's `from tensorflow.contrib import layers` (gone in TensorFlow 2); modeling is never used here.
    contrib = types.ModuleType("tensorflow.contrib")
    contrib.layers = types.ModuleType("tensorflow.contrib.layers")
    sys.modules.setdefault("tensorflow.contrib", contrib)
    sys.modules.setdefault("tensorflow.contrib.layers", contrib.layers)
    from bert import run_squad, tokenization

    flags.FLAGS.mark_as_parsed()
except Exception as e:  # noqa: BLE001 - the peer is not installed
    skip(f"cannot import the reference: {e}")


def wheel_module(wheel, member, name):
    """One file of a downloaded wheel, executed as a module of its own (its package is not imported)."""
    with zipfile.ZipFile(wheel) as archive:
        source = archive.read(member).decode("utf-8")
    spec = importlib.util.spec_from_loader(name, loader=None, origin=f"{wheel}/{member}")
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, spec.origin, "exec"), module.__dict__)  # noqa: S102 - the peer's own code
    return module


# What the reference's branches were reached, counted from its verbose log (get_final_text's fallbacks) and from
# its outputs; each must be reached by some case.
REACHED = collections.Counter()
_log_info = run_squad.tf.logging.info


def _count_log(message, *args, **kwargs):
    for branch in ("Unable to find text", "Length not equal", "Couldn't map"):
        if str(message).startswith(branch):
            REACHED[f"get_final_text: {branch}"] += 1
            return None
    return _log_info(message, *args, **kwargs)


run_squad.tf.logging.info = _count_log

TF_MODELS_WHEEL = peer_wheel("tf_models_official-2.20.0")  # skips, saying why, when it is not downloaded
EVAL_V1 = wheel_module(TF_MODELS_WHEEL, "official/nlp/tools/squad_evaluate_v1_1.py", "squad_evaluate_v1_1")
EVAL_V2 = wheel_module(TF_MODELS_WHEEL, "official/nlp/tools/squad_evaluate_v2_0.py", "squad_evaluate_v2_0")

UNCASED = f"{FIXTURES}/vocab/bert-base-uncased-vocab.txt"
CASED = f"{FIXTURES}/vocab/bert-base-cased-vocab.txt"
XQUAD = f"{FIXTURES}/squad/xquad.en.json"


# ---------------------------------------------------------------- datasets

HOSTILE_CONTEXTS = [
    ("Caf\u00e9 au lait costs \u20ac3.50 \u2014 the \u00abbest\u00bb in Z\u00fcrich's old town, "
     "said \u00c9milie; an \u00e9cole (e\u0301cole) nearby sells cr\u00e8me br\u00fbl\u00e9e.",
     [["Caf\u00e9 au lait", "caf\u00e9"], ["\u20ac3.50"], ["the \u00abbest\u00bb", "best"], ["\u00c9milie"],
      ["e\u0301cole", "\u00e9cole"]]),
    ("\u0391\u03b8\u03ae\u03bd\u03b1: \u039f\u0394\u039f\u03a3 \u0395\u03a1\u039c\u039f\u03a5 and "
     "\u0130stanbul's \u0130STANBUL road; stra\u00dfe STRASSE \ufb01ne \uff21\uff22\uff23 \u2163 \u00bd \u00b2 "
     "\u0663\u0664 snake_case a_the the_a.",
     [["\u039f\u0394\u039f\u03a3"], ["\u0130stanbul"], ["stra\u00dfe", "STRASSE"], ["\uff21\uff22\uff23"],
      ["\u00bd \u00b2"], ["a_the"]]),
    ("\u5317\u4eac\u662f\u4e2d\u56fd\u7684\u9996\u90fd\u3002\u6771\u4eac\u306f\u65e5\u672c\u306e\u9996\u90fd"
     "\u3067\u3059\u3002 Seoul (\uc11c\uc6b8) is \ud55c\uad6d's capital. \U00020000\U0002a6d6 rare.",
     [["\u5317\u4eac"], ["\u6771\u4eac"], ["\uc11c\uc6b8"], ["\U00020000"]]),
    ("I love \U0001f355 and \U0001f389 parties \U0001f44d\U0001f3fd! Zero\u200bwidth, soft\u00adhyphen, "
     "non\u00a0breaking, tab\u2003em, ... !!! ??? -- \u2026 \u00bf\u00a1 the a an THE An.",
     [["\U0001f355"], ["!!!", "..."], ["the a an", "THE An."], ["Zero\u200bwidth"], ["non\u00a0breaking"],
      ["\u2026"]]),
    ("The answer is \"quoted\" and 'single' with back\\slash, tab\there, control\u0007bell, "
     "line\u2028separator and a DEL\u007f char; 1,000,000 people -- 3.14159 -- 50% off!",
     [["\"quoted\""], ["back\\slash"], ["1,000,000"], ["50%"], ["3.14159"]]),
]


def make_hostile(out, v2, with_empty_context):
    paragraphs = []
    n = 0
    for context, answer_sets in HOSTILE_CONTEXTS:
        qas = []
        for k, answers in enumerate(answer_sets):
            qa = {"id": f"h{n}", "question": f"Which thing number {k} ({answers[0]}) is meant?",
                  "answers": [{"text": a, "answer_start": max(context.find(a), 0)} for a in answers]}
            if v2:
                qa["is_impossible"] = n % 3 == 2
                if qa["is_impossible"]:
                    qa["plausible_answers"], qa["answers"] = qa["answers"], []
            qas.append(qa)
            n += 1
        paragraphs.append({"context": context, "qas": qas})
    # One question whose null logits are set to 600000 in the v2.0 run (see make_logits).
    paragraphs.append({"context": "Huge null scores make this the last one.",
                       "qas": [{"id": "huge-null", "question": "What is huge?", "is_impossible": False,
                                "answers": [{"text": "Huge null scores", "answer_start": 0}]}]})
    if with_empty_context:  # no pieces, no features: "empty" (v1.1); the reference fails on it for v2.0
        paragraphs.append({"context": "  \u200b ", "qas": [{"id": "no-features", "question": "Anything?",
                                                            "answers": [{"text": "x", "answer_start": 0}]}]})
    json.dump({"version": "v2.0" if v2 else "1.1", "data": [{"title": "hostile", "paragraphs": paragraphs}]},
              open(out, "w", encoding="utf-8"), ensure_ascii=False)


# ---------------------------------------------------------------- logits

def make_logits(examples, features, seq, seed, v2, max_answer):
    """Seeded float32 logits per feature (see the docstring for what they are made to reach)."""
    rng = np.random.default_rng(seed)
    by_example = {}
    for f in features:
        by_example.setdefault(f.example_index, []).append(f)
    logits = {}
    for example_index, feats in by_example.items():
        huge = examples[example_index].qas_id == "huge-null" and v2
        # v2.0: at least one feature of each example gets a valid boosted span, else the reference fails.
        spans = [i for i, f in enumerate(feats) if any(f.token_is_max_context.values())]
        must = int(rng.choice(spans)) if spans else -1
        for i, f in enumerate(feats):
            start = rng.normal(0.0, 1.5, seq).astype(np.float32)
            end = rng.normal(0.0, 1.5, seq).astype(np.float32)
            n = len(f.tokens)
            max_context = [p for p, ok in f.token_is_max_context.items() if ok]
            if max_context and (rng.random() < 0.8 or (v2 and i == must)):
                s = int(rng.choice(max_context))
                last = max(f.token_to_orig_map)
                e = min(s + int(rng.integers(0, min(6, max_answer))), last)
                start[s] += np.float32(9.0)
                end[e] += np.float32(9.0)
            if rng.random() < 0.3 and n < seq:  # padding positions: outside the tokens
                start[rng.integers(n, seq)] += np.float32(7.0)
                end[rng.integers(n, seq)] += np.float32(7.0)
            if rng.random() < 0.3:  # question positions: not in token_to_orig_map
                q = min(f.token_to_orig_map) - 2
                start[rng.integers(1, q + 1)] += np.float32(6.0)
                end[rng.integers(1, q + 1)] += np.float32(6.0)
            if rng.random() < 0.25:  # the null answer scores high
                start[0] += np.float32(rng.uniform(5.0, 10.0))
                end[0] += np.float32(rng.uniform(5.0, 10.0))
            if rng.random() < 0.35:  # ties everywhere
                start = (np.round(start * 2) / 2).astype(np.float32)
                end = (np.round(end * 2) / 2).astype(np.float32)
            if huge:
                start[0] = end[0] = np.float32(600000.0)
            logits[f.unique_id] = ([float(x) for x in start], [float(x) for x in end])
    return logits


def write_logits(features, logits, path):
    with open(path, "w", encoding="utf-8") as out:
        for f in features:
            start, end = logits[f.unique_id]
            out.write(json.dumps({"unique_id": f.unique_id, "start_logits": start, "end_logits": end}) + "\n")


# ---------------------------------------------------------------- scores

def official_v1(dataset, predictions):
    """evaluate-v1.1.py's evaluate() over the wheel's functions, with the script's 100.0 * x / total."""
    f1 = exact_match = total = 0
    for article in dataset:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                total += 1
                if qa["id"] not in predictions:
                    continue
                ground_truths = [x["text"] for x in qa["answers"]]
                prediction = predictions[qa["id"]]
                exact_match += EVAL_V1._metric_max_over_ground_truths(EVAL_V1._exact_match_score, prediction,
                                                                      ground_truths)
                f1 += EVAL_V1._metric_max_over_ground_truths(EVAL_V1._f1_score, prediction, ground_truths)
    theirs = EVAL_V1.evaluate(dataset, predictions)
    assert theirs == {"exact_match": exact_match / total, "final_f1": f1 / total}, (theirs, exact_match, f1, total)
    return {"exact_match": 100.0 * exact_match / total, "f1": 100.0 * f1 / total}


def official_v2(dataset, predictions, na_probs):
    theirs = EVAL_V2.evaluate(dataset, predictions, na_probs)
    out = {}
    for key, value in theirs.items():
        if key.startswith("pr_") or (na_probs is None and key.startswith("final_")):
            continue
        out[key.replace("final_", "best_")] = value
    return out


def compare_scores(check, name, ours_line, official):
    ours = json.loads(ours_line)
    same = list(ours.items()) == list(official.items())  # keys, order and values (floats with ==)
    check(same, f"{name}: scores ours {ours} vs official {official}")
    if same:
        print(f"  {name}: {len(ours)} numbers identical: {ours}")
    return len(ours)


def variant_predictions(dataset, predictions):
    """Some ids removed, some answers replaced by a gold answer's variants (EM and partial F1)."""
    out = {}
    n = 0
    for article in dataset:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                n += 1
                if qa["id"] not in predictions or n % 7 == 0:
                    continue
                text = predictions[qa["id"]]
                if qa["answers"] and n % 3 == 0:
                    gold = qa["answers"][n % len(qa["answers"])]["text"]
                    text = [gold.upper(), f"The {gold}.", f"{gold} and more words", gold.split()[0] if gold.split()
                            else gold, f"an {gold}"][n % 5]
                elif n % 11 == 0:
                    text = ""
                out[qa["id"]] = text
    return out


# ---------------------------------------------------------------- the cases

def run_case(check, tmp, counts, name, path, vocab, lower, lengths, n_best, max_answer, v2, threshold, seed):
    seq, stride, query = lengths
    flags.FLAGS.version_2_with_negative = v2
    flags.FLAGS.null_score_diff_threshold = threshold
    flags.FLAGS.verbose_logging = True  # only for counting get_final_text's fallbacks
    tokenizer = tokenization.FullTokenizer(vocab_file=vocab, do_lower_case=lower)
    examples = run_squad.read_squad_examples(input_file=path, is_training=False)
    features = []
    run_squad.convert_examples_to_features(examples=examples, tokenizer=tokenizer, max_seq_length=seq,
                                           doc_stride=stride, max_query_length=query, is_training=False,
                                           output_fn=features.append)
    logits = make_logits(examples, features, seq, seed, v2, max_answer)
    logits_path = f"{tmp}/logits.jsonl"
    write_logits(features, logits, logits_path)
    results = [run_squad.RawResult(unique_id=f.unique_id, start_logits=logits[f.unique_id][0],
                                   end_logits=logits[f.unique_id][1]) for f in features]
    ref, ours = f"{tmp}/ref", f"{tmp}/ours"
    os.makedirs(ref, exist_ok=True)
    run_squad.write_predictions(examples, features, results, n_best, max_answer, lower, f"{ref}/predictions.json",
                                f"{ref}/nbest_predictions.json", f"{ref}/null_odds.json")
    args = [PROBE, "--vocab", vocab, "--max-seq-length", str(seq), "--doc-stride", str(stride),
            "--max-query-length", str(query), "--n-best-size", str(n_best), "--max-answer-length", str(max_answer),
            f"--null-score-diff-threshold={threshold!r}", "--logits", logits_path, "-o", ours, "-f",
            "--copy-logits", f"{tmp}/logits-copy.jsonl"]
    args += (["--cased"] if not lower else []) + (["--v2"] if v2 else []) + [path]
    done = subprocess.run(args, capture_output=True, text=True)
    if not check(done.returncode == 0, f"{name}: the probe failed: {done.stderr.strip()}"):
        return
    files = ["predictions.json", "nbest_predictions.json"] + (["null_odds.json"] if v2 else [])
    for file in files:
        a, b = open(f"{ours}/{file}", "rb").read(), open(f"{ref}/{file}", "rb").read()
        if not check(a == b, f"{name}: {file} differs"):
            first = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
            print(f"  first difference at byte {first}:\n  ours {a[max(0, first - 200):first + 200]!r}\n"
                  f"  ref  {b[max(0, first - 200):first + 200]!r}")
    check(open(logits_path, "rb").read() == open(f"{tmp}/logits-copy.jsonl", "rb").read(),
          f"{name}: the logits written back differ from Python's")
    predictions = json.load(open(f"{ref}/predictions.json", encoding="utf-8"))
    nbest = json.load(open(f"{ref}/nbest_predictions.json", encoding="utf-8"))
    entries = sum(len(v) for v in nbest.values())
    empty = sum(1 for v in nbest.values() if v[0]["text"] == "empty" and len(v) == 1)
    null = sum(1 for v in predictions.values() if v == "")
    print(f"{name}: {len(features)} features, {len(predictions)} predictions ({null} empty, {empty} 'empty'), "
          f"{entries} n-best entries, {len(files)} files byte-identical: "
          f"{all(open(f'{ours}/{f}', 'rb').read() == open(f'{ref}/{f}', 'rb').read() for f in files)}")
    for qid, best in nbest.items():
        totals = [e["start_logit"] + e["end_logit"] for e in best]
        REACHED["n-best entries with equal scores"] += len(totals) - len(set(totals))
        REACHED["null logits left Python ints"] += sum(isinstance(e["start_logit"], int) for e in best)
        REACHED["'empty' answers"] += best[0]["text"] == "empty"
        if v2:
            REACHED["v2.0: null answers"] += predictions[qid] == ""
            REACHED["v2.0: null first in the n-best but under the threshold"] += (best[0]["text"] == ""
                                                                                 and predictions[qid] != "")
            REACHED["v2.0: non-null first but over the threshold"] += (best[0]["text"] != ""
                                                                      and predictions[qid] == "")
    counts["features"] += len(features)
    counts["predictions"] += len(predictions)
    counts["nbest"] += entries
    counts["files"] += len(files)

    # The scores of these predictions, then of a variant set with missing ids.
    dataset = json.load(open(path, encoding="utf-8"))["data"]
    null_odds = json.load(open(f"{ref}/null_odds.json", encoding="utf-8")) if v2 else None
    official = official_v2(dataset, predictions, null_odds) if v2 else official_v1(dataset, predictions)
    counts["numbers"] += compare_scores(check, f"{name} scores", done.stdout.strip(), official)
    variant = variant_predictions(dataset, predictions)
    with open(f"{tmp}/variant.json", "w", encoding="utf-8") as out:
        json.dump(variant, out)
    args = [PROBE, "--score", f"{tmp}/variant.json"] + (["--v2"] if v2 else [])
    if v2:
        # The null odds of the questions predicted (tf-models-official's precision-recall analysis, which the
        # official script runs only on request, fails on odds of questions it has dropped).
        null_odds = {k: v for k, v in null_odds.items() if k in variant}
        with open(f"{tmp}/variant-odds.json", "w", encoding="utf-8") as out:
            json.dump(null_odds, out)
        args += ["--null-odds", f"{tmp}/variant-odds.json"]
    scored = subprocess.run(args + [path], capture_output=True, text=True)
    if not check(scored.returncode == 0, f"{name}: the probe failed to score: {scored.stderr.strip()}"):
        return
    missing = sum(1 for line in scored.stderr.splitlines() if "prediction" in line or "Unanswered" in line)
    check(missing == counts_questions(dataset) - len(variant), f"{name}: {missing} missing ids reported")
    official = official_v2(dataset, variant, null_odds) if v2 else official_v1(dataset, variant)
    counts["numbers"] += compare_scores(check, f"{name} scores, {missing} ids missing, variants", scored.stdout.strip(),
                                        official)
    if v2:  # without null odds: na_probs 0.0, no best_* keys
        scored = subprocess.run([PROBE, "--v2", "--score", f"{tmp}/variant.json", path], capture_output=True, text=True)
        counts["numbers"] += compare_scores(check, f"{name} scores without null odds", scored.stdout.strip(),
                                            official_v2(dataset, variant, None))


# Texts whose normalisation takes every rule of normalize_answer: Python's lower() (final sigma, İ, Ǆ), ASCII
# punctuation only, \b next to letters, digits and numerics of all scripts, combining and modifier marks,
# zero-width characters, Python's whitespace (NBSP, U+3000, U+2028, U+001C), texts that normalise to nothing.
TRICKY_TEXTS = [
    "The Cat", "An apple, a day!", "a an the", "ANThe", "\u039f\u0394\u039f\u03a3", "\u03a3\u0391\u03a3 \u03a3",
    "\u0130stanbul", "\u01c4EMAL", "\ufb01ne", "Stra\u00dfe A", "the\u0301 end", "th\u00e9\u00e2tre the",
    "\u00e9the", "the\u00e9", "\u00bdthe \u00bd the", "\u0663the the\u0663", "\U0001d400the", "the\U0001d400",
    "a_the an", "\u00abthe\u00bb", "The\u200bthe", "THE\u00a0END", "hello\u3000world", "x\u2028the\u2029y",
    "the\u001cend", "a.b", "an-the", "   ", "!!!", "the", "an\u02b0", "the\u0903", "the\u2160", "the\u00aa",
    "the\u00b2", "the\u2070", "the\u3007", "the\u4e00", "the\uff10", "the\U0001f600", "\U0001f600the",
    "\u039f\u0394\u039f\u03a3the", "cat cat dog", "Cat dog DOG", "\u00c9cole \u00e9cole", "e\u0301cole",
]


def tricky_scores(check, tmp, counts):
    """Every tricky text against every other, as gold answer and prediction (v1.1), and as v2.0 with some
    questions without answers: the sums differ unless every normalisation is the script's."""
    qas, predictions = [], {}
    for i, gold in enumerate(TRICKY_TEXTS):
        for j, prediction in enumerate(TRICKY_TEXTS):
            qid = f"t{i}-{j}"
            qas.append({"id": qid, "answers": [{"text": gold}, {"text": TRICKY_TEXTS[(i + j) % len(TRICKY_TEXTS)]}]})
            predictions[qid] = prediction
    paths = {}
    for version in ("v1", "v2"):
        if version == "v2":
            for k, qa in enumerate(qas):
                if k % 5 == 0:
                    qa["answers"] = []
        data = {"version": "tricky", "data": [{"title": "tricky", "paragraphs": [{"context": "", "qas": qas}]}]}
        paths[version] = f"{tmp}/tricky-{version}.json"
        with open(paths[version], "w", encoding="utf-8") as out:
            json.dump(data, out)
        with open(f"{tmp}/tricky-predictions.json", "w", encoding="utf-8") as out:
            json.dump(predictions, out)
        args = [PROBE, "--score", f"{tmp}/tricky-predictions.json"] + (["--v2"] if version == "v2" else [])
        done = subprocess.run(args + [paths[version]], capture_output=True, text=True)
        if not check(done.returncode == 0, f"tricky texts {version}: the probe failed: {done.stderr.strip()}"):
            continue
        dataset = data["data"]
        official = official_v2(dataset, predictions, None) if version == "v2" else official_v1(dataset, predictions)
        counts["numbers"] += compare_scores(check, f"tricky texts {version}, {len(qas)} questions", done.stdout.strip(),
                                            official)


def counts_questions(dataset):
    return sum(len(p["qas"]) for a in dataset for p in a["paragraphs"])


def tool_case(check, tmp):
    """bert-finetune predict itself: a tiny model fine-tuned for two steps predicts XQuAD with --save-logits; those
    logits through run_squad.py's write_predictions give its predictions.json and nbest_predictions.json byte for
    byte, and the scores it prints are the official script's on them."""
    tool, probe = os.path.join(BIN, "bert-finetune"), os.path.join(TORCH_TEST_TOOLS, "model_probe")
    if not (os.access(tool + "-torch", os.X_OK) and os.access(probe, os.X_OK)):
        print("bert-finetune predict case skipped: bert-finetune-torch or model_probe not built (needs LibTorch)")
        return
    config = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "tiny_bert_config.json")
    lengths = ["--max-seq-length", "128", "--doc-stride", "64", "--max-query-length", "32"]
    steps = [[probe, "init", config, "1", f"{tmp}/pre"],
             [tool, "features", "-q", "--task", "squad", "--vocab", UNCASED, *lengths, "--train", "-o",
              f"{tmp}/train.tfrecord", XQUAD],
             [tool, "train", "--precision", "fp32", "-q", "--task", "squad", "--init-checkpoint", f"{tmp}/pre",
              "--train-file", f"{tmp}/train.tfrecord", "--output-dir", f"{tmp}/run", "--max-steps", "2",
              "--train-batch-size", "8", "--no-tensorboard"],
             [tool, "predict", "--precision", "fp32", "-q", "--task", "squad", "--vocab", UNCASED, *lengths,
              "--checkpoint", f"{tmp}/run/checkpoints/step-00000002", "--predict-file", XQUAD, "-o", f"{tmp}/tool",
              "--save-logits", f"{tmp}/tool-logits.jsonl"]]
    for args in steps:
        done = subprocess.run(args, capture_output=True, text=True)
        if not check(done.returncode == 0, f"{' '.join(args[:2])} failed: {done.stderr.strip()}"):
            return
    flags.FLAGS.version_2_with_negative = False
    tokenizer = tokenization.FullTokenizer(vocab_file=UNCASED, do_lower_case=True)
    examples = run_squad.read_squad_examples(input_file=XQUAD, is_training=False)
    features = []
    run_squad.convert_examples_to_features(examples=examples, tokenizer=tokenizer, max_seq_length=128, doc_stride=64,
                                           max_query_length=32, is_training=False, output_fn=features.append)
    rows = [json.loads(line) for line in open(f"{tmp}/tool-logits.jsonl")]
    check([r["unique_id"] for r in rows] == [f.unique_id for f in features], "one logits line per reference feature")
    results = [run_squad.RawResult(unique_id=r["unique_id"], start_logits=r["start_logits"], end_logits=r["end_logits"])
               for r in rows]
    os.makedirs(f"{tmp}/ref-tool", exist_ok=True)
    run_squad.write_predictions(examples, features, results, 20, 30, True, f"{tmp}/ref-tool/predictions.json",
                                f"{tmp}/ref-tool/nbest_predictions.json", f"{tmp}/ref-tool/null_odds.json")
    for file in ["predictions.json", "nbest_predictions.json"]:
        check(open(f"{tmp}/tool/{file}", "rb").read() == open(f"{tmp}/ref-tool/{file}", "rb").read(),
              f"bert-finetune predict: {file} differs from write_predictions' on its saved logits")
    dataset = json.load(open(XQUAD, encoding="utf-8"))["data"]
    predictions = json.load(open(f"{tmp}/ref-tool/predictions.json", encoding="utf-8"))
    compare_scores(check, "bert-finetune predict scores", done.stdout.strip(), official_v1(dataset, predictions))
    print(f"bert-finetune predict: {len(features)} features' saved logits give the reference's files byte for byte")

    # --attention unpadded: the encoder on each feature's real tokens only. Its logits equal the padded model's at
    # every real token (torch_unit); its answers can differ where run_squad.py ranks padding among the n-best.
    unpadded = [tool, "predict", "--precision", "fp32", "-q", "--task", "squad", "--vocab", UNCASED, *lengths,
                "--checkpoint", f"{tmp}/run/checkpoints/step-00000002", "--predict-file", XQUAD, "-o",
                f"{tmp}/tool-unpadded", "--attention", "unpadded"]
    done = subprocess.run(unpadded, capture_output=True, text=True)
    if check(done.returncode == 0, f"predict --attention unpadded failed: {done.stderr.strip()}"):
        padded_answers = json.load(open(f"{tmp}/tool/predictions.json", encoding="utf-8"))
        answers = json.load(open(f"{tmp}/tool-unpadded/predictions.json", encoding="utf-8"))
        same = sum(answers.get(k) == v for k, v in padded_answers.items())
        check(set(answers) == set(padded_answers), "predict --attention unpadded: every question answered")
        print(f"bert-finetune predict --attention unpadded: {same} of {len(padded_answers)} answers as padded "
              f"(a 2-step model: its logits are nearly flat, so padding often ranks among the n-best)")


def main():
    check = Checks()
    counts = dict(features=0, predictions=0, nbest=0, files=0, numbers=0)
    with tempfile.TemporaryDirectory() as tmp:
        squad2 = f"{tmp}/xquad-v2.json"
        make_squad2(XQUAD, squad2)
        hostile, hostile2 = f"{tmp}/hostile.json", f"{tmp}/hostile-v2.json"
        make_hostile(hostile, v2=False, with_empty_context=True)
        make_hostile(hostile2, v2=True, with_empty_context=False)
        cases = [
            # name, file, vocab, lower, (L, S, Q), n_best_size, max_answer_length, v2, threshold, seed
            ("xquad uncased defaults", XQUAD, UNCASED, True, (384, 128, 64), 20, 30, False, 0.0, 1),
            ("xquad cased L=128 S=48 Q=24 n=5 m=8", XQUAD, CASED, False, (128, 48, 24), 5, 8, False, 0.0, 2),
            ("squad2 uncased L=256 S=96 Q=32", squad2, UNCASED, True, (256, 96, 32), 20, 30, True, 0.0, 3),
            ("squad2 cased L=128 S=64 Q=24 n=10 m=15 t=2.5", squad2, CASED, False, (128, 64, 24), 10, 15, True, 2.5, 4),
            ("hostile uncased L=64 S=16 Q=24 n=7 m=10", hostile, UNCASED, True, (64, 16, 24), 7, 10, False, 0.0, 5),
            ("hostile cased L=48 S=8 Q=16 n=3 m=4", hostile, CASED, False, (48, 8, 16), 3, 4, False, 0.0, 6),
            ("hostile-v2 uncased L=64 S=16 Q=24 t=-1.5", hostile2, UNCASED, True, (64, 16, 24), 20, 30, True, -1.5, 7),
            ("hostile-v2 cased L=48 S=8 Q=16 n=4 m=5 t=0.5", hostile2, CASED, False, (48, 8, 16), 4, 5, True, 0.5, 8),
        ]
        for case in cases:
            run_case(check, tmp, counts, *case)
        tricky_scores(check, tmp, counts)
        tool_case(check, tmp)
    for branch in ["get_final_text: Unable to find text", "get_final_text: Length not equal",
                   "n-best entries with equal scores", "null logits left Python ints", "'empty' answers",
                   "v2.0: null answers", "v2.0: null first in the n-best but under the threshold",
                   "v2.0: non-null first but over the threshold"]:
        check(REACHED[branch] > 0, f"the logits never reached: {branch}")
    print("reached:", dict(REACHED))
    print(f"{len(cases)} cases: {counts['features']} features, {counts['predictions']} predictions and "
          f"{counts['nbest']} n-best entries in {counts['files']} files compared byte for byte; "
          f"{counts['numbers']} scores compared")
    return check.exit_code("compat.squad_predictions")


if __name__ == "__main__":
    sys.exit(main())
