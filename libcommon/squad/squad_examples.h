// SQuAD examples as google-research/bert run_squad.py's read_squad_examples makes them from a SQuAD JSON file
// (v1.1, and v2.0 with version_2_with_negative).
//
// Each paragraph's context is split into document tokens on SQuAD's own whitespace (space, tab, CR, LF and
// U+202F; not NBSP, not the other Unicode spaces), and each code point is mapped to the token it falls in
// (char_to_word_offset; -1 for leading whitespace). Every question of a paragraph shares its document tokens.
//
// Answers are read only for training, as the reference does. A training answer's characters (answer_start in
// code points, and the length of its text in code points) become a span of document tokens. When those tokens
// joined by spaces do not contain the answer text with its whitespace normalised (" ".join(text.split())), the
// reference skips the question ("Could not find answer"), and so does read_squad_examples, counting it in
// `skipped`. For v2.0 training, a question whose is_impossible is true has no answer span (-1, -1).
//
// Errors are bk::Error: malformed JSON names the file and the byte offset; a missing or mistyped field names
// its place (data[i].paragraphs[j].qas[k]); a training question without exactly one answer, or whose answer's
// characters fall outside its context (or are none), names the question id.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

// A context's document tokens, back to back: token i is bytes[ends[i-1] .. ends[i]).
struct SquadDocument {
  std::string bytes;
  std::vector<uint32_t> ends;
  std::string context;  // the text itself, for tokenizers that map their pieces back by bytes (byte-level BPE)

  size_t size() const { return ends.size(); }
  std::string_view operator[](size_t i) const {
    const uint32_t begin = i == 0 ? 0 : ends[i - 1];
    return std::string_view(bytes).substr(begin, ends[i] - begin);
  }
};

struct SquadExample {
  std::string qas_id;
  std::string question_text;
  uint32_t paragraph = 0;  // its document tokens are SquadExamples::documents[paragraph]
  // Training only; otherwise empty, -1 and false. start_position and end_position index document tokens; either
  // can be -1 when the answer starts in the context's leading whitespace, where the reference's Python indexing
  // then counts from the end, as the features (squad_features.h) do too.
  std::string orig_answer_text;
  int32_t start_position = -1, end_position = -1;
  uint32_t answer_begin = 0, answer_end = 0;  // the answer's bytes in the context
  bool is_impossible = false;
};

struct SquadExamples {
  std::vector<SquadDocument> documents;  // one per paragraph, in file order
  std::vector<SquadExample> examples;    // one per question kept, in file order
  size_t skipped = 0;                    // training questions whose answer text is not in its span

  const SquadDocument& doc_tokens(const SquadExample& example) const { return documents[example.paragraph]; }
};

struct SquadReadOptions {
  bool is_training = false;
  bool version_2_with_negative = false;  // run_squad.py's flag: read each training question's is_impossible
};

// Reads a SQuAD JSON file ("-" = stdin; gzip and bzip2 are undone).
SquadExamples read_squad_examples(const std::string& path, const SquadReadOptions& options);
// The same from the JSON text itself; `name` is the file named in errors.
SquadExamples parse_squad_examples(std::string_view json, const std::string& name, const SquadReadOptions& options);

// read_squad_examples' is_whitespace: ' ', '\t', '\r', '\n' and U+202F.
bool is_squad_whitespace(char32_t cp);

// Splits a context (valid UTF-8) into document tokens as the reference does, and gives each code point the
// index of the token it belongs to (the token before it for whitespace, -1 before the first token).
void split_squad_document(std::string_view context, SquadDocument& tokens, std::vector<int32_t>& char_to_word_offset);

// tokenization.whitespace_tokenize(text) joined by single spaces: Python's " ".join(text.strip().split()).
std::string join_python_words(std::string_view text);

// What run_squad.py's main does to the training examples before making features: random.Random(12345).shuffle.
void shuffle_squad_training_examples(std::vector<SquadExample>& examples);

}  // namespace bk
