// Parallel bzip2 decoding, in order, for bk::Input.
//
// A bzip2 file is one or more streams ("BZh1".."BZh9", blocks, an end-of-stream marker with the stream's combined
// CRC, padding to a byte); Wikimedia's multistream dumps concatenate many. Each block starts with the 48-bit magic
// 0x314159265359 at any bit offset and carries its own CRC, so blocks can be decoded independently, as lbzip2 does:
//
//   splitter (one thread)  reads the file, finds every bit position of the block magic and of the end-of-stream
//                          magic (0x177245385090), and cuts the file into segments at those positions;
//   workers (`threads`)    decode each block segment on its own and check its CRC (io/bzip2_block.h: bertkit's
//                          decoder, about twice libbz2's speed; randomised blocks through libbz2);
//   reader (the caller)    takes the segments in file order, checks the stream structure and each stream's
//                          combined CRC, and hands out the decoded bytes.
//
// A magic can also occur by chance inside a block's bits. Then the segment before it fails to decode (its CRC
// cannot match), and the reader joins it with the following segments until it decodes, as one block can be at
// most about 2.3 MB compressed (900k symbols of at most 20 bits, plus tables). So bytes out are exactly bzcat's,
// for any number of threads, and a byte is handed out only after its block's CRC was checked.
//
// Memory: at most 2 * threads + 4 segments are in flight. A segment holds its compressed bits (at most
// kMaxBlockBytes, about 0.25 MB for text) and its decoded block (at most 100k * level bytes before bzip2's
// run-length stage, 0.9 MB for text; 46 MB for the pathological block of runs), so the bound is
// (2 * threads + 4) * (3 MB + 46 MB) and, for text such as a Wikipedia dump, (2 * threads + 4) * ~1.2 MB.
//
// Scaling: the splitter's work per byte is a table lookup (one in 16 bytes needs a 64-bit compare) and a copy,
// about 2 GB/s of XML per core, so it serves tens of workers (a worker decodes 50-57 MB/s of XML per core,
// libbz2 36-40: bench/wiki_clean.sh). The reader's work per byte is one memcpy.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace bk {

// Reads up to n raw (compressed) bytes; returns 0 at the end. May throw bk::Error. Called from one thread.
using RawReader = std::function<size_t(char* buffer, size_t n)>;

class ParallelBzip2 {
 public:
  // `name` names the file in errors. The first bytes `raw` returns must be a stream header ("BZh1".."BZh9").
  ParallelBzip2(std::string name, RawReader raw, int threads);
  ~ParallelBzip2();
  ParallelBzip2(const ParallelBzip2&) = delete;
  ParallelBzip2& operator=(const ParallelBzip2&) = delete;

  // Up to n decoded bytes; 0 only at the end. Throws bk::Error for corrupt or truncated data, naming the byte.
  size_t read(char* buffer, size_t n);
  uint64_t raw_offset() const;  // compressed bytes whose decoded bytes were handed out (whole blocks)

  static constexpr size_t kMaxBlockBytes = 3 << 20;  // a compressed block is at most ~2.3 MB
  static size_t max_segments(int threads) { return 2 * static_cast<size_t>(threads) + 4; }

  struct State;

 private:
  std::shared_ptr<State> state_;
};

// Decodes one block: bits [bit_offset, bit_offset + bits) of `raw` (starting with the block magic), as bzip2
// level `level`, appending the block's bytes to out. Returns "" on success, else why it failed. Exposed for tests.
// By bertkit's own block decoder (io/bzip2_block.h), and randomised blocks by libbz2.
std::string decode_bzip2_block(const std::string& raw, unsigned bit_offset, uint64_t bits, int level,
                               std::string& out);
// The same by libbz2 alone: the block between a stream header and an end-of-stream marker made for it (the
// reference the tests hold bertkit's decoder to).
std::string decode_bzip2_block_libbz2(const std::string& raw, unsigned bit_offset, uint64_t bits, int level,
                                      std::string& out);

}  // namespace bk
