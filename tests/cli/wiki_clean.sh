#!/usr/bin/env bash
# wiki-clean: exact output for small inline dumps, the error contract, encodings, compression, atomic output.
. "$(dirname "$0")/lib.sh"

page() {  # page ID TITLE NS WIKITEXT [EXTRA]: one <page> element; WIKITEXT is already XML-escaped
  printf '  <page>\n    <title>%s</title>\n    <ns>%s</ns>\n    <id>%s</id>\n%s    <revision>\n      <id>9%s</id>\n      <text xml:space="preserve">%s</text>\n    </revision>\n  </page>\n' \
    "$2" "$3" "$1" "${5:-}" "$1" "$4"
}
{
  printf '<?xml version="1.0" encoding="UTF-8"?>\n<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10">\n'
  printf '  <siteinfo>\n    <base>https://xx.example.org/wiki/Main_Page</base>\n  </siteinfo>\n'
  page 12 'Caf&#233; &amp; Bar' 0 "'''Café''' is a [[coffee|coffeehouse]]{{cn}}.&lt;ref&gt;{{cite web|url=x}}&lt;/ref&gt;
A second line&amp;nbsp;joins.

== History ==
Opened in [[1900]]s.
* a list item
== See also ==
Dropped prose."
  page 13 'Redirected' 0 '#REDIRECT [[Café]]' '    <redirect title="Café" />\n'
  page 14 'Talk:Café' 1 'Talk page text.'
  page 15 'Café (disambiguation)' 0 'Café may be: {{disambiguation}}'
  page 16 'Empty' 0 '{{stub}}'
  # Escaped twice: the wikitext says &lt;b&gt;, which a reader sees as a literal <b>
  page 17 'Second' 0 'Just &amp;lt;b&amp;gt;one&amp;lt;/b&amp;gt; line.'
  printf '</mediawiki>\n'
} > "$TMP/dump.xml"

TEXT_EXPECTED='Café is a coffeehouse. A second line joins.
Opened in 1900s.

Just <b>one</b> line.'

run wiki-clean -q "$TMP/dump.xml"
expect_rc 0 "text format"
expect_out "$TEXT_EXPECTED" "text format"
[ "$(tail -c 2 "$TMP/out" | od -An -c | tr -d ' ')" = '\n\n' ] || fail_case "text format: a blank line ends every article"

run wiki-clean -q - < "$TMP/dump.xml"
expect_out "$TEXT_EXPECTED" "stdin input"

run wiki-clean -q --keep-headings --keep-lists --keep-disambiguation "$TMP/dump.xml"
expect_out 'Café is a coffeehouse. A second line joins.
History
Opened in 1900s.
a list item

Café may be:

Just <b>one</b> line.' "--keep-headings --keep-lists --keep-disambiguation"

run wiki-clean -q --format jsonl "$TMP/dump.xml"
expect_out '{"id":"12","title":"Café & Bar","text":"Café is a coffeehouse. A second line joins.\nOpened in 1900s."}
{"id":"17","title":"Second","text":"Just <b>one</b> line."}' "jsonl format"

run wiki-clean -q --format wikiextractor "$TMP/dump.xml"
expect_out '<doc id="12" url="https://xx.example.org/wiki?curid=12" title="Café &amp; Bar">
Café & Bar

Café is a coffeehouse. A second line joins.
Opened in 1900s.

</doc>
<doc id="17" url="https://xx.example.org/wiki?curid=17" title="Second">
Second

Just <b>one</b> line.

</doc>' "wikiextractor format, url base from <siteinfo><base>"

run wiki-clean -q --format wikiextractor --url-base https://en.wikipedia.org/wiki --min-chars 30 "$TMP/dump.xml"
expect_out '<doc id="12" url="https://en.wikipedia.org/wiki?curid=12" title="Café &amp; Bar">
Café & Bar

Café is a coffeehouse. A second line joins.
Opened in 1900s.

</doc>' "--url-base and --min-chars"

# --help, --version, usage errors
run wiki-clean --help
expect_rc 0 "--help"
CASES=$((CASES + 1)); [ -z "$ERR" ] || fail_case "--help writes to stderr: $ERR"
printf '%s' "$OUT" | grep -q '^Usage: wiki-clean' || fail_case "--help prints the usage"
for opt in $(printf '%s' "$OUT" | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
  grep -qF -- "$(printf '%s' "$opt" | sed 's/-/\\-/g')" "$SRC/man/wiki-clean.1" || fail_case "man page lacks $opt"
done
run wiki-clean --version
expect_rc 0 "--version"
printf '%s' "$OUT" | grep -Eq '^wiki-clean \(bertkit\) [0-9]' || fail_case "--version output: $OUT"
run wiki-clean --no-such-flag "$TMP/dump.xml"
expect_rc 2 "bad flag"
expect_err 'no-such-flag.*try --help' "bad flag message"
run wiki-clean --format yaml "$TMP/dump.xml"
expect_rc 2 "bad --format"
expect_err 'format.*try --help' "bad --format message"
run wiki-clean --threads -1 "$TMP/dump.xml"
expect_rc 2 "negative --threads"

# Compressed input, detected by content
gzip -c "$TMP/dump.xml" > "$TMP/dump.xml.gz"
bzip2 -c "$TMP/dump.xml" > "$TMP/dump.bin"
run wiki-clean -q "$TMP/dump.xml.gz"
expect_out "$TEXT_EXPECTED" "gzip input"
run wiki-clean -q "$TMP/dump.bin"
expect_out "$TEXT_EXPECTED" "bzip2 input (no .bz2 name)"
xz -c "$TMP/dump.xml" > "$TMP/dump.xml.xz"
zstd -q -c "$TMP/dump.xml" > "$TMP/dump.xml.zst"
run wiki-clean -q "$TMP/dump.xml.xz"
expect_out "$TEXT_EXPECTED" "xz input"
run wiki-clean -q "$TMP/dump.xml.zst"
expect_out "$TEXT_EXPECTED" "zstd input"

# UTF-16 with a byte-order mark, both byte orders, and UTF-8 with one
printf '\xff\xfe' > "$TMP/le.xml"; iconv -f UTF-8 -t UTF-16LE "$TMP/dump.xml" >> "$TMP/le.xml"
printf '\xfe\xff' > "$TMP/be.xml"; iconv -f UTF-8 -t UTF-16BE "$TMP/dump.xml" >> "$TMP/be.xml"
printf '\xef\xbb\xbf' > "$TMP/bom8.xml"; cat "$TMP/dump.xml" >> "$TMP/bom8.xml"
for f in le be bom8; do
  run wiki-clean -q "$TMP/$f.xml"
  expect_rc 0 "$f input"
  expect_out "$TEXT_EXPECTED" "$f input gives the UTF-8 output"
done

# Truncated dump: complete pages on stdout, then the error with the decompressed byte offset
head -c "$(grep -b -o 'Talk page' "$TMP/dump.xml" | cut -d: -f1)" "$TMP/dump.xml" > "$TMP/cut.xml"
size=$(wc -c < "$TMP/cut.xml")
run wiki-clean -q "$TMP/cut.xml"
expect_rc 1 "truncated dump"
expect_err "^wiki-clean: error: $TMP/cut.xml: truncated dump: unexpected end of input inside <page> at byte $size\$" \
  "truncated dump message"
expect_out 'Café is a coffeehouse. A second line joins.
Opened in 1900s.' "truncated dump: complete pages written"
gzip -c "$TMP/cut.xml" > "$TMP/cut.xml.gz"
run wiki-clean -q "$TMP/cut.xml.gz" -o "$TMP/cut.txt"
expect_rc 1 "truncated gzip dump with -o"
expect_err "inside <page> at byte $size\$" "offset counts decompressed bytes"
expect_file_absent "$TMP/cut.txt" "no output file for a truncated dump"

# Inputs that are not (our) XML
printf 'just text\n' > "$TMP/plain.txt"
run wiki-clean "$TMP/plain.txt"
expect_rc 1 "not XML"
expect_err "^wiki-clean: error: .*plain.txt: not XML: byte 0 is 'j'" "not XML message"
printf '<html><body>x</body></html>' > "$TMP/html.xml"
run wiki-clean "$TMP/html.xml"
expect_rc 1 "not a MediaWiki export"
expect_err 'root element at byte 0 is <html>, not <mediawiki>' "wrong root message"
printf '<?xml version="1.0" encoding="ISO-8859-1"?>\n<mediawiki>' > "$TMP/latin1.xml"
run wiki-clean "$TMP/latin1.xml"
expect_rc 1 "declared Latin-1"
expect_err 'unsupported encoding "ISO-8859-1" declared at byte 0' "unknown encoding message"
printf '\xff\xfe\x00\x00<\x00\x00\x00' > "$TMP/utf32.xml"
run wiki-clean "$TMP/utf32.xml"
expect_rc 1 "UTF-32"
expect_err 'UTF-32' "UTF-32 message"
printf '<mediawiki><page><title>a\xe9b</title>' > "$TMP/latin1-bytes.xml"
run wiki-clean "$TMP/latin1-bytes.xml"
expect_rc 1 "invalid UTF-8"
expect_err 'latin1-bytes.xml: invalid UTF-8 at byte 25$' "invalid UTF-8 message"
: > "$TMP/empty.xml"
run wiki-clean "$TMP/empty.xml"
expect_rc 1 "empty input"
expect_err 'empty.xml: empty input$' "empty input message"
run wiki-clean < "$TMP/empty.xml"  # not /dev/null: it is a plain file on some CI containers
expect_rc 1 "empty stdin"
expect_err '<stdin>: empty input$' "empty stdin message"
run wiki-clean "$TMP/missing.xml"
expect_rc 1 "missing input"

# Output files: atomic, never overwritten without -f
: > "$TMP/afile"
run wiki-clean -q -o "$TMP/afile/dir/x" "$TMP/dump.xml"
expect_rc 1 "unwritable output"
expect_err "^wiki-clean: error: $TMP/afile: exists and is not a directory" "unwritable output message"
echo keep > "$TMP/exists.txt"
run wiki-clean -q -o "$TMP/exists.txt" "$TMP/dump.xml"
expect_rc 1 "existing output without -f"
[ "$(cat "$TMP/exists.txt")" = keep ] || fail_case "existing output was modified"
run wiki-clean -q -f -o "$TMP/exists.txt" "$TMP/dump.xml"
expect_rc 0 "existing output with -f"
[ "$(cat "$TMP/exists.txt")" = "$TEXT_EXPECTED" ] || fail_case "-f output content"

# The real dump: --threads must not change a byte
need_fixtures
DUMP="$FIXTURES/wiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
[ -f "$DUMP" ] || { echo "skipped: $DUMP missing"; exit 77; }
wiki-clean -q --threads 1 "$DUMP" > "$TMP/t1.txt"; rc1=$?
wiki-clean -q --threads 4 "$DUMP" > "$TMP/t4.txt"; rc4=$?
RC=$((rc1 + rc4)); expect_rc 0 "fixture dump"
expect_same "$TMP/t1.txt" "$TMP/t4.txt" "--threads 1 vs 4 on the fixture dump"
articles=$(awk 'BEGIN{n=0} /^$/{n++} END{print n}' "$TMP/t1.txt")
[ "$articles" -ge 95 ] && [ "$articles" -le 106 ] || fail_case "fixture dump: $articles articles"
wiki-clean -q --threads 0 --format jsonl "$DUMP" > "$TMP/t0.jsonl"
wiki-clean -q --threads 3 --format jsonl "$DUMP" > "$TMP/t3.jsonl"
expect_same "$TMP/t0.jsonl" "$TMP/t3.jsonl" "--threads 0 vs 3, jsonl"
finish
