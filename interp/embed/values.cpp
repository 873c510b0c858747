// embed::Value and embed::Arg: a host's view of runtime values.
#include "interp/embed/embed.h"
#include "interp/embed/held.h"
#include "interp/embed/host_types.h"
#include "interp/eval/objects.h"
#include "ops/core/type.h"

namespace ss::embed {

using VK = eval::Value::Kind;
using K = Value::Kind;

Value::Kind Value::kind() const {
  if (!h_) return K::Unit;
  switch (h_->value.kind) {
    case VK::Unit:
      return K::Unit;
    case VK::Int:
      return K::Int;
    case VK::Float:
      return K::Float;
    case VK::Bool:
      return K::Bool;
    case VK::Str:
      return K::Str;
    case VK::Tensor:
      return K::Tensor;
    case VK::Tuple:
      return K::Tuple;
    case VK::List:
      return K::List;
    case VK::Record:
      return K::Record;
    case VK::Logs:
      return K::Logs;
    case VK::Model:
      return K::Model;
    case VK::Optim:
      return K::Optim;
    case VK::Grads:
      return K::Grads;
    case VK::Mode:
      return K::Mode;
    case VK::Dataset:
      return K::Dataset;
    case VK::Batches:
      return K::Batches;
    case VK::Sink:
      return K::Sink;
    default:
      return K::Other;
  }
}

std::string Value::type_text() const {
  return h_ ? h_->type.str() : "()";
}

int64_t Value::as_int() const {
  return h_ ? h_->value.i : 0;
}

double Value::as_float() const {
  return h_ ? h_->value.number() : 0;
}

bool Value::as_bool() const {
  return h_ && h_->value.b;
}

const std::string& Value::as_str() const {
  static const std::string none;
  return h_ ? h_->value.s : none;
}

const ops::Tensor& Value::tensor() const {
  static const ops::Tensor none;
  return h_ ? h_->value.t : none;
}

namespace {

Value make_value(eval::Value v, types::Type t) {
  auto h = std::make_shared<Held>();
  h->value = std::move(v);
  h->type = std::move(t);
  return Value(std::move(h));
}

}  // namespace

std::vector<Value> Value::items() const {
  std::vector<Value> out;
  if (!h_ || !h_->value.items) return out;
  const types::Type& t = h_->type;
  for (size_t i = 0; i < h_->value.items->size(); ++i) {
    const eval::Value& v = (*h_->value.items)[i];
    // A tuple's item has its own type; a list's, the element type.
    types::Type it;
    if (t.kind == types::Type::Kind::Tuple && i < t.elems.size())
      it = t.elems[i];
    else if (t.kind == types::Type::Kind::List && !t.elems.empty())
      it = t.elems[0];
    else
      it = type_of_value(v);
    out.push_back(make_value(v, std::move(it)));
  }
  return out;
}

std::vector<std::pair<std::string, Value>> Value::entries() const {
  std::vector<std::pair<std::string, Value>> out;
  if (!h_) return out;
  if (auto* l = dynamic_cast<const eval::LogsValue*>(h_->value.obj.get())) {
    for (const auto& [n, v] : l->fields)
      out.push_back({n, make_value(v, type_of_value(v))});
  } else if (auto* r =
                 dynamic_cast<const eval::RecordValue*>(h_->value.obj.get())) {
    if (r->lazy) return out;  // not loaded here: read through Session::field
    for (const auto& [n, t] : r->fields)
      if (n.rfind("mask_", 0) != 0)
        out.push_back({n,
                       make_value(eval::Value::tensor(t),
                                  type_of_value(eval::Value::tensor(t)))});
  }
  return out;
}

std::string Value::type_name() const {
  if (!h_) return "";
  const types::Type& t = h_->type;
  if (t.model)
    return t.kind == types::Type::Kind::Optim
               ? types::optim_names(t.optim_kind).type
               : t.model->name;
  if (t.record) return t.record->name;
  return t.str();
}

bool Value::iterable() const {
  return h_ &&
         (dynamic_cast<const eval::IterableObject*>(h_->value.obj.get()) ||
          h_->value.kind == VK::List);
}

int64_t Value::length() const {
  if (!h_) return -1;
  if (auto* it = dynamic_cast<const eval::IterableObject*>(h_->value.obj.get()))
    return it->length();
  if (h_->value.items) return static_cast<int64_t>(h_->value.items->size());
  return -1;
}

namespace {

Arg arg(Arg::Kind kind, std::string kw) {
  Arg a;
  a.kind = kind;
  a.keyword = std::move(kw);
  return a;
}

}  // namespace

Arg Arg::of(Value v, std::string kw) {
  Arg a = arg(Kind::Held, std::move(kw));
  a.held = std::move(v);
  return a;
}

Arg Arg::of_tensor(ops::Tensor t, std::string kw) {
  Arg a = arg(Kind::Tensor, std::move(kw));
  a.tensor = std::move(t);
  return a;
}

Arg Arg::of_int(int64_t v, std::string kw) {
  Arg a = arg(Kind::Int, std::move(kw));
  a.i = v;
  return a;
}

Arg Arg::of_float(double v, std::string kw) {
  Arg a = arg(Kind::Float, std::move(kw));
  a.f = v;
  return a;
}

Arg Arg::of_bool(bool v, std::string kw) {
  Arg a = arg(Kind::Bool, std::move(kw));
  a.b = v;
  return a;
}

Arg Arg::of_str(std::string v, std::string kw) {
  Arg a = arg(Kind::Str, std::move(kw));
  a.s = std::move(v);
  return a;
}

Arg Arg::of_text(std::string text, std::string kw) {
  Arg a = arg(Kind::Text, std::move(kw));
  a.s = std::move(text);
  return a;
}

}  // namespace ss::embed
