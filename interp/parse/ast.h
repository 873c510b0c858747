#pragma once
// The unchecked syntax tree: what the parser builds. Nodes carry spans only;
// types, shapes and placement live in the checked program (check/checked.h),
// which is the only thing evaluation accepts.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "diag/source.h"

namespace ss::ast {

using diag::Span;

// ---------------------------------------------------------------- axes, types

/// One axis in a tensor type or a type argument: `D`, `b`, `3`, `(H Dh)`,
/// `*s`, each optionally split over mesh axes: `m/x`, `A/(x y)`.
struct AxisExpr {
  enum class Kind { Name, Literal, Group, Star };
  Kind kind = Kind::Name;
  Span span;
  std::string name;                // Name, Star (without the '*')
  int64_t value = 0;               // Literal
  std::vector<AxisExpr> items;     // Group, outer first
  std::vector<std::string> split;  // mesh axes after '/', major first
  int64_t divisor = 0;  // Name: `S/2`, a dim divided (Note [Divided dims])
};

/// `w_inner/stages` inside `Net{...}`.
struct FieldSpec {
  Span span;
  std::string field;
  std::vector<std::string> split;
};

/// A type as written.
///  - Tensor: `[b D]`, `[b D] f64`, `[b] Digit`, `[]`. `elem` is the word
///    after `]` (a dtype or a record name), empty for the default f32.
///  - Named: `f32`, `int`, `Mlp`, `AdamW[Mlp]`, `LayerNorm[C]`,
///    `Dense[D Hd]`, `Axis[d]`, `list[str]`, `Net/x`, `Net{w/stages}`.
///    Type arguments are axis expressions; a Name argument may name a type
///    (`Mlp`) or an axis (`C`): the checker decides by the generic.
///  - Tuple: `(T1, T2)`.
struct TypeExpr {
  enum class Kind { Tensor, Named, Tuple };
  Kind kind = Kind::Named;
  Span span;
  std::vector<AxisExpr> axes;          // Tensor
  std::string elem;                    // Tensor
  Span elem_span;                      // Tensor, when elem is set
  std::string name;                    // Named
  bool has_args = false;               // Named: `[...]` was written
  std::vector<AxisExpr> args;          // Named
  std::vector<std::string> split;      // Named: `Net/x`, `Net/(x y)`
  std::vector<FieldSpec> field_specs;  // Named: `Net{a/x, b/x}`
  /// Named: a model's dtype, `Linear[D H] f64` or `Linear[D H] T` (empty:
  /// its default, f32). Note [Dtype variables] in interp/check/generics.cpp.
  std::string dtype;
  Span dtype_span;
  std::vector<TypeExpr> elems;  // Tuple
};

// ---------------------------------------------------------------- expressions

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

/// A label in a pattern: `b`, `3`, `1`, or a group `(H Dh)`.
struct PatternItem {
  enum class Kind { Name, Literal, Group };
  Kind kind = Kind::Name;
  Span span;
  std::string name;
  int64_t value = 0;
  std::vector<PatternItem> items;
};

/// One side of a pattern: the labels of one operand (or of the output).
struct PatternSide {
  Span span;
  std::vector<PatternItem> items;
};

/// `b H n Dh -> b n (H Dh)`, or for einsum `p1, p2 -> out`.
struct Pattern {
  Span span;
  std::vector<PatternSide> inputs;
  PatternSide output;
};

/// A call argument: positional (keyword empty) or `name=value`.
struct Arg {
  Span span;
  std::string keyword;
  Span keyword_span;
  ExprPtr value;
};

struct IndexItem {
  Span span;
  bool is_slice = false;
  ExprPtr index;  // when !is_slice
  ExprPtr lo;     // slice bounds, either may be null
  ExprPtr hi;
};

/// A piece of an f-string: literal text, or `{expr:spec}`.
struct FStringPart {
  std::string text;  // literal text (when expr is null)
  ExprPtr expr;
  std::string format_spec;  // after ':' inside the braces, e.g. ".4f"
};

enum class UnaryOp { Neg, Plus, Not };
enum class BinaryOp {
  Add,
  Sub,
  Mul,
  Div,
  FloorDiv,
  Mod,
  Pow,
  MatMul,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  And,
  Or
};

const char* unary_op_spelling(UnaryOp op);
const char* binary_op_spelling(BinaryOp op);

struct Expr {
  enum class Kind {
    Name,           // name
    Int,            // int_value
    Float,          // float_value
    String,         // text
    FString,        // fparts
    Bool,           // bool_value
    List,           // elems
    Tuple,          // elems
    Comprehension,  // elem `for` targets `in` iter [`if` cond]
    Unary,          // unary_op, lhs
    Binary,         // binary_op, lhs, rhs
    Call,           // callee, args, pattern
    Field,          // lhs . name
    Index,          // lhs [ indices ]
    TypeLit,        // a type in value position: `zeros([b D] f64)`
    AxisRef,        // an axis argument: `over=(H Dh)`, `over=-1`
  };
  Kind kind = Kind::Name;
  Span span;

  std::string name;  // Name, Field (the field), String text
  int64_t int_value = 0;
  double float_value = 0;
  bool bool_value = false;
  std::vector<FStringPart> fparts;
  std::vector<ExprPtr> elems;
  ExprPtr elem;                      // Comprehension
  std::vector<std::string> targets;  // Comprehension loop names
  ExprPtr iter;                      // Comprehension
  ExprPtr cond;                      // Comprehension filter (may be null)
  UnaryOp unary_op = UnaryOp::Neg;
  BinaryOp binary_op = BinaryOp::Add;
  ExprPtr lhs;  // Unary operand, Binary lhs, Field/Index base
  ExprPtr rhs;
  ExprPtr callee;                  // Call
  std::vector<Arg> args;           // Call
  std::optional<Pattern> pattern;  // Call, when an argument held `->`
  std::vector<IndexItem> indices;  // Index
  // Held apart, not in place: few Exprs are a TypeLit or an AxisRef, and
  // in place the two took 400 of every Expr's 752 bytes (issue 32 item 9:
  // the trees are a third of what checking a large program holds).
  std::unique_ptr<TypeExpr> type;  // TypeLit
  std::unique_ptr<AxisExpr> axis;  // AxisRef (Literal may be negative)
  Span name_span;                  // Field: the field name's span
};

// ---------------------------------------------------------------- statements

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

struct NameTarget {
  Span span;
  std::string name;
};

struct IfBranch {
  ExprPtr cond;  // null for `else`
  Block body;
  Span span;  // the `if`/`elif`/`else` keyword
};

struct Stmt {
  enum class Kind {
    Let,        // let targets [: type] = value
    Assign,     // target = value   (a Name, Field or Index expression, or a
                // Tuple of names and fields: `h, c = cell(x, h, c)`)
    AugAssign,  // target op= value
    If,         // branches
    For,        // for targets in iter: body
    While,      // while cond: body
    Break,
    Continue,
    Return,  // value may be null
    Expr,    // value
  };
  Kind kind = Kind::Expr;
  Span span;
  std::vector<NameTarget> targets;     // Let, For
  std::optional<TypeExpr> annotation;  // Let
  ExprPtr target;                      // Assign, AugAssign
  BinaryOp aug_op = BinaryOp::Add;     // AugAssign
  ExprPtr value;                       // Let, Assign, AugAssign, Return, Expr
  std::vector<IfBranch> branches;      // If
  ExprPtr iter;                        // For
  ExprPtr cond;                        // While
  Block body;                          // For, While
};

// ---------------------------------------------------------------- declarations

/// `devices cpu`, `devices cuda[0 1 2]`, options on indented lines.
struct DeviceOption {
  Span span;
  std::vector<std::string> words;  // `shard params` -> {"shard", "params"}
  std::vector<Span> word_spans;
};
struct DevicesDecl {
  Span span;
  std::string kind;  // "cpu" or "cuda" (anything else: the checker says)
  Span kind_span;
  bool has_list = false;
  std::vector<int64_t> ids;
  std::vector<DeviceOption> options;
};

struct MeshAxisDecl {
  Span span;
  std::string name;
  int64_t size = 0;
};
struct MeshDecl {
  Span span;
  std::vector<MeshAxisDecl> axes;
};

struct DimDecl {
  Span span;
  std::string name;
  Span name_span;
  ExprPtr value;
};

/// `in lo..hi` (half-open) or `in lo..=hi` (closed).
struct Domain {
  Span span;
  ExprPtr lo;
  ExprPtr hi;
  bool inclusive = false;
};

struct DataField {
  Span span;
  std::string name;
  Span name_span;
  TypeExpr type;
  std::optional<Domain> domain;
  ExprPtr pad;  // `pad=0`
};
struct DataDecl {
  Span span;
  std::string name;
  Span name_span;
  std::vector<DataField> fields;
};

struct ModelField {
  Span span;
  std::string name;
  Span name_span;
  bool buffer = false;
  TypeExpr type;
  ExprPtr init;  // null for sub-models
};
struct ModelDecl {
  Span span;
  std::string name;
  Span name_span;
  std::vector<NameTarget> dim_params;     // `model Dense[I O]`
  std::optional<NameTarget> dtype_param;  // `model Dense[I O] T`
  std::vector<ModelField> fields;
};

struct Param {
  Span span;
  std::string name;
  Span name_span;
  bool mut = false;
  std::optional<TypeExpr> type;  // always present in a well-formed fn
  ExprPtr default_value;
};

struct FnDecl {
  Span span;  // the whole header line
  std::string name;
  Span name_span;
  std::vector<Param> params;
  std::optional<TypeExpr> result;  // absent: returns nothing
  Block body;                      // block form
  ExprPtr expr_body;               // `= expr` form
  bool is_spmd = false;
  bool spmd_check = true;  // `spmd(check=false) fn`
  bool is_extern = false;
  std::string extern_target;  // "module.function"
  Span extern_span;
};

struct ImportDecl {
  Span span;
  std::string path;
};

/// One parsed file. Declarations keep source order within each kind.
struct Module {
  uint32_t file = 0;
  std::vector<DevicesDecl> devices;  // more than one is E0202
  std::vector<MeshDecl> meshes;
  std::vector<DimDecl> dims;
  std::vector<DataDecl> datas;
  std::vector<ModelDecl> models;
  std::vector<FnDecl> fns;
  std::vector<ImportDecl> imports;
};

/// Deep copies (interp/parse/ast_clone.cpp): the same spans, new nodes.
ExprPtr clone(const Expr& e);
FnDecl clone(const FnDecl& f);

}  // namespace ss::ast
