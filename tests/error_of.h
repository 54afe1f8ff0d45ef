// The message of the bk::Error a call throws, for tests of error messages (unit and LibTorch unit tests alike).
#pragma once

#include "util/error.h"

#include <string>

namespace bk_test {

// f()'s bk::Error message, or "" when it throws none (other exceptions pass through and fail the test).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const bk::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace bk_test
