#include "io/input.h"

#include "util/error.h"
#include "util/error_cause.h"

#include "io/bzip2_parallel.h"
#include "io/gzip_members.h"
#include "util/ordered_parallel.h"

#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include <cerrno>
#include <exception>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <pthread.h>
#include <unistd.h>
#include <vector>

namespace bk {
namespace {

constexpr size_t kRawChunk = 1 << 18;
constexpr size_t kStep = 1 << 14;
constexpr size_t kAheadChunk = 1 << 20;  // gzip/xz/zstd: decoded bytes per hand-over
constexpr size_t kAheadChunks = 4;       // ... and how many may wait for the reader

// A serial decoder of one format (gzip, xz, zstd), concatenated members included. `raw` reads compressed bytes.
class StreamCodec : public DecodeSource {
 public:
  StreamCodec(std::string name, RawReader raw) : name_(std::move(name)), raw_(std::move(raw)) {}
  // Up to n decoded bytes, 0 only at the end; throws on corrupt or truncated data.
  size_t decode(char* out, size_t n) override {
    size_t produced = 0;
    while (produced == 0) {
      if (begin_ == end_ && !eof_) {
        begin_ = 0;
        end_ = raw_(buf_.data(), buf_.size());
        if (end_ == 0) eof_ = true;
      }
      if (begin_ == end_ && eof_) {
        if (size_t last = drain(out, n); last > 0) return last;
        if (!at_member_end()) fail("{}: unexpected end of {} data at byte {} (file truncated?)", name_, kind(), consumed_);
        return 0;
      }
      size_t used = 0;
      // At most kStep bytes at a time, so that an error names its offset to within kStep.
      step(buf_.data() + begin_, std::min(end_ - begin_, kStep), used, out, n, produced);
      begin_ += used;
      consumed_ += used;
      if (used == 0 && produced == 0 && begin_ < end_)
        fail("{}: {} decoder made no progress at byte {}", name_, kind(), consumed_);
    }
    return produced;
  }
  uint64_t consumed() const override { return consumed_; }

 protected:
  virtual const char* kind() const = 0;
  virtual bool at_member_end() const = 0;  // may the data end here?
  virtual size_t drain(char*, size_t) { return 0; }  // at the end of the input: what the decoder still holds
  virtual void step(const char* in, size_t avail, size_t& used, char* out, size_t n, size_t& produced) = 0;
  std::string name_;
  uint64_t consumed_ = 0;
  bool eof_ = false;

 private:
  RawReader raw_;
  std::vector<char> buf_ = std::vector<char>(kRawChunk);
  size_t begin_ = 0, end_ = 0;
};

class GzipCodec final : public StreamCodec {
 public:
  using StreamCodec::StreamCodec;
  ~GzipCodec() override {
    if (open_) inflateEnd(&z_);
  }

 private:
  const char* kind() const override { return "gzip"; }
  bool at_member_end() const override { return !open_; }
  void step(const char* in, size_t avail, size_t& used, char* out, size_t n, size_t& produced) override {
    // Members in gzip format only (16 + 15), as zcat reads them and as io/gzip_members.h does with more threads.
    if (!open_) {  // the first member, or another one after a finished member (cat a.gz b.gz)
      z_ = z_stream{};
      if (inflateInit2(&z_, 16 + 15) != Z_OK) fail("{}: cannot start gzip decoder", name_);
      open_ = true;
    }
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in));
    z_.avail_in = static_cast<uInt>(std::min<size_t>(avail, 1u << 30));
    z_.next_out = reinterpret_cast<Bytef*>(out);
    z_.avail_out = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    uInt in_before = z_.avail_in, out_before = z_.avail_out;
    int rc = inflate(&z_, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
      fail("{}: corrupt gzip data near byte {}: {}", name_, consumed_, z_.msg ? z_.msg : "inflate failed");
    used = in_before - z_.avail_in;
    produced = out_before - z_.avail_out;
    if (rc == Z_STREAM_END) {
      inflateEnd(&z_);
      open_ = false;
    }
  }
  z_stream z_{};
  bool open_ = false;
};

class XzCodec final : public StreamCodec {
 public:
  XzCodec(std::string name, RawReader raw) : StreamCodec(std::move(name), std::move(raw)) {
    // Concatenated streams and the stream padding between them, as xz -d reads them.
    if (lzma_stream_decoder(&s_, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) fail("{}: cannot start xz decoder", name_);
  }
  ~XzCodec() override { lzma_end(&s_); }

 private:
  const char* kind() const override { return "xz"; }
  bool at_member_end() const override { return done_; }
  void step(const char* in, size_t avail, size_t& used, char* out, size_t n, size_t& produced) override {
    s_.next_in = reinterpret_cast<const uint8_t*>(in);
    s_.avail_in = avail;
    s_.next_out = reinterpret_cast<uint8_t*>(out);
    s_.avail_out = n;
    check(lzma_code(&s_, LZMA_RUN));
    used = avail - s_.avail_in;
    produced = n - s_.avail_out;
  }
  // LZMA_CONCATENATED learns of the end of the input only from LZMA_FINISH; a truncated stream then stops with
  // LZMA_BUF_ERROR (no progress), which leaves done_ false.
  size_t drain(char* out, size_t n) override {
    if (done_) return 0;
    s_.next_in = nullptr;
    s_.avail_in = 0;
    s_.next_out = reinterpret_cast<uint8_t*>(out);
    s_.avail_out = n;
    check(lzma_code(&s_, LZMA_FINISH));
    return n - s_.avail_out;
  }
  void check(lzma_ret rc) {
    if (rc == LZMA_STREAM_END) done_ = true;
    if (rc == LZMA_OK || rc == LZMA_STREAM_END || rc == LZMA_BUF_ERROR) return;
    const char* why = rc == LZMA_DATA_ERROR      ? "corrupt data"
                      : rc == LZMA_FORMAT_ERROR  ? "not xz data"
                      : rc == LZMA_MEM_ERROR     ? "out of memory"
                      : rc == LZMA_OPTIONS_ERROR ? "unsupported options"
                                                 : "decoder error";
    fail("{}: corrupt xz data near byte {}: {}", name_, consumed_, why);
  }
  lzma_stream s_ = LZMA_STREAM_INIT;
  bool done_ = false;
};

class ZstdCodec final : public StreamCodec {
 public:
  ZstdCodec(std::string name, RawReader raw) : StreamCodec(std::move(name), std::move(raw)), d_(ZSTD_createDStream()) {
    if (!d_) fail("{}: cannot start zstd decoder", name_);
  }
  ~ZstdCodec() override { ZSTD_freeDStream(d_); }

 private:
  const char* kind() const override { return "zstd"; }
  bool at_member_end() const override { return frame_done_; }
  void step(const char* in, size_t avail, size_t& used, char* out, size_t n, size_t& produced) override {
    ZSTD_inBuffer ib{in, avail, 0};
    ZSTD_outBuffer ob{out, n, 0};
    size_t rc = ZSTD_decompressStream(d_, &ob, &ib);  // moves on to the next frame by itself
    if (ZSTD_isError(rc)) fail("{}: corrupt zstd data near byte {}: {}", name_, consumed_, ZSTD_getErrorName(rc));
    used = ib.pos;
    produced = ob.pos;
    frame_done_ = rc == 0;
  }
  ZSTD_DStream* d_;
  bool frame_done_ = true;
};

// Runs a decoder (a StreamCodec, or the gzip members' sequencer) on its own thread, kAheadChunks chunks ahead of
// the reader.
class ReadAhead {
 public:
  explicit ReadAhead(std::unique_ptr<DecodeSource> codec) : codec_(std::move(codec)) {
    thread_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "decode-ahead");
      run();
    });
  }
  ~ReadAhead() {
    {
      std::lock_guard lock(mutex_);
      cancel_ = true;
      changed_.notify_all();
    }
    thread_.join();
  }
  size_t read(char* buffer, size_t n) {
    while (at_ == current_.data.size()) {
      if (done_) return 0;
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return !chunks_.empty(); });
      current_ = std::move(chunks_.front());
      chunks_.pop_front();
      at_ = 0;
      changed_.notify_all();
      lock.unlock();
      raw_offset_ = current_.raw_end;
      if (current_.data.empty()) done_ = true;  // the decoding thread has stopped
      if (current_.error) std::rethrow_exception(current_.error);
    }
    size_t take = std::min(n, current_.data.size() - at_);
    std::memcpy(buffer, current_.data.data() + at_, take);
    at_ += take;
    return take;
  }
  uint64_t raw_offset() const { return raw_offset_; }

 private:
  struct Chunk {
    std::string data;  // empty: the end (or an error)
    uint64_t raw_end = 0;
    std::exception_ptr error;
  };
  void run() {
    for (;;) {
      Chunk chunk;
      try {
        chunk.data.resize(kAheadChunk);
        size_t filled = 0;
        while (filled < kAheadChunk) {
          size_t got = codec_->decode(chunk.data.data() + filled, kAheadChunk - filled);
          if (got == 0) break;
          filled += got;
        }
        chunk.data.resize(filled);
      } catch (...) {
        chunk.data.clear();
        chunk.error = std::current_exception();
      }
      chunk.raw_end = codec_->consumed();
      bool last = chunk.data.empty();
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return cancel_ || chunks_.size() < kAheadChunks; });
      if (cancel_) return;
      chunks_.push_back(std::move(chunk));
      changed_.notify_all();
      if (last) return;
    }
  }
  std::unique_ptr<DecodeSource> codec_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Chunk> chunks_;
  bool cancel_ = false;
  Chunk current_;
  size_t at_ = 0;
  bool done_ = false;
  uint64_t raw_offset_ = 0;
};

}  // namespace

// The decoding side of a compressed input: one of the two, on threads of its own.
struct Input::Decoder {
  std::unique_ptr<ParallelBzip2> bzip2;
  std::unique_ptr<ReadAhead> ahead;
  size_t read(char* buffer, size_t n) { return bzip2 ? bzip2->read(buffer, n) : ahead->read(buffer, n); }
  uint64_t raw_offset() const { return bzip2 ? bzip2->raw_offset() : ahead->raw_offset(); }
};

Input::Input(const std::string& path, int threads) : uncaught_at_open_(std::uncaught_exceptions()) {
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
  // Peek at the first bytes to pick the decoder; read_raw returns them again.
  peeked_.resize(6);
  size_t have = 0;
  while (have < peeked_.size()) {
    ssize_t n = ::read(fd_, peeked_.data() + have, peeked_.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("{}: read error: {}", name_, std::strerror(errno));
    if (n == 0) break;
    have += static_cast<size_t>(n);
  }
  peeked_.resize(have);
  const auto* b = reinterpret_cast<const unsigned char*>(peeked_.data());
  auto starts = [&](std::initializer_list<unsigned char> magic) {
    return have >= magic.size() && std::equal(magic.begin(), magic.end(), b);
  };
  RawReader raw = [this](char* buffer, size_t n) { return read_raw(buffer, n); };
  const int workers = worker_threads(threads);
  auto codec = [&]() -> std::unique_ptr<DecodeSource> {
    // gzip: one thread inflates; more also decode members in parallel (io/gzip_members.h).
    if (starts({0x1f, 0x8b}) && workers > 1) return kind_ = "gzip", std::make_unique<GzipMembers>(name_, raw, workers);
    if (starts({0x1f, 0x8b})) return kind_ = "gzip", std::make_unique<GzipCodec>(name_, raw);
    if (starts({0xfd, '7', 'z', 'X', 'Z', 0})) return kind_ = "xz", std::make_unique<XzCodec>(name_, raw);
    // A zstd frame, or a skippable frame (0x184D2A50..5F) before one.
    if (starts({0x28, 0xb5, 0x2f, 0xfd}) || (have >= 4 && (b[0] & 0xf0) == 0x50 && b[1] == 0x2a && b[2] == 0x4d && b[3] == 0x18))
      return kind_ = "zstd", std::make_unique<ZstdCodec>(name_, raw);
    return nullptr;
  }();
  if (codec) {
    decoder_ = std::make_unique<Decoder>();
    decoder_->ahead = std::make_unique<ReadAhead>(std::move(codec));
  } else if (have >= 4 && b[0] == 'B' && b[1] == 'Z' && b[2] == 'h' && b[3] >= '1' && b[3] <= '9') {
    kind_ = "bzip2";
    decoder_ = std::make_unique<Decoder>();
    decoder_->bzip2 = std::make_unique<ParallelBzip2>(name_, raw, workers);
  }
}

// gzip, xz and zstd check their CRCs only at the end of a member, so the bytes of a corrupt member reach the
// reader before the corruption is known, and the reader fails first ("invalid UTF-8"). So an Input destroyed by an
// error unwinding reads on to the end of the input (at most kVerifyLimit decompressed bytes); if it turns out
// corrupt, that is recorded with set_error_cause() (util/error_cause.h) and the tool reports the corruption,
// naming the file and the compressed offset. bzip2 needs none of this: a block's bytes are handed out only after
// its CRC was checked (io/bzip2_parallel.h).
constexpr uint64_t kVerifyLimit = uint64_t{1} << 30;

Input::~Input() {
  if (std::uncaught_exceptions() > uncaught_at_open_ && decoder_ && decoder_->ahead) {
    try {
      std::vector<char> scratch(1 << 16);
      uint64_t decoded = 0;
      while (decoded < kVerifyLimit) {
        size_t got = read(scratch.data(), scratch.size());
        if (got == 0) break;
        decoded += got;
      }
    } catch (const Error& e) {
      set_error_cause(e.what());  // the member is corrupt (or truncated): that is the error to report
    } catch (...) {
    }
  }
  decoder_.reset();  // stops the decoding threads before the file closes
  if (fd_ > 0) ::close(fd_);
}

std::string_view Input::compression() const { return kind_; }

uint64_t Input::raw_offset() const { return decoder_ ? decoder_->raw_offset() : raw_consumed_; }

size_t Input::read_raw(char* buffer, size_t n) {
  if (peeked_at_ < peeked_.size()) {
    size_t take = std::min(n, peeked_.size() - peeked_at_);
    std::memcpy(buffer, peeked_.data() + peeked_at_, take);
    peeked_at_ += take;
    raw_consumed_ += take;
    return take;
  }
  for (;;) {
    ssize_t got = ::read(fd_, buffer, n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail("{}: read error at byte {}: {}", name_, raw_consumed_, std::strerror(errno));
    raw_consumed_ += static_cast<uint64_t>(got);
    return static_cast<size_t>(got);
  }
}

size_t Input::read(char* buffer, size_t n) {
  if (n == 0) return 0;
  size_t got = decoder_ ? decoder_->read(buffer, n) : read_raw(buffer, n);
  decoded_offset_ += got;
  return got;
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

std::string input_or_stdin(const std::string& named, std::string_view what) {
  if (!named.empty()) return named;
  if (::isatty(STDIN_FILENO))
    usage_fail("no input given and stdin is a terminal; name {} (or '-' to read the terminal)", what);
  return "-";
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
