#!/usr/bin/env bash
# cmake --install into a temporary prefix, then the installation used with the build and source trees out of sight
# (an empty working directory, PATH = PREFIX/bin and the system's, a clean environment): every installed tool
# starts and prints what the built one prints, no RUNPATH holds a build-tree directory or the made-up
# /lib/intel64_win entries of torch's CMake config, the LibTorch tools' RUNPATH finds libtorch_cpu.so, the man pages
# and share/bertkit are in place, and the installed Makefile.data (tools found beside it, or on PATH) makes the same
# files as the checkout's, printing the tools' summary lines unless QUIET=1.
source "$(dirname "$0")/lib.sh"
BUILD=${BUILD:-$(cd "$BIN/.." && pwd)}
CMAKE=${CMAKE:-cmake}
P=$TMP/prefix
mkdir -p "$TMP/empty" "$TMP/run" "$TMP/elsewhere"
# as_user PATH DIR CMD...: CMD run from DIR in a clean environment, as from a user's shell (HOME, a UTF-8 locale,
# PATH), with nothing of the build's.
as_user() { local path=$1 dir=$2; shift 2; (cd "$dir" && env -i HOME="$TMP/empty" LC_ALL=C.UTF-8 PATH="$path" "$@"); }
SYSTEM_PATH=/usr/bin:/bin
# expect_no_err DESCRIPTION
expect_no_err() { CASES=$((CASES + 1)); [ -z "$ERR" ] || fail_case "$1: stderr is not empty: $ERR"; }

run "$CMAKE" --install "$BUILD" --prefix "$P"
expect_rc 0 "cmake --install $BUILD --prefix PREFIX"

# The tools this build made: the text tools always, the LibTorch ones when it has them.
tools=$(sed -n 's/^set(BERTKIT_TEXT_TOOLS \(.*\))$/\1/p; s/^set(BERTKIT_TORCH_TOOLS \(.*\))$/\1/p' "$SRC/tools/CMakeLists.txt")
expected=$(for t in $tools; do [ -x "$BIN/$t" ] && echo "$t"; done | sort)
CASES=$((CASES + 1))
[ "$(ls "$P/bin" | sort)" = "$expected" ] || fail_case "PREFIX/bin holds exactly the built tools: $(ls "$P/bin" | tr '\n' ' ')"
torch=0; [ -x "$BIN/bert-train" ] && torch=1
echo "installed: $(echo $expected) (LibTorch tools: $([ $torch = 1 ] && echo yes || echo 'not in this build'))"

for tool in $expected; do
  run as_user "$P/bin:$SYSTEM_PATH" "$TMP/empty" "$tool" --version
  expect_rc 0 "installed $tool --version"
  expect_out "$("$BIN/$tool" --version)" "installed $tool --version prints what the built one prints"
  CASES=$((CASES + 1))
  [ -f "$P/share/man/man1/$tool.1" ] || fail_case "$tool: no man page in PREFIX/share/man/man1"
done
CASES=$((CASES + 1))
[ -f "$P/share/man/man5/bertkit-formats.5" ] || fail_case "bertkit-formats(5) is not installed"
CASES=$((CASES + 1))
[ -x "$P/share/bertkit/plot_loss.py" ] && cmp -s "$P/share/bertkit/plot_loss.py" "$SRC/scripts/plot_loss.py" \
  || fail_case "plot_loss.py is not installed (executable) as PREFIX/share/bertkit/plot_loss.py"

# bert-finetune hands train/predict/bench to its LibTorch half in PREFIX/libexec/bertkit.
if [ $torch = 1 ]; then
  run as_user "$P/bin:$SYSTEM_PATH" "$TMP/empty" bert-finetune train --help
  expect_rc 0 "installed bert-finetune train --help starts PREFIX/libexec/bertkit/bert-finetune-torch"
  expect_out "$("$BIN/bert-finetune" train --help)" "installed bert-finetune train --help"
fi

# RUNPATHs: nothing of the build tree, no intel64_win, and LibTorch's lib/ for the LibTorch programs.
if ! command -v readelf >/dev/null; then
  echo "RUNPATH checks skipped: no readelf"
else
  for exe in "$P"/bin/* "$P"/libexec/bertkit/*; do
    [ -f "$exe" ] || continue
    name=${exe#"$P"/}
    runpath=$(readelf -d "$exe" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]$/\2/p')
    CASES=$((CASES + 1))
    case "$runpath" in
      *intel64_win*|*win-x64*) fail_case "$name: RUNPATH has torch's made-up MKL directories: $runpath" ;;
      *"$BUILD"*) fail_case "$name: RUNPATH points into the build tree: $runpath" ;;
    esac
    if readelf -d "$exe" | grep -q 'NEEDED.*libtorch'; then
      CASES=$((CASES + 1))
      found=0
      IFS=: read -ra dirs <<<"$runpath"
      for d in "${dirs[@]}"; do [ -e "$d/libtorch_cpu.so" ] && found=1; done
      [ $found = 1 ] || fail_case "$name: no RUNPATH entry holds libtorch_cpu.so: '$runpath'"
      echo "$name RUNPATH: $runpath"
    fi
  done
fi

# share/bertkit: Makefile.data, the demo corpus, the pipelines (executable), the --config presets.
for f in Makefile.data demo/enwiki-demo.xml configs/bert-base.json pipelines/tools-dir.sh; do
  CASES=$((CASES + 1)); [ -f "$P/share/bertkit/$f" ] || fail_case "PREFIX/share/bertkit/$f is not installed"
done
for f in "$SRC"/pipelines/*.sh "$SRC"/pipelines/*.sbatch; do
  case "${f##*/}" in tools-dir.sh | machine.sh) continue ;; esac  # sourced by the others
  CASES=$((CASES + 1)); [ -x "$P/share/bertkit/pipelines/${f##*/}" ] || fail_case "pipelines/${f##*/} is not installed executable"
done

# The installed Makefile.data on the demo corpus installed beside it, from an unrelated directory, the tools found
# in PREFIX/bin through its own location (PATH does not have them); the checkout's Makefile.data with the built
# tools makes the same files.
knobs=(DUPE_FACTOR=1 EVAL_DOCS=3)
run as_user "$SYSTEM_PATH" "$TMP/run" make -s -f "$P/share/bertkit/Makefile.data" OUT="$TMP/installed" "${knobs[@]}"
expect_rc 0 "the installed Makefile.data finds the tools beside it"
# Without QUIET each tool's summary line reaches the user: wordpiece train's says how large the vocabulary came out
# (the demo corpus cannot fill the default VOCAB_SIZE of 30522).
expect_err "wordpiece: .*vocabulary of [0-9]+" "wordpiece train's summary line reaches the user"
expect_err "mkpretrain: " "mkpretrain's summary lines reach the user"
run make -s -f "$SRC/Makefile.data" BIN="$BIN" OUT="$TMP/checkout" QUIET=1 "${knobs[@]}"
expect_rc 0 "the checkout's Makefile.data, QUIET=1"
expect_out "" "QUIET=1: nothing on stdout"
expect_no_err "QUIET=1: nothing on stderr"
CASES=$((CASES + 1))
differ=$(cd "$TMP/checkout" && find . -type f -not -path './.settings/*' | sort | while read -r f; do cmp -s "$f" "$TMP/installed/$f" || echo "$f"; done)
[ -z "$differ" ] && [ "$(cd "$TMP/installed" && find . -type f -not -path './.settings/*' | wc -l)" = "$(cd "$TMP/checkout" && find . -type f -not -path './.settings/*' | wc -l)" ] \
  || fail_case "installed and checkout runs differ: $differ"
CASES=$((CASES + 1))
[ "$(find "$TMP/installed" -name '*.hdf5' | wc -l)" = 13 ] || fail_case "4 phase-1 + 4 phase-2 shards, 4 bins and an eval set"

# A copy of Makefile.data with no tools beside it takes them from PATH, and says so when PATH has none.
cp "$P/share/bertkit/Makefile.data" "$TMP/elsewhere/Makefile.data"
dump=(DUMP="$P/share/bertkit/demo/enwiki-demo.xml" TRAIN_SHARDS=4 TEST_SHARDS=1 TEST_FRACTION=0.1)
run as_user "$P/bin:$SYSTEM_PATH" "$TMP/empty" make -s -f "$TMP/elsewhere/Makefile.data" OUT="$TMP/path" "${dump[@]}" \
  QUIET=1 text
expect_rc 0 "a Makefile.data with no tools beside it uses the tools on PATH"
CASES=$((CASES + 1))
cmp -s "$TMP/path/sentences.txt" "$TMP/installed/sentences.txt" && cmp -s "$TMP/path/shards/wiki_training-00003-of-00004.txt" \
  "$TMP/installed/shards/wiki_training-00003-of-00004.txt" || fail_case "the PATH run's text and shards differ"
run as_user "$SYSTEM_PATH" "$TMP/empty" make -s -f "$TMP/elsewhere/Makefile.data" OUT="$TMP/none" "${dump[@]}" text
expect_rc 2 "no tools beside Makefile.data nor on PATH"
expect_err "bertkit tools are neither beside this Makefile.data .* nor on PATH; set BIN=DIR" "says where it looked"
CASES=$((CASES + 1)); [ ! -e "$TMP/none" ] || fail_case "nothing is made when the tools are missing"
run as_user "$SYSTEM_PATH" "$TMP/empty" make -s -f "$TMP/elsewhere/Makefile.data" help
expect_rc 0 "help needs no tools"
expect_no_err "help"

# The installed pipeline finds the tools in PREFIX/bin the same way.
run as_user "$SYSTEM_PATH" "$TMP/empty" "$P/share/bertkit/pipelines/stream-text.sh" \
  "$P/share/bertkit/demo/enwiki-demo.xml" "$TMP/stream" 1
expect_rc 0 "the installed stream-text.sh"
CASES=$((CASES + 1))
cmp -s "$TMP/stream/sentences.txt" "$TMP/installed/sentences.txt" || fail_case "stream-text.sh's sentences differ from Makefile.data's"
finish
