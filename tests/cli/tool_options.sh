#!/usr/bin/env bash
# Every tool's options, walked from its --help (each subcommand's too): no flag is declared twice in one tool, and
# a flag that several tools take has one default everywhere, except the flags listed below, whose meaning is each
# tool's own. A flag group shared by tools is declared once in libcommon (add_loop_options, add_launcher_options),
# so its defaults cannot drift apart. And each default is written once, in its config: no literal in any
# default_value(...) of a main in tools/.
source "$(dirname "$0")/lib.sh"
tools=$(sed -n 's/^set(BERTKIT_TEXT_TOOLS \(.*\))$/\1/p' "$SRC/tools/CMakeLists.txt")
torch_tools=$(sed -n 's/^set(BERTKIT_TORCH_TOOLS \(.*\))$/\1/p' "$SRC/tools/CMakeLists.txt")
for tool in $torch_tools; do [ -x "$BIN/$tool" ] && tools="$tools $tool"; done
for tool in $tools; do
  "$BIN/$tool" --help >"$TMP/help.$tool" || fail_case "$tool --help failed"
done

for main in "$SRC"/tools/*.cpp; do
  CASES=$((CASES + 1))
  literals=$(grep -nE 'default_value\(\s*("|-?[0-9])' "$main" || true)
  [ -z "$literals" ] || fail_case "$(basename "$main"): a default written in the main, not read from its config: $literals"
done

report=$(python3 - "$TMP" $tools <<'PY'
import collections, re, sys

# Flags whose meaning, and so default, is each tool's own.
OWN = {
    "format": "each tool's own set of formats",
    "output": "stdout where the tool streams; required where the output is a directory or a seekable HDF5 file",
    "layout": "mkpretrain writes nvidia; tfrecord2hdf5 detects it from the records; bin4 keeps its input's",
    "gzip": "bin4's level follows the layout it writes",
    "vocab-size": "wordpiece train, bpe train: the size of the vocabulary to learn (BERT's, RoBERTa's); bert-train: a "
                  "preset's vocabulary size",
    "special-tokens": "each vocabulary kind's own: WordPiece's [PAD],[UNK],[CLS],[SEP],[MASK], RoBERTa's "
                      "<s>,<pad>,</s>,<unk>,<mask>",
    "max-seq-length": "mkpretrain makes instances of that length; tfrecord2hdf5 takes it from the records (0)",
    "max-predictions": "the tools that make data choose it; the tools that read data take it from the data",
    "masking": "mkpretrain: what it writes (static or none); bert-train: static or dynamic, as the data is by default",
    "masked-lm-prob": "mkpretrain draws with 0.15; bert-train's is dynamic masking's, refused on masked data, so unset",
    "attention": "training computes the same either way (unpadded, faster); SQuAD prediction keeps run_squad.py's "
                 "answers exactly (padded), since the reference ranks padding logits too",
}
# The training loop's flags are declared once (add_loop_options) with each tool's recipe as defaults: NVIDIA's
# pretraining for bert-train, Google's run_classifier.py / run_squad.py fine-tuning for bert-finetune.
for flag in ("learning-rate", "lr-decay", "max-steps", "optimizer", "train-batch-size", "warmup-proportion"):
    OWN[flag] = "the loop's recipe: pretraining (bert-train) or fine-tuning (bert-finetune)"
option = re.compile(r"^  (?:-\w \[ )?--([a-z0-9][a-z0-9-]*)(?: \])?(?: ([^\s(]+))?(?: \(=([^)]*)\))?(?:\s|$)")
folder, tools = sys.argv[1], sys.argv[2:]
defaults = collections.defaultdict(dict)
flags = 0
for tool in tools:
    text = open(f"{folder}/help.{tool}").read()
    blocks = re.split(r"^Usage: ", text, flags=re.M)[1:]
    if not blocks:
        print(f"FAIL {tool}: --help has no Usage: line")
    for block in blocks:
        words = block.split()
        name = tool if len(words) < 2 or not re.fullmatch(r"[a-z]+", words[1]) else f"{tool} {words[1]}"
        seen = collections.Counter()
        for line in block.splitlines():
            m = option.match(line)
            if m:
                seen[m.group(1)] += 1
                defaults[m.group(1)][name] = m.group(3)
        flags += len(seen)
        for flag, n in seen.items():
            print(f"{'FAIL' if n > 1 else 'ok'} {name}: --{flag} declared {n} time{'s' if n > 1 else ''}")
for flag, per in sorted(defaults.items()):
    values = sorted({"(none)" if v is None else v for v in per.values()})
    if len(per) > 1:
        verdict = "ok" if len(values) == 1 or flag in OWN else "FAIL"
        why = f" ({OWN[flag]})" if flag in OWN and len(values) > 1 else ""
        print(f"{verdict} --{flag} in {len(per)} tools: default {' / '.join(values)}{why}")
print(f"# {flags} flags in {len(tools)} tools")
PY
) || fail_case "the options walk did not run"
while IFS= read -r line; do
  case "$line" in
    ok*) CASES=$((CASES + 1)) ;;
    FAIL*) CASES=$((CASES + 1)); fail_case "${line#FAIL }" ;;
    "#"*) echo "$line" ;;
  esac
done <<<"$report"
finish
