#include "squad/squad_examples.h"

#include "util/py_random.h"
#include "squad/squad_json.h"
#include "io/input.h"
#include "util/utf8.h"
#include "tok/vocab.h"
#include "util/error.h"
#include "util/json_read.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace bk {
namespace {

using json = nlohmann::json;

using squad_json::Place;
using squad_json::array_member;
using squad_json::member;
using squad_json::string_member;

size_t count_code_points(std::string_view text) {
  size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

// " ".join(doc_tokens[start:stop]) with Python's slice rules (a negative start counts from the end).
std::string join_slice(const SquadDocument& doc, int64_t start, int64_t stop) {
  const int64_t n = static_cast<int64_t>(doc.size());
  if (start < 0) start = std::max<int64_t>(0, n + start);
  if (stop < 0) stop = std::max<int64_t>(0, n + stop);
  stop = std::min(stop, n);
  std::string out;
  for (int64_t i = start; i < stop; ++i) {
    if (i > start) out.push_back(' ');
    out.append(doc[static_cast<size_t>(i)]);
  }
  return out;
}

// The byte where code point `index` of valid UTF-8 `text` starts (text.size() past its end).
size_t code_point_offset(std::string_view text, size_t index) {
  size_t pos = 0;
  for (size_t i = 0; i < index && pos < text.size(); ++i) next_code_point(text, pos);
  return pos;
}

}  // namespace

bool is_squad_whitespace(char32_t cp) { return cp == ' ' || cp == '\t' || cp == '\r' || cp == '\n' || cp == 0x202F; }

void split_squad_document(std::string_view context, SquadDocument& tokens, std::vector<int32_t>& char_to_word_offset) {
  tokens.bytes.clear();
  tokens.ends.clear();
  char_to_word_offset.clear();
  bool prev_is_whitespace = true;
  for (size_t pos = 0; pos < context.size();) {
    const size_t begin = pos;
    const char32_t cp = next_code_point(context, pos);
    if (is_squad_whitespace(cp)) {
      prev_is_whitespace = true;
    } else {
      if (prev_is_whitespace) tokens.ends.push_back(0);  // a new token
      tokens.bytes.append(context.substr(begin, pos - begin));
      tokens.ends.back() = static_cast<uint32_t>(tokens.bytes.size());
      prev_is_whitespace = false;
    }
    char_to_word_offset.push_back(static_cast<int32_t>(tokens.ends.size()) - 1);
  }
}

std::string join_python_words(std::string_view text) {
  std::string out;
  bool in_word = false;
  for (size_t pos = 0; pos < text.size();) {
    const size_t begin = pos;
    if (is_python_space(next_code_point(text, pos))) {
      in_word = false;
      continue;
    }
    if (!in_word && !out.empty()) out.push_back(' ');
    in_word = true;
    out.append(text.substr(begin, pos - begin));
  }
  return out;
}

void shuffle_squad_training_examples(std::vector<SquadExample>& examples) {
  PyRandom rng(12345);  // run_squad.py: rng = random.Random(12345); rng.shuffle(train_examples)
  rng.shuffle(examples);
}

SquadExamples parse_squad_examples(std::string_view text, const std::string& name, const SquadReadOptions& options) {
  const json root = parse_json(text, name);
  const Place top{name, "top level"};
  const json& data = array_member(root, "data", top);

  SquadExamples out;
  std::vector<int32_t> char_to_word_offset;
  const Place data_place{name, "data"};
  for (size_t e = 0; e < data.size(); ++e) {
    const Place entry_place = data_place.at(e);
    const json& paragraphs = array_member(data[e], "paragraphs", entry_place);
    for (size_t p = 0; p < paragraphs.size(); ++p) {
      const Place paragraph_place = entry_place.at("paragraphs").at(p);
      const json& paragraph = paragraphs[p];
      const std::string& context = string_member(paragraph, "context", paragraph_place);
      const json& qas = array_member(paragraph, "qas", paragraph_place);
      const auto paragraph_index = static_cast<uint32_t>(out.documents.size());
      SquadDocument& doc = out.documents.emplace_back();
      split_squad_document(context, doc, char_to_word_offset);
      doc.context = context;

      for (size_t q = 0; q < qas.size(); ++q) {
        const Place qa_place = paragraph_place.at("qas").at(q);
        const json& qa = qas[q];
        SquadExample example;
        const json& id = member(qa, "id", qa_place);
        if (id.is_string()) example.qas_id = id.get<std::string>();
        else if (id.is_number()) example.qas_id = id.dump();
        else fail("{}: {}.id: expected a string, found {}", name, qa_place.path, id.type_name());
        example.question_text = string_member(qa, "question", qa_place);
        example.paragraph = paragraph_index;
        if (options.is_training) {
          if (options.version_2_with_negative) {
            const json& impossible = member(qa, "is_impossible", qa_place);
            if (!impossible.is_boolean())
              fail("{}: question {}: is_impossible must be true or false, found {}", name, example.qas_id, impossible.dump());
            example.is_impossible = impossible.get<bool>();
          }
          const json& answers = array_member(qa, "answers", qa_place);
          if (answers.size() != 1 && !example.is_impossible)
            fail("{}: question {}: a training question needs exactly 1 answer, it has {}", name, example.qas_id,
                 answers.size());
          if (!example.is_impossible) {
            const Place answer_place = qa_place.at("answers").at(0);
            example.orig_answer_text = string_member(answers[0], "text", answer_place);
            const json& start = member(answers[0], "answer_start", answer_place);
            if (!start.is_number_integer())
              fail("{}: question {}: answer_start must be an integer, found {}", name, example.qas_id, start.dump());
            const int64_t answer_offset = start.get<int64_t>();
            const auto answer_length = static_cast<int64_t>(count_code_points(example.orig_answer_text));
            const auto context_length = static_cast<int64_t>(char_to_word_offset.size());
            if (answer_length == 0) fail("{}: question {}: the answer text is empty", name, example.qas_id);
            if (answer_offset < 0 || answer_offset + answer_length > context_length)
              fail("{}: question {}: the answer (characters {} to {}) falls outside its context of {} characters", name,
                   example.qas_id, answer_offset, answer_offset + answer_length, context_length);
            example.start_position = char_to_word_offset[static_cast<size_t>(answer_offset)];
            example.end_position = char_to_word_offset[static_cast<size_t>(answer_offset + answer_length - 1)];
            // Only answers whose text can be found again in the document tokens of their span are kept (the
            // reference's "Could not find answer" skip). The slice follows Python's rules: a start of -1 (an
            // answer starting in leading whitespace) counts from the end.
            const std::string actual_text = join_slice(doc, example.start_position, int64_t{example.end_position} + 1);
            if (actual_text.find(join_python_words(example.orig_answer_text)) == std::string::npos) {
              ++out.skipped;
              continue;
            }
            example.answer_begin = static_cast<uint32_t>(code_point_offset(context, static_cast<size_t>(answer_offset)));
            example.answer_end = static_cast<uint32_t>(code_point_offset(context, static_cast<size_t>(answer_offset + answer_length)));
            // The reference would index an empty list here (an answer made of whitespace in a context of nothing else).
            if (doc.size() == 0) fail("{}: question {}: the answer's context has no tokens", name, example.qas_id);
          }
        }
        out.examples.push_back(std::move(example));
      }
    }
  }
  return out;
}

SquadExamples read_squad_examples(const std::string& path, const SquadReadOptions& options) {
  const std::string text = read_file(path);
  return parse_squad_examples(text, path == "-" ? std::string("<stdin>") : path, options);
}

}  // namespace bk
