#include "train/loop/tensorboard.h"

#include "util/error.h"
#include "tfrecord/protobuf_wire.h"
#include "tfrecord/tfrecord.h"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fcntl.h>
#include <unistd.h>

namespace bk {

namespace {

// Protocol buffer wire format: a key is (field << 3 | wire type); 0 = varint, 1 = 64-bit, 2 = length-delimited,
// 5 = 32-bit. Fixed-width values are little-endian.
enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kBytes = 2, kFixed32 = 5 };

void put_key(std::string& out, uint32_t field, WireType type) { put_varint(out, (field << 3) | type); }

void put_fixed(std::string& out, uint64_t bits, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

void put_double(std::string& out, uint32_t field, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  put_key(out, field, kFixed64);
  put_fixed(out, bits, 8);
}

void put_float(std::string& out, uint32_t field, float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  put_key(out, field, kFixed32);
  put_fixed(out, bits, 4);
}

void put_bytes(std::string& out, uint32_t field, std::string_view bytes) {
  put_key(out, field, kBytes);
  put_varint(out, bytes.size());
  out.append(bytes);
}

// Event field numbers (tensorboard/compat/proto/event.proto and summary.proto).
constexpr uint32_t kEventWallTime = 1, kEventStep = 2, kEventFileVersion = 3, kEventSummary = 5;
constexpr uint32_t kSummaryValue = 1;
constexpr uint32_t kValueTag = 1, kValueSimpleValue = 2;

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

}  // namespace

double unix_time_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string encode_file_version_event(double wall_time) {
  std::string event;
  put_double(event, kEventWallTime, wall_time);
  put_bytes(event, kEventFileVersion, "brain.Event:2");
  return event;
}

std::string encode_scalar_event(double wall_time, int64_t step, const std::string& tag, float value) {
  std::string value_msg;
  put_bytes(value_msg, kValueTag, tag);
  put_float(value_msg, kValueSimpleValue, value);
  std::string summary;
  put_bytes(summary, kSummaryValue, value_msg);
  std::string event;
  put_double(event, kEventWallTime, wall_time);
  // proto3 leaves out a field at its default, so step 0 is not written (the bytes then equal protobuf's own).
  if (step != 0) {
    put_key(event, kEventStep, kVarint);
    put_varint(event, static_cast<uint64_t>(step));  // int64: negative values take 10 bytes, as protobuf's do
  }
  put_bytes(event, kEventSummary, summary);
  return event;
}

TensorBoardWriter::TensorBoardWriter(const std::string& log_dir) {
  std::error_code ec;
  std::filesystem::create_directories(log_dir, ec);
  if (ec) fail("{}: cannot create the TensorBoard log directory: {}", log_dir, ec.message());
  double now = unix_time_now();
  std::string base = (std::filesystem::path(log_dir) /
                      fmt::format("events.out.tfevents.{:010d}.{}", static_cast<int64_t>(now), host_name()))
                         .string();
  for (int attempt = 0; fd_ < 0; ++attempt) {
    path_ = attempt == 0 ? base : fmt::format("{}.{}.{}", base, ::getpid(), attempt);
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0 && (errno != EEXIST || attempt >= 100)) fail("{}: cannot create: {}", path_, std::strerror(errno));
  }
  pending_ = frame_tfrecord(encode_file_version_event(now));
  flush();
}

TensorBoardWriter::~TensorBoardWriter() {
  try {
    flush();
  } catch (...) {
    // A destructor must not throw; the last step's scalars are lost, which the log already reported.
  }
  if (fd_ >= 0) ::close(fd_);
}

void TensorBoardWriter::add_scalar(const std::string& tag, double value, int64_t step) {
  pending_ += frame_tfrecord(encode_scalar_event(unix_time_now(), step, tag, static_cast<float>(value)));
}

void TensorBoardWriter::add_scalars(int64_t step, const Scalars& scalars) {
  for (const auto& [tag, value] : scalars) add_scalar(tag, value, step);
  flush();
}

void TensorBoardWriter::flush() {
  size_t done = 0;
  while (done < pending_.size()) {
    ssize_t n = ::write(fd_, pending_.data() + done, pending_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      pending_.clear();
      fail("{}: cannot write: {}", path_, std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  pending_.clear();
}

}  // namespace bk
