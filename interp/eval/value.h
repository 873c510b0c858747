#pragma once
// Runtime values. Tensors, host scalars, tuples and lists are immutable;
// models, optimizer states, datasets and sinks are objects passed by
// reference (language.md, Statements and evaluation).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ops/core/tensor.h"
#include "ops/core/type.h"

namespace ss::eval {

/// Base of reference-semantics values.
struct Object {
  virtual ~Object() = default;
};

struct Value {
  enum class Kind : uint8_t {
    Unit,
    Int,
    Float,
    Bool,
    Str,
    Tensor,
    Tuple,
    List,
    Fn,
    Record,
    Model,
    Optim,
    Grads,
    Mode,
    Logs,
    Dataset,
    Batches,
    Sink,
    Type,
    Axis
  };
  Kind kind = Kind::Unit;
  int64_t i = 0;                              // Int; Mode: the seed
  double f = 0;                               // Float
  bool b = false;                             // Bool; Mode: training; Fn: remat
  std::string s;                              // Str; Fn: its name
  ops::Tensor t;                              // Tensor
  std::shared_ptr<std::vector<Value>> items;  // Tuple, List
  std::shared_ptr<Object> obj;  // Record, Model, Optim, Grads, Mode, Logs,
                                // Dataset, Batches, Sink
  std::shared_ptr<types::Type> type;  // Type

  static Value unit() { return {}; }
  static Value integer(int64_t v);
  static Value floating(double v);
  static Value boolean(bool v);
  static Value string(std::string v);
  static Value tensor(ops::Tensor t);
  static Value tuple(std::vector<Value> items);
  static Value list(std::vector<Value> items);
  static Value fn(std::string name, bool remat = false);
  static Value object(Kind kind, std::shared_ptr<Object> obj);
  static Value type_value(types::Type t);

  bool is_number() const {
    return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool;
  }
  /// A host number, or a 0-d tensor read on the host.
  double number() const;
  /// The same as an integer, exactly: an int (or an integer tensor) as it
  /// is, not through a double (2^53 + 7 stays odd); a float toward zero;
  /// nullopt for NaN, inf, a float outside int64's range, or no number.
  std::optional<int64_t> integer() const;
  /// Truthiness for conditions (bool, numbers, 0-d tensors).
  bool truthy() const;

  template <class T>
  T* as() const {
    return static_cast<T*>(obj.get());
  }
};

}  // namespace ss::eval
