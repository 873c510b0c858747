#include "interp/eval/format.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "interp/eval/objects.h"

namespace ss::eval {

using VK = Value::Kind;

std::string format_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == std::floor(v) && std::fabs(v) < 1e16) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
  }
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string exact_element(const ops::Tensor& t, int64_t flat) {
  switch (t.dtype()) {
    case types::DType::I64:
      return std::to_string(t.data<int64_t>()[flat]);
    case types::DType::I32:
      return std::to_string(t.data<int32_t>()[flat]);
    case types::DType::Bool:
      return t.data<uint8_t>()[flat] ? "true" : "false";
    default:
      throw std::logic_error("exact_element: a float tensor");
  }
}

namespace {

std::string float_element(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string element_at(const ops::Tensor& t, int64_t flat) {
  return types::is_float(t.dtype()) ? float_element(t.at(flat))
                                    : exact_element(t, flat);
}

// numpy-like nested brackets, eliding the middle of long axes.
void tensor_values(const ops::Tensor& t,
                   size_t axis,
                   int64_t offset,
                   int indent,
                   bool summarise,
                   std::string& out) {
  const auto& shape = t.shape();
  int64_t stride = 1;
  for (size_t k = axis + 1; k < shape.size(); ++k) stride *= shape[k];
  int64_t n = shape[axis];
  out += "[";
  auto show = [&](int64_t i) {
    if (axis + 1 == shape.size()) {
      out += element_at(t, offset + i);
    } else {
      tensor_values(
          t, axis + 1, offset + i * stride, indent + 1, summarise, out);
    }
  };
  std::string sep =
      axis + 1 == shape.size() ? " " : "\n" + std::string(indent + 1, ' ');
  for (int64_t i = 0; i < n; ++i) {
    if (summarise && n > 6 && i == 3) {
      out += "..." + sep;
      i = n - 3;
    }
    show(i);
    if (i + 1 < n) out += sep;
  }
  out += "]";
}

std::string tensor_string(const ops::Tensor& t, const types::Type* st) {
  std::string head = t.rank() == 0 ? std::string(types::dtype_name(t.dtype()))
                                   : ops::shape_string(t.shape()) + " " +
                                         types::dtype_name(t.dtype());
  if (st && st->kind == types::Type::Kind::Tensor &&
      st->shape.size() == t.rank()) {
    std::string vars;
    for (size_t i = 0; i < st->shape.size(); ++i)
      if (st->shape[i].kind == types::Axis::Kind::Var)
        vars += (vars.empty() ? "" : " ") + st->shape[i].str() + "=" +
                std::to_string(t.shape()[i]);
    if (!vars.empty()) head += " (" + vars + ")";
  }
  ops::Tensor host = t.to(ops::Device{});
  if (t.rank() == 0) return head + " " + element_at(host, 0);
  std::string body;
  tensor_values(host, 0, 0, 0, t.numel() > 1000, body);
  return head + "\n" + body;
}

}  // namespace

std::string format_value(const Value& v, const types::Type* st) {
  switch (v.kind) {
    case VK::Unit:
      return "()";
    case VK::Int:
      return std::to_string(v.i);
    case VK::Float:
      return format_number(v.f);
    case VK::Bool:
      return v.b ? "true" : "false";
    case VK::Str:
      return v.s;
    case VK::Tensor:
      return tensor_string(v.t, st);
    case VK::Tuple:
    case VK::List: {
      std::string s = v.kind == VK::List ? "[" : "(";
      for (size_t i = 0; i < v.items->size(); ++i)
        s += (i ? ", " : "") + format_value((*v.items)[i]);
      if (v.kind == VK::Tuple && v.items->size() == 1) s += ",";
      return s + (v.kind == VK::List ? "]" : ")");
    }
    case VK::Fn:
      return "fn " + v.s;
    case VK::Logs: {
      std::string s = "Logs(";
      bool first = true;
      for (const auto& [name, val] : v.as<LogsValue>()->fields) {
        s += (first ? "" : ", ") + name + "=";
        first = false;
        if (val.kind == VK::Tensor && val.t.numel() == 1)
          s += format_number(val.t.item());
        else
          s += format_value(val);
      }
      return s + ")";
    }
    case VK::Model:
    case VK::Grads: {
      auto* m = v.as<ModelRef>();
      int64_t bytes = 0;
      for (const std::string& p : m->paths(false)) bytes += m->get(p).nbytes();
      // A Grads handle's type is Grads[M] already.
      bool wrap =
          v.kind == VK::Grads && m->type.kind != types::Type::Kind::Grads;
      return (wrap ? "Grads[" + m->type.str() + "]" : m->type.str()) + " (" +
             std::to_string(bytes) + " bytes)";
    }
    case VK::Mode: {
      auto* m = v.as<ModeState>();
      return m->train ? "Train(seed=" + std::to_string(m->seed) + ")" : "Eval";
    }
    case VK::Type:
      return v.type ? v.type->str() : "type";
    default:
      return "<" + std::string(v.kind == VK::Optim ? "optimizer" : "object") +
             ">";
  }
}

namespace {

// snprintf into a string of the length it needs: `f"{1e300:.0f}"` has 301
// digits, which a fixed buffer cut at 127 (issue 32, item 7).
template <class... A>
std::string printed(const char* fmt, A... args) {
  const int n = std::snprintf(nullptr, 0, fmt, args...);
  if (n <= 0) return "";
  std::string out(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(out.data(), out.size(), fmt, args...);
  out.pop_back();
  return out;
}

}  // namespace

std::string format_with_spec(const Value& v, const std::string& spec) {
  if (spec.empty()) {
    if (v.kind == VK::Tensor && v.t.numel() == 1 && v.t.rank() == 0)
      return types::is_float(v.t.dtype()) ? format_number(v.t.item())
                                          : format_value(v);
    return format_value(v);
  }
  // A spec formats one number: a tensor of several values (or none) is a
  // ValueError, as numpy's ndarray.__format__ refuses one, where it
  // printed 0 (issue 32's runtime fuzzer: `f"{x:.3f}"` of [-2 ... 2]).
  if (v.kind == VK::Tensor && v.t.numel() != 1)
    throw std::invalid_argument(
        "a format spec (`:" + spec + "`) formats a number, but this is a " +
        ops::shape_string(v.t.shape()) + " " +
        std::string(types::dtype_name(v.t.dtype())) +
        " tensor; format one element, or print the tensor");
  // [[fill]align][sign][,][width][.precision][type]
  double x = v.is_number() || v.kind == VK::Tensor ? v.number() : 0;
  bool numeric = v.is_number() || v.kind == VK::Tensor;
  size_t i = 0;
  char fill = ' ', align = 0;
  if (spec.size() >= 2 &&
      (spec[1] == '<' || spec[1] == '>' || spec[1] == '^')) {
    fill = spec[0];
    align = spec[1];
    i = 2;
  } else if (!spec.empty() &&
             (spec[0] == '<' || spec[0] == '>' || spec[0] == '^')) {
    align = spec[0];
    i = 1;
  }
  std::string sign;
  if (i < spec.size() && (spec[i] == '+' || spec[i] == ' ')) sign = spec[i++];
  bool comma = false;
  int width = 0, prec = -1;
  // Note [Format bounds]: a width or precision past its bound is a
  // ValueError, not a string that grows until memory runs out.
  auto digits = [&](int bound, const char* what) {
    int64_t n = 0;
    while (i < spec.size() &&
           std::isdigit(static_cast<unsigned char>(spec[i]))) {
      n = n * 10 + (spec[i++] - '0');
      if (n > bound)
        throw std::invalid_argument(std::string("the format's ") + what +
                                    " is more than " + std::to_string(bound) +
                                    " (in `:" + spec + "`)");
    }
    return static_cast<int>(n);
  };
  width = digits(kMaxFormatWidth, "width");
  if (i < spec.size() && spec[i] == ',') {
    comma = true;
    ++i;
  }
  if (i < spec.size() && spec[i] == '.') {
    ++i;
    prec = digits(kMaxFormatPrecision, "precision");
  }
  char type = i < spec.size() ? spec[i] : 0;
  std::string body;
  if (!numeric) {
    body = format_value(v);
  } else if (type == 'd' || (type == 0 && prec < 0 && v.kind == VK::Int)) {
    body = printed(("%" + sign + "lld").c_str(),
                   static_cast<long long>(std::llround(x)));
  } else if (type == '%') {
    body = printed(("%" + sign + ".*f").c_str(), prec < 0 ? 6 : prec, x * 100) +
           "%";
  } else {
    char t =
        type == 'e' || type == 'E' || type == 'g' || type == 'G' ? type : 'f';
    if (type == 0 && prec < 0) {
      body = format_number(x);
    } else {
      std::string fmt = "%" + sign + ".*" + std::string(1, t);
      body = printed(fmt.c_str(), prec < 0 ? 6 : prec, x);
    }
  }
  if (comma && numeric) {
    size_t dot = body.find('.');
    size_t end = dot == std::string::npos ? body.size() : dot;
    size_t start = (body[0] == '-' || body[0] == '+') ? 1 : 0;
    for (int k = static_cast<int>(end) - 3; k > static_cast<int>(start); k -= 3)
      body.insert(k, ",");
  }
  if (static_cast<int>(body.size()) < width) {
    int pad = width - static_cast<int>(body.size());
    if (!align) align = numeric ? '>' : '<';
    if (align == '<')
      body += std::string(pad, fill);
    else if (align == '>')
      body = std::string(pad, fill) + body;
    else
      body =
          std::string(pad / 2, fill) + body + std::string(pad - pad / 2, fill);
  }
  return body;
}

}  // namespace ss::eval
