// Note [The session's text]
// `ss repl` checks one text per input: the session's declarations, each
// line with its origin (Note [Source origins] in diag/source.cpp). On
// several devices its workers check the declarations again, sent as this
// text (kDeclare), not as a file: a temporary file's name would be the
// site that rand/randn key their draws by, where `ss run lin.ss` keys them
// by `lin.ss:LINE:COL` (language.md, Randomness), and the file's imports
// would resolve against /tmp. So both sides check through this one
// function: imports resolve against the folder of the file each line came
// from (check::Options::import_dirs), and the origins are mapped into the
// SourceMap after the check, so errors and draws name what was typed or
// loaded.
#include "interp/devices/protocol/session_text.h"

#include <filesystem>
#include <map>

namespace ss::devices::protocol {

std::unique_ptr<check::Program> check_session_text(const SessionText& t,
                                                   diag::SourceMap& sm,
                                                   diag::Diagnostics& diags,
                                                   check::Options opts) {
  opts.import_dirs.clear();
  for (const diag::LineOrigin& l : t.lines)
    opts.import_dirs.push_back(
        l.file < t.files.size()
            ? std::filesystem::path(t.files[l.file].path).parent_path().string()
            : "");
  auto prog = check::check_source(kSessionName, t.text, sm, diags, opts);
  // The checked text is the first file of that name; its origins are
  // added after the imports, so that the spans of both agree on every
  // side that checks the same declarations.
  for (uint32_t f = 0; f < sm.size(); ++f) {
    if (sm.file(f).path != kSessionName) continue;
    std::map<uint32_t, uint32_t> ids;  // index in t.files -> file in sm
    for (size_t k = 0; k < t.lines.size(); ++k) {
      diag::LineOrigin l = t.lines[k];
      if (l.file >= t.files.size()) continue;
      auto it = ids.find(l.file);
      if (it == ids.end())
        it = ids.emplace(l.file,
                         sm.add(t.files[l.file].path, t.files[l.file].text))
                 .first;
      l.file = it->second;
      sm.set_origin(f, uint32_t(k + 1), l);
    }
    break;
  }
  return prog;
}

void write_session_text(devices::protocol::Writer& w, const SessionText& t) {
  w.str(t.text);
  w.u32(static_cast<uint32_t>(t.files.size()));
  for (const SessionText::File& f : t.files) {
    w.str(f.path);
    w.str(f.text);
  }
  w.u32(static_cast<uint32_t>(t.lines.size()));
  for (const diag::LineOrigin& l : t.lines) {
    w.u32(l.file);
    w.u32(l.line);
    w.u32(static_cast<uint32_t>(l.shift));
  }
}

SessionText read_session_text(devices::protocol::Reader& r) {
  SessionText t;
  t.text = r.str();
  for (uint32_t n = r.u32(), i = 0; i < n; ++i) {
    SessionText::File& f = t.files.emplace_back();
    f.path = r.str();
    f.text = r.str();
  }
  for (uint32_t n = r.u32(), i = 0; i < n; ++i) {
    diag::LineOrigin& l = t.lines.emplace_back();
    l.file = r.u32();
    l.line = r.u32();
    l.shift = static_cast<int32_t>(r.u32());
  }
  return t;
}

}  // namespace ss::devices::protocol
