// What a host language's process needs of `ss`'s main before anything
// runs: the runtime table (embed.h's prepare).
#include "interp/builtins/install.h"
#include "interp/embed/embed.h"

namespace ss::embed {

void prepare() {
  static const bool done = (builtins::install(), true);
  (void)done;
}

}  // namespace ss::embed
