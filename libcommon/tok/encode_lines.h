// The loop of `wordpiece encode` and `bpe encode`: one output line per input line, the tokens (or ids) joined by
// single spaces, batches of lines encoded by --threads workers and written in input order, so the output is the
// same for every thread count. A Tokenizer has encode(line, ids) and take_unknown() (tok/vocab_fit.h); it owns
// caches of the words it has seen, so one is made per worker, not per batch, and lent to each batch in turn.
#pragma once

#include "io/input.h"
#include "io/line_batch.h"
#include "io/output.h"
#include "io/progress.h"
#include "tok/vocab_fit.h"
#include "util/error.h"
#include "util/ordered_parallel.h"
#include "util/printable.h"
#include "util/threads.h"
#include "util/utf8.h"

#include <fmt/format.h>

#include <charconv>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

struct EncodedLines {
  std::string text;
  uint64_t lines = 0, tokens = 0;
  UnknownCount unknown;
};

// The one INPUT of encode and decode (none: stdin, unless it is a terminal); a usage error for more than one.
inline std::string one_text_input(const std::vector<std::string>& inputs) {
  if (inputs.size() > 1) usage_fail("expected at most one INPUT, got {}", inputs.size());
  return input_or_stdin(inputs.empty() ? "" : inputs.front(), "a text file");
}

inline void append_token_id(std::string& out, int32_t id) {
  // Written in place: appending a few bytes from a buffer costs a library copy per id.
  const size_t at = out.size();
  out.resize(at + 11);  // an int32_t's longest decimal form
  out.resize(static_cast<size_t>(std::to_chars(out.data() + at, out.data() + out.size(), id).ptr - out.data()));
}

// Encodes every line of `input` into `output`: ids when `ids_out`, else token_text(id). Fails naming the file,
// line and byte of invalid UTF-8. Returns the totals (text left empty).
template <typename MakeTokenizer, typename TokenText>
EncodedLines encode_lines(Input& input, Output& output, int threads, bool ids_out, Progress& progress,
                          MakeTokenizer make_tokenizer, TokenText token_text) {
  constexpr size_t kBatchBytes = 1 << 20, kBatchLines = 16384;  // ~1 MiB per hand-off: its cost is negligible
  using Tokenizer = decltype(make_tokenizer());
  LineReader reader(input);
  EncodedLines totals;
  std::mutex idle_mutex;
  std::vector<std::unique_ptr<Tokenizer>> idle;  // at most one per worker
  const auto encode_batch = [&](const LineBatch& batch) {
    std::unique_ptr<Tokenizer> lent;
    {
      std::lock_guard lock(idle_mutex);
      if (!idle.empty()) {
        lent = std::move(idle.back());
        idle.pop_back();
      }
    }
    if (!lent) lent = std::make_unique<Tokenizer>(make_tokenizer());
    Tokenizer& tokenizer = *lent;
    EncodedLines result;
    result.text.reserve(batch.text.size() * 2);
    std::vector<int32_t> ids;
    for (size_t i = 0; i < batch.size(); ++i) {
      const std::string_view line = batch.line(i);
      if (size_t bad = utf8_invalid_offset(line); bad != std::string_view::npos)
        fail("{}: line {}, byte {}: invalid UTF-8", input.name(), batch.first_line + i, bad + 1);
      tokenizer.encode(line, ids);
      for (size_t k = 0; k < ids.size(); ++k) {
        if (k > 0) result.text.push_back(' ');
        if (ids_out) append_token_id(result.text, ids[k]);
        else result.text.append(token_text(ids[k]));
      }
      result.text.push_back('\n');
      result.tokens += ids.size();
    }
    result.lines = batch.size();
    result.unknown = tokenizer.take_unknown();
    std::lock_guard lock(idle_mutex);
    idle.push_back(std::move(lent));
    return result;
  };
  ordered_parallel<LineBatch, EncodedLines>(
      worker_threads(threads),
      [&](LineBatch& batch) { return read_line_batch(reader, batch, kBatchLines, kBatchBytes); },
      encode_batch,
      [&](EncodedLines& result) {
        output.write(result.text);
        totals.lines += result.lines;
        totals.tokens += result.tokens;
        totals.unknown.add(result.unknown);
        if (progress.wants_update())
          progress.update(input.raw_offset(), fmt::format("{} lines, {} tokens", totals.lines, totals.tokens));
      });
  return totals;
}

// The ids of one line of `decode` input (numbers separated by spaces or tabs) into `ids`; fails naming the input,
// line and column of a field that is not a number or not below vocab_size (`vocab` names the vocabulary).
inline void parse_id_line(std::string_view line, uint64_t vocab_size, const std::string& input, uint64_t line_number,
                          const std::string& vocab, std::vector<int32_t>& ids) {
  ids.clear();
  for (size_t pos = 0; pos < line.size();) {
    if (line[pos] == ' ' || line[pos] == '\t') {
      ++pos;
      continue;
    }
    size_t end = pos;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
    const std::string_view field = line.substr(pos, end - pos);
    int64_t id = -1;
    auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), id);
    if (ec != std::errc() || ptr != field.data() + field.size())
      fail("{}: line {}, column {}: '{}' is not a token id", input, line_number, pos + 1, printable_excerpt(field));
    if (id < 0 || static_cast<uint64_t>(id) >= vocab_size)
      fail("{}: line {}, column {}: id {} is out of range (the vocabulary {} has {} tokens)", input, line_number,
           pos + 1, id, vocab, vocab_size);
    ids.push_back(static_cast<int32_t>(id));
    pos = end;
  }
}

}  // namespace bk
