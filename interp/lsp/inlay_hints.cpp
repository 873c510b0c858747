// textDocument/inlayHint (features.h): after each `let` and `for` name, the
// type the checker inferred for it, and on several devices its layout
// there: `let h = relu(x @ m.w1)` shows `h: [b Hd] · split along b` on
// cpu[0 1 2], which no editor of an ML framework can show, since there the
// shapes and the placement are known only when the code runs.
#include "diag/render_lsp.h"
#include "interp/lsp/features.h"

namespace ss::lsp {

namespace {

using Kind = check::comms::ValueLayout::Kind;
using nlohmann::json;

// The few words of a layout an inlay has room for.
std::string short_layout(const check::comms::ValueLayout& v) {
  switch (v.kind) {
    case Kind::Split:
      return "split along " + v.axis;
    case Kind::Whole:
      return "whole";
    case Kind::ModelCopy:
    case Kind::OptimCopy:
      return "a copy on each device";
    case Kind::ModelShards:
    case Kind::OptimShards:
      return "sharded";
    case Kind::Blocks:
      return "a block on each instance";
    case Kind::Controller:
      return "in the controller";
    case Kind::Anywhere:
      return "anywhere";
    case Kind::OneDevice:
      return "on one device";
  }
  return "";
}

}  // namespace

json inlay_hints(const Analysis& a, uint32_t begin, uint32_t end) {
  json out = json::array();
  const ast::Module* m = a.module();
  if (!m || !a.prog) return out;
  const check::comms::DeviceTable* table = a.table();
  const bool several = table && table->count > 1;
  for (const ast::FnDecl& d : m->fns) {
    const check::FnInfo* fn = a.prog->fn(d.name);
    if (!fn || fn->decl != &d) continue;
    for (size_t i = 0; i < fn->locals.size() && i < fn->local_spans.size();
         ++i) {
      const diag::Span s = fn->local_spans[i];
      if (s.file != a.file || s.end < begin || s.begin > end) continue;
      const auto& [name, type] = fn->locals[i];
      // A comprehension's names carry the comprehension's span: no place
      // right after the name to put a hint.
      if (a.sm.text(s) != name) continue;
      std::string label = ": " + type.str();
      if (several)
        for (const check::comms::ValueLayout& v : table->values)
          if (v.fn == d.name && v.name == name) {
            label += " · " + short_layout(v);
            break;
          }
      json at = diag::lsp_range(a.sm, s)["end"];
      out.push_back({{"position", at},
                     {"label", label},
                     {"kind", 1},  // Type
                     {"paddingLeft", false}});
    }
  }
  return out;
}

}  // namespace ss::lsp
