#!/usr/bin/env bash
# sent-seg: exact outputs on small inputs, document boundaries, exit codes and messages, output-file safety,
# identical bytes for any --threads. Expected splits are written by hand from the rules in man/sent-seg.1.
source "$(dirname "$0")/lib.sh"

run sent-seg --help
expect_rc 0 "--help"
printf '%s' "$OUT" | grep -q -- '--abbreviations' || fail_case "--help lists --abbreviations"
run sent-seg --version
expect_rc 0 "--version"
expect_out "$(printf '%s' "$OUT" | grep -E '^sent-seg \(bertkit\) [0-9]')" "--version prints the version"
run sent-seg --bogus
expect_rc 2 "unknown flag"
expect_err '^sent-seg: .*bogus.*; try --help$' "unknown flag message"
run sent-seg --threads -1
expect_rc 2 "negative --threads"
expect_err 'threads.*; try --help' "negative --threads message"
run sent-seg --threads many
expect_rc 2 "non-numeric --threads"
run sent-seg --lang 'e n!'
expect_rc 2 "bad --lang"
expect_err 'lang.*; try --help' "bad --lang message"
run sent-seg --unwrap --input-format lines -
expect_rc 2 "--unwrap with lines"
expect_err "^sent-seg: --unwrap joins a paragraph's lines; with --input-format lines every line is a document; try --help$" "--unwrap with lines: message"
run sent-seg --text-field body -
expect_rc 2 "--text-field without jsonl"
run sent-seg --input-format xml -
expect_rc 2 "an unknown --input-format"
expect_err "^sent-seg: --input-format must be text, jsonl or lines, got 'xml'; try --help$" "--input-format: message"

# Two documents; the first has two paragraphs. Blank-line runs and leading blank lines are normalised.
printf '\n\nMr. Smith went to the U.S. He left. It rained.\nThe second paragraph ends here\n\n\n\nDoc two: J. R. R. Tolkien wrote it. "Why?" he asked.  Pi is 3.14.\n' > "$TMP/in.txt"
printf '%s\n' 'Mr. Smith went to the U.S.' 'He left.' 'It rained.' 'The second paragraph ends here' '' \
  'Doc two: J. R. R. Tolkien wrote it.' '"Why?" he asked.' 'Pi is 3.14.' '' > "$TMP/expected.txt"
sent-seg -q "$TMP/in.txt" > "$TMP/out.txt" 2> "$TMP/err.txt"
RC=$?; ERR=$(cat "$TMP/err.txt")
expect_rc 0 "small input"
expect_same "$TMP/out.txt" "$TMP/expected.txt" "small input, exact bytes"
CASES=$((CASES + 1)); [ -s "$TMP/err.txt" ] && fail_case "-q writes nothing to stderr: $(cat "$TMP/err.txt")"

# A paragraph never merges with the next one, even without a final period.
printf 'no period here\nnext line starts lower\n' | sent-seg -q - > "$TMP/out.txt"
printf 'no period here\nnext line starts lower\n\n' > "$TMP/expected.txt"
expect_same "$TMP/out.txt" "$TMP/expected.txt" "paragraphs stay apart"

# stdin: "-" and no argument are the same; the summary line goes to stderr, never stdout.
run sent-seg - < "$TMP/in.txt"
expect_rc 0 "stdin via -"
expect_err '^sent-seg: 2 documents, 3 paragraphs, 7 sentences' "summary line"
sent-seg -q < "$TMP/in.txt" > "$TMP/out_noarg.txt"
sent-seg -q "$TMP/in.txt" > "$TMP/out_file.txt"
expect_same "$TMP/out_noarg.txt" "$TMP/out_file.txt" "no argument reads stdin"

# gzip and bzip2 input, recognised by content.
gzip -c "$TMP/in.txt" > "$TMP/in.txt.gz"
bzip2 -c "$TMP/in.txt" > "$TMP/in.bz"
sent-seg -q "$TMP/in.txt.gz" > "$TMP/out_gz.txt"
expect_same "$TMP/out_gz.txt" "$TMP/out_file.txt" ".gz input"
sent-seg -q "$TMP/in.bz" > "$TMP/out_bz.txt"
expect_same "$TMP/out_bz.txt" "$TMP/out_file.txt" ".bz input"

# Empty input: a filter with nothing to do succeeds and writes nothing.
run sent-seg -q /dev/null
expect_rc 0 "empty input"
expect_out "" "empty input gives empty output"
printf '\n  \n\t\n' > "$TMP/blank.txt"
run sent-seg -q "$TMP/blank.txt"
expect_rc 0 "blank-only input"
expect_out "" "blank-only input gives empty output"

# Invalid UTF-8: exit 1, the message names the file and the line; no output file is left.
printf 'Good line.\n\nStill good.\nbad \xff byte.\n' > "$TMP/bad.txt"
run sent-seg -q "$TMP/bad.txt" -o "$TMP/bad_out.txt"
expect_rc 1 "invalid UTF-8"
expect_err "^sent-seg: error: .*bad\.txt: line 4: invalid UTF-8" "invalid UTF-8 names file and line"
expect_file_absent "$TMP/bad_out.txt" "no output after invalid UTF-8"
run sent-seg -q "$TMP/missing.txt"
expect_rc 1 "missing input"
expect_err "^sent-seg: error: .*missing\.txt" "missing input is named"

# Output files: written atomically, never replaced without -f; missing directories are created (and a failed run
# removes them again); a file where a directory is needed is an error that leaves nothing behind.
: > "$TMP/afile"
run sent-seg -q "$TMP/in.txt" -o "$TMP/afile/dir/out.txt"
expect_rc 1 "unwritable output"
expect_err "^sent-seg: error: $TMP/afile: exists and is not a directory$" "unwritable output message"
CASES=$((CASES + 1)); [ -s "$TMP/afile" ] && fail_case "unwritable output wrote something"
run sent-seg -q "$TMP/in.txt" -o "$TMP/no/such/dir/out.txt"
expect_rc 0 "missing directories are created"
expect_same "$TMP/no/such/dir/out.txt" "$TMP/out_file.txt" "the output in created directories"
run sent-seg -q "$TMP/in.txt" -o "$TMP/o.txt"
expect_rc 0 "-o writes a file"
expect_same "$TMP/o.txt" "$TMP/out_file.txt" "-o content equals stdout"
echo keep > "$TMP/o.txt"
run sent-seg -q "$TMP/in.txt" -o "$TMP/o.txt"
expect_rc 1 "existing output without -f"
expect_err 'exists|force' "existing output message mentions --force"
CASES=$((CASES + 1)); [ "$(cat "$TMP/o.txt")" = keep ] || fail_case "existing output was modified"
run sent-seg -q -f "$TMP/in.txt" -o "$TMP/o.txt"
expect_rc 0 "-f replaces"
expect_same "$TMP/o.txt" "$TMP/out_file.txt" "-f output content"

# A pipe named as output is written in place, not replaced by a regular file (as /dev/null must not be).
mkfifo "$TMP/fifo"
timeout 30 cat "$TMP/fifo" > "$TMP/from_fifo.txt" &   # timeout: never hang if the pipe is not opened
reader=$!
run sent-seg -q "$TMP/in.txt" -o "$TMP/fifo"
wait "$reader"
expect_rc 0 "-o a named pipe"
expect_same "$TMP/from_fifo.txt" "$TMP/out_file.txt" "-o a named pipe carries the output"
CASES=$((CASES + 1)); [ -p "$TMP/fifo" ] || fail_case "the named pipe was replaced by a file"

# --abbreviations adds entries; a bad kind names the file and line.
printf 'Zool. never\n' > "$TMP/abbr.txt"
printf 'The Zool. Garden is open. It is big.\n' > "$TMP/zool.txt"
run sent-seg -q -a "$TMP/abbr.txt" "$TMP/zool.txt"
expect_out "$(printf 'The Zool. Garden is open.\nIt is big.')" "--abbreviations entry holds"
run sent-seg -q "$TMP/zool.txt"
expect_out "$(printf 'The Zool.\nGarden is open.\nIt is big.')" "without the entry ICU breaks"
printf 'Zool. sometimes\n' > "$TMP/abbr_bad.txt"
run sent-seg -q -a "$TMP/abbr_bad.txt" "$TMP/zool.txt"
expect_rc 1 "bad abbreviation kind"
expect_err 'abbr_bad\.txt: line 1: unknown kind' "bad abbreviation kind message"

# CJK full stops break without spaces.
printf '東京は大きい。大阪も大きい。\n' | sent-seg -q > "$TMP/cjk.txt"
printf '東京は大きい。\n大阪も大きい。\n\n' > "$TMP/cjk_expected.txt"
expect_same "$TMP/cjk.txt" "$TMP/cjk_expected.txt" "CJK full stop"

# (issue 39) Corpora that are not in the text format. Several inputs, compressed or not, are one stream.
printf 'First doc. It has two sentences.\n\n' >"$TMP/a.txt"
printf 'Second doc here.\n\n' | gzip >"$TMP/b.txt.gz"
printf 'Third doc. Also two.\n\n' | zstd -q >"$TMP/c.txt.zst"
run sent-seg -q "$TMP/a.txt" "$TMP/b.txt.gz" "$TMP/c.txt.zst"
expect_rc 0 "three inputs"
expect_out "$(printf 'First doc.\nIt has two sentences.\n\nSecond doc here.\n\nThird doc.\nAlso two.')" "three inputs, one stream"
# JSON lines: the document in --text-field; its newlines end paragraphs, blank lines skipped, empty texts dropped.
printf '%s\n' '{"id": 1, "content": "Dr. Smith came. He left.\n\nA new paragraph here."}' '' \
  '{"id": 2, "content": ""}' '{"id": 3, "content": "Caf\u00e9 time. Done."}' >"$TMP/corpus.jsonl"
run sent-seg -q --input-format jsonl --text-field content "$TMP/corpus.jsonl"
expect_rc 0 "jsonl"
expect_out "$(printf 'Dr. Smith came.\nHe left.\nA new paragraph here.\n\nCafé time.\nDone.')" "jsonl documents"
printf '{"content": "ok"}\n{"content": "ok"\n' >"$TMP/broken.jsonl"
run sent-seg -q --input-format jsonl --text-field content "$TMP/broken.jsonl"
expect_rc 1 "a line that is not JSON"
expect_err "^sent-seg: error: $TMP/broken.jsonl: line 2: malformed JSON" "not JSON: the line named"
run sent-seg -q --input-format jsonl "$TMP/corpus.jsonl"
expect_rc 1 "jsonl without the field"
expect_err "^sent-seg: error: $TMP/corpus.jsonl: line 1: no field \"text\" \(--text-field names the one holding the text\)$" "the field named"
printf '{"text": 5}\n' >"$TMP/number.jsonl"
run sent-seg -q --input-format jsonl "$TMP/number.jsonl"
expect_rc 1 "a text that is a number"
expect_err "line 1: field \"text\" is number, not a string$" "not a string: message"
# A document per line.
printf 'One line is one document. Two sentences.\n\nAnother document.\n' >"$TMP/lines.txt"
run sent-seg -q --input-format lines "$TMP/lines.txt"
expect_out "$(printf 'One line is one document.\nTwo sentences.\n\nAnother document.')" "a document per line"
# Hard-wrapped text: a blank line ends a paragraph, each file is a document.
printf 'This sentence is wrapped\nacross two lines. Then\nanother one.\n\nA second paragraph,\nalso wrapped.\n' >"$TMP/wrapped.txt"
run sent-seg -q --unwrap "$TMP/wrapped.txt" "$TMP/a.txt"
expect_out "$(printf 'This sentence is wrapped across two lines.\nThen another one.\nA second paragraph, also wrapped.\n\nFirst doc.\nIt has two sentences.')" "--unwrap"
# Many paragraphs read as one document: most likely the wrong --input-format, said once.
for i in $(seq 150); do echo "{\"text\": \"Line $i of a JSON corpus.\"}"; done >"$TMP/big.jsonl"
run sent-seg -o "$TMP/big.txt" "$TMP/big.jsonl"
expect_rc 0 "a JSON lines file read as text"
expect_err "^sent-seg: warning: $TMP/big.jsonl: 150 paragraphs made one document; for one document per line give --input-format lines, for JSON lines --input-format jsonl$" "the warning"
run sent-seg -q -f --input-format jsonl -o "$TMP/big.txt" "$TMP/big.jsonl"
CASES=$((CASES + 1)); [ "$(grep -c '^$' "$TMP/big.txt")" -eq 150 ] || fail_case "jsonl: not 150 documents"

# Real text: documents in = documents out, and identical bytes for --threads 1, 3 and 0.
need_fixtures
WIKI="$FIXTURES/wiki/mlperf-extracted/wiki_00"
[ -f "$WIKI" ] || { echo "skipped: no $WIKI"; exit 77; }
# WikiExtractor blocks -> one paragraph per line, a blank line after each document (title line dropped).
awk '/^<doc /{title=1; next} /^<\/doc>/{print ""; next} /^[[:space:]]*$/{next} title{title=0; next} {print}' \
  "$WIKI" > "$TMP/wiki.txt"
cat "$TMP/wiki.txt" "$TMP/wiki.txt" "$TMP/wiki.txt" > "$TMP/wiki3.txt"   # several batches of work
sent-seg -q -t 1 "$TMP/wiki3.txt" -o "$TMP/w1.txt"
sent-seg -q -t 3 "$TMP/wiki3.txt" -o "$TMP/w3.txt"
sent-seg -q -t 0 "$TMP/wiki3.txt" -o "$TMP/w0.txt"
expect_same "$TMP/w1.txt" "$TMP/w3.txt" "--threads 1 and 3 give identical bytes"
expect_same "$TMP/w1.txt" "$TMP/w0.txt" "--threads 1 and 0 give identical bytes"
docs_in=$(grep -c '^$' "$TMP/wiki3.txt")
docs_out=$(grep -c '^$' "$TMP/w1.txt")
CASES=$((CASES + 1))
[ "$docs_in" -eq 111 ] && [ "$docs_out" -eq "$docs_in" ] || fail_case "documents: $docs_in in (expected 111), $docs_out out"
CASES=$((CASES + 1))
[ "$(wc -l < "$TMP/w1.txt")" -gt "$(wc -l < "$TMP/wiki3.txt")" ] || fail_case "real text was not split into sentences"
CASES=$((CASES + 1))
grep -qE '^[[:space:]]|[[:space:]]$' "$TMP/w1.txt" && fail_case "a sentence has leading or trailing white space"
finish
