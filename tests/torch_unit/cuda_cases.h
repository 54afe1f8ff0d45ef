// Whether a CUDA case can run here. Without a CUDA device (CI), or without what the case needs from the build
// (bertkit's own kernels, CUDA graphs), it is skipped with a message. Under BERTKIT_REQUIRE_CUDA=1, as
// bench/gpu_check.sh runs the cases on a GPU machine, a skip is a failure instead: a build without nvcc must not
// pass there for having run nothing.
#pragma once

#include "torch_doctest.h"

#include <ATen/Context.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace bk_test {

// BERTKIT_REQUIRE_CUDA=1: a skipped CUDA case fails.
inline bool cuda_required() {
  const char* required = std::getenv("BERTKIT_REQUIRE_CUDA");
  return required != nullptr && std::strcmp(required, "1") == 0;
}

// What a CUDA case needs besides a device: nothing, bertkit's kernels, or CUDA graphs (each build flag's answer).
inline bool cuda_case_runs(bool build_has_it = true, const char* what_the_build_lacks = "") {
  std::string missing;
  if (!at::hasCUDA()) missing = "no CUDA device";
  else if (!build_has_it) missing = what_the_build_lacks;
  if (missing.empty()) return true;
  if (cuda_required()) FAIL_CHECK(missing << " (BERTKIT_REQUIRE_CUDA=1)");
  else MESSAGE(missing << ": skipped");
  return false;
}

}  // namespace bk_test
