#include "io/cleanup.h"

#include "io/leftovers.h"

#include "util/error.h"
#include "util/tool_name.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <random>
#include <string>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace bk {
namespace {

std::atomic<bool> g_interrupted{false};
// While an output is being put in place (SignalsDeferred), a signal on any thread is noted, not acted on.
std::atomic<int> g_deferring{0};
std::atomic<int> g_pending_signal{0};
std::atomic<int> g_stop_mode{0};       // StopRequests alive
std::atomic<int> g_stop_requested{0};  // the signal that asked to stop
std::atomic<bool> g_cleaning{false};  // the first handler to run cleans up; another waits for its exit
// What the handler says after ": interrupted" (set_interrupt_note): two buffers, the one not being read written
// and then published, so the handler never reads a half-written note. A note changes at most once per training
// step, far slower than a handler's few writes.
constexpr size_t kMaxNote = 256;
std::array<std::array<char, kMaxNote>, 2> g_notes{};
std::atomic<int> g_note{-1};  // the published buffer; -1 for none

constexpr int kMaxCleanup = kMaxCleanupPaths;
constexpr size_t kMaxPath = 4096;
// Each slot is a NUL-terminated path; slot_used flags are what the handler reads.
std::array<std::array<char, kMaxPath>, kMaxCleanup> g_paths;
std::array<std::atomic<bool>, kMaxCleanup> g_used{};
enum class CleanupKind : uint8_t { file, dir, tree };
std::array<CleanupKind, kMaxCleanup> g_kind{};  // written before g_used is set, read only after
std::mutex g_register_mutex;

void write_stderr(const char* text, size_t left) {
  while (left > 0) {
    ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<size_t>(n);
  }
}

// One line from its parts, in one write(2): handlers on two threads (two signals at once) never interleave their
// words. Async-signal-safe: a buffer on the stack, cut at its size.
void write_stderr_line(std::initializer_list<const char*> parts) {
  char line[640];
  size_t used = 0;
  for (const char* part : parts)
    for (; *part != '\0' && used + 1 < sizeof line; ++part) line[used++] = *part;
  line[used++] = '\n';
  write_stderr(line, used);
}

// Unlinks the entries directly in `dir` with system calls only (no allocation: this runs in a signal handler).
void empty_directory(const char* dir) {
  const int fd = ::open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  alignas(8) char entries[4096];
  for (long n; (n = ::syscall(SYS_getdents64, fd, entries, sizeof entries)) > 0;) {
    for (long at = 0; at < n;) {
      const auto* entry = reinterpret_cast<const struct dirent64*>(entries + at);
      if (entry->d_reclen == 0) break;  // a damaged record: leave the rest rather than loop
      const char* name = entry->d_name;
      if (std::strcmp(name, ".") != 0 && std::strcmp(name, "..") != 0) ::unlinkat(fd, name, 0);
      at += entry->d_reclen;
    }
  }
  ::close(fd);
}

extern "C" void on_signal(int sig) {
  g_interrupted = true;
  if (int none = 0; g_stop_mode.load() > 0 && g_stop_requested.compare_exchange_strong(none, sig)) {
    write_stderr_line({tool_name().c_str(), ": stopping after this step, at a checkpoint (once more to stop at once, "
                                            "without one)"});
    return;
  }
  if (g_deferring.load() > 0) {
    g_pending_signal = sig;
    return;
  }
  if (g_cleaning.exchange(true)) {
    for (;;) ::pause();  // another thread is cleaning up and will end the process
  }
  for (int i = 0; i < kMaxCleanup; ++i) {
    if (!g_used[i].load()) continue;
    if (g_kind[i] == CleanupKind::file) ::unlink(g_paths[i].data());
    if (g_kind[i] == CleanupKind::tree) empty_directory(g_paths[i].data());
  }
  // Then the directories, newest first (a child registered after its parent), twice for any other order;
  // rmdir removes only empty ones.
  for (int pass = 0; pass < 2; ++pass)
    for (int i = kMaxCleanup - 1; i >= 0; --i)
      if (g_used[i].load() && g_kind[i] != CleanupKind::file) ::rmdir(g_paths[i].data());
  const int note = g_note.load();
  // The tool's name is set before the handlers are installed, never changed after.
  write_stderr_line({tool_name().c_str(), sig == SIGINT ? ": interrupted" : sig == SIGHUP ? ": hangup" : ": terminated",
                     note >= 0 ? g_notes[static_cast<size_t>(note)].data() : ""});
  ::_exit(128 + sig);
}

}  // namespace

bool interrupted() { return g_interrupted.load(); }

void set_interrupt_note(std::string_view note) {
  const size_t next = g_note.load() == 0 ? 1 : 0;
  const size_t n = std::min(note.size(), kMaxNote - 1);
  std::memcpy(g_notes[next].data(), note.data(), n);
  g_notes[next][n] = '\0';
  g_note.store(static_cast<int>(next));
}

namespace {
int register_path(const std::string& path, CleanupKind kind) {
  if (path.size() >= kMaxPath) fail("path too long: {}", path);
  std::lock_guard lock(g_register_mutex);
  for (int i = 0; i < kMaxCleanup; ++i) {
    if (!g_used[i].load()) {
      std::memcpy(g_paths[i].data(), path.c_str(), path.size() + 1);
      g_kind[i] = kind;
      g_used[i].store(true);
      return i;
    }
  }
  fail("{}: too many temporary output files at once (limit {})", path, kMaxCleanup);
}
}  // namespace

int register_cleanup(const std::string& path) { return register_path(path, CleanupKind::file); }
int register_cleanup_dir(const std::string& path) { return register_path(path, CleanupKind::dir); }
int register_cleanup_tree(const std::string& path) { return register_path(path, CleanupKind::tree); }

void unregister_cleanup(int slot) {
  if (slot < 0 || slot >= kMaxCleanup) return;
  std::lock_guard lock(g_register_mutex);
  g_used[slot].store(false);
}

int create_temporary(std::string& path, int& slot) {
  static constexpr char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  static constexpr size_t kX = 6;
  if (path.size() < kX || path.compare(path.size() - kX, kX, "XXXXXX") != 0)
    fail("{}: a temporary file's name must end in XXXXXX", path);
  std::random_device entropy;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    for (size_t i = path.size() - kX; i < path.size(); ++i) path[i] = kLetters[entropy() % (sizeof(kLetters) - 1)];
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) continue;  // taken: try another name (this one was never registered)
    slot = register_cleanup(path);                   // first, so no signal finds the file made but not registered
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
      hold_temporary(fd);  // while the descriptor is open, no later run takes it for a leftover (io/leftovers.h)
      return fd;
    }
    const int error = errno;
    unregister_cleanup(slot);
    slot = -1;
    if (error != EEXIST) {
      errno = error;
      return -1;
    }
  }
  errno = EEXIST;
  return -1;
}

StopRequests::StopRequests() { ++g_stop_mode; }
StopRequests::~StopRequests() { --g_stop_mode; }
int stop_requested() { return g_stop_requested.load(); }

void end_as_signalled(int sig) {
  g_stop_mode = 0;
  g_deferring = 0;
  on_signal(sig);
  ::_exit(128 + sig);  // not reached: on_signal exits
}

SignalsDeferred::SignalsDeferred() { ++g_deferring; }

SignalsDeferred::~SignalsDeferred() {
  if (--g_deferring == 0)
    if (const int sig = g_pending_signal.exchange(0)) on_signal(sig);
}

void install_signal_cleanup() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&action.sa_mask, sig);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  // A closed terminal or ssh session (SIGHUP) would otherwise kill the process with its temporaries in place.
  sigaction(SIGHUP, &action, nullptr);
  std::signal(SIGXFSZ, SIG_IGN);
}

}  // namespace bk
