#pragma once
// Making a model (models.cpp): Model.init(seed=) and what else makes one
// from its type (load's template, the tests).

#include <cstdint>

#include "diag/source.h"
#include "interp/eval/value.h"
#include "ops/core/type.h"

namespace ss::eval {
class Interpreter;
}  // namespace ss::eval

namespace ss::builtins {

/// A model of [model_type] whose every field is drawn from ([seed], the
/// field's path) by its initialiser (library.md, Initialisers), made by
/// [in] at [at].
eval::Value init_model(eval::Interpreter& in,
                       const types::Type& model_type,
                       uint64_t seed,
                       diag::Span at);

}  // namespace ss::builtins
