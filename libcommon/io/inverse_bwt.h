// The last step of bzip2's inverse Burrows-Wheeler transform: the walk through its T vector that spells the text.
//
// The walk is one long chain of dependent loads, each a cache miss on a 3.6 MB vector (a 900k block), so a plain
// walk waits for memory at every byte. walk_inverse_bwt cuts the cycle at fixed rows into segments and walks
// several segments at once, each from its first row until it meets the first row of another (the cut rows are
// marked in the vector), so that several misses are in flight; then it puts the segments in the order the cycle
// visits them. A vector that is not one cycle (a corrupt block) is walked plainly, byte for byte as libbz2 does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bk {

// Per thread, kept between blocks: the segments' rows and bytes.
struct InverseBwtScratch {
  struct Piece {  // bytes of one segment, in walk order within it
    uint32_t segment, offset, length;
  };
  std::vector<uint32_t> cut_rows;                 // sorted
  std::vector<uint32_t> segment_of_cut;           // the segment starting at cut_rows[i]
  std::vector<uint32_t> segment_start, segment_next;
  std::vector<Piece> pieces;
  std::vector<unsigned char> arena;
};

// t[i] = (row after row i) << 8 | byte of row i, rows below 2^20 (bzip2's T vector, a permutation of [0, n)).
// Writes text[k] = byte of row r_k for k < n, r_0 = first, r_{k+1} = t[r_k] >> 8. t is as it was on return.
void walk_inverse_bwt(uint32_t* t, size_t n, uint32_t first, unsigned char* text, InverseBwtScratch& scratch);

// The same, one row at a time: the reference the segmented walk is tested against, and its fallback.
void walk_inverse_bwt_plain(const uint32_t* t, size_t n, uint32_t first, unsigned char* text);

}  // namespace bk
