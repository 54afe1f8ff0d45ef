#include "ckpt/tokenizer_files.h"

#include "ckpt/checkpoint_path.h"
#include "io/input.h"
#include "tok/vocab.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

namespace bk {
namespace {

const char* const kSpecialTokens[][2] = {
    {"unk_token", "[UNK]"}, {"sep_token", "[SEP]"}, {"pad_token", "[PAD]"}, {"cls_token", "[CLS]"}, {"mask_token", "[MASK]"}};

// A cased vocabulary: some word piece other than the bracketed specials holds an ASCII capital.
bool vocab_has_capitals(const Vocab& vocab) {
  for (size_t id = 0; id < vocab.size(); ++id) {
    const std::string_view token = vocab.token(static_cast<int32_t>(id));
    if (token.size() > 2 && token.front() == '[' && token.back() == ']') continue;
    for (char c : token)
      if (c >= 'A' && c <= 'Z') return true;
  }
  return false;
}

}  // namespace

TokenizerFiles read_tokenizer_files(const std::string& vocab_path, std::optional<bool> lower_case,
                                    int64_t vocab_size, int64_t max_length) {
  TokenizerFiles files;
  files.vocab_path = vocab_path;
  files.max_length = max_length;
  const Vocab vocab = Vocab::load(vocab_path);
  if (static_cast<int64_t>(vocab.size()) != vocab_size)
    fail("{}: {} tokens, but the model's vocab_size is {}; give the model's own vocabulary with --vocab", vocab_path,
         vocab.size(), vocab_size);
  for (const auto& [key, token] : kSpecialTokens) vocab.require(token);
  files.vocab_bytes = read_file(vocab_path);
  if (lower_case) files.lower_case = *lower_case;
  else if (auto beside = tokenizer_lower_case(vocab_path)) files.lower_case = *beside;
  else files.lower_case = !vocab_has_capitals(vocab);
  return files;
}

std::string tokenizer_config_json(const TokenizerFiles& files) {
  nlohmann::ordered_json j;
  j["tokenizer_class"] = "BertTokenizer";
  j["do_lower_case"] = files.lower_case;
  // BERT's BasicTokenizer strips accents exactly when it lower-cases; null says "follow do_lower_case".
  j["strip_accents"] = nullptr;
  j["tokenize_chinese_chars"] = true;
  j["model_max_length"] = files.max_length;
  for (const auto& [key, token] : kSpecialTokens) j[key] = token;
  return j.dump(2) + "\n";
}

std::string special_tokens_map_json() {
  nlohmann::ordered_json j;
  for (const auto& [key, token] : kSpecialTokens) j[key] = token;
  return j.dump(2) + "\n";
}

NamedFiles tokenizer_file_set(const TokenizerFiles& files) {
  return {{"vocab.txt", files.vocab_bytes},
          {"tokenizer_config.json", tokenizer_config_json(files)},
          {"special_tokens_map.json", special_tokens_map_json()}};
}

NamedFiles training_tokenizer_files(const std::string& vocab, const std::string& checkpoint, int64_t vocab_size,
                                    int64_t max_length) {
  if (!vocab.empty()) return tokenizer_file_set(read_tokenizer_files(vocab, std::nullopt, vocab_size, max_length));
  if (checkpoint.empty()) return {};
  const std::string beside = vocab_beside_checkpoint(checkpoint);
  if (beside.empty()) return {};
  // Found, not named: a vocabulary that does not fit (an HF directory padded to a multiple of 8) is left behind.
  if (static_cast<int64_t>(Vocab::load(beside).size()) != vocab_size) return {};
  return tokenizer_file_set(read_tokenizer_files(beside, std::nullopt, vocab_size, max_length));
}

}  // namespace bk
