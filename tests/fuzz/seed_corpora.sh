#!/usr/bin/env bash
# Writes a seed corpus per libFuzzer target under OUT/<target>/ from the fixtures (../shared/fixtures, or
# $BERTKIT_FIXTURES), cut to small files so that mutations stay fast:
#   fuzz_safetensors   two small files in the reference layout (written here, as the format is tiny)
#   fuzz_bert_config   fixtures tf_checkpoint/*/bert_config.json and the presets in configs/
#   fuzz_tfrecord      the first records of each fixture under tfrecord/, framed, and each one's payload
#   fuzz_squad         squad/xquad.en.json cut to its first paragraphs
#   fuzz_glue          the first 20 lines of each glue/*/*.tsv
#   fuzz_hdf5_reader   what BUILD/tools/mkpretrain (nvidia, varlength) and BUILD/tools/pack write from the first
#                      lines of pretraining_text/sample_text.txt (skipped without BUILD)
#   fuzz_tf_index      tf_checkpoint/*/bert_model.ckpt.index
#   fuzz_torch_save    small files torch.save itself writes (NVIDIA's layout, a state dict with _metadata, strided,
#                      half and bfloat16 tensors, pickle protocol 4), when a Python with torch is at hand ($PYTHON)
#   hostile-*          in fuzz_torch_save, fuzz_tf_index and fuzz_safetensors: the crafted files of
#                      tests/compat/hostile_checkpoints.py (wrapping offsets and strides, deep nesting, huge keys)
# usage: tests/fuzz/seed_corpora.sh OUT [BUILD]
set -euo pipefail
out=${1:?usage: seed_corpora.sh OUT [BUILD]}
build=${2:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
fixtures=${BERTKIT_FIXTURES:-$root/../shared/fixtures}
mkdir -p "$out"/{fuzz_bzip2,fuzz_gzip,fuzz_safetensors,fuzz_bert_config,fuzz_tfrecord,fuzz_squad,fuzz_glue,fuzz_hdf5_reader,fuzz_tf_index}

python3 - "$out" "$fixtures" <<'PY'
import json, os, struct, sys, glob
out, fx = sys.argv[1], sys.argv[2]

def safetensors(path, tensors, metadata=None):
    header, data = {}, b""
    if metadata: header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + data)
safetensors(f"{out}/fuzz_safetensors/small.safetensors",
            [("bert.embeddings.word_embeddings.weight", "F32", [2, 3], struct.pack("<6f", *range(6))),
             ("cls.predictions.bias", "I64", [2], struct.pack("<2q", 1, -1))], {"format": "pt"})
safetensors(f"{out}/fuzz_safetensors/scalar_bf16.safetensors",
            [("a", "BF16", [], b"\x80\x3f"), ("b", "U8", [0], b""), ("c", "BOOL", [1, 1], b"\x01")])

def records(path):
    data = open(path, "rb").read()
    pos = 0
    while pos + 12 <= len(data):
        n = struct.unpack_from("<Q", data, pos)[0]
        yield data[pos:pos + 16 + n], data[pos + 12:pos + 12 + n]
        pos += 16 + n
for path in glob.glob(f"{fx}/tfrecord/*/*"):
    framed = list(records(path))[:3]
    stem = os.path.basename(os.path.dirname(path)) + "-" + os.path.basename(path).split(".")[0]
    open(f"{out}/fuzz_tfrecord/{stem}.tfrecord", "wb").write(b"".join(f for f, _ in framed))
    open(f"{out}/fuzz_tfrecord/{stem}.example", "wb").write(framed[0][1])

# bzip2: small files at levels 1 and 9, two streams back to back, and a text of runs (the run-length stage).
import bz2
text = open(f"{fx}/wiki/mlperf-extracted/wiki_00", "rb").read()[:20000]
open(f"{out}/fuzz_bzip2/text9.bz2", "wb").write(bz2.compress(text, 9))
open(f"{out}/fuzz_bzip2/text1.bz2", "wb").write(bz2.compress(text[:3000], 1))
open(f"{out}/fuzz_bzip2/multistream.bz2", "wb").write(bz2.compress(text[:500]) + bz2.compress(text[500:900]))
# gzip: one member, several (one stored, with a header's bytes inside it), an empty member.
import gzip
open(f"{out}/fuzz_gzip/one.gz", "wb").write(gzip.compress(text[:4000]))
open(f"{out}/fuzz_gzip/members.gz", "wb").write(gzip.compress(text[:700]) + gzip.compress(b"\x1f\x8b\x08\x00" + text[700:900], 0)
                                                 + gzip.compress(b"") + gzip.compress(text[900:1500], 9))
open(f"{out}/fuzz_bzip2/runs.bz2", "wb").write(bz2.compress(b"".join(bytes([65 + n % 26]) * n for n in range(1, 300))))
# A block of 48,000 symbols in under 2 KB (the text repeated, one byte changed per repeat): above the size from which
# the inverse BWT is walked in segments (io/inverse_bwt.cpp), so mutations reach that walk and its fallback.
long = bytearray(text[:2000] * 24)
for k in range(24): long[k * 2000 + k * 37] = 65 + k
open(f"{out}/fuzz_bzip2/long-block.bz2", "wb").write(bz2.compress(bytes(long), 9))

squad = json.load(open(f"{fx}/squad/xquad.en.json"))
article = squad["data"][0]
for n in (1, 2):
    cut = {"version": squad.get("version", "1.1"), "data": [dict(article, paragraphs=article["paragraphs"][:n])]}
    json.dump(cut, open(f"{out}/fuzz_squad/xquad-{n}.json", "w"))
# the version 2.0 shape: is_impossible, and an unanswerable question
p = json.loads(json.dumps(article["paragraphs"][0]))
for q in p["qas"]: q["is_impossible"] = False
p["qas"].append({"id": "x-neg", "question": "Who?", "answers": [], "is_impossible": True})
json.dump({"version": "v2.0", "data": [{"title": "t", "paragraphs": [p]}]}, open(f"{out}/fuzz_squad/v2.json", "w"))

for path in glob.glob(f"{fx}/glue/*/*.tsv"):
    lines = open(path, "rb").read().split(b"\n")[:20]
    task = os.path.basename(os.path.dirname(path))
    open(f"{out}/fuzz_glue/{task}-{os.path.basename(path)}", "wb").write(b"\n".join(lines) + b"\n")
PY

python_torch=${PYTHON:-$HOME/.cache/bertkit/venv/bin/python}
mkdir -p "$out/fuzz_torch_save"
if "$python_torch" -c 'import torch' 2>/dev/null; then
  "$python_torch" - "$out/fuzz_torch_save" <<'PY'
import collections, sys, torch
out = sys.argv[1]
torch.manual_seed(0)
sd = collections.OrderedDict([("bert.pooler.dense_act.weight", torch.randn(3, 3)), ("cls.predictions.bias", torch.randn(4)),
                              ("bert.embeddings.position_ids", torch.arange(4))])
sd._metadata = collections.OrderedDict({"": {"version": 1}})
torch.save({"model": sd, "optimizer": {"state": {}, "param_groups": [{"lr": 1e-3, "params": [0, 1]}]},
            "files": [1, "part.hdf5"], "epoch": 2, "data_loader": None}, f"{out}/nvidia.pt")
torch.save(sd, f"{out}/state_dict.bin")
torch.save({"w": torch.randn(2, 3).t(), "h": torch.randn(3).half(), "b": torch.randn(2, 2).bfloat16(),
            "p": torch.nn.Parameter(torch.randn(2))}, f"{out}/strided.pt", pickle_protocol=4)
PY
fi

for f in "$fixtures"/tf_checkpoint/*/bert_config.json; do
  cp "$f" "$out/fuzz_bert_config/$(basename "$(dirname "$f")").json"
done
cp "$root"/configs/*.json "$out/fuzz_bert_config/" 2>/dev/null || true
for f in "$fixtures"/tf_checkpoint/*/bert_model.ckpt.index; do
  cp "$f" "$out/fuzz_tf_index/$(basename "$(dirname "$f")").index"
done
python3 "$root/tests/compat/hostile_checkpoints.py" "$out"

if [[ -n $build ]]; then
  # Small files (L=16, P=2, a few rows): mutations of a large HDF5 file mostly hit raw data.
  h5=$out/fuzz_hdf5_reader
  head -n 12 "$fixtures/pretraining_text/sample_text.txt" >"$h5/corpus.txt.tmp"
  for layout in nvidia varlength; do
    "$build"/tools/mkpretrain -q -f --vocab "$fixtures/vocab/bert-base-uncased-vocab.txt" --max-seq-length 16 \
      --max-predictions 2 --dupe-factor 1 --format hdf5 --layout $layout -o "$h5/$layout.hdf5" "$h5/corpus.txt.tmp"
  done
  "$build"/tools/pack -q -f --gzip 1 --max-seq-length 32 -o "$h5/packed.hdf5" "$h5/nvidia.hdf5"
  rm "$h5/corpus.txt.tmp"
fi
