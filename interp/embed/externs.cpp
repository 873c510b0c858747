// A host language's extern fns (embed.h, set_extern_call), behind the
// evaluator's ExternHost (Note [Extern fns of a host language] in
// interp/eval/extern_host.h).
#include "interp/embed/held.h"
#include "interp/embed/host_types.h"
#include "interp/embed/session_impl.h"
#include "interp/eval/extern_host.h"

namespace ss::embed {

namespace {

class HostExterns : public eval::ExternHost {
 public:
  explicit HostExterns(ExternCall call) : call_(std::move(call)) {}

  eval::Value call(const std::string& target,
                   const std::vector<eval::Value>& args) override {
    std::vector<Value> given;
    for (const eval::Value& a : args) {
      auto h = std::make_shared<Held>();
      h->value = a;
      h->type = type_of_value(a);
      given.push_back(Value(std::move(h)));
    }
    Arg r;
    try {
      r = call_(target, given);
    } catch (const HostException& e) {
      throw eval::HostRaised(e.what(), e.payload);
    }
    switch (r.kind) {
      case Arg::Kind::Tensor:
        return eval::Value::tensor(r.tensor);
      case Arg::Kind::Int:
        return eval::Value::integer(r.i);
      case Arg::Kind::Float:
        return eval::Value::floating(r.f);
      case Arg::Kind::Bool:
        return eval::Value::boolean(r.b);
      case Arg::Kind::Held:
        return r.held.held() ? r.held.held()->value : eval::Value::unit();
      default:
        return eval::Value::unit();
    }
  }

 private:
  ExternCall call_;
};

}  // namespace

const char* host_note() {
  return eval::kHostNote;
}

void set_extern_call(ExternCall call) {
  // Kept for the process's life: the evaluator holds a plain pointer.
  static HostExterns* host = nullptr;
  delete host;
  host = new HostExterns(std::move(call));
  eval::set_extern_host(host);
}

std::vector<std::pair<std::string, std::string>> Session::externs() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, fn] : impl_->decl_prog->fns()) {
    if (!fn.decl || fn.is_stdlib) continue;
    const std::string& t = fn.decl->extern_target;
    if (!t.empty() && t.rfind("nn.", 0) != 0) out.push_back({name, t});
  }
  return out;
}

}  // namespace ss::embed
