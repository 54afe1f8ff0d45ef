#!/usr/bin/env bash
# Golden outputs (issue 29): what users read, pinned byte for byte, so that a change to it is a reviewed diff.
#   tests/cli/golden/help/TOOL[-SUBCOMMAND].txt   every tool's and subcommand's --help
#   tests/cli/golden/mistakes.txt                 a dozen common mistakes, one a line: NAME<TAB>COMMAND
#   tests/cli/golden/mistakes/NAME.txt            its stderr and exit status
# GOLDEN_UPDATE=1 rewrites the files from what the tools print now (then review `git diff tests/cli/golden`).
# The commands run in an empty directory, so that the paths they name are the same everywhere.
source "$(dirname "$0")/lib.sh"
GOLDEN=$SRC/tests/cli/golden
tools=$(sed -n 's/^set(BERTKIT_TEXT_TOOLS \(.*\))$/\1/p' "$SRC/tools/CMakeLists.txt")
torch_tools=$(sed -n 's/^set(BERTKIT_TORCH_TOOLS \(.*\))$/\1/p' "$SRC/tools/CMakeLists.txt")
for tool in $torch_tools; do [ -x "$BIN/$tool" ] && tools="$tools $tool"; done
# COLUMNS and the terminal do not reach --help's layout: Boost wraps at its default width.
export COLUMNS=80

# golden NAME ACTUAL_FILE: compares with (or with GOLDEN_UPDATE, writes) tests/cli/golden/NAME.
golden() {
  CASES=$((CASES + 1))
  if [ -n "${GOLDEN_UPDATE:-}" ]; then
    mkdir -p "$(dirname "$GOLDEN/$1")"
    cp "$2" "$GOLDEN/$1"
  elif [ ! -f "$GOLDEN/$1" ]; then
    fail_case "$1: no golden file (GOLDEN_UPDATE=1 tests/cli/golden.sh writes it)"
  elif ! cmp -s "$2" "$GOLDEN/$1"; then
    fail_case "$1 differs from what the tool prints now:
$(diff -u "$GOLDEN/$1" "$2" | head -40)"
  fi
}

help_of() {  # help_of NAME TOOL [SUBCOMMAND]
  local name=$1; shift
  "$@" --help >"$TMP/help.txt" 2>&1
  echo "exit $?" >>"$TMP/help.txt"
  golden "help/$name.txt" "$TMP/help.txt"
}
for tool in $tools; do help_of "$tool" "$tool"; done
for sub in encode decode train; do help_of "wordpiece-$sub" wordpiece "$sub"; help_of "bpe-$sub" bpe "$sub"; done
for sub in features train predict bench; do help_of "bert-finetune-$sub" bert-finetune "$sub"; done

mkdir "$TMP/work"
while IFS=$'\t' read -r name command; do
  case $name in ''|'#'*) continue ;; esac
  tool=${command%% *}
  case " $tools " in *" $tool "*) ;; *) continue ;; esac  # a LibTorch tool this build lacks
  (cd "$TMP/work" && bash -c "$command" </dev/null >/dev/null 2>"$TMP/err.txt"; echo "exit $?" >>"$TMP/err.txt")
  golden "mistakes/$name.txt" "$TMP/err.txt"
  rm -rf "$TMP/work" && mkdir "$TMP/work"
done <"$GOLDEN/mistakes.txt"
finish
