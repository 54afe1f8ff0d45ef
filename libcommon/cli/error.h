// The one error funnel every tool goes through.
//
// A tool's main is `return bk::run_tool("name", argc, argv, body);`. The body throws
//   bk::UsageError  -> "TOOL: MESSAGE; try --help" on stderr, exit 2
//   bk::Error (or any std::exception) -> "TOOL: error: MESSAGE" on stderr, exit 1
// SIGINT/SIGTERM remove every registered temporary output file and exit 130 (143 for TERM).
#pragma once

#include <fmt/format.h>

#include <functional>
#include <stdexcept>
#include <string>

namespace bk {

// A runtime or data error. The message should name the file and the position (line, byte offset, record).
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A command-line mistake: wrong flag, bad value, missing argument.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void usage_fail(fmt::format_string<Args...> format, Args&&... args) {
  throw UsageError(fmt::format(format, std::forward<Args>(args)...));
}

// The name of the running tool, as given to run_tool ("bertkit" before that).
const std::string& tool_name();

// Runs body inside the funnel and returns the process exit code.
int run_tool(const char* name, int argc, char** argv, const std::function<int(int, char**)>& body);

// Temporary files that must disappear if the process is interrupted. Paths are copied into a fixed table
// so the signal handler can unlink them without allocating. Returns a slot for unregister_cleanup.
int register_cleanup(const std::string& path);
void unregister_cleanup(int slot);

// True once SIGINT/SIGTERM arrived (long loops may poll it; the handler itself exits the process).
bool interrupted();

}  // namespace bk
