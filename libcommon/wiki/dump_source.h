// The byte layer under the dump parser: reads a (decompressed) bk::Input and hands out UTF-8.
//
// The encoding is decided once, from the first bytes: a UTF-8 byte-order mark is skipped, a UTF-16 LE or BE
// mark (or "<" followed or preceded by a zero byte, a BOM-less UTF-16 "<?xml") switches on a UTF-16 -> UTF-8
// decoder, and a UTF-32 mark is refused. UTF-8 input is validated as it streams by, so a bad byte is reported
// with its offset in the decompressed input however large the dump is.
#pragma once

#include "io/input.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace bk {

enum class WikiDumpEncoding { utf8, utf16le, utf16be };

class WikiDumpSource {
 public:
  explicit WikiDumpSource(Input& input) : input_(input) {}

  // Appends at most about `max` bytes of valid UTF-8 to out; returns how many, 0 only at the end of input.
  size_t read(std::string& out, size_t max);

  WikiDumpEncoding encoding() const { return encoding_; }
  std::string_view encoding_name() const;
  const std::string& name() const { return input_.name(); }
  uint64_t input_offset() const { return input_.offset(); }  // decompressed bytes read so far
  uint64_t skipped() const { return skipped_; }  // byte-order mark bytes before the text

 private:
  void detect();
  size_t read_utf8(std::string& out, size_t max);
  size_t read_utf16(std::string& out, size_t max);
  size_t fill_raw(size_t max);  // reads more raw bytes after the carried-over ones; returns bytes read

  Input& input_;
  WikiDumpEncoding encoding_ = WikiDumpEncoding::utf8;
  bool started_ = false, eof_ = false;
  std::string raw_;          // raw bytes not yet converted (a sequence split by a read, or the sniffed prefix)
  uint64_t raw_start_ = 0;   // decompressed offset of raw_[0]
  uint64_t skipped_ = 0;
};

}  // namespace bk
