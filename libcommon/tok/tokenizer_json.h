// Reading and writing byte-level BPE tokenizers as HF tokenizers stores them: tokenizer.json, or GPT-2's pair
// vocab.json + merges.txt. Only the components bertkit implements exactly are accepted (BPE model; NFC/NFKC/NFD/NFKD
// normalizers; ByteLevel pre-tokenizer with Split pre-tokenizers of GPT-2's or the cl100k pattern before it;
// TemplateProcessing, RobertaProcessing, BertProcessing, ByteLevel post-processors; ByteLevel decoder); any other
// is refused in one line that names it. Every check names the file and the entry; the ids must be dense (0..n-1,
// each once), so memory stays within a small multiple of the file's size whatever the file says.
#pragma once

#include "tok/bpe_tokenizer.h"

#include <string>

namespace bk {

// True when `path` names a byte-level BPE tokenizer file (tokenizer.json or a vocab.json with its merges.txt).
bool is_bpe_tokenizer_path(const std::string& path);

// Reads a tokenizer.json, or a vocab.json and the merges.txt beside it (RoBERTa's and GPT-2's special tokens of
// that vocabulary then become added tokens, as transformers' tokenizers make them).
BpeTokenizerSpec load_bpe_tokenizer(const std::string& path);

// The tokenizer.json text of a spec, which HF's Tokenizer.from_file loads (vocabulary in id order).
std::string tokenizer_json_text(const BpeTokenizerSpec& spec);

}  // namespace bk
