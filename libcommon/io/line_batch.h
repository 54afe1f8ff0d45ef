// Consecutive lines of an input handed to one --threads worker, stored back to back (few allocations), with
// the file and line number they start at for error messages.
#pragma once

#include "io/input.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

struct LineBatch {
  std::string text;
  std::vector<uint32_t> ends;  // line i is text[ends[i-1] .. ends[i])
  uint64_t first_line = 0;     // 1-based number of line 0
  std::string file;

  size_t size() const { return ends.size(); }
  std::string_view line(size_t i) const {
    const uint32_t begin = i == 0 ? 0 : ends[i - 1];
    return std::string_view(text).substr(begin, ends[i] - begin);
  }
};

// Fills `batch` (empty) with the next lines of `reader`, up to max_lines or about max_bytes of text; false when
// the input had no line left.
inline bool read_line_batch(LineReader& reader, LineBatch& batch, size_t max_lines = 4096, size_t max_bytes = 1 << 20) {
  batch.first_line = reader.line_number() + 1;
  batch.file = reader.input().name();
  std::string_view line;
  while (batch.text.size() < max_bytes && batch.ends.size() < max_lines && reader.next(line)) {
    batch.text.append(line);
    batch.ends.push_back(static_cast<uint32_t>(batch.text.size()));
  }
  return !batch.ends.empty();
}

}  // namespace bk
