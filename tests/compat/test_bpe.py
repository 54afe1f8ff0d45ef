"""bpe against Hugging Face tokenizers, on tokenizers trained here (the fixtures hold no byte-level BPE file).

1. train: `bpe train` and BpeTrainer on the same Wikipedia text with the same settings (vocabulary sizes 1,000 and
   8,000, with and without prefix space, NFC): the same vocabulary with the same ids and the same merges in order;
   HF loads our tokenizer.json.
2. encode: every line of the Wikipedia text and of multilingual and edge-case text (bpe_text.py) gives HF's ids,
   for each trained tokenizer and for variants of one that switch on the other components bertkit takes (NFKC
   after NFC, a cl100k Split before ByteLevel, added tokens with lstrip/rstrip/single_word and normalized ones,
   ignore_merges, an unknown token); --special gives HF's ids with the template; vocab.json + merges.txt give
   what the same files give transformers' RobertaTokenizerFast; --threads does not change the output.
3. decode: encode then decode gives the text back byte for byte; random ids decode to HF's decode.
"""
import copy
import json
import os
import random
import subprocess
import sys
import tempfile

from bpe_text import edge_lines
from compat_common import BIN, FIXTURES, Checks, require_fixtures, skip

BPE = os.path.join(BIN, "bpe")
require_fixtures()
try:
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
except Exception as e:  # noqa: BLE001
    skip(f"no tokenizers: {e}")

CL100K = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
          r"\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]


def wiki_text(out):
    """The extract's article lines, without the <doc> markup."""
    with open(f"{FIXTURES}/wiki/mlperf-extracted/wiki_00", encoding="utf-8") as f, open(out, "w", encoding="utf-8") as g:
        for line in f:
            if not line.startswith(("<doc ", "</doc>")) and line.strip():
                g.write(line)


def hf_train(text, size, prefix, nfc, out):
    tok = Tokenizer(models.BPE())
    if nfc:
        tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=prefix)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=size, min_frequency=2, special_tokens=SPECIALS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train([text], trainer)
    tok.save(out)


def merges_of(path):
    return [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in json.load(open(path))["model"]["merges"]]


def read_lines(path):
    data = open(path, "rb").read().split(b"\n")
    if data and data[-1] == b"":
        data.pop()
    return [line[:-1] if line.endswith(b"\r") else line for line in data]


def ours_ids(tokenizer, text, *flags):
    out = subprocess.run([BPE, "encode", "-q", "--tokenizer", tokenizer, "--format", "ids", *flags, text],
                         check=True, capture_output=True).stdout.decode()
    return [[int(x) for x in line.split()] for line in out.split("\n")[:-1]]


def compare_encode(check, hf, tokenizer, text, name, special=False):
    lines = read_lines(text)
    ours = ours_ids(tokenizer, text, *(["--special"] if special else []))
    differ = [i for i, (line, mine) in enumerate(zip(lines, ours))
              if hf.encode(line.decode("utf-8"), add_special_tokens=special).ids != mine]
    for i in differ[:3]:
        print(f"  {name} line {i + 1}: {lines[i][:60]!r}\n    HF   {hf.encode(lines[i].decode(), add_special_tokens=special).ids[:16]}\n    ours {ours[i][:16]}")
    check(len(ours) == len(lines) and not differ, f"{name}: {len(lines) - len(differ)}/{len(lines)} lines identical")


def variants(base_path, tmp):
    """tokenizer.json files that switch on the other components, made from one trained here."""
    base = json.load(open(base_path))
    n = len(base["model"]["vocab"])

    def added(t):
        t["normalizer"] = {"type": "NFD"}
        t["added_tokens"] = [
            {"id": 0, "content": "<s>", "single_word": False, "lstrip": False, "rstrip": False, "normalized": True, "special": True},
            {"id": 4, "content": "<mask>", "single_word": False, "lstrip": True, "rstrip": False, "normalized": False, "special": True},
            {"id": n, "content": "  ", "single_word": False, "lstrip": False, "rstrip": False, "normalized": True, "special": False},
            {"id": n + 1, "content": "   ", "single_word": False, "lstrip": False, "rstrip": False, "normalized": True, "special": False},
            {"id": n + 2, "content": "word", "single_word": True, "lstrip": False, "rstrip": True, "normalized": False, "special": False},
            {"id": n + 3, "content": "caf\u00e9", "single_word": False, "lstrip": False, "rstrip": False, "normalized": True, "special": False},
        ]

    edits = {
        "nfkc": lambda t: t.update(normalizer={"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "NFC"}]}),
        "cl100k": lambda t: t.update(pre_tokenizer={"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": CL100K}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}),
        "added": added,
        "ignore_merges": lambda t: t["model"].update(ignore_merges=True),
        "unk": lambda t: t["model"].update(unk_token="<unk>", fuse_unk=True),
    }
    for name, edit in edits.items():
        t = copy.deepcopy(base)
        edit(t)
        path = os.path.join(tmp, f"variant-{name}.json")
        json.dump(t, open(path, "w"))
        yield name, path


def check_decode(check, hf_path, text, tmp, name, round_trip=True):
    ids = os.path.join(tmp, "ids.txt")
    back = os.path.join(tmp, "back.txt")
    subprocess.run([BPE, "encode", "-q", "-f", "--tokenizer", hf_path, "--format", "ids", "-o", ids, text], check=True)
    subprocess.run([BPE, "decode", "-q", "-f", "--tokenizer", hf_path, "-o", back, ids], check=True)
    if round_trip:  # (a normalizer or a token's lstrip changes the text on the way in)
        check(open(back, "rb").read() == open(text, "rb").read(), f"{name}: decode(encode(text)) is the text, byte for byte")
    hf = Tokenizer.from_file(hf_path)
    rng = random.Random(1)
    size = hf.get_vocab_size(with_added_tokens=True)
    rows = [[rng.randrange(size) for _ in range(rng.randint(0, 30))] for _ in range(1000)]
    with open(ids, "w") as f:
        f.writelines(" ".join(map(str, r)) + "\n" for r in rows)
    ours = subprocess.run([BPE, "decode", "-q", "--tokenizer", hf_path, ids], check=True, capture_output=True).stdout
    theirs = "".join(hf.decode(r, skip_special_tokens=False) + "\n" for r in rows).encode()
    check(ours == theirs, f"{name}: 1,000 lines of random ids decode as HF's decode does")


def main():
    check = Checks()
    with tempfile.TemporaryDirectory() as tmp:
        wiki, edge = os.path.join(tmp, "wiki.txt"), os.path.join(tmp, "edge.txt")
        wiki_text(wiki)
        with open(edge, "w", encoding="utf-8") as f:
            f.writelines(line + "\n" for line in edge_lines())
        trained = []
        for size, prefix, nfc in ((1000, False, False), (8000, False, False), (8000, True, True)):
            name = f"vocab {size}{', prefix space' if prefix else ''}{', NFC' if nfc else ''}"
            theirs, ours = os.path.join(tmp, f"hf-{size}-{prefix}.json"), os.path.join(tmp, f"ours-{size}-{prefix}.json")
            hf_train(wiki, size, prefix, nfc, theirs)
            flags = (["--add-prefix-space"] if prefix else []) + (["--normalizer", "NFC"] if nfc else [])
            subprocess.run([BPE, "train", "-q", "--vocab-size", str(size), "-t", "2", *flags, "-o", ours, wiki], check=True)
            a, b = json.load(open(theirs))["model"]["vocab"], json.load(open(ours))["model"]["vocab"]
            check(a == b, f"train {name}: the same {len(a)} tokens with the same ids as BpeTrainer ({len(b)} ours)")
            check(merges_of(theirs) == merges_of(ours), f"train {name}: the same {len(merges_of(theirs))} merges in order")
            hf_ours = Tokenizer.from_file(ours)
            compare_encode(check, hf_ours, ours, wiki, f"HF with our tokenizer.json ({name}), Wikipedia")
            compare_encode(check, hf_ours, ours, edge, f"HF with our tokenizer.json ({name}), edge cases", special=True)
            trained.append((name, theirs))
        for name, path in trained:
            hf = Tokenizer.from_file(path)
            for text, what in ((wiki, "Wikipedia"), (edge, "edge cases")):
                compare_encode(check, hf, path, text, f"encode {name}, {what}")
        for name, path in variants(trained[1][1], tmp):
            compare_encode(check, Tokenizer.from_file(path), path, edge, f"encode, {name}")
            compare_encode(check, Tokenizer.from_file(path), path, wiki, f"encode, {name}, Wikipedia")
        check_decode(check, trained[1][1], edge, tmp, "decode")
        check_decode(check, os.path.join(tmp, "variant-added.json"), edge, tmp, "decode with added tokens", round_trip=False)

        one = subprocess.run([BPE, "encode", "-q", "-t", "1", "--tokenizer", trained[1][1], wiki], check=True, capture_output=True).stdout
        two = subprocess.run([BPE, "encode", "-q", "-t", "2", "--tokenizer", trained[1][1], wiki], check=True, capture_output=True).stdout
        check(one == two, "--threads 1 and 2 write the same tokens")

        # vocab.json + merges.txt, as RoBERTa and GPT-2 ship them
        pair = os.path.join(tmp, "pair")
        os.mkdir(pair)
        Tokenizer.from_file(trained[1][1]).model.save(pair)
        try:
            from transformers import RobertaTokenizerFast
            roberta = RobertaTokenizerFast(os.path.join(pair, "vocab.json"), os.path.join(pair, "merges.txt"))
            ours = ours_ids(os.path.join(pair, "vocab.json"), edge, "--special")
            lines = [line.decode() for line in read_lines(edge)]
            same = sum(roberta(line)["input_ids"] == mine for line, mine in zip(lines, ours))
            check(same == len(lines), f"vocab.json + merges.txt with --special: {same}/{len(lines)} lines as RobertaTokenizerFast")
        except ImportError:
            print("transformers missing: vocab.json + merges.txt not compared")
    return check.exit_code("compat.bpe")


if __name__ == "__main__":
    sys.exit(main())
