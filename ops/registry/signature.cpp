// A builtin's signature as the reference and the editor show it
// (registry.h): docs/reference/builtins.md's rows, `ss lsp`'s hovers,
// completions and signature help say it the same way.
#include <string>
#include <vector>

#include "ops/registry/registry.h"

namespace ss::ops {

// `softmax(x, over=)`, `sum(x, [over=])`, `update(mut m, mut opt, g)`,
// `value_and_grad(f, m, ..., [aux=])`, `logs(name=value, ...)`.
std::string signature_text(const OpDef& op) {
  std::vector<std::string> parts;
  bool variadic_done = !op.variadic;
  for (const ParamSpec& p : op.params) {
    if (p.keyword_only && !variadic_done) {
      parts.push_back("...");
      variadic_done = true;
    }
    std::string s = p.mutates ? std::string("mut ") + p.name : p.name;
    if (!p.required)
      s = "[" + s + "=]";
    else if (p.kind == ParamKind::Axes || p.keyword_only)
      s += "=";
    parts.push_back(s);
  }
  if (!variadic_done) parts.push_back("...");
  if (op.any_keywords) parts.push_back("name=value, ...");
  std::string r = std::string(op.name) + "(";
  for (size_t i = 0; i < parts.size(); ++i) r += (i ? ", " : "") + parts[i];
  return r + ")";
}

}  // namespace ss::ops
