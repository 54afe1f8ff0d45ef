// A setting that takes one of a few named values (--optimizer lamb, --precision bf16): the names and the values
// side by side, so that a flag is parsed once into its value and the value is printed back by the same table.
//
//   enum class LrDecay { poly, linear };
//   inline constexpr Choice<LrDecay> kLrDecays[] = {{"poly", LrDecay::poly}, {"linear", LrDecay::linear}};
//   choice_name(kLrDecays, LrDecay::linear)   -> "linear"
//   find_choice(kLrDecays, "poly")            -> LrDecay::poly
//   choice_list(kLrDecays)                    -> "poly or linear"
// cli/options.h's choice_value binds a flag to one.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace bk {

template <typename T>
struct Choice {
  const char* name;
  T value;
};

template <typename T, size_t N>
const char* choice_name(const Choice<T> (&choices)[N], T value) {
  for (const Choice<T>& c : choices)
    if (c.value == value) return c.name;
  return "?";
}

template <typename T, size_t N>
std::optional<T> find_choice(const Choice<T> (&choices)[N], std::string_view name) {
  for (const Choice<T>& c : choices)
    if (name == c.name) return c.value;
  return std::nullopt;
}

template <typename T, size_t N>
std::string choice_list(const Choice<T> (&choices)[N]) {
  std::string out;
  for (size_t i = 0; i < N; ++i) out += std::string(i == 0 ? "" : i + 1 == N ? " or " : ", ") + choices[i].name;
  return out;
}

}  // namespace bk
