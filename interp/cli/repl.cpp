// Note [Repl inputs]
// A declaration (a line starting with fn, model, data, dim, devices, mesh,
// import, spmd or extern) joins the session's declarations if the whole set
// still checks. Statements become the body of a synthetic fn whose
// parameters are the session's locals (models and optimizers `mut`), so
// the checker sees them with their types; they run in a frame holding the
// locals' values, and every local they declare joins the session. A
// trailing expression prints its value with its type.
#include "interp/cli/repl.h"

#include <editline/readline.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "interp/cli/commands.h"
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

std::string indent(const std::string& text, const std::string& pad) {
  std::string out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out += pad + line + "\n";
  return out;
}

// A static type as source for a synthetic parameter: size variables get a
// per-local suffix so locals from different inputs don't share them.
std::string param_type(types::Type t, size_t k) {
  std::function<void(types::Axis&)> rename = [&](types::Axis& a) {
    if (a.kind == types::Axis::Kind::Var) a.name += "_" + std::to_string(k);
    a.label.clear();
    for (auto& i : a.items) rename(i);
  };
  std::function<void(types::Type&)> walk = [&](types::Type& x) {
    for (auto& a : x.shape) rename(a);
    x.varying.clear();
    for (auto& e : x.elems) walk(e);
  };
  walk(t);
  if (t.kind == TK::Bool) return "";  // host bools cannot be declared
  if (t.kind == TK::Tensor && t.shape.empty())
    return types::dtype_name(t.dtype);
  return t.str();
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

}  // namespace

Repl::Repl(std::ostream& out, std::ostream& err, std::string devices)
    : out_(out), err_(err), devices_(std::move(devices)) {}

Repl::~Repl() = default;

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

std::string Repl::signature() const {
  std::string s;
  for (size_t k = 0; k < locals_.size(); ++k) {
    const Local& l = locals_[k];
    bool mut = l.type.kind == TK::Model || l.type.kind == TK::Optim;
    s += (s.empty() ? "" : ", ") + std::string(mut ? "mut " : "") + l.name +
         ": " + param_type(l.type, k);
  }
  return s;
}

std::unique_ptr<check::Program> Repl::check(const std::string& body_fn,
                                            diag::SourceMap& sm,
                                            diag::Diagnostics& diags,
                                            size_t& body_offset) {
  // The input first, so its positions are easy to map back.
  std::string text = body_fn + "\n" + decls_;
  body_offset = 0;
  check::Options opts;
  opts.devices_override = devices_;
  return check::check_source("<repl>", text, sm, diags, opts);
}

void Repl::print_errors(const diag::Diagnostics& d,
                        const diag::SourceMap& sm,
                        size_t,
                        size_t) {
  err_ << diag::render_terminal(d, sm);
}

void Repl::declare(const std::string& text) {
  auto sm = std::make_unique<diag::SourceMap>();
  diag::Diagnostics diags;
  check::Options opts;
  opts.devices_override = devices_;
  std::string all = decls_ + text + "\n";
  auto prog = check::check_source("<repl>", all, *sm, diags, opts);
  if (!prog) {
    print_errors(diags, *sm, 0, 0);
    return;
  }
  decls_ = all;
  programs_.push_back(std::move(prog));
  sources_.push_back(std::move(sm));
}

void Repl::statements(const std::string& text) {
  std::string name = "__repl_" + std::to_string(++counter_);
  std::string fn =
      "fn " + name + "(" + signature() + "):\n" + indent(text, "    ");
  auto sm = std::make_unique<diag::SourceMap>();
  diag::Diagnostics diags;
  size_t off;
  auto prog = check(fn, *sm, diags, off);
  if (!prog) {
    print_errors(diags, *sm, 0, 0);
    return;
  }
  const check::FnInfo* info = prog->fn(name);
  eval::Interpreter in(*prog, *sm, out_);
  in.set_interrupt_flag(&interrupted);
  eval::Frame frame;
  frame.fn = info;
  frame.scopes.emplace_back();
  for (const Local& l : locals_) frame.declare(l.name, l.value);
  eval::Value last;
  try {
    last = in.exec_in(info->decl->body, frame);
  } catch (const eval::RuntimeError& e) {
    out_.flush();
    err_ << eval::render_runtime_error(e, *sm);
    interrupted = 0;
    return;  // the session keeps its state from before this input
  }
  // New and rebound locals join the session.
  std::vector<Local> next;
  for (const auto& [n, v] : frame.scopes[0]) {
    types::Type t;
    for (const check::ParamInfo& p : info->params)
      if (p.name == n) t = p.type;
    for (const auto& [ln, lt] : info->locals)
      if (ln == n) t = lt;
    if (!writable(t)) continue;
    next.push_back({n, t, v});
  }
  locals_ = std::move(next);
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
  programs_.push_back(std::move(prog));
  sources_.push_back(std::move(sm));
}

bool Repl::command(const std::string& line) {
  std::istringstream in(line);
  std::string cmd;
  in >> cmd;
  std::string rest;
  std::getline(in, rest);
  size_t b = rest.find_first_not_of(' ');
  rest = b == std::string::npos ? "" : rest.substr(b);
  if (cmd == ":quit" || cmd == ":q") return false;
  if (cmd == ":help") {
    out_ << "Type declarations (fn, model, data, dim, ...) and statements.\n"
            "  :type EXPR     the type of an expression\n"
            "  :explain NAME  a fn's signature and where it runs\n"
            "  :devices       the device list in effect\n"
            "  :load FILE     add a file's declarations to the session\n"
            "  :reset         forget every declaration and local\n"
            "  :help          this text\n"
            "  :quit          leave (or Ctrl-D)\n"
            "Ctrl-C stops a running statement and keeps the session.\n";
  } else if (cmd == ":type") {
    std::string fn =
        "fn __repl_type(" + signature() + "):\n    let __t = " + rest + "\n";
    auto sm = std::make_unique<diag::SourceMap>();
    diag::Diagnostics diags;
    size_t off;
    auto prog = check(fn, *sm, diags, off);
    if (!prog) {
      print_errors(diags, *sm, 0, 0);
    } else {
      for (const auto& [n, t] : prog->fn("__repl_type")->locals)
        if (n == "__t") out_ << rest << " : " << t.str() << "\n";
    }
  } else if (cmd == ":devices") {
    std::string d = devices_;
    if (d.empty() && !programs_.empty()) {
      const auto& dl = programs_.back()->devices();
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
    if (programs_.empty() || !programs_.back()->fn(rest)) {
      err_ << "no fn `" << rest << "` in this session\n";
    } else {
      std::string all = check::describe_types(*programs_.back());
      std::istringstream lines(all);
      std::string l;
      bool on = false;
      while (std::getline(lines, l)) {
        bool header = l.rfind("    ", 0) != 0;
        if (header) on = l.find(" " + rest + "(") != std::string::npos;
        if (on) out_ << l << "\n";
      }
      out_ << "runs on the one device of this session\n";
    }
  } else if (cmd == ":load") {
    std::ifstream f(rest);
    if (!f) {
      err_ << "IOError: cannot read '" << rest << "'\n";
    } else {
      std::stringstream ss;
      ss << f.rdbuf();
      declare(ss.str());
    }
  } else if (cmd == ":reset") {
    decls_.clear();
    locals_.clear();
    out_ << "session reset\n";
  } else {
    err_ << "unknown command " << cmd << " (:help lists them)\n";
  }
  return true;
}

bool Repl::handle(const std::string& input) {
  std::string text = input;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  size_t b = text.find_first_not_of(" \n");
  if (b == std::string::npos) return true;
  if (text[b] == ':') return command(text.substr(b));
  if (is_declaration(text))
    declare(text);
  else
    statements(text.substr(b));
  return true;
}

namespace {

void on_sigint(int) {
  Repl::interrupted = 1;
}

}  // namespace

int run_repl(const std::vector<std::string>& args) {
  std::string file, devices;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--devices" && i + 1 < args.size()) {
      devices = args[++i];
      if (!valid_device_spec(devices)) {
        std::cerr << "ss repl: bad --devices '" << devices << "'\n";
        return kExitUsage;
      }
    } else if (args[i] == "--help") {
      std::cout << "usage: ss repl [FILE] [--devices SPEC]\n";
      return kExitOk;
    } else {
      file = args[i];
    }
  }
  Repl repl(std::cout, std::cerr, devices);
  if (!file.empty()) repl.handle(":load " + file);
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
