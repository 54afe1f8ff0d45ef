#!/usr/bin/env bash
# ckpt-convert: usage, --list of the real TF checkpoints, and bad inputs (missing shard, CRC mismatch, truncated
# index, unknown dtype, shape against the config, unmapped variables), each exit 1 naming the tensor, no output.
source "$(dirname "$0")/lib.sh"
need_fixtures
if [ ! -x "$BIN/ckpt-convert" ]; then echo "skipped: ckpt-convert not built (needs -DBERTKIT_WITH_TORCH=ON)"; exit 77; fi
TINY=$FIXTURES/tf_checkpoint/keras-bert-tiny
RELEASE=$FIXTURES/tf_checkpoint/uncased_L-2_H-128_A-2.index-only

run ckpt-convert --help
expect_rc 0 "--help"
run ckpt-convert --version
expect_rc 0 "--version"; expect_out "ckpt-convert (bertkit) 0.1.0" "--version text"
run ckpt-convert "$TINY/bert_model.ckpt"
expect_rc 2 "neither --list nor --to"; expect_err "either --list or --to" "mode required"
run ckpt-convert --to onnx -o "$TMP/x" "$TINY/bert_model.ckpt"
expect_rc 2 "unknown format"; expect_err "native, hf, pt or tf" "formats named"
run ckpt-convert --to native --pad-vocab 8 -o "$TMP/x" "$TINY/bert_model.ckpt"
expect_rc 2 "--pad-vocab with native"

# --list reads only the index: the release index has no data shard beside it.
run ckpt-convert --list "$RELEASE/bert_model.ckpt"
expect_rc 0 "--list of an index without data"
CASES=$((CASES + 1))
[ "$(printf '%s\n' "$OUT" | grep -c ' (DT_')" -eq 46 ] || fail_case "release index: 46 tensors"
CASES=$((CASES + 1))
printf '%s\n' "$OUT" | grep -qx 'bert/embeddings/word_embeddings (DT_FLOAT) \[30522,128\]' ||
  fail_case "release index: word_embeddings [30522,128]"
CASES=$((CASES + 1))
printf '%s\n' "$OUT" | grep -qx 'bert/encoder/layer_1/intermediate/dense/kernel (DT_FLOAT) \[128,512\]' ||
  fail_case "release index: layer 1 FFN kernel [128,512]"
run ckpt-convert --list "$TINY/bert_model.ckpt.index"
expect_rc 0 "--list with .index spelled out"
CASES=$((CASES + 1))
[ "$(printf '%s\n' "$OUT" | grep -c ' (DT_')" -eq 139 ] || fail_case "keras-bert-tiny: 139 tensors"
CASES=$((CASES + 1))
printf '%s\n' "$OUT" | grep -qx 'global_step (DT_INT64) \[\]' || fail_case "scalar global_step"

# Converting the release index needs its missing data shard.
run ckpt-convert --to native -o "$TMP/release" "$RELEASE/bert_model.ckpt"
expect_rc 1 "missing data shard"
expect_err "bert_model.ckpt.data-00000-of-00001: tensor bert/[a-z/_0-9A-Za-z]+: cannot open" "missing shard named"
expect_file_absent "$TMP/release" "no output without data"

# A copy of the tiny checkpoint to damage.
copy_tiny() { rm -rf "$TMP/ck"; mkdir "$TMP/ck"; cp "$TINY"/bert_config.json "$TINY"/vocab.txt "$TINY"/bert_model.ckpt.* "$TMP/ck/"; chmod u+w "$TMP/ck"/*; }
copy_tiny
# Flip a byte inside bert/embeddings/word_embeddings' data (15x4 floats): find it by its bytes in the file.
WORD_AT=$("$PYTHON" -c '
import sys, numpy as np, tensorflow as tf
r = tf.train.load_checkpoint(sys.argv[1])
w = r.get_tensor("bert/embeddings/word_embeddings").astype("<f4").tobytes()
print(open(sys.argv[1] + ".data-00000-of-00001", "rb").read().find(w))' "$TINY/bert_model.ckpt" 2>/dev/null)
if [ -n "$WORD_AT" ] && [ "$WORD_AT" -ge 0 ]; then
  printf '\x55' | dd of="$TMP/ck/bert_model.ckpt.data-00000-of-00001" bs=1 seek=$((WORD_AT + 17)) conv=notrunc status=none
  run ckpt-convert --to hf -o "$TMP/conv" "$TMP/ck/bert_model.ckpt"
  expect_rc 1 "CRC mismatch"
  expect_err "data-00000-of-00001: tensor bert/embeddings/word_embeddings at byte $WORD_AT: CRC32C mismatch" "CRC error names tensor and offset"
  expect_file_absent "$TMP/conv" "no output after a CRC mismatch"
else
  fail_case "could not locate word_embeddings with TensorFlow"
fi

copy_tiny
head -c 3000 "$TINY/bert_model.ckpt.index" >"$TMP/ck/bert_model.ckpt.index"
run ckpt-convert --to hf -o "$TMP/conv" "$TMP/ck/bert_model.ckpt"
expect_rc 1 "truncated index"; expect_err "bert_model.ckpt.index: .*truncated" "truncation named"
expect_file_absent "$TMP/conv" "no output after a truncated index"
run ckpt-convert --list "$TMP/ck/bert_model.ckpt"
expect_rc 1 "--list of a truncated index"

# Unknown dtype: rewrite global_step's entry (dtype field 1 = DT_INT64 9 -> 99) and fix the block checksum.
copy_tiny
# Patch the entry, then re-checksum the data block holding it (found through the footer and index handles).
"$PYTHON" - "$TMP/ck/bert_model.ckpt.index" <<'EOF'
import sys
path = sys.argv[1]
d = bytearray(open(path, "rb").read())
k = d.find(b"global_step")
v = d.find(b"\x08\x09", k)  # BundleEntryProto field 1 (dtype) = 9 (DT_INT64)
d[v + 1] = 99
def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c ^= x
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
    return c ^ 0xFFFFFFFF
def mask(c):
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF
def varint(b, p):
    v = s = 0
    while True:
        x = b[p]; p += 1; v |= (x & 0x7F) << s; s += 7
        if x < 0x80: return v, p
footer = bytes(d[-48:])
_, p = varint(footer, 0); _, p = varint(footer, p)
index_off, p = varint(footer, p); index_size, p = varint(footer, p)
index = bytes(d[index_off:index_off + index_size])
nrestarts = int.from_bytes(index[-4:], "little")
end = len(index) - 4 - 4 * nrestarts
q = 0; blocks = []
while q < end:
    shared, q = varint(index, q); unshared, q = varint(index, q); vlen, q = varint(index, q)
    q += unshared
    off, r = varint(index, q); size, r = varint(index, r)
    blocks.append((off, size)); q += vlen
for off, size in blocks:
    if off <= d.find(b"global_step") < off + size:
        c = mask(crc32c(bytes(d[off:off + size + 1])))
        d[off + size + 1:off + size + 5] = c.to_bytes(4, "little")
open(path, "wb").write(d)
EOF
run ckpt-convert --list "$TMP/ck/bert_model.ckpt"
expect_rc 1 "unknown dtype"; expect_err "bert_model.ckpt.index: tensor global_step: unknown dtype 99" "unknown dtype named"
run ckpt-convert --to native -o "$TMP/conv" "$TMP/ck/bert_model.ckpt"
expect_rc 1 "unknown dtype when converting"; expect_file_absent "$TMP/conv" "no output after an unknown dtype"

# Shape against the config: a config with hidden_size 8 (heads 4) for the hidden-4 checkpoint.
copy_tiny
sed 's/"hidden_size": *4/"hidden_size": 8/' "$TINY/bert_config.json" >"$TMP/hidden8.json"
run ckpt-convert --config "$TMP/hidden8.json" --to hf -o "$TMP/conv" "$TMP/ck/bert_model.ckpt"
expect_rc 1 "shape mismatch"
expect_err "tensor bert/embeddings/(LayerNorm/beta|position_embeddings|word_embeddings|token_type_embeddings): shape \[[0-9,]+\] does not match the config .*hidden8.json" "mismatch names tensor and config"
expect_file_absent "$TMP/conv" "no output after a shape mismatch"

# A variable with no BERT name: an error unless --allow-unmapped (made by TensorFlow, added to a copy).
"$PYTHON" - "$TINY/bert_model.ckpt" "$TMP/extra/bert_model.ckpt" <<'EOF' 2>/dev/null
import sys, os
import tensorflow as tf
r = tf.train.load_checkpoint(sys.argv[1])
os.makedirs(os.path.dirname(sys.argv[2]), exist_ok=True)
tf.compat.v1.disable_eager_execution()
with tf.Graph().as_default():
    vs = [tf.compat.v1.Variable(r.get_tensor(n), name=n) for n in r.get_variable_to_shape_map()]
    vs.append(tf.compat.v1.Variable(tf.zeros([3]), name="output_bias"))
    saver = tf.compat.v1.train.Saver(vs)
    with tf.compat.v1.Session() as s:
        s.run(tf.compat.v1.global_variables_initializer())
        saver.save(s, sys.argv[2], write_meta_graph=False)
EOF
cp "$TINY/bert_config.json" "$TINY/vocab.txt" "$TMP/extra/"
run ckpt-convert --to hf -o "$TMP/conv" "$TMP/extra/bert_model.ckpt"
expect_rc 1 "unmapped variable"; expect_err "1 unmapped tensor\(s\): output_bias; --allow-unmapped" "unmapped listed"
expect_file_absent "$TMP/conv" "no output with unmapped variables"
run ckpt-convert -q --allow-unmapped --to hf -o "$TMP/conv" "$TMP/extra/bert_model.ckpt"
expect_rc 0 "--allow-unmapped"

# Refusing to overwrite; --force replaces.
run ckpt-convert -q --to native -o "$TMP/conv" "$TINY/bert_model.ckpt"
expect_rc 1 "existing output"; expect_err "already exists" "overwrite refused"
run ckpt-convert -q -f --to native -o "$TMP/conv" "$TINY/bert_model.ckpt"
expect_rc 0 "--force"
CASES=$((CASES + 1))
[ -z "$(ls -A "$TMP" | grep partial)" ] || fail_case "no staging directory left behind"

# -o naming the current directory: one clear line, not a raw filesystem error.
mkdir -p "$TMP/here"
(cd "$TMP/here" && exec ckpt-convert -q -f --to native -o . "$TINY/bert_model.ckpt") >"$TMP/out" 2>"$TMP/err"; RC=$?; ERR=$(cat "$TMP/err")
expect_rc 1 "-f -o ."
expect_err "^ckpt-convert: error: \.: names the current directory \(or its parent\)" "-o . refused in one line"

# Interrupted (a BERT-base-sized model takes about a second to convert): the staging directory and its files go;
# an output already in place stays complete.
"$PYTHON" - "$TMP/base" <<'PY'
import json, os, sys
import numpy as np
from safetensors.numpy import save_file
h, f, v, layers = 768, 3072, 30522, 12
out = sys.argv[1]; os.makedirs(out)
t = {"bert.embeddings.word_embeddings.weight": (v, h), "bert.embeddings.position_embeddings.weight": (512, h),
     "bert.embeddings.token_type_embeddings.weight": (2, h), "bert.embeddings.LayerNorm.weight": (h,),
     "bert.embeddings.LayerNorm.bias": (h,), "bert.pooler.dense.weight": (h, h), "bert.pooler.dense.bias": (h,),
     "cls.predictions.transform.dense.weight": (h, h), "cls.predictions.transform.dense.bias": (h,),
     "cls.predictions.transform.LayerNorm.weight": (h,), "cls.predictions.transform.LayerNorm.bias": (h,),
     "cls.predictions.bias": (v,), "cls.seq_relationship.weight": (2, h), "cls.seq_relationship.bias": (2,)}
for i in range(layers):
    p = f"bert.encoder.layer.{i}."
    for name in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
        t[p + name + ".weight"], t[p + name + ".bias"] = (h, h), (h,)
    t[p + "intermediate.dense.weight"], t[p + "intermediate.dense.bias"] = (f, h), (f,)
    t[p + "output.dense.weight"], t[p + "output.dense.bias"] = (h, f), (h,)
    for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
        t[p + ln + ".weight"], t[p + ln + ".bias"] = (h,), (h,)
save_file({k: np.full(s, 0.01, np.float32) for k, s in t.items()}, os.path.join(out, "model.safetensors"))
json.dump({"hidden_size": h, "intermediate_size": f, "num_hidden_layers": layers, "num_attention_heads": 12,
           "vocab_size": v, "max_position_embeddings": 512, "type_vocab_size": 2, "hidden_act": "gelu",
           "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02},
          open(os.path.join(out, "config.json"), "w"))
PY
for delay in 0.3 0.6 0.9; do
  (exec ckpt-convert -q --to native -o "$TMP/intr-$delay" "$TMP/base") & pid=$!
  sleep "$delay"; kill -TERM "$pid"; wait "$pid"; rc=$?
  CASES=$((CASES + 1))
  left=$(ls -A "$TMP" | grep "partial" || true)
  [ -z "$left" ] || fail_case "interrupted after ${delay}s: left $left"
  CASES=$((CASES + 1))
  if [ "$rc" = 0 ]; then [ -f "$TMP/intr-$delay/model.safetensors" ] || fail_case "exit 0 without a complete output"
  # 143: stopped before the output was put in place (nothing there), or during the renames, which finish first
  # (the signal is acted on after them: the output is then complete).
  elif [ "$rc" = 143 ] && [ -e "$TMP/intr-$delay" ]; then
    [ -f "$TMP/intr-$delay/model.safetensors" ] && [ -f "$TMP/intr-$delay/config.json" ] \
      || fail_case "interrupted during the renames: an incomplete output: $(ls "$TMP/intr-$delay" 2>&1)"
  else [ "$rc" = 143 ] || fail_case "interrupted: exit $rc, output $(ls "$TMP/intr-$delay" 2>&1)"; fi
done
# The same for --to tf, into a new directory and into an existing one (the files are staged beside their names).
for delay in 0.3 0.6 0.9; do
  mkdir "$TMP/intr-tf-existing-$delay"
  for out in "$TMP/intr-tf-new-$delay/bert_model.ckpt" "$TMP/intr-tf-existing-$delay/m.ckpt"; do
    (exec ckpt-convert -q --to tf -o "$out" "$TMP/base") & pid=$!
    sleep "$delay"; kill -TERM "$pid"; wait "$pid"; rc=$?
    CASES=$((CASES + 1))
    left=$(ls -A "$TMP" "$TMP/intr-tf-existing-$delay" | grep -E "partial|\.old$|\.tmp\." || true)
    [ -z "$left" ] || fail_case "--to tf interrupted after ${delay}s: left $left"
    CASES=$((CASES + 1))
    if [ "$rc" = 0 ]; then
      [ -f "$out.index" ] && [ -f "$out.data-00000-of-00001" ] && [ -f "$(dirname "$out")/checkpoint" ] ||
        fail_case "--to tf: exit 0 without a complete output"
    else
      [ "$rc" = 143 ] && [ ! -e "$out.index" ] && [ ! -e "$out.data-00000-of-00001" ] && [ ! -e "$(dirname "$out")/checkpoint" ] ||
        fail_case "--to tf interrupted: exit $rc, $(ls -A "$(dirname "$out")" 2>&1)"
    fi
  done
done
# A training run's directory, or its checkpoints/, stands for its latest checkpoint; without `latest` (a run stopped
# between the rename and the pointer), for the newest complete step directory.
RUN=$TMP/run/checkpoints
mkdir -p "$RUN"
run ckpt-convert -q --to native -o "$RUN/step-00000002" "$TINY/bert_model.ckpt"; expect_rc 0 "step 2"
run ckpt-convert -q --to native -o "$RUN/step-00000005" "$TINY/bert_model.ckpt"; expect_rc 0 "step 5"
mkdir "$RUN/step-00000009.tmp.123"  # an interrupted save: never chosen
echo step-00000002 > "$RUN/latest"
for named in "$TMP/run" "$TMP/run/" "$RUN" "$RUN/"; do
  rm -rf "$TMP/from-run"
  run ckpt-convert --to hf -o "$TMP/from-run" "$named"
  expect_rc 0 "run directory $named"
  expect_err "tokenizer from .*step-00000002/vocab.txt" "$named follows latest to step 2"
done
rm "$RUN/latest"
run ckpt-convert --list "$TMP/run"
expect_rc 0 "--list of a run directory"
rm -rf "$TMP/from-run"; run ckpt-convert --to hf -o "$TMP/from-run" "$TMP/run"
expect_err "step-00000005/vocab.txt" "without latest: the newest complete step"
echo step-00000007 > "$RUN/latest"
run ckpt-convert --to hf -o "$TMP/from-run2" "$TMP/run"
expect_rc 1 "latest naming a missing step"; expect_err "checkpoints/latest: names 'step-00000007'" "dangling latest named"
mkdir -p "$TMP/empty-run/checkpoints"
run ckpt-convert --to hf -o "$TMP/from-empty" "$TMP/empty-run"
expect_rc 1 "run without checkpoints"; expect_err "no complete checkpoint yet" "empty run named"

# The tokenizer: hf needs a vocabulary (beside the input or --vocab) of the model's size.
mkdir "$TMP/novocab"; cp "$RUN/step-00000005/model.safetensors" "$RUN/step-00000005/config.json" "$TMP/novocab/"
run ckpt-convert --to hf -o "$TMP/nv-hf" "$TMP/novocab"
expect_rc 1 "hf without a vocabulary"; expect_err "no vocab.txt \\(or byte-level tokenizer.json\\) beside it; name the model's vocabulary with --vocab or --tokenizer" "asks for --vocab"
expect_file_absent "$TMP/nv-hf" "no output without a vocabulary"
run ckpt-convert --to hf --vocab "$FIXTURES/vocab/bert-base-uncased-vocab.txt" -o "$TMP/nv-hf" "$TMP/novocab"
expect_rc 1 "a vocabulary of another size"; expect_err "30522 tokens, but the model's vocab_size is 15" "size mismatch named"
run ckpt-convert -q --to native -o "$TMP/nv-native" "$TMP/novocab"
expect_rc 0 "native needs no vocabulary"
[ ! -e "$TMP/nv-native/vocab.txt" ] || fail_case "native output invented a vocab.txt"
run ckpt-convert -q --to hf --do-lower-case false --vocab "$TINY/vocab.txt" -o "$TMP/nv-hf" "$TMP/novocab"
expect_rc 0 "--vocab and --do-lower-case"
grep -q '"do_lower_case": false' "$TMP/nv-hf/tokenizer_config.json" || fail_case "--do-lower-case false not written"
cmp -s "$TINY/vocab.txt" "$TMP/nv-hf/vocab.txt" || fail_case "vocab.txt not copied verbatim"
# --to tf: a TF1 checkpoint with bert_config.json, vocab.txt and `checkpoint` beside it (TensorFlow reading it is the
# compat test tests/compat/test_ckpt_convert_tf.py).
run ckpt-convert -q --to tf -o "$TMP/tf/bert_model.ckpt" "$TINY/bert_model.ckpt"
expect_rc 0 "--to tf into a new directory"
CASES=$((CASES + 1))
[ "$(ls -A "$TMP/tf" | tr '\n' ' ')" = "bert_config.json bert_model.ckpt.data-00000-of-00001 bert_model.ckpt.index checkpoint vocab.txt " ] ||
  fail_case "--to tf files: $(ls -A "$TMP/tf" | tr '\n' ' ')"
run ckpt-convert --list "$TMP/tf/bert_model.ckpt"
expect_rc 0 "--list of the tf output"
CASES=$((CASES + 1))
[ "$(printf '%s\n' "$OUT" | grep -c ' (DT_FLOAT)')" -eq 46 ] || fail_case "tf output: 46 float variables"
cp -r "$TMP/tf" "$TMP/tf-before"
run ckpt-convert -q --to tf -o "$TMP/tf/bert_model.ckpt" "$TINY/bert_model.ckpt"
expect_rc 1 "--to tf over an existing checkpoint"
expect_err "tf/bert_model.ckpt.index: already exists; use -f/--force to replace it" "existing prefix refused"
run ckpt-convert -q --to tf -o "$TMP/tf" "$TINY/bert_model.ckpt"
expect_rc 1 "--to tf -o DIR means DIR/bert_model.ckpt"; expect_err "tf/bert_model.ckpt.index: already exists" "DIR/bert_model.ckpt"
CASES=$((CASES + 1))
diff -r "$TMP/tf-before" "$TMP/tf" >/dev/null || fail_case "a refused --to tf changed the directory"
run ckpt-convert -q -f --keep-optimizer --to tf -o "$TMP/tf/" "$TINY/bert_model.ckpt"
expect_rc 0 "--to tf -f replaces"
CASES=$((CASES + 1))
[ "$(ls -A "$TMP/tf" | tr '\n' ' ')" = "bert_config.json bert_model.ckpt.data-00000-of-00001 bert_model.ckpt.index checkpoint vocab.txt " ] ||
  fail_case "after -f: $(ls -A "$TMP/tf" | tr '\n' ' ')"
run ckpt-convert --list "$TMP/tf/bert_model.ckpt"
CASES=$((CASES + 1))
[ "$(printf '%s\n' "$OUT" | grep -c '/adam_[mv] (DT_FLOAT)')" -eq 92 ] || fail_case "--keep-optimizer: 92 adam_m/adam_v"
run ckpt-convert -q --to tf --do-lower-case true -o "$TMP/tf-lc" "$TINY/bert_model.ckpt"
expect_rc 2 "--do-lower-case with --to tf"; expect_file_absent "$TMP/tf-lc" "no output on a usage error"
run ckpt-convert -q --to tf --pad-vocab 8 -o "$TMP/tf-pad" "$TINY/bert_model.ckpt"
expect_rc 2 "--pad-vocab with --to tf"

# An error leaves nothing: a CRC mismatch in the input, into a new directory and into an existing one.
if [ -n "$WORD_AT" ] && [ "$WORD_AT" -ge 0 ]; then
  copy_tiny
  printf '\x55' | dd of="$TMP/ck/bert_model.ckpt.data-00000-of-00001" bs=1 seek=$((WORD_AT + 17)) conv=notrunc status=none
  run ckpt-convert -q --to tf -o "$TMP/tf-new/bert_model.ckpt" "$TMP/ck/bert_model.ckpt"
  expect_rc 1 "--to tf from a damaged input"; expect_err "CRC32C mismatch" "damage named"
  expect_file_absent "$TMP/tf-new" "no directory after an error"
  mkdir "$TMP/tf-existing"
  run ckpt-convert -q --to tf -o "$TMP/tf-existing/model.ckpt" "$TMP/ck/bert_model.ckpt"
  expect_rc 1 "--to tf from a damaged input into an existing directory"
  CASES=$((CASES + 1))
  [ -z "$(ls -A "$TMP/tf-existing")" ] || fail_case "left behind: $(ls -A "$TMP/tf-existing")"
fi
# A bert_config.json of another model beside the prefix: refused without -f, and nothing written.
mkdir "$TMP/tf-other"
sed 's/"hidden_size": *4/"hidden_size": 8/' "$TINY/bert_config.json" >"$TMP/tf-other/bert_config.json"
run ckpt-convert -q --to tf -o "$TMP/tf-other/model.ckpt" "$TINY/bert_model.ckpt"
expect_rc 1 "another model's bert_config.json"
expect_err "tf-other/bert_config.json: describes another model; use -f/--force to replace it" "config clash named"
CASES=$((CASES + 1))
[ "$(ls -A "$TMP/tf-other")" = "bert_config.json" ] || fail_case "left behind: $(ls -A "$TMP/tf-other")"
run ckpt-convert -q -f --to tf -o "$TMP/tf-other/model.ckpt" "$TINY/bert_model.ckpt"
expect_rc 0 "-f replaces another model's bert_config.json"
CASES=$((CASES + 1))
grep -q '"hidden_size": 4' "$TMP/tf-other/bert_config.json" || fail_case "-f did not write the model's bert_config.json"
CASES=$((CASES + 1))
[ -z "$(ls -A "$TMP" "$TMP"/tf* | grep -E 'partial|\.old$|\.tmp\.')" ] || fail_case "staging files left behind"

# Durability (issue 13, item 21): the staging directory's files and the directory itself are synced before it is
# renamed into place, and its parent after, so a power cut cannot leave OUT looking complete. Needs strace.
if command -v strace >/dev/null; then
  mkdir "$TMP/sync"
  run strace -f -y -e trace=fsync,fdatasync,rename -o "$TMP/strace.log" ckpt-convert -q --to native -o "$TMP/sync/hf" "$TINY/bert_model.ckpt"
  expect_rc 0 "ckpt-convert under strace"
  OUT=$(grep -oE '^[0-9]+ +(fsync\([0-9]+<[^>]*>|rename)' "$TMP/strace.log" | sed -E "s/^[0-9]+ +//; s/\([0-9]+</ /; s/>$//; s|$TMP/sync|S|; s/partial-[0-9]+/partial/" | tail -n 3 | tr '\n' ' ')
  expect_out "fsync S/.hf.partial rename fsync S " "ckpt-convert: staging synced, renamed, parent synced"
  CASES=$((CASES + 1))
  for f in model.safetensors config.json; do
    grep -qE "fsync\([0-9]+<$TMP/sync/\.hf\.partial-[0-9]+/$f>" "$TMP/strace.log" || fail_case "$f not synced in place"
  done
fi
finish
