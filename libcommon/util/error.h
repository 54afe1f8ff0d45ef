// The library's error types. Every area throws these; the tools' funnel (cli/run_tool.h) turns them into
// messages and exit codes:
//   bk::Error      a runtime or data error -> "TOOL: error: MESSAGE", exit 1
//   bk::UsageError a command-line mistake  -> "TOOL: MESSAGE; try --help", exit 2
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace bk {

// A runtime or data error. The message should name the file and the position (line, byte offset, record).
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A command-line mistake: wrong flag, bad value, missing argument.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What another library's exception (LibTorch's c10::Error, std::filesystem's) says to a user: its first line (what
// follows is a backtrace for developers), without LibTorch's "[enforce fail at FILE:LINE] CONDITION. " prefix.
inline std::string_view library_message(const std::exception& e) {
  std::string_view what = e.what();
  what = what.substr(0, what.find('\n'));
  if (what.starts_with("[enforce fail at ")) {
    const size_t end = what.find("] ");
    const size_t sentence = end == std::string_view::npos ? end : what.find(". ", end);
    if (sentence != std::string_view::npos) what.remove_prefix(sentence + 2);
  }
  return what;
}

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void usage_fail(fmt::format_string<Args...> format, Args&&... args) {
  throw UsageError(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace bk
