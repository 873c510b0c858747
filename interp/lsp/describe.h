#pragma once
// The words hover and completion show for the program's things: a
// builtin's signature, a model's or a record's fields, the dims a type
// names with their sizes. One place, so a hover and a completion item say
// the same.

#include <string>

#include "interp/check/checked.h"

namespace ss::lsp {

/// `mean(x, [over=], [keepdim=])`: the builtins reference's signature
/// (ops::signature_text), so the docs and the editor say it alike.
std::string builtin_signature(const ops::OpDef& op);
/// `model Mlp` and a line per field (`    w1: [D Hd]`, `buffer` marked).
std::string model_text(const types::ModelInfo& m);
/// `data Digit` and a line per field.
std::string record_text(const types::RecordInfo& r);
/// The sizes of the dims [t] names (its shape, groups, a model's
/// arguments): `D = 784, Hd = 256`; "" when it names none.
std::string dim_sizes(const types::Type& t, const check::Program& p);

}  // namespace ss::lsp
