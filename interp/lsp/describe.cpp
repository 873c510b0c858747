// The words for hover and completion (describe.h).
#include "interp/lsp/describe.h"

#include <functional>
#include <set>

#include "ops/registry/registry.h"

namespace ss::lsp {

std::string builtin_signature(const ops::OpDef& op) {
  return ops::signature_text(op);
}

namespace {

std::string fields_text(const std::vector<types::FieldInfo>& fields) {
  std::string out;
  for (const types::FieldInfo& f : fields)
    out +=
        "\n    " + f.name + ": " + (f.buffer ? "buffer " : "") + f.type.str();
  return out;
}

}  // namespace

std::string model_text(const types::ModelInfo& m) {
  std::string out = "model " + m.name;
  if (!m.dim_params.empty()) {
    out += "[";
    for (size_t i = 0; i < m.dim_params.size(); ++i)
      out += (i ? " " : "") + m.dim_params[i];
    out += "]";
  }
  return out + ":" + fields_text(m.fields);
}

std::string record_text(const types::RecordInfo& r) {
  return "data " + r.name + ":" + fields_text(r.fields);
}

std::string dim_sizes(const types::Type& t, const check::Program& p) {
  std::set<std::string> seen;
  std::string out;
  std::function<void(const types::Axis&)> axis = [&](const types::Axis& a) {
    if (a.kind == types::Axis::Kind::Group) {
      for (const types::Axis& i : a.items) axis(i);
      return;
    }
    if (a.kind != types::Axis::Kind::Dim || !seen.insert(a.name).second) return;
    auto it = p.dims().find(a.name);
    if (it == p.dims().end()) return;
    out +=
        (out.empty() ? "" : ", ") + a.name + " = " + std::to_string(it->second);
  };
  std::function<void(const types::Type&)> type = [&](const types::Type& x) {
    for (const types::Axis& a : x.shape) axis(a);
    for (const types::Axis& a : x.model_args) axis(a);
    for (const types::Axis& a : x.stack) axis(a);
    for (const types::Type& e : x.elems) type(e);
  };
  type(t);
  return out;
}

}  // namespace ss::lsp
