// JSON text exactly as Python 3's json.dumps writes it, for outputs that must be byte-identical to a Python
// reference's (run_squad.py's predictions, the SQuAD scorers' results) and for files Python reads back.
//
// What json.dumps(x) and json.dumps(x, indent=N) write, and what this writes too:
// - separators ", " and ": " without indent; "," and ": " with it (Python 3.4 on), each member on its own line
//   indented N spaces per level, empty containers as {} and [];
// - strings with ensure_ascii=True: \" \\ \b \f \n \r \t, every other character outside ' '..'~' as \uXXXX
//   (lowercase hex), above U+FFFF as a UTF-16 surrogate pair;
// - floats as repr(float): the shortest digits that read back to the same double (the closest of those), in
//   fixed notation when the decimal exponent is in [-4, 16), else as d.ddde+XX ("1e-05", "1.5e+16"); integral
//   values keep ".0"; infinities and NaN as Infinity, -Infinity and NaN (not valid JSON, but what Python writes
//   and reads back);
// - integers, true, false, null as JSON has them; object members in their stored order.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace bk {

// Python's repr(float(x)): "0.1", "1.0", "-0.0", "1e-05", "1.5e+16", "inf", "nan".
std::string py_float_repr(double x);
void append_py_float_repr(std::string& out, double x);

// A float as json.dumps writes it: repr, but Infinity, -Infinity and NaN for the non-finite values.
void append_py_json_float(std::string& out, double x);

// A JSON string literal with quotes, as json.dumps writes it (ensure_ascii=True); `utf8` must be valid UTF-8.
void append_py_json_string(std::string& out, std::string_view utf8);

// json.dumps(value) (indent < 0) or json.dumps(value, indent=indent).
std::string py_json_dumps(const nlohmann::ordered_json& value, int indent = -1);
void append_py_json(std::string& out, const nlohmann::ordered_json& value, int indent = -1);

}  // namespace bk
