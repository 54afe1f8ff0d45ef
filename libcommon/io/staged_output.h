// Outputs of several files, put in place as one (torch-free): all of them or none.
//
//   StagedDirectory: a new directory built under a hidden temporary name beside its destination
//   (".NAME.partial-PID") and renamed onto it by commit(); under --force an existing destination is swapped with
//   it in one step (renameat2's RENAME_EXCHANGE; where the file system lacks it, moved aside first) and removed
//   only once the new one is in place (bin4's output, ckpt-convert's native and HF outputs). A run killed between
//   the fallback's two renames leaves the old output aside: the next run writing it puts it back first.
//   StagedFiles: files whose destinations may already exist and may lie in different directories, each written
//   into a hidden staging directory beside its destination (".bertkit-staged-XXXXXX", one per destination
//   directory, so that thousands of shards take one slot of the signal cleanup table), then all renamed into
//   place by commit() in the order they were staged (shard's shards and marker, ckpt-convert's TF output beside
//   an existing checkpoint, bert-finetune predict's files). The file staged last is the marker that vouches for
//   the others: an old one is moved aside before any other rename, so that a run killed midway leaves no marker
//   over a mix of old and new files.
//
// Both hold their staging directories while they live; what a killed run left (io/leftovers.h) is removed by the
// next run that stages beside the same destination.
//
// Without commit() (an error, an early return) the temporaries are removed, and so are the directories the stage
// made; a signal removes them too (io/cleanup.h). A signal that arrives during the renames, on any thread, is
// acted on once they are done (SignalsDeferred): the output is then in place, old or new, never half of each.
//
//   StagedFiles files;
//   write_file_atomic(files.stage(out_dir + "/predictions.json"), predictions);
//   Output logits(files.stage(logits_path)); ... logits.commit();
//   files.commit();   // every file in place, or (an exception) none moved and the old ones kept
#pragma once

#include "io/created_dirs.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

// --force replaces an output directory whole, so it must hold nothing the tool did not write: a run, a README or
// notes are refused by name, never deleted. `is_own` says whether an entry is one of the tool's; `replaces_only`
// describes them for the message ("-f replaces only <replaces_only>: give another -o").
void refuse_foreign_entries(const std::string& dir,
                            const std::function<bool(const std::filesystem::directory_entry&)>& is_own,
                            std::string_view replaces_only);

// What a run killed while committing a StagedDirectory to `destination` left beside it: when the destination is
// missing, the old output its fallback had moved aside (.NAME.partial-PID.old) is put back, with a line on stderr;
// then the dead runs' .NAME.partial-* go. The constructor calls it; a tool that looks at the destination before
// (whether it exists, what it holds) calls it first.
void recover_killed_commit(const std::string& destination);

class StagedDirectory {
 public:
  // bk::Error when `destination` names the current directory, exists without `overwrite`, or is not a directory.
  StagedDirectory(const std::string& destination, bool overwrite);
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;

  // The path to write the directory's file `name` at.
  std::string file(const char* name);
  // The directory `name` inside it, made now; on a signal the files written directly in it are removed with it
  // (bin4's bins, each holding its shards).
  std::string subdirectory(const char* name);
  // Under --force, what the replaced directory may hold (refuse_foreign_entries' rule): checked again by commit(),
  // before the old output goes and on the old output once swapped out, so that a file put there during the run
  // is refused, not deleted.
  void replaces_only(std::function<bool(const std::filesystem::directory_entry&)> is_own, std::string description);
  void commit();
  // `message` with the staging directory's path written as the destination's, for errors that name a file being
  // written: the user knows the output by its own name.
  std::string as_destination(std::string message) const;

 private:
  void refuse_foreign(const std::string& dir) const;

  CreatedDirs parents_;  // destroyed after the body of ~StagedDirectory has removed the staging directory
  std::string destination_, staging_;
  bool committed_ = false;
  int held_fd_ = -1;        // holds the staging directory (io/leftovers.h)
  std::vector<int> slots_;  // cleanup-table slots (cli/run_tool.h)
  std::function<bool(const std::filesystem::directory_entry&)> is_own_;
  std::string own_description_;
};

class StagedFiles {
 public:
  StagedFiles() = default;
  ~StagedFiles();
  StagedFiles(const StagedFiles&) = delete;
  StagedFiles& operator=(const StagedFiles&) = delete;

  // The temporary path to write `destination` at (its missing directories are made). bk::Error when the same
  // destination is staged twice, or names a directory. A device or pipe (/dev/null, /dev/stdout, a FIFO) is
  // written in place, as bk::Output writes it: its own path comes back and nothing is renamed onto it.
  std::string stage(const std::string& destination);
  // Renames every staged file into place, each written file already synced (io/durable.h); the directories are
  // synced before the last one's rename and after it, so that a marker staged last never vouches for files a
  // power cut lost. A file replaced is moved aside first and removed only once every rename has succeeded; a
  // failed rename puts back what was there (bk::Error naming it).
  void commit();
  // `message` with each staged file's temporary path written as its destination (errors that name a file being
  // written: the user knows the output by its own name).
  std::string as_destination(std::string message) const;

 private:
  struct Staged {
    std::string destination, temp;
  };
  struct Staging {
    std::string dir;      // the destinations' directory, as first named
    uint64_t device = 0, inode = 0;  // its identity: two spellings of one directory share one staging directory
    std::string staging;  // the hidden directory made in it
    int held_fd = -1;     // holding it (io/leftovers.h)
  };
  // The staging directory in `dir`, made on first use.
  std::string staging_dir(const std::string& dir);
  void rename_all();

  CreatedDirs created_;  // destroyed after the staging directories are removed
  std::vector<Staged> files_;
  std::vector<Staging> staging_;
  std::vector<int> slots_;
};

}  // namespace bk
