// One bzip2 block decoded without libbz2: the block's bits (from its 48-bit magic to the bit before the next
// magic) to its bytes, its CRC checked. bzip2's format as the reference implementation writes it (bzip2 1.0.x):
//
//   magic 0x314159265359 (48) | block CRC (32) | randomised (1) | origPtr (24)
//   symbol map: 16 bits of which 16-byte ranges occur, then 16 bits for each range that does
//   nGroups (3, 2..6) | nSelectors (15) | the selectors, unary and move-to-front coded
//   per group, each symbol's code length: a start (5 bits) and +1/-1 steps, lengths 1..20
//   the symbols, 50 per selector, canonical Huffman codes: RUNA/RUNB digits of zero runs (bijective base 2),
//   move-to-front indices + 1, and end-of-block
//
// then the inverse Burrows-Wheeler transform from origPtr, the initial run-length stage (4 equal bytes and a
// count of further copies), and the block CRC (CRC-32, MSB first, polynomial 0x04C11DB7). What it does faster
// than libbz2: it has the whole block in memory, so it reads bits from a 64-bit window instead of a resumable
// state machine, decodes codes of up to 10 bits with one table lookup, moves the move-to-front list 16 bytes at
// a step (SSE2), walks the inverse transform as 8 segments at once (io/inverse_bwt.h: 8 cache misses in flight
// instead of one), and computes the CRC 8 bytes at a step. The slow path of bzip2's format, randomised blocks (written only by
// bzip2 0.9.0 and earlier), is left to libbz2: decode_bzip2_block_bits then returns kBzip2Randomised.
#pragma once

#include <cstdint>
#include <string>

namespace bk {

inline constexpr const char* kBzip2Randomised = "randomised block";

// Decodes bits [bit_offset, bit_offset + bits) of in[0, in_bytes) as one block of a level-`level` stream
// (maximum block size 100k * level), appending its bytes to out. Exactly `bits` bits must make up the block.
// Returns "" on success, else why not (out is then as it was); kBzip2Randomised for a randomised block.
std::string decode_bzip2_block_bits(const unsigned char* in, size_t in_bytes, uint64_t bit_offset, uint64_t bits,
                                    int level, std::string& out);

// bzip2's CRC-32 of data, continuing from crc (start with 0).
uint32_t bzip2_crc(const unsigned char* data, size_t n, uint32_t crc = 0);

}  // namespace bk
