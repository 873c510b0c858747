// Size of `ss explain`: a count as a sum of products of axis names (known
// or symbolic), and its text in the report (thousands, bytes_text); the
// counts of types and models' tensors (explain_impl.h), a model's pieces
// under `shard params`, and the example batch of the split layouts.
#include <algorithm>
#include <sstream>

#include "interp/check/plan/explain_impl.h"
#include "ops/core/batch_split.h"

namespace ss::check::comms {

// ------------------------------------------------------------ Size

Size Size::constant(int64_t n) {
  Size s;
  if (n != 0) s.terms[{}] = n;
  return s;
}

bool Size::known() const {
  for (const auto& [m, c] : terms)
    if (!m.empty() && c != 0) return false;
  return true;
}

int64_t Size::value() const {
  auto it = terms.find({});
  return it == terms.end() ? 0 : it->second;
}

bool Size::zero() const {
  for (const auto& [m, c] : terms)
    if (c != 0) return false;
  return true;
}

Size& Size::operator+=(const Size& o) {
  for (const auto& [m, c] : o.terms) {
    int64_t& v = terms[m];
    v += c;
    if (v == 0) terms.erase(m);
  }
  return *this;
}

Size Size::operator*(int64_t k) const {
  Size s;
  if (k == 0) return s;
  for (const auto& [m, c] : terms) s.terms[m] = c * k;
  return s;
}

std::string thousands(int64_t n) {
  std::string d = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i > 0 && (d.size() - i) % 3 == 0) out += ',';
    out += d[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string Size::str() const {
  if (known()) return thousands(value());
  // Higher degree first, then by name; the constant last.
  std::vector<std::pair<std::vector<std::string>, int64_t>> ts(terms.begin(),
                                                               terms.end());
  std::stable_sort(ts.begin(), ts.end(), [](const auto& a, const auto& b) {
    if (a.first.size() != b.first.size())
      return a.first.size() > b.first.size();
    return a.first < b.first;
  });
  std::string s;
  for (const auto& [m, c] : ts) {
    if (c == 0) continue;
    std::string t;
    if (m.empty() || c != 1) t = thousands(c < 0 ? -c : c);
    for (const std::string& v : m) t += (t.empty() ? "" : "·") + v;
    if (s.empty())
      s = (c < 0 ? "-" : "") + t;
    else
      s += (c < 0 ? " - " : " + ") + t;
  }
  return s.empty() ? "0" : s;
}

std::string bytes_text(const Size& bytes) {
  std::string s = bytes.str() + " bytes";
  if (bytes.known() && bytes.value() >= 1024)
    s += " (" + thousands((bytes.value() + 512) / 1024) + " KiB)";
  return s;
}

namespace detail {

using types::Axis;
using types::Type;
using TK = types::Type::Kind;

Size operator+(Size a, const Size& b) {
  a += b;
  return a;
}

Size times(const Size& a, const Size& b) {
  Size s;
  for (const auto& [ma, ca] : a.terms)
    for (const auto& [mb, cb] : b.terms) {
      std::vector<std::string> m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      s += Size{{{m, ca * cb}}};
    }
  return s;
}

Size variable(const std::string& name) {
  Size s;
  s.terms[{name}] = 1;
  return s;
}

std::string axis_name(const Axis& a) {
  if (!a.label.empty()) return a.label;
  return a.name.empty() ? a.str() : a.name;
}

Size axis_size(const Axis& a) {
  if (auto n = a.whole_size()) return Size::constant(*n);
  if (a.kind == Axis::Kind::Group) {
    Size s = Size::constant(1);
    for (const Axis& i : a.items) s = times(s, axis_size(i));
    return s;
  }
  return variable(axis_name(a));
}

Size numel(const Type& t) {
  Size s = Size::constant(1);
  for (const Axis& a : t.shape) s = times(s, axis_size(a));
  return s;
}

void model_leaves(const Type& m,
                  const std::string& prefix,
                  std::vector<Leaf>& out,
                  int depth) {
  if (!m.model || depth > 32) return;
  for (const types::FieldInfo& f : m.model->fields) {
    Type ft = types::model_field_type(m, f);
    if (ft.kind == TK::Tensor)
      out.push_back({prefix + f.name, ft, f.buffer});
    else if (ft.kind == TK::Model)
      model_leaves(ft, prefix + f.name + ".", out, depth + 1);
  }
}

std::vector<int> shard_bucket_numbers(const std::vector<Leaf>& leaves) {
  auto prefix = [](const std::string& path) {
    const size_t dot = path.rfind('.');
    return dot == std::string::npos ? std::string() : path.substr(0, dot);
  };
  std::vector<int> out(leaves.size(), -1);
  int next = 0;
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (out[i] >= 0) continue;
    // Every leaf of i's prefix, in order: one model's own params.
    std::vector<size_t> own;
    std::vector<int64_t> bytes;
    std::vector<int> kind;
    for (size_t j = i; j < leaves.size(); ++j) {
      if (prefix(leaves[j].path) != prefix(leaves[i].path)) continue;
      own.push_back(j);
      bytes.push_back(numel(leaves[j].type).value() *
                      types::dtype_size(leaves[j].type.dtype));
      kind.push_back(static_cast<int>(leaves[j].type.dtype));
    }
    const std::vector<int> b = ops::shard_buckets(bytes, kind);
    for (size_t k = 0; k < own.size(); ++k) out[own[k]] = next + b[k];
    next += b.back() + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& xs) {
  std::string s;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i > 0) s += i + 1 == xs.size() ? " and " : ", ";
    s += xs[i];
  }
  return s;
}

std::string part_of(int64_t n) {
  static const char* const kParts[] = {
      "", "", "a half", "a third", "a quarter"};
  return n > 1 && n < 5 ? kParts[n] : "1/" + std::to_string(n);
}

Collective collective_of(std::string op,
                         std::string source,
                         std::string what,
                         const Size& count,
                         types::DType dt) {
  Collective c;
  c.op = std::move(op);
  c.source = std::move(source);
  c.what = std::move(what);
  c.count = count;
  c.dtype = types::dtype_name(dt);
  c.bytes = count * types::dtype_size(dt);
  return c;
}

std::string figure(const Size& count, types::DType dt) {
  Size bytes = count * types::dtype_size(dt);
  std::string c = count.str();
  if (!count.known() && count.terms.size() > 1) c = "(" + c + ")";
  return c + " × " + types::dtype_name(dt) + " = " + bytes_text(bytes);
}

// `shard params`' layout of a model (devices.md, the report): "each device
// holds a third of every param of Mlp, 271,024 bytes (265 KiB) of its
// params", its pieces' bytes (the last padded); buffers stay whole.
std::string shards_text(const types::Type& type,
                        size_t n,
                        std::optional<int64_t>& bytes_out) {
  std::vector<Leaf> leaves;
  model_leaves(type, "", leaves);
  Size pieces, buffers;
  for (const Leaf& l : leaves) {
    Size c = numel(l.type);
    const int64_t size = types::dtype_size(l.type.dtype);
    if (l.buffer)
      buffers += c * size;
    else if (c.known())
      pieces +=
          Size::constant(ops::shard_piece_numel(c.value(), int(n)) * size);
    else
      pieces += c * size;  // symbolic: shown whole (not cut here)
  }
  if (pieces.known()) bytes_out = pieces.value();
  std::string s = "each device holds " + part_of(int64_t(n)) +
                  " of every param of " +
                  (type.model ? type.model->name : std::string("the model")) +
                  ", " + bytes_text(pieces) + " of its params";
  if (!buffers.zero()) s += ", and its buffers whole: " + bytes_text(buffers);
  return s;
}

// The file's first `batches(n)` with n a number or a dim: the example
// batch of the split layouts.
std::optional<int64_t> example_batch(const Program& P) {
  if (P.modules().empty()) return std::nullopt;
  const ast::Module& main = P.modules().back();
  std::optional<std::pair<uint32_t, int64_t>> best;
  for (const ast::FnDecl& d : main.fns)
    each_body_expr(d, [&](const ast::Expr& e) {
      if (e.kind != ast::Expr::Kind::Call) return;
      const ExprInfo* in = P.info(&e);
      if (!in || in->resolution.kind != Resolution::Kind::Builtin ||
          !in->resolution.op || in->resolution.op->device.batch_size_param < 0)
        return;
      const ast::Expr* a =
          param_arg(e, *in, in->resolution.op->device.batch_size_param);
      if (!a) return;
      std::optional<int64_t> n;
      if (a->kind == ast::Expr::Kind::Int)
        n = a->int_value;
      else if (a->kind == ast::Expr::Kind::Name) {
        auto it = P.dims().find(a->name);
        if (it != P.dims().end()) n = it->second;
      }
      if (!n || *n <= 0) return;
      if (!best || e.span.begin < best->first) best = {{e.span.begin, *n}};
    });
  if (!best) return std::nullopt;
  return best->second;
}

}  // namespace detail

}  // namespace ss::check::comms
