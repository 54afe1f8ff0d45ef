# Helpers for the cli tests. Each test script sources this, runs commands and checks exact results.
# Environment (set by ctest): BIN (built tools), SRC (source tree), FIXTURES (../shared/fixtures).
set -u
: "${BIN:?BIN must point at the built tools}" "${SRC:?}" "${FIXTURES:=}"
export PATH="$BIN:$PATH" LC_ALL=C.UTF-8
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
FAILURES=0
CASES=0

fail_case() { echo "FAIL: $*" >&2; FAILURES=$((FAILURES + 1)); }

# run CMD...: runs a command, capturing $OUT, $ERR and $RC (stdin from /dev/null unless redirected by caller).
run() {
  "$@" >"$TMP/out" 2>"$TMP/err"
  RC=$?
  OUT=$(cat "$TMP/out")
  ERR=$(cat "$TMP/err")
}

# expect_rc N DESCRIPTION
expect_rc() {
  CASES=$((CASES + 1))
  [ "$RC" -eq "$1" ] || fail_case "$2: exit $RC, expected $1 (stderr: $ERR)"
}
# expect_out TEXT DESCRIPTION
expect_out() {
  CASES=$((CASES + 1))
  [ "$OUT" = "$1" ] || fail_case "$2: stdout differs:
--- got ---
$OUT
--- expected ---
$1"
}
# expect_err REGEX DESCRIPTION
expect_err() {
  CASES=$((CASES + 1))
  printf '%s' "$ERR" | grep -Eq -- "$1" || fail_case "$2: stderr does not match /$1/: $ERR"
}
# expect_file_absent PATH DESCRIPTION: no output and no temporary left behind
expect_file_absent() {
  CASES=$((CASES + 1))
  local leftovers
  leftovers=$(ls "$(dirname "$1")" | grep -F "$(basename "$1")" || true)
  [ -z "$leftovers" ] || fail_case "$2: left behind: $leftovers"
}
# expect_same FILE_A FILE_B DESCRIPTION
expect_same() {
  CASES=$((CASES + 1))
  cmp -s "$1" "$2" || fail_case "$3: $1 and $2 differ"
}
need_fixtures() {
  if [ -z "$FIXTURES" ] || [ ! -d "$FIXTURES" ]; then echo "skipped: no fixtures at '$FIXTURES'"; exit 77; fi
}
finish() {
  echo "$((CASES - FAILURES)) passed, $FAILURES failed"
  [ "$FAILURES" -eq 0 ]
}
