// `ss check --builtins-reference`: docs/reference/builtins.md, from the op
// table.
//
// Note [The builtins' reference]
// Every builtin's reference entry is read from its OpDef, never written by
// hand: the signature from its params, what it does from its summary, its
// rule on several devices from OpDef::device (device_rule.h) and its torch
// equivalent from OpDef::torch. The families come in families.def's order,
// each family's builtins by name. tests/docs_builtins_test.py regenerates
// the page and fails when the checked-in one differs, or when a builtin
// that `ss check --list-builtins` lists has no row, no summary or no torch
// entry; so a new op without them, or a changed rule, fails a test until
// the page is regenerated:
//
//   build/ss check --builtins-reference > docs/reference/builtins.md
#include <algorithm>
#include <iostream>
#include <sstream>
#include <string>

#include "interp/cli/commands.h"
#include "ops/registry/registry.h"

namespace ss::cli {

namespace {
using ops::Across;
using ops::DeviceRule;
using ops::HostEffect;
using ops::OpDef;
using ops::ParamKind;

// A markdown table cell: `|` would end it, a newline the row, and `*` or
// `_` outside a code span would start emphasis (`a ** b`, `[b *s C]`,
// `clip_grad_norm_`). [in_code]: the cell is all one code span.
std::string cell(const std::string& s, bool in_code = false) {
  std::string r;
  bool code = in_code;
  for (char c : s) {
    if (c == '`') code = !code;
    if (c == '|')
      r += "\\|";
    else if (c == '\n')
      r += ' ';
    else if (!code && (c == '*' || c == '_'))
      r += std::string("\\") + c;
    else
      r += c;
  }
  return r;
}

std::string replace_all(std::string s,
                        const std::string& from,
                        const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos;
       at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

const char* across_words(Across a) {
  switch (a) {
    case Across::Over:
      return "along the batch axis (over=b)";
    case Across::Reduction:
      return "over the batch axis (over=b, or over= omitted)";
    case Across::Indexing:
      return "indexing or moving data along the batch axis";
    case Across::Operands:
      return "of operands with the batch axis";
    case Across::AxisArgs:
      return "given the batch axis as an axis argument";
    case Across::SizeOf:
      return "of the batch axis's size";
  }
  return "";
}

// What a host call does in the controller, after "as it".
const char* host_words(HostEffect e) {
  switch (e) {
    case HostEffect::None:
      return "computes on the host";
    case HostEffect::Prints:
      return "prints";
    case HostEffect::SavesCheckpoint:
      return "saves a checkpoint (the params fetched from the workers)";
    case HostEffect::LoadsCheckpoint:
      return "loads a checkpoint (then sent to the workers)";
    case HostEffect::WritesSink:
      return "writes a sink";
    case HostEffect::MakesSink:
      return "makes a sink";
    case HostEffect::MakesFileSink:
      return "makes a file sink";
    case HostEffect::MakesDataset:
      return "makes a dataset (sent to each worker once)";
    case HostEffect::LoopsOverDataset:
      return "loops over batches, calling f on the workers";
    case HostEffect::ShowsProgress:
      return "draws a progress bar";
    case HostEffect::SetsTimeout:
      return "sets the collective timeout of workers started afterwards";
    case HostEffect::ReadsHostNumber:
      return "reads a tensor as a host number (from the first worker)";
  }
  return "";
}

// The entry's rule on several devices, in library.md's words.
std::string device_words(const OpDef& op) {
  const DeviceRule& d = op.device;
  std::string r;
  switch (d.kind) {
    case DeviceRule::Kind::PerExample:
      r = d.device_work ? "on the workers (device work: E1803 in a "
                          "controller fn)"
                        : "per example";
      if (d.across == Across::SizeOf)
        r += "; " + std::string(across_words(d.across)) + ": E1802";
      break;
    case DeviceRule::Kind::Lowered: {
      const ops::Lowering& l = *d.lowering;
      r = std::string("per example; ") + across_words(d.across) + ": an " +
          ops::collective_name(l.collective) + ", each device sending " +
          l.sends;
      if (l.only_param >= 0)
        r += std::string(" (only with ") + op.params[l.only_param].name + "=" +
             l.only_with + ", else E1801)";
      if (l.eval_mode_param >= 0)
        r += "; in Eval mode per example, sending nothing";
      if (l.per_example_with)
        r += std::string("; with ") + op.params[l.per_example_param].name +
             "=\"" + l.per_example_with + "\" per example, sending nothing";
      break;
    }
    case DeviceRule::Kind::Refused:
      r = std::string("per example; ") + across_words(d.across) + ": E1801";
      if (d.refused_help)
        r += " (" +
             replace_all(replace_all(d.refused_help, "{x}", "x"), "{b}", "b") +
             ")";
      break;
    case DeviceRule::Kind::Host:
      r = d.host == HostEffect::None
              ? "a host value, computed where it is called"
              : std::string(
                    "a host call: its fn runs in the controller, "
                    "as it ") +
                    host_words(d.host);
      if (d.across == Across::SizeOf)
        r += "; " + std::string(across_words(d.across)) + ": E1802";
      r += d.takes_split ? "; takes split data" : "; given split data: E1901";
      break;
  }
  if (d.elementwise_with)
    r += std::string("; with ") + d.elementwise_with + " given, elementwise";
  if (d.fn_arg == ops::FnArg::Differentiates)
    r += "; differentiates f on the workers and all-reduces the gradients";
  if (d.collective)
    r += "; a collective over mesh axes: only in an spmd fn (E2002), never "
         "under a condition that varies over the mesh (E2006)";
  return r;
}

struct Family {
  const char* name;
  std::vector<OpDef> defs;
};

std::vector<Family> families() {
  std::vector<Family> v;
#define SS_OP_FAMILY(family) v.push_back({#family, ops::ops_##family()});
#include "ops/registry/families.def"
#undef SS_OP_FAMILY
  for (Family& f : v)
    std::sort(f.defs.begin(), f.defs.end(), [](auto& a, auto& b) {
      return std::string_view(a.name) < b.name;
    });
  return v;
}

const char* kHeader =
    R"(# Builtins: the reference

Generated from the op table (each builtin's `OpDef` in `ops/defs/<family>.cpp`)
by `ss check --builtins-reference`: do not edit it, change the entry and run

    build/ss check --builtins-reference > docs/reference/builtins.md

(ctest `docs_builtins_reference` fails when this page differs from the table,
or when a builtin has no summary or no torch entry.)

For each builtin: its **signature** (`[name=]` is optional, `mut` marks an
argument it changes, `...` more arguments; a method call `x.f(a)` is `f(x, a)`,
and the operators are the elementwise builtins `add`, `mul`, ...: `a + b` is
`add(a, b)`); **what it does**; its **rule on several devices**: *per example*
(each device runs it on its part of the batch unchanged), *lowered* (across the
batch axis it becomes a collective), *E1801* (across the batch axis it is
refused, with the help shown), or a *host call* (it runs in the controller);
and what a PyTorch user writes instead. The guide (`docs/guide/`) shows them at
work; `docs/porting.md` says where they differ from torch.
)";

}  // namespace

int print_builtin_reference() {
  std::vector<Family> fams = families();
  std::ostringstream out;
  out << kHeader;
  out << "\n| family | builtins |\n| --- | --- |\n";
  for (const Family& f : fams) {
    out << "| [" << f.name << "](#" << f.name << ") | ";
    for (size_t i = 0; i < f.defs.size(); ++i)
      out << (i ? ", " : "") << "`" << f.defs[i].name << "`";
    out << " |\n";
  }
  for (const Family& f : fams) {
    out << "\n## " << f.name << "\n\n(`ops/defs/" << f.name << ".cpp`)\n\n"
        << "| signature | what it does | on several devices | torch |\n"
        << "| --- | --- | --- | --- |\n";
    for (const OpDef& op : f.defs) {
      std::string what = op.summary;
      if (op.forward && !op.differentiable) what += " (no gradient)";
      out << "| `" << cell(ops::signature_text(op), true) << "` | "
          << cell(what) << " | " << cell(device_words(op)) << " | "
          << cell(op.torch) << " |\n";
    }
  }
  std::cout << out.str();
  return kExitOk;
}

}  // namespace ss::cli
