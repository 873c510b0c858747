#pragma once
// Which of the repl session's values outlive a redefinition (Note [Repl
// redefinition] in repl.cpp).

#include <set>
#include <string>

#include "interp/check/checked.h"

namespace ss::cli {

/// What a value of type [t] holds, with its models, records and dims read
/// from [p] by name: fields in order, shapes with dims' sizes, dtypes. A
/// value made under one program fits [t] in another when the two agree.
std::string layout(const types::Type& t, const check::Program& p);

/// The models, records and dims [t] refers to, through models' fields,
/// as [p] declares them: the names whose redefinition can drop a value.
void names_in(const types::Type& t,
              const check::Program& p,
              std::set<std::string>& out);

}  // namespace ss::cli
