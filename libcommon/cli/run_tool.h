// The one error funnel every tool goes through.
//
// A tool's main is `return bk::run_tool("name", argc, argv, body);`. The body throws (util/error.h)
//   bk::UsageError  -> "TOOL: MESSAGE; try --help" on stderr, exit 2
//   bk::Error (or any std::exception) -> "TOOL: error: MESSAGE" on stderr, exit 1
// Every message is one line (util/printable.h's one_line). SIGINT/SIGTERM/SIGHUP remove every registered temporary
// (io/cleanup.h) and exit 128 + the signal number.
#pragma once

#include "util/error.h"

#include <functional>

namespace bk {

// Runs body inside the funnel and returns the process exit code.
int run_tool(const char* name, int argc, char** argv, const std::function<int(int, char**)>& body);

}  // namespace bk
