#include "tok/vocab.h"

#include "util/error.h"
#include "io/input.h"
#include "util/utf8.h"
#include "tok/hash.h"

#include <bit>
#include <cstring>

namespace bk {
namespace {

using detail::bytes_equal;
using detail::hash_bytes;

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
    vocab.add_token(python_strip(raw));
    pos = nl + 1;
  }
  vocab.build();
  return vocab;
}

Vocab Vocab::from_tokens(const std::vector<std::string>& tokens, std::string name) {
  Vocab vocab;
  vocab.name_ = std::move(name);
  for (const auto& t : tokens) vocab.add_token(t);
  vocab.build();
  return vocab;
}

void Vocab::add_token(std::string_view token) {
  if (bytes_.size() + token.size() > 0xFFFFFFFFull) fail("{}: the vocabulary is larger than 4 GB", name_);
  bytes_.append(token);
  begin_.push_back(static_cast<uint32_t>(bytes_.size()));
}

void Vocab::build() {
  const size_t n = size();
  id_mask_ = static_cast<uint32_t>((uint64_t{1} << std::bit_width(n)) - 1);  // holds id + 1 <= n
  size_t capacity = 16;
  while (capacity < n * 2) capacity *= 2;  // load factor <= 0.5 keeps probe chains short
  for (Table* t : {&full_, &continuation_}) {
    t->slots.assign(capacity, 0);
    t->mask = capacity - 1;
  }
  repeated_.assign(n, 0);
  for (size_t id = 0; id < n; ++id) {
    const std::string_view t = token(static_cast<int32_t>(id));
    repeated_[id] = !insert(full_, t, static_cast<int32_t>(id), 0);
    max_token_bytes_ = std::max(max_token_bytes_, t.size());
    if (t.size() > 2 && t[0] == '#' && t[1] == '#') {
      insert(continuation_, t, static_cast<int32_t>(id), 2);
      max_continuation_bytes_ = std::max(max_continuation_bytes_, t.size() - 2);
    }
  }
}

bool Vocab::insert(Table& table, std::string_view key, int32_t id, size_t skip) {
  key.remove_prefix(skip);
  const uint64_t h = hash_bytes(key.data(), key.size());
  const uint32_t slot_value = tag(h) | (static_cast<uint32_t>(id) + 1);
  for (uint64_t i = h & table.mask;; i = (i + 1) & table.mask) {
    const uint32_t slot = table.slots[i];
    if (slot == 0) {
      table.slots[i] = slot_value;
      return true;
    }
    if (token(static_cast<int32_t>((slot & id_mask_) - 1)).substr(skip) == key) {  // the later line wins
      table.slots[i] = slot_value;
      return false;
    }
  }
}

int32_t Vocab::lookup(const Table& table, std::string_view key, size_t skip) const {
  const uint64_t h = hash_bytes(key.data(), key.size());
  const uint32_t key_tag = tag(h);
  for (uint64_t i = h & table.mask;; i = (i + 1) & table.mask) {
    const uint32_t slot = table.slots[i];
    if (slot == 0) return kNotFound;
    if ((slot & ~id_mask_) != key_tag) continue;  // most misses end here without reading the token
    const size_t id = (slot & id_mask_) - 1;
    const size_t begin = begin_[id];
    if (begin_[id + 1] - begin == key.size() + skip && bytes_equal(bytes_.data() + begin + skip, key.data(), key.size()))
      return static_cast<int32_t>(id);
  }
}

std::vector<int32_t> Vocab::distinct_ids() const {
  std::vector<int32_t> ids;
  ids.reserve(size());
  for (size_t id = 0; id < size(); ++id)
    if (!repeated_[id]) ids.push_back(find(token(static_cast<int32_t>(id))));
  return ids;
}

int32_t Vocab::find(std::string_view token) const { return lookup(full_, token, 0); }

int32_t Vocab::require(std::string_view token) const {
  const int32_t id = find(token);
  if (id == kNotFound) fail("{}: the vocabulary has no {} token", name_, token);
  return id;
}
int32_t Vocab::find_continuation(std::string_view rest) const { return lookup(continuation_, rest, 2); }

int32_t Vocab::require_unk() const {
  int32_t id = find("[UNK]");
  if (id == kNotFound) fail("{}: the vocabulary has no [UNK] token (encoding needs one)", name_);
  return id;
}

}  // namespace bk
