// Note [Repl inputs]
// A declaration (a line starting with fn, model, data, dim, devices, mesh,
// import, spmd or extern) joins the session's declarations if the whole set
// still checks. Statements become the body of a synthetic fn whose
// parameters are the session's locals (models and optimizers `mut`), so
// the checker sees them with their types; they run in a frame holding the
// locals' values, and every local they declare joins the session. A
// trailing expression prints its value with its type. Every line typed
// joins the session's transcript, `<repl>`, whose lines count over the
// whole session as ghci counts them; the checked text maps each of its
// lines back to the transcript or to the file `:load` read, so errors show
// what the user wrote (Note [Source origins] in diag/source.cpp).
//
// Note [Repl redefinition]
// A declaration of a name the session has (a fn, model, data record or
// dim; the devices line, the mesh; an import of the same path) replaces
// the old one, as re-running a cell does in IPython and a new binding does
// in ghci; `:load FILE` again after editing FILE replaces what it declared.
// The whole new set is checked: a replacement that breaks a declaration
// using it is refused with that error, and the session keeps the old one.
// Within one input (a file) a name declared twice is still E0202.
//
// Values made with the old definition. A PyTorch user who edits a forward
// or a loss and re-runs the cell expects the model in hand, trained for an
// hour, to go on working with the new code; here fns are apart from
// models, so redefining a fn never touches a value. A value whose layout
// the redefinition leaves as it was (the same fields, shapes and dtypes:
// an initializer or a fn changed) keeps working too. A value whose layout
// changed (a model's or a record's fields, the size of a dim its shape
// holds; an optimizer or Grads of such a model) no longer fits its type.
// Python would keep the old object under its old class, and the first line
// that reaches a new field fails deep inside (AttributeError), as
// load_state_dict refuses it with missing keys; ghci keeps it under a type
// the user can no longer write (`Ghci1.T`). A typed session cannot hold
// two Mlps under one name, so it drops the value, and naming it is E0201
// saying which redefinition dropped it and how to make it again.
#include "interp/cli/repl.h"

#include <editline/readline.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>

#include "interp/cli/commands.h"
#include "interp/cli/help.h"
#include "interp/cli/host_options.h"
#include "interp/cli/repl_values.h"
#include "interp/devices/devices.h"
#include "interp/embed/host_types.h"
#include "interp/eval/format.h"

namespace ss::cli {

using VK = eval::Value::Kind;
using TK = types::Type::Kind;

volatile int Repl::interrupted = 0;

namespace {

constexpr const char* kDeclWords[] = {"fn ",
                                      "model ",
                                      "data ",
                                      "dim ",
                                      "devices",
                                      "mesh ",
                                      "import ",
                                      "spmd ",
                                      "extern "};

bool is_declaration(const std::string& text) {
  for (const char* w : kDeclWords)
    if (text.rfind(w, 0) == 0) return true;
  return false;
}

bool writable(const types::Type& t) {
  switch (t.kind) {
    case TK::Error:
    case TK::Unit:
    case TK::TypeValue:
    case TK::AxisArg:
    case TK::Init:
    case TK::Bool:
      return false;
    case TK::Tuple:
    case TK::List:
      for (const auto& e : t.elems)
        if (!writable(e)) return false;
      return true;
    default:
      return true;
  }
}

// Note [What a session keeps]
// An input is checked as a fn whose parameters are the session's locals
// (Note [Repl inputs]). Passing every local made each input's check, and
// the program kept for it, grow with the session: 1,000 `let` inputs took
// 2.7 s and 586 MB, 2,000 four times that (issue 32, item 8). So an
// input's fn takes only the locals its text names (every identifier-like
// word in it, strings and comments included: a few extra parameters are
// harmless, and an f-string names locals inside its quotes); the others
// are carried over as they are. And a checked program is kept only while
// something may point into it: a local whose type names a model or record
// (a type holds their infos) or whose value holds an object (a model's
// store names its ModelInfo, a sink its file); while no local does, the
// inputs' programs are dropped, so a session of numbers, strings and
// tensors holds none of them. (A session holding a model still keeps each
// input's program, as before.)
std::set<std::string> words_in(const std::string& text) {
  std::set<std::string> out;
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (!(std::isalpha(c) || c == '_')) {
      ++i;
      continue;
    }
    size_t j = i;
    while (
        j < text.size() &&
        (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_'))
      ++j;
    out.insert(text.substr(i, j - i));
    i = j;
  }
  return out;
}

// Whether [t] names no model or record anywhere (nothing of a program's).
bool plain(const types::Type& t) {
  if (t.record || t.model) return false;
  for (const types::Type& e : t.elems)
    if (!plain(e)) return false;
  for (const auto& [n, f] : t.fields)
    if (!plain(f)) return false;
  return true;
}

// Whether [v] holds no object and no type (nothing of a program's).
bool plain(const eval::Value& v) {
  if (v.obj || v.type) return false;
  if (v.items)
    for (const eval::Value& i : *v.items)
      if (!plain(i)) return false;
  return true;
}

// The transcript's name, which the checked text also goes by.
constexpr const char* kTranscript = devices::protocol::kSessionName;

}  // namespace

Repl::Repl(std::ostream& out,
           std::ostream& err,
           std::string devices,
           bool deterministic)
    : out_(out),
      err_(err),
      devices_(std::move(devices)),
      deterministic_(deterministic) {
  origins_.push_back({kTranscript, ""});
  check::Options opts;
  opts.devices_override = devices_;
  opts.deterministic = deterministic_;
  workers_ =
      std::make_unique<devices::controller::ReplDevices>(opts, &interrupted);
}

Repl::~Repl() = default;

void Repl::set_remote(devices::controller::ReplDevices::RemoteFor f) {
  workers_->set_remote(std::move(f));
}

bool Repl::needs_more(const std::string& partial) {
  int depth = 0;
  bool in_str = false;
  for (size_t i = 0; i < partial.size(); ++i) {
    char c = partial[i];
    if (in_str) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_str = false;
      continue;
    }
    if (c == '"')
      in_str = true;
    else if (c == '#') {
      while (i < partial.size() && partial[i] != '\n') ++i;
    } else if (c == '(' || c == '[' || c == '{')
      ++depth;
    else if (c == ')' || c == ']' || c == '}')
      --depth;
  }
  if (depth > 0) return true;
  // A block: lines after one ending in ':' continue until a blank line.
  std::string last;
  std::istringstream in(partial);
  std::string line;
  bool block = false;
  while (std::getline(in, line)) {
    size_t e = line.find_last_not_of(" \t\r");
    if (e != std::string::npos && line[e] == ':') block = true;
    last = line;
  }
  bool ends_blank = !partial.empty() && partial.back() == '\n' &&
                    last.find_first_not_of(" \t\r") == std::string::npos;
  return block && !ends_blank;
}

std::vector<size_t> Repl::named_locals(const std::string& text) const {
  std::vector<size_t> at;
  for (const std::string& w : words_in(text))
    if (auto it = local_index_.find(w); it != local_index_.end())
      at.push_back(it->second);
  std::sort(at.begin(), at.end());
  return at;
}

std::string Repl::signature(const std::vector<size_t>& passed) const {
  std::string s;
  for (size_t k : passed) {
    const Local& l = locals_[k];
    bool mut = l.type.kind == TK::Model || l.type.kind == TK::Optim;
    s += (s.empty() ? "" : ", ") + std::string(mut ? "mut " : "") + l.name +
         ": " + embed::param_type(l.type, k);
  }
  return s;
}

void Repl::set_locals(std::vector<Local> locals) {
  locals_ = std::move(locals);
  local_index_.clear();
  pointing_ = 0;
  for (size_t k = 0; k < locals_.size(); ++k) {
    local_index_[locals_[k].name] = k;
    pointing_ += points_into(locals_[k]);
  }
}

bool Repl::points_into(const Local& l) {
  return !plain(l.type) || !plain(l.value);
}

ReplText Repl::program(const std::string& header,
                       const std::string& body,
                       Typed at,
                       const std::string& pad) const {
  // The declarations first, as the workers check them alone: their spans
  // are the same in both texts (Note [Repl sessions on devices]).
  ReplText t;
  for (const ReplDecl& d : decls_) t.add(d);
  t.generated(header);
  t.add(body, 0, at.line, pad, at.column);
  t.generated("\n");
  return t;
}

std::unique_ptr<check::Program> Repl::check(const ReplText& text,
                                            diag::SourceMap& sm,
                                            diag::Diagnostics& diags,
                                            const std::string& prompt_fn) {
  check::Options opts;
  opts.devices_override = devices_;
  opts.deterministic = deterministic_;
  opts.prompt_fn = prompt_fn;
  return devices::protocol::check_session_text(
      text.session(origins_), sm, diags, opts);
}

void Repl::print_errors(const diag::Diagnostics& d, const diag::SourceMap& sm) {
  // A local a redefinition dropped is an unknown name now; say why.
  diag::Diagnostics shown;
  for (const diag::Diagnostic& e : d.list()) {
    diag::Diagnostic& s = shown.error(e.code, e.span, e.message);
    s = e;
    if (e.code != diag::Code::E0201) continue;
    auto it = dropped_.begin();
    while (it != dropped_.end() &&
           e.message != "unknown name `" + it->first + "`")
      ++it;
    if (it == dropped_.end()) continue;
    // Not a typo: "did you mean" would mislead.
    s.label = it->second.label;
    s.notes.clear();
    s.note(it->second.why);
    s.help(it->second.help);
  }
  err_ << diag::render_terminal(shown, sm);
}

void Repl::declare(const std::string& text, size_t origin, uint32_t line) {
  std::vector<ReplDecl> added = split_declarations(text, origin, line);
  std::set<std::string> keys;
  for (const ReplDecl& d : added) keys.insert(d.key);
  std::vector<ReplDecl> replacing;  // the added ones that redefine a name
  std::vector<ReplDecl> next;
  for (const ReplDecl& d : decls_)
    if (!keys.count(d.key)) next.push_back(d);
  for (const ReplDecl& d : added) {
    for (const ReplDecl& old : decls_)
      if (old.key == d.key) {
        replacing.push_back(d);
        break;
      }
    next.push_back(d);
  }
  ReplText t;
  for (const ReplDecl& d : next) t.add(d);
  auto sm = std::make_unique<diag::SourceMap>();
  diag::Diagnostics diags;
  auto prog = check(t, *sm, diags);
  if (!prog) {
    print_errors(diags, *sm);
    return;
  }
  decls_ = std::move(next);
  if (!replacing.empty() && !kept_.empty())
    drop_stale_locals(*kept_.back().program, *prog, replacing);
  std::string ended = workers_->declare(t.session(origins_), *prog);
  if (!ended.empty()) {
    err_ << "WorkerError: " << ended << "\n";
    drop_lost(origins_[origin].path + ":" + std::to_string(line));
  }
  keep(std::move(prog), std::move(sm), /*statement=*/false);
}

void Repl::drop_stale_locals(const check::Program& before,
                             const check::Program& now,
                             const std::vector<ReplDecl>& replacing) {
  std::vector<Local> kept;
  for (Local& l : locals_) {
    if (layout(l.type, before) == layout(l.type, now)) {
      kept.push_back(std::move(l));
      continue;
    }
    std::set<std::string> names;
    names_in(l.type, before, names);
    std::string why = "`" + l.name + "` was made with an earlier definition";
    for (const ReplDecl& d : replacing)
      if (names.count(d.key)) {
        why += " of `" + d.key + "`, replaced at " + origins_[d.origin].path +
               ":" + std::to_string(d.line) + ":1";
        break;
      }
    dropped_[l.name] = {
        "dropped by a redefinition",
        why + "; its fields or shapes changed, so the session dropped it",
        "make it again with the new definition"};
  }
  set_locals(std::move(kept));
}

void Repl::statements(const std::string& text, Typed at) {
  std::string name = "__repl_" + std::to_string(++counter_);
  // Note [What a session keeps]: the locals the input names.
  const std::vector<size_t> passed = named_locals(text);
  ReplText t =
      program("fn " + name + "(" + signature(passed) + "):\n", text, at);
  auto sm = std::make_unique<diag::SourceMap>();
  diag::Diagnostics diags;
  auto prog = check(t, *sm, diags, name);
  if (!prog) {
    print_errors(diags, *sm);
    return;
  }
  const check::FnInfo* info = prog->fn(name);
  // GPUs the machine lacks (or an ss without the CUDA module): said at
  // each input, as `ss run` says it, and the session goes on.
  if (std::string why = devices::unavailable_devices(*prog); !why.empty()) {
    out_.flush();
    err_ << "ValueError: the session asks for " << prog->devices().kind
         << " devices, but " << why
         << "; start the repl with --devices cpu or --devices 'cpu[0 1 2]'\n";
    return;
  }
  eval::Interpreter in(*prog, *sm, out_);
  in.set_interrupt_flag(&interrupted);
  // One device in deterministic mode: the chunks a rank runs (several
  // devices' context is the workers' session's, below).
  std::unique_ptr<devices::Context> one = devices::one_device_context(*prog);
  in.set_device_hooks(one.get());
  eval::Frame frame;
  frame.fn = info;
  frame.scopes.emplace_back();
  for (size_t k : passed) frame.declare(locals_[k].name, locals_[k].value);
  eval::Value last;
  try {
    auto run = [&] { last = in.exec_in(info->decl->body, frame); };
    const ast::Block& body = info->decl->body;
    if (prog->devices().count() > 1)
      workers_->run(in, body.empty() ? diag::Span{} : body.front()->span, run);
    else
      run();
  } catch (const eval::RuntimeError& e) {
    out_.flush();
    err_ << eval::render_runtime_error(e, *sm);
    interrupted = 0;
    drop_lost(sm->location(e.span()));
    return;  // the session keeps its state from before this input
  }
  // The locals it did not name go on as they were; new and rebound ones
  // join the session, in place (Note [What a session keeps]).
  bool gone = false;  // a local whose new type cannot be a parameter
  for (const auto& [n, v] : frame.scopes[0]) {
    types::Type t;
    for (const check::ParamInfo& p : info->params)
      if (p.name == n) t = p.type;
    for (const auto& [ln, lt] : info->locals)
      if (ln == n) t = lt;
    auto it = local_index_.find(n);
    if (!writable(t)) {
      if (it != local_index_.end()) {
        locals_[it->second].name.clear();  // removed below
        gone = true;
      }
      continue;
    }
    Local l{n, t, v};
    if (it == local_index_.end()) {
      local_index_[n] = locals_.size();
      locals_.push_back(std::move(l));
      pointing_ += points_into(locals_.back());
    } else {
      pointing_ -= points_into(locals_[it->second]);
      locals_[it->second] = std::move(l);
      pointing_ += points_into(locals_[it->second]);
    }
    dropped_.erase(n);  // made again
  }
  if (gone) {
    std::vector<Local> next;
    for (Local& l : locals_)
      if (!l.name.empty()) next.push_back(std::move(l));
    set_locals(std::move(next));
  }
  const ast::Block& body = info->decl->body;
  if (!body.empty() && body.back()->kind == ast::Stmt::Kind::Expr &&
      last.kind != VK::Unit) {
    const types::Type& t = prog->type_of(body.back()->value.get());
    std::string shown = eval::format_value(last, &t);
    if (last.kind == VK::Tensor)
      out_ << shown << "\n";
    else
      out_ << shown << "  : " << t.str() << "\n";
  }
  keep(std::move(prog), std::move(sm), /*statement=*/true);
}

void Repl::keep(std::unique_ptr<check::Program> prog,
                std::unique_ptr<diag::SourceMap> sm,
                bool statement) {
  // Note [What a session keeps].
  if (statement && pointing_ == 0) {
    std::erase_if(kept_, [](const Kept& k) { return k.statement; });
    return;
  }
  kept_.push_back({std::move(prog), std::move(sm), statement});
}

void Repl::drop_lost(const std::string& where) {
  std::vector<Local> kept;
  for (Local& l : locals_) {
    std::string why = workers_->lost(l.value);
    if (why.empty()) {
      kept.push_back(std::move(l));
      continue;
    }
    dropped_[l.name] = {"its state on the devices is gone",
                        "the devices' state of `" + l.name + "` is gone: " +
                            why + " (the input failed at " + where + ")",
                        "make it again, or load it from a checkpoint"};
  }
  set_locals(std::move(kept));
}

bool Repl::command(const std::string& line, Typed at) {
  size_t cmd_end = std::min(line.find_first_of(" \n"), line.size());
  std::string cmd = line.substr(0, cmd_end);
  size_t b = line.find_first_not_of(' ', cmd_end);
  std::string rest = b == std::string::npos ? "" : line.substr(b);
  Typed rest_at{at.line, at.column + uint32_t(b == std::string::npos ? 0 : b)};
  if (cmd == ":quit" || cmd == ":q") return false;
  if (cmd == ":help") {
    out_ << "Type declarations (fn, model, data, dim, ...) and statements;\n"
            "declaring a name again replaces it.\n"
            "  :type EXPR     the type of an expression\n"
            "  :explain NAME  a fn's signature and the devices report for it\n"
            "  :devices       the device list in effect\n"
            "  :load FILE     add a file's declarations (again: replace them)\n"
            "  :reset         forget every declaration and local (and end\n"
            "                 the workers of a session on several devices)\n"
            "  :help          this text\n"
            "  :quit          leave (or Ctrl-D)\n"
            "Ctrl-C stops a running statement (and the workers' call) and\n"
            "keeps the session.\n";
  } else if (cmd == ":type") {
    ReplText t =
        program("fn __repl_type(" + signature(named_locals(rest)) + "):\n",
                rest,
                rest_at,
                "    let __t = ");
    auto sm = std::make_unique<diag::SourceMap>();
    diag::Diagnostics diags;
    auto prog = check(t, *sm, diags);
    if (!prog) {
      print_errors(diags, *sm);
    } else {
      for (const auto& [n, t] : prog->fn("__repl_type")->locals)
        if (n == "__t") out_ << rest << " : " << t.str() << "\n";
    }
  } else if (cmd == ":devices") {
    std::string d = devices_;
    if (d.empty() && !kept_.empty()) {
      const auto& dl = kept_.back().program->devices();
      d = dl.kind;
      if (!dl.ids.empty()) {
        d += "[";
        for (size_t i = 0; i < dl.ids.size(); ++i)
          d += (i ? " " : "") + std::to_string(dl.ids[i]);
        d += "]";
      }
    }
    out_ << "devices " << (d.empty() ? "cpu" : d) << "\n";
  } else if (cmd == ":explain") {
    explain(rest);
  } else if (cmd == ":load") {
    load(rest);
  } else if (cmd == ":reset") {
    workers_->reset();
    decls_.clear();
    set_locals({});
    dropped_.clear();
    out_ << "session reset\n";
  } else {
    err_ << "unknown command " << cmd << " (:help lists them)\n";
  }
  return true;
}

void Repl::explain(const std::string& name) {
  if (kept_.empty() || !kept_.back().program->fn(name)) {
    err_ << "no fn `" << name << "` in this session\n";
    return;
  }
  const check::Program& prog = *kept_.back().program;
  std::istringstream lines(check::describe_types(prog));
  std::string l;
  bool on = false;
  while (std::getline(lines, l)) {
    bool header = l.rfind("    ", 0) != 0;
    if (header) on = l.find(" " + name + "(") != std::string::npos;
    if (on) out_ << l << "\n";
  }
  // ss explain's report (devices.md), of this fn only: where it runs, its
  // values' layouts, what its lines send on the session's devices.
  namespace comms = check::comms;
  comms::DeviceTable t = comms::build_table(prog, *kept_.back().source);
  std::erase_if(t.fns, [&](const comms::FnEntry& f) { return f.name != name; });
  std::erase_if(t.values,
                [&](const comms::ValueLayout& v) { return v.fn != name; });
  std::erase_if(t.lines,
                [&](const comms::LineSends& s) { return s.fn != name; });
  out_ << comms::render_report(t);
}

void Repl::load(const std::string& path) {
  // Only a regular file: opening a FIFO blocked until a writer came, and
  // /dev/zero read forever, with Ctrl-C ignored (issue 32 item 8), as the
  // checker's imports and the data loaders refuse them.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    err_ << "IOError: cannot read '" << path << "': "
         << (std::filesystem::exists(path, ec) ? "not a regular file"
                                               : "no such file")
         << "\n";
    return;
  }
  std::ifstream f(path);
  if (!f) {
    err_ << "IOError: cannot read '" << path << "'\n";
    return;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  origins_.push_back({path, ss.str()});
  declare(origins_.back().text, origins_.size() - 1, 1);
}

bool Repl::handle(const std::string& input) {
  std::string& transcript = origins_[0].text;
  uint32_t first_line =
      1 + uint32_t(std::count(transcript.begin(), transcript.end(), '\n'));
  transcript += input;
  if (!transcript.empty() && transcript.back() != '\n') transcript += '\n';
  std::string text = input;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  size_t b = text.find_first_not_of(" \n");
  if (b == std::string::npos) return true;
  // Where the text starts in the transcript (after blank lines and spaces).
  size_t nl = text.rfind('\n', b);
  Typed at{
      first_line + uint32_t(std::count(text.begin(), text.begin() + b, '\n')),
      uint32_t(b - (nl == std::string::npos ? 0 : nl + 1)) + 1};
  if (text[b] == ':') return command(text.substr(b), at);
  if (is_declaration(text))
    declare(text, 0, first_line);
  else
    statements(text.substr(b), at);
  return true;
}

namespace {

void on_sigint(int) {
  Repl::interrupted = 1;
}

}  // namespace

int run_repl(const std::vector<std::string>& args) {
  std::string file, devices;
  bool deterministic = false;
  HostOptions hosts;
  for (size_t i = 0; i < args.size(); ++i) {
    if (ProgramOption o = host_option("repl", args, i, hosts);
        o != ProgramOption::NotMine) {
      if (o == ProgramOption::Bad) return kExitUsage;
    } else if (args[i] == "--devices" && i + 1 < args.size()) {
      devices = args[++i];
      if (!valid_device_spec(devices)) {
        std::cerr << "ss repl: bad --devices '" << devices << "'\n";
        return kExitUsage;
      }
    } else if (args[i] == "--deterministic") {
      deterministic = true;
    } else if (args[i] == "--help" || args[i] == "-h") {
      std::cout << command_help("repl");
      return kExitOk;
    } else if (!args[i].empty() && args[i][0] == '-') {
      std::cerr << "ss repl: unknown option '" << args[i] << "'\n"
                << usage_line("repl");
      return kExitUsage;
    } else if (file.empty()) {
      file = args[i];
    } else {
      std::cerr << "ss repl: one FILE only (got '" << file << "' and '"
                << args[i] << "')\n";
      return kExitUsage;
    }
  }
  Repl repl(std::cout, std::cerr, devices, deterministic);
  if (hosts.any()) {
    // A session's device lists differ in their counts: the ranks fill the
    // hosts in order (host_options.h, fit_slots).
    std::optional<dist::RemoteOptions> check;
    if (!remote_options("repl", hosts, 2, check, /*fit_slots=*/true))
      return kExitUsage;
    repl.set_remote([hosts](int world) {
      std::optional<dist::RemoteOptions> r;
      remote_options("repl", hosts, world, r, /*fit_slots=*/true);
      return r;
    });
  }
  if (!file.empty()) repl.load(file);
  bool tty = isatty(0);
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  std::string history;
  if (const char* home = std::getenv("HOME"))
    history = std::string(home) + "/.ss_history";
  if (tty) {
    using_history();
    if (!history.empty()) read_history(history.c_str());
    std::cout << "ShapeScript repl (:help for commands, Ctrl-D to leave)\n";
  }
  std::string pending;
  while (true) {
    std::string line;
    if (tty) {
      char* raw = readline(pending.empty() ? "ss> " : "... ");
      if (!raw) {
        if (Repl::interrupted) {  // Ctrl-C at the prompt: a fresh line
          Repl::interrupted = 0;
          pending.clear();
          std::cout << "\n";
          continue;
        }
        std::cout << "\n";
        break;
      }
      line = raw;
      if (!line.empty()) add_history(raw);
      std::free(raw);
      if (Repl::interrupted) {
        Repl::interrupted = 0;
        pending.clear();
        continue;
      }
    } else if (!std::getline(std::cin, line)) {
      break;
    }
    pending += line + "\n";
    if (Repl::needs_more(pending)) continue;
    std::string input = pending;
    pending.clear();
    if (!repl.handle(input)) break;
    std::cout.flush();
  }
  if (!pending.empty()) repl.handle(pending);
  if (tty && !history.empty()) write_history(history.c_str());
  return kExitOk;
}

}  // namespace ss::cli
