// The program as text (program_sources.h).
#include "interp/devices/protocol/program_sources.h"

#include <filesystem>
#include <map>

namespace ss::devices::protocol {

// Note [The program travels as text]
// A worker checks the program the controller checked. On one host it could
// read the same files, but a worker on another host (issue 26) has none of
// them, and even here a file edited while the run starts would make the
// workers check other bytes than the controller. So kInit carries every
// file of the controller's SourceMap, by the path it has there, and the
// worker checks the first with the others as its imports' text
// (check::Options::import_text). The checker asks for an import by the
// weakly canonical form of the path it builds from the importing file's
// path, the same string the controller's SourceMap holds for it: so the
// worker canonicalises each sent path as the checker will, on its own
// host, and the lookup matches whether or not the folders exist there.
// An import the controller did not read is not in the bundle, and the
// worker reads its disk as before.

ProgramSources sources_of(const diag::SourceMap& sm) {
  ProgramSources s;
  for (uint32_t i = 0; i < sm.size(); ++i) {
    const diag::SourceFile& f = sm.file(i);
    if (f.path.empty() || f.path[0] == '<') continue;  // <stdlib>, <repl>
    s.files.push_back({f.path, f.text});
  }
  return s;
}

std::unique_ptr<check::Program> check_program_sources(const ProgramSources& s,
                                                      diag::SourceMap& sm,
                                                      diag::Diagnostics& diags,
                                                      check::Options opts) {
  if (s.files.empty()) return nullptr;
  auto texts = std::make_shared<std::map<std::string, std::string>>();
  for (size_t i = 1; i < s.files.size(); ++i) {
    std::error_code ec;
    auto canon = std::filesystem::weakly_canonical(s.files[i].path, ec);
    (*texts)[ec ? s.files[i].path : canon.string()] = s.files[i].text;
  }
  opts.import_text =
      [texts](const std::string& path) -> std::optional<std::string> {
    auto it = texts->find(path);
    if (it == texts->end()) return std::nullopt;
    return it->second;
  };
  return check::check_source(s.files[0].path, s.files[0].text, sm, diags, opts);
}

void write_program_sources(Writer& w, const ProgramSources& s) {
  w.u32(static_cast<uint32_t>(s.files.size()));
  for (const ProgramSources::File& f : s.files) {
    w.str(f.path);
    w.str(f.text);
  }
}

ProgramSources read_program_sources(Reader& r) {
  ProgramSources s;
  for (uint32_t n = r.u32(), i = 0; i < n; ++i) {
    ProgramSources::File& f = s.files.emplace_back();
    f.path = r.str();
    f.text = r.str();
  }
  return s;
}

}  // namespace ss::devices::protocol
