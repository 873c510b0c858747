// Extern fns of a host language (Note [Extern fns of a host language] in
// extern_host.h).
#include "interp/eval/extern_host.h"

#include <atomic>
#include <map>

#include "interp/eval/interpreter.h"

namespace ss::eval {

namespace {

std::atomic<ExternHost*> g_host{nullptr};

std::string shape_text(const ops::Tensor& t) {
  return ops::shape_string(t.shape()) + " " + types::dtype_name(t.dtype());
}

}  // namespace

void set_extern_host(ExternHost* h) {
  g_host.store(h);
}

ExternHost* extern_host() {
  return g_host.load();
}

Value call_host_extern(Interpreter& in,
                       ExternHost& h,
                       const check::FnInfo& fn,
                       const std::vector<Value>& args,
                       diag::Span site) {
  const std::string& target = fn.decl->extern_target;
  Value out;
  try {
    out = h.call(target, args);
  } catch (const HostRaised& e) {
    in.fail("HostError", site, e.what(), {kHostNote + e.payload});
  } catch (const std::runtime_error& e) {
    in.fail("ImportError",
            site,
            "extern fn `" + fn.name + "`: \"" + target +
                "\" cannot be loaded: " + e.what());
  }
  const types::Type& want = fn.result;
  if (want.kind != types::Type::Kind::Tensor) return out;
  auto wrong = [&](const std::string& found) {
    in.fail("ShapeError",
            site,
            "extern fn `" + fn.name + "` (\"" + target + "\") returned " +
                found + ", where its type says " + want.str() + " " +
                types::dtype_name(want.dtype));
  };
  if (out.kind != Value::Kind::Tensor) wrong("no tensor");
  const ops::Tensor& t = out.t;
  if (t.dtype() != want.dtype || t.rank() != want.shape.size())
    wrong(shape_text(t));
  // Its size variables, bound by the arguments' tensors.
  std::map<uint32_t, int64_t> sizes;
  for (size_t i = 0; i < fn.params.size() && i < args.size(); ++i) {
    const types::Type& p = fn.params[i].type;
    if (p.kind != types::Type::Kind::Tensor ||
        args[i].kind != Value::Kind::Tensor ||
        args[i].t.rank() != p.shape.size())
      continue;
    for (size_t j = 0; j < p.shape.size(); ++j)
      if (p.shape[j].kind == types::Axis::Kind::Var)
        sizes.emplace(p.shape[j].var, args[i].t.shape()[j]);
  }
  for (size_t j = 0; j < want.shape.size(); ++j) {
    const types::Axis& a = want.shape[j];
    std::optional<int64_t> n = a.static_size();
    if (a.kind == types::Axis::Kind::Var)
      if (auto it = sizes.find(a.var); it != sizes.end()) n = it->second;
    if (a.kind == types::Axis::Kind::Dim)
      if (std::optional<int64_t> local = in.dim_size(a.name)) n = local;
    if (n && *n != t.shape()[j]) wrong(shape_text(t));
  }
  return out;
}

}  // namespace ss::eval
