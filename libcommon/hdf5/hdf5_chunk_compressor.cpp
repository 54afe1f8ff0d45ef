#include "hdf5/hdf5_chunk_compressor.h"

#include "util/error.h"

#include <zlib.h>

namespace bk {

std::vector<uint8_t> deflate_chunk(const std::vector<uint8_t>& bytes, int level) {
  uLongf size = compressBound(static_cast<uLong>(bytes.size()));
  std::vector<uint8_t> out(size);
  const int status = compress2(out.data(), &size, bytes.data(), static_cast<uLong>(bytes.size()), level);
  if (status != Z_OK) fail("deflate of an HDF5 chunk of {} bytes failed (zlib status {})", bytes.size(), status);
  out.resize(size);
  return out;
}

ChunkCompressor::ChunkCompressor(int threads) {
  if (threads > 1) pool_ = std::make_unique<ThreadPool>(threads);
}

ChunkCompressor::~ChunkCompressor() {
  for (auto& p : pending_)
    if (p.compressed.valid()) p.compressed.wait();  // the jobs own their bytes; let them end before the pool does
}

void ChunkCompressor::submit(std::vector<uint8_t> bytes, int level, Store store) {
  auto task = std::make_shared<std::packaged_task<std::vector<uint8_t>()>>(
      [bytes = std::move(bytes), level] { return deflate_chunk(bytes, level); });
  pending_.push_back({task->get_future(), std::move(store)});
  if (pool_) pool_->submit([task] { (*task)(); });
  else (*task)();
  while (pending_.size() > kWindow) store_oldest();
}

void ChunkCompressor::flush() {
  while (!pending_.empty()) store_oldest();
}

void ChunkCompressor::store_oldest() {
  Pending p = std::move(pending_.front());
  pending_.pop_front();
  p.store(p.compressed.get());
}

}  // namespace bk
