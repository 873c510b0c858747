// embed::Session: a program loaded for a host language, and its calls
// (Note [Host calls are checked as ShapeScript] in embed.h).
#include <fstream>
#include <set>
#include <sstream>

#include "diag/diagnostic.h"
#include "interp/check/checker.h"
#include "interp/devices/controller/repl_devices.h"
#include "interp/devices/one_device.h"
#include "interp/devices/protocol/session_text.h"
#include "interp/embed/check_options.h"
#include "interp/embed/embed.h"
#include "interp/embed/errors.h"
#include "interp/embed/held.h"
#include "interp/embed/host_types.h"
#include "interp/embed/session_impl.h"
#include "interp/eval/interpreter.h"
#include "interp/eval/objects.h"

namespace ss::embed {

using VK = eval::Value::Kind;
using TK = types::Type::Kind;
namespace protocol = devices::protocol;

namespace {

// Appends [text], the file [path] (ended by a newline), to [t], each line
// of it from that file.
void append_file(protocol::SessionText& t,
                 const std::string& path,
                 const std::string& text) {
  const size_t at = t.text.size();
  t.text += text;
  if (t.text.size() == at || t.text.back() != '\n') t.text += '\n';
  t.files.push_back({path, text});
  const auto file = static_cast<uint32_t>(t.files.size() - 1);
  uint32_t lines = 0;
  for (size_t i = at; i < t.text.size(); ++i) lines += t.text[i] == '\n';
  for (uint32_t k = 0; k < lines; ++k) t.lines.push_back({file, k + 1, 0});
}

bool is_mut(const types::Type& t) {
  return t.kind == TK::Model || t.kind == TK::Optim;
}

}  // namespace

Compiled& Session::Impl::compile(const std::string& params,
                                 const std::string& body) {
  std::string key = params + "\n" + body;
  if (auto it = cache.find(key); it != cache.end()) return *it->second;
  auto c = std::make_unique<Compiled>();
  const std::string name = "__host_" + std::to_string(cache.size());
  const std::string host = "fn " + name + "(" + params + "):\n" + body;
  protocol::SessionText t = decls;
  append_file(t, opts.host_name, host);
  c->sm = std::make_unique<diag::SourceMap>();
  diag::Diagnostics diags;
  check::Options o = check_opts;
  o.prompt_fn = name;
  c->prog = protocol::check_session_text(t, *c->sm, diags, o);
  if (!c->prog) throw check_failed(diags, *c->sm);
  c->fn = c->prog->fn(name);
  c->in = std::make_unique<eval::Interpreter>(*c->prog, *c->sm, *out);
  // With workers their session's context hooks in for each call.
  if (!workers) {
    c->one = devices::one_device_context(*c->prog);
    c->in->set_device_hooks(c->one.get());
  }
  // On the deep stack the caller's thread runs the call, so the call
  // looks for the host's Ctrl-C itself.
  std::function<void()> look;
  if (on_stack)
    look = [this] {
      if (poll) poll();
    };
  c->in->set_interrupt_flag(&interrupted, std::move(look));
  return *cache.emplace(key, std::move(c)).first->second;
}

void Session::Impl::as_controller(Compiled& c,
                                  const std::function<void()>& body) {
  try {
    if (workers) {
      const ast::Block& b = c.fn->decl->body;
      workers->run(*c.in, b.empty() ? diag::Span{} : b.front()->span, body);
    } else {
      body();
    }
  } catch (const eval::RuntimeError& e) {
    interrupted = 0;
    throw to_error(e, *c.sm);
  } catch (const std::bad_alloc&) {
    throw Error{"MemoryError", "out of memory"};
  }
}

namespace {

// A host's tensor (a numpy array, a record of them) handed to a session on
// one GPU goes where its values live (Note [Values on a GPU] in
// interp/devices/one_device.cpp), as a torch user moves a batch to the
// model's device; with workers the wire places it.
eval::Value placed(const eval::Value& v, ops::Device device) {
  using VK = eval::Value::Kind;
  if (v.kind == VK::Tensor) return eval::Value::tensor(v.t.to(device));
  if (v.kind != VK::Record) return v;
  const auto& r = *v.as<eval::RecordValue>();
  auto moved = std::make_shared<eval::RecordValue>(r);
  for (auto& [name, t] : moved->fields) t = t.to(device);
  return eval::Value::object(VK::Record, moved);
}

}  // namespace

Value Session::Impl::run(Compiled& c, const std::vector<eval::Value>& args) {
  eval::Frame frame;
  frame.fn = c.fn;
  frame.scopes.emplace_back();
  const ops::Device device = c.one ? c.one->placement().device : ops::Device{};
  for (size_t k = 0; k < args.size(); ++k)
    frame.declare(c.fn->params[k].name,
                  device.kind == ops::Device::Kind::Cpu
                      ? args[k]
                      : placed(args[k], device));
  eval::Value last;
  as_controller(c, [&] { last = c.in->exec_in(c.fn->decl->body, frame); });
  auto h = std::make_shared<Held>();
  h->value = std::move(last);
  const ast::Block& b = c.fn->decl->body;
  if (!b.empty() && b.back()->kind == ast::Stmt::Kind::Expr)
    h->type = c.prog->type_of(b.back()->value.get());
  return Value(std::move(h));
}

// ---------------------------------------------------------------- load

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() {
  // The workers end first, from the thread that started them.
  impl_->deep.run([&] { impl_->workers.reset(); });
}

void Session::set_poll(std::function<void()> poll) {
  impl_->poll = std::move(poll);
}

std::unique_ptr<Session> Session::load(const std::string& path,
                                       const LoadOptions& opts,
                                       std::ostream& out) {
  prepare();
  std::ifstream f(path);
  if (!f) throw Error{"IOError", "cannot read '" + path + "'"};
  std::stringstream text;
  text << f.rdbuf();
  auto impl = std::make_unique<Impl>();
  Impl* I = impl.get();
  impl->deep.run([&] {
    I->opts = opts;
    I->out = &out;
    I->check_opts = check_options(opts);
    // As `ss check` reports them.
    if (CheckReport r = check(path, opts); !r.ok) {
      CheckFailed f;
      f.problems = std::move(r.problems);
      f.text = std::move(r.text);
      throw f;
    }
    append_file(I->decls, path, text.str());
    I->decl_sm = std::make_unique<diag::SourceMap>();
    diag::Diagnostics diags;
    I->decl_prog = protocol::check_session_text(
        I->decls, *I->decl_sm, diags, I->check_opts);
    if (!I->decl_prog) throw check_failed(diags, *I->decl_sm);
    const check::Program& p = *I->decl_prog;
    for (const auto& [n, fn] : p.fns()) I->global_names.insert(n);
    for (const auto& m : p.modules()) {
      for (const auto& d : m.models) I->global_names.insert(d.name);
      for (const auto& d : m.datas) I->global_names.insert(d.name);
    }
    for (const auto& [n, size] : p.dims()) I->global_names.insert(n);
    if (std::string why = devices::unavailable_devices(p); !why.empty())
      throw Error{"ValueError",
                  "the program asks for " + p.devices().kind +
                      " devices, but " + why +
                      "; load it with devices=\"cpu\" or "
                      "devices=\"cpu[0 1 2]\""};
    if (p.devices().count() > 1) {
      I->workers = std::make_unique<devices::controller::ReplDevices>(
          I->check_opts, &I->interrupted);
      I->workers->set_launch([cmd = opts.worker_command,
                              env = opts.worker_env](dist::LaunchOptions& lo) {
        lo.command = cmd;
        lo.env.insert(lo.env.end(), env.begin(), env.end());
      });
      std::string ended = I->workers->declare(I->decls, p);
      if (!ended.empty()) throw Error{"WorkerError", ended};
    }
  });
  impl->on_stack = !impl->workers;
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

// ------------------------------------------------------------ lookups

namespace {

// The modules the user wrote (the stdlib's is first: checker.cpp).
template <class F>
void each_user_module(const check::Program& p, const diag::SourceMap& sm, F f) {
  for (const ast::Module& m : p.modules())
    if (m.file >= sm.size() || sm.file(m.file).path != "<stdlib>") f(m);
}

}  // namespace

std::vector<std::string> Session::fns() const {
  std::vector<std::string> out;
  each_user_module(
      *impl_->decl_prog, *impl_->decl_sm, [&](const ast::Module& m) {
        for (const ast::FnDecl& d : m.fns) out.push_back(d.name);
      });
  return out;
}

std::vector<std::string> Session::models() const {
  std::vector<std::string> out;
  each_user_module(
      *impl_->decl_prog, *impl_->decl_sm, [&](const ast::Module& m) {
        for (const auto& d : m.models) out.push_back(d.name);
      });
  return out;
}

std::vector<std::string> Session::records() const {
  std::vector<std::string> out;
  each_user_module(
      *impl_->decl_prog, *impl_->decl_sm, [&](const ast::Module& m) {
        for (const auto& d : m.datas) out.push_back(d.name);
      });
  return out;
}

std::map<std::string, int64_t> Session::dims() const {
  return impl_->decl_prog->dims();
}

std::vector<std::pair<std::string, std::string>> Session::params(
    const std::string& fn) const {
  std::vector<std::pair<std::string, std::string>> out;
  if (const check::FnInfo* f = impl_->decl_prog->fn(fn))
    for (const check::ParamInfo& p : f->params)
      out.push_back({p.name, (p.mut ? "mut " : "") + p.type.str()});
  return out;
}

std::string Session::result(const std::string& fn) const {
  const check::FnInfo* f = impl_->decl_prog->fn(fn);
  return f && f->has_result ? f->result.str() : "";
}

std::string Session::devices() const {
  const check::DeviceList& d = impl_->decl_prog->devices();
  std::string s = d.kind;
  if (!d.ids.empty()) {
    s += "[";
    for (size_t i = 0; i < d.ids.size(); ++i)
      s += (i ? " " : "") + std::to_string(d.ids[i]);
    s += "]";
  }
  return s;
}

void Session::interrupt() {
  impl_->interrupted = 1;
}

// --------------------------------------------------------------- calls

namespace {

/// A host call's parameters and their values, built argument by argument.
struct HostParams {
  std::string text;  // `mut __a0: Mlp, x: [b D] f32`
  std::vector<eval::Value> values;
  HostSizes sizes;

  /// A parameter named [name] of [type] holding [v]; its name.
  std::string add(const std::string& name,
                  const std::string& type,
                  bool mut,
                  eval::Value v) {
    text += (text.empty() ? "" : ", ") + std::string(mut ? "mut " : "") + name +
            ": " + type;
    values.push_back(std::move(v));
    return name;
  }
};

// The type [a] is declared with, and its value ("" when [a] cannot be a
// parameter: then it is written into the call).
std::string arg_type(const Arg& a,
                     size_t k,
                     const types::Type* want,
                     const std::string& arg_name,
                     const std::string& callee,
                     HostSizes& sizes,
                     eval::Value& v) {
  switch (a.kind) {
    case Arg::Kind::Held:
      if (!a.held.held()) throw Error{"ValueError", "an empty value"};
      v = a.held.held()->value;
      return param_type(a.held.held()->type, k);
    case Arg::Kind::Tensor:
      v = eval::Value::tensor(a.tensor);
      return host_tensor_type(a.tensor, want, arg_name, callee, sizes);
    case Arg::Kind::Int:
      v = eval::Value::integer(a.i);
      return "int";
    case Arg::Kind::Float:
      v = eval::Value::floating(a.f);
      return "float";
    case Arg::Kind::Str:
      v = eval::Value::string(a.s);
      return "str";
    case Arg::Kind::Tuple: {
      std::vector<eval::Value> items;
      std::string t = "(";
      for (size_t i = 0; i < a.items.size(); ++i) {
        const types::Type* w =
            want && want->kind == TK::Tuple && i < want->elems.size()
                ? &want->elems[i]
                : nullptr;
        eval::Value iv;
        std::string it = arg_type(a.items[i],
                                  k,
                                  w,
                                  arg_name + "[" + std::to_string(i) + "]",
                                  callee,
                                  sizes,
                                  iv);
        if (it.empty())
          throw Error{"TypeError",
                      "a tuple passed to ShapeScript holds only tensors, "
                      "numbers, strings and ShapeScript values"};
        t += (i ? ", " : "") + it;
        items.push_back(std::move(iv));
      }
      v = eval::Value::tuple(std::move(items));
      return t + (a.items.size() == 1 ? ",)" : ")");
    }
    case Arg::Kind::Bool:
    case Arg::Kind::Text:
      return "";
  }
  return "";
}

}  // namespace

Value Session::call(const std::string& callee,
                    std::vector<Arg> args,
                    bool method) {
  return impl_->on_deep([&] { return call_here(callee, args, method); });
}

Value Session::call_here(const std::string& callee,
                         const std::vector<Arg>& args,
                         bool method) {
  Impl& I = *impl_;
  const check::FnInfo* fn = method ? nullptr : I.decl_prog->fn(callee);
  HostParams ps;
  std::vector<std::string> written;  // each argument as the call writes it
  for (size_t k = 0; k < args.size(); ++k) {
    const Arg& a = args[k];
    // The callee's parameter this argument fills: the host's tensors take
    // their types from it, and the call reads as the user's would.
    const check::ParamInfo* p = nullptr;
    if (fn) {
      if (!a.keyword.empty()) {
        for (const check::ParamInfo& q : fn->params)
          if (q.name == a.keyword) p = &q;
      } else if (k < fn->params.size()) {
        p = &fn->params[k];
      }
    }
    std::string name = "__a" + std::to_string(k);
    if (p && !I.global_names.count(p->name) && p->name.rfind("__", 0) != 0)
      name = p->name;
    std::string arg_name = p ? p->name : a.keyword.empty() ? name : a.keyword;
    eval::Value v;
    std::string type =
        arg_type(a, k, p ? &p->type : nullptr, arg_name, callee, ps.sizes, v);
    std::string text;
    if (a.kind == Arg::Kind::Bool)
      text = a.b ? "true" : "false";
    else if (a.kind == Arg::Kind::Text)
      text = a.s;
    else if (type.empty())
      throw Error{"TypeError",
                  "argument `" + arg_name + "` of `" + callee +
                      "` cannot be passed from the host"};
    else
      text = ps.add(name,
                    type,
                    a.kind == Arg::Kind::Held && is_mut(a.held.held()->type),
                    std::move(v));
    written.push_back(a.keyword.empty() ? text : a.keyword + "=" + text);
  }
  std::string expr;
  size_t first = 0;
  if (method) {
    if (written.empty())
      throw Error{"TypeError", "a method needs the value it is called on"};
    expr = written[0] + "." + callee;
    first = 1;
  } else {
    expr = callee;
  }
  expr += "(";
  for (size_t i = first; i < written.size(); ++i)
    expr += (i > first ? ", " : "") + written[i];
  expr += ")";
  Compiled& c = I.compile(ps.text, "    " + expr + "\n");
  return I.run(c, ps.values);
}

Value Session::field(const Value& v, const std::string& name) {
  Impl& I = *impl_;
  if (!v.held()) throw Error{"ValueError", "an empty value"};
  const types::Type& t = v.held()->type;
  Value out = I.on_deep([&] {
    HostParams ps;
    ps.add("__a0", param_type(t, 0), is_mut(t), v.held()->value);
    Compiled& c = I.compile(ps.text, "    __a0." + name + "\n");
    return I.run(c, ps.values);
  });
  // Reading a model's param copies it (devices.md: a handle's field is a
  // copy of the first worker's), so the host's copy does not change
  // under it as the model trains.
  if (t.kind == TK::Model && out.kind() == Value::Kind::Tensor) {
    auto h = std::make_shared<Held>(*out.held());
    h->value.t = h->value.t.clone();
    return Value(std::move(h));
  }
  return out;
}

std::vector<std::pair<std::string, ops::Tensor>> Session::state_dict(
    const Value& m) {
  if (!m.held() || m.kind() != Value::Kind::Model)
    throw Error{"TypeError", "state_dict() of a model only"};
  auto* r = m.held()->value.as<eval::ModelRef>();
  return impl_->on_deep([&] {
    std::vector<std::pair<std::string, ops::Tensor>> out;
    try {
      eval::sync(*r->store);
      for (const std::string& p : r->paths(/*params_only=*/false))
        out.push_back({p, r->get(p).clone()});
    } catch (const eval::RuntimeError& e) {
      throw Error{e.kind(), e.message()};
    } catch (const std::exception& e) {
      throw Error{"WorkerError", e.what()};
    }
    return out;
  });
}

// ----------------------------------------------------------- iteration

namespace {

class ObjectCursor : public Session::Cursor {
 public:
  ObjectCursor(Session::Impl& s, Compiled& c, eval::Value v, types::Type elem)
      : s_(s), c_(c), v_(std::move(v)), elem_(std::move(elem)) {}

  std::optional<Value> next() override {
    eval::Value item;
    bool more = s_.on_deep([&] {
      bool got = false;
      s_.as_controller(c_, [&] {
        if (!cur_) {
          auto* it = dynamic_cast<eval::IterableObject*>(v_.obj.get());
          const ast::Block& b = c_.fn->decl->body;
          cur_ = it->cursor(*c_.in, b.empty() ? diag::Span{} : b.front()->span);
        }
        got = cur_->next(item);
      });
      return got;
    });
    if (!more) return std::nullopt;
    auto h = std::make_shared<Held>();
    h->value = std::move(item);
    h->type = elem_;
    return Value(std::move(h));
  }

 private:
  Session::Impl& s_;
  Compiled& c_;
  eval::Value v_;
  types::Type elem_;
  std::unique_ptr<eval::Cursor> cur_;
};

}  // namespace

std::unique_ptr<Session::Cursor> Session::iterate(const Value& v) {
  if (!v.held() ||
      !dynamic_cast<eval::IterableObject*>(v.held()->value.obj.get()))
    throw Error{"TypeError", "not a dataset or batches: it cannot be walked"};
  HostParams ps;
  ps.add("__a0", param_type(v.held()->type, 0), false, v.held()->value);
  // A loop over it, checked for its item's type; never run.
  Compiled& c = *impl_->on_deep([&] {
    return &impl_->compile(
        ps.text, "    for __item in __a0:\n        let __seen = __item\n");
  });
  types::Type elem;
  for (const auto& [n, t] : c.fn->locals)
    if (n == "__item") elem = t;
  return std::make_unique<ObjectCursor>(*impl_, c, v.held()->value, elem);
}

}  // namespace ss::embed
