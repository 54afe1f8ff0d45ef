"""The dynamic-masking draw (pretraining_data/dynamic_masks.h: a sample's masks at each epoch, for a data loader)
against google-research/bert's own create_masked_lm_predictions.

For sample i of epoch e under seed s the draw's random stream is documented as CPython's random.Random(n) with
n = s * 2**96 + e * 2**64 + i. Here the reference function (PyPI bert-tensorflow 1.0.4; whole-word masking from
reference_masking.py, as in compat.mkpretrain) is handed that generator and the sample's tokens, and must choose
the same positions and put the same tokens there, for every sample of mkpretrain's output over several epochs:
without and with whole-word masking, at 15% and at 30% (MosaicBERT's rate), and for a seed above 2**32. The same
draws in another order of the samples show that a sample's masks depend on (seed, epoch, index) alone.

mkpretrain --masking none writes the reference's instances unmasked: token for token the masked file's with the
original tokens put back (so Google's instances, which compat.mkpretrain pins), the same segments and labels.
mkpretrain --full-sentences (RoBERTa's FULL-SENTENCES rows) makes the rows the rule in full_sentence_rows makes
from Google's tokenizer's ids.
"""
import os
import random
import subprocess
import sys
import tempfile

from compat_common import BIN, FIXTURES, TEST_TOOLS, Checks, require_fixtures, skip
from reference_masking import unmasked_samples, whole_word_predictions

require_fixtures()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
try:
    import h5py
    from absl import flags
    from bert import create_pretraining_data as reference
    from bert import tokenization
except Exception as e:  # noqa: BLE001 - the peer is not installed
    skip(f"cannot import the reference: {e}")
HELPER = os.path.join(TEST_TOOLS, "data_test_helper")
if not os.access(HELPER, os.X_OK):
    skip(f"no {HELPER}")

VOCAB = f"{FIXTURES}/vocab/bert-base-uncased-vocab.txt"
EPOCHS = 3
check = Checks()


def ours(samples, keys, seed, prob, max_predictions, whole_word):
    lines = "".join(f"{i} {e} {' '.join(map(str, samples[i]))}\n" for i, e in keys)
    cmd = [HELPER, "dynamic-masks", VOCAB, str(seed), str(prob), str(max_predictions)]
    if whole_word:
        cmd.append("--whole-word-mask")
    out = subprocess.run(cmd, input=lines, capture_output=True, text=True, check=True).stdout.splitlines()
    return [[tuple(map(int, m.split(":"))) for m in line.split()] for line in out]


def theirs(tokens, seed, epoch, index, prob, max_predictions, whole_word, vocab_words):
    rng = random.Random(seed * 2**96 + epoch * 2**64 + index)
    draw = whole_word_predictions if whole_word else reference.create_masked_lm_predictions
    output, positions, _ = draw(tokens, prob, max_predictions, vocab_words, rng)
    return [(p, output[p]) for p in positions]


def compare(samples, seed, prob, max_predictions, whole_word, vocab, inverse):
    vocab_words = list(vocab.keys())
    keys = [(i, e) for e in range(EPOCHS) for i in range(len(samples))]
    got = ours(samples, keys, seed, prob, max_predictions, whole_word)
    name = f"seed {seed}, {prob:.0%}, max {max_predictions}{', whole words' if whole_word else ''}"
    same = 0
    for (i, e), masks in zip(keys, got):
        tokens = [inverse[t] for t in samples[i]]
        want = theirs(tokens, seed, e, i, prob, max_predictions, whole_word, vocab_words)
        if [(p, inverse[t]) for p, t in masks] == want:
            same += 1
        elif not check(False, f"{name}: sample {i} epoch {e}: ours {masks[:6]}..., reference {want[:6]}..."):
            if len(check.failures) > 10:
                break
    check(same == len(keys), f"{name}: {same} of {len(keys)} samples as the reference")
    print(f"{name}: {same} of {len(keys)} samples' masks as create_masked_lm_predictions draws them")
    # Another order of the same (index, epoch) pairs: the same masks for each.
    shuffled = keys[:]
    random.Random(1).shuffle(shuffled)
    again = dict(zip(shuffled, ours(samples, shuffled, seed, prob, max_predictions, whole_word)))
    check(all(again[k] == m for k, m in zip(keys, got)), f"{name}: the masks depend on the order of the samples")
    return got


def mkpretrain(out, *args):
    subprocess.run([os.path.join(BIN, "mkpretrain"), "-q", "--vocab", VOCAB, "--max-seq-length", "128",
                    "--max-predictions", "20", "-o", out, *args, f"{FIXTURES}/pretraining_text/sample_text.txt"],
                   check=True)


def check_unmasked_instances(tmp, samples, static):
    """--masking none: the static file's instances with their tokens put back; a dupe factor of 1 by default."""
    unmasked = os.path.join(tmp, "u.hdf5")
    mkpretrain(unmasked, "--dupe-factor", "80", "--masking", "none")
    with h5py.File(unmasked, "r") as u, h5py.File(static, "r") as s:
        check("masked_lm_positions" not in u and "masked_lm_ids" not in u, "--masking none wrote masks")
        lengths = u["input_mask"][:].sum(axis=1)
        ids = [[int(t) for t in row[:n]] for row, n in zip(u["input_ids"][:], lengths)]
        check(ids == samples, f"unmasked tokens: {sum(a != b for a, b in zip(ids, samples))} of {len(samples)} "
                              "instances differ from the masked file's, tokens put back")
        for name in ("segment_ids", "next_sentence_labels", "input_mask"):
            check((u[name][:] == s[name][:]).all(), f"{name} differs from the masked file's")
        check(len(set(u["sample_ids"][:].tolist())) == len(samples), "sample_ids are not distinct")
    once, static_once = os.path.join(tmp, "u1.hdf5"), os.path.join(tmp, "s1.hdf5")
    mkpretrain(once, "--masking", "none")
    mkpretrain(static_once, "--dupe-factor", "1")
    with h5py.File(once, "r") as u, h5py.File(static_once, "r") as s:
        check(len(u["input_ids"]) == len(s["input_ids"]), "--masking none: not dupe factor 1 by default")
    print(f"--masking none: {len(samples)} instances as the masked file's, tokens put back")


def full_sentence_rows(documents, tokenizer, vocab, width):
    """RoBERTa's FULL-SENTENCES over Google's tokens: whole sentences in order, a [SEP] where a document starts
    inside a row, up to width - 2 tokens; a longer sentence alone, cut."""
    rows, row = [], []
    limit = width - 2
    for document in documents:
        for k, line in enumerate(document):
            ids = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(line))
            if not ids:
                continue
            separator = [vocab["[SEP]"]] if row and k == 0 else []
            if row and len(row) + len(separator) + len(ids) > limit:
                rows.append(row)
                row, separator = [], []
            row = row + separator + ids[:limit]
            if len(ids) >= limit:
                rows.append(row)
                row = []
    if row:
        rows.append(row)
    return [tuple([vocab["[CLS]"]] + r + [vocab["[SEP]"]]) for r in rows]


def check_full_sentences(tmp):
    """mkpretrain --full-sentences: the rows the rule above makes from Google's tokenizer's ids, shuffled."""
    with open(f"{FIXTURES}/pretraining_text/sample_text.txt", encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip()]
    documents = [lines[i:i + 3] for i in range(0, len(lines), 3)]  # short documents, so rows cross many of them
    text = os.path.join(tmp, "docs.txt")
    with open(text, "w", encoding="utf-8") as f:
        f.write("".join("\n".join(d) + "\n\n" for d in documents))
    flags.FLAGS(["reference"])  # tokenization.py reads --preserve_unused_tokens (default off)
    tokenizer = tokenization.FullTokenizer(VOCAB, do_lower_case=True)
    for width in (32, 64, 128):
        out = os.path.join(tmp, f"full-{width}.hdf5")
        subprocess.run([os.path.join(BIN, "mkpretrain"), "-q", "--vocab", VOCAB, "--max-seq-length", str(width),
                        "--full-sentences", "--masking", "none", "-o", out, text], check=True)
        with h5py.File(out, "r") as f:
            lengths = f["input_mask"][:].sum(axis=1)
            ours = [tuple(int(t) for t in row[:n]) for row, n in zip(f["input_ids"][:], lengths)]
            check(not f["segment_ids"][:].any() and not f["next_sentence_labels"][:].any(),
                  f"--full-sentences {width}: one segment, label 0")
        want = full_sentence_rows(documents, tokenizer, tokenizer.vocab, width)
        check(sorted(ours) == sorted(want), f"--full-sentences {width}: {len(ours)} rows, the rule's {len(want)}")
        crossing = sum(row.count(tokenizer.vocab["[SEP]"]) > 1 for row in ours)
        check(ours != want, f"--full-sentences {width}: the rows are shuffled")
        check(crossing > 0 or width < 64, f"--full-sentences {width}: no row crosses a document boundary")
        print(f"--full-sentences at {width}: {len(ours)} rows as the rule makes them, {crossing} across documents")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "d.hdf5")
        mkpretrain(data, "--dupe-factor", "80")
        samples = unmasked_samples(data)
        check_unmasked_instances(tmp, samples, data)
        check_full_sentences(tmp)
    vocab = tokenization.load_vocab(VOCAB)
    inverse = {i: t for t, i in vocab.items()}
    check(len(samples) * EPOCHS >= 2500, f"{len(samples)} samples x {EPOCHS} epochs: fewer than 2500 draws")
    compare(samples, 12345, 0.15, 20, False, vocab, inverse)
    compare(samples, 12345, 0.15, 20, True, vocab, inverse)
    got = compare(samples, 2**40 + 7, 0.3, 40, False, vocab, inverse)
    masked = sum(len(m) for m in got) / sum(len(samples[i]) for i in range(len(samples)) for _ in range(EPOCHS))
    print(f"masking rate at 30%: {masked:.4f} of the tokens")
    compare(samples, 2**40 + 7, 0.3, 40, True, vocab, inverse)
    sys.exit(check.exit_code("compat.dynamic_masks"))


main()
