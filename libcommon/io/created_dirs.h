// Missing output directories, created by a run and removed again unless it succeeds.
//
// Every tool treats a missing directory on an output's path the same way: it is created (as `mkdir -p` would),
// and a failed or interrupted run removes what it created, newest first, so the same command can simply be run
// again and no empty directory is left behind. bk::Output and the HDF5 writers do this for a file's parent;
// tools whose output is a directory (bin4 -o DIR, tfrecord2hdf5 --output-dir, shard's PREFIX) do it for the
// directory.
//
//   CreatedDirs created;
//   created.create(dir);          // dir and any missing parents; each registered for SIGINT cleanup
//   ... write into dir ...
//   created.commit();             // keep them; without this the destructor removes them (only empty ones)
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace bk {

class CreatedDirs {
 public:
  CreatedDirs() = default;
  CreatedDirs(const CreatedDirs&) = delete;
  CreatedDirs& operator=(const CreatedDirs&) = delete;
  ~CreatedDirs();

  // Creates `dir` and any missing parents, remembering each one it made. Fails (bk::Error) naming the path when
  // one cannot be made or a part of the path is not a directory.
  void create(const std::filesystem::path& dir);
  // Creates the directory that will hold the file `path` ("" or "." needs nothing).
  void create_parent(const std::string& path);
  // How many directories create(dir) would make.
  static int missing(const std::filesystem::path& dir);
  void commit();
  // fsyncs the parent of each directory made (deepest first), so that the directories survive a power cut; called
  // before a marker that vouches for them is written (io/durable.h).
  void sync() const;

 private:
  std::vector<std::pair<std::string, int>> dirs_;  // path and cleanup slot, in creation order
  bool committed_ = false;
};

}  // namespace bk
