"""wordpiece train against Hugging Face tokenizers' BertWordPieceTokenizer.train on the same corpus.

The two learn with the same knobs (vocab size, min frequency, alphabet limit, special tokens, lower-casing) and the
same merge rule; they differ in how words are found (ours: google-research/bert's BasicTokenizer rules, so the
vocabulary fits `wordpiece encode`; HF: its BertNormalizer and BertPreTokenizer) and in tie-breaking. Prints the
vocabulary overlap and the tokens per word each vocabulary gives on the corpus, then asserts that they are close,
that our vocabulary is read by `encode`, and that --threads does not change the file.
"""
import os
import subprocess
import sys
import tempfile

from compat_common import BIN, FIXTURES, require_fixtures, skip

WORDPIECE = os.path.join(BIN, "wordpiece")
require_fixtures()
try:
    from tokenizers import BertWordPieceTokenizer
except Exception as e:  # noqa: BLE001
    skip(f"no tokenizers: {e}")


def corpus(path, out):
    with open(path, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as g:
        title = False
        for line in f:
            if line.startswith("<doc "):
                title = True
                continue
            if line.startswith("</doc>"):
                g.write("\n")
                continue
            if title:
                title = False
                continue
            if line.strip():
                g.write(line)


def tokens_per_word(vocab, text):
    """Encode with our tokenizer (the one the vocabulary is for) and count tokens per whitespace word."""
    out = subprocess.run([WORDPIECE, "encode", "-q", "--vocab", vocab, text], check=True, capture_output=True,
                         text=True).stdout
    words = sum(len(line.split()) for line in open(text, encoding="utf-8"))
    tokens = sum(len(line.split()) for line in out.splitlines())
    unk = sum(line.split().count("[UNK]") for line in out.splitlines())
    return tokens / words, unk


def main():
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        text = f"{tmp}/wiki.txt"
        corpus(f"{FIXTURES}/wiki/mlperf-extracted/wiki_00", text)
        for size in (5000, 12000):
            ours = f"{tmp}/ours-{size}.txt"
            subprocess.run([WORDPIECE, "train", "-q", "--vocab-size", str(size), "-t", "2", "-o", ours, text], check=True)
            again = f"{tmp}/again-{size}.txt"
            subprocess.run([WORDPIECE, "train", "-q", "--vocab-size", str(size), "-t", "1", "-o", again, text], check=True)
            hf = BertWordPieceTokenizer(lowercase=True, strip_accents=True, clean_text=True, handle_chinese_chars=True)
            hf.train([text], vocab_size=size, min_frequency=2, limit_alphabet=1000,
                     special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], show_progress=False)
            hf.save_model(tmp, f"hf-{size}")
            theirs = f"{tmp}/hf-{size}-vocab.txt"
            a = [line.rstrip("\n") for line in open(ours, encoding="utf-8")]
            b = [line.rstrip("\n") for line in open(theirs, encoding="utf-8")]
            overlap = len(set(a) & set(b)) / len(set(b))
            ours_tpw, ours_unk = tokens_per_word(ours, text)
            hf_tpw, hf_unk = tokens_per_word(theirs, text)
            same_file = open(ours, "rb").read() == open(again, "rb").read()
            print(f"vocab {size}: ours {len(a)} tokens, HF {len(b)}; overlap {overlap:.1%} of HF's; first 5 equal: "
                  f"{a[:5] == b[:5]}; tokens/word ours {ours_tpw:.4f} ([UNK] {ours_unk}), HF's vocab {hf_tpw:.4f} "
                  f"([UNK] {hf_unk}); threads 1 vs 2 same file: {same_file}")
            ok &= len(a) == size and a[:5] == b[:5] and same_file
            ok &= overlap >= 0.85 and ours_tpw <= hf_tpw * 1.02
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
