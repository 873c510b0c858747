#pragma once
// The checker's last pass: attention written out, run as one builtin
// (Note [The attention written out] in fusion.cpp).

#include "interp/check/checked.h"

namespace ss::check {

/// Finds, in every checked fn body of [prog], attention written out as
/// three lets whose scores and probabilities are read nowhere else, and
/// records it (Program::fused, Program::deferred) for the evaluator.
void fuse_attention(Program& prog);

/// Finds, in every checked fn of [prog], layers written out (`relu(x @ w
/// + b)`, `gelu(linear(l, x))`, `h + linear(l, x)`) and records each as
/// one call of the op whose entry names them (Program::fused_layers, Note
/// [Layers run as one product] in fusion_layers.cpp).
void fuse_layers(Program& prog);

// What both passes read of the checked tree.

/// The builtin [e] calls, when [e] is a call of one; null otherwise.
const ops::OpDef* builtin_of(const Program& prog, const ast::Expr* e);
/// The argument of [call] that fills its param [k]; null if absent.
const ast::Expr* arg_of(const Program& prog, const ast::Expr& call, int k);
/// [root]'s info as a call of [op], the fused op run in its place: the
/// root's type and autocast, no arguments of its own.
ExprInfo as_call_of(const ExprInfo& root, const ops::OpDef* op);

}  // namespace ss::check
