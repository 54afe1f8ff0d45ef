// GPT-2's byte-level alphabet: each of the 256 byte values stands for one printable code point, so that any byte
// string is a string of "characters" a BPE vocabulary can hold (the space is "Ġ" U+0120, the newline "Ċ" U+010A).
// The printable Latin-1 bytes stand for themselves; the other 68 take U+0100.. in byte order. The same table as
// HF tokenizers' ByteLevel pre-tokenizer and decoder and GPT-2's encoder.py (bytes_to_unicode).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace bk {

// The code point that stands for byte b.
char32_t byte_level_char(uint8_t b);

// The byte a code point stands for, or -1 when it is not in the alphabet.
int byte_level_byte(char32_t c);

// Appends the UTF-8 of the characters standing for each byte of `bytes` (one or two bytes each).
void append_byte_level(std::string& out, std::string_view bytes);

// Appends the bytes `token` (UTF-8) stands for and returns true; returns false, appending nothing, when a
// character of it is outside the alphabet (HF's ByteLevel decoder then takes the token's own bytes).
bool append_bytes_of_byte_level(std::string& out, std::string_view token);

// Appends `bytes` as UTF-8, each maximal ill-formed subsequence replaced by U+FFFD (Unicode's "substitution of
// maximal subparts", what Rust's from_utf8_lossy and Python's errors="replace" do).
void append_utf8_lossy(std::string& out, std::string_view bytes);

}  // namespace bk
