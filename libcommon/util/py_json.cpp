#include "util/py_json.h"

#include "util/utf8.h"
#include "util/error.h"

#include <charconv>
#include <cmath>

namespace bk {
namespace {

void append_indent(std::string& out, int indent, int level) {
  out.push_back('\n');
  out.append(static_cast<size_t>(indent) * static_cast<size_t>(level), ' ');
}

void append_hex4(std::string& out, unsigned value) {
  static const char kHex[] = "0123456789abcdef";  // Python writes lowercase
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out.push_back(kHex[(value >> shift) & 0xF]);
}

void append_value(std::string& out, const nlohmann::ordered_json& value, int indent, int level) {
  using Type = nlohmann::ordered_json::value_t;
  // Python's item separator is "," when indenting (the newline follows), ", " when not.
  const char* item_separator = indent >= 0 ? "," : ", ";
  switch (value.type()) {
    case Type::null: out += "null"; return;
    case Type::boolean: out += value.get<bool>() ? "true" : "false"; return;
    case Type::number_integer: out += std::to_string(value.get<int64_t>()); return;
    case Type::number_unsigned: out += std::to_string(value.get<uint64_t>()); return;
    case Type::number_float: append_py_json_float(out, value.get<double>()); return;
    case Type::string: append_py_json_string(out, value.get_ref<const std::string&>()); return;
    case Type::array: {
      if (value.empty()) {
        out += "[]";
        return;
      }
      out.push_back('[');
      bool first = true;
      for (const auto& item : value) {
        if (!first) out += item_separator;
        first = false;
        if (indent >= 0) append_indent(out, indent, level + 1);
        append_value(out, item, indent, level + 1);
      }
      if (indent >= 0) append_indent(out, indent, level);
      out.push_back(']');
      return;
    }
    case Type::object: {
      if (value.empty()) {
        out += "{}";
        return;
      }
      out.push_back('{');
      bool first = true;
      for (const auto& [key, item] : value.items()) {
        if (!first) out += item_separator;
        first = false;
        if (indent >= 0) append_indent(out, indent, level + 1);
        append_py_json_string(out, key);
        out += ": ";
        append_value(out, item, indent, level + 1);
      }
      if (indent >= 0) append_indent(out, indent, level);
      out.push_back('}');
      return;
    }
    default: fail("py_json: a {} value has no Python JSON text", value.type_name());
  }
}

}  // namespace

void append_py_float_repr(std::string& out, double x) {
  if (std::isnan(x)) {
    out += "nan";
    return;
  }
  if (std::isinf(x)) {
    out += x < 0 ? "-inf" : "inf";
    return;
  }
  // std::to_chars without a precision gives the shortest digits that read back to x (the closest of those), as
  // Python's repr does (David Gay's dtoa, mode 0); only the layout is Python's own.
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, x, std::chars_format::scientific);
  const std::string_view text(buffer, static_cast<size_t>(result.ptr - buffer));  // "-1.2345e-05"
  const size_t e = text.find('e');
  std::string_view mantissa = text.substr(0, e);
  const int exponent = std::stoi(std::string(text.substr(e + 1)));
  if (!mantissa.empty() && mantissa[0] == '-') {
    out.push_back('-');
    mantissa.remove_prefix(1);
  }
  std::string digits;
  for (char c : mantissa)
    if (c != '.') digits.push_back(c);
  const int ndigits = static_cast<int>(digits.size());
  const int decpt = exponent + 1;  // digits[0] is at 10^(decpt-1)
  // CPython's float_repr_style 'short': exponent notation when decpt <= -4 or decpt > 16.
  if (decpt <= -4 || decpt > 16) {
    out.push_back(digits[0]);
    if (ndigits > 1) {
      out.push_back('.');
      out.append(digits, 1);
    }
    const int shown = decpt - 1;
    out.push_back('e');
    out.push_back(shown < 0 ? '-' : '+');
    const std::string magnitude = std::to_string(shown < 0 ? -shown : shown);
    if (magnitude.size() < 2) out.push_back('0');
    out += magnitude;
  } else if (decpt <= 0) {
    out += "0.";
    out.append(static_cast<size_t>(-decpt), '0');
    out += digits;
  } else if (decpt >= ndigits) {
    out += digits;
    out.append(static_cast<size_t>(decpt - ndigits), '0');
    out += ".0";
  } else {
    out.append(digits, 0, static_cast<size_t>(decpt));
    out.push_back('.');
    out.append(digits, static_cast<size_t>(decpt));
  }
}

std::string py_float_repr(double x) {
  std::string out;
  append_py_float_repr(out, x);
  return out;
}

void append_py_json_float(std::string& out, double x) {
  if (std::isnan(x)) out += "NaN";
  else if (std::isinf(x)) out += x < 0 ? "-Infinity" : "Infinity";
  else append_py_float_repr(out, x);
}

void append_py_json_string(std::string& out, std::string_view utf8) {
  out.push_back('"');
  for (size_t pos = 0; pos < utf8.size();) {
    const char32_t cp = next_code_point(utf8, pos);
    switch (cp) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      default: break;
    }
    if (cp >= ' ' && cp <= '~') {
      out.push_back(static_cast<char>(cp));
    } else if (cp >= 0x10000) {
      const char32_t v = cp - 0x10000;
      append_hex4(out, 0xD800 + static_cast<unsigned>(v >> 10));
      append_hex4(out, 0xDC00 + static_cast<unsigned>(v & 0x3FF));
    } else {
      append_hex4(out, static_cast<unsigned>(cp));
    }
  }
  out.push_back('"');
}

void append_py_json(std::string& out, const nlohmann::ordered_json& value, int indent) {
  append_value(out, value, indent, 0);
}

std::string py_json_dumps(const nlohmann::ordered_json& value, int indent) {
  std::string out;
  append_py_json(out, value, indent);
  return out;
}

}  // namespace bk
