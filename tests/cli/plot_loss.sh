#!/usr/bin/env bash
# scripts/plot_loss.py (the demo's loss plot) on real bert-train logs: tests/fixtures/bert-train-log.jsonl, kept so
# that builds without LibTorch test the plot too (the log of the demo's bert-train step, scripts/demo.sh step 7,
# run with --eval-input on the test shard's 87 samples and --eval-every-samples 1600: 12 step records,
# 6 evaluations, 3 checkpoint events), and the log of a fresh short run with evaluations (below) when this build
# has bert-train. The PNG is checked with an independent reader (chunk CRCs, size, decoded by Pillow: an image with
# text and lines, not a blank or a bare line), its one-line report against the log read independently; bad inputs
# give one error line, exit 1 and no output file.
source "$(dirname "$0")/lib.sh"
PY=${PYTHON:-python3}
[ -x "$PY" ] || PY=python3
if ! "$PY" -c 'import matplotlib, PIL' 2>/dev/null; then
  echo "skipped: $PY has no matplotlib (scripts/setup.sh --torch installs it)"; exit 77
fi
PLOT=$SRC/scripts/plot_loss.py

logs=()
[ -f "$SRC/tests/fixtures/bert-train-log.jsonl" ] && logs+=("$SRC/tests/fixtures/bert-train-log.jsonl")
if [ -x "$BIN/bert-train" ] && [ -n "$FIXTURES" ] && [ -d "$FIXTURES" ]; then
  VOCAB=$FIXTURES/vocab/bert-base-uncased-vocab.txt
  mkpretrain -q --vocab "$VOCAB" --max-seq-length 64 --max-predictions 10 --dupe-factor 5 -o "$TMP/data.hdf5" \
    "$FIXTURES/pretraining_text/sample_text.txt"
  mkpretrain -q --vocab "$VOCAB" --max-seq-length 64 --max-predictions 10 --dupe-factor 1 --seed 9 -o "$TMP/eval.hdf5" \
    "$FIXTURES/pretraining_text/sample_text.txt"
  run env OMP_NUM_THREADS=1 bert-train -q --precision fp32 --config "$SRC/tests/fixtures/tiny_bert_config.json" --input "$TMP/data.hdf5" \
    --output-dir "$TMP/run" --train-batch-size 8 --max-steps 24 --log-every 2 --learning-rate 2e-2 \
    --warmup-proportion 0.2 --eval-input "$TMP/eval.hdf5" --eval-samples 16 --eval-every-samples 64 --seed 7
  expect_rc 0 "a short bert-train run with evaluations"
  logs+=("$TMP/run/log.jsonl")
fi
if [ ${#logs[@]} = 0 ]; then echo "skipped: no fixture log and no bert-train in this build"; exit 77; fi

for log in "${logs[@]}"; do
  # What the report must say, read from the log here (the later record of a step wins, as after a resume).
  expected=$("$PY" - "$log" "$TMP/loss.png" <<'EOF'
import json, sys
steps, evals = {}, set()
for line in open(sys.argv[1]):
    d = json.loads(line)
    if "loss" in d: steps[d["step"]] = d["loss"]
    elif any(k.startswith("eval_") for k in d): evals.add(d["step"])
s = sorted(steps)
print(f"{sys.argv[2]}: {len(s)} logged steps ({s[0]}-{s[-1]}), {len(evals)} evaluations, "
      f"loss {steps[s[0]]:.4g} -> {steps[s[-1]]:.4g}, learning rate on the right axis")
EOF
)
  rm -f "$TMP/loss.png"
  run "$PY" "$PLOT" "$log" "$TMP/loss.png"
  expect_rc 0 "plot_loss.py ${log#"$TMP"/}"
  expect_out "$expected" "its report"
  run "$PY" - "$TMP/loss.png" <<'EOF'
import struct, sys, zlib
from PIL import Image
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "PNG signature"
pos, kinds = 8, []
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    assert struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0] == zlib.crc32(kind + body), f"CRC of {kind}"
    kinds.append(kind)
    if kind == b"IHDR": width, height = struct.unpack(">II", body[:8])
    pos += 12 + n
assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND" and b"IDAT" in kinds, kinds
assert 800 <= width <= 3000 and 400 <= height <= 2000, (width, height)
assert 20_000 <= len(data) <= 2_000_000, len(data)
image = Image.open(sys.argv[1]).convert("RGB")
assert image.size == (width, height)
colours = image.getcolors(1 << 24)
white = sum(c for c, rgb in colours if rgb == (255, 255, 255))
ink = 1 - white / (width * height)
assert len(colours) > 100, f"{len(colours)} colours: no anti-aliased text and lines"
assert 0.02 < ink < 0.5, f"{ink:.3f} of the image is not white"
print(f"{width}x{height}, {len(data)} bytes, {len(colours)} colours, {ink:.1%} ink")
EOF
  expect_rc 0 "a valid PNG of a plausible size and content: $OUT"
  echo "${log#"$TMP"/}: $OUT"
done
CASES=$((CASES + 1))
[ -z "$(ls "$TMP" | grep '\.tmp\.')" ] || fail_case "a temporary was left: $(ls "$TMP")"

# Bad inputs: one error line, exit 1, no output file.
printf '{"step": 1, "time": 1.5, "event": "saved checkpoint"}\n' >"$TMP/events.jsonl"
head -1 "${logs[0]}" | cut -c1-40 >"$TMP/cut.jsonl"; printf '{"step": 2, "time": 1.5, "event": "x"}\n' >>"$TMP/cut.jsonl"
bad=("$TMP/missing.jsonl:No such file or directory"
     "$SRC/configs/bert-base.json:bert-base.json:1: not a JSON object: is it bert-train's log.jsonl"
     "$TMP/events.jsonl:no step records"
     "$TMP/cut.jsonl:cut.jsonl:1: not a JSON object"
     "$BIN/wiki-clean:not UTF-8 text")
for case in "${bad[@]}"; do
  input=${case%%:*} message=${case#*:}
  rm -f "$TMP/bad.png"
  run "$PY" "$PLOT" "$input" "$TMP/bad.png"
  expect_rc 1 "plot_loss.py ${input##*/}"
  expect_err "^plot_loss.py: error: .*$message" "${input##*/}: the error says why"
  CASES=$((CASES + 1)); [ "$(printf '%s\n' "$ERR" | wc -l)" = 1 ] || fail_case "${input##*/}: more than one line: $ERR"
  CASES=$((CASES + 1)); [ ! -e "$TMP/bad.png" ] || fail_case "${input##*/}: an output was written"
done
run "$PY" "$PLOT" "${logs[0]}" "$TMP/no-such-dir/x.png"
expect_rc 1 "an output directory that does not exist"
expect_err "^plot_loss.py: error: .*no-such-dir/x.png: No such file or directory$" "names the output"
finish
