// util/py_json.h against what Python 3.11's repr() and json.dumps() print for the same values (each expected
// text below was printed by Python).
#include <doctest/doctest.h>

#include "util/py_json.h"

#include <cmath>
#include <limits>
#include <string>

namespace {

std::string json_float(double x) {
  std::string out;
  bk::append_py_json_float(out, x);
  return out;
}

std::string json_string(std::string_view s) {
  std::string out;
  bk::append_py_json_string(out, s);
  return out;
}

}  // namespace

TEST_CASE("repr(float): shortest round-trip digits, fixed for exponents -4..15, else d.ddde+XX") {
  CHECK(bk::py_float_repr(0.1) == "0.1");
  CHECK(bk::py_float_repr(1.0) == "1.0");
  CHECK(bk::py_float_repr(100.0) == "100.0");
  CHECK(bk::py_float_repr(0.0) == "0.0");
  CHECK(bk::py_float_repr(-0.0) == "-0.0");
  CHECK(bk::py_float_repr(0.1 + 0.2) == "0.30000000000000004");
  CHECK(bk::py_float_repr(1.0 / 3) == "0.3333333333333333");
  CHECK(bk::py_float_repr(12345.678) == "12345.678");
  // The switch to exponent notation on the small side: 1e-4 stays fixed, 1e-5 does not.
  CHECK(bk::py_float_repr(0.0001) == "0.0001");
  CHECK(bk::py_float_repr(0.00012345) == "0.00012345");
  CHECK(bk::py_float_repr(1e-05) == "1e-05");
  CHECK(bk::py_float_repr(-2.5e-05) == "-2.5e-05");
  CHECK(bk::py_float_repr(std::ldexp(1.0, -20)) == "9.5367431640625e-07");
  // ... and on the large side: 16 integer digits stay fixed, 17 do not.
  CHECK(bk::py_float_repr(1e15) == "1000000000000000.0");
  CHECK(bk::py_float_repr(9999999999999998.0) == "9999999999999998.0");
  CHECK(bk::py_float_repr(9007199254740992.0) == "9007199254740992.0");
  CHECK(bk::py_float_repr(1e16) == "1e+16");
  CHECK(bk::py_float_repr(1.5e16) == "1.5e+16");
  CHECK(bk::py_float_repr(1e22) == "1e+22");
  CHECK(bk::py_float_repr(123456789012345678.0) == "1.2345678901234568e+17");
  CHECK(bk::py_float_repr(5e-324) == "5e-324");
  CHECK(bk::py_float_repr(std::numeric_limits<double>::max()) == "1.7976931348623157e+308");
  // A float32 logit widened to a double, as run_squad.py's float(x) does.
  CHECK(bk::py_float_repr(static_cast<double>(0.1f)) == "0.10000000149011612");
  CHECK(bk::py_float_repr(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(bk::py_float_repr(-std::numeric_limits<double>::infinity()) == "-inf");
  CHECK(bk::py_float_repr(std::nan("")) == "nan");
}

TEST_CASE("json.dumps floats: repr, with Infinity, -Infinity and NaN for the rest") {
  CHECK(json_float(1e-05) == "1e-05");
  CHECK(json_float(std::numeric_limits<double>::infinity()) == "Infinity");
  CHECK(json_float(-std::numeric_limits<double>::infinity()) == "-Infinity");
  CHECK(json_float(std::nan("")) == "NaN");
}

TEST_CASE("json.dumps strings (ensure_ascii): short escapes, \\u00XX for controls and DEL, surrogate pairs") {
  CHECK(json_string("plain text ~") == "\"plain text ~\"");
  CHECK(json_string("a\"b\\c\n\t\r\b\f") == "\"a\\\"b\\\\c\\n\\t\\r\\b\\f\"");
  CHECK(json_string(std::string_view("\x00\x1f\x7f", 3)) == "\"\\u0000\\u001f\\u007f\"");
  // é, €, U+2028 and an emoji (U+1F600, a surrogate pair): lowercase hex.
  CHECK(json_string("\xc3\xa9\xe2\x82\xac\xe2\x80\xa8\xf0\x9f\x98\x80") == "\"\\u00e9\\u20ac\\u2028\\ud83d\\ude00\"");
  CHECK(json_string("/") == "\"/\"");  // not escaped
}

TEST_CASE("json.dumps layouts: separators with and without indent, empty containers, member order kept") {
  nlohmann::ordered_json value;
  value["a"] = nlohmann::ordered_json::array({1, nlohmann::ordered_json::object({{"b", nlohmann::ordered_json::array()}}),
                                              nlohmann::ordered_json::object()});
  value["c"]["d"] = 1.0;
  value["Z"] = nullptr;
  value["e"] = true;
  CHECK(bk::py_json_dumps(value) == "{\"a\": [1, {\"b\": []}, {}], \"c\": {\"d\": 1.0}, \"Z\": null, \"e\": true}");
  CHECK(bk::py_json_dumps(value, 2) ==
        "{\n  \"a\": [\n    1,\n    {\n      \"b\": []\n    },\n    {}\n  ],\n  \"c\": {\n    \"d\": 1.0\n  },\n"
        "  \"Z\": null,\n  \"e\": true\n}");
  CHECK(bk::py_json_dumps(nlohmann::ordered_json::object(), 4) == "{}");
  CHECK(bk::py_json_dumps(nlohmann::ordered_json(uint64_t{18446744073709551615u})) == "18446744073709551615");
  CHECK(bk::py_json_dumps(nlohmann::ordered_json(int64_t{-7})) == "-7");
}
