// Note [Autocast]: `autocast(f, bf16)` is f run as torch.autocast("cpu",
// dtype=torch.bfloat16) runs it, and every fn f calls likewise (a region,
// as torch's). Each op's table entry says what autocast does with it
// (OpDef::autocast, torch 1.13's CPU lists): products and convolutions
// (`@`, linear, einsum, conv1d, conv2d) run in bf16, so their float
// operands, and a generic model's params (the stdlib's Linear), are cast
// to bf16 first; losses, prod and conv_transpose2d run in f32; every other
// op runs in its operands' dtypes with the usual promotion (gelu of a bf16
// product is bf16, `x + h` of an f32 x and a bf16 h is f32). Params stay
// f32 (the master weights), and since each cast is on the tape their
// gradients come back in f32, as torch's do through its cast.
//
// The checker makes f's autocast instance, `f[autocast=bf16]`, on its own
// copy of the body (as a generic fn's instances: Note [Dtype variables] in
// interp/check/generics.cpp), types each op with the dtype autocast runs
// it in, and records that dtype on the call (ExprInfo::autocast); so the
// checked types are what runs. What autocast never changes is a fn's
// signature: an instance's float arguments and results are cast to the
// dtypes it declares (bf16 to f32 is exact). That differs from torch only
// where a value crosses a fn's boundary into an op that keeps its dtype:
// torch would run that op in bf16 and ss runs it in f32 (write the fn's
// result type `[b D] bf16` to keep it).
#include "interp/eval/autocast.h"

#include "ops/api.h"

namespace ss::eval {

Value as_declared(Value v, const types::Type& declared) {
  using TK = types::Type::Kind;
  if (v.kind == Value::Kind::Tuple && declared.kind == TK::Tuple && v.items &&
      v.items->size() == declared.elems.size()) {
    auto items = std::make_shared<std::vector<Value>>(*v.items);
    for (size_t i = 0; i < items->size(); ++i)
      (*items)[i] = as_declared((*items)[i], declared.elems[i]);
    v.items = std::move(items);
    return v;
  }
  if (v.kind == Value::Kind::Tensor && declared.kind == TK::Tensor &&
      types::is_float(declared.dtype))
    v.t = autocast_operand(v.t, declared.dtype);
  return v;
}

ops::Tensor autocast_operand(const ops::Tensor& t,
                             std::optional<types::DType> to) {
  if (!to || !types::is_float(t.dtype()) || t.dtype() == *to) return t;
  return ops::cast(t, *to);
}

}  // namespace ss::eval
