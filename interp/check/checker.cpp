// The checker's entry: load files, parse, run the phases in order.
#include <algorithm>
#include <filesystem>

#include "diag/read_source.h"
#include "interp/check/checker_impl.h"
#include "interp/check/fusion.h"
#include "interp/check/import_set.h"
#include "interp/lex/lexer.h"
#include "interp/parse/parser.h"

using ss::diag::Code;

namespace ss::check {

// ------------------------------------------------------------ Program

const FnInfo* Program::fn(const std::string& name) const {
  auto it = fns_.find(name);
  return it == fns_.end() ? nullptr : &it->second;
}
const types::RecordInfo* Program::record(const std::string& name) const {
  auto it = records_.find(name);
  return it == records_.end() ? nullptr : it->second.get();
}
const types::ModelInfo* Program::model(const std::string& name) const {
  auto it = models_.find(name);
  return it == models_.end() ? nullptr : it->second.get();
}
const types::Type& Program::type_of(const ast::Expr* e) const {
  static const types::Type kError;
  auto it = exprs_.find(e);
  return it == exprs_.end() ? kError : it->second.type;
}
const ExprInfo* Program::info(const ast::Expr* e) const {
  auto it = exprs_.find(e);
  return it == exprs_.end() ? nullptr : &it->second;
}
const FusedLayer* Program::fused_layer(const ast::Expr* e) const {
  if (fused_layers_.empty()) return nullptr;
  auto it = fused_layers_.find(e);
  return it == fused_layers_.end() ? nullptr : &it->second;
}
void Program::keep_exprs_of(uint32_t file) {
  auto outside = [&](const auto& entry) {
    return entry.first->span.file != file;
  };
  std::erase_if(exprs_, outside);
  std::erase_if(fused_, outside);
  std::erase_if(fused_layers_, outside);
  std::erase_if(deferred_,
                [&](const ast::Stmt* s) { return s->span.file != file; });
}

const FusedAttention* Program::fused(const ast::Expr* call) const {
  if (fused_.empty()) return nullptr;
  auto it = fused_.find(call);
  return it == fused_.end() ? nullptr : &it->second;
}

// ------------------------------------------------------------ ValueScope

const Local* ValueScope::declare(const std::string& name, Local l) {
  auto& top = blocks_.back();
  auto it = top.find(name);
  if (it != top.end()) return &it->second;
  top.emplace(name, std::move(l));
  return nullptr;
}

size_t ValueScope::varying_total() const {
  size_t n = 0;
  for (const auto& block : blocks_)
    for (const auto& [name, l] : block) n += l.type.varying.size();
  return n;
}

Local* ValueScope::find(const std::string& name) {
  for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it) {
    auto f = it->find(name);
    if (f != it->end()) return &f->second;
  }
  return nullptr;
}

// ------------------------------------------------------------ helpers

std::string suggest(const std::string& name,
                    const std::vector<std::string>& candidates) {
  auto dist = [](const std::string& a, const std::string& b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      cur[0] = i;
      for (size_t j = 1; j <= b.size(); ++j)
        cur[j] = std::min({prev[j] + 1,
                           cur[j - 1] + 1,
                           prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      std::swap(prev, cur);
    }
    return prev[b.size()];
  };
  auto lower = [](std::string s) {
    for (char& ch : s) ch = static_cast<char>(std::tolower(ch));
    return s;
  };
  for (const std::string& c : candidates)
    if (c != name && lower(c) == lower(name)) return c;
  std::string best;
  size_t best_d = 3;
  for (const std::string& c : candidates) {
    if (c == name) continue;
    size_t d = dist(name, c);
    if (d < best_d && d < std::max<size_t>(name.size(), 2)) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

Checker::Checker(diag::SourceMap& sm,
                 diag::Diagnostics& diags,
                 const Options& opts)
    : sm_(sm), diags_(diags), opts_(opts), prog_(new Program()) {}

diag::Diagnostic& Checker::error(diag::Code code,
                                 diag::Span span,
                                 std::string message,
                                 std::string label) {
  return diags_.error(code, span, std::move(message), std::move(label));
}

const FnInfo* Checker::find_fn(const std::string& name) const {
  return prog_->fn(name);
}

Axis Checker::fresh_var(const std::string& name) {
  return Axis::variable(next_var_++, name);
}

std::unique_ptr<Program> Checker::run(ModuleList::Held modules,
                                      std::shared_ptr<const ImportSet> set) {
  prog_->modules_ = std::move(modules);
  prog_->imports_ = std::move(set);
  collect_globals();
  resolve_devices();
  resolve_dims();
  check_device_options();
  resolve_records();
  resolve_models();
  resolve_signatures();
  for (auto& [name, fn] : prog_->fns_) ensure_checked(fn);
  report_pending_e2001();
  check_devices();
  if (!diags_.empty() && !opts_.keep_on_error) return nullptr;
  if (diags_.empty()) {
    fuse_attention(*prog_);
    fuse_layers(*prog_);
  }
  return std::move(prog_);
}

void Checker::ensure_checked(FnInfo& fn) {
  if (fn.state != FnInfo::State::Unchecked) return;  // done, or recursion
  if (!fn.instance_of.empty()) {
    // Note [Dtype variables]: the f32 instance first, once.
    ensure_checked(prog_->fns_.at(fn.instance_of));
    if (erred_.count(fn.instance_of)) {
      fn.state = FnInfo::State::Done;
      return;
    }
  }
  fn.state = FnInfo::State::Checking;
  if (!fn.decl->is_extern) {
    // A callee's check must not see the caller's expression depth.
    int saved = depth_;
    depth_ = 0;
    const size_t before = diags_.size();
    check_fn(fn);
    if (diags_.size() > before) {
      erred_.insert(fn.source_name());
      if (!fn.instance_of.empty())
        for (size_t i = before; i < diags_.size(); ++i)
          diags_.at(i).note("in `" + fn.name + "`, the instance of `" +
                            fn.instance_of + "` with these dtypes");
    }
    depth_ = saved;
  }
  fn.state = FnInfo::State::Done;
}

// ------------------------------------------------------------ loading

namespace {

ast::Module parse_text(const std::string& path,
                       std::string text,
                       diag::SourceMap& sm,
                       diag::Diagnostics& diags) {
  if (parsed_text(text).size() != text.size()) text.erase(0, 3);
  uint32_t id = sm.add(path, std::move(text));
  lex::Tokens toks = lex::lex(sm, id, diags);
  return parse::parse(toks, id, diags);
}

// The longest chain of imports below the program (its file is depth 0).
constexpr int kMaxImportDepth = 64;

// [p] made canonical: the key an import is known by.
std::string canonical_key(const std::filesystem::path& p) {
  std::error_code ec;
  std::filesystem::path canon = std::filesystem::weakly_canonical(p, ec);
  return ec ? p.string() : canon.string();
}

// The text of the import whose canonical path is [key]: the editor's
// (Options::import_text), else the disk's, a regular file only (Note
// [Only regular source files] in diag/read_source.cpp). The one reading of
// an import, for loading and for an import set's check that it still
// reads the same.
std::optional<std::string> import_source(const Options& opts,
                                         const std::string& key) {
  std::optional<std::string> text;
  if (opts.import_text) text = opts.import_text(key);
  if (!text) text = diag::read_source(key);
  return text;
}

// What loading a program's imports read, for an import set (Note [Shared
// import sets]).
struct Reading {
  std::string main;  // the program's file, made canonical
  bool met_main = false;
  std::map<std::string, std::optional<uint32_t>> read;  // ImportSet::read
};

// Parses [m]'s imports (depth first, each file once), appending them to
// [out] before [m] itself so declarations are seen in dependency order.
// What is read is noted in [reading] when given.
void load_imports(ast::Module m,
                  const std::string& path,
                  ModuleList::Held& out,
                  std::set<std::string>& seen,
                  diag::SourceMap& sm,
                  diag::Diagnostics& diags,
                  const Options& opts,
                  int depth,
                  Reading* reading) {
  namespace fs = std::filesystem;
  for (const ast::ImportDecl& imp : m.imports) {
    fs::path dir = fs::path(path).parent_path();
    if (depth == 0 && !opts.import_dirs.empty()) {
      uint32_t line = sm.line_col(m.file, imp.span.begin).line;
      if (line >= 1 && line <= opts.import_dirs.size() &&
          !opts.import_dirs[line - 1].empty())
        dir = opts.import_dirs[line - 1];
    }
    fs::path p = dir / imp.path;
    std::string key = canonical_key(p);
    if (seen.count(key)) {
      if (reading && key == reading->main) reading->met_main = true;
      continue;
    }
    seen.insert(key);
    // A bound on the chain (its walk recurses), said as one (issue 32
    // item 9: it read "cannot read the imported file" for a file there).
    if (depth >= kMaxImportDepth) {
      diags
          .error(diag::Code::E0204,
                 imp.span,
                 "imports nested too deeply: \"" + imp.path + "\" would be " +
                     std::to_string(depth + 1) +
                     " files down from the program, over the limit of " +
                     std::to_string(kMaxImportDepth),
                 "imported here")
          .help("import it from a file nearer the program");
      continue;
    }
    std::optional<std::string> text = import_source(opts, key);
    if (!text) {
      if (reading) reading->read[key] = std::nullopt;
      std::error_code ec;
      diags
          .error(diag::Code::E0204,
                 imp.span,
                 "cannot read the imported file \"" + imp.path + "\"",
                 "imported here")
          .note("paths are relative to the importing file: looked for " +
                p.string() +
                (fs::exists(p, ec) && !fs::is_regular_file(p, ec)
                     ? ", which is not a regular file"
                     : ""));
      continue;
    }
    ast::Module sub = parse_text(p.string(), std::move(*text), sm, diags);
    if (reading) reading->read[key] = sub.file;
    load_imports(std::move(sub),
                 p.string(),
                 out,
                 seen,
                 sm,
                 diags,
                 opts,
                 depth + 1,
                 reading);
  }
  out.push_back(std::make_shared<const ast::Module>(std::move(m)));
}

// Loads [main]'s imports from an import set of opts.import_sets, or as
// load_imports does, making one (Note [Shared import sets]). The set
// taken or made; null when none may be kept.
std::shared_ptr<const ImportSet> load_with_set(ast::Module main,
                                               const std::string& path,
                                               const std::string& main_key,
                                               ModuleList::Held& out,
                                               diag::SourceMap& sm,
                                               diag::Diagnostics& diags,
                                               const Options& opts) {
  namespace fs = std::filesystem;
  std::vector<std::string> roots, root_keys;
  for (const ast::ImportDecl& imp : main.imports) {
    fs::path p = fs::path(path).parent_path() / imp.path;
    roots.push_back(p.string());
    root_keys.push_back(canonical_key(p));
  }
  auto read_now = [&](const std::string& key) {
    return import_source(opts, key);
  };
  if (auto set = opts.import_sets->find(roots, root_keys, main_key, read_now)) {
    for (const auto& f : set->files) sm.add(f);
    out.insert(out.end(), set->modules.begin(), set->modules.end());
    diags.append(set->diags);
    out.push_back(std::make_shared<const ast::Module>(std::move(main)));
    return set;
  }
  const uint32_t main_file = main.file;
  const size_t first_diag = diags.size(), first_file = sm.size(),
               first_module = out.size();
  Reading reading{main_key, false, {}};
  std::set<std::string> seen{main_key};
  load_imports(std::move(main), path, out, seen, sm, diags, opts, 0, &reading);
  if (reading.met_main || diags.dropped() > 0) return nullptr;
  auto set = std::make_shared<ImportSet>();
  for (size_t i = first_diag; i < diags.size(); ++i) {
    const diag::Diagnostic& d = diags.list()[i];
    if (d.span.file == main_file) return nullptr;  // an import not read
    set->diags.error(d.code, d.span, d.message) = d;
  }
  set->roots = std::move(roots);
  set->root_keys = std::move(root_keys);
  for (uint32_t f = first_file; f < sm.size(); ++f)
    set->files.push_back(sm.shared(f));
  set->modules.assign(out.begin() + first_module, out.end() - 1);
  set->read = std::move(reading.read);
  opts.import_sets->keep(set);
  return set;
}

}  // namespace

std::unique_ptr<Program> check_source(const std::string& path,
                                      std::string text,
                                      diag::SourceMap& sm,
                                      diag::Diagnostics& diags,
                                      const Options& opts) {
  // Note [Shared import sets]: a set numbers the files of the programs
  // checked with it from 0, the stdlib's.
  const bool sets = opts.import_sets && opts.stdlib &&
                    opts.import_dirs.empty() && sm.size() == 0;
  ModuleList::Held modules;
  uint32_t stdlib_file = UINT32_MAX;
  if (sets) {
    stdlib_file = sm.add(shared_stdlib().file);
    modules.push_back(shared_stdlib().module);
  } else if (opts.stdlib) {
    modules.push_back(std::make_shared<const ast::Module>(
        parse_text("<stdlib>", stdlib_source(), sm, diags)));
    stdlib_file = modules.back()->file;
  }
  const std::string main_key = canonical_key(path);
  ast::Module main = parse_text(path, std::move(text), sm, diags);
  std::shared_ptr<const ImportSet> set;
  if (sets) {
    set = load_with_set(
        std::move(main), path, main_key, modules, sm, diags, opts);
  } else {
    std::set<std::string> seen{main_key};
    load_imports(
        std::move(main), path, modules, seen, sm, diags, opts, 0, nullptr);
  }
  std::unique_ptr<Program> prog;
  if (diags.empty()) {
    Checker c(sm, diags, opts);
    c.stdlib_file_ = stdlib_file;
    prog = c.run(std::move(modules), std::move(set));
  }
  diags.sort();
  return diags.empty() || opts.keep_on_error ? std::move(prog) : nullptr;
}

std::unique_ptr<Program> check_file(const std::string& path,
                                    diag::SourceMap& sm,
                                    diag::Diagnostics& diags,
                                    const Options& opts) {
  std::optional<std::string> text = diag::read_source(path);
  if (!text) return nullptr;  // the driver reports IO
  return check_source(path, std::move(*text), sm, diags, opts);
}

// ------------------------------------------------------------ --types

std::string fn_signature(const FnInfo& f) {
  const ast::FnDecl& d = *f.decl;
  std::string out = d.is_spmd ? "spmd fn " : d.is_extern ? "extern fn " : "fn ";
  out += f.name + "(";
  for (size_t i = 0; i < f.params.size(); ++i) {
    const ParamInfo& pi = f.params[i];
    out += (i ? ", " : "") + std::string(pi.mut ? "mut " : "") + pi.name +
           ": " + pi.type.str();
  }
  out += ")";
  if (f.has_result) {
    out += " -> ";
    const types::Type& r = f.inferred_logs ? *f.inferred_logs : f.result;
    out += r.str();
    if (r.kind == types::Type::Kind::Logs && !r.open) {
      out += "{";
      for (size_t i = 0; i < r.fields.size(); ++i)
        out += (i ? ", " : "") + r.fields[i].first + ": " +
               r.fields[i].second.str();
      out += "}";
    }
  }
  return out;
}

std::string describe_types(const Program& p) {
  std::string out;
  for (const ast::Module& m : p.modules())
    for (const ast::FnDecl& d : m.fns) {
      const FnInfo* f = p.fn(d.name);
      if (!f || f->decl != &d || f->is_stdlib) continue;
      out += fn_signature(*f);
      out += std::string("  # ") + placement_words(f->placement) + "\n";
      for (const auto& [name, t] : f->locals)
        out += "    " + name + ": " + t.str() + "\n";
    }
  return out;
}

}  // namespace ss::check
