// Test-only helper (not a product tool): exposes libcommon/data to the compat tests and the bench.
//
//   data_test_helper random SEED            ops on stdin, one result line per op:
//       random | half (random() < 0.5) | getrandbits:K (hex) | randbelow:N | randint:A:B | randrange:START:STOP:STEP | shuffle:N | choice:N
//   data_test_helper decode FILE [--skip-corrupt]   one JSON line per record (floats as uint32 bits, bytes as hex)
//   data_test_helper reencode IN OUT [--sorted]     decode + encode every record (original order unless --sorted)
//   data_test_helper write-json IN.jsonl OUT [--sorted]   each line [{"name","kind":"int64|float|bytes|none","values"}]
//   data_test_helper dump FILE                      each record's bytes as one hex line (no Example decoding)
//   data_test_helper bench FILE [PASSES]            MB/s of TFRecord reading (+ decoding) and of raw CRC32C
//   data_test_helper cat FILE THREADS [--rss]       FILE decoded by bk::Input (THREADS bzip2 workers) to stdout;
//                                                   --rss: then the peak resident set in kB on stderr
//   data_test_helper torch-save FILE                the state dict ckpt/torch_save reads: NAME DTYPE [SHAPE] a line
//   data_test_helper dynamic-masks VOCAB SEED PROB MAX_PREDICTIONS [--whole-word-mask]
//                                                   the loader's masks of samples on stdin (dynamic_masks.h)
//   data_test_helper dynamic-masks-bench VOCAB PROB MAX_PREDICTIONS EPOCHS [--whole-word-mask]
//                                                   sequences per second of those draws, one thread
#include "ckpt/torch_save.h"
#include "cli/run_tool.h"
#include "util/crc32c.h"
#include "tfrecord/example.h"
#include "util/py_random.h"
#include "pretraining_data/dynamic_masks.h"
#include "tok/vocab.h"
#include "tfrecord/tfrecord.h"
#include "io/input.h"
#include "io/output.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <numeric>
#include <sstream>

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) parts.push_back(part);
  return parts;
}

int random_ops(const std::string& seed) {
  bk::PyRandom rng;
  rng.seed_words(bk::py_seed_words(seed));
  std::string out;
  for (std::string op; std::cin >> op;) {
    auto a = split(op, ':');
    auto num = [&](size_t i) { return std::stoll(a.at(i)); };
    if (a[0] == "random") out += fmt::format("{:.17g}\n", rng.random());
    else if (a[0] == "half") out += rng.random_below_half() ? "True\n" : "False\n";
    else if (a[0] == "getrandbits") {
      auto words = rng.getrandbits_words(static_cast<int>(num(1)));
      std::string hex;
      for (auto w = words.rbegin(); w != words.rend(); ++w) hex += fmt::format("{:08x}", *w);
      hex.erase(0, std::min(hex.find_first_not_of('0'), hex.empty() ? 0 : hex.size() - 1));
      out += (hex.empty() ? "0" : hex) + "\n";
    } else if (a[0] == "randbelow") out += fmt::format("{}\n", rng.randbelow(std::stoull(a.at(1))));
    else if (a[0] == "randint") out += fmt::format("{}\n", rng.randint(num(1), num(2)));
    else if (a[0] == "randrange") out += fmt::format("{}\n", rng.randrange(num(1), num(2), num(3)));
    else if (a[0] == "choice") {
      std::vector<int64_t> seq(static_cast<size_t>(num(1)));
      std::iota(seq.begin(), seq.end(), 0);
      out += fmt::format("{}\n", rng.choice(seq));
    } else if (a[0] == "shuffle") {
      std::vector<int64_t> seq(static_cast<size_t>(num(1)));
      std::iota(seq.begin(), seq.end(), 0);
      rng.shuffle(seq);
      out += fmt::format("{}\n", fmt::join(seq, " "));
    } else bk::usage_fail("unknown random op '{}'", op);
  }
  std::cout << out;
  return 0;
}

nlohmann::json feature_json(const bk::FeatureValue& value) {
  nlohmann::json j;
  if (const auto* b = std::get_if<bk::BytesList>(&value)) {
    j["kind"] = "bytes";
    j["values"] = nlohmann::json::array();
    for (const auto& s : *b) {
      std::string hex;
      for (unsigned char c : s) hex += fmt::format("{:02x}", c);
      j["values"].push_back(hex);
    }
  } else if (const auto* f = std::get_if<bk::FloatList>(&value)) {
    j["kind"] = "float";
    j["values"] = nlohmann::json::array();
    for (float x : *f) {
      uint32_t bits;
      std::memcpy(&bits, &x, 4);
      j["values"].push_back(bits);
    }
  } else if (const auto* i = std::get_if<bk::Int64List>(&value)) {
    j["kind"] = "int64";
    j["values"] = *i;
  } else {
    j["kind"] = "none";
    j["values"] = nlohmann::json::array();
  }
  return j;
}

int decode(const std::string& path, bool skip_corrupt) {
  bk::Input input(path);
  bk::TFRecordReader reader(input, {.skip_corrupt = skip_corrupt});
  bk::Example example;
  std::string_view record;
  while (reader.next(record)) {
    bk::decode_example(record, example, fmt::format("{}: record {}", path, reader.record_index()));
    nlohmann::json j{{"index", reader.record_index()}, {"offset", reader.record_offset()}};
    j["order"] = nlohmann::json::array();
    for (const auto& f : example.features()) {
      j["order"].push_back(f.name);
      j["features"][f.name] = feature_json(f.value);
    }
    if (example.size() == 0) j["features"] = nlohmann::json::object();
    std::cout << j.dump() << '\n';
  }
  std::cout << nlohmann::json{{"records", reader.records_read()}, {"skipped", reader.skipped()}}.dump() << '\n';
  return 0;
}

int reencode(const std::string& in, const std::string& out_path, bool sorted) {
  bk::Input input(in);
  bk::TFRecordReader reader(input);
  bk::Output output(out_path, true);
  bk::TFRecordWriter writer(output);
  bk::Example example;
  std::string encoded;
  std::string_view record;
  while (reader.next(record)) {
    bk::decode_example(record, example, fmt::format("{}: record {}", in, reader.record_index()));
    bk::encode_example(example, encoded, sorted ? bk::FeatureOrder::kSortedByName : bk::FeatureOrder::kInsertion);
    writer.write(encoded);
  }
  output.commit();
  return 0;
}

std::string unhex(const std::string& hex) {
  std::string bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return bytes;
}

int write_json(const std::string& in, const std::string& out_path, bool sorted) {
  bk::Input input(in);
  bk::LineReader lines(input);
  bk::Output output(out_path, true);
  bk::TFRecordWriter writer(output);
  std::string_view line;
  while (lines.next(line)) {
    bk::Example example;
    for (const auto& f : nlohmann::json::parse(line)) {
      const std::string kind = f.at("kind");
      const auto& values = f.at("values");
      if (kind == "int64") example.set_int64(f.at("name"), values.get<bk::Int64List>());
      else if (kind == "float") {
        bk::FloatList floats;
        for (uint32_t bits : values.get<std::vector<uint32_t>>()) {
          float x;
          std::memcpy(&x, &bits, 4);
          floats.push_back(x);
        }
        example.set_float(f.at("name"), floats);
      } else if (kind == "bytes") {
        bk::BytesList bytes;
        for (const auto& hex : values) bytes.push_back(unhex(hex.get<std::string>()));
        example.set_bytes(f.at("name"), bytes);
      } else example.set(f.at("name"), std::monostate{});
    }
    writer.write(bk::encode_example(example, sorted ? bk::FeatureOrder::kSortedByName : bk::FeatureOrder::kInsertion));
  }
  output.commit();
  return 0;
}

int dump(const std::string& path) {
  bk::Input input(path);
  bk::TFRecordReader reader(input);
  std::string_view record;
  std::string line;
  static const char* digits = "0123456789abcdef";
  while (reader.next(record)) {
    line.clear();
    for (unsigned char c : record) {
      line.push_back(digits[c >> 4]);
      line.push_back(digits[c & 15]);
    }
    line.push_back('\n');
    std::cout << line;
  }
  return 0;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int bench(const std::string& path, int passes) {
  uint64_t bytes = 0, records = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (int p = 0; p < passes; ++p) {
    bk::Input input(path);
    bk::TFRecordReader reader(input);
    std::string_view record;
    while (reader.next(record)) ++records;
    bytes += reader.bytes_read();
  }
  const double read_s = seconds_since(t0);
  bk::Example example;
  t0 = std::chrono::steady_clock::now();
  for (int p = 0; p < passes; ++p) {
    bk::Input input(path);
    bk::TFRecordReader reader(input);
    std::string_view record;
    while (reader.next(record)) bk::decode_example(record, example);
  }
  const double decode_s = seconds_since(t0);
  std::string block(64 << 20, '\0');
  for (size_t i = 0; i < block.size(); ++i) block[i] = static_cast<char>(i * 2654435761u >> 24);
  uint32_t sink = 0;
  t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < 8; ++r) sink ^= bk::crc32c_extend_portable(0, block.data(), block.size());
  const double portable_s = seconds_since(t0);
  double hardware_s = 0;
  if (bk::crc32c_hardware_available()) {
    t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < 8; ++r) sink ^= bk::crc32c_extend_hardware(0, block.data(), block.size());
    hardware_s = seconds_since(t0);
  }
  const double mb = bytes / 1e6, crc_mb = 8.0 * block.size() / 1e6;
  fmt::print("tfrecord_read_mb_s {:.0f}\ntfrecord_read_decode_mb_s {:.0f}\nrecords {}\n", mb / read_s, mb / decode_s, records);
  fmt::print("crc32c_portable_mb_s {:.0f}\ncrc32c_hardware_mb_s {}\n", crc_mb / portable_s,
             hardware_s > 0 ? fmt::format("{:.0f}", crc_mb / hardware_s) : "n/a");
  fmt::print(stderr, "(checksum sink {:08x})\n", sink);
  return 0;
}

int cat(const std::string& path, int threads, bool rss) {
  {
    bk::Input input(path, threads);
    std::vector<char> buf(1 << 16);
    while (size_t got = input.read(buf.data(), buf.size()))
      if (std::fwrite(buf.data(), 1, got, stdout) != got) bk::fail("stdout: write error");
  }
  if (std::fflush(stdout) != 0) bk::fail("stdout: write error");
  if (rss) {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    fmt::print(stderr, "peak_rss_kb {}\n", usage.ru_maxrss);
  }
  return 0;
}

}  // namespace

// Lines "INDEX EPOCH ID..." (a sample's unmasked input_ids) on stdin; for each, the masks the loader draws, as
// "POSITION:ID" (the id input_ids then holds there) separated by spaces.
int dynamic_masks(const std::string& vocab_path, uint64_t seed, double prob, int max_predictions, bool whole_word) {
  const bk::Vocab vocab = bk::Vocab::load(vocab_path);
  const bk::MaskingVocab masking = bk::masking_vocab(vocab);
  const bk::MaskingRule rule{prob, max_predictions, whole_word};
  std::vector<bk::MaskedToken> masks;
  std::string out;
  for (std::string line; std::getline(std::cin, line);) {
    std::istringstream fields(line);
    uint64_t index = 0;
    uint32_t epoch = 0;
    fields >> index >> epoch;
    std::vector<int32_t> ids;
    for (int32_t id; fields >> id;) ids.push_back(id);
    masks.clear();
    bk::draw_dynamic_masks(ids, rule, masking, seed, epoch, index, masks);
    for (size_t k = 0; k < masks.size(); ++k)
      out += fmt::format("{}{}:{}", k ? " " : "", masks[k].position,
                         masks[k].replacement == bk::MaskedToken::kKeep ? ids[masks[k].position] : masks[k].replacement);
    out += '\n';
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

// The same samples as dynamic-masks, masked for EPOCHS epochs on one thread; only the draws are timed. Prints
// "sequences_per_second N" and "masked_fraction F".
int dynamic_masks_bench(const std::string& vocab_path, double prob, int max_predictions, int epochs, bool whole_word) {
  const bk::MaskingVocab masking = bk::masking_vocab(bk::Vocab::load(vocab_path));
  const bk::MaskingRule rule{prob, max_predictions, whole_word};
  std::vector<std::vector<int32_t>> samples;
  for (std::string line; std::getline(std::cin, line);) {
    std::istringstream fields(line);
    uint64_t index = 0;
    uint32_t epoch = 0;
    fields >> index >> epoch;
    auto& ids = samples.emplace_back();
    for (int32_t id; fields >> id;) ids.push_back(id);
  }
  std::vector<bk::MaskedToken> masks;
  uint64_t tokens = 0, masked = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int e = 0; e < epochs; ++e)
    for (size_t i = 0; i < samples.size(); ++i) {
      masks.clear();
      masked += bk::draw_dynamic_masks(samples[i], rule, masking, 7, static_cast<uint32_t>(e), i, masks);
      tokens += samples[i].size();
    }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("sequences_per_second {:.0f}\nmasked_fraction {:.4f}\n",
             static_cast<double>(samples.size() * static_cast<size_t>(epochs)) / seconds,
             static_cast<double>(masked) / static_cast<double>(std::max<uint64_t>(tokens, 1)));
  return 0;
}

int torch_save(const std::string& path) {
  for (const bk::StTensor& t : bk::read_torch_save_state_dict(path))
    fmt::print("{} {} [{}]\n", t.name, bk::st_dtype_name(t.dtype), fmt::join(t.shape, ","));
  return 0;
}

int main(int argc, char** argv) {
  return bk::run_tool("data_test_helper", argc, argv, [](int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    auto has = [&](const char* flag) { return std::find(args.begin(), args.end(), flag) != args.end(); };
    if (args.size() >= 2 && args[0] == "random") return random_ops(args[1]);
    if (args.size() >= 2 && args[0] == "decode") return decode(args[1], has("--skip-corrupt"));
    if (args.size() >= 3 && args[0] == "reencode") return reencode(args[1], args[2], has("--sorted"));
    if (args.size() >= 3 && args[0] == "write-json") return write_json(args[1], args[2], has("--sorted"));
    if (args.size() >= 2 && args[0] == "dump") return dump(args[1]);
    if (args.size() >= 2 && args[0] == "bench") return bench(args[1], args.size() >= 3 ? std::stoi(args[2]) : 1);
    if (args.size() >= 3 && args[0] == "cat") return cat(args[1], std::stoi(args[2]), has("--rss"));
    if (args.size() >= 2 && args[0] == "torch-save") return torch_save(args[1]);
    if (args.size() >= 5 && args[0] == "dynamic-masks")
      return dynamic_masks(args[1], std::stoull(args[2]), std::stod(args[3]), std::stoi(args[4]), has("--whole-word-mask"));
    if (args.size() >= 5 && args[0] == "dynamic-masks-bench")
      return dynamic_masks_bench(args[1], std::stod(args[2]), std::stoi(args[3]), std::stoi(args[4]),
                                 has("--whole-word-mask"));
    bk::usage_fail("expected: random SEED | decode FILE | reencode IN OUT | write-json IN OUT | dump FILE | bench FILE "
                   "[PASSES] | cat FILE THREADS [--rss] | torch-save FILE | dynamic-masks VOCAB SEED PROB MAX_PREDICTIONS "
                   "[--whole-word-mask] | dynamic-masks-bench VOCAB PROB MAX_PREDICTIONS EPOCHS [--whole-word-mask]");
  });
}
