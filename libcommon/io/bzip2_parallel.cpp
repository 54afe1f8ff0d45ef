#include "io/bzip2_parallel.h"

#include "io/bzip2_block.h"

#include "util/threads.h"
#include "util/error.h"

#include <bzlib.h>
#include <pthread.h>

#include <array>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace bk {
namespace {

constexpr uint64_t kBlockMagic = 0x314159265359;
constexpr uint64_t kEndMagic = 0x177245385090;
constexpr uint64_t kMask48 = (uint64_t{1} << 48) - 1;
constexpr size_t kReadChunk = 1 << 20;

// Appends bits to a byte string, most significant bit first (bzip2's order).
struct BitWriter {
  std::string& out;
  uint64_t acc = 0;
  int n = 0;
  void put(uint64_t value, int count) {
    for (int i = count - 1; i >= 0; --i) {
      acc = (acc << 1) | ((value >> i) & 1);
      if (++n == 8) {
        out.push_back(static_cast<char>(acc));
        acc = 0;
        n = 0;
      }
    }
  }
  void flush() {
    if (n > 0) out.push_back(static_cast<char>(acc << (8 - n)));
    acc = 0;
    n = 0;
  }
};

uint64_t get_bits(const unsigned char* p, unsigned bit, int count) {  // count <= 57, bytes available
  uint64_t w = 0;
  for (int i = 0; i < 8; ++i) w = (w << 8) | p[i];
  return (w >> (64 - bit - count)) & ((uint64_t{1} << count) - 1);
}

const char* bz_reason(int rc) {
  switch (rc) {
    case BZ_DATA_ERROR: return "data integrity (CRC) error";
    case BZ_DATA_ERROR_MAGIC: return "bad stream magic";
    case BZ_MEM_ERROR: return "out of memory";
    case BZ_OK: return "block ends early";
    default: return "decoder error";
  }
}

// For each value of the second byte a magic can cover at each bit shift: which (shift, magic) pairs it allows.
// Bit 2*s + m: the magic m (0 = block, 1 = end of stream) starts at bit s of the byte before.
struct MagicFilter {
  std::array<uint16_t, 256> table{};
  MagicFilter() {
    const uint64_t magics[2] = {kBlockMagic, kEndMagic};
    for (int s = 0; s < 8; ++s)
      for (int m = 0; m < 2; ++m) {
        // The magic's bits 8-s .. 15-s fill the second byte.
        auto byte = static_cast<unsigned>((magics[m] >> (48 - (16 - s))) & 0xFF);
        table[byte] |= static_cast<uint16_t>(1u << (2 * s + m));
      }
  }
};
const MagicFilter kFilter;

}  // namespace

std::string decode_bzip2_block(const std::string& raw, unsigned bit_offset, uint64_t bits, int level,
                               std::string& out) {
  const std::string why = decode_bzip2_block_bits(reinterpret_cast<const unsigned char*>(raw.data()), raw.size(),
                                                  bit_offset, bits, level, out);
  return why == kBzip2Randomised ? decode_bzip2_block_libbz2(raw, bit_offset, bits, level, out) : why;
}

std::string decode_bzip2_block_libbz2(const std::string& raw, unsigned bit_offset, uint64_t bits, int level,
                                      std::string& out) {
  if (bits < 80) return "block too short";
  const auto* in = reinterpret_cast<const unsigned char*>(raw.data());
  // The block's stored CRC (after its magic) becomes the combined CRC of the one-block stream.
  uint32_t crc = 0;
  for (int i = 0; i < 32; ++i) {
    uint64_t b = bit_offset + 48 + i;
    crc = (crc << 1) | ((in[b >> 3] >> (7 - (b & 7))) & 1);
  }
  std::string stream = "BZh";
  stream.push_back(static_cast<char>('0' + level));
  size_t whole = bits / 8;
  size_t at = stream.size();
  stream.resize(at + whole);
  if (bit_offset == 0) {
    std::memcpy(stream.data() + at, in, whole);
  } else {
    const unsigned s = bit_offset, r = 8 - s;
    for (size_t k = 0; k < whole; ++k)
      stream[at + k] = static_cast<char>((in[k] << s) | (in[k + 1] >> r));
  }
  BitWriter w{stream};
  int rest = static_cast<int>(bits % 8);
  if (rest > 0) {
    uint64_t b = bit_offset + whole * 8;
    for (int i = 0; i < rest; ++i, ++b) w.put((in[b >> 3] >> (7 - (b & 7))) & 1, 1);
  }
  w.put(kEndMagic, 48);
  w.put(crc, 32);
  w.flush();

  bz_stream bz{};
  if (BZ2_bzDecompressInit(&bz, 0, 0) != BZ_OK) return "cannot start the bzip2 decoder";
  size_t start = out.size();
  size_t produced = 0;
  out.resize(start + 100000 * static_cast<size_t>(level) + 4096);
  bz.next_in = stream.data();
  bz.avail_in = static_cast<unsigned>(stream.size());
  int rc;
  for (;;) {
    if (start + produced == out.size()) out.resize(out.size() * 2);
    bz.next_out = out.data() + start + produced;
    bz.avail_out = static_cast<unsigned>(out.size() - start - produced);
    unsigned before = bz.avail_out;
    rc = BZ2_bzDecompress(&bz);
    produced += before - bz.avail_out;
    if (rc != BZ_OK) break;
    if (bz.avail_in == 0 && bz.avail_out > 0) break;  // input used up before the end marker
  }
  BZ2_bzDecompressEnd(&bz);
  out.resize(start + produced);
  if (rc == BZ_STREAM_END) return "";
  out.resize(start);
  return bz_reason(rc);
}

// A piece of the file between two consecutive magics (or a stream header), in file order.
struct Segment {
  enum Kind { kHeader, kBlock, kEnd, kFileEnd, kError } kind = kBlock;
  uint64_t bit = 0, end_bit = 0;  // [bit, end_bit) of the file
  std::string raw;                // file bytes bit/8 .. (end_bit + 7)/8
  int level = 9;
  uint32_t crc = 0;               // kBlock: the block's CRC; kEnd: the stream's combined CRC
  bool crc_known = true;
  std::exception_ptr error;       // kError
  bool done = false;              // kBlock: the worker's result is in
  std::string out, why;           // decoded bytes, or why decoding failed
};
using SegmentPtr = std::shared_ptr<Segment>;

struct ParallelBzip2::State {
  std::string name;
  RawReader raw;
  size_t max_segments;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<SegmentPtr> segments;  // in file order, for the reader
  std::deque<SegmentPtr> jobs;      // blocks not yet taken by a worker
  bool cancel = false;
  std::vector<std::thread> workers;

  // The reader's side.
  bool expect_header = true, finished = false;
  uint64_t expect_bit = 0;
  int level = 9;
  uint32_t combined = 0;
  std::string pending;
  size_t pending_at = 0;
  uint64_t raw_done = 0;

  void push(SegmentPtr seg) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return cancel || segments.size() < max_segments; });
    if (cancel) return;
    if (seg->kind == Segment::kBlock) jobs.push_back(seg);
    segments.push_back(std::move(seg));
    changed.notify_all();
  }
  SegmentPtr pop() {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return !segments.empty(); });
    SegmentPtr seg = std::move(segments.front());
    segments.pop_front();
    changed.notify_all();
    return seg;
  }
  void wait_done(const Segment& seg) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return seg.done; });
  }

  void work() {
    for (;;) {
      SegmentPtr seg;
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return cancel || !jobs.empty(); });
        if (cancel) return;
        seg = std::move(jobs.front());
        jobs.pop_front();
      }
      seg->why = decode_bzip2_block(seg->raw, seg->bit % 8, seg->end_bit - seg->bit, seg->level, seg->out);
      std::lock_guard lock(mutex);
      seg->done = true;
      changed.notify_all();
    }
  }

  void split() {
    try {
      split_file();
    } catch (...) {
      auto seg = std::make_shared<Segment>();
      seg->kind = Segment::kError;
      seg->error = std::current_exception();
      push(seg);
    }
  }

  // The splitter: finds the magics and cuts the file at them.
  void split_file() {
    std::string buf;       // file bytes from base on
    uint64_t base = 0;
    bool eof = false;
    auto fill = [&](uint64_t upto) {  // reads until buf covers the file up to byte `upto` or the end
      while (!eof && base + buf.size() < upto) {
        size_t old = buf.size();
        buf.resize(old + kReadChunk);
        size_t got = raw(buf.data() + old, kReadChunk);
        buf.resize(old + got);
        if (got == 0) eof = true;
      }
    };
    auto byte_at = [&](uint64_t i) { return static_cast<unsigned char>(buf[i - base]); };
    auto is_header = [&](uint64_t p) {
      fill(p + 4);
      return base + buf.size() >= p + 4 && byte_at(p) == 'B' && byte_at(p + 1) == 'Z' && byte_at(p + 2) == 'h' &&
             byte_at(p + 3) >= '1' && byte_at(p + 3) <= '9';
    };
    auto bits_at = [&](uint64_t bit, int count, uint64_t& value) {  // false if the file ends first
      fill((bit + count + 7) / 8 + 8);
      if (base + buf.size() < (bit + count + 7) / 8) return false;
      unsigned char tmp[8] = {};
      uint64_t first = bit / 8;
      for (uint64_t i = first; i < first + 8 && i < base + buf.size(); ++i) tmp[i - first] = byte_at(i);
      value = get_bits(tmp, bit % 8, count);
      return true;
    };

    auto current = std::make_shared<Segment>();
    current->kind = Segment::kHeader;
    if (!is_header(0)) fail("{}: not bzip2 data (bad stream magic at byte 0)", name);
    int level = byte_at(3) - '0';
    current->level = level;
    uint64_t scan_from = 32;  // first bit where a magic may start
    uint64_t scan_byte = 1;   // next byte index to test as the second byte of a magic

    // Ends `current` at bit c and pushes it; keeps only the bytes from c's on.
    auto finish = [&](uint64_t c) {
      current->end_bit = c;
      uint64_t from = current->bit / 8, to = (c + 7) / 8;
      current->raw.assign(buf.data() + (from - base), to - from);
      push(current);
      buf.erase(0, c / 8 - base);
      base = c / 8;
    };
    for (;;) {
      {
        std::lock_guard lock(mutex);
        if (cancel) return;
      }
      // Find the next magic at or after scan_from.
      uint64_t found = UINT64_MAX;
      int kind = 0;
      scan_byte = std::max(scan_byte, scan_from / 8 + 1);
      while (found == UINT64_MAX) {
        uint64_t end = base + buf.size();
        if (end < scan_byte + 7) {
          if (eof) break;
          fill(end + kReadChunk);
          continue;
        }
        const auto* p = reinterpret_cast<const unsigned char*>(buf.data()) - base;
        for (; scan_byte + 7 <= end; ++scan_byte) {
          uint16_t t = kFilter.table[p[scan_byte]];
          if (t == 0) continue;
          uint64_t j = scan_byte - 1;
          uint64_t w = 0;
          for (int i = 0; i < 8; ++i) w = (w << 8) | (j + i < end ? p[j + i] : 0);
          for (int s = 0; s < 8 && found == UINT64_MAX; ++s)
            for (int m = 0; m < 2; ++m) {
              if (!(t & (1u << (2 * s + m)))) continue;
              uint64_t pos = j * 8 + s;
              if (pos < scan_from) continue;
              if (((w >> (16 - s)) & kMask48) == (m == 0 ? kBlockMagic : kEndMagic)) {
                found = pos;
                kind = m;
                break;
              }
            }
          if (found != UINT64_MAX) break;
        }
        if (found == UINT64_MAX && !eof && base + buf.size() - current->bit / 8 > kMaxBlockBytes + kReadChunk) {
          // No boundary for longer than any block can be: not bzip2 (trailing garbage) or corrupt.
          finish((base + buf.size()) * 8);
          fail("{}: corrupt bzip2 data at byte {}: no block or stream boundary in the next {} MB", name,
               current->bit / 8, kMaxBlockBytes >> 20);
        }
      }
      if (found == UINT64_MAX) {  // the end of the file
        uint64_t end_bit = (base + buf.size()) * 8;
        finish(end_bit);
        auto last = std::make_shared<Segment>();
        last->kind = Segment::kFileEnd;
        last->bit = last->end_bit = end_bit;
        push(last);
        return;
      }
      finish(found);
      current = std::make_shared<Segment>();
      current->bit = found;
      current->level = level;
      scan_from = found + 48;
      if (kind == 0) {
        current->kind = Segment::kBlock;
        uint64_t crc = 0;
        bits_at(found + 48, 32, crc);  // a block cut off by the end of the file fails to decode anyway
        current->crc = static_cast<uint32_t>(crc);
        continue;
      }
      current->kind = Segment::kEnd;
      uint64_t crc = 0;
      current->crc_known = bits_at(found + 48, 32, crc);
      current->crc = static_cast<uint32_t>(crc);
      uint64_t next = (found + 80 + 7) / 8;  // where the next stream may start
      if (current->crc_known && is_header(next)) {
        finish(next * 8);
        level = byte_at(next + 3) - '0';
        current = std::make_shared<Segment>();
        current->kind = Segment::kHeader;
        current->bit = next * 8;
        current->level = level;
        scan_from = next * 8 + 32;
      }
    }
  }

  // The reader: takes the next segment in order; sets `pending` when it is a decoded block.
  void next_segment() {
    SegmentPtr seg = pop();
    if (seg->kind == Segment::kError) std::rethrow_exception(seg->error);
    if (expect_header) {
      if (seg->kind == Segment::kFileEnd && seg->bit == expect_bit) {
        finished = true;
        return;
      }
      if (seg->kind != Segment::kHeader || seg->bit != expect_bit)
        fail("{}: corrupt bzip2 data at byte {}: bad stream magic after the end of a stream (trailing garbage?)",
             name, expect_bit / 8);
      level = seg->level;
      combined = 0;
      expect_header = false;
      expect_bit = seg->bit + 32;
      return;
    }
    if (seg->bit != expect_bit || seg->kind == Segment::kHeader || seg->kind == Segment::kFileEnd) {
      if (seg->kind == Segment::kFileEnd)
        fail("{}: unexpected end of bzip2 data at byte {} (file truncated?)", name, expect_bit / 8);
      fail("{}: corrupt bzip2 data at byte {}: no block or end-of-stream marker", name, expect_bit / 8);
    }
    if (seg->kind == Segment::kEnd) {
      if (!seg->crc_known) fail("{}: unexpected end of bzip2 data at byte {} (file truncated?)", name, seg->bit / 8);
      if (seg->crc != combined)
        fail("{}: corrupt bzip2 data at byte {}: stream CRC mismatch", name, seg->bit / 8);
      expect_header = true;
      expect_bit = (seg->bit + 80 + 7) / 8 * 8;
      raw_done = expect_bit / 8;
      return;
    }
    wait_done(*seg);
    uint64_t end_bit = seg->end_bit;
    if (!seg->why.empty()) {
      // A magic inside the block's bits cut it short: join the following segments until it decodes.
      std::string joined = std::move(seg->raw);
      std::string why = seg->why;
      for (;;) {
        SegmentPtr more = pop();
        if (more->kind == Segment::kError) std::rethrow_exception(more->error);
        if (more->kind == Segment::kFileEnd && end_bit == seg->end_bit)  // the file ends inside the block
          fail("{}: unexpected end of bzip2 data in the block at byte {} (file truncated?)", name, seg->bit / 8);
        if (more->kind == Segment::kFileEnd)
          fail("{}: corrupt bzip2 data in the block at byte {}: {}", name, seg->bit / 8, why);
        joined.resize(more->bit / 8 - seg->bit / 8);
        joined += more->raw;
        end_bit = more->end_bit;
        if (end_bit - seg->bit > kMaxBlockBytes * 8)
          fail("{}: corrupt bzip2 data in the block at byte {}: {}", name, seg->bit / 8, why);
        seg->out.clear();
        if (decode_bzip2_block(joined, seg->bit % 8, end_bit - seg->bit, level, seg->out).empty()) break;
      }
    }
    combined = ((combined << 1) | (combined >> 31)) ^ seg->crc;
    expect_bit = end_bit;
    raw_done = end_bit / 8;
    pending = std::move(seg->out);
    pending_at = 0;
  }
};

ParallelBzip2::ParallelBzip2(std::string name, RawReader raw, int threads) : state_(std::make_shared<State>()) {
  auto& s = *state_;
  s.name = std::move(name);
  s.raw = std::move(raw);
  threads = std::max(threads, 1);
  s.max_segments = max_segments(threads);
  auto stop = [&s] {
    std::lock_guard lock(s.mutex);
    s.cancel = true;
    s.changed.notify_all();
  };
  // Named, so that top -H and ps -L show where the time goes.
  start_threads(s.workers, threads, [&s] {
    pthread_setname_np(pthread_self(), "bzip2-decode");
    s.work();
  }, stop, "bzip2 decoding");
  start_threads(s.workers, 1, [&s] {
    pthread_setname_np(pthread_self(), "bzip2-split");
    s.split();
  }, stop, "bzip2 splitting");
}

ParallelBzip2::~ParallelBzip2() {
  auto& s = *state_;
  {
    std::lock_guard lock(s.mutex);
    s.cancel = true;
    s.changed.notify_all();
  }
  for (auto& t : s.workers) t.join();
}

size_t ParallelBzip2::read(char* buffer, size_t n) {
  auto& s = *state_;
  while (s.pending_at == s.pending.size()) {
    if (s.finished) return 0;
    s.pending.clear();
    s.pending_at = 0;
    s.next_segment();
  }
  size_t take = std::min(n, s.pending.size() - s.pending_at);
  std::memcpy(buffer, s.pending.data() + s.pending_at, take);
  s.pending_at += take;
  return take;
}

uint64_t ParallelBzip2::raw_offset() const { return state_->raw_done; }

}  // namespace bk
