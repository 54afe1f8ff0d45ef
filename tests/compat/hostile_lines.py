"""Hostile input lines for the WordPiece compat test (our own fixtures, generated, not copied).

Every line is a Python str without '\n' or '\r' inside, so one input line gives one output line. Lines may hold
U+2028, U+0085, U+001C..U+001E: the test splits files on '\n' only, never with str.splitlines().

  hostile_lines()      hand-written cases, one rule or trap per line
  unicode15_lines()    characters assigned in Unicode 15.0 (ICU 72) but not in 14.0 (Python 3.11)
  every_char_lines()   every assigned code point in a few contexts
  fuzz_lines(seed, n)  random lines mixing the interesting character classes (only characters that Python's
                       Unicode 14.0 database assigns, so any difference there is a real one)
  cjk_lines(vocab, seed, n)  random Chinese text built from a Chinese vocabulary's single characters
"""
import random
import unicodedata

_HAND_WRITTEN = [
    # clean step: NUL, U+FFFD, C0/C1 controls and DEL are dropped; \t is a space
    "Ctrl\x01chars\x7f and\x00nul \ufffdreplacement\x0bvt\x0cff\ttab\x1bescape\x9fc1",
    # format characters (Cf) are dropped, joining what they separated
    "soft\u00adhyphen zero\u200bwidth zw\u200cnj zw\u200dj bom\ufeffmid lrm\u200e rlm\u200f word\u2060joiner "
    "\u202aembedded\u202c \u2066isolate\u2069 tag\U000e0061\U000e007f",
    # emoji with skin-tone modifiers, ZWJ sequences, flags, keycaps and variation selectors
    "family \U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466 thumbs \U0001F44D\U0001F3FD flag "
    "\U0001F1E9\U0001F1EA keycap 1\ufe0f\u20e3 heart \u2764\ufe0f smile\U0001F600end",
    # combining marks: accents stripped when uncased, kept (and glued) when cased
    "e\u0301 a\u0308\u0304 Z\u0351\u0358 cafe\u0301 \u0301alone q\u0323\u0307 .\u0301 x\u20dd enclosed",
    "Z\u0300\u0301\u0302\u0303\u0304\u0305\u0306\u0307\u0308\u0309\u030a\u030b\u030c\u030d\u030e\u030fALGO t\u0361s",
    # Chinese characters get spaces; CJK punctuation, kana and U+3007 do not count as Chinese
    "\u4e2d\u6587\u5b57\u7b26\u6d4b\u8bd5\uff0c\u6807\u70b9\u3002\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8"
    "\u3001\u30ab\u30bf\u30ab\u30ca\u3007abc\u4e2ddef",
    # extension planes B..F, compatibility ideographs (NFD maps them to unified ones when uncased)
    "\U00020000\U00020001x \U0002A700 \U0002B740 \U0002B820 \U0002CEAF \U0002F800 \U0002FA1D \uf900\ufa0e\ufa6d "
    "\U00030000 \U0002EBE0",
    # Hangul syllables (NFD turns them into jamo) and conjoining jamo
    "\ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8\uc785\ub2c8\ub2e4 \u1100\u1161\u11a8 \u3131\u314f",
    # Greek final sigma: only Python's full lower() with the Final_Sigma context gets these right
    "\u039f\u0394\u039f\u03a3 \u039f\u0394\u039f\u03a3. \u03a3 \u0391\u03a3.\u0391 \u03a3\u0391\u03a3 "
    "\u1f48\u03b4\u03c5\u03c3\u03c3\u03b5\u03cd\u03c2 \u038c\u03a3\u039f\u03a3' \u0391\u03a3\u0301 \u03c3\u03a3 "
    "\u0391\u00ad\u03a3 \u0391\u03a3\u00ad\u0391",
    # separators: Zs become spaces, U+2028/U+2029 split like str.split(), C0 separators and NEL are dropped
    "line\u2028sep para\u2029sep nbsp\u00a0here en\u2000quad\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200athin ideographic\u3000space ogham\u1680space narrow\u202fnbsp math\u205fspace nel\x85next "
    "fs\x1cgs\x1drs\x1eus\x1fend mongolian\u180evs",
    # words longer than 200 characters become [UNK]; exactly 200 do not
    "a" * 250,
    "ab" * 100,
    "x" * 201,
    "\u00e9" * 150 + " " + "\u00e9" * 210,
    "e\u0301" * 100 + " " + "E\u0301" * 101,
    "!" * 300 + " " + "word" * 60 + "." + "b" * 199,
    # private use and noncharacters are ordinary letters to BERT
    "\ue000\uf8ff \U000f0000 priv\ue123ate \ufdd0 \ufffe \uffff \U0010fffd",
    # special lowercasing: U+0130 becomes i + U+0307 (then the accent is stripped), dotless i stays
    "\u0130stanbul \u0130 i\u0307 \u0131 I\u0131 D\u0130YARBAKIR \u0130\u0301",
    "Stra\u00dfe STRASSE \u00df \u1e9e \u0132 \u0133 \u01c5 \u01c8 \u01cb \u01c4",
    # ligatures, fullwidth forms, mathematical alphanumerics, letterlike symbols
    "\ufb01nance \ufb02ow \ufb00 \ufb03 \ufb06 \u0587",
    "\uff21\uff22\uff23 \uff46\uff55\uff4c\uff4c\uff57\uff49\uff44\uff54\uff48 \uff11\uff12\uff13 \uff01\uff1f",
    "\U0001d400\U0001d401\U0001d402 \U0001d465\U0001d466\U0001d467 \U0001d538\U0001d539 \U0001d7d8\U0001d7d9 "
    "\u212a \u2126 \u212b \u2160\u2161 \u24b6\u24b7",
    # right-to-left scripts with their marks
    "\u05e2\u05d1\u05e8\u05d9\u05ea \u0627\u0644\u0639\u0631\u0628\u064a\u0629 \u0645\u064e\u0631\u0652"
    "\u062d\u064e\u0628\u064b\u0627 \u200f(rtl)\u200e \u05e9\u05b8\u05c1\u05dc\u05d5\u05b9\u05dd",
    # other scripts: Cyrillic, Vietnamese, Thai, Devanagari, Cherokee (lowercases outside its block)
    "\u041f\u0420\u0418\u0412\u0415\u0422 \u041c\u0438\u0440 \u0401\u0416 Ti\u1ebfng Vi\u1ec7t "
    "\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22 \u0928\u092e\u0938\u094d\u0924\u0947 \u13a3\u13b3\u13a9",
    # Greek with iota subscripts and the combining ypogegrammeni
    "\u1fbc \u1ffc \u0390 \u1f88 \u0345 \u0399\u0308\u0301",
    # ASCII punctuation (including symbols BERT counts as punctuation) and BERT's special tokens
    "$100.00 <tag> a^b `code` x|y ~tilde {brace} [UNK] [CLS] ##hash #tag @user 50% a+b=c \\back/slash",
    "rock'n'roll don\u2019t l'\u00e9cole \u00abguillemets\u00bb \u201cquotes\u201d \u2014dash\u2013 \u2026 \u00bfqu\u00e9?",
    "\u300c\u300d\u300e\u300f\u3010\u3011 \u00a7\u00b6 \u2020\u2021 \u2030 \u00b7 \u0387 \u037e",
    # numbers and symbols that are not punctuation
    "x\u00b2 \u00bd \u2460 \u0663\u0664 \u00a9\u00ae\u2122 \u20ac5 \u00a3 \u00b0C",
    # empty, blank and all-dropped lines give empty output lines
    "",
    "   \t  ",
    "\x01\x02\u200b\ufeff",
    "\u3000\u2003",
    # a long mixed line
    " ".join(["Mixed\u00e9 ASCII, \u4e2d\u6587 \u039f\u03a3 na\u00efve"] * 200),
]


def hostile_lines():
    return list(_HAND_WRITTEN)


def unicode15_lines():
    # Kawi (U+11F00 Mn, U+11F04 Lo, U+11F43 Po), Egyptian hieroglyph format controls U+13439..U+1343F (Cf),
    # CJK Extension H U+31350 (Lo, outside BERT's Chinese ranges), Arabic Extended-C U+10EFD (Mn),
    # Nag Mundari U+1E4D0 (Lo) and U+1E4EC (Mn), Kannada U+0CF3 (Mc). All unassigned (Cn) in Unicode 14.0.
    return [
        "kawi\U00011F00 \U00011F04\U00011F00x \U00011F04\U00011F43y",
        "egyptian\U00013439format\U0001343F",
        "ext-h \U00031350\U00031351",
        "arabic\U00010EFD \U0001E4D0\U0001E4EC \u0CF3",
    ]


def _assigned(cp):
    return unicodedata.category(chr(cp)) not in ("Cn", "Cs")


_BUCKETS = [
    (0x61, 0x7A), (0x41, 0x5A), (0x30, 0x39), (0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E),
    (0x00, 0x1F), (0x7F, 0x9F), (0xA0, 0xFF), (0x100, 0x24F), (0x300, 0x36F), (0x370, 0x3FF), (0x3A3, 0x3A3),
    (0x400, 0x4FF), (0x590, 0x6FF), (0x900, 0x97F), (0xE00, 0xE7F), (0x1E00, 0x1FFF), (0x2000, 0x206F),
    (0x20A0, 0x214F), (0x2E00, 0x2E7F), (0x3000, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7A3),
    (0xF900, 0xFAFF), (0xFB00, 0xFB4F), (0xFE00, 0xFE6F), (0xFF00, 0xFFEF), (0x10400, 0x1044F),
    (0x1D400, 0x1D7FF), (0x1F300, 0x1FAFF), (0x20000, 0x2A6DF), (0x2F800, 0x2FA1F), (0xE0000, 0xE007F),
    (0x0, 0xFFFF), (0x10000, 0x3134F),
]


def fuzz_lines(seed=20240601, count=3000):
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        words = []
        for _ in range(rng.randint(0, 30)):
            chars = []
            for _ in range(rng.randint(1, 12)):
                lo, hi = _BUCKETS[rng.randrange(len(_BUCKETS))]
                cp = rng.randint(lo, hi)
                if cp in (0x0A, 0x0D) or not _assigned(cp):
                    continue
                chars.append(chr(cp))
            words.append("".join(chars))
        lines.append(rng.choice([" ", "  ", "\t", "\u3000"]).join(words))
    return lines


def every_char_lines(per_line=16):
    """Every code point Unicode 14.0 assigns (but '\n', '\r'), each alone, doubled, inside a word and right
    after a capital sigma (so case-ignorable characters meet the Final_Sigma rule)."""
    chars = [chr(cp) for cp in range(0x110000) if cp not in (0x0A, 0x0D) and _assigned(cp)]
    lines = []
    for start in range(0, len(chars), per_line):
        lines.append(" ".join(f"A{c}\u03a3 {c} {c}{c}x \u0391\u03a3{c}" for c in chars[start:start + per_line]))
    return lines


def cjk_lines(vocab_path, seed=7, count=2000):
    singles = []
    with open(vocab_path, encoding="utf-8") as f:
        for token in f.read().split("\n"):
            token = token.strip()
            if len(token) == 1 and ord(token) >= 0x2E80:
                singles.append(token)
    rng = random.Random(seed)
    extras = ["\uff0c", "\u3002", "\u3001", "\uff1f", "\u300a", "\u300b", " ", "BERT", "2019\u5e74", "Google",
              "\uff08", "\uff09", "\u201c", "\u201d", "\U00020BB7", "\u9fff", "\ufa0e"]
    lines = []
    for _ in range(count):
        n = rng.randint(0, 60)
        lines.append("".join(rng.choice(extras) if rng.random() < 0.15 else rng.choice(singles) for _ in range(n)))
    return lines
