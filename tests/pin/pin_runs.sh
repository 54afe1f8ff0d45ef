#!/usr/bin/env bash
# Pin runs: training, evaluation and fine-tuning runs whose every logged value (timings left out) and every
# checkpoint file must stay the same, byte for byte, across a change that should not change behaviour (a
# refactoring). Run it before and after, then compare:
#
#   tests/pin/pin_runs.sh build/tools /tmp/pin-before        # on the commit before
#   tests/pin/pin_runs.sh build/tools /tmp/pin-after         # on the commit after
#   python3 tests/pin/compare.py /tmp/pin-before /tmp/pin-after
#
# What runs (on the embedded demo corpus, CPU, one thread, a few minutes on 2 cores):
#   data      wiki-clean -> sent-seg -> shard -> wordpiece train -> mkpretrain (HDF5) -> bin4
#   lamb      bert-train, LAMB fp32, 30 steps, a checkpoint every 10
#   adamw     bert-train, AdamW bf16, accumulation 2, bin4's bins, 12 steps
#   resumed   the same run stopped after 6 steps and resumed to 12
#   eval      bert-eval of lamb's checkpoint on the test shard
#   squad     bert-finetune train for SQuAD (demo/qa-demo.json) from lamb's checkpoint, scored on the held-out set
#             every epoch; predict on the held-out set with the logits saved
set -euo pipefail
BIN=$(cd "${1:?usage: pin_runs.sh BIN OUT}" && pwd)
OUT=${2:?usage: pin_runs.sh BIN OUT}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$OUT" && mkdir -p "$OUT" && cd "$OUT"
export OMP_NUM_THREADS=1
q=-q
"$BIN/wiki-clean" $q -o articles.txt "$SRC/demo/enwiki-demo.xml"
"$BIN/sent-seg" $q -o sentences.txt articles.txt
"$BIN/shard" $q --training-shards 2 --test-shards 1 --test-fraction 0.1 -o shards/demo sentences.txt
"$BIN/wordpiece" train $q --vocab-size 1000 -o vocab.txt shards/demo_training-*.txt
for f in shards/demo_training-*.txt; do
  "$BIN/mkpretrain" $q --vocab vocab.txt --max-seq-length 128 --max-predictions 20 --dupe-factor 3 \
    -o "hdf5/$(basename "$f" .txt).hdf5" "$f"
done
"$BIN/mkpretrain" $q --vocab vocab.txt --max-seq-length 128 --max-predictions 20 --seed 7 -o test.hdf5 \
  shards/demo_test-00000-of-00001.txt
"$BIN/bin4" $q --bins 80,110,125,128 -o bins hdf5/*.hdf5  # four bins: the default 6:3:2:5 mix
V=$(wc -l <vocab.txt)
cat >bert_config.json <<JSON
{"attention_probs_dropout_prob": 0.1, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 32,
 "initializer_range": 0.02, "intermediate_size": 64, "max_position_embeddings": 128, "num_attention_heads": 2,
 "num_hidden_layers": 2, "type_vocab_size": 2, "vocab_size": $V}
JSON
TRAIN=("$BIN/bert-train" $q --config bert_config.json --log-every 1 --no-tensorboard --vocab vocab.txt)
FP32=(--precision fp32)  # the runs compared with fp32 references say so (auto would take bf16 where the CPU has it)
"${TRAIN[@]}" "${FP32[@]}" --input hdf5 --output-dir lamb --train-batch-size 16 --max-steps 30 --learning-rate 1e-2 \
  --checkpoint-every 10 --keep-checkpoints 5
ADAMW=(--input bins --train-batch-size 16 --gradient-accumulation-steps 2 --max-steps 12 --optimizer adamw
       --precision bf16 --learning-rate 1e-3 --warmup-proportion 0.2)
"${TRAIN[@]}" "${ADAMW[@]}" --output-dir adamw
"${TRAIN[@]}" "${ADAMW[@]}" --output-dir resumed --stop-after 6
"${TRAIN[@]}" "${ADAMW[@]}" --output-dir resumed --resume
"$BIN/bert-eval" $q "${FP32[@]}" --checkpoint lamb --input test.hdf5 >eval.json
SQ=(--task squad --vocab vocab.txt --max-seq-length 128 --doc-stride 64 --max-query-length 32)
"$BIN/bert-finetune" features $q "${SQ[@]}" --train -o squad-train.tfrecord "$SRC/demo/qa-demo.json"
"$BIN/bert-finetune" train $q "${FP32[@]}" --task squad --init-checkpoint lamb --train-file squad-train.tfrecord \
  --eval-file "$SRC/demo/qa-demo-dev.json" --output-dir squad --epochs 2 --train-batch-size 8 \
  --learning-rate 1e-3 --log-every 1 --no-tensorboard --vocab vocab.txt
"$BIN/bert-finetune" predict $q "${FP32[@]}" "${SQ[@]}" --checkpoint squad --predict-file "$SRC/demo/qa-demo-dev.json" \
  -o squad-predictions --save-logits squad-predictions/logits.jsonl >squad-scores.json
echo "pin runs written to $OUT" >&2
