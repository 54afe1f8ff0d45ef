#include "shard/shard.h"

#include "util/error.h"
#include "io/cleanup.h"
#include "io/progress.h"
#include "io/output_over_input.h"
#include "io/staged_output.h"
#include "io/input.h"
#include "io/created_dirs.h"
#include "io/output.h"
#include "text/documents.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

namespace bk {
namespace {

namespace fs = std::filesystem;

constexpr size_t kShardBuffer = 64 * 1024;  // per open shard; 192 shards -> 12 MiB of buffers
constexpr uint32_t kMaxOpenCeiling = 192;   // the signal-safe cleanup table holds 256 temporaries

struct ShardFile {
  std::string path;
  const char* split;
  uint32_t index, count;
};

// Combined shard numbering: training shards 0..N-1, then test shards N..N+M-1.
std::vector<ShardFile> shard_files(const std::string& prefix, uint32_t training_shards, uint32_t test_shards) {
  std::vector<ShardFile> files;
  for (uint32_t i = 0; i < training_shards; ++i)
    files.push_back({shard_path(prefix, "training", i, training_shards), "training", i, training_shards});
  for (uint32_t i = 0; i < test_shards; ++i)
    files.push_back({shard_path(prefix, "test", i, test_shards), "test", i, test_shards});
  return files;
}

// The output directory (created when missing, as every tool does) must be writable: found out now, before a long
// first pass.
uint32_t open_file_budget(uint32_t wanted) {
  rlimit limit{};
  uint64_t budget = kMaxOpenCeiling;
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur > 24)
    budget = std::min<uint64_t>(budget, limit.rlim_cur - 16);  // room for the inputs, stdio and the spool
  return static_cast<uint32_t>(std::clamp<uint64_t>(wanted, 1, budget));
}

// A new file with a unique name made from `pattern` (ending in XXXXXX, as mkstemp), removed when the run ends,
// however it ends (and on a signal through the cleanup table). An existing file is never opened or replaced.
struct TemporaryFile {
  std::string path;
  int slot = -1;
  explicit TemporaryFile(std::string pattern) : path(std::move(pattern)) {
    int fd = create_temporary(path, slot);
    if (fd < 0) fail("{}: cannot create a temporary file: {}", path, std::strerror(errno));
    ::close(fd);
  }
  ~TemporaryFile() {
    ::unlink(path.c_str());
    unregister_cleanup(slot);
  }
};

// A regular file can be opened and read again for the later passes; anything else is spooled.
bool readable_twice(const std::string& source) {
  if (source == "-") return false;
  struct stat st {};
  if (::stat(source.c_str(), &st) != 0) return true;  // let Input name the file and the reason
  return S_ISREG(st.st_mode);
}

using DocumentVisitor = std::function<void(const Document&, uint64_t index, const Input& source)>;

// Reads every source in order, numbering documents across them. Progress counts the bytes read from the files
// (compressed ones too), against the sum of their sizes (file_bytes below).
uint64_t read_sources(const std::vector<std::string>& sources, Progress& progress, const DocumentVisitor& visit) {
  uint64_t index = 0, bytes_before = 0;
  Document doc;
  for (const auto& source : sources) {
    Input input(source);
    DocumentReader reader(input);
    while (reader.next(doc)) {
      visit(doc, index++, input);
      if (progress.wants_update())
        progress.update(bytes_before + input.raw_offset(), fmt::format("{} documents", index));
    }
    bytes_before += input.raw_offset();
  }
  return index;
}

uint64_t file_bytes(const std::vector<std::string>& sources) {
  uint64_t total = 0;
  for (const auto& source : sources) {
    std::error_code ec;
    if (fs::is_regular_file(source, ec)) total += fs::file_size(source, ec);
  }
  return total;
}

uint64_t split_documents(const ShardBalance& b) {
  uint64_t n = 0;
  for (uint64_t d : b.documents) n += d;
  return n;
}

std::string marker_json(const ShardConfig& c, const ShardSummary& s, const std::vector<ShardFile>& files) {
  nlohmann::ordered_json j;
  j["tool"] = "shard";
  j["training_shards"] = c.training_shards;
  j["test_shards"] = c.test_shards;
  j["test_fraction"] = c.test_fraction;
  j["seed"] = c.seed;
  j["documents"] = s.documents;
  j["bytes"] = s.bytes;
  j["training_documents"] = s.documents - split_documents(s.plan.test);
  j["test_documents"] = split_documents(s.plan.test);
  j["imbalance"] = {{"training", s.plan.training.imbalance()}, {"test", s.plan.test.imbalance()}};
  auto& list = j["shards"] = nlohmann::ordered_json::array();
  for (const auto& f : files) {
    const ShardBalance& b = std::strcmp(f.split, "test") == 0 ? s.plan.test : s.plan.training;
    list.push_back({{"file", fs::path(f.path).filename().string()},
                    {"split", f.split},
                    {"documents", b.documents[f.index]},
                    {"bytes", b.bytes[f.index]}});
  }
  return j.dump(2) + "\n";
}

}  // namespace

std::string shard_marker_path(const std::string& prefix) { return prefix + ".done"; }

void ShardConfig::validate() const {
  if (training_shards < 1) usage_fail("--training-shards must be at least 1, got {}", training_shards);
  if (test_shards < 0) usage_fail("--test-shards must not be negative, got {}", test_shards);
  if (seed < 0) usage_fail("--seed must not be negative, got {}", seed);
  if (max_open < 1) usage_fail("--max-open-files must be at least 1, got {}", max_open);
  if (!(test_fraction >= 0.0 && test_fraction < 1.0))
    usage_fail("--test-fraction must be in [0, 1), got {}", test_fraction);
  if (test_fraction > 0 && test_shards == 0)
    usage_fail("--test-fraction {} needs --test-shards >= 1", test_fraction);
  if (test_fraction == 0 && test_shards > 0)
    usage_fail("--test-shards {} needs a --test-fraction above 0", test_shards);
  if (training_shards > 99999 || test_shards > 99999) usage_fail("at most 99999 shards per split");
  if (inputs.empty()) usage_fail("no INPUT given (use - for stdin)");
  if (std::count(inputs.begin(), inputs.end(), "-") > 1) usage_fail("stdin (-) can be given only once");
  if (prefix.empty() || prefix == "-") usage_fail("-o PREFIX is required (shards are files, not stdout)");
  if (!fs::path(prefix).has_filename()) usage_fail("-o PREFIX must end in a file name part, got '{}'", prefix);
}

ShardSummary run_shard(const ShardConfig& c) {
  c.validate();
  const auto training_shards = static_cast<uint32_t>(c.training_shards);
  const auto test_shards = static_cast<uint32_t>(c.test_shards);
  const std::vector<ShardFile> files = shard_files(c.prefix, training_shards, test_shards);
  const std::string marker = shard_marker_path(c.prefix);
  // Refuse before reading anything: a long first pass should not end in "already exists".
  for (const auto& f : files) refuse_output_over_inputs("-o", f.path, OutputKind::file, c.inputs);
  refuse_output_over_inputs("-o", marker, OutputKind::file, c.inputs);
  for (const auto& f : files) check_overwrite(f.path, c.force);
  check_overwrite(marker, c.force);
  // Every shard and the marker are written into a staging directory beside them and put in place together at the
  // end: an interrupted or failed run leaves neither complete shards nor a directory it made behind.
  StagedFiles staged;  // makes the shards' missing directory (and removes it again unless the run succeeds)
  std::vector<std::string> staged_paths;
  for (const auto& f : files) staged_paths.push_back(staged.stage(f.path));
  const std::string staged_marker = staged.stage(marker);

  Progress progress(c.quiet);
  ShardSummary summary;
  try {

    // Pass 1: document sizes. An input that cannot be read twice (stdin, a named pipe, a process substitution
    // <(...), a device) is copied to a spool file first, for the later passes: opening a FIFO again would wait
    // forever for a writer, and /dev/fd/N would be empty the second time.
    std::vector<uint64_t> sizes;
    std::vector<std::string> sources = c.inputs;
    std::vector<std::unique_ptr<TemporaryFile>> spools;
    for (auto& source : sources) {
      if (readable_twice(source)) continue;
      progress.stage(fmt::format("copying {} for the later passes", source == "-" ? "stdin" : source));
      // A fresh name each run: a file the user has at PREFIX.stdin-spool (or a second run's spool) is not touched.
      spools.push_back(std::make_unique<TemporaryFile>(
          c.prefix + (source == "-" ? ".stdin-spool.tmp.XXXXXX" : ".input-spool.tmp.XXXXXX")));
      Output copy(spools.back()->path, /*overwrite=*/true);  // replaces only the empty file mkstemp just made
      Input input(source);
      DocumentReader reader(input);
      Document doc;
      // The sizes of these documents are taken below, when the spool is read with the other inputs.
      while (reader.next(doc)) {
        write_document(copy, doc.lines);
        if (progress.wants_update()) progress.update(input.offset());
      }
      copy.commit();
      source = spools.back()->path;
    }
    // One pass to measure, then one per group of --max-open-files shards.
    const uint32_t total_shards = static_cast<uint32_t>(files.size());
    const uint32_t group = open_file_budget(static_cast<uint32_t>(c.max_open));
    const uint32_t passes = 1 + (total_shards + group - 1) / group;
    const uint64_t source_bytes = file_bytes(sources);
    progress.stage(fmt::format("pass 1/{}", passes), source_bytes);
    auto measure_size = [&](const Document& doc, uint64_t, const Input&) { sizes.push_back(doc.bytes()); };
    const uint64_t documents = read_sources(sources, progress, measure_size);
    summary.documents = documents;
    for (uint64_t b : sizes) summary.bytes += b;

    summary.plan = make_shard_plan(sizes, training_shards, test_shards, c.test_fraction, static_cast<uint64_t>(c.seed));
    const ShardPlan& plan = summary.plan;

    // Pass 2 (repeated per group of shards): stream the documents into their shards.
    for (uint32_t first = 0; first < total_shards; first += group) {
      const uint32_t last = std::min(total_shards, first + group);
      std::vector<std::unique_ptr<Output>> outputs;
      for (uint32_t s = first; s < last; ++s)
        outputs.push_back(std::make_unique<Output>(staged_paths[s], false, kShardBuffer));
      ++summary.passes;
      progress.stage(fmt::format("pass {}/{}", summary.passes + 1, passes), source_bytes);
      auto route = [&](const Document& doc, uint64_t i, const Input& source) {
        if (i >= documents || doc.bytes() != sizes[i])
          fail("{}: line {}: the input changed between passes (document {})", source.name(), doc.first_line, i + 1);
        uint32_t to = plan.shard_of[i];
        uint32_t combined = (to & ShardPlan::kTest) ? training_shards + (to & ~ShardPlan::kTest) : to;
        if (combined >= first && combined < last) write_document(*outputs[combined - first], doc.lines);
      };
      uint64_t seen = read_sources(sources, progress, route);
      if (seen != documents) fail("the inputs changed between passes: {} documents, then {}", documents, seen);
      for (auto& out : outputs) out->commit();
    }

    write_file_atomic(staged_marker, marker_json(c, summary, files));
    staged.commit();
  } catch (const Error& e) {
    throw Error(staged.as_destination(e.what()));  // a shard as the user knows it, not its staging name
  }

  const uint64_t documents = summary.documents;
  const ShardPlan& plan = summary.plan;
  const uint64_t test_documents = split_documents(plan.test);
  std::string what = fmt::format("{} documents ({} training, {} test), {} + {} shards, max/mean {:.4f} training",
                                 documents, documents - test_documents, test_documents, c.training_shards,
                                 c.test_shards, plan.training.imbalance());
  if (c.test_shards > 0) what += fmt::format(", {:.4f} test", plan.test.imbalance());
  progress.finish(summary.bytes, what);
  return summary;
}

}  // namespace bk
