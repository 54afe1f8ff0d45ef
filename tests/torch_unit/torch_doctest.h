// Include this instead of <doctest/doctest.h> in tests/torch_unit/*.cpp, before anything else.
//
// LibTorch's c10/util/Logging.h defines glog-style CHECK, CHECK_EQ, ... macros that clash with doctest's. The LibTorch
// headers are included first (their inline code is expanded with c10's macros), then c10's are dropped so that the
// test bodies get doctest's.
#pragma once

#include <ATen/ATen.h>

#undef CHECK
#undef CHECK_EQ
#undef CHECK_NE
#undef CHECK_LE
#undef CHECK_LT
#undef CHECK_GE
#undef CHECK_GT
#undef CHECK_NOTNULL

#include <doctest/doctest.h>
