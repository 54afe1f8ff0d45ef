// Deflate for HDF5 chunks on worker threads: the part of writing compressed HDF5 that costs CPU, taken out of the
// library (which is not thread-safe) and run in parallel, while every HDF5 call stays on the calling thread.
//
// A writer hands over a full chunk's bytes with the call that stores them (H5Dwrite_chunk of the compressed bytes);
// a worker compresses them with zlib's compress2 at the dataset's level, which is exactly what HDF5's deflate
// filter does, so the file holds the bytes HDF5 itself would have written. The store calls run on the calling
// thread in submission order, at points fixed by a constant window (not by the number of threads or by timing),
// so the sequence of HDF5 calls, and with it the file, is the same for any --threads.
//
// Memory: at most kWindow chunks in flight (a few MB at the NVIDIA layout's chunk sizes).
#pragma once

#include "util/ordered_parallel.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <vector>

namespace bk {

class ChunkCompressor {
 public:
  using Store = std::function<void(const std::vector<uint8_t>& compressed)>;

  // threads: compressing workers (1 compresses on the calling thread, at the same points as with more).
  explicit ChunkCompressor(int threads);
  // Waits for the workers' jobs; stores nothing (an error is unwinding, and the files are being removed).
  ~ChunkCompressor();
  ChunkCompressor(const ChunkCompressor&) = delete;
  ChunkCompressor& operator=(const ChunkCompressor&) = delete;

  // Queues one chunk for deflate at `level` (1-9); `store` is called with the result later, on this thread, in
  // submission order: inside a later submit() once kWindow chunks are pending, or in flush().
  void submit(std::vector<uint8_t> bytes, int level, Store store);
  // Stores every pending chunk, in order. A store's or a worker's error is thrown here (or from submit()).
  void flush();

  static constexpr size_t kWindow = 64;

 private:
  struct Pending {
    std::future<std::vector<uint8_t>> compressed;
    Store store;
  };
  void store_oldest();

  std::unique_ptr<ThreadPool> pool_;  // null with one thread
  std::deque<Pending> pending_;
};

// zlib's compress2 at `level`, as HDF5's deflate filter calls it; bk::Error if zlib fails.
std::vector<uint8_t> deflate_chunk(const std::vector<uint8_t>& bytes, int level);

}  // namespace bk
