#include "ops/core/type.h"

#include <algorithm>

// Note [Axis identity]
// Two axes are equal when they are the same dim, the same size variable
// (by id: each call of a fn gets fresh ids), the same literal, or equal
// groups. A dim and a literal of the same size are *not* equal: `[b 784]`
// does not fit `[b D]`; that is what catches swapped axes. An alias (a
// pattern label bound to an axis) is the axis it names, carrying its written
// name in `label` only so messages and printing use what the user wrote.

namespace ss::types {

Axis Axis::dim(std::string name, int64_t size) {
  Axis a;
  a.kind = Kind::Dim;
  a.name = std::move(name);
  a.size = size;
  return a;
}

Axis Axis::lit(int64_t n) {
  Axis a;
  a.kind = Kind::Lit;
  a.size = n;
  return a;
}

Axis Axis::variable(uint32_t id, std::string name) {
  Axis a;
  a.kind = Kind::Var;
  a.var = id;
  a.name = std::move(name);
  return a;
}

Axis Axis::group(std::vector<Axis> items) {
  Axis a;
  a.kind = Kind::Group;
  a.items = std::move(items);
  int64_t p = 1;
  for (const Axis& i : a.items) {
    auto s = i.static_size();
    if (!s) {
      p = -1;
      break;
    }
    p *= *s;
  }
  a.size = p;
  return a;
}

namespace {
// [n] over [split]'s blocks (Note [A split axis is sized as its block]):
// none when a size is unknown or the blocks do not divide (the call that
// cuts it is E2003).
std::optional<int64_t> block_of(std::optional<int64_t> n,
                                const MeshSplit& split) {
  if (!n || split.empty()) return n;
  auto k = split.ways();
  if (!k || *k <= 0 || *n % *k != 0) return std::nullopt;
  return *n / *k;
}
}  // namespace

std::optional<int64_t> Axis::static_size() const {
  return sized(true);
}

std::optional<int64_t> Axis::whole_size() const {
  return sized(false);
}

std::optional<int64_t> Axis::sized(bool blocks) const {
  std::optional<int64_t> n;
  switch (kind) {
    case Kind::Dim:
    case Kind::Lit:
      if (size >= 0) n = size;
      break;
    case Kind::Group: {
      int64_t p = 1;
      for (const Axis& i : items) {
        auto s = i.sized(blocks);
        if (!s) return std::nullopt;
        p *= *s;
      }
      n = p;
      break;
    }
    case Kind::Var:
      break;
  }
  return blocks ? block_of(n, split) : n;
}

MeshSplit::MeshSplit(std::vector<std::string> a, std::vector<int64_t> s)
    : axes(std::move(a)), sizes(std::move(s)) {
  sizes.resize(axes.size(), -1);
}

void MeshSplit::push_back(std::string axis, int64_t size) {
  axes.push_back(std::move(axis));
  sizes.push_back(size);
}

void MeshSplit::pop_back() {
  axes.pop_back();
  sizes.pop_back();
}

void MeshSplit::clear() {
  axes.clear();
  sizes.clear();
}

std::optional<int64_t> MeshSplit::ways() const {
  int64_t p = 1;
  for (int64_t s : sizes) {
    if (s <= 0) return std::nullopt;
    p *= s;
  }
  return p;
}

bool operator==(const MeshSplit& a, const MeshSplit& b) {
  return a.axes == b.axes;
}

namespace {
std::string split_suffix(const MeshSplit& split) {
  if (split.empty()) return "";
  if (split.size() == 1) return "/" + split[0];
  std::string s = "/(";
  for (size_t i = 0; i < split.size(); ++i) s += (i ? " " : "") + split[i];
  return s + ")";
}
}  // namespace

std::string Axis::str() const {
  std::string s;
  if (!label.empty()) {
    s = label;
  } else {
    switch (kind) {
      case Kind::Dim:
      case Kind::Var:
        s = name;
        break;
      case Kind::Lit:
        s = std::to_string(size);
        break;
      case Kind::Group:
        s = "(";
        for (size_t i = 0; i < items.size(); ++i)
          s += (i ? " " : "") + items[i].str();
        s += ")";
        break;
    }
  }
  return s + split_suffix(split);
}

std::string Axis::str_sized() const {
  auto n = static_size();
  if (kind == Kind::Lit || !n) return str();
  return str() + " (" + std::to_string(*n) + ")";
}

bool operator==(const Axis& a, const Axis& b) {
  if (a.kind != b.kind || a.split != b.split) return false;
  switch (a.kind) {
    case Axis::Kind::Dim:
      return a.name == b.name;
    case Axis::Kind::Var:
      return a.var == b.var;
    case Axis::Kind::Lit:
      return a.size == b.size;
    case Axis::Kind::Group:
      return a.items == b.items;
  }
  return false;
}

std::string shape_str(const std::vector<Axis>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? " " : "") + shape[i].str();
  return s + "]";
}

PrintedApart::PrintedApart(const std::vector<Axis>& as,
                           const std::vector<Axis>& bs) {
  // Note [Two sizes of one name]: b's variables that print as one of a's
  // different variables does.
  for (const Axis& y : bs) {
    if (y.kind != Axis::Kind::Var) continue;
    for (const Axis& x : as) {
      if (x.kind != Axis::Kind::Var || x.str() != y.str() || x == y) continue;
      if (!primed(y)) renamed_.push_back({x, y});
      break;
    }
  }
  a = shape_str(as);
  b = "[";
  for (size_t i = 0; i < bs.size(); ++i) {
    b += (i ? " " : "") + (primed(bs[i]) ? bs[i].str() + "'" : bs[i].str());
  }
  b += "]";
}

std::string PrintedApart::axis_a(const Axis& x) const {
  return x.str_sized();
}

bool PrintedApart::primed(const Axis& y) const {
  for (const auto& [x, renamed] : renamed_)
    if (renamed == y) return true;
  return false;
}

std::string PrintedApart::axis_b(const Axis& y) const {
  return primed(y) ? y.str() + "'" : y.str_sized();
}

std::vector<std::pair<std::string, diag::Span>> PrintedApart::notes() const {
  std::vector<std::pair<std::string, diag::Span>> out;
  auto say = [&](const Axis& v, const std::string& shown) {
    if (v.made_by.empty()) return;
    out.push_back({"`" + shown + "` is the size `" + v.made_by + "` gives here",
                   v.made_at});
  };
  for (const auto& [x, y] : renamed_) {
    say(x, x.str());
    say(y, y.str() + "'");
  }
  return out;
}

Type Type::of(Kind k) {
  Type t;
  t.kind = k;
  return t;
}

Type Type::tensor(std::vector<Axis> shape, DType dtype) {
  Type t;
  t.kind = Kind::Tensor;
  t.shape = std::move(shape);
  t.dtype = dtype;
  return t;
}

Type Type::tuple(std::vector<Type> elems) {
  Type t;
  t.kind = Kind::Tuple;
  t.elems = std::move(elems);
  return t;
}

Type Type::list(Type elem) {
  Type t;
  t.kind = Kind::List;
  t.elems.push_back(std::move(elem));
  return t;
}

const std::vector<OptimNames>& optim_names() {
  static const std::vector<OptimNames> all = {
      {OptimKind::SGD, "sgd", "SGD"},
      {OptimKind::AdamW, "adamw", "AdamW"},
      {OptimKind::Adam, "adam", "Adam"},
      {OptimKind::RMSprop, "rmsprop", "RMSprop"},
      {OptimKind::Adagrad, "adagrad", "Adagrad"},
      {OptimKind::Adadelta, "adadelta", "Adadelta"},
      {OptimKind::Lion, "lion", "Lion"}};
  return all;
}

const OptimNames& optim_names(OptimKind k) {
  return optim_names().at(static_cast<size_t>(k));
}

const OptimNames* optim_named(std::string_view name, bool type) {
  for (const OptimNames& o : optim_names())
    if (name == (type ? o.type : o.fn)) return &o;
  return nullptr;
}

namespace {
std::string model_str(const Type& t) {
  std::string s;
  if (!t.stack.empty()) s = shape_str(t.stack) + " ";
  s += t.model ? t.model->name : "?";
  if (!t.model_args.empty()) {
    s += "[";
    for (size_t i = 0; i < t.model_args.size(); ++i)
      s += (i ? " " : "") + t.model_args[i].str();
    s += "]";
  }
  s += split_suffix(t.model_split);
  if (!t.field_splits.empty()) {
    s += "{";
    for (size_t i = 0; i < t.field_splits.size(); ++i)
      s += (i ? ", " : "") + t.field_splits[i].first +
           split_suffix(t.field_splits[i].second);
    s += "}";
  }
  if (t.model_dtype != DType::F32)
    s += std::string(" ") + dtype_name(t.model_dtype);
  return s;
}
}  // namespace

std::string Type::str() const {
  switch (kind) {
    case Kind::Error:
      return "<error>";
    case Kind::Unit:
      return "()";
    case Kind::Int:
      return "int";
    case Kind::Float:
      return "float";
    case Kind::Str:
      return "str";
    case Kind::Bool:
      return "bool (host)";
    case Kind::Tensor: {
      std::string s;
      if (shape.empty())
        s = dtype_name(dtype);
      else
        s = shape_str(shape) +
            (dtype == DType::F32 ? "" : std::string(" ") + dtype_name(dtype));
      if (!varying.empty()) {
        s += "{";
        for (size_t i = 0; i < varying.size(); ++i)
          s += (i ? " " : "") + varying[i];
        s += "}";
      }
      return s;
    }
    case Kind::Tuple: {
      std::string s = "(";
      for (size_t i = 0; i < elems.size(); ++i)
        s += (i ? ", " : "") + elems[i].str();
      if (elems.size() == 1) s += ",";
      return s + ")";
    }
    case Kind::List:
      return "list[" + (elems.empty() ? std::string("?") : elems[0].str()) +
             "]";
    case Kind::Fn:
      return remat ? "fn (remat " + fn_name + ")" : "fn " + fn_name;
    case Kind::Record:
      return record ? record->name : "?";
    case Kind::Batch:
      return shape_str(shape) + " " + (record ? record->name : "?");
    case Kind::Model:
      return model_str(*this);
    case Kind::Optim:
    case Kind::Grads: {
      std::string s =
          kind == Kind::Grads ? "Grads" : optim_names(optim_kind).type;
      s += "[" + (model ? model->name : std::string("?"));
      if (model_dtype != DType::F32)
        s += std::string(" ") + dtype_name(model_dtype);
      return s + "]";
    }
    case Kind::Mode:
      return "Mode";
    case Kind::Logs:
      return "Logs";
    case Kind::Dataset:
      return "Dataset[" + (record ? record->name : std::string("?")) + "]";
    case Kind::Batches:
      return "Batches[" + (record ? record->name : std::string("?")) + "]";
    case Kind::Sink:
      return "Sink";
    case Kind::AxisArg:
      return "Axis[" + (shape.empty() ? std::string("?") : shape[0].str()) +
             "]";
    case Kind::TypeValue:
      return "type " + (elems.empty() ? std::string("?") : elems[0].str());
    case Kind::Init:
      return "initialiser";
  }
  return "?";
}

const FieldInfo* RecordInfo::field(const std::string& n) const {
  for (const FieldInfo& f : fields)
    if (f.name == n) return &f;
  return nullptr;
}

const FieldInfo* ModelInfo::field(const std::string& n) const {
  for (const FieldInfo& f : fields)
    if (f.name == n) return &f;
  return nullptr;
}

Axis substitute_dims(const Axis& a,
                     const std::vector<std::string>& names,
                     const std::vector<Axis>& values) {
  if (a.kind == Axis::Kind::Dim) {
    for (size_t i = 0; i < names.size() && i < values.size(); ++i)
      if (names[i] == a.name) {
        Axis r = values[i];
        if (!a.split.empty()) r.split = a.split;
        return r;
      }
    return a;
  }
  if (a.kind == Axis::Kind::Group) {
    std::vector<Axis> items;
    for (const Axis& i : a.items)
      items.push_back(substitute_dims(i, names, values));
    Axis g = Axis::group(std::move(items));
    g.split = a.split;
    g.label = a.label;
    return g;
  }
  return a;
}

MeshSplit field_split(const Type& m, const std::string& name) {
  if (m.field_splits.empty()) return m.model_split;
  for (const auto& [field, s] : m.field_splits)
    if (field == name) return s;
  return {};
}

Type model_field_type(const Type& m, const FieldInfo& f) {
  Type t = f.type;
  const auto& names = m.model->dim_params;
  for (Axis& a : t.shape) a = substitute_dims(a, names, m.model_args);
  for (Axis& a : t.model_args) a = substitute_dims(a, names, m.model_args);
  for (Axis& a : t.stack) a = substitute_dims(a, names, m.model_args);
  if (f.follows_dtype) {
    if (t.kind == Type::Kind::Tensor) t.dtype = m.model_dtype;
    if (t.kind == Type::Kind::Model) t.model_dtype = m.model_dtype;
  }
  if (!m.stack.empty()) {
    if (t.kind == Type::Kind::Tensor)
      t.shape.insert(t.shape.begin(), m.stack.begin(), m.stack.end());
    else if (t.kind == Type::Kind::Model)
      t.stack.insert(t.stack.begin(), m.stack.begin(), m.stack.end());
  }
  // A model spec (`Net/x`, `Net{w/x}`) splits the field's first axis, as
  // P('x') does each leaf of a pytree, and the block varies over x; a
  // sub-model passes the spec on to its own fields.
  const MeshSplit split = field_split(m, f.name);
  if (split.empty()) return t;
  if (t.kind == Type::Kind::Model) {
    t.model_split = split;
  } else if (t.kind == Type::Kind::Tensor && !t.shape.empty()) {
    t.shape[0].split = split;
    t.varying = split.axes;
    std::sort(t.varying.begin(), t.varying.end());
  }
  return t;
}

}  // namespace ss::types
