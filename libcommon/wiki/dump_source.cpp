#include "wiki/dump_source.h"

#include "util/error.h"
#include "util/utf8.h"

namespace bk {
namespace {

// Length of the UTF-8 sequence a lead byte announces (1 for ASCII and for stray bytes; validation judges).
size_t sequence_length(unsigned char lead) {
  if (lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

// Bytes at the end of `bytes` that start a multi-byte sequence the read cut off.
size_t incomplete_tail(std::string_view bytes) {
  size_t n = bytes.size();
  for (size_t back = 1; back <= 4 && back <= n; ++back) {
    auto c = static_cast<unsigned char>(bytes[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    return sequence_length(c) > back ? back : 0;
  }
  return 0;
}

}  // namespace

std::string_view WikiDumpSource::encoding_name() const {
  switch (encoding_) {
    case WikiDumpEncoding::utf16le: return "UTF-16LE";
    case WikiDumpEncoding::utf16be: return "UTF-16BE";
    default: return "UTF-8";
  }
}

size_t WikiDumpSource::fill_raw(size_t max) {
  size_t old = raw_.size();
  raw_.resize(old + max);
  size_t got = input_.read(raw_.data() + old, max);
  raw_.resize(old + got);
  if (got == 0) eof_ = true;
  return got;
}

void WikiDumpSource::detect() {
  started_ = true;
  while (raw_.size() < 4 && fill_raw(4096) > 0) {
  }
  auto at = [&](size_t i) { return i < raw_.size() ? static_cast<unsigned char>(raw_[i]) : -1; };
  size_t skip = 0;
  if (at(0) == 0xEF && at(1) == 0xBB && at(2) == 0xBF) {
    skip = 3;
  } else if ((at(0) == 0xFF && at(1) == 0xFE && at(2) == 0 && at(3) == 0) ||
             (at(0) == 0 && at(1) == 0 && at(2) == 0xFE && at(3) == 0xFF)) {
    fail("{}: unsupported encoding: UTF-32 byte-order mark at byte 0 (use UTF-8 or UTF-16)", name());
  } else if (at(0) == 0xFF && at(1) == 0xFE) {
    encoding_ = WikiDumpEncoding::utf16le, skip = 2;
  } else if (at(0) == 0xFE && at(1) == 0xFF) {
    encoding_ = WikiDumpEncoding::utf16be, skip = 2;
  } else if (at(0) == '<' && at(1) == 0 && at(3) == 0) {
    encoding_ = WikiDumpEncoding::utf16le;
  } else if (at(0) == 0 && at(1) == '<' && at(2) == 0) {
    encoding_ = WikiDumpEncoding::utf16be;
  }
  raw_.erase(0, skip);
  raw_start_ = skip;
  skipped_ = skip;
}

size_t WikiDumpSource::read(std::string& out, size_t max) {
  if (!started_) detect();
  return encoding_ == WikiDumpEncoding::utf8 ? read_utf8(out, max) : read_utf16(out, max);
}

size_t WikiDumpSource::read_utf8(std::string& out, size_t max) {
  for (;;) {
    while (!eof_ && raw_.size() < max) {
      if (fill_raw(max - raw_.size()) == 0) break;
    }
    if (raw_.empty()) return 0;
    size_t keep = eof_ ? 0 : incomplete_tail(raw_);
    if (keep == raw_.size()) continue;  // only a cut-off sequence so far: read on
    std::string_view ready(raw_.data(), raw_.size() - keep);
    if (size_t bad = utf8_invalid_offset(ready); bad != std::string_view::npos)
      fail("{}: invalid UTF-8 at byte {}", name(), raw_start_ + bad);
    out.append(ready);
    size_t n = ready.size();
    raw_.erase(0, n);
    raw_start_ += n;
    return n;
  }
}

size_t WikiDumpSource::read_utf16(std::string& out, size_t max) {
  const bool le = encoding_ == WikiDumpEncoding::utf16le;
  size_t before = out.size();
  while (out.size() == before) {
    if (!eof_) fill_raw(max);
    size_t i = 0, n = raw_.size();
    auto unit = [&](size_t k) -> uint32_t {
      auto a = static_cast<unsigned char>(raw_[k]), b = static_cast<unsigned char>(raw_[k + 1]);
      return le ? (uint32_t(b) << 8 | a) : (uint32_t(a) << 8 | b);
    };
    while (i + 2 <= n) {
      uint32_t u = unit(i);
      if (u >= 0xD800 && u <= 0xDBFF) {
        if (i + 4 > n) break;  // the low half comes with the next read
        uint32_t low = unit(i + 2);
        if (low < 0xDC00 || low > 0xDFFF)
          fail("{}: invalid UTF-16 at byte {}: unpaired surrogate", name(), raw_start_ + i);
        append_utf8(out, static_cast<char32_t>(0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00)));
        i += 4;
      } else if (u >= 0xDC00 && u <= 0xDFFF) {
        fail("{}: invalid UTF-16 at byte {}: unpaired surrogate", name(), raw_start_ + i);
      } else {
        if (u < 0x80) out.push_back(static_cast<char>(u));
        else append_utf8(out, static_cast<char32_t>(u));
        i += 2;
      }
    }
    raw_.erase(0, i);
    raw_start_ += i;
    if (eof_) {
      if (!raw_.empty())
        fail("{}: invalid UTF-16 at byte {}: input ends in the middle of a character", name(), raw_start_);
      break;
    }
  }
  return out.size() - before;
}

}  // namespace bk
