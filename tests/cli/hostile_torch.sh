#!/usr/bin/env bash
# Hostile uses of the LibTorch tools (issue 28): what a download or a slip of -f must never cost (a checkpoint
# directory taking its input along, a user's files under checkpoints/, half-written predictions), resources a flag
# asks for, and the one clear line each mistake gets. The crafted checkpoints themselves are in
# compat.hostile_checkpoints; the torch-free tools' cases in cli.hostile.
source "$(dirname "$0")/lib.sh"
need_fixtures
[ -x "$BIN/bert-finetune-torch" ] && [ -x "$BIN/ckpt-convert" ] || { echo "skipped: the LibTorch tools are not built"; exit 77; }
[ -x "${TORCH_TEST_TOOLS:-}/model_probe" ] || { echo "skipped: no model_probe"; exit 77; }
export OMP_NUM_THREADS=1
VOCAB=$FIXTURES/vocab/bert-base-uncased-vocab.txt
TINY=$FIXTURES/tf_checkpoint/keras-bert-tiny
CFG=$SRC/tests/fixtures/tiny_bert_config.json

one_line() {  # one_line DESCRIPTION: stderr is exactly one line
  CASES=$((CASES + 1)); [ "$(printf '%s\n' "$ERR" | wc -l)" -eq 1 ] || fail_case "$1: not one line: $ERR"
}

# 1. (item 5) ckpt-convert -o DIR -f never takes an input along: an output that holds, is or lies inside the input
# is refused, and -f replaces only a model directory (what ckpt-convert itself writes), never a directory of a
# user's other files.
mkdir -p "$TMP/run_parent"
echo "my notes" >"$TMP/run_parent/README"
ckpt-convert -q --to native -o "$TMP/run_parent/train" "$TINY/bert_model.ckpt"
(cd "$TMP/run_parent" && find . -type f | sort | xargs md5sum) >"$TMP/parent.md5"
run ckpt-convert -q --to hf -o "$TMP/run_parent" -f "$TMP/run_parent/train"
expect_rc 2 "an output directory that holds the input"
expect_err "^ckpt-convert: -o $TMP/run_parent: holds the input $TMP/run_parent/train, which the output would replace; write the output elsewhere; try --help$" "the refusal"
CASES=$((CASES + 1)); (cd "$TMP/run_parent" && md5sum -c --quiet "$TMP/parent.md5") || fail_case "the run or the README changed"
run ckpt-convert -q --to hf -o "$TMP/run_parent/train/hf" -f "$TMP/run_parent/train"
expect_rc 2 "an output directory inside the input"
expect_err "lies inside the input $TMP/run_parent/train; write the output elsewhere" "inside: the refusal"
run ckpt-convert -q --to native -o "$TMP/run_parent/train" -f "$TMP/run_parent/train"
expect_rc 2 "the input as the output"
CASES=$((CASES + 1)); (cd "$TMP/run_parent" && md5sum -c --quiet "$TMP/parent.md5") || fail_case "the run or the README changed"
mkdir "$TMP/mine"; echo "keep me" >"$TMP/mine/notes.txt"; echo "{}" >"$TMP/mine/config.json"
run ckpt-convert -q --to native -o "$TMP/mine" -f "$TINY/bert_model.ckpt"
expect_rc 1 "-f onto a directory of the user's files"
expect_err "^ckpt-convert: error: $TMP/mine: holds notes.txt, which ckpt-convert did not write; -f replaces only a model directory" "foreign files named"
CASES=$((CASES + 1)); [ "$(cat "$TMP/mine/notes.txt")" = "keep me" ] || fail_case "the user's notes are gone"
ckpt-convert -q --to native -o "$TMP/model" "$TINY/bert_model.ckpt"
run ckpt-convert -q --to native -o "$TMP/model" -f "$TINY/bert_model.ckpt"
expect_rc 0 "-f replaces a model directory"

# 2. (item 9) A write error under --to pt is one line and leaves no temporary (the torch stream writer's destructor
# threw again while unwinding: SIGABRT and a 17-line trace). The model (4 MB) passes the output's 1 MB buffer, so
# the error comes while the writer writes.
"$TORCH_TEST_TOOLS/model_probe" init "$CFG" 1 "$TMP/pre"
mkdir "$TMP/pt"
run bash -c 'ulimit -f 1000 && exec ckpt-convert -q --to pt -o "$1" "$2"' _ "$TMP/pt/m.pt" "$TMP/pre"
expect_rc 1 "--to pt past a file-size limit"
one_line "--to pt write error"
OUT=$(ls -A "$TMP/pt"); expect_out "" "nothing left by the failed --to pt"

# 3. (item 15) A torch.save file: --list lists it; bert-eval and bert-train take --config for it.
mkdir "$TMP/ptonly"
ckpt-convert -q --to pt -o "$TMP/ptonly/model.pt" "$TMP/pre"
run ckpt-convert --list "$TMP/ptonly/model.pt"
expect_rc 0 "--list of a .pt"
CASES=$((CASES + 1)); [ -z "$ERR" ] || fail_case "--list of a .pt wrote to stderr: $ERR"
CASES=$((CASES + 1)); printf '%s\n' "$OUT" | grep -qx 'bert.embeddings.word_embeddings.weight (F32) \[30522,32\]' ||
  fail_case "--list of a .pt: the word embeddings: $OUT"
mkpretrain -q --vocab "$VOCAB" --max-seq-length 64 --max-predictions 10 -o "$TMP/data.hdf5" \
  "$FIXTURES/pretraining_text/sample_text.txt"
run bert-eval -q --precision fp32 --checkpoint "$TMP/ptonly/model.pt" --config "$CFG" --input "$TMP/data.hdf5"
expect_rc 0 "bert-eval of a .pt with --config"
TRAIN=(bert-train -q --precision fp32 --config "$CFG" --input "$TMP/data.hdf5" --train-batch-size 4 --max-predictions 10 --max-steps 1
       --no-tensorboard)
run "${TRAIN[@]}" --output-dir "$TMP/from-pt" --init-checkpoint "$TMP/ptonly/model.pt"
expect_rc 0 "bert-train --init-checkpoint a .pt with --config"

# 4. (item 7) bert-train --force removes the earlier run's step directories and `latest`, never a user's file under
# checkpoints/.
"${TRAIN[@]}" --output-dir "$TMP/run"
echo "results" >"$TMP/run/checkpoints/my-results.txt"
run "${TRAIN[@]}" --output-dir "$TMP/run" --force
expect_rc 0 "bert-train --force over an earlier run"
CASES=$((CASES + 1)); [ "$(cat "$TMP/run/checkpoints/my-results.txt" 2>/dev/null)" = "results" ] ||
  fail_case "--force removed a user's file under checkpoints/"
CASES=$((CASES + 1)); [ -d "$TMP/run/checkpoints/step-00000001" ] || fail_case "--force: no new checkpoint"

# --force never removes a step directory the run reads from (--init-checkpoint inside the earlier run's checkpoints).
run "${TRAIN[@]}" --output-dir "$TMP/run" --force --init-checkpoint "$TMP/run/checkpoints/step-00000001"
expect_rc 2 "--force over the run's own --init-checkpoint"
expect_err "^bert-train: --force would remove $TMP/run/checkpoints/step-00000001, which holds $TMP/run/checkpoints/step-00000001, an input of this run" "the input named"
CASES=$((CASES + 1)); [ -f "$TMP/run/checkpoints/step-00000001/model.safetensors" ] || fail_case "--force removed its input"

# 5. (item 15) Values no run can use are usage errors before anything is loaded.
bad_value() {  # bad_value REGEX FLAGS...
  local want=$1; shift
  run "${TRAIN[@]}" --output-dir "$TMP/bad" "$@"
  expect_rc 2 "$*"
  expect_err "^bert-train: $want; try --help$" "$*: message"
  CASES=$((CASES + 1)); [ ! -e "$TMP/bad" ] || fail_case "$*: $TMP/bad created"
}
bad_value "--gradient-accumulation-steps must be at least 1, got 0" --gradient-accumulation-steps 0
bad_value "--learning-rate must be a positive number, got nan" --learning-rate nan
bad_value "--learning-rate must be a positive number, got -0.1" --learning-rate -0.1
bad_value "--warmup-proportion must be in \[0, 1\], got 2" --warmup-proportion 2
bad_value "--weight-decay must be a number >= 0, got -1" --weight-decay -1
sed 's/"hidden_act": "gelu"/"hidden_act": 5/' "$CFG" >"$TMP/act5.json"
run bert-train -q --config "$TMP/act5.json" --input "$TMP/data.hdf5" --train-batch-size 4 --max-steps 1 --output-dir "$TMP/bad"
expect_rc 1 "hidden_act 5"
expect_err "^bert-train: error: $TMP/act5.json: \"hidden_act\" must be a string such as \"gelu\", got number$" "hidden_act: message"

# A tiny model fine-tuned for SQuAD and one for MRPC, two steps each, on a cut of the fixtures.
python3 - "$FIXTURES/squad/xquad.en.json" "$TMP/squad.json" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
article = data["data"][0]
json.dump({"version": "1.1", "data": [dict(article, paragraphs=article["paragraphs"][:2])]}, open(sys.argv[2], "w"))
PY
SQ=(--task squad --vocab "$VOCAB" --max-seq-length 128 --doc-stride 64 --max-query-length 32)
bert-finetune features -q "${SQ[@]}" --train -o "$TMP/squad.tfrecord" "$TMP/squad.json"
bert-finetune train -q --precision fp32 --task squad --init-checkpoint "$TMP/pre" --train-file "$TMP/squad.tfrecord" \
  --output-dir "$TMP/squad" --max-steps 2 --train-batch-size 8 --no-tensorboard --vocab "$VOCAB"
SQCKPT=$TMP/squad/checkpoints/step-00000002
PRED=(bert-finetune predict --precision fp32 "${SQ[@]}" --checkpoint "$SQCKPT" --predict-file "$TMP/squad.json")
head -60 "$FIXTURES/glue/MRPC/train.tsv" >"$TMP/mrpc.tsv"
bert-finetune features -q --task mrpc --vocab "$VOCAB" --max-seq-length 64 --train -o "$TMP/mrpc.tfrecord" "$TMP/mrpc.tsv"
bert-finetune train -q --precision fp32 --task mrpc --init-checkpoint "$TMP/pre" --train-file "$TMP/mrpc.tfrecord" \
  --output-dir "$TMP/mrpc" --max-steps 1 --train-batch-size 8 --no-tensorboard
MRCKPT=$TMP/mrpc/checkpoints/step-00000001

# 6. (item 8) predict's outputs are all or nothing: every name checked before the model runs, the scores taken
# before anything is written, and the files put in place together.
run "${PRED[@]}" -o "$TMP/p" --attention padded --save-logits "$TMP/p/predictions.json"
expect_rc 2 "--save-logits naming a prediction file"
expect_err "^bert-finetune: --save-logits $TMP/p/predictions.json: is where the predictions go; name another file; try --help$" "the clash named"
CASES=$((CASES + 1)); [ ! -e "$TMP/p" ] || fail_case "the clash left $TMP/p"
mkdir "$TMP/in-out"; cp "$TMP/squad.json" "$TMP/in-out/predictions.json"
run bert-finetune predict "${SQ[@]}" --checkpoint "$SQCKPT" --predict-file "$TMP/in-out/predictions.json" -o "$TMP/in-out" -f
expect_rc 2 "a predict file that is one of the outputs"
expect_err "^bert-finetune: -o $TMP/in-out/predictions.json: is the input $TMP/in-out/predictions.json" "predict: the refusal"
CASES=$((CASES + 1)); cmp -s "$TMP/squad.json" "$TMP/in-out/predictions.json" || fail_case "predict replaced its input"
python3 - "$TMP/squad.json" "$TMP/unanswered.json" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
data["data"][0]["paragraphs"][0]["qas"][0]["answers"] = []
json.dump(data, open(sys.argv[2], "w"))
PY
run bert-finetune predict "${SQ[@]}" --checkpoint "$SQCKPT" --predict-file "$TMP/unanswered.json" -o "$TMP/p"
expect_rc 1 "a SQuAD v1.1 question without answers"
one_line "a question without answers"
CASES=$((CASES + 1)); [ ! -e "$TMP/p" ] || fail_case "a failed scoring left $(find "$TMP/p")"
run "${PRED[@]}" -o "$TMP/p"
expect_rc 0 "predictions"
md5sum "$TMP/p"/*.json >"$TMP/p.md5"
run bash -c 'ulimit -f 40 && exec "$@"' _ "${PRED[@]}" -o "$TMP/p" -f --max-answer-length 5
expect_rc 1 "predictions again, past a file-size limit"
CASES=$((CASES + 1)); md5sum -c --quiet "$TMP/p.md5" || fail_case "a failed run changed the earlier predictions"
OUT=$(ls -A "$TMP/p" | grep -v '^nbest_predictions.json$\|^predictions.json$' || true); expect_out "" "nothing else left in $TMP/p"
# Two spellings of one directory share one staging directory; a device is written in place, never replaced.
(cd "$TMP" && run bert-finetune predict --precision fp32 "${SQ[@]}" --checkpoint "$SQCKPT" --predict-file "$TMP/squad.json" -o "$TMP/two" \
   --attention padded --save-logits two/logits.jsonl; echo "$RC" >"$TMP/rc")
RC=$(cat "$TMP/rc"); expect_rc 0 "-o and --save-logits naming one directory two ways"
CASES=$((CASES + 1)); [ -s "$TMP/two/logits.jsonl" ] && [ -s "$TMP/two/predictions.json" ] || fail_case "a file of the two is missing"
run "${PRED[@]}" -o "$TMP/dev" --attention padded --save-logits /dev/null
expect_rc 0 "--save-logits /dev/null"
CASES=$((CASES + 1)); [ -c /dev/null ] || fail_case "/dev/null is no longer a device"
head -1 "$FIXTURES/glue/MRPC/dev.tsv" >"$TMP/empty-dev.tsv"
run bert-finetune predict --task mrpc --checkpoint "$MRCKPT" --vocab "$VOCAB" --predict-file "$TMP/empty-dev.tsv" -o "$TMP/g"
expect_rc 1 "an empty GLUE file"
one_line "an empty GLUE file"
CASES=$((CASES + 1)); [ ! -e "$TMP/g" ] || fail_case "an empty GLUE file left $(find "$TMP/g")"

# 7. (item 12) An allocation a flag asks for that cannot be made is one line, as every other.
run bert-finetune bench --task squad --checkpoint "$SQCKPT" --batch-sizes 100000000
expect_rc 1 "bench --batch-sizes 100000000"
expect_err "^bert-finetune: error: --batch-sizes 100000000 \(sequences of 128\): DefaultCPUAllocator: can.t allocate memory" "the size named"
one_line "bench with a huge batch"

# 8. (items 14, 15) One clear line: an answer that cannot be printed as JSON is refused up front; a number JSON
# cannot hold names its file; STS-B's labels are finite numbers; task.json's length is checked.
run bert-finetune predict "${SQ[@]}" --checkpoint "$SQCKPT" --question "who?" --context $'caf\xe9'
expect_rc 2 "--context that is not UTF-8"
expect_err "^bert-finetune: --context: byte 3 is not UTF-8 \(the answer is printed as JSON\); try --help$" "--context: message"
sed 's/"version": "1.1"/"version": 1e400/' "$TMP/squad.json" >"$TMP/overflow.json"
run bert-finetune features "${SQ[@]}" -o "$TMP/o.tfrecord" "$TMP/overflow.json"
expect_rc 1 "a number too large for JSON"
expect_err "^bert-finetune: error: $TMP/overflow.json: number overflow parsing '1e400'$" "1e400: message"
printf 'index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore\n0\tmain-captions\tMSRvid\t2012test\t0001\tnone\tnone\tA man.\tA man.\tnan\n' >"$TMP/stsb.tsv"
run bert-finetune features -q --task sts-b --vocab "$VOCAB" --train -o "$TMP/o.tfrecord" "$TMP/stsb.tsv"
expect_rc 1 "an STS-B label nan"
expect_err "line 2: the sts-b label 'nan' is not a finite number$" "nan label: message"
cp -r "$SQCKPT" "$TMP/badlen"
python3 -c 'import json,sys; p=sys.argv[1]; t=json.load(open(p)); t["max_seq_length"]=-5; json.dump(t, open(p,"w"))' "$TMP/badlen/task.json"
run bert-finetune predict --task squad --vocab "$VOCAB" --checkpoint "$TMP/badlen" --question "who?" --context "me"
expect_rc 1 "task.json with max_seq_length -5"
expect_err "^bert-finetune: error: $TMP/badlen/task.json: \"max_seq_length\" must be an integer from 2 to the model's 128 positions, got -5$" "max_seq_length: message"
# 9. (issue 38) Nothing a tool reads is overwritten, and no input trains silently wrong.
md5_of() { find "$@" -type f ! -name .lock | sort | xargs md5sum; }  # .lock: the pid of the last run that looked
md5_of "$TMP/run" "$TMP/pre" "$SQCKPT" >"$TMP/inputs.md5"
# Items 1 and 2: a file output inside a checkpoint it reads (its model, its config, the run's `latest`) is refused.
for out in "$TMP/run/checkpoints/step-00000001/model.safetensors" "$TMP/run/checkpoints/latest"; do
  run ckpt-convert -q --to pt -f -o "$out" "$TMP/run"
  expect_rc 2 "ckpt-convert -o $out of the run"
  expect_err "^ckpt-convert: -o $out: (lies inside|is) the input .*; write the output elsewhere; try --help$" "the refusal of $out"
done
run ckpt-convert -q --to pt -f -o "$TMP/pre/config.json" "$TMP/pre"
expect_rc 2 "ckpt-convert -o the checkpoint's own config.json"
run "${PRED[@]}" -o "$TMP/p9" --attention padded -f --save-logits "$SQCKPT/model.safetensors"
expect_rc 2 "predict --save-logits over the model it loads"
expect_err "^bert-finetune: --save-logits $SQCKPT/model.safetensors: (lies inside|is) the input" "--save-logits: the refusal"
# Item 3: --force never removes a step directory holding any input; no output lies inside a checkpoint read.
cp "$TMP/data.hdf5" "$TMP/run/checkpoints/step-00000001/data.hdf5"
run "${TRAIN[@]}" --output-dir "$TMP/run" --force --eval-input "$TMP/run/checkpoints/step-00000001/data.hdf5" \
  --eval-samples 100
expect_rc 2 "--force over a step directory holding --eval-input"
expect_err "^bert-train: --force would remove $TMP/run/checkpoints/step-00000001, which holds $TMP/run/checkpoints/step-00000001/data.hdf5" "--eval-input named"
rm "$TMP/run/checkpoints/step-00000001/data.hdf5"
run "${TRAIN[@]}" --output-dir "$TMP/pre/phase2" --init-checkpoint "$TMP/pre"
expect_rc 2 "an output directory inside --init-checkpoint"
expect_err "^bert-train: --output-dir $TMP/pre/phase2: lies inside the input $TMP/pre" "inside --init-checkpoint: the refusal"
cp "$TMP/mrpc.tfrecord" "$MRCKPT/train.tfrecord"
run bert-finetune train -q --task mrpc --init-checkpoint "$TMP/pre" --train-file "$MRCKPT/train.tfrecord" \
  --output-dir "$TMP/mrpc" --force --max-steps 1 --train-batch-size 8 --no-tensorboard
expect_rc 2 "bert-finetune train --force over a step directory holding --train-file"
expect_err "^bert-finetune: --force would remove $MRCKPT, which holds $MRCKPT/train.tfrecord" "--train-file named"
CASES=$((CASES + 1)); [ -f "$MRCKPT/train.tfrecord" ] || fail_case "--force removed --train-file"
rm "$MRCKPT/train.tfrecord"
CASES=$((CASES + 1)); md5sum -c --quiet "$TMP/inputs.md5" || fail_case "an input checkpoint changed"
# (issue 39) The HF export of a classifier names its classes as the task.json beside it does.
cp -r "$MRCKPT" "$TMP/named"
python3 -c 'import json,sys; p=sys.argv[1]; t=json.load(open(p)); t["labels"]=["different","same"]; json.dump(t, open(p,"w"))' "$TMP/named/task.json"
ckpt-convert -q --to hf --vocab "$VOCAB" -o "$TMP/named-hf" "$TMP/named"
OUT=$("$PYTHON" -c 'import sys; from transformers import AutoConfig
c = AutoConfig.from_pretrained(sys.argv[1]); print(c.id2label, c.label2id)' "$TMP/named-hf" 2>/dev/null)
expect_out "{0: 'different', 1: 'same'} {'different': 0, 'same': 1}" "id2label from task.json, as transformers reads it"
# Item 7: masked rows without a prediction, or masks beside sample_ids, are refused, not trained at mlm_loss 0.
"$PYTHON" - "$TMP/data.hdf5" "$TMP/nomask.hdf5" "$TMP/both.hdf5" <<'PY'
import shutil, sys, h5py, numpy as np
shutil.copy(sys.argv[1], sys.argv[2]); shutil.copy(sys.argv[1], sys.argv[3])
with h5py.File(sys.argv[2], "r+") as f:
    f["masked_lm_positions"][...] = 0
with h5py.File(sys.argv[3], "r+") as f:
    f["sample_ids"] = np.arange(f["input_ids"].shape[0], dtype=np.int64)
PY
TRAIN_ON=(bert-train -q --precision fp32 --config "$CFG" --train-batch-size 4 --max-steps 1 --no-tensorboard)
run "${TRAIN_ON[@]}" --input "$TMP/nomask.hdf5" --max-predictions 10 --output-dir "$TMP/t7a"
expect_rc 1 "masked rows without predictions"
expect_err "^bert-train: error: $TMP/nomask.hdf5: row [0-9]+: no masked-LM prediction" "no predictions: message"
run "${TRAIN_ON[@]}" --input "$TMP/both.hdf5" --max-predictions 10 --output-dir "$TMP/t7b"
expect_rc 1 "masks and sample_ids in one file"
expect_err "^bert-train: error: $TMP/both.hdf5: holds both sample_ids .* and masked_lm_\* " "both: message"
# Item 8: single-segment data (every label 0) trains NSP only when asked not to.
mkpretrain -q --vocab "$VOCAB" --no-nsp --max-seq-length 64 --max-predictions 10 -o "$TMP/nonsp.hdf5" \
  "$FIXTURES/pretraining_text/sample_text.txt"
run "${TRAIN_ON[@]}" --input "$TMP/nonsp.hdf5" --output-dir "$TMP/t8"
expect_rc 2 "NSP on single-segment data"
expect_err "^bert-train: $TMP/nonsp.hdf5: every sample of its first rows is labelled \"is next\" .*: add --no-nsp; try --help$" "--no-nsp named"
run "${TRAIN_ON[@]}" --input "$TMP/nonsp.hdf5" --output-dir "$TMP/t8" --no-nsp
expect_rc 0 "the same data with --no-nsp"
# Item 10: ids unique by construction (the directory in the hash), the same file twice refused, shared ids warned,
# unsigned ids past 2^63 refused, and a sample_ids of the wrong rank named rightly.
mkdir "$TMP/phase1" "$TMP/phase2"
for ph in phase1 phase2; do
  mkpretrain -q --vocab "$VOCAB" --masking none --max-seq-length 64 -o "$TMP/$ph/part_00000.hdf5" \
    "$FIXTURES/pretraining_text/sample_text.txt"
done
OUT=$("$PYTHON" -c 'import sys, h5py
a, b = (set(h5py.File(p)["sample_ids"][:].tolist()) for p in sys.argv[1:])
print(len(a), len(a & b))' "$TMP/phase1/part_00000.hdf5" "$TMP/phase2/part_00000.hdf5")
CASES=$((CASES + 1)); [ "${OUT#* }" = 0 ] && [ "${OUT% *}" -gt 0 ] || fail_case "phase1/ and phase2/ share sample ids: $OUT"
DYN=(--vocab "$VOCAB" --max-predictions 10)
run "${TRAIN_ON[@]}" "${DYN[@]}" --input "$TMP/phase1" "$TMP/phase1/part_00000.hdf5" --output-dir "$TMP/t10a"
expect_rc 2 "one file given twice"
expect_err "given twice \(also as " "twice: message"
cp "$TMP/phase1/part_00000.hdf5" "$TMP/phase2/copy.hdf5"
run bert-train --precision fp32 --config "$CFG" --train-batch-size 4 --max-steps 1 --no-tensorboard "${DYN[@]}" --input "$TMP/phase1" \
  "$TMP/phase2/copy.hdf5" --output-dir "$TMP/t10b"
expect_rc 0 "two files of the same ids"
expect_err "bert-train: warning: .* hold the same sample ids" "shared ids: the warning"
"$PYTHON" - "$TMP/phase1/part_00000.hdf5" "$TMP/u64.hdf5" "$TMP/rank2.hdf5" <<'PY'
import shutil, sys, h5py, numpy as np
for out, ids in ((sys.argv[2], "u64"), (sys.argv[3], "rank2")):
    shutil.copy(sys.argv[1], out)
    with h5py.File(out, "r+") as f:
        n = f["sample_ids"].shape[0]
        del f["sample_ids"]
        if ids == "u64":
            f["sample_ids"] = np.full(n, 2**63 + 5, dtype=np.uint64)
        else:
            f["sample_ids"] = np.zeros((n, 2), dtype=np.int64)
PY
run "${TRAIN_ON[@]}" "${DYN[@]}" --input "$TMP/u64.hdf5" --output-dir "$TMP/t10c"
expect_rc 1 "unsigned ids past 2^63"
expect_err "sample_ids: an unsigned id of 2\^63 or more" "u64: message"
run "${TRAIN_ON[@]}" "${DYN[@]}" --input "$TMP/rank2.hdf5" --output-dir "$TMP/t10d"
expect_rc 1 "a 2-D sample_ids in a file that is not packed"
expect_err "dataset sample_ids has 2 dimensions, expected 1$" "rank: message"
# Item 11: --max-predictions is bounded by the rows before anything is allocated.
run "${TRAIN_ON[@]}" --input "$TMP/data.hdf5" --max-predictions 4294967306 --output-dir "$TMP/t11"
expect_rc 2 "--max-predictions past 2^32"
run "${TRAIN_ON[@]}" --input "$TMP/data.hdf5" --max-predictions 100000 --output-dir "$TMP/t11"
expect_rc 2 "--max-predictions past the row length"
expect_err "^bert-train: --max-predictions 100000: more than the 64 tokens of the inputs' longest row" "bound: message"
finish
