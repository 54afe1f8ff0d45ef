#include "util/tool_name.h"

#include <cstdio>

#include <algorithm>

namespace bk {

namespace {
std::string g_tool = "bertkit";
std::vector<std::string> g_arguments;
}  // namespace

const std::string& tool_name() { return g_tool; }
const std::vector<std::string>& tool_arguments() { return g_arguments; }

void set_tool_identity(const char* name, int argc, char** argv) {
  g_tool = name;
  g_arguments.assign(argv + std::min(argc, 1), argv + argc);
}

void print_warning(const std::string& message) {
  std::fprintf(stderr, "%s: warning: %s\n", tool_name().c_str(), message.c_str());
}

}  // namespace bk
