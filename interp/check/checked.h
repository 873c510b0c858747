#pragma once
// The checked program: the only thing evaluation accepts. It owns the parsed
// modules and adds what the checker proved: every expression's type, what
// every name and call resolves to, each fn's signature. Later issues attach
// placement, layouts and collectives here (see FnInfo, ExprInfo).

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "interp/diag/source.h"
#include "interp/parse/ast.h"
#include "ops/core/type.h"
#include "ops/registry/op_def.h"

namespace ss::check {

class Checker;

struct ParamInfo {
  std::string name;
  types::Type type;
  bool mut = false;
  bool has_default = false;
  const ast::Param* decl = nullptr;
};

struct FnInfo {
  std::string name;
  const ast::FnDecl* decl = nullptr;
  std::vector<ParamInfo> params;
  types::Type result;  // Unit when the fn declares none
  bool has_result = false;
  bool is_stdlib = false;
  /// For `-> Logs`: the fields its returns make, when they agree.
  std::optional<types::Type> inferred_logs;
  /// The user fns this one calls (for placement).
  std::set<std::string> callees;
  /// Its result was computed through an extern fn without a VJP (E0310).
  std::string result_no_vjp;
  /// Fns are checked on demand, callees first, so a caller sees what its
  /// callees' bodies proved (inferred logs fields, result_no_vjp).
  enum class State { Unchecked, Checking, Done };
  State state = State::Unchecked;
  /// Every local's type in declaration order (for `ss check --types`).
  std::vector<std::pair<std::string, types::Type>> locals;
};

/// What a name or call in an expression resolved to.
struct Resolution {
  enum class Kind { None, Local, Dim, Fn, Builtin, Record, Model, Constant };
  Kind kind = Kind::None;
  const FnInfo* fn = nullptr;        // Fn (user or stdlib)
  const ops::OpDef* op = nullptr;    // Builtin
  std::string name;
};

struct ExprInfo {
  types::Type type;
  Resolution resolution;  // Name and Call nodes
  /// Calls: for each argument as written (a method's receiver first), the
  /// param it fills; -1 for extra arguments (variadic or any keyword).
  std::vector<int> arg_params;
  /// Builtin calls: `over=`-like params resolved against their operand,
  /// param index -> axis positions in the order written.
  std::map<int, std::vector<int>> axes;
  /// Builtin calls: axes passed by name (ParamKind::Axis), param -> axis.
  std::map<int, types::Axis> axis_args;
};

struct DeviceList {
  std::string kind = "cpu";  // cpu | cuda
  std::vector<int64_t> ids;  // empty: one device
  std::vector<std::vector<std::string>> options;
  size_t count() const { return ids.empty() ? 1 : ids.size(); }
};

struct MeshAxis {
  std::string name;
  int64_t size = 0;
};

class Program {
 public:
  const std::vector<ast::Module>& modules() const { return modules_; }
  const FnInfo* fn(const std::string& name) const;
  const std::map<std::string, FnInfo>& fns() const { return fns_; }
  const std::map<std::string, int64_t>& dims() const { return dims_; }
  const types::RecordInfo* record(const std::string& name) const;
  const types::ModelInfo* model(const std::string& name) const;
  /// The type of a checked expression (Error if it was never checked).
  const types::Type& type_of(const ast::Expr* e) const;
  const ExprInfo* info(const ast::Expr* e) const;
  const DeviceList& devices() const { return devices_; }
  const std::vector<MeshAxis>& mesh() const { return mesh_; }

 private:
  friend class Checker;
  Program() = default;

  std::vector<ast::Module> modules_;  // stdlib first, then imports, main
  std::map<std::string, FnInfo> fns_;
  std::map<std::string, int64_t> dims_;
  std::map<std::string, std::unique_ptr<types::RecordInfo>> records_;
  std::map<std::string, std::unique_ptr<types::ModelInfo>> models_;
  std::unordered_map<const ast::Expr*, ExprInfo> exprs_;
  DeviceList devices_;
  std::vector<MeshAxis> mesh_;
};

}  // namespace ss::check
