#include "tok/wordpiece.h"

#include "util/error.h"
#include "cli/progress.h"
#include "io/input.h"
#include "io/line_batch.h"
#include "io/output.h"
#include "text/utf8.h"
#include "tok/full_tokenizer.h"
#include "util/ordered_parallel.h"

#include <charconv>
#include <fmt/format.h>

namespace bk {
namespace {


struct EncodedBatch {
  std::string text;
  uint64_t lines = 0, tokens = 0;
};

constexpr size_t kBatchBytes = 1 << 20;
constexpr size_t kBatchLines = 16384;

void append_id(std::string& out, int32_t id) {
  char digits[16];
  auto end = std::to_chars(digits, digits + sizeof digits, id).ptr;
  out.append(digits, end);
}

EncodedBatch encode_batch(const LineBatch& batch, const Vocab& vocab, const WordpieceEncodeConfig& config,
                          const std::string& input_name) {
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
      if (config.format == WordpieceOutputFormat::Ids) append_id(result.text, ids[k]);
      else result.text.append(vocab.token(ids[k]));
    }
    result.text.push_back('\n');
    result.tokens += ids.size();
  }
  result.lines = batch.ends.size();
  return result;
}

}  // namespace

void run_wordpiece_encode(const WordpieceEncodeConfig& config) {
  const Vocab vocab = Vocab::load(config.vocab_path);
  vocab.require_unk();
  Output output(config.output, config.force);
  Input input(config.input);
  LineReader reader(input);
  Progress progress(config.quiet);
  uint64_t lines = 0, tokens = 0;

  ordered_parallel<LineBatch, EncodedBatch>(
      config.threads,
      // About 1 MiB of text per worker, so thread hand-off costs nothing next to the work.
      [&](LineBatch& batch) { return read_line_batch(reader, batch, kBatchLines, kBatchBytes); },
      [&](const LineBatch& batch) { return encode_batch(batch, vocab, config, input.name()); },
      [&](EncodedBatch& result) {
        output.write(result.text);
        lines += result.lines;
        tokens += result.tokens;
        if (progress.wants_update()) progress.update(input.offset(), fmt::format("{} lines, {} tokens", lines, tokens));
      });
  output.commit();
  progress.finish(input.offset(), fmt::format("{} lines, {} tokens", lines, tokens));
}

void run_wordpiece_decode(const WordpieceDecodeConfig& config) {
  const Vocab vocab = Vocab::load(config.vocab_path);
  Output output(config.output, config.force);
  Input input(config.input);
  LineReader reader(input);
  Progress progress(config.quiet);
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
        fail("{}: line {}, column {}: '{}' is not a token id", input.name(), reader.line_number(), pos + 1, field);
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
      progress.update(input.offset(), fmt::format("{} lines, {} tokens", reader.line_number(), tokens));
  }
  output.commit();
  progress.finish(input.offset(), fmt::format("{} lines, {} tokens", reader.line_number(), tokens));
}

}  // namespace bk
