#include "ckpt/torch_save.h"

#include "ckpt/byte_cursor.h"
#include "io/input.h"
#include "util/error.h"

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <memory>
#include <optional>

namespace bk {

namespace {

uint64_t le(std::string_view bytes, size_t at, int width) {
  uint64_t v = 0;
  for (int i = width - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(bytes[at + static_cast<size_t>(i)]);
  return v;
}

// --- the zip container: stored entries only (torch.save never compresses), zip64 sizes and offsets ---------------

struct ZipEntry {
  uint64_t offset = 0, size = 0;  // of the data
};

std::map<std::string, ZipEntry> read_zip_directory(std::string_view file, const std::string& path) {
  auto need = [&](bool ok, std::string_view what) {
    if (!ok) fail("{}: not a readable torch.save zip archive: {}", path, what);
  };
  need(file.size() >= 22, "shorter than a zip directory");
  size_t eocd = std::string_view::npos;
  for (size_t at = file.size() - 22;; --at) {
    if (le(file, at, 4) == 0x06054b50) {
      eocd = at;
      break;
    }
    if (at == 0 || file.size() - at > 65557) break;
  }
  need(eocd != std::string_view::npos, "no end-of-directory record");
  uint64_t count = le(file, eocd + 10, 2), dir_size = le(file, eocd + 12, 4), dir_offset = le(file, eocd + 16, 4);
  if (dir_offset == 0xffffffff || count == 0xffff) {  // zip64: the locator sits just before the record
    need(eocd >= 20 && le(file, eocd - 20, 4) == 0x07064b50, "zip64 sizes without a zip64 locator");
    const uint64_t record = le(file, eocd - 20 + 8, 8);
    need(record + 56 <= file.size() && le(file, record, 4) == 0x06064b50, "a zip64 locator pointing nowhere");
    count = le(file, record + 32, 8);
    dir_size = le(file, record + 40, 8);
    dir_offset = le(file, record + 48, 8);
  }
  need(dir_offset <= file.size() && dir_size <= file.size() - dir_offset, "a directory beyond the end of the file");
  std::map<std::string, ZipEntry> entries;
  size_t at = dir_offset;
  for (uint64_t i = 0; i < count; ++i) {
    need(at + 46 <= file.size() && le(file, at, 4) == 0x02014b50, "a damaged directory entry");
    const uint64_t method = le(file, at + 10, 2), name_length = le(file, at + 28, 2), extra_length = le(file, at + 30, 2);
    const uint64_t comment_length = le(file, at + 32, 2);
    uint64_t size = le(file, at + 24, 4), compressed = le(file, at + 20, 4), local = le(file, at + 42, 4);
    need(at + 46 + name_length + extra_length <= file.size(), "a directory entry beyond the end of the file");
    std::string name(file.substr(at + 46, name_length));
    // The zip64 extra field holds, in this order, the 32-bit fields that overflowed.
    for (size_t x = at + 46 + name_length; x + 4 <= at + 46 + name_length + extra_length;) {
      const uint64_t id = le(file, x, 2), length = le(file, x + 2, 2);
      size_t field = x + 4;
      if (id == 1) {
        for (uint64_t* value : {&size, &compressed, &local})
          if (*value == 0xffffffff && field + 8 <= x + 4 + length) {
            *value = le(file, field, 8);
            field += 8;
          }
      }
      x += 4 + length;
    }
    need(method == 0, fmt::format("entry {} is compressed (method {}); torch.save stores entries", name, method));
    need(size == compressed, fmt::format("entry {} has differing sizes", name));
    need(local + 30 <= file.size() && le(file, local, 4) == 0x04034b50, fmt::format("entry {}: no local header", name));
    const uint64_t data = local + 30 + le(file, local + 26, 2) + le(file, local + 28, 2);
    need(data <= file.size() && size <= file.size() - data, fmt::format("entry {} runs past the end", name));
    entries[name] = {data, size};
    at += 46 + name_length + extra_length + comment_length;
  }
  return entries;
}

// --- the pickle: the opcodes of protocols 2 to 4 that torch.save and the objects beside a state dict use ---------

struct Value;
using ValuePtr = std::shared_ptr<Value>;

struct Value {
  enum class Kind { none, boolean, integer, real, string, bytes, list, tuple, dict, global, storage, tensor, object };
  Kind kind = Kind::none;
  int64_t integer = 0;
  double real = 0;
  std::string text;                                  // string, bytes, a global's "module.name", a storage's key
  std::vector<ValuePtr> items;                       // list, tuple; a tensor's [storage]
  std::vector<std::pair<ValuePtr, ValuePtr>> entries;  // dict, in insertion order
  StDtype dtype = StDtype::F32;                      // storage
  int64_t offset = 0;                                // tensor: in elements of its storage
  std::vector<int64_t> sizes, strides;               // tensor
};

ValuePtr make(Value::Kind kind) {
  auto v = std::make_shared<Value>();
  v->kind = kind;
  return v;
}

// torch.FloatStorage & co. (typed storages are what torch.save writes for every dtype).
std::optional<StDtype> storage_dtype(const std::string& global) {
  static const std::map<std::string, StDtype> kTypes = {
      {"torch.FloatStorage", StDtype::F32},    {"torch.HalfStorage", StDtype::F16},  {"torch.BFloat16Storage", StDtype::BF16},
      {"torch.DoubleStorage", StDtype::F64},   {"torch.LongStorage", StDtype::I64},  {"torch.IntStorage", StDtype::I32},
      {"torch.ShortStorage", StDtype::I16},    {"torch.CharStorage", StDtype::I8},   {"torch.ByteStorage", StDtype::U8},
      {"torch.BoolStorage", StDtype::BOOL}};
  auto it = kTypes.find(global);
  if (it == kTypes.end()) return std::nullopt;
  return it->second;
}

class Unpickler {
 public:
  Unpickler(std::string_view bytes, std::string where) : in_{bytes, std::move(where)} {}

  ValuePtr run() {
    while (true) {
      if (in_.done()) in_.bad("the pickle ends without STOP");
      const auto op = static_cast<uint8_t>(in_.take(1)[0]);
      if (op == '.') {
        if (stack_.size() != 1) in_.bad("STOP with an unbalanced stack");
        return stack_.back();
      }
      step(op);
    }
  }

 private:
  uint64_t read_le(int width) { return le(in_.take(static_cast<uint64_t>(width)), 0, width); }
  std::string line() {
    std::string s;
    for (char c; (c = in_.take(1)[0]) != '\n';) s += c;
    return s;
  }
  ValuePtr pop() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) in_.bad("an opcode needs more values than the stack has");
    ValuePtr v = stack_.back();
    stack_.pop_back();
    return v;
  }
  ValuePtr& top() {
    if (stack_.empty()) in_.bad("an opcode needs a value on an empty stack");
    return stack_.back();
  }
  std::vector<ValuePtr> pop_mark() {
    if (marks_.empty()) in_.bad("no MARK to pop to");
    std::vector<ValuePtr> items(stack_.begin() + static_cast<std::ptrdiff_t>(marks_.back()), stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return items;
  }
  void push(ValuePtr v) { stack_.push_back(std::move(v)); }
  void push_string(Value::Kind kind, uint64_t length) {
    auto v = make(kind);
    v->text = std::string(in_.take(length));
    push(v);
  }
  void push_int(int64_t i) {
    auto v = make(Value::Kind::integer);
    v->integer = i;
    push(v);
  }
  ValuePtr tuple(std::vector<ValuePtr> items) {
    auto v = make(Value::Kind::tuple);
    v->items = std::move(items);
    return v;
  }
  void set_items(ValuePtr& dict, std::vector<ValuePtr> items) {
    if (items.size() % 2) in_.bad("SETITEMS with an odd number of values");
    if (dict->kind != Value::Kind::dict) return;  // an object's state: not needed
    for (size_t i = 0; i < items.size(); i += 2) dict->entries.emplace_back(items[i], items[i + 1]);
  }
  void append(ValuePtr& list, std::vector<ValuePtr> items) {
    if (list->kind == Value::Kind::list) list->items.insert(list->items.end(), items.begin(), items.end());
  }
  ValuePtr reduce(const ValuePtr& callable, const ValuePtr& args);
  void step(uint8_t op);

  ByteCursor in_;
  std::vector<ValuePtr> stack_;
  std::vector<size_t> marks_;
  std::map<uint64_t, ValuePtr> memo_;
};

ValuePtr Unpickler::reduce(const ValuePtr& callable, const ValuePtr& args) {
  const std::string name = callable->kind == Value::Kind::global ? callable->text : "";
  const auto& a = args->items;
  if (name == "collections.OrderedDict" || name == "builtins.dict") return make(Value::Kind::dict);
  if (name == "torch._utils._rebuild_tensor_v2" || name == "torch._utils._rebuild_tensor") {
    if (a.size() < 4 || a[0]->kind != Value::Kind::storage || a[1]->kind != Value::Kind::integer ||
        a[2]->kind != Value::Kind::tuple || a[3]->kind != Value::Kind::tuple || a[2]->items.size() != a[3]->items.size())
      in_.bad("a tensor rebuilt from arguments other than (storage, offset, size, stride, ...)");
    auto t = make(Value::Kind::tensor);
    t->items = {a[0]};
    t->offset = a[1]->integer;
    for (size_t d = 0; d < a[2]->items.size(); ++d) {
      if (a[2]->items[d]->kind != Value::Kind::integer || a[3]->items[d]->kind != Value::Kind::integer)
        in_.bad("a tensor size or stride that is not an integer");
      t->sizes.push_back(a[2]->items[d]->integer);
      t->strides.push_back(a[3]->items[d]->integer);
    }
    return t;
  }
  // nn.Parameter(tensor, requires_grad, hooks[, state]): the tensor itself.
  if ((name == "torch._utils._rebuild_parameter" || name == "torch._utils._rebuild_parameter_with_state") &&
      !a.empty() && a[0]->kind == Value::Kind::tensor)
    return a[0];
  return make(Value::Kind::object);  // anything else: kept as an opaque value
}

void Unpickler::step(uint8_t op) {
  switch (op) {
    case 0x80: in_.take(1); break;                      // PROTO
    case 0x95: in_.take(8); break;                      // FRAME
    case '(': marks_.push_back(stack_.size()); break;   // MARK
    case '0': pop(); break;                             // POP
    case '1': pop_mark(); break;                        // POP_MARK
    case '2': push(top()); break;                       // DUP
    case 'N': push(make(Value::Kind::none)); break;
    case 0x88: case 0x89: {                             // NEWTRUE, NEWFALSE
      auto v = make(Value::Kind::boolean);
      v->integer = op == 0x88;
      push(v);
      break;
    }
    case 'J': push_int(static_cast<int32_t>(read_le(4))); break;  // BININT
    case 'K': push_int(static_cast<int64_t>(read_le(1))); break;  // BININT1
    case 'M': push_int(static_cast<int64_t>(read_le(2))); break;  // BININT2
    case 0x8a: {                                                   // LONG1: little-endian two's complement
      const uint64_t n = read_le(1);
      if (n > 8) in_.bad("an integer wider than 64 bits");
      uint64_t v = n ? read_le(static_cast<int>(n)) : 0;
      if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);
      push_int(static_cast<int64_t>(v));
      break;
    }
    case 'G': {                                                    // BINFLOAT: big-endian double
      const std::string_view b = in_.take(8);
      uint64_t bits = 0;
      for (char c : b) bits = (bits << 8) | static_cast<uint8_t>(c);
      auto v = make(Value::Kind::real);
      std::memcpy(&v->real, &bits, 8);
      push(v);
      break;
    }
    case 'X': push_string(Value::Kind::string, read_le(4)); break;     // BINUNICODE
    case 0x8c: push_string(Value::Kind::string, read_le(1)); break;    // SHORT_BINUNICODE
    case 0x8d: push_string(Value::Kind::string, read_le(8)); break;    // BINUNICODE8
    case 'T': push_string(Value::Kind::string, read_le(4)); break;     // BINSTRING
    case 'U': push_string(Value::Kind::string, read_le(1)); break;     // SHORT_BINSTRING
    case 'B': push_string(Value::Kind::bytes, read_le(4)); break;      // BINBYTES
    case 'C': push_string(Value::Kind::bytes, read_le(1)); break;      // SHORT_BINBYTES
    case 0x8e: push_string(Value::Kind::bytes, read_le(8)); break;     // BINBYTES8
    case ']': push(make(Value::Kind::list)); break;                    // EMPTY_LIST
    case '}': push(make(Value::Kind::dict)); break;                    // EMPTY_DICT
    case ')': push(tuple({})); break;                                  // EMPTY_TUPLE
    case 'l': { auto v = make(Value::Kind::list); v->items = pop_mark(); push(v); break; }  // LIST
    case 'd': { auto v = make(Value::Kind::dict); ValuePtr d = v; set_items(d, pop_mark()); push(v); break; }  // DICT
    case 't': push(tuple(pop_mark())); break;                          // TUPLE
    case 0x85: { auto a = pop(); push(tuple({a})); break; }            // TUPLE1
    case 0x86: { auto b = pop(), a = pop(); push(tuple({a, b})); break; }  // TUPLE2
    case 0x87: { auto c = pop(), b = pop(), a = pop(); push(tuple({a, b, c})); break; }  // TUPLE3
    case 'a': { auto v = pop(); append(top(), {v}); break; }           // APPEND
    case 'e': { auto items = pop_mark(); append(top(), std::move(items)); break; }  // APPENDS
    case 's': { auto v = pop(), k = pop(); set_items(top(), {k, v}); break; }       // SETITEM
    case 'u': { auto items = pop_mark(); set_items(top(), std::move(items)); break; }  // SETITEMS
    case 'q': memo_[read_le(1)] = top(); break;                        // BINPUT
    case 'r': memo_[read_le(4)] = top(); break;                        // LONG_BINPUT
    case 0x94: memo_[memo_.size()] = top(); break;                     // MEMOIZE
    case 'h': case 'j': {                                              // BINGET, LONG_BINGET
      auto it = memo_.find(read_le(op == 'h' ? 1 : 4));
      if (it == memo_.end()) in_.bad("a memo entry read before it was written");
      push(it->second);
      break;
    }
    case 'c': {                                                        // GLOBAL
      auto v = make(Value::Kind::global);
      v->text = line();
      v->text += "." + line();
      push(v);
      break;
    }
    case 0x93: {                                                       // STACK_GLOBAL
      auto name = pop(), module = pop();
      auto v = make(Value::Kind::global);
      v->text = module->text + "." + name->text;
      push(v);
      break;
    }
    case 'R': { auto args = pop(), callable = pop(); push(reduce(callable, args)); break; }  // REDUCE
    case 0x81: pop(); pop(); push(make(Value::Kind::object)); break;  // NEWOBJ (cls, args): opaque
    case 'b': pop(); break;  // BUILD: an object's state (an OrderedDict's _metadata); the object stays as it is
    case 'Q': {              // BINPERSID: ('storage', torch.FloatStorage, key, location, numel)
      auto id = pop();
      if (id->kind != Value::Kind::tuple || id->items.size() < 3 || id->items[1]->kind != Value::Kind::global)
        in_.bad("a persistent id that is not a storage");
      auto v = make(Value::Kind::storage);
      const auto dtype = storage_dtype(id->items[1]->text);
      if (!dtype) in_.bad(fmt::format("storage type {} is not one bertkit reads", id->items[1]->text));
      v->dtype = *dtype;
      v->text = id->items[2]->text;
      push(v);
      break;
    }
    default: in_.bad(fmt::format("pickle opcode 0x{:02x} is not one a torch.save file holds", op));
  }
}

const Value* entry_of(const Value& dict, const std::string& key) {
  for (const auto& [k, v] : dict.entries)
    if (k->kind == Value::Kind::string && k->text == key) return v.get();
  return nullptr;
}

// The tensor's elements in row-major order, from its storage's bytes.
std::string tensor_bytes(const Value& t, std::string_view storage, const std::string& what) {
  const size_t element = st_dtype_size(t.items[0]->dtype);
  int64_t count = 1, last = t.offset;
  for (size_t d = 0; d < t.sizes.size(); ++d) {
    if (t.sizes[d] < 0 || t.strides[d] < 0) fail("{}: a negative size or stride", what);
    count *= t.sizes[d];
    if (t.sizes[d] > 0) last += (t.sizes[d] - 1) * t.strides[d];
  }
  if (count > 0 && (t.offset < 0 || static_cast<uint64_t>(last + 1) * element > storage.size()))
    fail("{}: its elements run past its storage of {} bytes", what, storage.size());
  std::string out(static_cast<size_t>(count) * element, '\0');
  std::vector<int64_t> index(t.sizes.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t at = t.offset;
    for (size_t d = 0; d < index.size(); ++d) at += index[d] * t.strides[d];
    std::memcpy(out.data() + static_cast<size_t>(i) * element, storage.data() + static_cast<size_t>(at) * element, element);
    for (size_t d = index.size(); d-- > 0;) {
      if (++index[d] < t.sizes[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

}  // namespace

bool looks_like_torch_save(std::string_view bytes) { return bytes.size() >= 4 && bytes.substr(0, 4) == "PK\x03\x04"; }

std::vector<StTensor> read_torch_save_state_dict(const std::string& path) {
  const std::string file = read_file(path);
  if (!looks_like_torch_save(file))
    fail("{}: not a torch.save zip archive (a file of torch < 1.6, or saved with "
         "_use_new_zipfile_serialization=False, must be saved again)", path);
  const auto entries = read_zip_directory(file, path);
  std::string archive;
  for (const auto& [name, entry] : entries)
    if (name.ends_with("/data.pkl") && name.find('/') == name.size() - 9) archive = name.substr(0, name.size() - 9);
  if (archive.empty()) fail("{}: a zip archive without ARCHIVE/data.pkl: not a torch.save file", path);
  const ZipEntry pickle = entries.at(archive + "/data.pkl");
  const ValuePtr root =
      Unpickler(std::string_view(file).substr(pickle.offset, pickle.size), path + ": " + archive + "/data.pkl").run();
  if (root->kind != Value::Kind::dict) fail("{}: holds no dict of tensors", path);
  const Value* state = root.get();
  for (const char* key : {"model", "state_dict", "module"})
    if (const Value* v = entry_of(*root, key); v != nullptr && v->kind == Value::Kind::dict) {
      state = v;
      break;
    }
  std::vector<StTensor> tensors;
  for (const auto& [key, value] : state->entries) {
    if (key->kind != Value::Kind::string || value->kind != Value::Kind::tensor) continue;
    const StDtype dtype = value->items[0]->dtype;
    if (dtype != StDtype::F32 && dtype != StDtype::F16 && dtype != StDtype::BF16 && dtype != StDtype::F64) continue;
    const std::string what = fmt::format("{}: tensor {}", path, key->text);
    auto it = entries.find(archive + "/data/" + value->items[0]->text);
    if (it == entries.end()) fail("{}: its storage {} is not in the archive", what, value->items[0]->text);
    StTensor t;
    t.name = key->text;
    t.dtype = dtype;
    t.shape = value->sizes;
    t.bytes = tensor_bytes(*value, std::string_view(file).substr(it->second.offset, it->second.size), what);
    tensors.push_back(std::move(t));
  }
  if (tensors.empty()) fail("{}: holds no floating-point tensors: not a model's state dict", path);
  return tensors;
}

}  // namespace bk
