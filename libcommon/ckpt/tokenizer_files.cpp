#include "ckpt/tokenizer_files.h"

#include "ckpt/checkpoint_path.h"
#include "io/input.h"
#include "tok/text_tokenizer.h"
#include "tok/tokenizer_json.h"
#include "tok/vocab.h"
#include "tok/vocab_fit.h"
#include "util/error.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>

namespace bk {
namespace fs = std::filesystem;
namespace {

const char* const kSpecialTokens[][2] = {
    {"unk_token", "[UNK]"}, {"sep_token", "[SEP]"}, {"pad_token", "[PAD]"}, {"cls_token", "[CLS]"}, {"mask_token", "[MASK]"}};

// do_lower_case for a vocabulary file: a tokenizer_config.json beside it, else the vocabulary's own casing.
bool default_lower_case(const std::string& vocab_path, const Vocab& vocab) {
  if (auto beside = tokenizer_lower_case(vocab_path)) return *beside;
  return !vocabulary_is_cased(vocab);
}

// A byte-level BPE tokenizer's files: its tokenizer.json (as given, or written from vocab.json + merges.txt) and
// the special tokens transformers should know, by their roles.
TokenizerFiles read_bpe_tokenizer_files(const std::string& path, int64_t vocab_size, int64_t max_length) {
  TokenizerFiles files;
  files.vocab_path = path;
  files.max_length = max_length;
  files.byte_level = true;
  files.lower_case = false;
  const TextTokenizer tokenizer = TextTokenizer::load(path, false);
  if (static_cast<int64_t>(tokenizer.size()) != vocab_size)
    fail("{}: {} tokens, but the model's vocab_size is {}; give the model's own tokenizer with --tokenizer", path,
         tokenizer.size(), vocab_size);
  files.vocab_bytes = path.ends_with("vocab.json") ? tokenizer_json_text(*tokenizer.bpe()) : read_file(path);
  const SpecialIds& s = tokenizer.specials();
  files.pad_id = s.pad;
  const bool roberta = tokenizer.token(s.cls) == "<s>";
  for (auto [key, id] : {std::pair{"bos_token", roberta ? s.cls : -1}, std::pair{"eos_token", roberta ? s.sep : -1},
                         std::pair{"unk_token", s.unk}, std::pair{"sep_token", s.sep}, std::pair{"pad_token", s.pad},
                         std::pair{"cls_token", s.cls}, std::pair{"mask_token", s.mask}})
    if (id >= 0) files.special_tokens.emplace_back(key, std::string(tokenizer.token(id)));
  return files;
}

}  // namespace

TokenizerFiles read_tokenizer_files(const std::string& vocab_path, std::optional<bool> lower_case,
                                    int64_t vocab_size, int64_t max_length) {
  TokenizerFiles files;
  files.vocab_path = vocab_path;
  files.max_length = max_length;
  if (is_bpe_tokenizer_path(vocab_path)) return read_bpe_tokenizer_files(vocab_path, vocab_size, max_length);
  const Vocab vocab = Vocab::load(vocab_path);
  if (static_cast<int64_t>(vocab.size()) != vocab_size)
    fail("{}: {} tokens, but the model's vocab_size is {}; give the model's own vocabulary with --vocab", vocab_path,
         vocab.size(), vocab_size);
  for (const auto& [key, token] : kSpecialTokens) {
    vocab.require(token);
    files.special_tokens.emplace_back(key, token);
  }
  files.vocab_bytes = read_file(vocab_path);
  files.lower_case = lower_case ? *lower_case : default_lower_case(vocab_path, vocab);
  return files;
}

std::string tokenizer_config_json(const TokenizerFiles& files) {
  nlohmann::ordered_json j;
  if (files.byte_level) {
    j["tokenizer_class"] = "PreTrainedTokenizerFast";  // reads tokenizer.json as it is
  } else {
    j["tokenizer_class"] = "BertTokenizer";
    j["do_lower_case"] = files.lower_case;
    // BERT's BasicTokenizer strips accents exactly when it lower-cases; null says "follow do_lower_case".
    j["strip_accents"] = nullptr;
    j["tokenize_chinese_chars"] = true;
  }
  j["model_max_length"] = files.max_length;
  for (const auto& [key, token] : files.special_tokens) j[key] = token;
  return j.dump(2) + "\n";
}

std::string special_tokens_map_json(const TokenizerFiles& files) {
  nlohmann::ordered_json j;
  for (const auto& [key, token] : files.special_tokens) j[key] = token;
  return j.dump(2) + "\n";
}

NamedFiles tokenizer_file_set(const TokenizerFiles& files) {
  return {{files.byte_level ? "tokenizer.json" : "vocab.txt", files.vocab_bytes},
          {"tokenizer_config.json", tokenizer_config_json(files)},
          {"special_tokens_map.json", special_tokens_map_json(files)}};
}

NamedFiles training_tokenizer_files(const std::string& vocab, const std::string& checkpoint, int64_t vocab_size,
                                    int64_t max_length, std::optional<bool> lower_case) {
  if (!vocab.empty()) return tokenizer_file_set(read_tokenizer_files(vocab, lower_case, vocab_size, max_length));
  if (checkpoint.empty()) return {};
  const std::string beside = vocab_beside_checkpoint(checkpoint);
  if (beside.empty()) return {};
  // Found, not named: a vocabulary that does not fit (an HF directory padded to a multiple of 8) is left behind.
  if (static_cast<int64_t>(TextTokenizer::load(beside, true).size()) != vocab_size) return {};
  return tokenizer_file_set(read_tokenizer_files(beside, lower_case, vocab_size, max_length));
}

StampedVocab vocab_file_stamp(const std::string& vocab_path, std::optional<bool> lower_case) {
  if (is_bpe_tokenizer_path(vocab_path)) return {TextTokenizer::load(vocab_path, false).stamp(), vocab_path};
  const Vocab vocab = Vocab::load(vocab_path);
  return {vocab_stamp(vocab, lower_case ? *lower_case : default_lower_case(vocab_path, vocab)), vocab_path};
}

std::optional<StampedVocab> checkpoint_vocab_stamp(const std::string& resolved) {
  const std::string beside = vocab_beside_checkpoint(resolved);
  if (!beside.empty()) return vocab_file_stamp(beside, std::nullopt);
  const fs::path state = fs::path(resolved) / "trainer_state.json";
  std::error_code ec;
  if (!fs::is_regular_file(state, ec)) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(read_file(state.string()), nullptr, false);
  if (!j.is_object() || !j.contains("vocab") || !j["vocab"].is_string()) return std::nullopt;
  if (auto stamp = parse_vocab_stamp(j["vocab"].get<std::string>()))
    return StampedVocab{*stamp, fmt::format("{} (the vocabulary of its training data)", resolved)};
  return std::nullopt;
}

}  // namespace bk
