#include "io/inverse_bwt.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace bk {

namespace {

constexpr uint32_t kCutMark = 0x80000000u;  // on t[r] for each segment's first row r; rows use bits 8..27
constexpr uint32_t kRowMask = 0xFFFFF;
constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
// Tuned on this project's 2-core EPYC (bench/wiki_clean.sh's bzip2 line): 8 segments in flight hide most of the
// memory latency; 256 segments per block keep all 8 busy until the last few hundredths of the block.
constexpr size_t kLanes = 8;
constexpr size_t kSegments = 256;
constexpr size_t kChunk = 16384;               // arena bytes a lane takes at a time
constexpr size_t kMinSegmented = size_t{1} << 15;  // shorter blocks fit the cache: the plain walk is as fast

// One walk in progress: its row, its segment, and where its bytes go.
struct Lane {
  uint32_t row = 0, segment = 0;
  unsigned char* write = nullptr;
  unsigned char* chunk_end = nullptr;
  unsigned char* piece_begin = nullptr;
};

// The segmented walk's state over one block.
class SegmentWalk {
 public:
  SegmentWalk(uint32_t* t, InverseBwtScratch& s) : t_(t), s_(s) {}

  // Walks every segment; false if the arena ran out (t is then not a permutation).
  bool run() {
    Lane lanes[kLanes];
    size_t active = 0;
    while (active < kLanes && next_segment_ < s_.segment_start.size()) {
      if (!take_chunk(lanes[active]) || !start_segment(lanes[active])) return false;
      ++active;
    }
    while (active > 0) {
      for (size_t i = 0; i < active;) {
        Lane& lane = lanes[i];
        const uint32_t e = t_[lane.row];
        if (e & kCutMark) [[unlikely]] {  // another segment's first row: this segment ends here
          close_piece(lane);
          s_.segment_next[lane.segment] = segment_at(lane.row);
          if (next_segment_ == s_.segment_start.size()) {
            lanes[i] = lanes[--active];
            continue;
          }
          if (!start_segment(lane)) return false;
          ++i;
          continue;
        }
        *lane.write++ = static_cast<unsigned char>(e);
        lane.row = (e >> 8) & kRowMask;
        if (lane.write == lane.chunk_end) [[unlikely]] {
          close_piece(lane);
          if (!take_chunk(lane)) return false;
        }
        ++i;
      }
    }
    return true;
  }

 private:
  bool take_chunk(Lane& lane) {
    if (arena_used_ + kChunk > s_.arena.size()) return false;
    lane.write = lane.piece_begin = s_.arena.data() + arena_used_;
    lane.chunk_end = lane.write + kChunk;
    arena_used_ += kChunk;
    return true;
  }
  // The next segment's first byte; the first row is marked, so it is read here rather than in run()'s loop.
  bool start_segment(Lane& lane) {
    lane.segment = static_cast<uint32_t>(next_segment_++);
    const uint32_t e = t_[s_.segment_start[lane.segment]];
    *lane.write++ = static_cast<unsigned char>(e);
    lane.row = (e >> 8) & kRowMask;
    if (lane.write == lane.chunk_end) {
      close_piece(lane);
      return take_chunk(lane);
    }
    return true;
  }
  void close_piece(Lane& lane) {
    if (lane.write > lane.piece_begin)
      s_.pieces.push_back({lane.segment, static_cast<uint32_t>(lane.piece_begin - s_.arena.data()),
                           static_cast<uint32_t>(lane.write - lane.piece_begin)});
    lane.piece_begin = lane.write;
  }
  uint32_t segment_at(uint32_t row) const {
    const auto it = std::lower_bound(s_.cut_rows.begin(), s_.cut_rows.end(), row);
    return s_.segment_of_cut[static_cast<size_t>(it - s_.cut_rows.begin())];
  }

  uint32_t* t_;
  InverseBwtScratch& s_;
  size_t next_segment_ = 0, arena_used_ = 0;
};

// Sets up the segments: segment 0 starts at `first` (where the text starts), the others at rows spread evenly
// over [0, n) (any rows would do: the walk finds where in the cycle they fall).
void cut_segments(uint32_t* t, size_t n, uint32_t first, InverseBwtScratch& s) {
  s.segment_start.clear();
  s.segment_start.push_back(first);
  for (size_t j = 1; j < kSegments; ++j) {
    const auto row = static_cast<uint32_t>(j * n / kSegments);
    if (row != first && row != s.segment_start.back()) s.segment_start.push_back(row);
  }
  std::vector<std::pair<uint32_t, uint32_t>> by_row;
  by_row.reserve(s.segment_start.size());
  for (size_t i = 0; i < s.segment_start.size(); ++i) by_row.emplace_back(s.segment_start[i], static_cast<uint32_t>(i));
  std::sort(by_row.begin(), by_row.end());
  s.cut_rows.clear();
  s.segment_of_cut.clear();
  for (const auto& [row, segment] : by_row) {
    s.cut_rows.push_back(row);
    s.segment_of_cut.push_back(segment);
    t[row] |= kCutMark;
  }
  s.segment_next.assign(s.segment_start.size(), kNone);
  s.pieces.clear();
  const size_t arena = (n / kChunk + kLanes + 1) * kChunk;
  if (s.arena.size() < arena) s.arena.resize(arena);
}

// Copies the segments into text in the cycle's order from segment 0; false unless that gives exactly n bytes
// (t is not one cycle).
bool stitch_segments(size_t n, unsigned char* text, InverseBwtScratch& s) {
  std::stable_sort(s.pieces.begin(), s.pieces.end(),
                   [](const auto& a, const auto& b) { return a.segment < b.segment; });
  std::vector<uint32_t> first_piece(s.segment_start.size() + 1, 0);
  for (const auto& piece : s.pieces) ++first_piece[piece.segment + 1];
  for (size_t i = 1; i < first_piece.size(); ++i) first_piece[i] += first_piece[i - 1];
  size_t written = 0, visited = 0;
  uint32_t segment = 0;
  do {
    for (uint32_t p = first_piece[segment]; p < first_piece[segment + 1]; ++p) {
      const auto& piece = s.pieces[p];
      if (written + piece.length > n) return false;
      std::memcpy(text + written, s.arena.data() + piece.offset, piece.length);
      written += piece.length;
    }
    segment = s.segment_next[segment];
  } while (segment != 0 && segment != kNone && ++visited < s.segment_start.size());
  return segment == 0 && written == n;
}

}  // namespace

void walk_inverse_bwt_plain(const uint32_t* t, size_t n, uint32_t first, unsigned char* text) {
  uint32_t row = first;
  for (size_t k = 0; k < n; ++k) {
    const uint32_t e = t[row];
    text[k] = static_cast<unsigned char>(e);
    row = (e >> 8) & kRowMask;
  }
}

void walk_inverse_bwt(uint32_t* t, size_t n, uint32_t first, unsigned char* text, InverseBwtScratch& scratch) {
  if (n < kMinSegmented) return walk_inverse_bwt_plain(t, n, first, text);
  cut_segments(t, n, first, scratch);
  const bool walked = SegmentWalk(t, scratch).run();
  for (const uint32_t row : scratch.segment_start) t[row] &= ~kCutMark;
  if (!walked || !stitch_segments(n, text, scratch)) walk_inverse_bwt_plain(t, n, first, text);
}

}  // namespace bk
