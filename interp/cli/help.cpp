#include "interp/cli/help.h"

#include <stdexcept>
#include <vector>

namespace ss::cli {

namespace {

struct Option {
  const char* flag;  // as written: "--devices SPEC"
  const char* what;  // one line (wrapped at print)
};

struct Command {
  const char* name;
  const char* args;     // after `ss NAME`
  const char* summary;  // one line, for the overview
  const char* about;    // a paragraph, for its own help
  std::vector<Option> options;
  std::vector<Option> environment;
};

// The options every command that takes a program shares
// (check::program_option).
const Option kDevices{
    "--devices SPEC",
    "run on these devices instead of the file's `devices` line: cpu, "
    "cpu[0 1 2] (each device a worker process), cuda[0], cuda[0 1 2] (a "
    "worker each GPU)"};
const Option kDim{"-D NAME=SIZE",
                  "set dim NAME to SIZE instead of the file's `dim NAME = "
                  "...` (also -DNAME=SIZE); repeatable"};
const Option kDeterministic{
    "--deterministic",
    "N devices compute one device's bits, whatever N (the `deterministic` "
    "option of the file's `devices` line; docs/guide/7-devices.md)"};
const Option kHelp{"-h, --help", "print this help and exit"};
const Option kTimeout{
    "SHAPESCRIPT_COLLECTIVE_TIMEOUT=SECONDS",
    "how long a collective waits for the other devices before a "
    "WorkerError (default 600; collective_timeout(s) in a program sets it "
    "too)"};

// Where the workers run (interp/cli/host_options.h; issue 26).
const Option kHosts{
    "--hosts 'H1:N,H2:M'",
    "run the workers on these hosts, N ranks on H1 then M on H2 (the slots "
    "add up to the device count; docs/several-hosts.md)"};
const Option kHostfile{
    "--hostfile FILE",
    "the hosts from FILE: one a line, `NAME [slots=N] [addr=ADDR]`"};
const Option kLaunch{
    "--launch TEMPLATE",
    "how a worker starts on a host, {host} and {cmd} filled in (default: "
    "ssh -o BatchMode=yes {host} {cmd}; '{cmd}': on this machine)"};
const Option kListen{
    "--listen ADDR:PORT",
    "where the controller listens; without --hosts, wait for workers "
    "started with `ss worker --connect ADDR:PORT --token-file FILE`"};
const Option kTokenFile{
    "--token-file FILE",
    "the job's key (made, mode 0600, when FILE does not exist)"};
const Option kHeartbeat{
    "--heartbeat-timeout SECONDS",
    "a remote worker not heard from for this long is lost (default 10)"};

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"run",
       "FILE [--devices SPEC] [-D NAME=SIZE]... [--deterministic] [--threads "
       "N] "
       "[--entry NAME] [--hosts H1:N,... | --hostfile F | --listen ADDR:PORT] "
       "[-- ARGS]",
       "check, then call main",
       "Checks the whole file, then calls its `fn main()`. ARGS reach "
       "`main(args: list[str])` when it takes them. Options may come before "
       "or after FILE.",
       {kDevices,
        kDim,
        kDeterministic,
        {"--threads N",
         "threads each process computes with (OpenBLAS and the CPU "
         "kernels), 1 to 4096; default: every core in one process, one "
         "thread per worker on several devices"},
        {"--entry NAME", "call `fn NAME()` instead of main"},
        kHosts,
        kHostfile,
        kLaunch,
        kListen,
        kTokenFile,
        kHeartbeat,
        {"-- ARGS", "everything after -- goes to main(args), as it is"},
        kHelp},
       {{"SHAPESCRIPT_THREADS=N", "as --threads N, when it is not given"},
        kTimeout}},
      {"check",
       "FILE [--devices SPEC] [-D NAME=SIZE]... [--deterministic] [--json] "
       "[--types]",
       "check a program: every static error, or nothing and exit 0",
       "Checks the whole file and prints every static error with its code "
       "(docs/errors), or nothing and exits 0. Nothing runs.",
       {kDevices,
        kDim,
        kDeterministic,
        {"--json", "the diagnostics as one JSON document on stdout"},
        {"--types",
         "print each fn's signature with its inferred types (and, in spmd "
         "fns, the varying axes)"},
        kHelp},
       {}},
      {"explain",
       "FILE [--devices SPEC] [-D NAME=SIZE]... [--deterministic] [--json]",
       "where each fn runs, each value's layout, what each line sends",
       "Checks the file and prints its plan on its devices (docs/explain.md): "
       "where each fn runs, each value's layout, and the collectives and "
       "bytes each line sends. Nothing runs.",
       {kDevices,
        kDim,
        kDeterministic,
        {"--json", "the report as one JSON document on stdout"},
        kHelp},
       {}},
      {"repl",
       "[FILE] [--devices SPEC] [--deterministic] [--hosts H1:N,... | "
       "--hostfile F]",
       "an interactive prompt (declarations and statements)",
       "A prompt for declarations and statements, with FILE's declarations "
       "loaded first. An expression's value prints with its type; an error "
       "prints and the session goes on; Ctrl-C stops a running statement. "
       "Commands: :type EXPR, :explain NAME, :devices, :load FILE, :reset, "
       ":help, :quit.",
       {{"--devices SPEC",
         "the session's devices (cpu, cpu[0 1 2]): worker fns run on its "
         "workers, which live for the session"},
        kDeterministic,
        {kHosts.flag,
         "the workers' hosts; a device list's ranks fill them in order, "
         "each up to its slots, and again from the first when there are "
         "more"},
        kHostfile,
        kLaunch,
        kListen,
        kTokenFile,
        kHeartbeat,
        kHelp},
       {kTimeout}},
      {"conformance",
       "[DIR | CASE.ss] [--devices SPEC]... [--filter GLOB] [--exclude "
       "GLOB]... [--engine processes|threads] [--deterministic] [--hosts "
       "H1:N,... | --hostfile F]",
       "run the conformance suite (default DIR: conformance/), or one case",
       "Runs every .ss case under DIR (or the one CASE.ss) on each device list "
       "and compares each "
       "run's logs and params against one device's; each case's header "
       "comments say what to expect (# expect: ok, # expect: error E1801 "
       "at 12, # tolerance: 1e-5, # devices: cpu[0 1 2]). Prints a line per "
       "case and device list, then `N passed, N failed`; exits 1 on any "
       "failure.",
       {{"--devices SPEC",
         "a device list to run every case on; repeatable (default: cpu, "
         "cpu[0 1] and cpu[0 1 2])"},
        {"--filter GLOB", "only the cases whose path matches GLOB"},
        {"--exclude GLOB", "not the cases whose path matches GLOB; repeatable"},
        {"--engine processes|threads",
         "processes (default): each device a worker process, as `ss run`; "
         "threads: the ranks as threads of one process (the sanitizer "
         "job's)"},
        {"--missing-expect-ok",
         "a case with no `# expect:` line is expected to run ok (default: "
         "it fails)"},
        {"--deterministic",
         "every case in deterministic mode, its N-device runs compared with "
         "one device's bit for bit (so is a case whose `devices` line says "
         "`deterministic`)"},
        {kHosts.flag,
         "run each case's workers on these hosts over TCP (127.0.0.1:3 "
         "with --launch '{cmd}': on this machine); a case's ranks fill "
         "them in order, each up to its slots, and again from the first"},
        kHostfile,
        kLaunch,
        kListen,
        kHeartbeat,
        kHelp},
       {kTimeout}},
      {"fmt",
       "[--check] [--width N] FILE|DIR|-...",
       "rewrite .ss files in the one canonical layout",
       "Rewrites each FILE (and every .ss file under each DIR) in "
       "ShapeScript's one layout (docs/fmt.md): four spaces a level, "
       "black's spacing, long lines broken after commas inside brackets, "
       "every comment and paragraph kept. A file is replaced whole (a new "
       "file renamed over it) and only when its layout changes; one that "
       "does not parse is left as it is and its errors printed. `-` reads "
       "the program from stdin and writes it formatted to stdout.",
       {{"--check",
         "change nothing: list the files whose layout would change and "
         "exit 1 if there are any"},
        {"--width N",
         "break lines longer than N columns where they can (default 88)"},
        kHelp},
       {}},
      {"lsp",
       "[--devices SPEC] [-D NAME=SIZE]...",
       "a language server on stdio: diagnostics, hover, definition, "
       "completion",
       "A language server (LSP) on stdin and stdout for an editor "
       "(docs/lsp.md): diagnostics as you type, hover with types and the "
       "devices' report, go to definition, completion.",
       {kDevices, kDim, kHelp},
       {}},
  };
  return table;
}

const Command& find(std::string_view name) {
  for (const Command& c : commands())
    if (name == c.name) return c;
  throw std::logic_error("no help for `ss " + std::string(name) + "`");
}

// [text] wrapped at [width] columns, each line after [indent] spaces.
std::string wrap(const std::string& text, size_t indent, size_t width = 79) {
  std::string out, line;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(start, end - start);
    if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
      out += std::string(indent, ' ') + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  if (!line.empty()) out += std::string(indent, ' ') + line + "\n";
  return out;
}

std::string option_lines(const std::vector<Option>& options) {
  std::string out;
  for (const Option& o : options)
    out += "  " + std::string(o.flag) + "\n" + wrap(o.what, 8);
  return out;
}

constexpr const char* kExitCodes =
    "Exit codes: 0 ok, 1 static error, 2 runtime error, 3 WorkerError, 64 "
    "usage.\n";

}  // namespace

std::string usage_line(std::string_view command) {
  const Command& c = find(command);
  return "usage: ss " + std::string(c.name) + " " + c.args + "\n";
}

std::string command_help(std::string_view command) {
  const Command& c = find(command);
  std::string out = usage_line(command) + "\n" + wrap(c.about, 0) +
                    "\nOptions:\n" + option_lines(c.options);
  if (!c.environment.empty())
    out += "\nEnvironment:\n" + option_lines(c.environment);
  return out + "\n" + kExitCodes;
}

std::string overview() {
  std::string out = "usage: ss COMMAND [ARGS]\n\n";
  for (const Command& c : commands())
    out += wrap(std::string(c.name) + " " + c.args, 2) + wrap(c.summary, 8);
  out += "  --version | --help | COMMAND --help\n\n";
  return out + kExitCodes;
}

}  // namespace ss::cli
