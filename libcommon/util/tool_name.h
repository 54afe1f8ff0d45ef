// The running tool's name and command line, for messages and logs anywhere in the library (cli/run_tool.h sets
// them when a tool starts).
#pragma once

#include <string>
#include <vector>

namespace bk {

// The name of the running tool, as given to run_tool ("bertkit" before that).
const std::string& tool_name();
// The command line the tool was started with, argv[1..] (a training log's header records it).
const std::vector<std::string>& tool_arguments();

void set_tool_identity(const char* name, int argc, char** argv);

// "TOOL: warning: MESSAGE" on stderr, one line.
void print_warning(const std::string& message);

}  // namespace bk
