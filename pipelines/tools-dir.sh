# Sourced by the pipelines (bash): sets BIN, the directory of the bertkit tools, unless the caller set it. In order:
# the checkout's build/tools (a pipeline run from the source tree), PREFIX/bin (a pipeline installed as
# PREFIX/share/bertkit/pipelines), the directory of the tool on PATH.   source tools-dir.sh TOOL
if [ -z "${BIN:-}" ]; then
  for _bk_dir in "$(dirname "${BASH_SOURCE[0]}")/../build/tools" "$(dirname "${BASH_SOURCE[0]}")/../../../bin"; do
    if [ -x "$_bk_dir/$1" ]; then BIN=$(cd "$_bk_dir" && pwd); break; fi
  done
  if [ -z "${BIN:-}" ]; then
    _bk_tool=$(command -v "$1") || {
      echo "${0##*/}: error: $1 is not in the checkout's build/tools, not in an installation beside this script and not on PATH; set BIN to the tools' directory" >&2
      exit 1
    }
    BIN=$(dirname "$_bk_tool")
  fi
  unset _bk_dir _bk_tool
fi
