#pragma once
// `ss --help` and `ss COMMAND --help` (cli.md), from one table of the
// commands and their options (help.cpp): the overview, each command's help
// and each usage line are made from it, so they cannot disagree.

#include <string>
#include <string_view>

namespace ss::cli {

/// `usage: ss run FILE [--devices SPEC] ...`, with a newline.
std::string usage_line(std::string_view command);
/// [command]'s whole help: its usage, what it does, every option with a
/// line on what it does, the environment it reads and the exit codes.
std::string command_help(std::string_view command);
/// `ss --help`: each command's usage and a line on what it does.
std::string overview();

}  // namespace ss::cli
