#include "io/staged_output.h"

#include "io/cleanup.h"
#include "io/durable.h"
#include "io/output.h"
#include "util/error.h"
#include "util/printable.h"
#include "util/tool_name.h"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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
  if (std::error_code link_ec; fs::is_symlink(dest, link_ec)) dest = fs::canonical(dest);
  destination_ = dest.string();
  parents_.create(parent_of(destination_));  // missing parents are made, and removed again unless committed
  staging_ = temporary_sibling(destination_, ".", fmt::format(".partial-{}", ::getpid()));
  fs::remove_all(staging_);
  fs::create_directory(staging_);
  // An interrupt removes the staging directory's files, then the directory (registered first: the handler
  // reaches directories after files).
  slots_.push_back(register_cleanup_dir(staging_));
}

StagedDirectory::~StagedDirectory() {
  std::error_code ignored;
  if (!committed_) fs::remove_all(staging_, ignored);
  for (int slot : slots_) unregister_cleanup(slot);
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
  std::string old;
  if (fs::exists(destination_)) {
    // --force: the old directory goes only once the new one is complete.
    old = staging_ + ".old";
    fs::rename(destination_, old, ec);
    if (ec) fail("{}: cannot move the old output aside to replace it: {}", destination_, ec.message());
  }
  fs::rename(staging_, destination_, ec);
  if (ec) {
    std::error_code back;
    if (!old.empty()) fs::rename(old, destination_, back);
    fail("{}: cannot rename into place: {}", destination_, ec.message());
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
  for (const Staging& st : staging_) fs::remove_all(st.staging, ignored);
  for (int slot : slots_) unregister_cleanup(slot);
}

std::string StagedFiles::staging_dir(const std::string& dir) {
  created_.create(dir);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) fail("{}: cannot stat: {}", dir, std::strerror(errno));
  for (const Staging& known : staging_)
    if (known.device == st.st_dev && known.inode == st.st_ino) return known.staging;
  std::string staging = (fs::path(dir) / ".bertkit-staged-XXXXXX").string();
  if (::mkdtemp(staging.data()) == nullptr)
    fail("{}: cannot create a staging directory: {}", dir, std::strerror(errno));
  slots_.push_back(register_cleanup_tree(staging));
  staging_.push_back({dir, static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), staging});
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

void StagedFiles::rename_all() {
  struct Done {
    std::string destination, aside;
  };
  std::vector<Done> done;
  auto undo = [&] {
    std::error_code ignored;
    for (auto it = done.rbegin(); it != done.rend(); ++it) {
      fs::remove(it->destination, ignored);
      if (!it->aside.empty()) fs::rename(it->aside, it->destination, ignored);
    }
  };
  try {
    for (const auto& f : files_) {
      // The file staged last (a marker) appears only once the others' new names are on disk.
      if (&f == &files_.back())
        for (const Staging& st : staging_) sync_directory(st.dir, st.dir);
      std::error_code ec;
      std::string aside;
      const fs::file_status status = fs::symlink_status(f.destination, ec);
      if (fs::exists(status)) {
        // What stage() saw as a regular file, or nothing: a directory or a device put there since is not ours.
        if (!fs::is_regular_file(status) && !fs::is_symlink(status))
          fail("{}: is no longer a regular file", f.destination);
        aside = f.temp + ".old";  // in the staging directory: removed with it
        fs::rename(f.destination, aside, ec);
        if (ec) fail("{}: cannot move the old file aside to replace it: {}", f.destination, ec.message());
      }
      fs::rename(f.temp, f.destination, ec);
      if (ec) {
        std::error_code ignored;
        if (!aside.empty()) fs::rename(aside, f.destination, ignored);
        fail("{}: cannot rename into place: {}", f.destination, ec.message());
      }
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
  rename_all();
  created_.commit();
  std::error_code ignored;
  for (const Staging& st : staging_) fs::remove_all(st.staging, ignored);
  staging_.clear();
  for (int slot : slots_) unregister_cleanup(slot);
  slots_.clear();
}

}  // namespace bk
