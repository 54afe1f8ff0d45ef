// Parallel decoding of multi-member gzip files, in order, for bk::Input (--threads above 1).
//
// A gzip file is one or more members (a header starting 1f 8b 08, deflate data, a CRC-32 and length trailer);
// `cat a.gz b.gz`, bgzip and pigz --independent -b write many. Nothing says where a member ends but its own
// deflate data, so members are found the way bzip2 blocks are (io/bzip2_parallel.h), by their magic:
//
//   splitter (one thread)  reads the file and cuts it before every candidate header (1f 8b 08 and a flag byte
//                          with its reserved bits clear), and by force every kMaxSegment bytes;
//   workers (`threads`)    inflate each segment that lies between two candidates (or a candidate and the end of
//                          the file) as one whole member: it is one when inflate ends exactly at the segment's
//                          end, with the trailer's CRC-32 and length checked;
//   sequencer (the caller) takes the segments in file order. Where the previous member ended exactly at the
//                          segment's start and a worker decoded it, it hands out the worker's bytes; otherwise it
//                          inflates the segment's bytes itself, continuing the member in progress.
//
// A candidate can also occur by chance inside a member's deflate data. A segment cut there ends inside its member
// and fails as a whole member, and the next one does not start at a member's end, so the sequencer inflates both
// itself: bytes out are exactly zcat's, for any number of threads. A one-member file (gzip's usual output) is
// inflated by the sequencer alone, on Input's decoding thread, as with one thread.
//
// Memory: at most threads + 4 segments are held, each at most kMaxSegment compressed bytes and kMaxMemberOutput
// decoded ones (a larger member is left to the sequencer): (threads + 4) * 36 MiB.
#pragma once

#include "io/bzip2_parallel.h"  // RawReader

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace bk {

// What Input's decoding thread pulls decoded bytes from: a serial codec or the gzip sequencer.
class DecodeSource {
 public:
  virtual ~DecodeSource() = default;
  virtual size_t decode(char* out, size_t n) = 0;  // up to n bytes; 0 only at the end; throws bk::Error
  virtual uint64_t consumed() const = 0;           // compressed bytes decoded so far
};

class GzipMembers final : public DecodeSource {
 public:
  static constexpr size_t kMaxSegment = 4 << 20;
  static constexpr size_t kMaxMemberOutput = 32 << 20;

  // `name` names the file in errors; the first bytes `raw` returns are a gzip header.
  GzipMembers(std::string name, RawReader raw, int threads);
  ~GzipMembers() override;
  GzipMembers(const GzipMembers&) = delete;
  GzipMembers& operator=(const GzipMembers&) = delete;

  size_t decode(char* out, size_t n) override;
  uint64_t consumed() const override;

  struct State;
  // Members handed out as decoded whole, by a worker (or by the sequencer where no worker had taken one yet),
  // rather than inflated in sequence: for tests.
  uint64_t members_decoded_whole() const;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace bk
