#!/usr/bin/env bash
# bert-eval: usage errors, unreadable or mismatched checkpoints (one-line errors naming files and tensors), the
# JSON it prints, --fill-mask's handling of [MASK].
source "$(dirname "$0")/lib.sh"
need_fixtures
if [ ! -x "$BIN/bert-eval" ] || [ ! -x "${TORCH_TEST_TOOLS:-}/model_probe" ]; then
  echo "skipped: bert-eval or model_probe not built (needs -DBERTKIT_WITH_TORCH=ON)"; exit 77
fi
VOCAB=$FIXTURES/vocab/bert-base-uncased-vocab.txt

run bert-eval --help
expect_rc 0 "--help"
run bert-eval --version
expect_rc 0 "--version"; expect_out "bert-eval (bertkit) 0.1.0" "--version text"
run bert-eval --input x.hdf5
expect_rc 2 "no --checkpoint"; expect_err "checkpoint.*try --help" "missing --checkpoint named"
run bert-eval --checkpoint "$TMP/m"
expect_rc 2 "no inputs"; expect_err "give HDF5 files with --input, or --fill-mask TEXT; try --help" "no inputs message"
mkdir -p "$TMP/no-vocab"  # a checkpoint directory without a vocab.txt
run bert-eval --checkpoint "$TMP/no-vocab" --fill-mask "a [MASK]"
expect_rc 2 "--fill-mask without --vocab"; expect_err "--fill-mask needs the model's vocabulary: give --vocab or --tokenizer" "--vocab named"
run bert-eval --checkpoint "$TMP/m" --batch-size 0 x.hdf5
expect_rc 2 "--batch-size 0"; expect_err "^bert-eval: --batch-size must be positive, got 0" "--batch-size named once"
run bert-eval --checkpoint "$TMP/m" --device tpu x.hdf5
expect_rc 2 "unknown device"; expect_err "--device must be cpu, cuda or cuda:N, got 'tpu'" "device message"

# Checkpoints.
run bert-eval --checkpoint "$TMP/nothing" x.hdf5
expect_rc 1 "missing checkpoint"; expect_err "^bert-eval: error: $TMP/nothing: no such checkpoint" "missing checkpoint message"
mkdir "$TMP/empty"
run bert-eval --checkpoint "$TMP/empty" x.hdf5
expect_rc 1 "empty directory"; expect_err "empty: no model.safetensors" "empty directory message"

cat >"$TMP/config.json" <<'JSON'
{"vocab_size": 30522, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
 "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
 "max_position_embeddings": 128, "type_vocab_size": 2, "initializer_range": 0.02}
JSON
"$TORCH_TEST_TOOLS/model_probe" init "$TMP/config.json" 1 "$TMP/m"
sed 's/"num_hidden_layers": 2/"num_hidden_layers": 3/' "$TMP/config.json" >"$TMP/three.json"
run bert-eval --checkpoint "$TMP/m" --config "$TMP/three.json" x.hdf5
expect_rc 1 "one layer too many"
expect_err "m/model.safetensors: does not match the model; missing keys \(16\): bert.encoder.layer.2.attention.self.query.weight, " \
  "missing keys listed"
sed 's/"intermediate_size": 64/"intermediate_size": 48/' "$TMP/config.json" >"$TMP/wide.json"
run bert-eval --checkpoint "$TMP/m" --config "$TMP/wide.json" x.hdf5
expect_rc 1 "shape mismatch"
expect_err "tensor bert.encoder.layer.0.intermediate.dense.weight has shape \[64, 32\], but the config needs \[48, 32\]" \
  "shape mismatch names the tensor"
cp -r "$TMP/m" "$TMP/cut"
truncate -s 2000 "$TMP/cut/model.safetensors"
run bert-eval --checkpoint "$TMP/cut" x.hdf5
expect_rc 1 "truncated weights"; expect_err "cut/model.safetensors: " "truncated weights name the file"
[ "$(printf '%s\n' "$ERR" | wc -l)" -eq 1 ] || fail_case "truncated weights: error is not one line: $ERR"

# Data.
run bert-eval --checkpoint "$TMP/m" "$TMP/missing.hdf5"
expect_rc 1 "missing input"; expect_err "missing.hdf5" "missing input named"
mkpretrain --vocab "$VOCAB" --max-seq-length 64 --max-predictions 10 --dupe-factor 1 -q -o "$TMP/s.hdf5" \
  "$FIXTURES/pretraining_text/sample_text.txt"
run bert-eval -q --precision fp32 --checkpoint "$TMP/m" --input "$TMP/s.hdf5" --max-samples 5
expect_rc 0 "eval"
printf '%s' "$OUT" | grep -Eq '^\{"checkpoint":".*","device":"cpu","precision":"fp32","precision_reason":"asked","samples":5,"mlm_accuracy":[0-9.e-]+,"nsp_accuracy":[0-9.e-]+,"mlm_loss":[0-9.e-]+,"nsp_loss":[0-9.e-]+,"masked_predictions":[0-9]+,"seconds":' \
  || fail_case "eval JSON: $OUT"
# A directory of HDF5 files, as bert-train takes it: the same samples, the same figures.
mkdir -p "$TMP/sdir" && cp "$TMP/s.hdf5" "$TMP/sdir/"
metrics() { printf '%s' "$1" | sed 's/"checkpoint":"[^"]*",//; s/,"seconds".*//'; }
FILE_OUT=$OUT
run bert-eval -q --precision fp32 --checkpoint "$TMP/m" --input "$TMP/sdir" --max-samples 5
expect_rc 0 "eval of a directory"
CASES=$((CASES + 1)); [ "$(metrics "$OUT")" = "$(metrics "$FILE_OUT")" ] || fail_case "a directory evaluates as its file: $OUT"
# --precision auto: bf16 where the CPU multiplies in bf16 natively (the kernel's /proc/cpuinfo flags say whether
# it does), else fp32; the JSON says which ran and why.
key() { printf '%s' "$OUT" | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
if grep -qw amx_bf16 /proc/cpuinfo; then native="AMX-BF16"; elif grep -qw avx512_bf16 /proc/cpuinfo; then native="AVX512-BF16"; else native=""; fi
run bert-eval -q --checkpoint "$TMP/m" --input "$TMP/s.hdf5" --max-samples 5 --precision auto
expect_rc 0 "eval, --precision auto"
CASES=$((CASES + 1))
if [ -n "$native" ]; then
  [ "$(key precision) $(key precision_reason)" = "bf16 auto: the CPU's $native" ] || fail_case "auto on a CPU with $native: $OUT"
  bf16_loss=$(key mlm_loss); OUT=$FILE_OUT; fp32_loss=$(key mlm_loss)
  CASES=$((CASES + 1))  # bf16's 8-bit mantissa: the loss within 1% of fp32's
  python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(a - b) > 0.01 * b)" \
    "$bf16_loss" "$fp32_loss" || fail_case "bf16's mlm_loss $bf16_loss is not within 1% of fp32's $fp32_loss"
else
  [ "$(key precision) $(key precision_reason)" = "fp32 auto: no native bf16 on the CPU (AMX-BF16 or AVX512-BF16)" ] \
    || fail_case "auto on a CPU without native bf16: $OUT"
fi
# oneDNN's own cap on its instructions (AVX2 has no bf16 multiply) leaves bf16 emulated: auto takes fp32, and bf16
# asked for runs with a warning.
run env ONEDNN_MAX_CPU_ISA=avx2 bert-eval -q --checkpoint "$TMP/m" --input "$TMP/s.hdf5" --max-samples 5 --precision auto
expect_rc 0 "eval, auto under ONEDNN_MAX_CPU_ISA=avx2"
CASES=$((CASES + 1))
case "$(key precision) $(key precision_reason)" in
  "fp32 auto: ONEDNN_MAX_CPU_ISA=AVX2 leaves the CPU's bf16 out") [ -n "$native" ] || fail_case "cap named without bf16: $OUT" ;;
  "fp32 auto: no native bf16 on the CPU (AMX-BF16 or AVX512-BF16)") [ -z "$native" ] || fail_case "cap not named: $OUT" ;;
  *) fail_case "auto under ONEDNN_MAX_CPU_ISA=avx2: $OUT" ;;
esac
run env ONEDNN_MAX_CPU_ISA=avx2 bert-eval --checkpoint "$TMP/m" --input "$TMP/s.hdf5" --max-samples 5 --precision bf16
expect_rc 0 "eval, bf16 under ONEDNN_MAX_CPU_ISA=avx2"
expect_err "^bert-eval: warning: --precision bf16: .*: bf16 is emulated, slower than fp32 \(--precision auto runs fp32 here\)$" \
  "emulated bf16 warned"
run bert-eval --checkpoint "$TMP/m" --input "$TMP/s.hdf5" --precision fp16
expect_rc 2 "fp16 on the CPU"; expect_err "^bert-eval: --precision fp16 needs --device cuda \(use bf16 on the CPU\)" "fp16 refused"
run bert-eval --checkpoint "$TMP/nosuch" --fill-mask "a [MASK]"
expect_rc 1 "--checkpoint that does not exist"
expect_err "^bert-eval: error: $TMP/nosuch: no such checkpoint directory or file$" "--checkpoint that does not exist: said first"
CASES=$((CASES + 1))
"$PYTHON" -c 'import h5py, sys
with h5py.File(sys.argv[1]) as f, h5py.File(sys.argv[2], "w") as g:
    [g.create_dataset(n, data=f[n][:0]) for n in f]' "$TMP/s.hdf5" "$TMP/empty.hdf5"
run bert-eval -q --checkpoint "$TMP/m" "$TMP/empty.hdf5"
expect_rc 1 "an input without samples"; expect_err "^bert-eval: error: $TMP/empty.hdf5: no samples to evaluate$" "no samples"
run bert-eval -q --checkpoint "$TMP/m" --max-predictions 3 "$TMP/s.hdf5"
expect_rc 1 "more predictions than --max-predictions"; expect_err "s.hdf5: row 0: [0-9]+ masked positions, more than --max-predictions 3" "row named"

# --fill-mask.
run bert-eval --checkpoint "$TMP/m" --vocab "$VOCAB" --top-k 2 --fill-mask "Paris is the [MASK] of France." --fill-mask "[MASK]"
expect_rc 0 "fill-mask"
CASES=$((CASES + 1)); [ -z "$ERR" ] || fail_case "fill-mask with the model's vocabulary warned: $ERR"
[ "$(printf '%s\n' "$OUT" | wc -l)" -eq 2 ] || fail_case "fill-mask: one line per text expected: $OUT"
CASES=$((CASES + 1))
printf '%s\n' "$OUT" | head -1 | grep -q '"tokens":\["\[CLS\]","paris","is","the","\[MASK\]","of","france",".","\[SEP\]"\],"masks":\[{"position":4,"predictions":\[{"token":' \
  || fail_case "fill-mask tokens: $OUT"
run bert-eval --checkpoint "$TMP/m" --vocab "$VOCAB" --cased --fill-mask "Paris is the [MASK] of France."
expect_rc 0 "fill-mask --cased"
expect_err "^bert-eval: warning: the vocabulary $VOCAB is lower-case but the text was kept cased \([0-9.]+% \[UNK\]\): drop --cased$" \
  "--cased on an uncased vocabulary: a warning"
CASES=$((CASES + 1))
run bert-eval --checkpoint "$TMP/m" --vocab "$VOCAB" --fill-mask "no mask here"
expect_rc 1 "no [MASK]"; expect_err "has no \[MASK\]" "no [MASK] message"
head -100 "$VOCAB" >"$TMP/small-vocab.txt"
run bert-eval --checkpoint "$TMP/m" --vocab "$TMP/small-vocab.txt" --fill-mask "[MASK]"
expect_rc 1 "vocab size mismatch"; expect_err "100 tokens, but the model's vocab_size is 30522" "vocab size message"
# A run's output directory stands for its latest checkpoint, and a vocab.txt beside the checkpoint (with the case
# its tokenizer_config.json gives) stands in for --vocab.
run bert-eval --checkpoint "$TMP/m" --vocab "$VOCAB" --top-k 2 --fill-mask "Paris is the [MASK] of France."
explicit=$OUT
mkdir -p "$TMP/rundir/checkpoints"
cp -r "$TMP/m" "$TMP/rundir/checkpoints/step-00000004"
cp "$VOCAB" "$TMP/rundir/checkpoints/step-00000004/vocab.txt"
echo step-00000004 >"$TMP/rundir/checkpoints/latest"
run bert-eval --checkpoint "$TMP/rundir" --top-k 2 --fill-mask "Paris is the [MASK] of France."
expect_rc 0 "fill-mask on a run directory, vocabulary beside the checkpoint"
CASES=$((CASES + 1)); [ "$OUT" = "$explicit" ] || fail_case "run directory + vocab.txt beside: $OUT, with --vocab: $explicit"
printf '{"do_lower_case": false}\n' >"$TMP/rundir/checkpoints/step-00000004/tokenizer_config.json"
run bert-eval --checkpoint "$TMP/rundir/checkpoints" --top-k 2 --fill-mask "Paris is the [MASK] of France."
expect_rc 0 "fill-mask with a cased tokenizer_config.json"
CASES=$((CASES + 1)); printf '%s' "$OUT" | grep -q '"tokens":\["\[CLS\]","\[UNK\]","is"' \
  || fail_case "do_lower_case false beside the vocabulary keeps case (Paris is not in the uncased vocabulary): $OUT"
# A model that records no vocabulary: the tokenizer_config.json beside --vocab still gives the casing.
mkdir -p "$TMP/cased-vocab"
cp "$VOCAB" "$TMP/cased-vocab/vocab.txt"
printf '{"do_lower_case": false}\n' >"$TMP/cased-vocab/tokenizer_config.json"
run bert-eval --checkpoint "$TMP/m" --vocab "$TMP/cased-vocab/vocab.txt" --top-k 2 --fill-mask "Paris is the [MASK] of France."
expect_rc 0 "fill-mask, --vocab with a cased tokenizer_config.json"
CASES=$((CASES + 1)); printf '%s' "$OUT" | grep -q '"tokens":\["\[CLS\]","\[UNK\]","is"' \
  || fail_case "do_lower_case false beside --vocab keeps case for a model without a vocabulary: $OUT"
run bert-eval --checkpoint "$TMP/rundir" --input "$TMP/s.hdf5" -q
expect_rc 1 "lower-cased data for a model its tokenizer_config.json calls cased"
expect_err "s.hdf5 is uncased but .*step-00000004/vocab.txt is cased" "the casing named"
rm "$TMP/rundir/checkpoints/step-00000004/tokenizer_config.json"
run bert-eval --precision fp32 --checkpoint "$TMP/rundir" --input "$TMP/s.hdf5" -q
expect_rc 0 "evaluation on a run directory"
CASES=$((CASES + 1)); printf '%s' "$OUT" | grep -q '"checkpoint":"[^"]*rundir/checkpoints/step-00000004"' \
  || fail_case "the resolved checkpoint reported: $OUT"
finish
