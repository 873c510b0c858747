#pragma once
// How values print: `print`, f-strings, the repl.

#include <string>

#include "interp/eval/value.h"

namespace ss::ast {
struct Expr;
}

namespace ss::eval {

class Interpreter;
struct Frame;

/// A value as `print` shows it. A tensor prints its runtime shape, dtype
/// and, when [static_type] names size variables, their sizes
/// (`[64 10] f32 (b=64)`), then its values summarised like numpy.
std::string format_value(const Value& v,
                         const types::Type* static_type = nullptr);
/// A host number as Python's repr would (shortest round-trip form).
std::string format_number(double v);
/// Element [flat] of a CPU tensor of ints or bools as print and the sinks
/// write it: the integer itself, never through a double (issue 32 item 2:
/// 2^53 + 1 printed as 2^53), or `true`/`false`.
std::string exact_element(const ops::Tensor& t, int64_t flat);
/// Note [Format bounds]: the largest width and precision a format spec
/// takes. 1,100 digits hold the exact decimal expansion of every f64 (the
/// smallest subnormal has 1,074 after the point), which Python prints for
/// a large precision; a width of a million characters is past any table.
constexpr int kMaxFormatPrecision = 1100;
constexpr int kMaxFormatWidth = 1 << 20;
/// `{x:spec}` of an f-string: Python's format mini-language for numbers
/// (`.4f`, `>8`, `,`, `e`, `%`, `d`); an empty spec is format_value.
/// Throws std::invalid_argument for a width or precision past its bound,
/// and for a spec given a tensor of other than one element.
std::string format_with_spec(const Value& v, const std::string& spec);
/// The f-string [e] in [f]: its text, each `{x:spec}` evaluated and
/// formatted (eval_misc.cpp).
Value eval_fstring(Interpreter& in, const ast::Expr& e, Frame& f);

}  // namespace ss::eval
