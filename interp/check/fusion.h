#pragma once
// The checker's last pass: attention written out, run as one builtin
// (Note [The attention written out] in fusion.cpp).

namespace ss::check {

class Program;

/// Finds, in every checked fn body of [prog], attention written out as
/// three lets whose scores and probabilities are read nowhere else, and
/// records it (Program::fused, Program::deferred) for the evaluator.
void fuse_attention(Program& prog);

}  // namespace ss::check
