#include "util/json_read.h"

#include "util/error.h"
#include "util/printable.h"

namespace bk {

std::string json_error_text(const nlohmann::json::exception& e) {
  // e.what() reads "[json.exception.KIND.ID] MESSAGE", a parse error's MESSAGE "parse error at line 3, column 7:
  // REASON; last read: 'BYTES'".
  std::string_view what = e.what();
  if (what.starts_with("[json.exception.")) {
    const size_t end = what.find("] ");
    if (end != std::string_view::npos) what.remove_prefix(end + 2);
  }
  if (const auto* parse = dynamic_cast<const nlohmann::json::parse_error*>(&e)) {
    const size_t at = what.find("parse error at ");
    std::string_view reason = at == std::string_view::npos ? what : what.substr(at + 15);
    reason = reason.substr(0, reason.find("; last read:"));
    return fmt::format("malformed JSON at byte {} ({})", parse->byte, printable_excerpt(reason, 200));
  }
  return printable_excerpt(what, 200);
}

nlohmann::json parse_json(std::string_view text, const std::string& where) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: {}", where, json_error_text(e));
  }
}

nlohmann::json parse_json(std::string_view text, const std::string& where,
                          const nlohmann::json::parser_callback_t& callback) {
  try {
    return nlohmann::json::parse(text, callback);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: {}", where, json_error_text(e));
  }
}

}  // namespace bk
