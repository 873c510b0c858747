#include "interp/eval/value.h"

#include <stdexcept>

namespace ss::eval {

Value Value::integer(int64_t v) {
  Value r;
  r.kind = Kind::Int;
  r.i = v;
  return r;
}
Value Value::floating(double v) {
  Value r;
  r.kind = Kind::Float;
  r.f = v;
  return r;
}
Value Value::boolean(bool v) {
  Value r;
  r.kind = Kind::Bool;
  r.b = v;
  return r;
}
Value Value::string(std::string v) {
  Value r;
  r.kind = Kind::Str;
  r.s = std::move(v);
  return r;
}
Value Value::tensor(ops::Tensor t) {
  Value r;
  r.kind = Kind::Tensor;
  r.t = std::move(t);
  return r;
}
Value Value::tuple(std::vector<Value> items) {
  Value r;
  r.kind = Kind::Tuple;
  r.items = std::make_shared<std::vector<Value>>(std::move(items));
  return r;
}
Value Value::list(std::vector<Value> items) {
  Value r;
  r.kind = Kind::List;
  r.items = std::make_shared<std::vector<Value>>(std::move(items));
  return r;
}
Value Value::fn(std::string name, bool remat) {
  Value r;
  r.kind = Kind::Fn;
  r.s = std::move(name);
  r.b = remat;
  return r;
}
Value Value::object(Kind kind, std::shared_ptr<Object> obj) {
  Value r;
  r.kind = kind;
  r.obj = std::move(obj);
  return r;
}
Value Value::type_value(types::Type t) {
  Value r;
  r.kind = Kind::Type;
  r.type = std::make_shared<types::Type>(std::move(t));
  return r;
}

double Value::number() const {
  switch (kind) {
    case Kind::Int:
      return static_cast<double>(i);
    case Kind::Float:
      return f;
    case Kind::Bool:
      return b ? 1.0 : 0.0;
    case Kind::Tensor:
      if (t.defined() && t.numel() == 1) return t.item();
      break;
    default:
      break;
  }
  throw std::logic_error("value is not a number");
}

std::optional<int64_t> Value::integer() const {
  if (kind == Kind::Int) return i;
  if (kind == Kind::Bool) return b ? 1 : 0;
  if (kind == Kind::Tensor && t.defined() && t.numel() == 1 &&
      t.device().kind == ops::Device::Kind::Cpu) {
    switch (t.dtype()) {
      case types::DType::I64:
        return t.data<int64_t>()[0];
      case types::DType::I32:
        return t.data<int32_t>()[0];
      case types::DType::Bool:
        return t.data<uint8_t>()[0] != 0 ? 1 : 0;
      default:
        break;
    }
  }
  if (!is_number() && kind != Kind::Tensor) return std::nullopt;
  if (kind == Kind::Tensor && (!t.defined() || t.numel() != 1))
    return std::nullopt;
  const double d = number();
  // [-2^63, 2^63): the doubles that convert without undefined behaviour.
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
    return std::nullopt;
  return static_cast<int64_t>(d);
}

bool Value::truthy() const {
  if (kind == Kind::Bool) return b;
  return number() != 0.0;
}

}  // namespace ss::eval
