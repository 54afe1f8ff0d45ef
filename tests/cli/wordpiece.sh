#!/usr/bin/env bash
# wordpiece encode/decode: exact outputs on small vocabularies, exit codes and messages, output-file safety.
# Expected tokens follow the google-research/bert rules (DESIGN.md section 5) applied by hand to the inputs.
source "$(dirname "$0")/lib.sh"
expect_no_err() {
  CASES=$((CASES + 1))
  [ -z "$ERR" ] || fail_case "$1: unexpected stderr: $ERR"
}

V="$TMP/vocab.txt"
printf '%s\n' '[PAD]' '[UNK]' '[CLS]' 'hello' 'world' ',' '!' 'un' '##aff' '##able' 'the' 'cafe' 'caf' '##é' \
  'Hello' '.' > "$V"

run wordpiece --help
expect_rc 0 "--help"
expect_no_err "--help writes nothing to stderr"
printf '%s' "$OUT" | grep -q -- '--format' || fail_case "--help lists the encode options"
run wordpiece --version
expect_rc 0 "--version"
expect_out "$(printf '%s' "$OUT" | grep -E '^wordpiece \(bertkit\) [0-9]')" "--version prints the version"
run wordpiece encode --vocab "$V" --bogus
expect_rc 2 "unknown flag"
expect_err 'wordpiece: .*bogus.*; try --help' "unknown flag message"
run wordpiece encode --vocab "$V" --format words
expect_rc 2 "bad --format"
expect_err 'format must be tokens or ids' "bad --format message"
run wordpiece encode --vocab "$V" --threads -1
expect_rc 2 "negative --threads"
run wordpiece encode
expect_rc 2 "missing --vocab"
expect_err 'vocab' "missing --vocab names the option"
run wordpiece
expect_rc 2 "no subcommand"
# train: a vocabulary from a small corpus, read back by encode; determinism; refusals.
printf 'The river flows north.\nRivers and rivulets flow north, then east.\n\nThe flowing river is long.\n' >"$TMP/corpus.txt"
run wordpiece train -q --vocab-size 60 --min-frequency 1 -o "$TMP/learned.txt" "$TMP/corpus.txt"
expect_rc 0 "train"
run head -5 "$TMP/learned.txt"
expect_out "[PAD]
[UNK]
[CLS]
[SEP]
[MASK]" "special tokens first"
CASES=$((CASES + 1)); grep -qx 'river' "$TMP/learned.txt" || fail_case "a frequent word becomes one piece"
run wordpiece encode -q --vocab "$TMP/learned.txt" "$TMP/corpus.txt"
expect_rc 0 "encode with a learned vocabulary"
CASES=$((CASES + 1)); printf '%s' "$OUT" | grep -q 'UNK' && fail_case "no [UNK] for the training text"
run wordpiece train -q --vocab-size 60 --min-frequency 1 -t 2 - <"$TMP/corpus.txt"
expect_rc 0 "train from stdin with 2 threads"
CASES=$((CASES + 1)); [ "$OUT" = "$(cat "$TMP/learned.txt")" ] || fail_case "same vocabulary for any --threads and stdin"
run wordpiece train -q --vocab-size 60 -o "$TMP/learned.txt" "$TMP/corpus.txt"
expect_rc 1 "train refuses to overwrite"; expect_err 'already exists; use --force' "train refusal message"
: >"$TMP/nothing.txt"
run wordpiece train -q -o "$TMP/v-empty.txt" "$TMP/nothing.txt"
expect_rc 1 "train on empty input"; expect_err 'nothing.txt: no words' "empty input named"
expect_file_absent "$TMP/v-empty.txt" "no vocabulary left after an error"
run wordpiece train --vocab-size 3 "$TMP/corpus.txt"
expect_rc 2 "vocab smaller than the special tokens"
run wordpiece train --min-frequnecy 2 "$TMP/corpus.txt"
expect_rc 2 "misspelt train flag"; expect_err 'min-frequnecy.*try --help' "misspelt train flag named"
run wordpiece frobnicate
expect_rc 2 "unknown subcommand"

# tokens: lower-case, accents stripped, punctuation split, greedy pieces, unknown words -> [UNK]
printf 'Hello, World!\nunaffable the\n\n   \nCAFÉ café zebra\n' > "$TMP/in.txt"
run wordpiece encode -q --vocab "$V" "$TMP/in.txt"
expect_rc 0 "encode tokens"
expect_out "$(printf 'hello , world !\nun ##aff ##able the\n\n\ncafe cafe [UNK]')" "encode tokens output"
run wordpiece encode -q --vocab "$V" --cased "$TMP/in.txt"
expect_out "$(printf 'Hello , [UNK] !\nun ##aff ##able the\n\n\n[UNK] caf ##é [UNK]')" "encode --cased output"
run wordpiece encode -q --vocab "$V" --format ids "$TMP/in.txt"
expect_rc 0 "encode ids"
expect_out "$(printf '3 5 4 6\n7 8 9 10\n\n\n11 11 1')" "encode ids output"

# stdin as "-" and as the default; the summary line goes to stderr unless -q
printf 'hello world\n' > "$TMP/stdin.txt"
run wordpiece encode --vocab "$V" - < "$TMP/stdin.txt"
expect_out "hello world" "stdin via -"
expect_err '^wordpiece: 1 lines, 2 tokens' "summary line on stderr"
printf 'hello world\n' > "$TMP/stdin.txt"
run wordpiece encode -q --vocab "$V" < "$TMP/stdin.txt"
expect_out "hello world" "stdin by default"
expect_no_err "-q silences the summary"

# a vocabulary without a final newline (the keras-bert test checkpoint's vocab.txt has none)
printf '[PAD]\n[UNK]\njack\nboy' > "$TMP/nonl.txt"
printf 'Jack boy\n' > "$TMP/stdin.txt"
run wordpiece encode -q --vocab "$TMP/nonl.txt" --format ids < "$TMP/stdin.txt"
expect_out "2 3" "last vocab line without newline"

KERAS_VOCAB="$FIXTURES/tf_checkpoint/keras-bert-tiny/vocab.txt"
if [ -f "$KERAS_VOCAB" ]; then
  printf 'All work and no play makes Jack a dull boy.\n' > "$TMP/stdin.txt"
  run wordpiece encode -q --vocab "$KERAS_VOCAB" --format ids < "$TMP/stdin.txt"
  expect_out "5 6 7 8 9 10 11 12 13 14 1" "keras-bert-tiny vocab (no final newline; '.' is [UNK])"
fi

# vocabulary errors
printf '[PAD]\nhello\n' > "$TMP/nounk.txt"
printf 'hello\n' > "$TMP/stdin.txt"
run wordpiece encode --vocab "$TMP/nounk.txt" < "$TMP/stdin.txt"
expect_rc 1 "vocab without [UNK]"
expect_err "^wordpiece: error: .*nounk\.txt.*\[UNK\]" "vocab without [UNK] names the file"
printf 'hello\n' > "$TMP/stdin.txt"
run wordpiece encode --vocab "$TMP/missing.txt" < "$TMP/stdin.txt"
expect_rc 1 "missing vocab"
expect_err "^wordpiece: error: .*missing\.txt" "missing vocab names the file"

# invalid UTF-8 names the line
printf 'fine\nbad \xff here\n' > "$TMP/bad.txt"
run wordpiece encode -q --vocab "$V" "$TMP/bad.txt"
expect_rc 1 "invalid UTF-8"
expect_err "bad\.txt: line 2, byte 5: invalid UTF-8" "invalid UTF-8 position"

# decode: ## pieces glue, everything else is space separated; round trip of lower-case text
printf '3 5 4 6\n7 8 9 10\n\n13\n' > "$TMP/stdin.txt"
run wordpiece decode -q --vocab "$V" < "$TMP/stdin.txt"
expect_rc 0 "decode"
expect_out "$(printf 'hello , world !\nunaffable the\n\né')" "decode output"
printf 'hello world\nthe cafe\n' > "$TMP/plain.txt"
wordpiece encode -q --vocab "$V" --format ids "$TMP/plain.txt" > "$TMP/plain.ids"
run wordpiece decode -q --vocab "$V" "$TMP/plain.ids"
expect_out "$(cat "$TMP/plain.txt")" "decode round trip"
printf '3 4\n3 99 4\n' > "$TMP/stdin.txt"
run wordpiece decode -q --vocab "$V" < "$TMP/stdin.txt"
expect_rc 1 "decode id out of range"
expect_err "line 2, column 3: id 99 is out of range" "decode out of range names line and column"
printf '3 x4\n' > "$TMP/stdin.txt"
run wordpiece decode -q --vocab "$V" < "$TMP/stdin.txt"
expect_rc 1 "decode non-number"
expect_err "line 1, column 3: 'x4' is not a token id" "decode non-number message"

# --threads: byte-identical output for 1, 2 and 0 (all) over several batches
for i in $(seq 1 12000); do
  printf 'Hello, world! line %d caf\xc3\xa9 \xce\x9f\xce\x94\xce\x9f\xce\xa3 the unaffable\n\n' "$i"
done > "$TMP/big.txt"
wordpiece encode -q --vocab "$V" --threads 1 "$TMP/big.txt" > "$TMP/t1.txt"
wordpiece encode -q --vocab "$V" --threads 2 "$TMP/big.txt" > "$TMP/t2.txt"
wordpiece encode -q --vocab "$V" --threads 0 --format tokens "$TMP/big.txt" > "$TMP/t0.txt"
expect_same "$TMP/t1.txt" "$TMP/t2.txt" "--threads 1 vs 2"
expect_same "$TMP/t1.txt" "$TMP/t0.txt" "--threads 1 vs 0"
CASES=$((CASES + 1))
[ "$(wc -l < "$TMP/t1.txt")" -eq 24000 ] || fail_case "--threads: one output line per input line"

# output files: unwritable, existing without -f refused and untouched, -f replaces atomically
: > "$TMP/afile"
run wordpiece encode -q --vocab "$V" -o "$TMP/afile/dir/out.txt" "$TMP/in.txt"
expect_rc 1 "unwritable -o"
expect_err "^wordpiece: error: .*afile: exists and is not a directory" "unwritable -o names the path"
echo "keep me" > "$TMP/exists.txt"
run wordpiece encode -q --vocab "$V" -o "$TMP/exists.txt" "$TMP/in.txt"
expect_rc 1 "existing -o without -f"
expect_err "exists\.txt: already exists; use --force" "existing -o message"
expect_out "" "nothing on stdout when refused"
CASES=$((CASES + 1))
[ "$(cat "$TMP/exists.txt")" = "keep me" ] || fail_case "existing file was modified"
run wordpiece encode -q --vocab "$V" -f -o "$TMP/exists.txt" "$TMP/in.txt"
expect_rc 0 "-f replaces"
CASES=$((CASES + 1))
[ "$(head -1 "$TMP/exists.txt")" = "hello , world !" ] || fail_case "-f output content"
run wordpiece encode -q --vocab "$V" -o "$TMP/partial.txt" "$TMP/bad.txt"
expect_rc 1 "error mid-input"
expect_file_absent "$TMP/partial.txt" "no partial output after an error"


# A cased vocabulary on lower-cased text: the summary line gives the [UNK] share and a warning says to give --cased.
CASED_VOCAB=$FIXTURES/vocab/bert-base-cased-vocab.txt
run wordpiece encode --vocab "$CASED_VOCAB" -o /dev/null "$FIXTURES/pretraining_text/sample_text.txt"
expect_rc 0 "a cased vocabulary, lower-cased text"
expect_err "^wordpiece: [0-9]+ lines, [0-9]+ tokens, 0\.38% \[UNK\], " "the [UNK] share in the summary"
expect_err "^wordpiece: warning: the vocabulary $CASED_VOCAB is cased but the text was lower-cased \(0\.38% \[UNK\]\): give --cased$" \
  "a cased vocabulary on lower-cased text: a warning"
run wordpiece encode --cased --vocab "$CASED_VOCAB" -o /dev/null "$FIXTURES/pretraining_text/sample_text.txt"
expect_rc 0 "a cased vocabulary, --cased"
CASES=$((CASES + 1)); printf '%s' "$ERR" | grep -q warning && fail_case "a warning with the right casing: $ERR"
finish
