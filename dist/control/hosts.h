#pragma once
// Where a job's ranks run when it spans hosts (issue 26): the hosts that
// `--hosts` or `--hostfile` name, each rank's host, and the command that
// starts a worker on one (`--launch`). Placement is deployment, not
// source: the program's `devices` line gives the count of ranks, and
// these say where they go.

#include <string>
#include <string_view>
#include <vector>

namespace ss::dist {

struct Host {
  /// What the launch template's {host} becomes: a name ssh knows
  /// ("node1", "user@10.0.0.2"), or a network namespace's.
  std::string name;
  /// How many ranks run there.
  int slots = 1;
  /// The address its workers bind Gloo to and the controller is reached
  /// from (a hostfile's addr=); empty: the address of its control
  /// connection.
  std::string addr;
};

/// `--hosts 'h1:2,h2:2'`: ranks 0-1 on h1, 2-3 on h2; a host without
/// `:N` has one slot. Throws std::invalid_argument with a sentence.
std::vector<Host> parse_hosts(std::string_view text);

/// A hostfile's text ([path] for messages): one host a line,
/// `NAME [slots=N] [addr=ADDR]`; `#` starts a comment.
std::vector<Host> parse_hostfile(std::string_view text,
                                 const std::string& path);

/// Rank r's host, for ranks 0..world-1 filled host by host in order. The
/// hosts' slots must add up to [world] (the program's device count).
std::vector<int> place_ranks(const std::vector<Host>& hosts, int world);

/// The default --launch: ssh in batch mode (no password prompt).
inline constexpr const char* kDefaultLaunch =
    "ssh -o BatchMode=yes {host} {cmd}";

/// [tmpl] with {host} and {cmd} filled, for /bin/sh -c: {cmd} is [argv],
/// each word quoted for a POSIX shell, and {host} is quoted too. ssh
/// joins its command's words and the remote shell parses them again, so
/// a word that needs quoting there would break: every word of [argv] must
/// be made of characters no shell treats specially (a worker's are: paths,
/// numbers, options); std::invalid_argument names one that is not. A
/// template without {cmd}, or with a {name} other than these, is an
/// error too.
std::string expand_launch(std::string_view tmpl,
                          const std::string& host,
                          const std::vector<std::string>& argv);

/// [s] as one word of a POSIX shell: 'it''s' quoting, bare when only
/// safe characters.
std::string shell_quote(std::string_view s);

}  // namespace ss::dist
