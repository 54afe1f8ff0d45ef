#include "io/gzip_members.h"

#include "util/threads.h"
#include "util/error.h"

#include <zlib.h>

#include <pthread.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace bk {

namespace {

constexpr size_t kReadChunk = 1 << 20;
constexpr size_t kInflateStep = 1 << 14;  // the sequencer's input per inflate call: errors name the byte to 16 KB

// A gzip member header could start at p: ID1 ID2 CM=8 (deflate), and FLG with its reserved bits 5-7 clear.
bool candidate(const unsigned char* b, size_t p, size_t size) {
  return p + 3 < size && b[p] == 0x1f && b[p + 1] == 0x8b && b[p + 2] == 8 && (b[p + 3] & 0xE0) == 0;
}

struct Segment {
  uint64_t start = 0;  // the file offset of raw[0]
  std::string raw;
  bool whole = false;  // between two candidates, or a candidate and the end: may be exactly one member
  enum { kPending, kRunning, kDone } state = kPending;
  bool decoded = false;  // inflated as exactly one member, its trailer checked
  std::string out;
};

// Inflates `raw` as exactly one gzip member into out; false if it is not one (or decodes to more than the cap).
bool inflate_member(const std::string& raw, std::string& out) {
  z_stream z{};
  if (inflateInit2(&z, 16 + 15) != Z_OK) return false;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  z.avail_in = static_cast<uInt>(raw.size());
  out.resize(std::min(GzipMembers::kMaxMemberOutput, std::max<size_t>(raw.size() * 4, 1 << 16)));
  size_t produced = 0;
  int rc = Z_OK;
  while (rc == Z_OK) {
    if (produced == out.size()) {
      if (out.size() >= GzipMembers::kMaxMemberOutput) break;
      out.resize(std::min(GzipMembers::kMaxMemberOutput, out.size() * 2));
    }
    z.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    z.avail_out = static_cast<uInt>(out.size() - produced);
    const uInt before = z.avail_out;
    rc = inflate(&z, Z_NO_FLUSH);
    produced += before - z.avail_out;
    if (rc == Z_BUF_ERROR && z.avail_out > 0) break;  // the input ran out inside the member
    if (rc == Z_BUF_ERROR) rc = Z_OK;
  }
  const bool whole_member = rc == Z_STREAM_END && z.avail_in == 0;
  inflateEnd(&z);
  out.resize(whole_member ? produced : 0);
  return whole_member;
}

}  // namespace

struct GzipMembers::State {
  std::string name;
  RawReader raw;
  size_t max_held = 0;

  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::shared_ptr<Segment>> queue;  // split, not yet taken by the sequencer
  bool split_done = false, stopping = false;
  std::exception_ptr split_error;
  std::vector<std::thread> workers;

  // The sequencer's side (the thread that calls decode()).
  std::shared_ptr<Segment> current;
  size_t current_used = 0;  // bytes of current->raw inflated by the sequencer, or of current->out handed out
  bool from_worker = false;
  z_stream z{};
  bool member_open = false;  // inside a member: its start was inflated, its end not yet
  uint64_t consumed = 0, whole_members = 0;

  void split();
  void work();
  std::shared_ptr<Segment> first_pending() const;  // the first split segment no one decodes yet; mutex held
  void decode_whole(Segment& seg, std::unique_lock<std::mutex>& lock);
  void emit(std::string& pending, size_t begin, size_t end, uint64_t start, bool whole);
  std::shared_ptr<Segment> next_segment();
};

void GzipMembers::State::emit(std::string& pending, size_t begin, size_t end, uint64_t start, bool whole) {
  auto seg = std::make_shared<Segment>();
  seg->start = start;
  seg->raw.assign(pending, begin, end - begin);
  seg->whole = whole;
  if (!whole) seg->state = Segment::kDone;  // not a member on its own: nothing for a worker to try
  std::unique_lock lock(mutex);
  changed.wait(lock, [&] { return stopping || queue.size() < max_held; });
  if (stopping) return;
  queue.push_back(std::move(seg));
  changed.notify_all();
}

void GzipMembers::State::split() {
  pthread_setname_np(pthread_self(), "gzip-split");
  try {
    std::string pending;     // the segment being built is pending[begin, pending.size())
    size_t begin = 0, scanned = 1;  // candidates are looked for from pending[begin + scanned]
    uint64_t start = 0;
    bool starts_member = true;  // the file starts with a member header
    bool eof = false;
    while (!eof) {
      {
        std::lock_guard lock(mutex);
        if (stopping) return;
      }
      if (begin > 0 && begin >= pending.size() / 2) {
        pending.erase(0, begin);
        begin = 0;
      }
      const size_t had = pending.size();
      pending.resize(had + kReadChunk);
      const size_t got = raw(pending.data() + had, kReadChunk);
      pending.resize(had + got);
      eof = got == 0;
      const auto* b = reinterpret_cast<const unsigned char*>(pending.data());
      for (;;) {
        // The next candidate after the segment's first byte.
        size_t p = begin + scanned;
        while (p < pending.size()) {
          const void* hit = std::memchr(b + p, 0x1f, pending.size() - p);
          if (hit == nullptr) {
            p = pending.size();
            break;
          }
          p = static_cast<size_t>(static_cast<const unsigned char*>(hit) - b);
          if (p + 3 >= pending.size() || candidate(b, p, pending.size())) break;
          ++p;
        }
        if (p == begin && p + 3 < pending.size()) {  // the segment itself starts with a header
          starts_member = true;
          scanned = 1;
          continue;
        }
        if (p + 3 < pending.size() && p - begin <= kMaxSegment) {  // a candidate: the segment ends before it
          emit(pending, begin, p, start, starts_member);
          start += p - begin;
          begin = p;
          scanned = 1;
          starts_member = true;
          continue;
        }
        if (pending.size() - begin >= kMaxSegment) {  // no member boundary in sight: cut by force
          emit(pending, begin, begin + kMaxSegment, start, false);
          start += kMaxSegment;
          begin += kMaxSegment;
          scanned = 0;  // the rest may start with a candidate itself
          starts_member = false;
          if (begin < pending.size() && candidate(b, begin, pending.size())) {
            starts_member = true;
            scanned = 1;
          }
          continue;
        }
        // Look again from the last bytes, which may begin a header not yet complete.
        scanned = std::max<size_t>(scanned, pending.size() - begin >= 3 ? pending.size() - begin - 3 : scanned);
        break;
      }
    }
    if (pending.size() > begin) emit(pending, begin, pending.size(), start, starts_member);
  } catch (...) {
    std::lock_guard lock(mutex);
    split_error = std::current_exception();
  }
  std::lock_guard lock(mutex);
  split_done = true;
  changed.notify_all();
}

std::shared_ptr<Segment> GzipMembers::State::first_pending() const {
  for (const auto& seg : queue)
    if (seg->state == Segment::kPending) return seg;
  return nullptr;
}

// Called with `lock` held on a segment marked kRunning; inflates it unlocked and records the result.
void GzipMembers::State::decode_whole(Segment& seg, std::unique_lock<std::mutex>& lock) {
  lock.unlock();
  bool decoded = false;
  std::string out;
  try {
    decoded = inflate_member(seg.raw, out);
  } catch (...) {  // out of memory: the sequencer inflates it in sequence instead
    decoded = false;
    out.clear();
  }
  lock.lock();
  seg.decoded = decoded;
  seg.out = std::move(out);
  seg.state = Segment::kDone;
  changed.notify_all();
}

void GzipMembers::State::work() {
  pthread_setname_np(pthread_self(), "gzip-decode");
  std::unique_lock lock(mutex);
  for (;;) {
    changed.wait(lock, [&] { return stopping || first_pending() != nullptr; });
    if (stopping) return;
    const std::shared_ptr<Segment> seg = first_pending();
    seg->state = Segment::kRunning;
    decode_whole(*seg, lock);
  }
}

std::shared_ptr<Segment> GzipMembers::State::next_segment() {
  std::unique_lock lock(mutex);
  changed.wait(lock, [&] { return !queue.empty() || split_done; });
  if (queue.empty()) {
    if (split_error) std::rethrow_exception(split_error);
    return nullptr;
  }
  auto seg = std::move(queue.front());
  queue.pop_front();
  changed.notify_all();
  // At a member's end a whole segment is decoded as a member: by its worker (waited for), or here if no worker
  // has taken it yet. Inside a member its bytes are inflated here, and a worker's result is not needed.
  if (!member_open && seg->whole) {
    if (seg->state == Segment::kPending) {
      seg->state = Segment::kRunning;
      decode_whole(*seg, lock);
    }
    changed.wait(lock, [&] { return seg->state == Segment::kDone; });
  }
  return seg;
}

GzipMembers::GzipMembers(std::string name, RawReader raw, int threads) : state_(std::make_shared<State>()) {
  State& s = *state_;
  s.name = std::move(name);
  s.raw = std::move(raw);
  const int workers = std::max(1, threads);
  s.max_held = static_cast<size_t>(workers) + 2;
  auto stop = [&s] {
    std::lock_guard lock(s.mutex);
    s.stopping = true;
    s.changed.notify_all();
  };
  start_threads(s.workers, workers, [&s] { s.work(); }, stop, "gzip decoding");
  start_threads(s.workers, 1, [&s] { s.split(); }, stop, "gzip splitting");
}

GzipMembers::~GzipMembers() {
  State& s = *state_;
  {
    std::lock_guard lock(s.mutex);
    s.stopping = true;
    s.changed.notify_all();
  }
  for (auto& t : s.workers) t.join();
  if (s.member_open) inflateEnd(&s.z);
}

uint64_t GzipMembers::consumed() const { return state_->consumed; }
uint64_t GzipMembers::members_decoded_whole() const { return state_->whole_members; }

size_t GzipMembers::decode(char* out, size_t n) {
  State& s = *state_;
  for (;;) {
    if (s.current && s.from_worker && s.current_used < s.current->out.size()) {
      const size_t take = std::min(n, s.current->out.size() - s.current_used);
      std::memcpy(out, s.current->out.data() + s.current_used, take);
      s.current_used += take;
      if (s.current_used == s.current->out.size()) s.consumed += s.current->raw.size();
      return take;
    }
    if (s.current && !s.from_worker && s.current_used < s.current->raw.size()) {
      if (!s.member_open) {  // a member starts here (the first, or one after a member that ended in this segment)
        s.z = z_stream{};
        if (inflateInit2(&s.z, 16 + 15) != Z_OK) fail("{}: cannot start gzip decoder", s.name);
        s.member_open = true;
      }
      const size_t avail = std::min(s.current->raw.size() - s.current_used, kInflateStep);
      s.z.next_in = reinterpret_cast<Bytef*>(s.current->raw.data() + s.current_used);
      s.z.avail_in = static_cast<uInt>(avail);
      s.z.next_out = reinterpret_cast<Bytef*>(out);
      s.z.avail_out = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
      const uInt out_before = s.z.avail_out;
      const int rc = inflate(&s.z, Z_NO_FLUSH);
      const uint64_t at = s.current->start + s.current_used;
      if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
        fail("{}: corrupt gzip data near byte {}: {}", s.name, at, s.z.msg ? s.z.msg : "inflate failed");
      const size_t used = avail - s.z.avail_in;
      s.current_used += used;
      s.consumed += used;
      if (rc == Z_STREAM_END) {
        inflateEnd(&s.z);
        s.member_open = false;
      }
      const size_t produced = out_before - s.z.avail_out;
      if (produced > 0) return produced;
      if (used == 0 && rc != Z_STREAM_END) fail("{}: gzip decoder made no progress at byte {}", s.name, at);
      continue;
    }
    s.current = s.next_segment();
    s.current_used = 0;
    if (!s.current) {
      if (s.member_open) fail("{}: unexpected end of gzip data at byte {} (file truncated?)", s.name, s.consumed);
      return 0;
    }
    s.from_worker = !s.member_open && s.current->whole && s.current->decoded;
    if (s.from_worker) {
      ++s.whole_members;
      if (s.current->out.empty()) s.consumed += s.current->raw.size();  // a member of no bytes
    }
  }
}

}  // namespace bk
