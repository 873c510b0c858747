#pragma once
// Process facts for the dist tests, read from /proc.

#include <sys/types.h>

#include <fstream>
#include <sstream>
#include <string>

namespace ss::dist::testing {

/// The parent pid of [pid] (0 when it is gone): /proc/PID/stat's 4th
/// field, after the command name in parentheses.
inline pid_t parent_pid(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(f)),
                   std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 1));
  char state = 0;
  pid_t ppid = 0;
  rest >> state >> ppid;
  return ppid;
}

}  // namespace ss::dist::testing
