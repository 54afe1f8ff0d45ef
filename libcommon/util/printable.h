// Untrusted text (a token, a feature name, a tag read from the input) made safe to put in an error message.
//
// An error message is one line on a terminal. Text from the input may hold newlines, terminal escape sequences,
// invalid UTF-8 or megabytes; printable_excerpt() escapes what a terminal would act on and cuts what is long, so
// the message stays one readable line whatever the input was.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace bk {

// `text` with control bytes (C0, DEL), C1 controls, bidirectional overrides and line/paragraph separators
// escaped as \n \t \r \xHH or \uHHHH, each byte of invalid UTF-8 as \xHH, and a backslash as \\. When the
// escaped form would exceed max_bytes, it is cut at a character boundary and "... (N bytes)" is appended,
// N being the size of the whole `text`.
std::string printable_excerpt(std::string_view text, size_t max_bytes = 80);

// A whole error message made one line for stderr, the funnel's last defence (cli/run_tool.h): control bytes and
// invalid UTF-8 escaped as printable_excerpt escapes them, except that a backslash stays as it is (the message may
// hold excerpts escaped already); when the result passes max_bytes its middle is cut out, so that the file named
// at the start and the problem stated at the end both stay.
std::string one_line(std::string_view message, size_t max_bytes = 2048);

}  // namespace bk
