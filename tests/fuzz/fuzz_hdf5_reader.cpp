// libFuzzer target for the HDF5 pretraining reader (bert-train, bert-eval, bin4, pack): any file must give
// samples or a bk::Error, never a crash, a sanitizer report in our code, an HDF5 error stack on stderr or a huge
// allocation; the samples handed out must keep the reader's promises (hdf5/hdf5_sample.h). The bytes are written
// to a file and opened, as the tools do; HDF5's error printing stays off (the reader's constructor calls
// hdf5_quiet(), as every tool's path does). HDF5 itself is not instrumented: only our side is checked.
#include "hdf5/hdf5_reader.h"
#include "fuzz_file.h"
#include "util/error.h"

#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <vector>

namespace {

void check_read_sample(const bk::PretrainSample& s) {
  const size_t n = s.length();
  if (s.segment_ids.size() != n || s.masked_lm_ids.size() != s.masked_lm_positions.size()) std::abort();
  for (int32_t p : s.masked_lm_positions)
    if (p < 1 || static_cast<size_t>(p) >= n) std::abort();
  if (!s.pack_lengths.empty()) {
    if (s.pack_labels.size() != s.pack_lengths.size()) std::abort();
    int64_t sum = 0;
    for (int32_t len : s.pack_lengths) {
      if (len <= 0) std::abort();
      sum += len;
    }
    if (static_cast<size_t>(sum) != n) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = bk_fuzz::write_fuzz_file(data, size, ".hdf5");
  try {
    bk::PretrainReader reader(path);
    std::vector<bk::PretrainSample> block;
    uint64_t samples = 0;
    while (reader.read_block(block, 7)) {
      for (const auto& s : block) check_read_sample(s);
      samples += block.size();
    }
    if (samples != reader.rows()) std::abort();
  } catch (const bk::Error&) {
  }
  return 0;
}
