// Temporaries that a signal must not leave behind. Outputs (io/output.h, io/staged_output.h, the HDF5 writers,
// checkpoints) register what they create; SIGINT, SIGTERM and SIGHUP remove every registered path and exit
// 128 + the signal number (130 for INT, 143 for TERM, 129 for HUP), saying why on stderr.
#pragma once

#include <string>
#include <string_view>

namespace bk {

// Installs the handlers (cli/run_tool.h does, when a tool starts). A file-size limit (ulimit -f) then makes a write
// fail with EFBIG, reported and cleaned up like a full disk, instead of killing the process with SIGXFSZ.
void install_signal_cleanup();

// Paths are copied into a fixed table (kMaxCleanupPaths slots: the most temporaries a tool can have at once) so the
// signal handler can unlink them without allocating. Returns a slot for unregister_cleanup; throws bk::Error when
// the table is full.
inline constexpr int kMaxCleanupPaths = 256;
int register_cleanup(const std::string& path);
// A directory the run created, removed on a signal (after the files, and only if it is empty by then).
int register_cleanup_dir(const std::string& path);
// A directory of the run's temporaries: on a signal the files directly in it are removed, then the directory.
int register_cleanup_tree(const std::string& path);
void unregister_cleanup(int slot);

// mkstemp that closes its window: `path` ends in XXXXXX, which is replaced by random letters; the name is registered
// for cleanup (slot) before the file is made (O_EXCL, mode 0600), so a signal at any moment leaves no temporary
// behind. Returns the open descriptor, holding the file (io/leftovers.h) until it is closed, or -1 with errno set
// (slot then -1); bk::Error when the table is full.
int create_temporary(std::string& path, int& slot);

// True once SIGINT/SIGTERM/SIGHUP arrived (long loops may poll it; the handler itself exits the process).
bool interrupted();

// What the handler's line says after "TOOL: interrupted" (or "terminated", "hangup"), from now on: where a long
// run stopped and how to go on (" at step 120; last checkpoint step-00000100; continue with --resume"). Cut at 255
// bytes; one thread sets it.
void set_interrupt_note(std::string_view note);

// While one lives, a signal on any thread is noted instead of acted on, and acted on when the last one goes: the
// renames that put an output of several files in place (io/staged_output.h) run as one step, never interrupted
// half way with the old files set aside and the new ones removed.
class SignalsDeferred {
 public:
  SignalsDeferred();
  ~SignalsDeferred();
  SignalsDeferred(const SignalsDeferred&) = delete;
  SignalsDeferred& operator=(const SignalsDeferred&) = delete;
};

// While one lives, the first SIGINT, SIGTERM or SIGHUP asks the run to stop (stop_requested() returns it, and the
// handler says on stderr that the run stops at a checkpoint) instead of ending the process; a second one ends it
// at once, as always. A training loop polls it after each step, saves, and ends with end_as_signalled.
class StopRequests {
 public:
  StopRequests();
  ~StopRequests();
  StopRequests(const StopRequests&) = delete;
  StopRequests& operator=(const StopRequests&) = delete;
};
// The signal that asked to stop, or 0.
int stop_requested();
// What the handler does for `sig`, now: temporaries removed, the line with the interrupt note, exit 128 + sig.
[[noreturn]] void end_as_signalled(int sig);

}  // namespace bk
