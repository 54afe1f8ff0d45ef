// The one error funnel every tool goes through.
//
// A tool's main is `return bk::run_tool("name", argc, argv, body);`. The body throws (util/error.h)
//   bk::UsageError  -> "TOOL: MESSAGE; try --help" on stderr, exit 2
//   bk::Error (or any std::exception) -> "TOOL: error: MESSAGE" on stderr, exit 1
// SIGINT/SIGTERM/SIGHUP remove every registered temporary output file and exit 128 + the signal number
// (130 for INT, 143 for TERM, 129 for HUP).
#pragma once

#include "util/error.h"

#include <functional>
#include <string>
#include <vector>

namespace bk {

// The name of the running tool, as given to run_tool ("bertkit" before that).
const std::string& tool_name();
// The command line the tool was started with, argv[1..] (a training log's header records it).
const std::vector<std::string>& tool_arguments();

// Runs body inside the funnel and returns the process exit code.
int run_tool(const char* name, int argc, char** argv, const std::function<int(int, char**)>& body);

// Temporary files that must disappear if the process is interrupted. Paths are copied into a fixed table
// (kMaxCleanupPaths slots: the most temporaries a tool can have at once) so the signal handler can unlink them
// without allocating. Returns a slot for unregister_cleanup; throws bk::Error when the table is full.
inline constexpr int kMaxCleanupPaths = 256;
int register_cleanup(const std::string& path);
// A directory the run created, removed on a signal (after the files, and only if it is empty by then).
int register_cleanup_dir(const std::string& path);
// A directory of the run's temporaries: on a signal the files directly in it are removed, then the directory.
int register_cleanup_tree(const std::string& path);
void unregister_cleanup(int slot);
// mkstemp that closes its window: `path` ends in XXXXXX, which is replaced by random letters; the name is registered
// for cleanup (slot) before the file is made (O_EXCL, mode 0600), so a signal at any moment leaves no temporary
// behind. Returns the open descriptor, or -1 with errno set (slot then -1); bk::Error when the table is full.
int create_temporary(std::string& path, int& slot);

// True once SIGINT/SIGTERM/SIGHUP arrived (long loops may poll it; the handler itself exits the process).
bool interrupted();

}  // namespace bk
