#include "io/input.h"

#include "util/error.h"
#include "util/error_cause.h"

#include <bzlib.h>
#include <zlib.h>

#include <cerrno>
#include <exception>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace bk {

// The compressed-stream state. `raw` holds bytes read from the file that the decoder has not consumed.
struct Input::Decoder {
  enum Kind { kNone, kGzip, kBzip2 } kind = kNone;
  std::vector<char> raw = std::vector<char>(1 << 18);
  size_t raw_begin = 0, raw_end = 0;
  bool raw_eof = false;
  uint64_t raw_consumed = 0;
  z_stream gz{};
  bz_stream bz{};
  bool stream_open = false;
  int uncaught_at_open = std::uncaught_exceptions();

  ~Decoder() { close_stream(); }
  void close_stream() {
    if (!stream_open) return;
    if (kind == kGzip) inflateEnd(&gz);
    if (kind == kBzip2) BZ2_bzDecompressEnd(&bz);
    stream_open = false;
  }
  void open_stream(const std::string& name) {
    close_stream();
    if (kind == kGzip) {
      gz = z_stream{};
      if (inflateInit2(&gz, 15 + 32) != Z_OK) fail("{}: cannot start gzip decoder", name);
    } else if (kind == kBzip2) {
      bz = bz_stream{};
      if (BZ2_bzDecompressInit(&bz, 0, 0) != BZ_OK) fail("{}: cannot start bzip2 decoder", name);
    }
    stream_open = true;
  }
};

Input::Input(const std::string& path) : decoder_(std::make_unique<Decoder>()) {
  if (path == "-" || path.empty()) {
    fd_ = 0;
    name_ = "<stdin>";
  } else {
    name_ = path;
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) fail("{}: cannot open: {}", path, std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) {
    const off_t at = ::lseek(fd_, 0, SEEK_CUR);
    raw_size_ = static_cast<uint64_t>(st.st_size) - (at > 0 && at <= st.st_size ? static_cast<uint64_t>(at) : 0);
  }
  // Peek at the first bytes to pick the decoder; they stay in the raw buffer.
  auto& d = *decoder_;
  while (d.raw_end < 3 && !d.raw_eof) {
    ssize_t n = ::read(fd_, d.raw.data() + d.raw_end, d.raw.size() - d.raw_end);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("{}: read error: {}", name_, std::strerror(errno));
    if (n == 0) d.raw_eof = true;
    d.raw_end += static_cast<size_t>(n);
  }
  const auto* b = reinterpret_cast<const unsigned char*>(d.raw.data());
  if (d.raw_end >= 2 && b[0] == 0x1f && b[1] == 0x8b) d.kind = Decoder::kGzip;
  else if (d.raw_end >= 3 && b[0] == 'B' && b[1] == 'Z' && b[2] == 'h') d.kind = Decoder::kBzip2;
  if (d.kind != Decoder::kNone) d.open_stream(name_);
}

// gzip and bzip2 check their CRCs only at the end of a member (bzip2: of a 900k block), so the bytes of a
// corrupt member reach the reader before the corruption is known, and the reader fails first ("invalid UTF-8").
// So an Input destroyed by an error unwinding reads on to the end of the member it is in (at most
// kVerifyLimit decompressed bytes); if the member turns out corrupt, that is recorded with set_error_cause()
// (util/error_cause.h) and the tool reports the corruption, naming the file and the compressed offset.
constexpr uint64_t kVerifyLimit = uint64_t{1} << 30;

Input::~Input() {
  auto& d = *decoder_;
  // Only a member whose check is still to come can explain bad data; a finished one was verified.
  if (std::uncaught_exceptions() > d.uncaught_at_open && d.kind != Decoder::kNone && d.stream_open) {
    try {
      std::vector<char> scratch(1 << 16);
      uint64_t decoded = 0;
      while (d.stream_open && decoded < kVerifyLimit) {
        size_t got = read(scratch.data(), scratch.size());
        if (got == 0) break;
        decoded += got;
      }
    } catch (const Error& e) {
      set_error_cause(e.what());  // the member is corrupt (or truncated): that is the error to report
    } catch (...) {
    }
  }
  if (fd_ > 0) ::close(fd_);
}

std::string_view Input::compression() const {
  switch (decoder_->kind) {
    case Decoder::kGzip: return "gzip";
    case Decoder::kBzip2: return "bzip2";
    default: return "none";
  }
}

uint64_t Input::raw_offset() const { return decoder_->raw_consumed; }

size_t Input::read_raw(char* buffer, size_t n) {
  auto& d = *decoder_;
  if (d.raw_begin < d.raw_end) {
    size_t take = std::min(n, d.raw_end - d.raw_begin);
    std::memcpy(buffer, d.raw.data() + d.raw_begin, take);
    d.raw_begin += take;
    d.raw_consumed += take;
    return take;
  }
  if (d.raw_eof) return 0;
  for (;;) {
    ssize_t got = ::read(fd_, buffer, n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail("{}: read error at byte {}: {}", name_, d.raw_consumed, std::strerror(errno));
    if (got == 0) d.raw_eof = true;
    d.raw_consumed += static_cast<uint64_t>(got);
    return static_cast<size_t>(got);
  }
}

size_t Input::read(char* buffer, size_t n) {
  auto& d = *decoder_;
  if (n == 0) return 0;
  if (d.kind == Decoder::kNone) {
    size_t got = read_raw(buffer, n);
    decoded_offset_ += got;
    return got;
  }
  size_t produced = 0;
  while (produced == 0) {
    if (d.raw_begin == d.raw_end && !d.raw_eof) {
      d.raw_begin = 0;
      d.raw_end = 0;
      size_t got = read_raw(d.raw.data(), d.raw.size());
      d.raw_consumed -= got;  // counted when the decoder consumes it, below
      d.raw_end = got;
    }
    size_t avail = d.raw_end - d.raw_begin;
    if (avail == 0 && d.raw_eof) {
      if (d.stream_open) fail("{}: unexpected end of {} data at byte {} (file truncated?)", name_, compression(), d.raw_consumed);
      return 0;
    }
    if (!d.stream_open) {
      // A finished member followed by more bytes: another concatenated stream (pbzip2, multistream dumps, cat a.gz b.gz).
      d.open_stream(name_);
    }
    size_t used = 0;
    bool stream_end = false;
    if (d.kind == Decoder::kGzip) {
      d.gz.next_in = reinterpret_cast<Bytef*>(d.raw.data() + d.raw_begin);
      d.gz.avail_in = static_cast<uInt>(avail);
      d.gz.next_out = reinterpret_cast<Bytef*>(buffer);
      d.gz.avail_out = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
      int rc = inflate(&d.gz, Z_NO_FLUSH);
      if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
        fail("{}: corrupt gzip data near byte {}: {}", name_, d.raw_consumed, d.gz.msg ? d.gz.msg : "inflate failed");
      used = avail - d.gz.avail_in;
      produced = std::min<size_t>(n, 1u << 30) - d.gz.avail_out;
      stream_end = rc == Z_STREAM_END;
    } else {
      d.bz.next_in = d.raw.data() + d.raw_begin;
      d.bz.avail_in = static_cast<unsigned>(avail);
      d.bz.next_out = buffer;
      d.bz.avail_out = static_cast<unsigned>(std::min<size_t>(n, 1u << 30));
      int rc = BZ2_bzDecompress(&d.bz);
      if (rc != BZ_OK && rc != BZ_STREAM_END)
        fail("{}: corrupt bzip2 data near byte {}: {}", name_, d.raw_consumed,
             rc == BZ_DATA_ERROR         ? "data integrity (CRC) error"
             : rc == BZ_DATA_ERROR_MAGIC ? "bad stream magic"
             : rc == BZ_MEM_ERROR        ? "out of memory"
                                         : fmt::format("decoder code {}", rc));
      used = avail - d.bz.avail_in;
      produced = std::min<size_t>(n, 1u << 30) - d.bz.avail_out;
      stream_end = rc == BZ_STREAM_END;
    }
    d.raw_begin += used;
    d.raw_consumed += used;
    if (stream_end) d.close_stream();
    if (produced == 0 && used == 0 && !stream_end && d.raw_begin < d.raw_end)
      fail("{}: {} decoder made no progress at byte {}", name_, compression(), d.raw_consumed);
  }
  decoded_offset_ += produced;
  return produced;
}

LineReader::LineReader(Input& input, size_t buffer_size) : input_(input), buffer_(buffer_size, '\0') {}

bool LineReader::fill() {
  if (eof_) return false;
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);  // a line longer than the buffer
  size_t got = input_.read(buffer_.data() + end_, buffer_.size() - end_);
  if (got == 0) eof_ = true;
  end_ += got;
  return got > 0;
}

bool LineReader::next(std::string_view& line) {
  size_t scan_from = begin_;
  for (;;) {
    const char* start = buffer_.data() + scan_from;
    const void* nl = std::memchr(start, '\n', end_ - scan_from);
    if (nl) {
      size_t pos = static_cast<const char*>(nl) - buffer_.data();
      size_t len = pos - begin_;
      if (len > 0 && buffer_[pos - 1] == '\r') --len;
      line = std::string_view(buffer_.data() + begin_, len);
      begin_ = pos + 1;
      ++line_number_;
      return true;
    }
    size_t scanned = end_ - begin_;
    if (!fill()) {
      if (begin_ == end_) return false;
      size_t len = end_ - begin_;  // last line without a newline
      if (len > 0 && buffer_[begin_ + len - 1] == '\r') --len;
      line = std::string_view(buffer_.data() + begin_, len);
      begin_ = end_;
      ++line_number_;
      return true;
    }
    scan_from = begin_ + scanned;
  }
}

std::string read_file(const std::string& path) {
  Input in(path);
  std::string out;
  char buf[1 << 16];
  size_t n;
  while ((n = in.read(buf, sizeof buf)) > 0) out.append(buf, n);
  return out;
}

}  // namespace bk
