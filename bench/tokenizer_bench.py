"""`wordpiece encode` or `bpe encode` vs Hugging Face tokenizers (Rust) on the same text, measured in one run.

--kind wordpiece: HF is set up as BERT uncased: BertNormalizer(clean_text, handle_chinese_chars, strip_accents,
lowercase) + BertPreTokenizer + WordPiece(vocab, [UNK], max_input_chars_per_word=200). Line agreement: HF differs
by design in a few places (per-character lower-casing without the final-sigma rule, its own control/whitespace
tables).
--kind bpe: HF is Tokenizer.from_file(the same tokenizer.json); every line must agree.

No special tokens are added on either side. HF's time covers encode_batch only (reading the file and extracting
tokens are not counted), ours is the whole process (loading the vocabulary, reading, writing the token lines to a
file), so ours does more. Both wall-clock and CPU seconds are reported: on a busy machine the CPU figures are the
fairer per-core comparison. Line agreement is measured on the first copy of the text.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def hf_tokenizer(kind, vocab):
    from tokenizers import Tokenizer, normalizers, pre_tokenizers
    if kind == "bpe":
        return Tokenizer.from_file(vocab)
    from tokenizers.models import WordPiece
    tok = Tokenizer(WordPiece.from_file(vocab, unk_token="[UNK]", max_input_chars_per_word=200))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=True,
                                                lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return tok


def hf_worker(args):
    """Runs in its own process so RAYON_NUM_THREADS takes effect; prints JSON on stdout."""
    tok = hf_tokenizer(args.kind, args.vocab)
    with open(args.text, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    tokens, wall, cpu = 0, 0.0, 0.0
    first = []
    for start in range(0, len(lines), 8192):
        batch = lines[start:start + 8192]
        w0, c0 = time.perf_counter(), time.process_time()
        encodings = tok.encode_batch(batch, add_special_tokens=False)
        wall += time.perf_counter() - w0
        cpu += time.process_time() - c0
        tokens += sum(len(e.ids) for e in encodings)
        if start < args.agree_lines:
            first.extend(" ".join(e.tokens) for e in encodings)
    json.dump({"tokens": tokens, "wall": wall, "cpu": cpu, "first": first[:args.agree_lines]}, sys.stdout)


def run_hf(python, kind, vocab, text, threads, agree_lines):
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads), TOKENIZERS_PARALLELISM="true")
    out = subprocess.run([python, __file__, "--hf-worker", "--kind", kind, "--vocab", vocab, "--text", text,
                          "--agree-lines", str(agree_lines)], env=env, check=True, stdout=subprocess.PIPE)
    return json.loads(out.stdout)


def run_ours(kind, tool, vocab, text, threads, out_path):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.perf_counter()
    vocab_flag = "--tokenizer" if kind == "bpe" else "--vocab"
    subprocess.run([tool, "encode", "-q", "-f", vocab_flag, vocab, "--threads", str(threads), "-o", out_path, text],
                   check=True)
    wall = time.perf_counter() - w0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with open(out_path, encoding="utf-8") as f:
        lines = f.read().split("\n")[:-1]
    return {"tokens": sum(len(l.split()) for l in lines), "wall": wall, "cpu": cpu, "lines": lines}


def best(runs):
    return min(runs, key=lambda r: r["wall"]) | {"cpu": min(r["cpu"] for r in runs)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--hf-worker", action="store_true")
    p.add_argument("--kind", choices=("wordpiece", "bpe"), default="wordpiece")
    p.add_argument("--tool", help="the wordpiece or bpe executable")
    p.add_argument("--vocab", required=True, help="vocab.txt (wordpiece) or tokenizer.json (bpe)")
    p.add_argument("--text", required=True, help="source text; repeated to --mb megabytes")
    p.add_argument("--mb", type=float, default=20)
    p.add_argument("--repeats", type=int, default=2, help="runs per configuration; the fastest counts")
    p.add_argument("--agree-lines", type=int, default=0)
    args = p.parse_args()
    if args.hf_worker:
        return hf_worker(args)

    with open(args.text, "rb") as f:
        source = f.read()
    if not source.endswith(b"\n"):
        source += b"\n"
    copies = max(1, int(args.mb * 1e6 / len(source) + 0.5))
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp:
        text = os.path.join(tmp, "text.txt")
        with open(text, "wb") as f:
            for _ in range(copies):
                f.write(source)
        size_mb = os.path.getsize(text) / 1e6
        first_lines = source.count(b"\n")
        print(f"text: {args.text} x {copies} = {size_mb:.1f} MB, {first_lines * copies} lines; {args.kind}: "
              f"vocab: {os.path.basename(args.vocab)}; {cores} cores")
        rows = []
        for threads in (1, cores):
            ours = best([run_ours(args.kind, args.tool, args.vocab, text, threads, os.path.join(tmp, "ours.txt"))
                         for _ in range(args.repeats)])
            hf = best([run_hf(sys.executable, args.kind, args.vocab, text, threads, first_lines)
                       for _ in range(args.repeats)])
            rows.append((threads, ours, hf))
        print(f"{'threads':>7} {'ours Mtok/s':>12} {'HF Mtok/s':>10} {'ratio':>6} {'ours CPU Mtok/s':>16} "
              f"{'HF CPU Mtok/s':>14} {'CPU ratio (per core)':>21} {'ours CPU MB/s':>14} {'HF CPU MB/s':>12}")
        for threads, ours, hf in rows:
            o_wall, h_wall = ours["tokens"] / ours["wall"] / 1e6, hf["tokens"] / hf["wall"] / 1e6
            o_cpu, h_cpu = ours["tokens"] / ours["cpu"] / 1e6, hf["tokens"] / hf["cpu"] / 1e6
            print(f"{threads:>7} {o_wall:>12.2f} {h_wall:>10.2f} {o_wall / h_wall:>6.2f} {o_cpu:>16.2f} {h_cpu:>14.2f} "
                  f"{o_cpu / h_cpu:>21.2f} {size_mb / ours['cpu']:>14.1f} {size_mb / hf['cpu']:>12.1f}")
        ours_first = rows[0][1]["lines"][:first_lines]
        hf_first = rows[0][2]["first"]
        agree = sum(a == b for a, b in zip(ours_first, hf_first))
        print(f"token counts: ours {rows[0][1]['tokens']}, HF {rows[0][2]['tokens']}; "
              f"identical lines (first copy): {agree}/{first_lines} ({100.0 * agree / max(1, first_lines):.2f}%)")
        shown = 0
        for number, (a, b) in enumerate(zip(ours_first, hf_first), 1):
            if a == b or shown == 3:
                continue
            shown += 1
            x, y = a.split(), b.split()
            at = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
            print(f"  line {number} differs at token {at}: ours {x[at:at + 4]} HF {y[at:at + 4]}")

if __name__ == "__main__":
    sys.exit(main())
