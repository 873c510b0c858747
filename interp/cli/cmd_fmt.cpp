// `ss fmt [--check] [--width N] FILE|DIR|-...`: the canonical layout
// (interp/fmt/format.h) written back over each file, or checked.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "interp/cli/commands.h"
#include "interp/cli/help.h"
#include "interp/fmt/format.h"
#include "interp/fmt/lexical_classes.h"

namespace ss::cli {

namespace {

namespace fs = std::filesystem;

struct FmtArgs {
  bool check = false;
  fmt::Options options;
  std::vector<std::string> paths;
};

// Every .ss file under [dir], in a stable order.
std::vector<std::string> ss_files_under(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(
           dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file(ec) && it->path().extension() == ".ss")
      out.push_back(it->path().string());
  std::sort(out.begin(), out.end());
  return out;
}

bool read_all(std::istream& in, std::string& out) {
  std::ostringstream s;
  s << in.rdbuf();
  out = s.str();
  return !in.bad();
}

// Replaces [path] by [text] whole: a new file beside it (its mode kept),
// written, flushed to disk and renamed over it, so that a crash or a full
// disk leaves the old file or the new one, never half of one.
bool write_atomically(const std::string& path, const std::string& text) {
  struct stat st {};
  const mode_t mode =
      ::stat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0644;
  std::string tmp = path + ".fmt-XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return false;
  size_t done = 0;
  bool ok = true;
  while (ok && done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  ok = ok && ::fchmod(fd, mode) == 0 && ::fsync(fd) == 0;
  ok = ::close(fd) == 0 && ok;
  ok = ok && ::rename(tmp.c_str(), path.c_str()) == 0;
  if (!ok) ::unlink(tmp.c_str());
  return ok;
}

// 0 when [path] is (now) formatted; 1 when it does not parse or, with
// --check, would change; 2 when it cannot be read or written.
int format_file(const std::string& path, const FmtArgs& a, bool& changed) {
  std::string text;
  if (path == "-") {
    read_all(std::cin, text);
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!readable(path) || !in || !read_all(in, text)) return kExitRuntime;
  }
  diag::SourceMap sm;
  diag::Diagnostics diags;
  std::string refused;
  std::optional<std::string> out = fmt::format_text(
      path == "-" ? "<stdin>" : path, text, sm, diags, a.options, &refused);
  if (!out) {
    if (!refused.empty())
      std::cerr << diag::render_file_error(path, refused);
    else
      std::cerr << diag::render_terminal(diags, sm);
    return kExitStatic;
  }
  changed = *out != text;
  if (path == "-") {
    if (a.check) {
      if (changed) std::cout << "<stdin>\n";
      return changed ? kExitStatic : kExitOk;
    }
    std::cout << *out;
    return kExitOk;
  }
  if (!changed) return kExitOk;
  if (a.check) {
    std::cout << path << "\n";
    return kExitStatic;
  }
  if (!write_atomically(path, *out)) {
    std::cerr << diag::render_file_error(
        path,
        std::string("IOError: cannot write the formatted file: ") +
            std::strerror(errno));
    return kExitRuntime;
  }
  return kExitOk;
}

}  // namespace

int cmd_fmt(const std::vector<std::string>& args) {
  FmtArgs a;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& s = args[i];
    if (s == "--help" || s == "-h") {
      std::cout << command_help("fmt");
      return kExitOk;
    } else if (s == "--tokens" && i + 1 < args.size()) {
      // Hidden: the lexical classes the editors' grammars are tested
      // against (editors/tests/).
      std::ifstream in(args[i + 1], std::ios::binary);
      std::string text;
      if (!readable(args[i + 1]) || !in || !read_all(in, text))
        return kExitRuntime;
      std::cout << fmt::lexical_classes(text);
      return kExitOk;
    } else if (s == "--check") {
      a.check = true;
    } else if (s == "--width" || s.rfind("--width=", 0) == 0) {
      std::string v =
          s == "--width" ? (i + 1 < args.size() ? args[++i] : "") : s.substr(8);
      char* end = nullptr;
      long w = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || w < 20 || w > 1000) {
        std::cerr << "ss fmt: --width takes a number of columns from 20 to "
                     "1000, not '"
                  << v << "'\n"
                  << usage_line("fmt");
        return kExitUsage;
      }
      a.options.width = static_cast<int>(w);
    } else if (s.size() > 1 && s[0] == '-' && s != "-") {
      std::cerr << "ss fmt: unknown option '" << s << "'\n"
                << usage_line("fmt");
      return kExitUsage;
    } else {
      a.paths.push_back(s);
    }
  }
  if (a.paths.empty()) {
    std::cerr << "ss fmt: no file to format\n" << usage_line("fmt");
    return kExitUsage;
  }
  int rc = kExitOk;
  for (const std::string& p : a.paths) {
    std::error_code ec;
    std::vector<std::string> files = p != "-" && fs::is_directory(p, ec)
                                         ? ss_files_under(p)
                                         : std::vector<std::string>{p};
    for (const std::string& f : files) {
      bool changed = false;
      rc = std::max(rc, format_file(f, a, changed));
    }
  }
  return rc;
}

}  // namespace ss::cli
