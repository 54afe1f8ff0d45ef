#!/usr/bin/env bash
# Every tool has a man page, and every long option its --help lists appears in that page.
source "$(dirname "$0")/lib.sh"
tools=$(sed -n 's/^set(BERTKIT_TEXT_TOOLS \(.*\))$/\1/p' "$SRC/tools/CMakeLists.txt")
torch_tools=$(sed -n 's/^set(BERTKIT_TORCH_TOOLS \(.*\))$/\1/p' "$SRC/tools/CMakeLists.txt")
# The LibTorch tools exist only in builds with BERTKIT_WITH_TORCH.
for tool in $torch_tools; do [ -x "$BIN/$tool" ] && tools="$tools $tool"; done
for tool in $tools; do
  [ -f "$SRC/tools/$tool.cpp" ] || continue
  CASES=$((CASES + 1))
  page="$SRC/man/$tool.1"
  if [ ! -f "$page" ]; then fail_case "$tool: no man page $page"; continue; fi
  # roff writes a hyphen as \- ; undo that before searching.
  text=$(sed 's/\\-/-/g; s/\\f[BIRP]//g' "$page")
  help=$("$BIN/$tool" --help) || { fail_case "$tool --help failed"; continue; }
  for opt in $(printf '%s\n' "$help" | grep -oE -- '--[a-z0-9][a-z0-9-]*' | sort -u); do
    CASES=$((CASES + 1))
    printf '%s' "$text" | grep -qF -- "$opt" || fail_case "$tool: $opt is in --help but not in man/$tool.1"
  done
  CASES=$((CASES + 1))
  printf '%s' "$text" | grep -q "^\.TH ${tool^^} 1" || printf '%s' "$text" | grep -qi "^\.TH \"\?${tool}\"\? 1" \
    || fail_case "$tool: man page has no .TH header for section 1"
done
finish
