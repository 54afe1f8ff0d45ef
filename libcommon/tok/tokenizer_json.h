// Reading and writing byte-level BPE tokenizers as HF tokenizers stores them: tokenizer.json, or GPT-2's pair
// vocab.json + merges.txt. Only the components bertkit implements exactly are accepted (BPE model; NFC/NFKC/NFD/NFKD
// normalizers; ByteLevel pre-tokenizer with Split pre-tokenizers of GPT-2's or the cl100k pattern before it;
// TemplateProcessing, RobertaProcessing, BertProcessing, ByteLevel post-processors; ByteLevel decoder); any other
// is refused in one line that names it. Every check names the file and the entry; the ids must be dense (0..n-1,
// each once), so memory stays within a small multiple of the file's size whatever the file says.
#pragma once

#include "tok/bpe_tokenizer.h"

#include <string>
#include <vector>

namespace bk {

// True when `path` names a byte-level BPE tokenizer file by its name (a .json: tokenizer.json, or a vocab.json with
// its merges.txt); what a flag's file is taken as.
bool is_bpe_tokenizer_path(const std::string& path);

// True when the file at `path` is one load_bpe_tokenizer reads: a tokenizer.json whose model is BPE with a
// ByteLevel pre-tokenizer (not the WordPiece tokenizer.json of an HF BERT directory), or a vocab.json with its
// merges.txt beside it. For files found rather than named; false for one that cannot be read.
bool is_byte_level_tokenizer_file(const std::string& path);

// The files a tokenizer path reads: itself, and a vocab.json's merges.txt (what no output may overwrite).
std::vector<std::string> tokenizer_file_paths(const std::string& path);

// Reads a tokenizer.json, or a vocab.json and the merges.txt beside it (RoBERTa's and GPT-2's special tokens of
// that vocabulary then become added tokens, as transformers' tokenizers make them).
BpeTokenizerSpec load_bpe_tokenizer(const std::string& path);

// The tokenizer.json text of a spec, which HF's Tokenizer.from_file loads (vocabulary in id order).
std::string tokenizer_json_text(const BpeTokenizerSpec& spec);

}  // namespace bk
