// A training run's claim on its output directory (torch-free): one run at a time, and no earlier run's checkpoints
// replaced without --force.
#pragma once

#include <string>
#include <vector>

namespace bk {

// Holds an exclusive lock on OUTPUT_DIR/.lock (flock) for the run's lifetime, with the holder's pid in the file.
// bk::Error at once when another live run holds it, naming that run's pid.
class OutputDirLock {
 public:
  explicit OutputDirLock(const std::string& output_dir);
  ~OutputDirLock();
  OutputDirLock(const OutputDirLock&) = delete;
  OutputDirLock& operator=(const OutputDirLock&) = delete;

 private:
  int fd_ = -1;
};

// Before a new run (no --resume) writes into output_dir: bk::Error when it holds an earlier run's checkpoints,
// unless `force`, which removes them: the step directories, their temporaries and `latest` (that run's
// checkpoints are gone; its logs and any file of the user's under checkpoints/ stay). A step directory that holds
// one of the run's `inputs` (--init-checkpoint, --vocab) is a usage error instead: it is never removed.
void claim_for_new_run(const std::string& output_dir, bool force, const std::vector<std::string>& inputs);

}  // namespace bk
