#include "tok/wordpiece.h"

#include "util/error.h"
#include "util/printable.h"
#include "io/progress.h"
#include "io/input.h"
#include "io/line_batch.h"
#include "io/output.h"
#include "io/output_over_input.h"
#include "util/utf8.h"
#include "tok/full_tokenizer.h"
#include "tok/vocab_fit.h"
#include "util/ordered_parallel.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>

namespace bk {
namespace {

void check_one_input(const std::vector<std::string>& inputs) {
  if (inputs.size() > 1) usage_fail("expected at most one INPUT, got {}", inputs.size());
}

std::string one_input(const std::vector<std::string>& inputs) {
  return input_or_stdin(inputs.empty() ? "" : inputs.front(), "a text file");
}

struct EncodedBatch {
  std::string text;
  uint64_t lines = 0, tokens = 0;
  UnknownCount unknown;
};

constexpr size_t kBatchBytes = 1 << 20;
constexpr size_t kBatchLines = 16384;

void append_id(std::string& out, int32_t id) {
  char digits[16];
  auto end = std::to_chars(digits, digits + sizeof digits, id).ptr;
  out.append(digits, end);
}

EncodedBatch encode_batch(const LineBatch& batch, const Vocab& vocab, const WordpieceEncodeConfig& config,
                          bool ids_out, const std::string& input_name) {
  FullTokenizer tokenizer(vocab, !config.cased);
  EncodedBatch result;
  result.text.reserve(batch.text.size() * 2);
  std::vector<int32_t> ids;
  uint32_t begin = 0;
  for (size_t i = 0; i < batch.ends.size(); ++i) {
    std::string_view line(batch.text.data() + begin, batch.ends[i] - begin);
    begin = batch.ends[i];
    if (size_t bad = utf8_invalid_offset(line); bad != std::string_view::npos)
      fail("{}: line {}, byte {}: invalid UTF-8", input_name, batch.first_line + i, bad + 1);
    tokenizer.encode(line, ids);
    for (size_t k = 0; k < ids.size(); ++k) {
      if (k > 0) result.text.push_back(' ');
      if (ids_out) append_id(result.text, ids[k]);
      else result.text.append(vocab.token(ids[k]));
    }
    result.text.push_back('\n');
    result.tokens += ids.size();
  }
  result.lines = batch.ends.size();
  result.unknown = tokenizer.take_unknown();
  return result;
}

}  // namespace

void WordpieceEncodeConfig::validate() const {
  if (format != "tokens" && format != "ids") usage_fail("--format must be tokens or ids, got '{}'", format);
  if (threads < 0) usage_fail("--threads must be 0 (all cores) or positive, got {}", threads);
  check_one_input(inputs);
  refuse_output_over_inputs("-o", output, OutputKind::file, {one_input(inputs), vocab_path});
}

void run_wordpiece_encode(const WordpieceEncodeConfig& config) {
  config.validate();
  const bool ids_out = config.format == "ids";
  const Vocab vocab = Vocab::load(config.vocab_path);
  vocab.require_unk();
  Output output(config.output, config.force);
  Input input(one_input(config.inputs), config.threads);
  LineReader reader(input);
  Progress progress(config.quiet);
  progress.set_total(input.raw_size());
  uint64_t lines = 0, tokens = 0;
  UnknownCount unknown;

  ordered_parallel<LineBatch, EncodedBatch>(
      worker_threads(config.threads),
      // About 1 MiB of text per worker, so thread hand-off costs nothing next to the work.
      [&](LineBatch& batch) { return read_line_batch(reader, batch, kBatchLines, kBatchBytes); },
      [&](const LineBatch& batch) { return encode_batch(batch, vocab, config, ids_out, input.name()); },
      [&](EncodedBatch& result) {
        output.write(result.text);
        lines += result.lines;
        tokens += result.tokens;
        unknown.add(result.unknown);
        if (progress.wants_update()) progress.update(input.raw_offset(), fmt::format("{} lines, {} tokens", lines, tokens));
      });
  output.commit();
  progress.finish(input.offset(), fmt::format("{} lines, {} tokens, {}", lines, tokens, unknown.summary()));
  if (!config.quiet) warn_if_vocabulary_misfits(unknown, vocab, config.cased);
}

void WordpieceDecodeConfig::validate() const {
  check_one_input(inputs);
  refuse_output_over_inputs("-o", output, OutputKind::file, {one_input(inputs), vocab_path});
}

void run_wordpiece_decode(const WordpieceDecodeConfig& config) {
  config.validate();
  const Vocab vocab = Vocab::load(config.vocab_path);
  Output output(config.output, config.force);
  Input input(one_input(config.inputs));
  LineReader reader(input);
  Progress progress(config.quiet);
  progress.set_total(input.raw_size());
  std::string text;
  uint64_t tokens = 0;
  std::string_view line;
  while (reader.next(line)) {
    text.clear();
    size_t pos = 0;
    bool first = true;
    while (pos < line.size()) {
      if (line[pos] == ' ' || line[pos] == '\t') {
        ++pos;
        continue;
      }
      size_t end = pos;
      while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
      std::string_view field = line.substr(pos, end - pos);
      int64_t id = -1;
      auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), id);
      if (ec != std::errc() || ptr != field.data() + field.size())
        fail("{}: line {}, column {}: '{}' is not a token id", input.name(), reader.line_number(), pos + 1,
             printable_excerpt(field));
      if (id < 0 || static_cast<uint64_t>(id) >= vocab.size())
        fail("{}: line {}, column {}: id {} is out of range (the vocabulary {} has {} tokens)", input.name(),
             reader.line_number(), pos + 1, id, vocab.name(), vocab.size());
      std::string_view token = vocab.token(static_cast<int32_t>(id));
      if (token.size() > 2 && token[0] == '#' && token[1] == '#') {
        text.append(token.substr(2));  // a continuation piece: glued to the token before it
      } else {
        if (!first) text.push_back(' ');
        text.append(token);
      }
      first = false;
      ++tokens;
      pos = end;
    }
    text.push_back('\n');
    output.write(text);
    if (progress.wants_update())
      progress.update(input.raw_offset(), fmt::format("{} lines, {} tokens", reader.line_number(), tokens));
  }
  output.commit();
  progress.finish(input.offset(), fmt::format("{} lines, {} tokens", reader.line_number(), tokens));
}

void WordpieceTrainConfig::validate() const {
  std::string alphabet;
  for (const auto& c : trainer.initial_alphabet) alphabet += c;
  if (utf8_invalid_offset(alphabet) != std::string_view::npos) usage_fail("--initial-alphabet is not UTF-8");
  if (trainer.vocab_size < 1) usage_fail("--vocab-size must be positive");
  if (trainer.threads < 0) usage_fail("--threads must be 0 (all cores) or positive, got {}", trainer.threads);
  if (trainer.vocab_size < trainer.special_tokens.size()) usage_fail("--vocab-size is smaller than the special tokens");
  refuse_output_over_inputs("-o", output, OutputKind::file, inputs);
}

void run_wordpiece_train(const WordpieceTrainConfig& config) {
  config.validate();
  WordpieceTrainerConfig trainer = config.trainer;
  trainer.threads = worker_threads(trainer.threads);
  Progress progress(config.quiet);
  if (!config.output.empty() && config.output != "-") check_overwrite(config.output, config.force);
  WordpieceTrainerStats stats;
  const std::vector<std::string> inputs =
      config.inputs.empty() ? std::vector<std::string>{input_or_stdin("", "the training text")} : config.inputs;
  std::vector<std::string> vocab = train_vocab(inputs, trainer, stats, &progress);
  Output out(config.output, config.force);
  for (const auto& token : vocab) {
    out.write(token);
    out.put('\n');
  }
  out.commit();
  progress.finish(stats.bytes, fmt::format("{} lines, {} words ({} distinct), vocabulary of {}", stats.lines,
                                           stats.words, stats.distinct_words, vocab.size()));
}

std::vector<std::string> split_special_tokens(std::string_view list) {
  std::vector<std::string> tokens;
  for (size_t start = 0; start <= list.size();) {
    size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) tokens.emplace_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return tokens;
}

std::string join_special_tokens(const std::vector<std::string>& tokens) {
  return fmt::format("{}", fmt::join(tokens, ","));
}

std::vector<std::string> split_characters(std::string_view text) {
  std::vector<std::string> characters;
  for (char c : text) {
    const bool continuation = (static_cast<unsigned char>(c) & 0xC0) == 0x80;
    if (characters.empty() || !continuation) characters.emplace_back();
    characters.back().push_back(c);
  }
  return characters;
}

}  // namespace bk
