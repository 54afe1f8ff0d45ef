#!/usr/bin/env bash
# shard: file names, the multiset of documents, byte balance, determinism, refusals and atomic failure.
# Documents are split and counted here with Python and awk, independently of the tool's own reader.
source "$(dirname "$0")/lib.sh"
need_fixtures
PY=${PYTHON:-python3}
[ -x "$PY" ] || PY=python3

# Real inputs: WikiExtractor output (MLPerf sample) turned into the document format, and Google's sample text.
WIKI="$TMP/wiki.txt"
awk '/^<doc /{next} /^<\/doc>/{print ""; next} NF{print}' "$FIXTURES/wiki/mlperf-extracted/wiki_00" >"$WIKI"
SAMPLE="$FIXTURES/pretraining_text/sample_text.txt"

# documents FILE...: one line per document (its lines joined by \x1f), sorted, on stdout.
documents() {
  "$PY" - "$@" <<'EOF'
import sys
docs = []
for path in sys.argv[1:]:
    cur = []
    for line in open(path, encoding="utf-8", newline="\n").read().split("\n"):
        if line.strip(" \t") == "":
            if cur: docs.append("\x1f".join(cur)); cur = []
        else:
            cur.append(line)
    if cur: docs.append("\x1f".join(cur))
print("\n".join(sorted(docs)))
EOF
}

# --- help, version, usage errors -------------------------------------------------------------------------------
run shard --help
expect_rc 0 "--help"
CASES=$((CASES + 1)); [[ "$OUT" == "Usage: shard "* ]] || fail_case "--help starts with Usage: shard"
run shard --version
expect_rc 0 "--version"
expect_out "shard (bertkit) $(sed -n 's/^project(bertkit VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")" "--version"
run shard --no-such-flag -n 2 -o "$TMP/x" "$WIKI"
expect_rc 2 "unknown flag"
expect_err '^shard: .*no-such-flag.*; try --help$' "unknown flag message"
run shard -n 2 "$WIKI"
expect_rc 2 "missing -o"
run shard -n 0 -o "$TMP/x" "$WIKI"
expect_rc 2 "zero training shards"
run shard -n 2 -m 1 --test-fraction 1 -o "$TMP/x" "$WIKI"
expect_rc 2 "test fraction 1"
expect_err 'test-fraction' "test fraction message names the flag"
run shard -n 2 --test-fraction 0.1 -o "$TMP/x" "$WIKI"
expect_rc 2 "test fraction without test shards"
run shard -n 2 -m 2 -o "$TMP/x" "$WIKI"
expect_rc 2 "test shards without a test fraction"
run shard -n 2 -o "$TMP/x" - - <"$WIKI"
expect_rc 2 "stdin twice"
CASES=$((CASES + 1)); [ -z "$(ls "$TMP" | grep '^x')" ] || fail_case "usage errors wrote files"

# --- exact names, multiset of documents, balance ---------------------------------------------------------------
mkdir "$TMP/a"
run shard -n 4 -m 2 --test-fraction 0.1 --seed 12345 -o "$TMP/a/wiki" "$WIKI"
expect_rc 0 "wiki_00 into 4 + 2 shards"
expect_err '^shard: 37 documents \(33 training, 4 test\), 4 \+ 2 shards, max/mean [0-9.]+ training, [0-9.]+ test, ' \
  "summary line"
run ls "$TMP/a"
expect_out "wiki.done
wiki_test-00000-of-00002.txt
wiki_test-00001-of-00002.txt
wiki_training-00000-of-00004.txt
wiki_training-00001-of-00004.txt
wiki_training-00002-of-00004.txt
wiki_training-00003-of-00004.txt" "exact output names"

documents "$WIKI" >"$TMP/in.docs"
documents "$TMP"/a/wiki_*.txt >"$TMP/out.docs"
CASES=$((CASES + 1)); [ "$(wc -l <"$TMP/in.docs")" -eq 37 ] || fail_case "the fixture should hold 37 documents"
expect_same "$TMP/in.docs" "$TMP/out.docs" "shards hold exactly the input's documents"
documents "$TMP"/a/wiki_test-*.txt >"$TMP/test.docs"
CASES=$((CASES + 1)); [ "$(wc -l <"$TMP/test.docs")" -eq 4 ] || fail_case "round(0.1 * 37) = 4 test documents"

for f in "$TMP"/a/wiki_*.txt; do
  CASES=$((CASES + 1))
  [ "$(tail -c 2 "$f" | od -An -c | tr -d ' ')" = '\n\n' ] || fail_case "$f does not end with a blank line"
done

# Balance per split: max <= mean + max(1% of mean, the largest document of that split), bytes counted by awk.
balance() {  # balance SPLIT
  local sizes largest
  sizes=$(for f in "$TMP"/a/wiki_"$1"-*.txt; do wc -c <"$f"; done)
  largest=$(cat "$TMP"/a/wiki_"$1"-*.txt | LC_ALL=C awk 'NF{n+=length($0)+1; next} n{n++; if(n>m)m=n; n=0} END{print m+0}')
  printf '%s\n' "$sizes" | awk -v big="$largest" -v name="$1" '
    {s+=$1; c++; if($1>m)m=$1} END{mean=s/c; slack=(mean*0.01>big)?mean*0.01:big;
    printf "%s: max %d mean %.1f largest document %d max/mean %.4f\n", name, m, mean, big, m/mean;
    exit !(m <= mean + slack)}'
}
CASES=$((CASES + 1)); balance training >&2 || fail_case "training shards out of balance"
CASES=$((CASES + 1)); balance test >&2 || fail_case "test shards out of balance"

"$PY" - "$TMP/a/wiki.done" "$TMP/a" <<'EOF' || fail_case "marker does not describe the shards"
import json, os, sys
m = json.load(open(sys.argv[1]))
files = sorted(f for f in os.listdir(sys.argv[2]) if f.endswith(".txt"))
assert sorted(s["file"] for s in m["shards"]) == files, (m["shards"], files)
for s in m["shards"]:
    data = open(os.path.join(sys.argv[2], s["file"]), "rb").read()
    assert s["bytes"] == len(data), s
    assert s["documents"] == data.count(b"\n\n"), s
assert m["documents"] == 37 and m["test_documents"] == 4
EOF
CASES=$((CASES + 1))

# --- determinism ----------------------------------------------------------------------------------------------
mkdir "$TMP/b" "$TMP/c" "$TMP/d" "$TMP/e"
run shard -q -n 4 -m 2 --test-fraction 0.1 --seed 12345 -o "$TMP/b/wiki" "$WIKI"
expect_rc 0 "second run"
expect_out "" "-q prints nothing"
CASES=$((CASES + 1)); [ -z "$ERR" ] || fail_case "-q wrote to stderr: $ERR"
CASES=$((CASES + 1)); diff -r "$TMP/a" "$TMP/b" >/dev/null || fail_case "same seed gave different bytes"
run shard -q -n 4 -m 2 --test-fraction 0.1 --seed 12345 --max-open-files 1 -o "$TMP/c/wiki" "$WIKI"
CASES=$((CASES + 1)); diff -r "$TMP/a" "$TMP/c" >/dev/null || fail_case "--max-open-files 1 (six passes) changed the output"
gzip -c "$WIKI" >"$TMP/wiki.txt.gz"
run bash -c "cat '$TMP/wiki.txt.gz' | shard -q -n 4 -m 2 --test-fraction 0.1 --seed 12345 -o '$TMP/d/wiki' -"
expect_rc 0 "gzip on stdin"
CASES=$((CASES + 1)); diff -r "$TMP/a" "$TMP/d" >/dev/null || fail_case "stdin gave different shards than the file"
run shard -q -n 4 -m 2 --test-fraction 0.1 --seed 777 -o "$TMP/e/wiki" "$WIKI"
documents "$TMP"/e/wiki_test-*.txt >"$TMP/test7.docs"
CASES=$((CASES + 1)); cmp -s "$TMP/test.docs" "$TMP/test7.docs" && fail_case "another seed chose the same test documents"
CASES=$((CASES + 1))
for i in 0 1 2 3; do cmp -s "$TMP/a/wiki_training-0000$i-of-00004.txt" "$TMP/e/wiki_training-0000$i-of-00004.txt" || break
  [ $i = 3 ] && fail_case "another seed gave identical training shards"; done
documents "$TMP"/e/wiki_*.txt >"$TMP/out7.docs"
expect_same "$TMP/in.docs" "$TMP/out7.docs" "another seed still keeps every document"

# Google's sample text, several inputs at once: the documents of both, once each.
mkdir "$TMP/g"
run shard -n 3 -o "$TMP/g/s" "$SAMPLE" "$WIKI"
expect_rc 0 "two inputs"
documents "$SAMPLE" "$WIKI" >"$TMP/in2.docs"
documents "$TMP"/g/s_training-*.txt >"$TMP/out2.docs"
expect_same "$TMP/in2.docs" "$TMP/out2.docs" "two inputs: every document once"

# --- refusals and failures leave nothing behind ---------------------------------------------------------------
cp -r "$TMP/a" "$TMP/a.before"
run shard -n 4 -m 2 --test-fraction 0.1 --seed 9 -o "$TMP/a/wiki" "$WIKI"
expect_rc 1 "existing outputs without -f"
expect_err '^shard: error: .*already exists; use --force' "existing outputs message"
CASES=$((CASES + 1)); diff -r "$TMP/a" "$TMP/a.before" >/dev/null || fail_case "a refused run changed files"
run shard -q -f -n 4 -m 2 --test-fraction 0.1 --seed 9 -o "$TMP/a/wiki" "$WIKI"
expect_rc 0 "-f replaces"
CASES=$((CASES + 1)); diff -r "$TMP/a" "$TMP/a.before" >/dev/null && fail_case "-f with another seed changed nothing"

mkdir "$TMP/f"
run shard -n 38 -o "$TMP/f/w" "$WIKI"
expect_rc 1 "more shards than documents"
expect_err '^shard: error: 37 training documents cannot fill 38 training shards' "too many shards message"
: >"$TMP/empty.txt"
run shard -n 1 -o "$TMP/f/w" "$TMP/empty.txt"
expect_rc 1 "no documents"
expect_err 'no documents' "no documents message"
{ head -c 5000 "$WIKI"; printf '\nbad \xff byte\n\n'; } >"$TMP/bad.txt"
bad_line=$(($(head -c 5000 "$WIKI" | wc -l) + 2))
run shard -n 1 -o "$TMP/f/w" "$TMP/bad.txt"
expect_rc 1 "invalid UTF-8"
expect_err "^shard: error: .*bad\\.txt: line $bad_line: invalid UTF-8" "invalid UTF-8 names file and line"
run shard -n 1 -o "$TMP/f/w" "$TMP/missing.txt"
expect_rc 1 "missing input"
CASES=$((CASES + 1)); [ -z "$(ls "$TMP/f")" ] || fail_case "failed runs left: $(ls "$TMP/f")"

if [ "$(id -u)" = 0 ]; then nowrite=/proc/bertkit-shard-test; else nowrite="$TMP/ro"; mkdir "$nowrite"; chmod 555 "$nowrite"; fi
run shard -n 2 -o "$nowrite/w" "$WIKI"
expect_rc 1 "unwritable directory"
expect_err '^shard: error: .*(cannot write|cannot create directory)' "unwritable directory message"
CASES=$((CASES + 1)); [ -z "$(ls "$(dirname "$nowrite/w")" 2>/dev/null | grep '^w[._]')" ] || fail_case "unwritable: files left"
# A missing directory is created, as by every tool (and removed again when the run fails).
run shard -q -n 2 -o "$TMP/no/such/dir/w" "$WIKI"
expect_rc 0 "missing directory is created"
OUT=$(cd "$TMP/no/such/dir" && ls); expect_out "w.done
w_training-00000-of-00002.txt
w_training-00001-of-00002.txt" "shards in the created directory"
run shard -q -n 2 -o "$TMP/new/dir/w" "$TMP/missing.txt"
expect_rc 1 "missing input with a missing directory"
CASES=$((CASES + 1)); [ ! -e "$TMP/new" ] || fail_case "a failed run left the directories it created: $(find "$TMP/new")"
finish
