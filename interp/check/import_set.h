#pragma once
// The parsed imports of one document, kept for the next document that
// imports the same files (Note [Shared import sets]).

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diag/diagnostic.h"
#include "interp/check/checked.h"

namespace ss::check {

// Note [Shared import sets]: `ss lsp` checks each open document with its
// whole import graph, and 2,000 documents importing one hub that imports
// 200 files read, made canonical and parsed those 201 files 2,000 times
// (issue 32 item 10: 13 s and 4.5 GB in bench/lsp_scale.py; a quarter of
// the time reading the disk, an eighth making paths canonical, an eighth
// parsing; most of the memory the 2,000 copies of the imports' trees and
// checked expressions). So a check may take its imports from an
// earlier check's (Options::import_sets): an ImportSet is what loading one
// file's imports produced (their source files, parsed modules and the
// diagnostics of loading them), immutable, and shared by shared_ptr among
// the programs checked with it; each check still parses its own file and
// checks the whole program, so what it reports is what a check that read
// and parsed every import reports (the checker's contract for `ss check`,
// which takes no set). A set is found by the paths its importer's imports
// are written to (joined to the importer's folder), and taken when:
//  - it was made without meeting its importer again (in a ring every file
//    reaches itself, so each has a set of its own: none is kept), and the
//    document checked now is none of the files it read;
//  - every file it read holds the text it read, through Options::
//    import_text (the editor's text of an open file, `ss lsp`'s reading of
//    the disk), and its importer's imports still resolve to the files they
//    did;
//  - it reported no error in its importer's file (an import that cannot be
//    read), as such an error is at a place of that file only.
// Within a set the files keep their numbers in the SourceMap (0 the
// stdlib, 1 the importer, 2... the imports in the order they were read)
// and so the spans of its trees are right in every program checked with
// it. What a nested import's path resolves to is not resolved again: a
// file made a link to another after the set was made is seen when a text
// read changes.
//
// The fan-in then takes 4 s and 0.8 GB: each check still checks the
// imports' bodies (60% of its time), and each program keeps its own
// checked declarations of them (FnInfo, 2 KB a fn: most of the 0.8 GB).
// Sharing those would take a checker that checks one module against
// declarations checked before; in one program a name the document declares
// can change what an import's body means (a user declaration shadows the
// stdlib's), and a call adds to its callee's facts
// (FnInfo::called_from_spmd: Note [E2001 for inlined spmd fns]), so such a
// checker is more than a cache. Program::keep_exprs_of drops what `ss lsp`
// never looks up: the facts of the imports' expressions.

/// The number of a set's first file in the programs checked with it (0 is
/// the stdlib's, 1 the importer's).
inline constexpr uint32_t kFirstImportFile = 2;

/// What loading one file's imports read and made.
struct ImportSet {
  /// The importer's imports, joined to its folder, in the order written
  /// (how the set is found), and each one's canonical path.
  std::vector<std::string> roots, root_keys;
  /// The source files of a program checked with it, by file number from
  /// kFirstImportFile on.
  std::vector<std::shared_ptr<const diag::SourceFile>> files;
  /// The imports' modules, in the program's order (after the stdlib).
  ModuleList::Held modules;
  /// What loading them reported, in order (in their files only).
  diag::Diagnostics diags;
  /// Every file read, by canonical path: the number of its file (nullopt:
  /// it could not be read). The file's text is what was read, less
  /// parsed_text's cut.
  std::map<std::string, std::optional<uint32_t>> read;
};

/// The sets that the last checks made, found by their roots.
class ImportSets {
 public:
  /// The set for [roots] that the file of canonical path [main] may take:
  /// its roots still resolve to [root_keys], it did not read [main], and
  /// each file it read reads the same through [read_now]. Null when there
  /// is none.
  std::shared_ptr<const ImportSet> find(
      const std::vector<std::string>& roots,
      const std::vector<std::string>& root_keys,
      const std::string& main,
      const std::function<std::optional<std::string>(const std::string&)>&
          read_now);
  void keep(std::shared_ptr<const ImportSet> set);

 private:
  /// Held by the programs checked with them. The last one kept is held
  /// here too: a check that fails (an error in an import) keeps no
  /// program, and the next document may import the same files. No more:
  /// in a ring or a chain no set is taken again, and a set freed long
  /// after it was made costs more to free (a ring of 2,000 files took 10%
  /// longer holding the last 8).
  std::map<std::vector<std::string>, std::weak_ptr<const ImportSet>> sets_;
  std::shared_ptr<const ImportSet> last_;
  size_t kept_since_sweep_ = 0;
};

/// What of a file's text is parsed: all but a UTF-8 byte order mark that
/// an editor put at its start (Python and Go skip it too; it was E0101).
std::string_view parsed_text(std::string_view text);

/// The stdlib's file and module, parsed once for the process: file 0 of
/// a program checked with an import set.
struct SharedStdlib {
  std::shared_ptr<const diag::SourceFile> file;
  std::shared_ptr<const ast::Module> module;
};
const SharedStdlib& shared_stdlib();

}  // namespace ss::check
