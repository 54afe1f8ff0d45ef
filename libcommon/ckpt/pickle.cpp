#include "ckpt/pickle.h"

#include "ckpt/byte_cursor.h"
#include "ckpt/stored_zip.h"
#include "util/printable.h"

#include <fmt/format.h>

#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

namespace bk {

using Kind = PickleValue::Kind;

const PickleValue* Unpickled::entry(const PickleValue& dict, std::string_view key) const {
  if (dict.kind != Kind::dict) return nullptr;
  const auto& kv = items(dict);
  for (size_t i = 0; i + 1 < kv.size(); i += 2)
    if (at(kv[i]).kind == Kind::string && text(at(kv[i])) == key) return &at(kv[i + 1]);
  return nullptr;
}

namespace {

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

// What the machine holds, in bytes, as charged: a value, a memo entry, a stack slot, a string's or list's bytes.
constexpr uint64_t kMemoEntryBytes = 32, kPartBytes = 32;

class Unpickler {
 public:
  Unpickler(std::string_view bytes, std::string where, uint64_t memory_limit)
      : in_{bytes, std::move(where)}, memory_limit_(memory_limit) {}

  Unpickled run() {
    while (true) {
      if (in_.done()) in_.bad("the pickle ends without STOP");
      const auto op = static_cast<uint8_t>(in_.take(1)[0]);
      if (op == '.') {
        if (stack_.size() != 1) in_.bad("STOP with an unbalanced stack");
        out_.root = stack_.back();
        return std::move(out_);
      }
      step(op);
    }
  }

 private:
  void charge(uint64_t bytes) {
    used_ += bytes;
    if (used_ > memory_limit_)
      in_.bad(fmt::format("the pickle builds more than {} MB of objects, far more than a checkpoint of this size "
                          "holds", memory_limit_ >> 20));
  }
  PickleId make(Kind kind) {
    if (out_.values.size() >= std::numeric_limits<PickleId>::max()) in_.bad("too many objects");
    charge(sizeof(PickleValue));
    PickleValue v;
    v.kind = kind;
    if (kind == Kind::list || kind == Kind::tuple || kind == Kind::dict) {
      charge(kPartBytes);
      v.part = static_cast<uint32_t>(out_.children.size());
      out_.children.emplace_back();
    } else if (kind == Kind::string || kind == Kind::bytes || kind == Kind::global || kind == Kind::storage) {
      charge(kPartBytes);
      v.part = static_cast<uint32_t>(out_.texts.size());
      out_.texts.emplace_back();
    }
    out_.values.push_back(v);
    return static_cast<PickleId>(out_.values.size() - 1);
  }
  PickleValue& value(PickleId id) { return out_.values[id]; }
  std::string& text_of(PickleId id) { return out_.texts[value(id).part]; }
  std::vector<PickleId>& items_of(PickleId id) { return out_.children[value(id).part]; }
  void add_items(PickleId id, const std::vector<PickleId>& items) {
    charge(items.size() * sizeof(PickleId));
    auto& list = items_of(id);
    list.insert(list.end(), items.begin(), items.end());
  }

  uint64_t read_le(int width) { return little_endian(in_.take(static_cast<uint64_t>(width)), 0, width); }
  std::string line() {
    std::string s;
    for (char c; (c = in_.take(1)[0]) != '\n';) {
      charge(1);
      s += c;
    }
    return s;
  }
  PickleId pop() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) in_.bad("an opcode needs more values than the stack has");
    const PickleId v = stack_.back();
    stack_.pop_back();
    return v;
  }
  PickleId top() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) in_.bad("an opcode needs a value on an empty stack");
    return stack_.back();
  }
  std::vector<PickleId> pop_mark() {
    if (marks_.empty()) in_.bad("no MARK to pop to");
    std::vector<PickleId> items(stack_.begin() + static_cast<std::ptrdiff_t>(marks_.back()), stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return items;
  }
  void push(PickleId v) {
    stack_.push_back(v);
    if (stack_.size() > stack_peak_) {
      charge(sizeof(PickleId));
      stack_peak_ = stack_.size();
    }
  }
  void mark() {
    marks_.push_back(stack_.size());
    if (marks_.size() > marks_peak_) {
      charge(sizeof(size_t));
      marks_peak_ = marks_.size();
    }
  }
  void memoize(uint64_t key) {
    auto [it, added] = memo_.try_emplace(key, top());
    if (added) charge(kMemoEntryBytes);
    else it->second = top();
  }
  void push_string(Kind kind, uint64_t length) {
    const std::string_view bytes = in_.take(length);
    const PickleId v = make(kind);
    charge(bytes.size());
    text_of(v) = std::string(bytes);
    push(v);
  }
  void push_int(int64_t i) {
    const PickleId v = make(Kind::integer);
    value(v).integer = i;
    push(v);
  }
  PickleId tuple(const std::vector<PickleId>& items) {
    const PickleId v = make(Kind::tuple);
    add_items(v, items);
    return v;
  }
  void set_items(PickleId dict, const std::vector<PickleId>& items) {
    if (items.size() % 2) in_.bad("SETITEMS with an odd number of values");
    if (value(dict).kind == Kind::dict) add_items(dict, items);  // an object's state: not needed
  }
  void append(PickleId list, const std::vector<PickleId>& items) {
    if (value(list).kind == Kind::list) add_items(list, items);
  }
  std::string printable(PickleId v) { return printable_excerpt(text_of(v)); }
  PickleId rebuild_tensor(const std::vector<PickleId>& a);
  PickleId reduce(PickleId callable, PickleId args);
  PickleId storage(PickleId id);
  void step(uint8_t op);
  void step_int(uint8_t op);

  ByteCursor in_;
  Unpickled out_;
  std::vector<PickleId> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, PickleId> memo_;
  uint64_t memory_limit_, used_ = 0;
  size_t stack_peak_ = 0, marks_peak_ = 0;
};

// _rebuild_tensor_v2(storage, storage_offset, size, stride, ...).
PickleId Unpickler::rebuild_tensor(const std::vector<PickleId>& a) {
  if (a.size() < 4 || value(a[0]).kind != Kind::storage || value(a[1]).kind != Kind::integer ||
      value(a[2]).kind != Kind::tuple || value(a[3]).kind != Kind::tuple || items_of(a[2]).size() != items_of(a[3]).size())
    in_.bad("a tensor rebuilt from arguments other than (storage, offset, size, stride, ...)");
  PickledTensor t;
  t.storage = a[0];
  t.offset = value(a[1]).integer;
  for (size_t d = 0; d < items_of(a[2]).size(); ++d) {
    const PickleId size = items_of(a[2])[d], stride = items_of(a[3])[d];
    if (value(size).kind != Kind::integer || value(stride).kind != Kind::integer)
      in_.bad("a tensor size or stride that is not an integer");
    t.sizes.push_back(value(size).integer);
    t.strides.push_back(value(stride).integer);
  }
  charge(kPartBytes + 2 * sizeof(int64_t) * t.sizes.size());
  const PickleId v = make(Kind::tensor);
  value(v).part = static_cast<uint32_t>(out_.tensors.size());
  out_.tensors.push_back(std::move(t));
  return v;
}

PickleId Unpickler::reduce(PickleId callable, PickleId args) {
  const std::string name = value(callable).kind == Kind::global ? text_of(callable) : "";
  // By reference, never copied: a tuple memoised once may be an argument a million times. Every branch below
  // reads `a` before it makes a value (which may move the children it lies in).
  static const std::vector<PickleId> kNone;
  const std::vector<PickleId>& a = value(args).kind == Kind::tuple ? items_of(args) : kNone;
  if (name == "collections.OrderedDict" || name == "builtins.dict") return make(Kind::dict);
  if (name == "torch._utils._rebuild_tensor_v2" || name == "torch._utils._rebuild_tensor") return rebuild_tensor(a);
  // nn.Parameter(tensor, requires_grad, hooks[, state]): the tensor itself.
  if ((name == "torch._utils._rebuild_parameter" || name == "torch._utils._rebuild_parameter_with_state") &&
      !a.empty() && value(a[0]).kind == Kind::tensor)
    return a[0];
  return make(Kind::object);  // anything else: kept as an opaque value
}

// BINPERSID's id: ('storage', torch.FloatStorage, key, location, numel).
PickleId Unpickler::storage(PickleId id) {
  if (value(id).kind != Kind::tuple || items_of(id).size() < 3 || value(items_of(id)[1]).kind != Kind::global ||
      value(items_of(id)[2]).kind != Kind::string)
    in_.bad("a persistent id that is not a storage");
  const PickleId type = items_of(id)[1], key = items_of(id)[2];
  const auto dtype = storage_dtype(text_of(type));
  if (!dtype) in_.bad(fmt::format("storage type {} is not one bertkit reads", printable(type)));
  const PickleId v = make(Kind::storage);
  value(v).dtype = *dtype;
  text_of(v) = text_of(key);
  charge(text_of(v).size());
  return v;
}

void Unpickler::step_int(uint8_t op) {
  switch (op) {
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
    case 0x88: case 0x89: {                                        // NEWTRUE, NEWFALSE
      const PickleId v = make(Kind::boolean);
      value(v).integer = op == 0x88;
      push(v);
      break;
    }
    case 'G': {                                                    // BINFLOAT: big-endian double
      uint64_t bits = 0;
      for (char c : in_.take(8)) bits = (bits << 8) | static_cast<uint8_t>(c);
      const PickleId v = make(Kind::real);
      std::memcpy(&value(v).real, &bits, 8);
      push(v);
      break;
    }
  }
}

void Unpickler::step(uint8_t op) {
  switch (op) {
    case 0x80: in_.take(1); break;                      // PROTO
    case 0x95: in_.take(8); break;                      // FRAME
    case '(': mark(); break;                            // MARK
    case '0': pop(); break;                             // POP
    case '1': pop_mark(); break;                        // POP_MARK
    case '2': push(top()); break;                       // DUP
    case 'N': push(make(Kind::none)); break;
    case 'J': case 'K': case 'M': case 0x8a: case 0x88: case 0x89: case 'G': step_int(op); break;
    case 'X': push_string(Kind::string, read_le(4)); break;     // BINUNICODE
    case 0x8c: push_string(Kind::string, read_le(1)); break;    // SHORT_BINUNICODE
    case 0x8d: push_string(Kind::string, read_le(8)); break;    // BINUNICODE8
    case 'T': push_string(Kind::string, read_le(4)); break;     // BINSTRING
    case 'U': push_string(Kind::string, read_le(1)); break;     // SHORT_BINSTRING
    case 'B': push_string(Kind::bytes, read_le(4)); break;      // BINBYTES
    case 'C': push_string(Kind::bytes, read_le(1)); break;      // SHORT_BINBYTES
    case 0x8e: push_string(Kind::bytes, read_le(8)); break;     // BINBYTES8
    case ']': push(make(Kind::list)); break;                    // EMPTY_LIST
    case '}': push(make(Kind::dict)); break;                    // EMPTY_DICT
    case ')': push(tuple({})); break;                           // EMPTY_TUPLE
    case 'l': { auto items = pop_mark(); const PickleId v = make(Kind::list); add_items(v, items); push(v); break; }
    case 'd': { auto items = pop_mark(); const PickleId v = make(Kind::dict); set_items(v, items); push(v); break; }
    case 't': push(tuple(pop_mark())); break;                   // TUPLE
    case 0x85: { const PickleId a = pop(); push(tuple({a})); break; }  // TUPLE1
    case 0x86: { const PickleId b = pop(), a = pop(); push(tuple({a, b})); break; }  // TUPLE2
    case 0x87: { const PickleId c = pop(), b = pop(), a = pop(); push(tuple({a, b, c})); break; }  // TUPLE3
    case 'a': { const PickleId v = pop(); append(top(), {v}); break; }  // APPEND
    case 'e': { auto items = pop_mark(); append(top(), items); break; }  // APPENDS
    case 's': { const PickleId v = pop(), k = pop(); set_items(top(), {k, v}); break; }  // SETITEM
    case 'u': { auto items = pop_mark(); set_items(top(), items); break; }  // SETITEMS
    case 'q': memoize(read_le(1)); break;                       // BINPUT
    case 'r': memoize(read_le(4)); break;                       // LONG_BINPUT
    case 0x94: memoize(memo_.size()); break;                    // MEMOIZE
    case 'h': case 'j': {                                       // BINGET, LONG_BINGET
      auto it = memo_.find(read_le(op == 'h' ? 1 : 4));
      if (it == memo_.end()) in_.bad("a memo entry read before it was written");
      push(it->second);
      break;
    }
    case 'c': {                                                 // GLOBAL
      std::string name = line() + ".";
      name += line();
      const PickleId v = make(Kind::global);
      text_of(v) = std::move(name);
      push(v);
      break;
    }
    case 0x93: {                                                // STACK_GLOBAL
      const PickleId name = pop(), module = pop();
      if (value(name).kind != Kind::string || value(module).kind != Kind::string)
        in_.bad("STACK_GLOBAL of values that are not strings");
      const PickleId v = make(Kind::global);
      text_of(v) = text_of(module) + "." + text_of(name);
      charge(text_of(v).size());
      push(v);
      break;
    }
    case 'R': { const PickleId args = pop(), callable = pop(); push(reduce(callable, args)); break; }  // REDUCE
    case 0x81: pop(); pop(); push(make(Kind::object)); break;  // NEWOBJ (cls, args): opaque
    case 'b': pop(); break;  // BUILD: an object's state (an OrderedDict's _metadata); the object stays as it is
    case 'Q': push(storage(pop())); break;  // BINPERSID
    default: in_.bad(fmt::format("pickle opcode 0x{:02x} is not one a torch.save file holds", op));
  }
}

}  // namespace

Unpickled unpickle(std::string_view bytes, const std::string& where, uint64_t memory_limit) {
  return Unpickler(bytes, where, memory_limit).run();
}

}  // namespace bk
