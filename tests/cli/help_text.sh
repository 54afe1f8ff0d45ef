#!/usr/bin/env bash
# Every tool's --help (each subcommand's too), and its man page, tell a new user the same things: every value has a
# named placeholder (FILE, N, DIR, ...; never Boost's bare "arg"), an Examples section of realistic commands, and the
# exit status with the codes run_tool really returns (0, 1, 2, 130 for SIGINT). The man page has EXAMPLES with the
# same commands and an EXIT STATUS section naming the same codes. The LibTorch tools are checked where they are built.
source "$(dirname "$0")/lib.sh"
tools=$(sed -n 's/^set(BERTKIT_TEXT_TOOLS \(.*\))$/\1/p' "$SRC/tools/CMakeLists.txt")
torch_tools=$(sed -n 's/^set(BERTKIT_TORCH_TOOLS \(.*\))$/\1/p' "$SRC/tools/CMakeLists.txt")
for tool in $torch_tools; do [ -x "$BIN/$tool" ] && tools="$tools $tool"; done

# man_text PAGE: the page as plain text (roff escapes for '-', '\' and fonts undone), one space for each run of blanks.
man_text() { sed 's/\\-/-/g; s/\\e/\\/g; s/\\f[BIRP]//g; s/\\(dq/"/g' "$1" | tr -s ' \t' '  '; }
# section NAME: the lines of a man page's section NAME (from its .SH line to the next .SH).
section() { awk -v name="$1" '/^\.SH /{p = ($0 == ".SH " name || $0 == ".SH \"" name "\"")} p'; }

for tool in $tools; do
  [ -x "$BIN/$tool" ] || { fail_case "$tool is not built"; continue; }
  help=$("$BIN/$tool" --help) || { fail_case "$tool --help failed"; continue; }
  page="$SRC/man/$tool.1"

  CASES=$((CASES + 1))
  bare=$(printf '%s\n' "$help" | grep -nE '(^|[= ]|\[)arg($|[ (]|\])' || true)
  [ -z "$bare" ] || fail_case "$tool --help shows a bare 'arg' placeholder: $bare"

  # Each usage block (a tool with subcommands prints one per subcommand) has its own examples and exit status.
  blocks=$(printf '%s\n' "$help" | grep -c '^Usage: ')
  CASES=$((CASES + 1))
  n=$(printf '%s\n' "$help" | grep -c '^Examples:$')
  [ "$n" -ge 1 ] && { [ "$blocks" -le 1 ] || [ "$n" -ge $((blocks - 1)) ]; } \
    || fail_case "$tool --help: $n Examples: sections for $blocks usage blocks"
  CASES=$((CASES + 1))
  # The exit-status paragraph may wrap: each paragraph is joined into one line first.
  n=$(printf '%s\n' "$help" | awk 'BEGIN {RS = ""} {gsub(/\n/, " "); print}' | grep -cE '^Exit status: 0 .*1 .*2 .*130')
  [ "$n" -ge 1 ] && { [ "$blocks" -le 1 ] || [ "$n" -ge $((blocks - 1)) ]; } \
    || fail_case "$tool --help: $n exit-status lines naming 0, 1, 2 and 130 for $blocks usage blocks"

  # The example commands: the indented lines after each "Examples:" up to the next blank line.
  examples=$(printf '%s\n' "$help" | awk '/^Examples:$/{p=1; next} /^$/{p=0} p' | sed 's/^ *//' | tr -s ' ' ' ')
  CASES=$((CASES + 1))
  [ "$(printf '%s\n' "$examples" | grep -cw -- "$tool")" -ge 2 ] \
    || fail_case "$tool --help: fewer than 2 example commands running $tool"

  [ -f "$page" ] || { fail_case "$tool: no man page"; continue; }
  text=$(man_text "$page")
  CASES=$((CASES + 1))
  exit_section=$(printf '%s\n' "$text" | section "EXIT STATUS")
  for code in 0 1 2 130; do
    printf '%s' "$exit_section" | grep -qw -- "$code" || fail_case "$tool: man page EXIT STATUS does not name $code"
  done
  example_section=$(printf '%s\n' "$text" | section "EXAMPLES")
  CASES=$((CASES + 1))
  [ -n "$example_section" ] || fail_case "$tool: man page has no EXAMPLES section"
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    CASES=$((CASES + 1))
    printf '%s\n' "$example_section" | sed 's/^ *//' | grep -qxF -- "$line" \
      || fail_case "$tool: the example '$line' of --help is not in the EXAMPLES of man/$tool.1"
  done <<<"$examples"
done
finish
