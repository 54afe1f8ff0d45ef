#include "tok/wordpiece.h"

#include "util/error.h"
#include "util/printable.h"
#include "io/progress.h"
#include "io/input.h"
#include "io/line_batch.h"
#include "io/output.h"
#include "io/output_over_input.h"
#include "util/utf8.h"
#include "tok/encode_lines.h"
#include "tok/full_tokenizer.h"
#include "tok/vocab_fit.h"
#include "util/ordered_parallel.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>

namespace bk {
void WordpieceEncodeConfig::validate() const {
  if (format != "tokens" && format != "ids") usage_fail("--format must be tokens or ids, got '{}'", format);
  if (threads < 0) usage_fail("--threads must be 0 (all cores) or positive, got {}", threads);
  refuse_output_over_inputs("-o", output, OutputKind::file, {one_text_input(inputs), vocab_path});
}

void run_wordpiece_encode(const WordpieceEncodeConfig& config) {
  config.validate();
  const bool ids_out = config.format == "ids";
  const Vocab vocab = Vocab::load(config.vocab_path);
  vocab.require_unk();
  Output output(config.output, config.force);
  Input input(one_text_input(config.inputs), config.threads);
  Progress progress(config.quiet);
  progress.set_total(input.raw_size());
  const EncodedLines totals = encode_lines(
      input, output, config.threads, ids_out, progress, [&] { return FullTokenizer(vocab, !config.cased); },
      [&](int32_t id) { return vocab.token(id); });
  output.commit();
  progress.finish(input.offset(),
                  fmt::format("{} lines, {} tokens, {}", totals.lines, totals.tokens, totals.unknown.summary()));
  if (!config.quiet) warn_if_vocabulary_misfits(totals.unknown, vocab, config.cased);
}

void WordpieceDecodeConfig::validate() const {
  refuse_output_over_inputs("-o", output, OutputKind::file, {one_text_input(inputs), vocab_path});
}

void run_wordpiece_decode(const WordpieceDecodeConfig& config) {
  config.validate();
  const Vocab vocab = Vocab::load(config.vocab_path);
  Output output(config.output, config.force);
  Input input(one_text_input(config.inputs));
  LineReader reader(input);
  Progress progress(config.quiet);
  progress.set_total(input.raw_size());
  std::string text;
  uint64_t tokens = 0;
  std::string_view line;
  std::vector<int32_t> ids;
  while (reader.next(line)) {
    parse_id_line(line, vocab.size(), input.name(), reader.line_number(), vocab.name(), ids);
    text.clear();
    for (size_t k = 0; k < ids.size(); ++k) {
      std::string_view token = vocab.token(ids[k]);
      if (token.size() > 2 && token[0] == '#' && token[1] == '#') {
        text.append(token.substr(2));  // a continuation piece: glued to the token before it
      } else {
        if (k > 0) text.push_back(' ');
        text.append(token);
      }
    }
    tokens += ids.size();
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
