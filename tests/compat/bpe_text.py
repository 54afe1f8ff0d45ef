"""Text that exercises byte-level BPE tokenizers: fixed edge cases (contractions in both cases, runs of every kind
of white space, scripts without spaces, combining marks and their composed forms, ligatures and other NFKC
targets, emoji with joiners, controls, astral letters and digits, special-token look-alikes) and seeded random
lines drawn from a dozen Unicode blocks. Shared by the compat tests of `bpe`."""
import random

FIXED = [
    "Hello, world!", "  leading spaces", "trailing spaces   ", "tabs\tand\t\tmore", "I'm you're we've they'll he'd it's",
    "'s 't 're 'S 'T 'RE 'Ll", "don't DON'T Don'T", "numbers 1234567 and 3.14159 and \u0661\u0662\u0663 and \u2167",
    "\u6771\u4eac\u90fd\u306f\u65e5\u672c\u306e\u9996\u90fd\u3067\u3059\u3002", "\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac",
    "\u0420\u0443\u0441\u0441\u043a\u0438\u0439 \u0442\u0435\u043a\u0441\u0442, \u0451\u0436\u0438\u043a",
    "\u0639\u0631\u0628\u0649 \u0646\u0635", "emoji \U0001f600\U0001f44d\U0001f3fd family \U0001f468\u200d\U0001f469\u200d\U0001f467",
    "caf\u00e9 cafe\u0301 \u00c5 A\u030a \u212b", "\ufb01 ligature \u00b2 \u00bd \u216b \uff21\uff22", "nbsp\u00a0here",
    "nel\u0085here", "line\u2028sep", "ideographic\u3000space", "<s> special </s>", "a <mask> token", "a<mask>b",
    "<pad><unk>", "  ", "\u200b zero width", "x" * 300, "a" + " " * 50 + "b", "!!!???...", " !!! ",
    "'hello' \"quoted\"", "\u017f long s '\u017f", "\x7f\x01\x1f controls", "mixed123abc456", "\U0001f642" * 4,
    "\ud7ff\ue000\uffff", "\U0001d518\U0001d52b \U0001d7d9\U0001d7da", "\r in the middle", "a word here",
    "words and word.", "xword wordx", "word  next", "a   b    c", "<s>x<s> <mask>  <mask>", "\u00e9t\u00e9",
]
BLOCKS = [(0x20, 0x7e), (0xa0, 0x24f), (0x300, 0x36f), (0x370, 0x3ff), (0x400, 0x4ff), (0x590, 0x6ff), (0x900, 0x97f),
          (0x3040, 0x30ff), (0x4e00, 0x4e80), (0xac00, 0xac40), (0x1f300, 0x1f64f), (0x2000, 0x206f),
          (0xff00, 0xffef), (0x10000, 0x1007f)]
PIECES = ["\t", "  ", "'s", "'", "<s>", "<mask>", "\u00a0", "\u3000", "word", " word "]


def random_line(rng):
    out = []
    for _ in range(rng.randint(0, 40)):
        r = rng.random()
        if r < 0.2:
            out.append(" ")
        elif r < 0.26:
            out.append(rng.choice(PIECES))
        else:
            lo, hi = rng.choice(BLOCKS)
            c = rng.randint(lo, hi)
            out.append(chr(0x41 if 0xd800 <= c <= 0xdfff else c))
    return "".join(out)


def edge_lines(count=2000, seed=0):
    rng = random.Random(seed)
    lines = FIXED + [random_line(rng) for _ in range(count)]
    return [line.replace("\n", " ") for line in lines]
