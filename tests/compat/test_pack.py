"""pack on real phase-2-like data, read back by h5py as Habana's MLPerf loader reads Graphcore's packed layout.

mkpretrain makes seq-512 samples from the fixtures' MLPerf wiki extract (Google's recipe: short_seq_prob 0.1, so
real lengths vary); pack packs them three to a row. h5py reads both files, the input with NVIDIA's loader semantics
and the output as Habana's packed loader does (input_mask numbers the samples, masked_lm_labels from the positions
before the first 0, next_sentence_labels where next_sentence_weights is 1), and we check:
  - unpacked, the rows give back the input's samples exactly, as a multiset (each sample once, whole);
  - position ids restart at 0 with every sample, and next_sentence_positions point at each sample's first token;
  - no row holds more than --max-sequences samples, more tokens than L or more predictions than its slots;
  - the share of real tokens, before and after (target: at least 97% packed), printed;
  - the same inputs and seed give the same bytes; another seed only reorders the rows;
  - unmasked instances (mkpretrain --masking none) pack with their sample ids, each sample whole under its own id.
"""
import collections
import filecmp
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compat_common import BIN, FIXTURES, Checks, require_fixtures  # noqa: E402
from hdf5_samples import h5py, load_file  # noqa: E402

require_fixtures()
check = Checks()


def tool(name, *args, **kw):
    return subprocess.run([os.path.join(BIN, name), *map(str, args)], capture_output=True, text=True, check=True, **kw)


def packed_getitem(f, index):
    """Habana's packed pretraining_dataset __getitem__, in numpy."""
    input_ids = f["input_ids"][index].astype(np.int64)
    input_mask = f["input_mask"][index].astype(np.int64)
    segment_ids = f["segment_ids"][index].astype(np.int64)
    positions = f["positions"][index].astype(np.int64)
    masked_positions = f["masked_lm_positions"][index].astype(np.int64)
    masked_ids = f["masked_lm_ids"][index].astype(np.int64)
    nsp_positions = f["next_sentence_positions"][index].astype(np.int64)
    nsp_labels = f["next_sentence_labels"][index].astype(np.int64)
    nsp_weights = f["next_sentence_weights"][index].astype(np.int64)
    labels = np.full(input_ids.shape, -1, np.int64)
    end = len(masked_positions)
    zeros = (masked_positions == 0).nonzero()[0]
    if len(zeros):
        end = zeros[0]
    labels[masked_positions[:end]] = masked_ids[:end]
    nsp = (nsp_weights == 1) * nsp_labels + (nsp_weights == 0) * -1
    return input_ids, segment_ids, input_mask, positions, labels, nsp_positions, nsp, end


def unpack(path, width, max_sequences):
    samples, rows, tokens = [], 0, 0
    with h5py.File(path, "r") as f:
        check(f["input_ids"].shape[1] == width, f"rows are {width} wide")
        check(f["next_sentence_positions"].shape[1] == max_sequences, f"{max_sequences} sample slots per row")
        slots = f["masked_lm_positions"].shape[1]
        for r in range(f["input_ids"].shape[0]):
            ids, seg, mask, pos, labels, nsp_pos, nsp, predictions = packed_getitem(f, r)
            count = int(mask.max())
            check(1 <= count <= max_sequences, f"row {r}: {count} samples")
            check(predictions <= slots, f"row {r}: predictions fit the slots")
            check(all(int(v) == -1 for v in nsp[count:]), f"row {r}: unused NSP slots have weight 0")
            rows += 1
            for k in range(1, count + 1):
                where = (mask == k).nonzero()[0]
                start, n = int(where[0]), len(where)
                ok = (where == np.arange(start, start + n)).all() and (pos[where] == np.arange(n)).all()
                check(ok, f"row {r}: sample {k} is contiguous with positions 0..{n - 1}")
                check(int(nsp_pos[k - 1]) == start, f"row {r}: next_sentence_positions[{k - 1}] is sample {k}'s start")
                samples.append((tuple(ids[where].tolist()), tuple(seg[where].tolist()), tuple(labels[where].tolist()),
                                int(nsp[k - 1])))
                tokens += n
            check((mask[int((mask > 0).sum()):] == 0).all() and (ids[mask == 0] == 0).all(), f"row {r}: padding last")
    return samples, rows, tokens


with tempfile.TemporaryDirectory() as tmp:
    docs = os.path.join(tmp, "docs.txt")
    with open(os.path.join(FIXTURES, "wiki/mlperf-extracted/wiki_00"), encoding="utf-8") as f:
        paragraphs, inside = [], False
        for line in f:  # WikiExtractor's <doc> blocks: the title line is dropped, blank line between documents
            if line.startswith("<doc "):
                inside = True
                continue
            if line.startswith("</doc>"):
                paragraphs.append("")
                continue
            if inside:
                inside = False
                continue
            if line.strip():
                paragraphs.append(line.rstrip("\n"))
    text = tool("sent-seg", input="\n".join(paragraphs) + "\n").stdout
    with open(docs, "w", encoding="utf-8") as f:
        f.write(text)
    data = os.path.join(tmp, "phase2.hdf5")
    tool("mkpretrain", "-q", "--vocab", f"{FIXTURES}/vocab/bert-base-uncased-vocab.txt", "--max-seq-length", 512,
         "--max-predictions", 76, "--dupe-factor", 3, "-o", data, docs)
    inputs = load_file(data)

    for max_sequences in (3, 8):
        out = os.path.join(tmp, f"packed-{max_sequences}.hdf5")
        summary = tool("pack", "--max-sequences", max_sequences, "-o", out, data).stderr.strip()
        print(summary)
        samples, rows, tokens = unpack(out, 512, max_sequences)
        check(collections.Counter(samples) == collections.Counter(inputs),
              f"S={max_sequences}: the packed rows hold exactly the input's {len(inputs)} samples")
        before = tokens / (512 * len(inputs))
        after = tokens / (512 * rows)
        print(f"S={max_sequences}: {len(inputs)} samples -> {rows} rows; real tokens {100 * before:.1f}% unpacked, "
              f"{100 * after:.1f}% packed")
        check(after >= 0.97, f"S={max_sequences}: at least 97% real tokens packed ({100 * after:.1f}%)")
        check(f"real tokens {100 * before:.1f}% unpacked, {100 * after:.1f}% packed" in summary,
              "the summary line states the same fractions")

    again = os.path.join(tmp, "again.hdf5")
    tool("pack", "-q", "-o", again, data)
    check(filecmp.cmp(again, os.path.join(tmp, "packed-3.hdf5"), shallow=False), "same inputs and seed: same bytes")
    other = os.path.join(tmp, "other.hdf5")
    tool("pack", "-q", "--seed", 7, "-o", other, data)
    with h5py.File(other, "r") as a, h5py.File(again, "r") as b:
        check(not np.array_equal(a["input_ids"][:], b["input_ids"][:]), "another seed: another order")
        check(sorted(map(bytes, a["input_ids"][:])) == sorted(map(bytes, b["input_ids"][:])), "another seed: the same rows")

    # Unmasked instances (mkpretrain --masking none) pack alike: each sample keeps its sample id, in the row's slot
    # of the sample (next_sentence_positions' order), -1 in a slot without one; no prediction datasets.
    unmasked = os.path.join(tmp, "unmasked.hdf5")
    tool("mkpretrain", "-q", "--vocab", f"{FIXTURES}/vocab/bert-base-uncased-vocab.txt", "--max-seq-length", 512,
         "--masking", "none", "-o", unmasked, docs)
    packed_unmasked = os.path.join(tmp, "packed-unmasked.hdf5")
    tool("pack", "-q", "-o", packed_unmasked, unmasked)
    with h5py.File(unmasked, "r") as f:
        by_id = {}
        for r in range(f["input_ids"].shape[0]):
            n = int(f["input_mask"][r].sum())
            by_id[int(f["sample_ids"][r])] = (tuple(f["input_ids"][r, :n].tolist()), tuple(f["segment_ids"][r, :n].tolist()),
                                              int(f["next_sentence_labels"][r]))
    with h5py.File(packed_unmasked, "r") as f:
        check("masked_lm_positions" not in f and "masked_lm_ids" not in f, "packed unmasked rows: no prediction datasets")
        check(f["sample_ids"].shape == (f["input_ids"].shape[0], 3), "packed unmasked rows: sample_ids [N, 3]")
        seen = collections.Counter()
        for r in range(f["input_ids"].shape[0]):
            ids, seg, mask, ids_of = f["input_ids"][r], f["segment_ids"][r], f["input_mask"][r], f["sample_ids"][r]
            count = int(mask.max())
            check(all(int(v) == -1 for v in ids_of[count:]), f"unmasked row {r}: slots without a sample hold -1")
            for k in range(1, count + 1):
                where = (mask == k).nonzero()[0]
                sample_id = int(ids_of[k - 1])
                seen[sample_id] += 1
                got = (tuple(ids[where].tolist()), tuple(seg[where].tolist()), int(f["next_sentence_labels"][r, k - 1]))
                check(by_id.get(sample_id) == got, f"unmasked row {r}: sample {k} is sample id {sample_id}, whole")
        check(seen == collections.Counter(by_id.keys()), f"every one of the {len(by_id)} unmasked samples packed once")

sys.exit(check.exit_code("compat.pack"))
