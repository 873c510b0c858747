#pragma once
// The documents waiting for a check, and what each open document's last
// check read, by content (Note [Checks when the input is quiet]).

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace ss::lsp {

// Note [Checks when the input is quiet]: an editor sends a didChange per
// keystroke and opens a whole project at once, and a check of a document
// reads its whole import graph; checking on every notification made a
// storm of 500 changes 500 checks, and a ring of 400 files opened in turn
// re-checked every file that imported the opened one, each time (issue 32
// item 10: 39 s and 56 s). So a notification only marks documents as
// pending (PendingChecks), and the server checks them one at a time while
// nothing waits on its input: after a short quiet spell (kQuietMs, the
// debounce of other servers), and between two checks, it reads what came
// first. Several changes of one document queued on the input thus give one
// check, of the last text. A request about a pending document checks that
// one first, so every answer reflects the last change; `shutdown` checks
// all of them, so the diagnostics are out before the session ends.
//
// Which documents a change concerns is known from what each check read
// (ImportGraph): the file of every import, transitively, with a hash of the
// content it read (the editor's text of an open file, or the disk's). A
// document is checked again when its own text changes, or when a file it
// read now has other content than its check read: an import opened with
// the text it has on disk, saved, or closed unchanged costs no check.
// A check reads its import graph (at most 64 files deep, kMaxImportDepth
// in interp/check), but parses it only when no earlier check read the same
// texts (Note [Shared import sets] in interp/check/import_set.h: 2,000
// documents importing one hub parse the hub's 201 files once) and reads a
// file of the disk again only when it changed (Note [Disk files read again
// when changed] in disk_files.h). It still checks the whole program, the
// imports' bodies included: the checker has no way yet to take an
// import's checked declarations from another document's check (in one
// program a name declared by the document can change what an import's
// body means), so that is what each check of the fan-in spends.

/// How long the input must stay quiet before pending checks start.
inline constexpr int kQuietMs = 30;

/// A file's content as a check read it; absent: it could not be read.
using ContentHash = uint64_t;
ContentHash content_hash(const std::optional<std::string>& text);

/// The documents to check, in the order they were first asked for.
class PendingChecks {
 public:
  void add(const std::string& uri);
  /// Whether [uri] was pending (it is not any more).
  bool remove(const std::string& uri);
  /// The oldest pending document, or nullopt.
  std::optional<std::string> pop();
  bool empty() const { return serial_.empty(); }

 private:
  // A removed uri stays in order_ until pop() meets it: removal is then
  // O(log n), not a search of the queue. Each add has its serial, so an
  // entry left by a removed uri that came again is passed over.
  std::deque<std::pair<std::string, uint64_t>> order_;
  std::map<std::string, uint64_t> serial_;  // the pending ones
  uint64_t next_ = 0;
};

/// What each document's last check read, and the reverse: by file, the
/// documents that read it. Each path and URI is kept once, by number: in
/// a fan-in 2,000 documents each read the same 201 files (Note [Shared
/// import sets] in interp/check/import_set.h), and their 402,000 entries
/// as strings in ordered maps took 80 MB and 7% of the checks' time.
class ImportGraph {
 public:
  /// [uri]'s last check read [inputs] (canonical path -> content).
  void record(const std::string& uri,
              const std::map<std::string, ContentHash>& inputs);
  void forget(const std::string& uri);
  /// The documents whose last check read [path] with other content than
  /// [now]: those a change of [path] to [now] concerns, in URI order.
  std::vector<std::string> stale_importers(const std::string& path,
                                           ContentHash now) const;

 private:
  using Id = uint32_t;
  Id id(const std::string& name);
  std::vector<std::string> names_;
  std::unordered_map<std::string, Id> ids_;
  /// By uri: the paths read, in Id order, with their content.
  std::unordered_map<Id, std::vector<std::pair<Id, ContentHash>>> read_;
  std::unordered_map<Id, std::unordered_set<Id>> readers_;  // by path
};

}  // namespace ss::lsp
