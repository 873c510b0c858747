// One check of one document (analysis.h).
#include "interp/lsp/analysis.h"

#include <filesystem>

#include "interp/lsp/documents.h"
#include "interp/lsp/uri.h"

namespace ss::lsp {

const ast::Module* Analysis::module() const {
  if (!prog) return nullptr;
  for (const ast::Module& m : prog->modules())
    if (m.file == file) return &m;
  return nullptr;
}

const check::comms::DeviceTable* Analysis::table() const {
  // One device has no table, unless a mesh's instances share it.
  if (!clean() || (prog->devices().count() < 2 && prog->mesh().empty()))
    return nullptr;
  if (!table_) table_ = check::comms::build_table(*prog, sm);
  return &*table_;
}

std::string Analysis::uri_of(uint32_t f, const std::string& doc_uri) const {
  if (f == file) return doc_uri;
  if (f >= sm.size()) return "";
  const std::string& p = sm.file(f).path;
  if (p.empty() || p[0] != '/') return "";  // <stdlib>
  std::error_code ec;
  std::filesystem::path canon = std::filesystem::weakly_canonical(p, ec);
  return path_to_uri(ec ? p : canon.string());
}

uint32_t Analysis::offset(uint32_t line, uint32_t character) const {
  return offset_of(sm.file(file).text, line, character);
}

std::shared_ptr<const Analysis> analyze(const std::string& path,
                                        const std::string& text,
                                        const check::Options& opts) {
  auto a = std::make_shared<Analysis>();
  a->path = path;
  check::Options o = opts;
  o.keep_on_error = true;
  a->prog = check::check_source(path, text, a->sm, a->diags, o);
  // check_source adds the standard library first (when on), then the
  // document, then its imports.
  for (uint32_t f = 0; f < a->sm.size(); ++f)
    if (a->sm.file(f).path == path) {
      a->file = f;
      break;
    }
  // Note [Shared import sets]: the lookups are in the document; only the
  // several-devices table (table()) reads the imports' bodies.
  if (a->prog && (!a->clean() ||
                  (a->prog->devices().count() < 2 && a->prog->mesh().empty())))
    a->prog->keep_exprs_of(a->file);
  return a;
}

}  // namespace ss::lsp
