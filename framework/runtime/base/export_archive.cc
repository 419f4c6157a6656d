#include "framework/runtime/base/export_archive.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "core/error.h"

namespace sift {
namespace {

// A little-endian field of `bytes` (a damaged length that points past them: an error).
template <class T>
T le(const std::string& bytes, size_t at) {
  if (at > bytes.size() || sizeof(T) > bytes.size() - at) throw Error("a damaged zip record");
  T v;
  std::memcpy(&v, bytes.data() + at, sizeof(T));
  return v;
}

int64_t element_bytes(const std::string& type) {
  if (type == "Float" || type == "Int") return 4;
  if (type == "Long" || type == "Double") return 8;
  if (type == "BFloat16" || type == "Half" || type == "Short") return 2;
  if (type == "Byte" || type == "Char" || type == "Bool") return 1;
  throw Error(fmt::format("tensors of {} storage are not read here", type));
}

// One value of the pickle machine: only what LibTorch's module writer emits for a module
// whose attributes are tensors (and flags).
struct Value;
using ValuePtr = std::shared_ptr<Value>;
struct Value {
  enum class Kind { none, mark, boolean, integer, real, text, tuple, dict, global, object, tensor };
  Kind kind = Kind::none;
  int64_t integer = 0;
  std::string text, name;                              // text; a global's module and name
  std::vector<ValuePtr> items;                         // tuple; a persistent id's fields
  std::vector<std::pair<ValuePtr, ValuePtr>> entries;  // dict; an object's state
  ArchiveTensor tensor;
};

ValuePtr make(Value::Kind kind) {
  auto v = std::make_shared<Value>();
  v->kind = kind;
  return v;
}

class Unpickler {
 public:
  Unpickler(const std::string& bytes, const std::string& where) : in_(bytes), where_(where) {}
  ValuePtr run();

 private:
  void step(uint8_t op);
  ValuePtr pop();
  Value& push(Value::Kind kind);  // a new value of `kind` on the stack
  std::vector<ValuePtr> pop_to_mark();
  ValuePtr reduce(const ValuePtr& callable, const ValuePtr& args);
  std::string take(size_t n);
  std::string line();
  Error bad(const std::string& what) const {
    return Error(fmt::format("{}: {} (data.pkl)", where_, what));
  }

  const std::string& in_;
  const std::string& where_;
  size_t pos_ = 0;
  std::vector<ValuePtr> stack_;
  std::map<uint32_t, ValuePtr> memo_;
  ValuePtr result_;
};

std::string Unpickler::take(size_t n) {
  if (n > in_.size() - pos_) throw bad("truncated");
  std::string s = in_.substr(pos_, n);
  pos_ += n;
  return s;
}

std::string Unpickler::line() {
  const size_t end = in_.find('\n', pos_);
  if (end == std::string::npos) throw bad("truncated");
  std::string s = in_.substr(pos_, end - pos_);
  pos_ = end + 1;
  return s;
}

ValuePtr Unpickler::pop() {
  if (stack_.empty()) throw bad("stack underflow");
  ValuePtr v = stack_.back();
  stack_.pop_back();
  return v;
}

Value& Unpickler::push(Value::Kind kind) {
  stack_.push_back(make(kind));
  return *stack_.back();
}

std::vector<ValuePtr> Unpickler::pop_to_mark() {
  std::vector<ValuePtr> items;
  while (!stack_.empty() && stack_.back()->kind != Value::Kind::mark) items.push_back(pop());
  if (stack_.empty()) throw bad("no mark");
  stack_.pop_back();
  std::reverse(items.begin(), items.end());
  return items;
}

// torch._utils._rebuild_tensor_v2(storage, offset, shape, stride, ...) and
// collections.OrderedDict(); any other reduction is kept as an opaque object.
ValuePtr Unpickler::reduce(const ValuePtr& callable, const ValuePtr& args) {
  if (callable->kind == Value::Kind::global && callable->name == "_rebuild_tensor_v2") {
    const auto& a = args->items;
    if (a.size() < 4 || a[0]->kind != Value::Kind::tuple || a[0]->items.size() < 3) {
      throw bad("an unexpected tensor record");
    }
    ValuePtr t = make(Value::Kind::tensor);
    const auto& storage = a[0]->items;  // ('storage', torch.FloatStorage, key, device, numel)
    t->tensor.type = storage[1]->name.substr(0, storage[1]->name.size() - 7);  // "Storage"
    t->tensor.storage = "data/" + storage[2]->text;
    t->tensor.offset = a[1]->integer;
    for (const auto& d : a[2]->items) t->tensor.shape.push_back(d->integer);
    for (const auto& d : a[3]->items) t->tensor.stride.push_back(d->integer);
    return t;
  }
  if (callable->kind == Value::Kind::global && callable->name == "OrderedDict") {
    return make(Value::Kind::dict);
  }
  return make(Value::Kind::object);
}

void Unpickler::step(uint8_t op) {
  using K = Value::Kind;
  switch (op) {
    case 0x80:
      take(1);
      break;     // PROTO
    case 'c': {  // GLOBAL
      Value& g = push(K::global);
      g.text = line();
      g.name = line();
      break;
    }
    case 'q':
      memo_[static_cast<uint8_t>(take(1)[0])] = stack_.back();
      break;  // BINPUT
    case 'r':
      memo_[le<uint32_t>(take(4), 0)] = stack_.back();
      break;     // LONG_BINPUT
    case 'h':    // BINGET
    case 'j': {  // LONG_BINGET
      const uint32_t key = op == 'h' ? static_cast<uint8_t>(take(1)[0]) : le<uint32_t>(take(4), 0);
      auto it = memo_.find(key);
      if (it == memo_.end()) throw bad("a missing memo entry");
      stack_.push_back(it->second);
      break;
    }
    case '(':
      push(K::mark);
      break;
    case ')':
      push(K::tuple);
      break;
    case 't': {
      std::vector<ValuePtr> items = pop_to_mark();
      push(K::tuple).items = std::move(items);
      break;
    }
    case 0x85:
    case 0x86:
    case 0x87: {  // TUPLE1..3
      ValuePtr t = make(K::tuple);
      t->items.resize(op - 0x84);
      for (size_t i = t->items.size(); i-- > 0;) t->items[i] = pop();
      stack_.push_back(t);
      break;
    }
    case '}':
      push(K::dict);
      break;
    case 'u': {  // SETITEMS
      const auto items = pop_to_mark();
      if (items.size() % 2 != 0 || stack_.empty()) throw bad("odd dictionary items");
      for (size_t i = 0; i < items.size(); i += 2) {
        stack_.back()->entries.emplace_back(items[i], items[i + 1]);
      }
      break;
    }
    case 's': {  // SETITEM
      ValuePtr value = pop(), key = pop();
      if (stack_.empty()) throw bad("stack underflow");
      stack_.back()->entries.emplace_back(key, value);
      break;
    }
    case 'X':  // BINUNICODE
      push(K::text).text = take(le<uint32_t>(take(4), 0));
      break;
    case 'N':
      push(K::none);
      break;
    case 0x88:
    case 0x89:  // NEWTRUE, NEWFALSE
      push(K::boolean).integer = op == 0x88;
      break;
    case 'K':
    case 'M':
    case 'J': {  // BININT1, BININT2, BININT
      Value& i = push(K::integer);
      if (op == 'K') i.integer = static_cast<uint8_t>(take(1)[0]);
      if (op == 'M') i.integer = le<uint16_t>(take(2), 0);
      if (op == 'J') i.integer = le<int32_t>(take(4), 0);
      break;
    }
    case 0x8a: {  // LONG1: little-endian two's complement
      const auto n = static_cast<uint8_t>(take(1)[0]);
      if (n > 8) throw bad("an integer wider than 64 bits");
      const std::string b = take(n);
      uint64_t u = 0;
      for (size_t k = 0; k < n; ++k)
        u |= static_cast<uint64_t>(static_cast<uint8_t>(b[k])) << (8 * k);
      if (n > 0 && n < 8 && (static_cast<uint8_t>(b[n - 1]) & 0x80)) u |= ~uint64_t{0} << (8 * n);
      push(K::integer).integer = static_cast<int64_t>(u);
      break;
    }
    case 'Q': {  // BINPERSID: the storage's id tuple stands for it
      ValuePtr id = pop();
      if (id->kind != K::tuple) throw bad("a persistent id that is not a tuple");
      stack_.push_back(id);
      break;
    }
    case 'R': {  // REDUCE
      ValuePtr args = pop(), callable = pop();
      stack_.push_back(reduce(callable, args));
      break;
    }
    case 0x81:  // NEWOBJ
      pop();
      pop();
      push(K::object);
      break;
    case 'b': {  // BUILD: the state dict becomes the object's entries
      ValuePtr state = pop();
      if (stack_.empty()) throw bad("stack underflow");
      stack_.back()->entries = state->entries;
      break;
    }
    case '.':
      result_ = pop();
      break;  // STOP
    default:
      throw bad(fmt::format("pickle opcode 0x{:02x} is not read here", op));
  }
}

ValuePtr Unpickler::run() {
  while (!result_) {
    if (pos_ >= in_.size()) throw bad("truncated");
    step(static_cast<uint8_t>(in_[pos_++]));
  }
  return result_;
}

}  // namespace

int64_t ArchiveTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool ArchiveTensor::contiguous() const {
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && stride[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

ExportArchive::ExportArchive(const std::string& path) : path_(path), file_(path, std::ios::binary) {
  if (!file_) throw Error(fmt::format("cannot open {}", path));
  file_.seekg(0, std::ios::end);
  const auto size = static_cast<uint64_t>(file_.tellg());
  const uint64_t tail = std::min<uint64_t>(size, 65536 + 22);
  std::string end(tail, '\0');
  file_.seekg(static_cast<std::streamoff>(size - tail));
  file_.read(end.data(), static_cast<std::streamsize>(tail));
  const size_t eocd = end.rfind(std::string("PK\x05\x06", 4));
  if (eocd == std::string::npos || eocd + 22 > end.size()) {
    throw Error(fmt::format("{} is not a zip archive", path));
  }
  uint64_t count = le<uint16_t>(end, eocd + 10), offset = le<uint32_t>(end, eocd + 16);
  if (offset == 0xFFFFFFFFu && eocd >= 20 && end.compare(eocd - 20, 4, "PK\x06\x07") == 0) {
    const uint64_t zip64 = le<uint64_t>(end, eocd - 20 + 8);  // the zip64 end record
    std::string record(56, '\0');
    file_.seekg(static_cast<std::streamoff>(zip64));
    if (!file_.read(record.data(), 56)) throw Error(fmt::format("{}: a damaged zip end", path));
    count = le<uint64_t>(record, 32);
    offset = le<uint64_t>(record, 48);
  }
  file_.seekg(static_cast<std::streamoff>(offset));
  std::string head(46, '\0');
  for (uint64_t i = 0; i < count; ++i) {
    if (!file_.read(head.data(), 46) || head.compare(0, 4, "PK\x01\x02") != 0) {
      throw Error(fmt::format("{}: a damaged zip directory", path));
    }
    const auto name_len = le<uint16_t>(head, 28), extra_len = le<uint16_t>(head, 30),
               comment_len = le<uint16_t>(head, 32);
    std::string name(name_len, '\0'), extra(extra_len, '\0');
    file_.read(name.data(), name_len);
    file_.read(extra.data(), extra_len);
    file_.seekg(comment_len, std::ios::cur);
    Entry e;
    e.stored = le<uint16_t>(head, 10) == 0;
    e.size = le<uint32_t>(head, 24);
    e.local_header = le<uint32_t>(head, 42);
    // Zip64: the full sizes and offset, in that order, for the fields that overflowed.
    for (size_t at = 0; at + 4 <= extra.size();) {
      const auto id = le<uint16_t>(extra, at), len = le<uint16_t>(extra, at + 2);
      size_t field = at + 4;
      if (id == 1) {
        if (e.size == 0xFFFFFFFFu) {
          e.size = le<uint64_t>(extra, field);
          field += 8;
        }
        if (le<uint32_t>(head, 20) == 0xFFFFFFFFu) field += 8;  // the compressed size
        if (e.local_header == 0xFFFFFFFFu) e.local_header = le<uint64_t>(extra, field);
      }
      at += 4 + len;
    }
    const size_t slash = name.find('/');  // below the archive's top folder
    if (slash != std::string::npos) entries_[name.substr(slash + 1)] = e;
  }
}

bool ExportArchive::has(const std::string& name) const { return entries_.count(name) > 0; }

const ExportArchive::Entry& ExportArchive::entry(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) throw Error(fmt::format("{} has no {}", path_, name));
  if (!it->second.stored) throw Error(fmt::format("{}: {} is compressed", path_, name));
  return it->second;
}

std::string ExportArchive::read(const std::string& name) const {
  std::string bytes(entry(name).size, '\0');
  read_into(name, 0, bytes.size(), bytes.data());
  return bytes;
}

void ExportArchive::read_into(const std::string& name, uint64_t begin, uint64_t n,
                              char* out) const {
  const Entry& e = entry(name);
  if (begin > e.size || n > e.size - begin) {
    throw Error(fmt::format("{}: {} is shorter than its tensor", path_, name));
  }
  std::string local(30, '\0');
  file_.clear();
  file_.seekg(static_cast<std::streamoff>(e.local_header));
  if (!file_.read(local.data(), 30) || local.compare(0, 4, "PK\x03\x04") != 0) {
    throw Error(fmt::format("{}: a damaged zip entry {}", path_, name));
  }
  file_.seekg(
      le<uint16_t>(local, 26) + le<uint16_t>(local, 28) + static_cast<std::streamoff>(begin),
      std::ios::cur);
  if (!file_.read(out, static_cast<std::streamsize>(n))) {
    throw Error(fmt::format("{}: {} is truncated", path_, name));
  }
}

std::map<std::string, ArchiveTensor> ExportArchive::tensors() const {
  const std::string pickle = read("data.pkl");
  const ValuePtr module = Unpickler(pickle, path_).run();
  std::map<std::string, ArchiveTensor> out;
  for (const auto& [key, value] : module->entries) {
    if (value->kind == Value::Kind::tensor) out[key->text] = value->tensor;
  }
  return out;
}

void ExportArchive::read_tensor(const ArchiveTensor& t, void* out, size_t element) const {
  const int64_t size = element_bytes(t.type);
  if (static_cast<int64_t>(element) != size) {
    throw Error(fmt::format("{}: a {} tensor read as {}-byte values", path_, t.type, element));
  }
  if (!t.contiguous()) throw Error(fmt::format("{}: a strided tensor", path_));
  read_into(t.storage, static_cast<uint64_t>(t.offset * size),
            static_cast<uint64_t>(t.numel() * size), static_cast<char*>(out));
}

}  // namespace sift
