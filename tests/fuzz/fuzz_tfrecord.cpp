// libFuzzer target for TFRecord framing and the tf.train.Example decoder (tfrecord2hdf5, bert-train on TFRecord
// inputs): any bytes must give records or a bk::Error, never a crash, a sanitizer report or a huge allocation.
// The bytes are read three ways: as a TFRecord file (strict and --skip-corrupt), as one Example, and framed as
// one record, which must then read back as exactly those bytes (checksums keep mutated files from getting past
// the framing, so the decoder is reached directly too).
#include "tfrecord/example.h"
#include "tfrecord/tfrecord.h"
#include "fuzz_file.h"
#include "io/input.h"
#include "util/error.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

void check_example(const bk::Example& e) {
  for (const auto& f : e.features()) {
    if (e.find(f.name) != &f) std::abort();  // one feature per name, found where it is
  }
  // Encoding what was decoded and decoding it again gives the same features.
  bk::Example again = bk::decode_example(bk::encode_example(e), "fuzz re-encoded");
  if (!again.same_features(e)) std::abort();
}

void read_records(const std::string& path, bool skip_corrupt, bool decode) {
  bk::Input input(path);
  bk::TFRecordReaderOptions options;
  options.skip_corrupt = skip_corrupt;
  options.buffer_size = 64;  // small, so that records straddle refills
  bk::TFRecordReader reader(input, options);
  std::string_view record;
  while (reader.next(record)) {
    if (!decode) continue;
    try {
      check_example(bk::decode_example(record, "fuzz record"));
    } catch (const bk::Error&) {
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::string& path = bk_fuzz::write_fuzz_file(data, size, ".tfrecord");
  for (bool skip : {false, true}) {
    try {
      read_records(path, skip, true);
    } catch (const bk::Error&) {
    }
  }
  try {
    check_example(bk::decode_example(bytes, "fuzz example"));
  } catch (const bk::Error&) {
  }
  const std::string framed = bk::frame_tfrecord(bytes);
  const std::string& framed_path = bk_fuzz::write_fuzz_file(reinterpret_cast<const uint8_t*>(framed.data()),
                                                            framed.size(), ".tfrecord");
  bk::Input input(framed_path);
  if (input.compression() != "none") return 0;  // a length whose bytes spell a gzip or bzip2 magic
  bk::TFRecordReader reader(input);
  std::string_view record;
  if (!reader.next(record) || record != bytes || reader.next(record)) std::abort();
  return 0;
}
