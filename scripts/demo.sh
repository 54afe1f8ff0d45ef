#!/usr/bin/env bash
# README command 1: installs what it needs, builds, and runs the whole pipeline on the embedded corpus
# (demo/enwiki-demo.xml, a small MediaWiki export written for this project): text, vocabulary, pretraining data,
# a tiny BERT trained on the CPU, its evaluation, its conversion to HF safetensors, and the tiny model fine-tuned
# for question answering on demo/qa-demo.json with one interactive answer. Needs no ../shared.
# Outputs go to demo-out/ (or $1).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --torch
PYTHON=${BERTKIT_CACHE:-$HOME/.cache/bertkit}/venv/bin/python
BIN=${BERTKIT_BUILD:-build}/tools
OUT=${1:-demo-out}
rm -rf "$OUT" && mkdir -p "$OUT"
step() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }

step "1. wiki-clean: MediaWiki XML -> one paragraph per line, a blank line after each article"
"$BIN/wiki-clean" --threads 2 -o "$OUT/articles.txt" demo/enwiki-demo.xml
echo "   $(grep -c '^$' "$OUT/articles.txt") articles, $(wc -c <"$OUT/articles.txt") bytes -> $OUT/articles.txt" >&2
echo "   first article:" >&2
awk 'NF==0{exit} {print "   | " substr($0, 1, 110) (length($0) > 110 ? "..." : "")}' "$OUT/articles.txt" >&2

step "2. sent-seg: paragraphs -> one sentence per line (create_pretraining_data.py's input format)"
"$BIN/sent-seg" --threads 2 -o "$OUT/sentences.txt" "$OUT/articles.txt"
echo "   $(grep -vc '^$' "$OUT/sentences.txt") sentences -> $OUT/sentences.txt; the first five:" >&2
head -5 "$OUT/sentences.txt" | sed 's/^/   | /' >&2

step "3. shard: documents kept whole, balanced by bytes, a marker written last"
mkdir -p "$OUT/shards"
"$BIN/shard" --training-shards 4 --test-shards 1 --test-fraction 0.1 --seed 12345 -o "$OUT/shards/demo" "$OUT/sentences.txt"
for f in "$OUT"/shards/*; do
  printf '   %-48s %6s bytes %4s documents\n' "$f" "$(wc -c <"$f")" "$(grep -c '^$' "$f" || true)" >&2
done

step "4. wordpiece train: a WordPiece vocabulary learned from the training shards"
"$BIN/wordpiece" train --vocab-size 2000 --min-frequency 2 -o "$OUT/vocab.txt" "$OUT"/shards/demo_training-*.txt
echo "   $(wc -l <"$OUT/vocab.txt") tokens -> $OUT/vocab.txt; the first sentence, tokenized:" >&2
head -1 "$OUT/sentences.txt" | "$BIN/wordpiece" encode -q --vocab "$OUT/vocab.txt" | fold -w 110 | sed 's/^/   | /' >&2

step "5. mkpretrain: masked-LM / next-sentence instances, as create_pretraining_data.py makes them"
mkdir -p "$OUT/hdf5"
for f in "$OUT"/shards/demo_training-*.txt; do
  name=$(basename "$f" .txt)
  "$BIN/mkpretrain" --vocab "$OUT/vocab.txt" --max-seq-length 128 --max-predictions 20 --dupe-factor 5 \
    -o "$OUT/hdf5/$name.hdf5" "$f"
done
"$BIN/mkpretrain" -q --vocab "$OUT/vocab.txt" --dupe-factor 1 -o "$OUT/demo_training-00000.tfrecord" \
  "$OUT"/shards/demo_training-00000-of-00004.txt
echo "   also as a TFRecord (Google's layout): $OUT/demo_training-00000.tfrecord" >&2

step "6. bin4: samples split by length into bins (32/64/96/128 here: the demo uses 128-token sequences)"
"$BIN/bin4" --bins 32,64,96,128 -o "$OUT/bins" "$OUT"/hdf5/*.hdf5

step "7. bert-train: a tiny BERT (2 layers, hidden 64) pretrained on the CPU"
cat >"$OUT/bert_config.json" <<'JSON'
{"attention_probs_dropout_prob": 0.1, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 64,
 "initializer_range": 0.02, "intermediate_size": 256, "max_position_embeddings": 128, "num_attention_heads": 2,
 "num_hidden_layers": 2, "type_vocab_size": 2, "vocab_size": VOCAB_SIZE}
JSON
sed -i "s/VOCAB_SIZE/$(wc -l <"$OUT/vocab.txt")/" "$OUT/bert_config.json"
OMP_NUM_THREADS=$(nproc) "$BIN/bert-train" --config "$OUT/bert_config.json" --input "$OUT/hdf5" \
  --output-dir "$OUT/train" --train-batch-size 32 --max-steps 300 --learning-rate 2e-2 --warmup-proportion 0.05 \
  --log-every 25 --checkpoint-every 100 --keep-checkpoints 2 --vocab "$OUT/vocab.txt"
"$PYTHON" scripts/plot_loss.py "$OUT/train/log.jsonl" "$OUT/loss.png" | sed 's/^/   /' >&2
# Every tool that takes a checkpoint takes the run's directory too, and reads its latest checkpoint; each
# checkpoint carries the vocabulary (bert-train --vocab), so nothing below needs to be told it again.
CKPT="$OUT/train/checkpoints/$(cat "$OUT/train/checkpoints/latest")"
echo "   checkpoint: $CKPT; loss curve: $OUT/loss.png; TensorBoard: $OUT/train/tensorboard" >&2

step "8. bert-eval: masked-LM and next-sentence accuracy on the held-out test shard"
"$BIN/mkpretrain" -q --vocab "$OUT/vocab.txt" --dupe-factor 5 --seed 999 -o "$OUT/test.hdf5" \
  "$OUT"/shards/demo_test-00000-of-00001.txt
"$BIN/bert-eval" --checkpoint "$OUT/train" --input "$OUT/test.hdf5" | tee "$OUT/eval.json" | sed 's/^/   /' >&2
"$BIN/bert-eval" --checkpoint "$OUT/train" --top-k 3 \
  --fill-mask "The river flows through the [MASK] of the county." | sed 's/^/   /' >&2

step "9. ckpt-convert: the checkpoint as HF safetensors (transformers' BertForPreTraining.from_pretrained reads it)"
"$BIN/ckpt-convert" --to hf -o "$OUT/hf" "$OUT/train"
ls -l "$OUT/hf" | sed 's/^/   /' >&2

step "10. bert-finetune: the tiny model fine-tuned for question answering, then one answer"
# demo/qa-demo.json: 45 questions about the demo articles (demo/qa.txt, built by demo/make_qa.py); 8 more are held
# out in demo/qa-demo-dev.json. A model this small learns little more than the training questions.
qa=(--task squad --vocab "$OUT/vocab.txt" --max-seq-length 128 --doc-stride 64 --max-query-length 32)
"$BIN/bert-finetune" features "${qa[@]}" --train -o "$OUT/qa-train.tfrecord" demo/qa-demo.json
OMP_NUM_THREADS=$(nproc) "$BIN/bert-finetune" train -q --task squad --init-checkpoint "$CKPT" \
  --train-file "$OUT/qa-train.tfrecord" --output-dir "$OUT/qa" --epochs 30 --train-batch-size 8 \
  --learning-rate 3e-3 --warmup-proportion 0.05 --no-tensorboard --doc-stride 64 --max-query-length 32
QA="$OUT/qa"
printf '   the 45 questions it was trained on: ' >&2
"$BIN/bert-finetune" predict -q "${qa[@]}" --checkpoint "$QA" --predict-file demo/qa-demo.json -o "$OUT/qa-pred-train" >&2
printf '   8 questions it has never seen:      ' >&2
"$BIN/bert-finetune" predict -q "${qa[@]}" --checkpoint "$QA" --predict-file demo/qa-demo-dev.json -o "$OUT/qa-pred-dev" >&2
cat >&2 <<'TEXT'
   What to expect: this model has 250 thousand parameters, was pretrained for 300 steps on 34 short articles
   and fine-tuned on 45 questions. It learns to find the answers to the questions it was trained on (the first
   score), but it cannot read: on new questions it scores about 0, and that is the expected result, not a fault.
   The same tools on BERT-base pretrained on Wikipedia and fine-tuned on SQuAD's 88 thousand questions reach
   about 81 EM / 88 F1 on SQuAD's dev set (the BERT paper, Devlin et al. 2019, table 2).
TEXT
question="Who patented the Fennick loom?"
context=$("$PYTHON" -c 'import json, sys
for a in json.load(open(sys.argv[1]))["data"]:
    for p in a["paragraphs"]:
        if any(q["id"] == "demo-015" for q in p["qas"]): print(p["context"])' demo/qa-demo.json)
echo "   One of the trained questions, asked about its paragraph:" >&2
echo "   Q: $question" >&2
# The checkpoint's task.json gives the length and windows it was trained with.
"$BIN/bert-finetune" predict --task squad --checkpoint "$QA" --question "$question" --context "$context" | sed 's/^/   A: /' >&2

step "done: outputs in $OUT/"
