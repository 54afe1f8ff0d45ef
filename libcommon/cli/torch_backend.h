// A tool whose light subcommands run without LibTorch hands the others to its LibTorch backend: the program
// `name` beside this executable (the build tree), or in ../libexec/bertkit/ (an installed tree), run in place of
// this process with the same arguments.
#pragma once

#include <string>

namespace bk {

// Does not return: execs the backend, or fails (bk::Error) saying that `what` needs LibTorch when there is none.
[[noreturn]] void exec_torch_backend(const std::string& name, char** argv, const std::string& what);

}  // namespace bk
