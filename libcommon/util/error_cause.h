// The cause beneath an error.
//
// A layer below the one that failed can find, while the error unwinds, that the real cause lies with it:
// bk::Input finds its compressed stream corrupt after a bit flip in a .gz made a reader see "invalid UTF-8".
// It records the cause here, and the funnel (cli/run_tool.h) reports the cause in place of the symptom, on the
// same one line. The first cause recorded wins; take_error_cause() returns it ("" if none) and clears it.
#pragma once

#include <string>

namespace bk {

void set_error_cause(std::string cause);
std::string take_error_cause();

}  // namespace bk
