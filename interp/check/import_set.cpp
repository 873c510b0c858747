// The import sets of earlier checks (import_set.h, Note [Shared import
// sets]).
#include "interp/check/import_set.h"

#include "interp/check/checker_impl.h"
#include "interp/lex/lexer.h"
#include "interp/parse/parser.h"

namespace ss::check {

std::shared_ptr<const ImportSet> ImportSets::find(
    const std::vector<std::string>& roots,
    const std::vector<std::string>& root_keys,
    const std::string& main,
    const std::function<std::optional<std::string>(const std::string&)>&
        read_now) {
  auto it = sets_.find(roots);
  if (it == sets_.end()) return nullptr;
  std::shared_ptr<const ImportSet> set = it->second.lock();
  if (!set || set->root_keys != root_keys || set->read.count(main))
    return nullptr;
  for (const auto& [key, file] : set->read) {
    const std::optional<std::string> now = read_now(key);
    if (now.has_value() != file.has_value() ||
        (now &&
         parsed_text(*now) != set->files.at(*file - kFirstImportFile)->text))
      return nullptr;
  }
  return set;
}

void ImportSets::keep(std::shared_ptr<const ImportSet> set) {
  // The entries of sets no program holds any more go now and then, not
  // at each check.
  if (++kept_since_sweep_ > sets_.size()) {
    kept_since_sweep_ = 0;
    for (auto it = sets_.begin(); it != sets_.end();)
      it = it->second.expired() ? sets_.erase(it) : std::next(it);
  }
  sets_[set->roots] = set;
  last_ = std::move(set);
}

std::string_view parsed_text(std::string_view text) {
  return text.starts_with("\xEF\xBB\xBF") ? text.substr(3) : text;
}

const SharedStdlib& shared_stdlib() {
  static const SharedStdlib parsed = [] {
    diag::SourceMap sm;
    diag::Diagnostics ignored;  // the stdlib parses
    const uint32_t id = sm.add("<stdlib>", stdlib_source());
    lex::Tokens toks = lex::lex(sm, id, ignored);
    return SharedStdlib{
        sm.shared(id),
        std::make_shared<const ast::Module>(parse::parse(toks, id, ignored))};
  }();
  return parsed;
}

}  // namespace ss::check
