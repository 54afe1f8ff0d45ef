#include "tok/bpe.h"

#include "io/input.h"
#include "io/output.h"
#include "io/output_over_input.h"
#include "io/progress.h"
#include "tok/encode_lines.h"
#include "tok/tokenizer_json.h"
#include "util/error.h"
#include "util/ordered_parallel.h"
#include "util/threads.h"
#include "util/utf8.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace bk {
namespace {

// A BpeTokenizer that wraps each line in the template (encode --special).
struct TemplatedTokenizer {
  BpeTokenizer tokenizer;
  bool special;
  std::vector<int32_t> plain;
  void encode(std::string_view line, std::vector<int32_t>& ids) {
    if (!special) return tokenizer.encode(line, ids);
    tokenizer.encode(line, plain);
    ids = tokenizer.spec().post.apply(plain);
  }
  UnknownCount take_unknown() { return tokenizer.take_unknown(); }
};

// A chunk of training text: whole lines, each with its ending, as HF's trainer reads files.
struct TextChunk {
  std::string text;
  std::string file;
  uint64_t first_line = 1;  // the number of the chunk's first line in the file
};

constexpr size_t kChunkBytes = 1 << 20;

// Reads the next chunk of `input`, ending after a newline (or at the end of the input); `carry` holds the part
// of a line read past the chunk.
bool read_chunk(Input& input, std::string& carry, uint64_t& lines_before, TextChunk& chunk) {
  chunk.text.swap(carry);
  carry.clear();
  chunk.file = input.name();
  chunk.first_line = lines_before + 1;
  const auto count_lines = [&] { lines_before += std::count(chunk.text.begin(), chunk.text.end(), '\n'); };
  for (;;) {
    if (const size_t nl = chunk.text.rfind('\n'); nl != std::string::npos && chunk.text.size() >= kChunkBytes) {
      carry.assign(chunk.text, nl + 1);
      chunk.text.resize(nl + 1);
      count_lines();
      return true;
    }
    const size_t have = chunk.text.size();
    chunk.text.resize(have + kChunkBytes);
    const size_t n = input.read(chunk.text.data() + have, kChunkBytes);
    chunk.text.resize(have + n);
    if (n == 0) {
      count_lines();
      return !chunk.text.empty();
    }
  }
}

WordCounts count_chunk(const TextChunk& chunk, const BpeTokenizerSpec& spec) {
  if (size_t bad = utf8_invalid_offset(chunk.text); bad != std::string_view::npos) {
    const size_t line_start = bad == 0 ? 0 : chunk.text.rfind('\n', bad - 1) + 1;  // npos + 1 = 0
    fail("{}: line {}, byte {}: invalid UTF-8", chunk.file,
         chunk.first_line + std::count(chunk.text.begin(), chunk.text.begin() + static_cast<ptrdiff_t>(bad), '\n'),
         bad - line_start + 1);
  }
  UnicodeNormalizer normalizer(spec.normalizer);
  ByteLevelPreTokenizer pre(spec);
  WordCounts counts;
  const std::string_view text = chunk.text;
  for (size_t start = 0; start < text.size();) {
    const size_t nl = text.find('\n', start);
    const size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    const std::string_view line = normalizer.normalize(text.substr(start, end - start));
    start = end;
    if (line.empty()) continue;  // (a normalizer can empty a line)
    pre.for_each_words(line, [&](std::span<const std::string_view> words) {
      for (std::string_view word : words) ++counts[std::string(word)];
    });
  }
  return counts;
}

}  // namespace

void BpeEncodeConfig::validate() const {
  if (format != "tokens" && format != "ids") usage_fail("--format must be tokens or ids, got '{}'", format);
  if (threads < 0) usage_fail("--threads must be 0 (all cores) or positive, got {}", threads);
  refuse_output_over_inputs("-o", output, OutputKind::file, {one_text_input(inputs), tokenizer_path});
}

void run_bpe_encode(const BpeEncodeConfig& config) {
  config.validate();
  const BpeTokenizerSpec spec = load_bpe_tokenizer(config.tokenizer_path);
  if (config.special && spec.post.empty())
    fail("{}: --special: the tokenizer has no template post-processor", config.tokenizer_path);
  Output output(config.output, config.force);
  Input input(one_text_input(config.inputs), config.threads);
  Progress progress(config.quiet);
  progress.set_total(input.raw_size());
  const EncodedLines totals = encode_lines(
      input, output, config.threads, config.format == "ids", progress,
      [&] { return TemplatedTokenizer{BpeTokenizer(spec), config.special, {}}; },
      [&](int32_t id) { return *spec.token(id); });
  output.commit();
  progress.finish(input.offset(), fmt::format("{} lines, {} tokens", totals.lines, totals.tokens));
}

void BpeDecodeConfig::validate() const {
  refuse_output_over_inputs("-o", output, OutputKind::file, {one_text_input(inputs), tokenizer_path});
}

void run_bpe_decode(const BpeDecodeConfig& config) {
  config.validate();
  const BpeTokenizerSpec spec = load_bpe_tokenizer(config.tokenizer_path);
  Output output(config.output, config.force);
  Input input(one_text_input(config.inputs));
  LineReader reader(input);
  Progress progress(config.quiet);
  progress.set_total(input.raw_size());
  std::vector<int32_t> ids;
  uint64_t tokens = 0;
  std::string_view line;
  while (reader.next(line)) {
    parse_id_line(line, spec.vocab_size(), input.name(), reader.line_number(), config.tokenizer_path, ids);
    output.write(decode_byte_level(spec, ids));
    output.put('\n');
    tokens += ids.size();
    if (progress.wants_update())
      progress.update(input.raw_offset(), fmt::format("{} lines, {} tokens", reader.line_number(), tokens));
  }
  output.commit();
  progress.finish(input.offset(), fmt::format("{} lines, {} tokens", reader.line_number(), tokens));
}

void BpeTrainConfig::validate() const {
  if (trainer.threads < 0) usage_fail("--threads must be 0 (all cores) or positive, got {}", trainer.threads);
  if (trainer.vocab_size < trainer.special_tokens.size() + 256)
    usage_fail("--vocab-size must hold the special tokens and the 256 byte-level characters ({} at least)",
               trainer.special_tokens.size() + 256);
  if (trainer.vocab_size > (size_t{1} << 24)) usage_fail("--vocab-size above 16777216 is not a vocabulary a model can embed");
  for (size_t i = 0; i < trainer.special_tokens.size(); ++i) {
    const std::string& token = trainer.special_tokens[i];
    if (utf8_invalid_offset(token) != std::string_view::npos) usage_fail("--special-tokens is not UTF-8");
    if (std::find(trainer.special_tokens.begin(), trainer.special_tokens.begin() + i, token) != trainer.special_tokens.begin() + i)
      usage_fail("--special-tokens names '{}' twice", token);
  }
  refuse_output_over_inputs("-o", output, OutputKind::file, inputs);
}

void run_bpe_train(const BpeTrainConfig& config) {
  config.validate();
  if (!config.output.empty() && config.output != "-") check_overwrite(config.output, config.force);
  Progress progress(config.quiet);
  const BpeTokenizerSpec untrained = untrained_spec(config.trainer);
  WordCounts words;
  uint64_t bytes = 0;
  const std::vector<std::string> inputs =
      config.inputs.empty() ? std::vector<std::string>{input_or_stdin("", "the training text")} : config.inputs;
  for (const std::string& path : inputs) {
    Input input(path, config.trainer.threads);
    progress.stage(fmt::format("counting {}", input.name()), input.raw_size());
    std::string carry;
    uint64_t lines = 0;
    ordered_parallel<TextChunk, WordCounts>(
        worker_threads(config.trainer.threads), [&](TextChunk& chunk) { return read_chunk(input, carry, lines, chunk); },
        [&](const TextChunk& chunk) { return count_chunk(chunk, untrained); },
        [&](WordCounts& counts) {
          for (auto& [word, n] : counts) words[word] += n;
          if (progress.wants_update()) progress.update(input.raw_offset(), fmt::format("{} distinct words", words.size()));
        });
    bytes += input.offset();
  }
  if (words.empty()) fail("{}: no words to learn from", fmt::join(inputs, ", "));
  progress.stage("merging", config.trainer.vocab_size);
  const BpeTokenizerSpec spec = train_bpe(words, config.trainer);
  Output out(config.output, config.force);
  out.write(tokenizer_json_text(spec));
  out.commit();
  progress.finish(bytes, fmt::format("{} distinct words, vocabulary of {}, {} merges", words.size(),
                                     spec.model->size(), spec.model->merge_count()));
}

}  // namespace bk
