// The library's error types. Every area throws these; the tools' funnel (cli/run_tool.h) turns them into
// messages and exit codes:
//   bk::Error      a runtime or data error -> "TOOL: error: MESSAGE", exit 1
//   bk::UsageError a command-line mistake  -> "TOOL: MESSAGE; try --help", exit 2
#pragma once

#include <fmt/format.h>

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

}  // namespace bk
