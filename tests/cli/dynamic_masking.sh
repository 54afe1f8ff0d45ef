#!/usr/bin/env bash
# Dynamic masking: mkpretrain --masking none writes unmasked instances, bert-train's loader draws their masks at
# every epoch from (seed, epoch, sample_id). A run stopped and resumed mid-epoch (and across an epoch boundary)
# ends with the straight run's weights bit for bit; 2 ranks with batch b reach 1 rank with batch 2b; bin4 and pack
# take the files; the bad combinations are one line each and leave nothing. (The draw itself is compat.dynamic_masks'.)
source "$(dirname "$0")/lib.sh"
need_fixtures
[ -x "$BIN/bert-train" ] || { echo "skipped: bert-train not built (BERTKIT_WITH_TORCH=OFF)"; exit 77; }
export OMP_NUM_THREADS=1
VOCAB=$FIXTURES/vocab/bert-base-uncased-vocab.txt
TEXT=$FIXTURES/pretraining_text/sample_text.txt
# No dropout: the ranks' dropout masks differ by design (seed + rank).
sed 's/"attention_probs_dropout_prob": 0.1/"attention_probs_dropout_prob": 0.0/; s/"hidden_dropout_prob": 0.1/"hidden_dropout_prob": 0.0/' \
  "$SRC/tests/fixtures/tiny_bert_config.json" >"$TMP/config.json"
mkpretrain -q --vocab "$VOCAB" --max-seq-length 64 --masking none --dupe-factor 5 -o "$TMP/u.h5" "$TEXT"
mkpretrain -q --vocab "$VOCAB" --max-seq-length 64 --max-predictions 10 -o "$TMP/m.h5" "$TEXT"
T=(bert-train -q --precision fp32 --config "$TMP/config.json" --vocab "$VOCAB" --max-predictions 10 --no-tensorboard
   --learning-rate 1e-2 --dist-timeout 60)
same_weights() {  # DIR_A DIR_B STEP DESCRIPTION: the checkpoints' model.safetensors are the same bytes
  CASES=$((CASES + 1))
  cmp -s "$1/checkpoints/$3/model.safetensors" "$2/checkpoints/$3/model.safetensors" || fail_case "$4"
}

# 95 samples, 11 batches of 8 an epoch: 14 steps cross into epoch 2; the split run stops in the middle of epoch 1.
run "${T[@]}" --input "$TMP/u.h5" --train-batch-size 8 --max-steps 14 --output-dir "$TMP/straight"
expect_rc 0 "dynamic masking, straight"
run "${T[@]}" --input "$TMP/u.h5" --train-batch-size 8 --max-steps 14 --stop-after 6 --output-dir "$TMP/split"
expect_rc 0 "dynamic masking, stopped at step 6"
run "${T[@]}" --input "$TMP/u.h5" --train-batch-size 8 --max-steps 14 --resume --output-dir "$TMP/split"
expect_rc 0 "dynamic masking, resumed"
same_weights "$TMP/straight" "$TMP/split" step-00000014 "a run resumed mid-epoch is not the straight run"
# The check can fail: another seed draws other masks (and another order).
run "${T[@]}" --input "$TMP/u.h5" --train-batch-size 8 --max-steps 14 --output-dir "$TMP/seed8" --seed 8
expect_rc 0 "another seed"
CASES=$((CASES + 1))
! cmp -s "$TMP/straight/checkpoints/step-00000014/model.safetensors" "$TMP/seed8/checkpoints/step-00000014/model.safetensors" ||
  fail_case "another seed gave the same weights"

# A falling masking rate (mmBERT's schedule, 0.15 to 0.05 here): a run stopped mid-epoch and resumed across the
# epoch boundary ends with the straight run's weights, and the schedule acts (other weights than a constant rate).
FALLING=(--input "$TMP/u.h5" --train-batch-size 8 --max-steps 14 --masked-lm-prob-final 0.05)
run "${T[@]}" "${FALLING[@]}" --output-dir "$TMP/falling"
expect_rc 0 "a falling masking rate, straight"
run "${T[@]}" "${FALLING[@]}" --stop-after 6 --output-dir "$TMP/falling-split"
expect_rc 0 "a falling masking rate, stopped at step 6"
run "${T[@]}" "${FALLING[@]}" --resume --output-dir "$TMP/falling-split"
expect_rc 0 "a falling masking rate, resumed"
same_weights "$TMP/falling" "$TMP/falling-split" step-00000014 "a run with a falling masking rate resumed is not the straight run"
CASES=$((CASES + 1))
! cmp -s "$TMP/straight/checkpoints/step-00000014/model.safetensors" "$TMP/falling/checkpoints/step-00000014/model.safetensors" ||
  fail_case "--masked-lm-prob-final changed nothing"
# A batch-size warm-up (with the falling rate): 2 samples a step rising by whole micro-batches of 2 to 8 over 4
# steps; the log gives each step's batch; stopped inside the warm-up and resumed, the straight run's weights.
RAMP=("${FALLING[@]:0:2}" --train-batch-size 8 --gradient-accumulation-steps 4 --max-steps 8 --masked-lm-prob-final 0.05
      --batch-size-warmup-steps 4 --batch-size-warmup-start 2 --log-every 1)
run "${T[@]}" "${RAMP[@]}" --output-dir "$TMP/ramp"
expect_rc 0 "a batch-size warm-up, straight"
run "$PYTHON" -c 'import json, sys; print([int(r["global_batch"]) for r in map(json.loads, open(sys.argv[1])) if "loss" in r])' \
  "$TMP/ramp/log.jsonl"
expect_out "[2, 2, 4, 6, 8, 8, 8, 8]" "each step's batch in the log"
run "${T[@]}" "${RAMP[@]}" --stop-after 3 --output-dir "$TMP/ramp-split"
expect_rc 0 "a batch-size warm-up, stopped at step 3"
run "${T[@]}" "${RAMP[@]}" --resume --output-dir "$TMP/ramp-split"
expect_rc 0 "a batch-size warm-up, resumed"
same_weights "$TMP/ramp" "$TMP/ramp-split" step-00000008 "a run resumed inside its batch-size warm-up is not the straight run"
run "${T[@]}" "${RAMP[@]:0:10}" --batch-size-warmup-steps 4 --batch-size-warmup-start 3 --output-dir "$TMP/x"
expect_rc 2 "a warm-up start that is no multiple of the micro-batch"
expect_err "^bert-train: --batch-size-warmup-start must be a multiple of the micro-batch \\(2 = " "warm-up start: message"
run "${T[@]}" --input "$TMP/m.h5" --train-batch-size 8 --max-steps 1 --masked-lm-prob-final 0.05 --output-dir "$TMP/x"
expect_rc 2 "--masked-lm-prob-final on a masked file"
expect_err "masked-lm-prob-final and --whole-word-mask are dynamic masking's; .*m.h5 holds its masks" "masked + schedule: message"
run "${T[@]}" --input "$TMP/u.h5" --train-batch-size 8 --max-steps 1 --masked-lm-prob-final 1.5 --output-dir "$TMP/x"
expect_rc 2 "--masked-lm-prob-final 1.5"
expect_err "^bert-train: --masked-lm-prob-final must be in \\(0, 1\\), got 1.5" "a final rate out of range: message"

# 2 ranks, batch 4 each, in the single process's order: the weights of 1 rank with batch 8.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
run "${T[@]}" --input "$TMP/u.h5" --train-batch-size 8 --max-steps 6 --global-data-order --output-dir "$TMP/one"
expect_rc 0 "1 rank, batch 8"
run "${T[@]}" --input "$TMP/u.h5" --train-batch-size 4 --max-steps 6 --global-data-order --nproc-per-node 2 \
  --master-port "$port" --output-dir "$TMP/two"
expect_rc 0 "2 ranks, batch 4"
run "$PYTHON" - "$TMP/one/checkpoints/step-00000006/model.safetensors" "$TMP/two/checkpoints/step-00000006/model.safetensors" <<'PY'
import sys
import numpy as np
from safetensors.numpy import load_file
a, b = load_file(sys.argv[1]), load_file(sys.argv[2])
print(max(float(np.abs(a[k] - b[k]).max()) for k in a))
PY
expect_rc 0 "weights compared"
# Float noise only: the ranks' gradients are summed in another order (1.3e-6 seen once after 6 LAMB steps).
CASES=$((CASES + 1)); python3 -c "import sys; sys.exit(0 if float('$OUT') <= 5e-6 else 1)" ||
  fail_case "2 ranks x 4 != 1 rank x 8 (max |diff| $OUT)"

# bin4 bins unmasked files with their sample ids; bert-train masks the bins' samples the same way.
run bin4 -q --bins 32,48,56,64 -o "$TMP/bins" "$TMP/u.h5"
expect_rc 0 "bin4 of unmasked instances"
run "${T[@]}" --input "$TMP/bins" --train-batch-size 4 --max-steps 2 --output-dir "$TMP/binned"
expect_rc 0 "dynamic masking over bin4's bins"

# One line each, nothing written.
run "${T[@]}" --input "$TMP/m.h5" --train-batch-size 8 --max-steps 1 --masking dynamic --output-dir "$TMP/x"
expect_rc 1 "--masking dynamic on a masked file"
expect_err "m.h5: holds its masks \(mkpretrain's default\); --masking dynamic takes unmasked files" "masked + dynamic: message"
run "${T[@]}" --input "$TMP/u.h5" --train-batch-size 8 --max-steps 1 --masking static --output-dir "$TMP/x"
expect_rc 2 "--masking static on unmasked files"
expect_err "^bert-train: --masking static: .*u.h5 is unmasked" "unmasked + static: message"
run "${T[@]}" --input "$TMP/u.h5" "$TMP/m.h5" --train-batch-size 8 --max-steps 1 --output-dir "$TMP/x"
expect_rc 1 "masked and unmasked inputs together"
expect_err "m.h5 holds its masks and .*u.h5 none" "mixed inputs: message"
run bert-train -q --config "$TMP/config.json" --input "$TMP/u.h5" --max-predictions 10 --train-batch-size 8 \
  --max-steps 1 --output-dir "$TMP/x"
expect_rc 2 "dynamic masking without the vocabulary"
expect_err "dynamic masking needs the data's vocabulary .*give --vocab" "no vocabulary: message"
# Without --max-predictions, the most the rule draws from the longest row: round(64 x 0.15) = 10, round(64 x 0.3) = 19.
for prob in 0.15 0.3; do
  run bert-train -q --precision fp32 --config "$TMP/config.json" --vocab "$VOCAB" --input "$TMP/u.h5" --train-batch-size 8 \
    --max-steps 1 --output-dir "$TMP/x" --masked-lm-prob "$prob" --dry-run
  expect_rc 0 "dynamic masking without --max-predictions, --masked-lm-prob $prob"
  CASES=$((CASES + 1))
  want=$([ "$prob" = 0.15 ] && echo 10 || echo 19)
  printf '%s\n' "$OUT" | grep -q "^data: .*, $want masked positions per sample, masks drawn every epoch" ||
    fail_case "--masked-lm-prob $prob without --max-predictions: not $want per sample: $OUT"
done
for p in 0 1 1.5 -0.1; do
  run "${T[@]}" --input "$TMP/u.h5" --train-batch-size 8 --max-steps 1 --masked-lm-prob "$p" --output-dir "$TMP/x"
  expect_rc 2 "--masked-lm-prob $p"
  expect_err "^bert-train: --masked-lm-prob must be in \(0, 1\), got $p" "--masked-lm-prob $p: message"
done
run "${T[@]}" --input "$TMP/m.h5" --train-batch-size 8 --max-steps 1 --masked-lm-prob 0.3 --output-dir "$TMP/x"
expect_rc 2 "--masked-lm-prob on masked data"
expect_err "--masked-lm-prob, --masked-lm-prob-final and --whole-word-mask are dynamic masking's" "--masked-lm-prob on masked data: message"
CASES=$((CASES + 1)); [ ! -e "$TMP/x" ] || fail_case "a refused run left $TMP/x"
run bert-eval -q --checkpoint "$TMP/one" --input "$TMP/u.h5"
expect_rc 1 "bert-eval on unmasked instances without --masking"
expect_err "u.h5: unmasked instances \(mkpretrain --masking none\): give --masking dynamic to mask them once" \
  "bert-eval: message"
run bert-eval -q --checkpoint "$TMP/one" --input "$TMP/m.h5" --masking dynamic
expect_rc 1 "bert-eval --masking dynamic on masked data"
expect_err "m.h5: holds its masks" "bert-eval --masking dynamic on masked data: message"

# An unmasked held-out set is masked once, from bert-eval's seed and with the default rule (whatever the run's own,
# here 30%): bert-train's evaluation at the end equals bert-eval's on the same checkpoint, and two bert-eval runs
# agree; another --mask-seed scores other masks.
run "${T[@]}" --input "$TMP/u.h5" --eval-input "$TMP/u.h5" --eval-samples 95 --train-batch-size 8 --max-steps 4 \
  --masked-lm-prob 0.3 --output-dir "$TMP/evaluated"
expect_rc 0 "bert-train with an unmasked --eval-input"
E=(bert-eval -q --precision fp32 --checkpoint "$TMP/evaluated" --input "$TMP/u.h5" --masking dynamic --max-predictions 10)
scores() { printf '%s' "$1" | sed 's/,"seconds".*//'; }  # the metrics, without the timing
run "${E[@]}"
expect_rc 0 "bert-eval --masking dynamic"
first=$OUT
run "${E[@]}"
CASES=$((CASES + 1)); [ "$(scores "$OUT")" = "$(scores "$first")" ] || fail_case "bert-eval --masking dynamic twice: $first / $OUT"
run "$PYTHON" - "$TMP/evaluated/log.jsonl" "$first" <<'PY'
import json, sys
train = [r for r in map(json.loads, open(sys.argv[1])) if "eval_mlm_accuracy" in r][-1]
ours = json.loads(sys.argv[2])
same = abs(train["eval_mlm_accuracy"] - ours["mlm_accuracy"]) < 1e-9 and abs(train["eval_mlm_loss"] - ours["mlm_loss"]) < 1e-4
print("same" if same else f"train {train['eval_mlm_accuracy']} {train['eval_mlm_loss']}, bert-eval {ours['mlm_accuracy']} {ours['mlm_loss']}")
PY
expect_out same "bert-train's evaluation of an unmasked set = bert-eval --masking dynamic's"
run "${E[@]}" --mask-seed 7
CASES=$((CASES + 1)); [ "$(scores "$OUT")" != "$(scores "$first")" ] || fail_case "--mask-seed 7 scored the same masks"

# pack takes unmasked files: each sample of a packed row gets the masks it gets alone, so bert-eval scores the
# packed set as the unpacked one (the same predictions, the same loss to float rounding); bert-train trains on it.
run pack -q --max-seq-length 128 -o "$TMP/p.h5" "$TMP/u.h5"
expect_rc 0 "pack of unmasked instances"
run bert-eval -q --precision fp32 --checkpoint "$TMP/evaluated" --input "$TMP/p.h5" --masking dynamic --max-predictions 10
expect_rc 0 "bert-eval --masking dynamic of packed rows"
run "$PYTHON" - "$first" "$OUT" <<'PY'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
same = (a["masked_predictions"] == b["masked_predictions"] and abs(a["mlm_loss"] - b["mlm_loss"]) < 1e-5
        and abs(a["nsp_accuracy"] - b["nsp_accuracy"]) < 1e-9)
print("same" if same else f"unpacked {sys.argv[1]}, packed {sys.argv[2]}")
PY
expect_out same "packed rows score as their samples unpacked"
run "${T[@]}" --input "$TMP/p.h5" --train-batch-size 4 --max-steps 2 --masked-lm-prob 0.3 --output-dir "$TMP/packed"
expect_rc 0 "dynamic masking of packed rows"
# A slot without a sample holds -1; anything else there is a damaged file, named by its row.
"$PYTHON" - "$TMP/p.h5" "$TMP/p-bad.h5" <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f, h5py.File(sys.argv[2], "w") as g:
    for name in f:
        g.create_dataset(name, data=f[name][:])
    row = int(np.nonzero(f["next_sentence_weights"][:, -1] == 0)[0][0])
    g["sample_ids"][row, -1] = 7
PY
bad_row=$("$PYTHON" -c "import h5py, numpy as np; f = h5py.File('$TMP/p-bad.h5', 'r'); print(int(np.nonzero(f['sample_ids'][:, -1] == 7)[0][0]))")
run bert-eval -q --checkpoint "$TMP/evaluated" --input "$TMP/p-bad.h5" --masking dynamic --max-predictions 10
expect_rc 1 "a packed row with an id in an empty slot"
expect_err "p-bad.h5: row $bad_row: sample_ids: value 7 in slot 2 of a row of [12] samples \(expected -1\)" \
  "an id in an empty slot: message"
run pack -q -o "$TMP/x.h5" "$TMP/u.h5" "$TMP/m.h5"
expect_rc 1 "pack of masked and unmasked files"
expect_err "m.h5 holds its masks and .*u.h5 none" "pack of a mix: message"
run bin4 -q --bins 32,48,56,64 -o "$TMP/mixed-bins" "$TMP/u.h5" "$TMP/m.h5"
expect_rc 1 "bin4 of masked and unmasked files"
expect_err "m.h5 holds its masks and .*u.h5 none" "bin4 of a mix: message"
expect_file_absent "$TMP/mixed-bins" "bin4 of a mix"
run pack -q --max-predictions 12 -o "$TMP/x.h5" "$TMP/u.h5"
expect_rc 2 "pack --max-predictions of unmasked files"
expect_err "^pack: --max-predictions: .*u.h5 is unmasked" "pack --max-predictions: message"
CASES=$((CASES + 1)); [ ! -e "$TMP/x.h5" ] || fail_case "pack refused but left $TMP/x.h5"
# RoBERTa's recipe: FULL-SENTENCES rows (compat.dynamic_masks checks the rows), MLM only, masked by the loader.
run mkpretrain -q --vocab "$VOCAB" --max-seq-length 64 --full-sentences --masking none -o "$TMP/full.h5" "$TEXT"
expect_rc 0 "mkpretrain --full-sentences"
run "${T[@]}" --input "$TMP/full.h5" --no-nsp --train-batch-size 4 --max-steps 2 --output-dir "$TMP/full"
expect_rc 0 "bert-train --no-nsp on full-sentences rows"
run mkpretrain -q --vocab "$VOCAB" --full-sentences -o "$TMP/x.h5" "$TEXT"
expect_rc 2 "--full-sentences with static masks"
expect_err "^mkpretrain: --full-sentences writes unmasked rows, for bert-train to mask at every epoch: add --masking none" \
  "--full-sentences with static masks: message"
run mkpretrain -q --vocab "$VOCAB" --masking none -o "$TMP/u.tfrecord" "$TEXT"
expect_rc 2 "mkpretrain --masking none to a TFRecord"
expect_err "--masking none writes HDF5" "TFRecord: message"
# A sample with nothing to mask.
"$PYTHON" - "$TMP/u.h5" "$TMP/bare.h5" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f, h5py.File(sys.argv[2], "w") as g:
    for name in f:
        g.create_dataset(name, data=f[name][:])
    g["input_ids"][3, :] = 0
    g["input_ids"][3, :2] = [101, 102]
    g["input_mask"][3, :] = 0
    g["input_mask"][3, :2] = 1
    g["segment_ids"][3, :] = 0
PY
run "${T[@]}" --input "$TMP/bare.h5" --train-batch-size 8 --max-steps 12 --output-dir "$TMP/bare"
expect_rc 1 "a sample with only [CLS] and [SEP]"
expect_err "bare.h5: row 3: no token to mask \(the sample holds only \[CLS\] and \[SEP\]\)" "no candidate: message"
finish
