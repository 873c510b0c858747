// Async dispatch in the controller of a run on several devices: the
// controller context's side, which finds the statements to send ahead
// (the calls' side is interp/devices/controller/controller.cpp).
//
// Note [Async dispatch]
// A training loop's body is usually one statement, `out.write(step(m, opt,
// batch))`: the controller sends the call to the workers and then only
// waits for the result to write it. Waiting costs a round trip per step
// (the workers' reply, the controller's wake-up, its next message, the
// workers' wake-up: 0.3-0.5 ms on two busy cores, a quarter of a small
// step), so, like JAX's asynchronous dispatch, the controller goes on
// instead: such a statement sends the call and continues, and the result
// is written when it arrives. The workers find the next call already
// queued when they finish one.
//
// What the program sees stays as on one device:
// * Only two statement forms are dispatched so: a worker fn's call whose
//   result is dropped, and `NAME.write(f(...))` with NAME a sink. Any
//   other use of a result (a `let`, an `if`, an argument) waits for it.
// * Everything the program could observe settles first, in call order
//   (Interpreter::settle, ControllerContext::settle): every builtin (print,
//   save, another write, progress, reading m.w1, ...), every runtime error, the
//   end of a progress bar's loop and of main. A progress bar drawn on a
//   terminal may show the logs of one step before.
// * A call's error is raised when it settles, with the `.ss` stack it
//   was sent from; a call sent after it doesn't run (the workers skip a
//   call whose call before failed), so the models are as on one device.
#include "interp/devices/controller/controller_context.h"
#include "interp/eval/interpreter.h"
#include "interp/eval/runtime_error.h"
#include "interp/eval/runtime_lib.h"

namespace ss::devices::controller {

using EK = ast::Expr::Kind;
using VK = eval::Value::Kind;

bool ControllerContext::goes_to_workers(eval::Interpreter& in,
                                        const check::FnInfo& fn) {
  return !fn.decl->is_extern && eval::enters_workers(in, fn);
}

std::optional<eval::Value> ControllerContext::call(
    eval::Interpreter& in,
    const check::FnInfo& fn,
    std::vector<eval::Value>& args,
    diag::Span site) {
  // An spmd fn called from ordinary code: an instance on each worker.
  if (fn.decl->is_spmd && !in.mesh()) return c_.call_spmd(fn, args, site);
  if (!goes_to_workers(in, fn)) return std::nullopt;
  Later later;
  if (later_ && later_->site == site) {
    later = std::move(later_->then);
    later_.reset();
  }
  return c_.call(fn, args, site, std::move(later));
}

void ControllerContext::settle() {
  if (settling_) return;
  settling_ = true;
  struct Reset {
    bool& flag;
    ~Reset() { flag = false; }
  } reset{settling_};
  c_.settle();
}

bool ControllerContext::dispatch_later(eval::Interpreter& in,
                                       const ast::Expr& e,
                                       eval::Frame& f) {
  if (e.kind != EK::Call) return false;
  const check::Program& prog = in.program();
  const check::ExprInfo* info = prog.info(&e);
  if (!info) return false;
  const check::Resolution& r = info->resolution;
  struct Clear {
    std::optional<LaterCall>& later;
    ~Clear() { later.reset(); }
  } clear{later_};
  // `f(...)`, its result dropped.
  if (r.kind == check::Resolution::Kind::Fn && r.fn) {
    if (!goes_to_workers(in, *r.fn)) return false;
    later_ = LaterCall{e.span, [](eval::Value) {}};
    in.eval(e, f);
    return true;
  }
  // `out.write(f(...))`: the receiver is a name (reading it twice is
  // harmless), the one argument a worker fn's call.
  if (r.kind != check::Resolution::Kind::Builtin || !r.op ||
      r.op->device.host != ops::HostEffect::WritesSink || !e.callee ||
      e.callee->kind != EK::Field || e.callee->lhs->kind != EK::Name ||
      e.args.size() != 1 || !e.args[0].keyword.empty())
    return false;
  const ast::Expr& arg = *e.args[0].value;
  const check::ExprInfo* arg_info =
      arg.kind == EK::Call ? prog.info(&arg) : nullptr;
  if (!arg_info || arg_info->resolution.kind != check::Resolution::Kind::Fn ||
      !arg_info->resolution.fn ||
      !goes_to_workers(in, *arg_info->resolution.fn))
    return false;
  eval::Value sink = in.eval(*e.callee->lhs, f);
  if (sink.kind != VK::Sink) return false;
  const ops::OpDef& op = *r.op;
  std::vector<eval::StackEntry> stack = in.stack();
  later_ = LaterCall{
      arg.span, [&in, &e, &op, info, sink, stack](eval::Value v) {
        // The write as the statement would have made it, with its stack.
        struct Restore {
          eval::Interpreter& in;
          std::vector<eval::StackEntry> saved;
          ~Restore() { in.exchange_stack(std::move(saved)); }
        } restore{in, in.exchange_stack(stack)};
        eval::Frame none;
        eval::BuiltinCall c{in, none, op, e.span, &e, info, {}, {}, {}, {}, {}};
        c.args.assign(op.params.size(), eval::Value::unit());
        c.given.assign(op.params.size(), false);
        c.exprs.assign(op.params.size(), nullptr);
        c.args[0] = sink;
        c.args[1] = std::move(v);
        c.given[0] = c.given[1] = true;
        c.exprs[0] = e.callee->lhs.get();
        c.exprs[1] = e.args[0].value.get();
        eval::call_builtin_prepared(c);
      }};
  in.eval(arg, f);
  return true;
}

}  // namespace ss::devices::controller
