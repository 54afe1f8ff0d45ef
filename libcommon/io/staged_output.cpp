#include "io/staged_output.h"

#include "io/cleanup.h"
#include "io/durable.h"
#include "io/leftovers.h"
#include "io/output.h"
#include "util/error.h"
#include "util/printable.h"
#include "util/tool_name.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace bk {
namespace fs = std::filesystem;
namespace {

std::string parent_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

// Where a destination that is a symbolic link (a chain of them) points: the output is replaced there, and what a
// killed run left lies beside it, even while the link dangles.
fs::path through_links(fs::path dest) {
  std::error_code ec;
  for (int hops = 0; hops < 40 && fs::is_symlink(dest, ec); ++hops) {
    const fs::path target = fs::read_symlink(dest, ec);
    if (ec) break;
    dest = target.is_absolute() ? target : dest.parent_path() / target;
  }
  return dest.lexically_normal();
}

}  // namespace

void refuse_foreign_entries(const std::string& dir, const std::function<bool(const fs::directory_entry&)>& is_own,
                            std::string_view replaces_only) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (!is_own(entry))
      fail("{}: holds {}, which {} did not write; -f replaces only {}: give another -o", dir,
           printable_excerpt(entry.path().filename().string()), tool_name(), replaces_only);
  if (ec) fail("{}: cannot list: {}", dir, ec.message());
}

StagedDirectory::StagedDirectory(const std::string& destination, bool overwrite) : destination_(destination) {
  recover_killed_commit(destination);
  fs::path dest(destination);
  if (dest.filename().empty()) dest = dest.parent_path();
  std::error_code same_ec;
  if (dest.empty() || dest.filename() == "." || dest.filename() == ".." ||
      fs::equivalent(dest, fs::current_path(), same_ec))
    fail("{}: names the current directory (or its parent); give the output directory a name of its own", destination);
  if (fs::exists(dest) && !overwrite) fail("{}: already exists; use -f/--force to replace it", destination);
  if (fs::exists(dest) && !fs::is_directory(dest)) fail("{}: exists and is not a directory", destination);
  // A link to a directory (data kept on a bigger disk): the output replaces the directory it points at, built
  // beside it on that disk; the link stays.
  if (std::error_code link_ec; fs::is_symlink(dest, link_ec)) dest = through_links(dest);
  destination_ = dest.string();
  parents_.create(parent_of(destination_));  // missing parents are made, and removed again unless committed
  staging_ = temporary_sibling(destination_, ".", fmt::format(".partial-{}", ::getpid()));
  fs::remove_all(staging_);
  fs::create_directory(staging_);
  held_fd_ = hold_temporary_dir(staging_);
  // An interrupt removes the staging directory's files, then the directory (registered first: the handler
  // reaches directories after files).
  slots_.push_back(register_cleanup_dir(staging_));
}

StagedDirectory::~StagedDirectory() {
  std::error_code ignored;
  if (!committed_) fs::remove_all(staging_, ignored);
  if (held_fd_ >= 0) ::close(held_fd_);
  for (int slot : slots_) unregister_cleanup(slot);
}

namespace {

// The PID in a StagedDirectory's temporary name for `destination` (.NAME.partial-PID, .NAME.partial-PID.old);
// empty for any other name.
std::string_view partial_pid(std::string_view entry, const std::string& destination) {
  const std::string prefix = fmt::format(".{}.partial-", fs::path(destination).filename().string());
  if (!entry.starts_with(prefix)) return {};
  std::string_view rest = entry.substr(prefix.size());
  if (rest.ends_with(".old")) rest.remove_suffix(4);
  return !rest.empty() && rest.find_first_not_of("0123456789") == std::string_view::npos ? rest : std::string_view();
}

}  // namespace

void recover_killed_commit(const std::string& destination) {
  fs::path dest(destination);
  if (dest.filename().empty()) dest = dest.parent_path();
  dest = through_links(dest);
  const std::string parent = parent_of(dest.string());
  std::error_code ec;
  if (!fs::exists(dest, ec))
    for (const auto& entry : fs::directory_iterator(parent, ec)) {
      const std::string name = entry.path().filename().string();
      if (!name.ends_with(".old") || partial_pid(name, dest.string()).empty() ||
          !is_dead_temporary(entry.path().string()))
        continue;
      std::error_code moved;
      fs::rename(entry.path(), dest, moved);
      if (!moved)
        std::fprintf(stderr, "%s: %s: put back the output that a killed run had moved aside\n", tool_name().c_str(),
                     dest.c_str());
      break;
    }
  sweep_leftovers(parent, [&](std::string_view name) { return !partial_pid(name, dest.string()).empty(); });
}

void StagedDirectory::replaces_only(std::function<bool(const fs::directory_entry&)> is_own, std::string description) {
  is_own_ = std::move(is_own);
  own_description_ = std::move(description);
}

void StagedDirectory::refuse_foreign(const std::string& dir) const {
  try {
    refuse_foreign_entries(dir, is_own_, own_description_);
  } catch (const Error& e) {
    std::string message = e.what();
    if (message.starts_with(dir)) message.replace(0, dir.size(), destination_);  // the output, not where it is now
    throw Error(message);
  }
}

std::string StagedDirectory::file(const char* name) {
  const std::string path = (fs::path(staging_) / name).string();
  slots_.push_back(register_cleanup(path));
  return path;
}

std::string StagedDirectory::as_destination(std::string message) const {
  for (size_t at = message.find(staging_); at != std::string::npos; at = message.find(staging_, at))
    message.replace(at, staging_.size(), destination_), at += destination_.size();
  return message;
}

std::string StagedDirectory::subdirectory(const char* name) {
  const std::string path = (fs::path(staging_) / name).string();
  slots_.push_back(register_cleanup_tree(path));  // first, so that a signal between the two leaves nothing
  fs::create_directory(path);
  return path;
}

void StagedDirectory::commit() {
  SignalsDeferred deferred;
  // The files (each already synced by its own commit) and the staging directory's entries reach the disk before
  // the rename that makes them the output, and the rename itself after it (io/durable.h).
  sync_directory_contents(staging_, destination_);
  parents_.sync();  // the missing parents it made: their entries too, before the output is put in place
  const std::string parent = parent_of(destination_);
  std::error_code ec;
  std::string old;  // where the replaced output is once the new one is in place
  if (fs::exists(destination_)) {
    if (is_own_) refuse_foreign(destination_);  // a file put there since the run began
    // --force: one atomic swap, so that no moment leaves the destination missing; the old output goes only once
    // the new one is in place.
    const bool swapped = ::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, destination_.c_str(), RENAME_EXCHANGE) == 0;
    if (!swapped && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
      fail("{}: cannot swap the new output into place: {}", destination_, std::strerror(errno));
    old = swapped ? staging_ : staging_ + ".old";
    if (!swapped) {
      fs::rename(destination_, old, ec);
      if (ec) fail("{}: cannot move the old output aside to replace it: {}", destination_, ec.message());
      fs::rename(staging_, destination_, ec);
      if (ec) {
        std::error_code back;
        fs::rename(old, destination_, back);
        fail("{}: cannot rename into place: {}", destination_, ec.message());
      }
    }
    if (is_own_) {
      try {
        refuse_foreign(old);  // the last moment one could have come in
      } catch (const Error&) {
        std::error_code back;  // the old output back in place, the new one where the destructor removes it
        if (swapped) ::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, destination_.c_str(), RENAME_EXCHANGE);
        else fs::rename(destination_, staging_, back), fs::rename(old, destination_, back);
        throw;
      }
    }
  } else {
    fs::rename(staging_, destination_, ec);
    if (ec) fail("{}: cannot rename into place: {}", destination_, ec.message());
  }
  committed_ = true;
  parents_.commit();
  for (int slot : slots_) unregister_cleanup(slot);
  slots_.clear();
  if (!old.empty()) fs::remove_all(old, ec);  // the new output is in place whatever the sync below says
  sync_directory(parent, destination_);
}

StagedFiles::~StagedFiles() {
  std::error_code ignored;
  for (const Staging& st : staging_) {
    fs::remove_all(st.staging, ignored);
    if (st.held_fd >= 0) ::close(st.held_fd);
  }
  for (int slot : slots_) unregister_cleanup(slot);
}

std::string StagedFiles::as_destination(std::string message) const {
  for (const Staged& f : files_)
    for (size_t at = message.find(f.temp); at != std::string::npos; at = message.find(f.temp, at))
      message.replace(at, f.temp.size(), f.destination), at += f.destination.size();
  return message;
}

std::string StagedFiles::staging_dir(const std::string& dir) {
  created_.create(dir);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) fail("{}: cannot stat: {}", dir, std::strerror(errno));
  for (const Staging& known : staging_)
    if (known.device == st.st_dev && known.inode == st.st_ino) return known.staging;
  // The host in the name: on a file system shared by several nodes, whose flocks may not reach each other, a run
  // sweeps only its own host's leftovers.
  std::string staging = (fs::path(dir) / fmt::format(".bertkit-staged-{}-XXXXXX", host_name())).string();
  sweep_dead_siblings(staging);  // what a killed run left here, its displaced old files included
  if (::mkdtemp(staging.data()) == nullptr)
    fail("{}: cannot create a staging directory: {}", dir, std::strerror(errno));
  slots_.push_back(register_cleanup_tree(staging));
  staging_.push_back({dir, static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), staging,
                      hold_temporary_dir(staging)});
  return staging;
}

std::string StagedFiles::stage(const std::string& destination) {
  for (const auto& f : files_)
    if (f.destination == destination) fail("{}: would be written twice", destination);
  const fs::path path(destination);
  if (!path.has_filename()) fail("{}: not a file name", destination);
  struct stat st {};
  if (::stat(destination.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) fail("{}: is a directory", destination);
    if (!S_ISREG(st.st_mode)) return destination;  // a device or pipe, written in place
  }
  const std::string temp = (fs::path(staging_dir(parent_of(destination))) / path.filename()).string();
  files_.push_back({destination, temp});
  return temp;
}

namespace {

// Moves an existing destination aside to `aside` (nothing when there is none); what stage() saw as a regular file,
// or nothing: a directory or a device put there since is not ours. Returns whether it moved one.
bool move_aside(const std::string& destination, const std::string& aside) {
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(destination, ec);
  if (!fs::exists(status)) return false;
  if (!fs::is_regular_file(status) && !fs::is_symlink(status)) fail("{}: is no longer a regular file", destination);
  fs::rename(destination, aside, ec);
  if (ec) fail("{}: cannot move the old file aside to replace it: {}", destination, ec.message());
  return true;
}

}  // namespace

void StagedFiles::rename_all() {
  struct Done {
    std::string destination, aside;
  };
  std::vector<Done> done;
  // The marker (staged last) vouches for the files beside it: the old one goes aside before anything moves, so
  // that a run killed midway leaves a set no marker claims, never the old marker over old and new files.
  const Staged& marker = files_.back();
  const std::string marker_aside = marker.temp + ".old";  // in the staging directory: removed with it
  bool marker_moved = false, marker_placed = false;
  auto undo = [&] {
    std::error_code ignored;
    for (auto it = done.rbegin(); it != done.rend(); ++it) {
      fs::remove(it->destination, ignored);
      if (!it->aside.empty()) fs::rename(it->aside, it->destination, ignored);
    }
    if (marker_moved && !marker_placed) fs::rename(marker_aside, marker.destination, ignored);
  };
  try {
    marker_moved = move_aside(marker.destination, marker_aside);
    for (const auto& f : files_) {
      const bool is_marker = &f == &marker;
      // The marker appears only once the others' new names are on disk.
      if (is_marker)
        for (const Staging& st : staging_) sync_directory(st.dir, st.dir);
      std::string aside = is_marker ? (marker_moved ? marker_aside : "") : f.temp + ".old";
      if (!is_marker && !move_aside(f.destination, aside)) aside.clear();
      std::error_code ec;
      fs::rename(f.temp, f.destination, ec);
      if (ec) {
        std::error_code ignored;
        if (!aside.empty() && !is_marker) fs::rename(aside, f.destination, ignored);
        fail("{}: cannot rename into place: {}", f.destination, ec.message());
      }
      marker_placed = is_marker;
      done.push_back({f.destination, aside});
    }
    if (!files_.empty()) sync_directory(parent_of(files_.back().destination), files_.back().destination);
  } catch (...) {
    undo();
    throw;
  }
}

void StagedFiles::commit() {
  SignalsDeferred deferred;
  if (!files_.empty()) rename_all();
  created_.commit();
  std::error_code ignored;
  for (const Staging& st : staging_) {
    fs::remove_all(st.staging, ignored);
    if (st.held_fd >= 0) ::close(st.held_fd);
  }
  staging_.clear();
  for (int slot : slots_) unregister_cleanup(slot);
  slots_.clear();
}

}  // namespace bk
