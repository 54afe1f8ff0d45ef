// Reading JSON that came from a file or a user: nlohmann's exceptions turned into one line that names where the
// JSON came from and the byte at fault, without the library's "[json.exception.parse_error.101]" tag and without
// echoing the bytes it last read (they may be binary or megabytes long).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace bk {

// The JSON in `text`; bk::Error "WHERE: malformed JSON at byte N (reason)" when it is not JSON, or "WHERE: REASON"
// for a number too large for a double ("1e400") and the like.
nlohmann::json parse_json(std::string_view text, const std::string& where);
// The same with nlohmann's parser callback, which sees each value as it is read and may keep it out of the result
// (for large members read straight into the caller's own structures).
nlohmann::json parse_json(std::string_view text, const std::string& where,
                          const nlohmann::json::parser_callback_t& callback);

// What went wrong, as one printable clause: "malformed JSON at byte 12 (syntax error while parsing value)",
// "number overflow parsing '1e400'" (cut and escaped), "invalid UTF-8 byte at index 3: 0xFF".
std::string json_error_text(const nlohmann::json::exception& e);

}  // namespace bk
