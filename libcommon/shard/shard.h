// The `shard` tool's body: split documents into balanced training and test shards, keeping documents whole.
//
// Two kinds of passes over the inputs, so memory stays bounded by the largest document plus a few bytes per
// document, never by the input:
//   1. read every document once and keep only its size (8 bytes) -> make_shard_plan;
//   2. read the inputs again and append each document, in input order, to its shard. At most `max_open` shards
//      are open at once; with more shards than that, pass 2 repeats for each group of shards.
// Standard input cannot be read twice, so "-" is spooled during pass 1 to a new file
// PREFIX.stdin-spool.tmp.XXXXXX (a unique name, as mkstemp makes; removed at the end). Any other input that is
// not a regular file (a named pipe, a process substitution <(...), a device) is spooled the same way, to
// PREFIX.input-spool.tmp.XXXXXX.
//
// Outputs: PREFIX_training-NNNNN-of-NNNNN.txt, PREFIX_test-NNNNN-of-NNNNN.txt, each written atomically, then
// PREFIX.done last: a JSON summary (settings, and per shard its file name, documents and bytes). Without
// `force`, any existing output is refused before anything is written; with it, PREFIX.done is removed before
// the first shard is replaced, so an interrupted run never leaves a marker over a mixed set of shards.
#pragma once

#include "shard/plan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bk {

struct ShardConfig {
  std::vector<std::string> inputs;  // "-" = stdin (at most once)
  std::string prefix;
  int training_shards = 1;
  int test_shards = 0;
  double test_fraction = 0.0;
  int64_t seed = 12345;
  int max_open = 192;  // shards written per pass over the inputs
  bool force = false;
  bool quiet = false;

  // bk::UsageError naming the flag for a value or a combination no run can use.
  void validate() const;
};

struct ShardSummary {
  uint64_t documents = 0, bytes = 0, passes = 0;
  ShardPlan plan;
};

std::string shard_marker_path(const std::string& prefix);  // PREFIX.done

// Checks the settings (validate), then does the work (Error on bad data). Prints the summary line unless quiet.
ShardSummary run_shard(const ShardConfig& config);

}  // namespace bk
