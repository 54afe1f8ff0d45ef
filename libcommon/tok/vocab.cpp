#include "tok/vocab.h"

#include "cli/error.h"
#include "io/input.h"
#include "text/utf8.h"

#include <bit>
#include <cstring>

namespace bk::tok {
namespace {

// A small, fast hash for short keys (vocabulary pieces are rarely longer than 20 bytes).
uint64_t hash_bytes(const char* p, size_t n) {
  constexpr uint64_t k1 = 0x9E3779B97F4A7C15ull, k2 = 0xC2B2AE3D27D4EB4Full;
  uint64_t h = k1 ^ (n * k2);
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = std::rotl(h ^ (w * k2), 31) * k1;
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = std::rotl(h ^ (w * k2), 31) * k1;
  }
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  return h;
}

// Length of the UTF-8 sequence that ends at text[end-1] (text is valid UTF-8).
size_t last_code_point_length(std::string_view text, size_t end) {
  size_t start = end - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  return end - start;
}

}  // namespace

bool is_python_space(char32_t cp) {
  // Characters with bidirectional class WS, B or S, or general category Zs (CPython's _PyUnicode_IsWhitespace).
  if (cp < 0x80) return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20);
  switch (cp) {
    case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

std::string_view python_strip(std::string_view text) {
  size_t begin = 0;
  while (begin < text.size()) {
    size_t next = begin;
    if (!is_python_space(next_code_point(text, next))) break;
    begin = next;
  }
  size_t end = text.size();
  while (end > begin) {
    size_t len = last_code_point_length(text, end);
    size_t at = end - len;
    if (!is_python_space(next_code_point(text, at))) break;
    end -= len;
  }
  return text.substr(begin, end - begin);
}

Vocab Vocab::load(const std::string& path) {
  if (path == "-") fail("the vocabulary must be a file, not stdin");
  std::string bytes = read_file(path);
  Vocab vocab;
  vocab.name_ = path;
  size_t pos = 0, line = 0;
  while (pos < bytes.size()) {  // a final piece without '\n' is a line; nothing after the last '\n' is not
    size_t nl = bytes.find('\n', pos);
    if (nl == std::string::npos) nl = bytes.size();
    std::string_view raw(bytes.data() + pos, nl - pos);
    ++line;
    if (size_t bad = utf8_invalid_offset(raw); bad != std::string_view::npos)
      fail("{}: line {}, byte {}: invalid UTF-8", path, line, bad + 1);
    vocab.tokens_.emplace_back(python_strip(raw));
    pos = nl + 1;
  }
  vocab.build();
  return vocab;
}

Vocab Vocab::from_tokens(const std::vector<std::string>& tokens, std::string name) {
  Vocab vocab;
  vocab.name_ = std::move(name);
  vocab.tokens_ = tokens;
  vocab.build();
  return vocab;
}

void Vocab::build() {
  size_t capacity = 16;
  while (capacity < tokens_.size() * 2) capacity *= 2;  // load factor <= 0.5 keeps probe chains short
  for (Table* t : {&full_, &continuation_}) {
    t->slots.assign(capacity, 0);
    t->mask = capacity - 1;
  }
  for (size_t id = 0; id < tokens_.size(); ++id) {
    const std::string& t = tokens_[id];
    insert(full_, t, static_cast<int32_t>(id), 0);
    max_token_bytes_ = std::max(max_token_bytes_, t.size());
    if (t.size() > 2 && t[0] == '#' && t[1] == '#') {
      insert(continuation_, t, static_cast<int32_t>(id), 2);
      max_continuation_bytes_ = std::max(max_continuation_bytes_, t.size() - 2);
    }
  }
}

void Vocab::insert(Table& table, std::string_view key, int32_t id, size_t skip) {
  key.remove_prefix(skip);
  for (uint64_t i = hash_bytes(key.data(), key.size()) & table.mask;; i = (i + 1) & table.mask) {
    uint32_t slot = table.slots[i];
    if (slot == 0) {
      table.slots[i] = static_cast<uint32_t>(id) + 1;
      return;
    }
    if (std::string_view(tokens_[slot - 1]).substr(skip) == key) {  // repeated token: the later line wins
      table.slots[i] = static_cast<uint32_t>(id) + 1;
      return;
    }
  }
}

int32_t Vocab::lookup(const Table& table, std::string_view key, size_t skip) const {
  for (uint64_t i = hash_bytes(key.data(), key.size()) & table.mask;; i = (i + 1) & table.mask) {
    uint32_t slot = table.slots[i];
    if (slot == 0) return kNotFound;
    const std::string& t = tokens_[slot - 1];
    if (t.size() == key.size() + skip && std::memcmp(t.data() + skip, key.data(), key.size()) == 0)
      return static_cast<int32_t>(slot - 1);
  }
}

int32_t Vocab::find(std::string_view token) const { return lookup(full_, token, 0); }
int32_t Vocab::find_continuation(std::string_view rest) const { return lookup(continuation_, rest, 2); }

int32_t Vocab::require_unk() const {
  int32_t id = find("[UNK]");
  if (id == kNotFound) fail("{}: the vocabulary has no [UNK] token (encoding needs one)", name_);
  return id;
}

}  // namespace bk::tok
