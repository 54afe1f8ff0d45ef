#!/usr/bin/env bash
# scripts/setup.sh on a new build directory prints only what the user must act on: configuring with LibTorch makes
# CMake and LibTorch print warnings (CUDA architectures, kineto) that ask nothing of the user; they go to
# BUILD/configure.log. A configure that fails shows its error and names that log.
source "$(dirname "$0")/lib.sh"
[ -x "$BIN/bert-train" ] || { echo "skipped: a build without LibTorch (the warnings come from its CMake files)"; exit 77; }
run env BERTKIT_BUILD="$TMP/build" BERTKIT_SETUP_BUILD=0 bash "$SRC/scripts/setup.sh" --python
expect_rc 0 "configuring a new build directory"
expect_out "" "nothing on stdout"
CASES=$((CASES + 1)); [ -z "$ERR" ] || fail_case "setup printed: $ERR"
CASES=$((CASES + 1)); grep -q "CMake Warning" "$TMP/build/configure.log" || fail_case "the warnings are not in configure.log"
# A build directory configured from another source tree: CMake refuses it.
mkdir -p "$TMP/bad"
printf 'CMAKE_HOME_DIRECTORY:INTERNAL=%s\n' "$TMP/elsewhere" >"$TMP/bad/CMakeCache.txt"
run env BERTKIT_BUILD="$TMP/bad" BERTKIT_SETUP_BUILD=0 bash "$SRC/scripts/setup.sh" --python
expect_rc 1 "a configure that fails"
expect_err "^setup: configuring the build failed; the whole log is $TMP/bad/configure.log$" "the failure names the log"
expect_err "CMake Error" "the failure shows CMake's error"
finish
