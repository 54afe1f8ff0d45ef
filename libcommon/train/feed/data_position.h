// Where a task's data stream stands: what a checkpoint stores so that a resumed run continues with exactly the
// micro-batch an uninterrupted run would have taken next. Torch-free.
#pragma once

#include <cstdint>
#include <string>

namespace bk {

struct DataPosition {
  int64_t epoch = 0;
  int64_t batch = 0;            // batches consumed in that epoch
  uint64_t fingerprint = 0;     // what the stream was built from (inputs, seed, world, batch shape); 0 = unchecked

  std::string to_json() const;  // {"epoch":..,"batch":..,"fingerprint":"<16 hex digits>"}
  static DataPosition from_json(const std::string& text);  // bk::Error on malformed text
  bool operator==(const DataPosition&) const = default;
};

}  // namespace bk
