"""What the masking compat tests and bench/dynamic_masks.sh share (not a test itself: the runner only picks up
test_*.py).

whole_word_predictions: whole-word masking as google-research/bert's HEAD does it (--do_whole_word_mask); the
packaged bert-tensorflow 1.0.4 script predates the flag. Written here from the rule in DESIGN.md 5 (candidates
grouped by "##" continuation, a group that would overflow is skipped, a group with a covered position is skipped),
drawing from the random stream in the reference's order; its signature and results are
create_masked_lm_predictions'.

unmasked_samples: the samples of an NVIDIA-layout HDF5 file as they were before masking.
"""


def whole_word_predictions(tokens, masked_lm_prob, max_predictions_per_seq, vocab_words, rng):
    """The whole-word rule of DESIGN.md 5, driving the same random stream as the reference."""
    groups = []
    for position, token in enumerate(tokens):
        if token in ("[CLS]", "[SEP]"):
            continue
        if groups and token.startswith("##"):
            groups[-1].append(position)
        else:
            groups.append([position])
    rng.shuffle(groups)
    budget = min(max_predictions_per_seq, max(1, int(round(len(tokens) * masked_lm_prob))))
    masked_tokens = list(tokens)
    chosen, covered = [], set()
    for group in groups:
        if len(chosen) >= budget:
            break
        if len(chosen) + len(group) > budget or any(p in covered for p in group):
            continue
        for p in group:
            covered.add(p)
            if rng.random() < 0.8:
                replacement = "[MASK]"
            elif rng.random() < 0.5:
                replacement = tokens[p]
            else:
                replacement = vocab_words[rng.randint(0, len(vocab_words) - 1)]
            masked_tokens[p] = replacement
            chosen.append(p)
    chosen.sort()
    return masked_tokens, chosen, [tokens[p] for p in chosen]


def unmasked_samples(path):
    """Each row's input_ids with its masked positions given back their original ids, cut to its length (h5py)."""
    import h5py
    with h5py.File(path, "r") as f:
        ids, mask = f["input_ids"][:], f["input_mask"][:]
        positions, originals = f["masked_lm_positions"][:], f["masked_lm_ids"][:]
    samples = []
    for row in range(len(ids)):
        sample = [int(t) for t in ids[row][:int(mask[row].sum())]]
        for p, original in zip(positions[row], originals[row]):
            if p == 0:
                break
            sample[int(p)] = int(original)
        samples.append(sample)
    return samples
