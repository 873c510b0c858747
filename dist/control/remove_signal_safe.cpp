// Removing a job's names with raw syscalls only (remove_signal_safe.h).
#include "dist/control/remove_signal_safe.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace ss::dist::detail {

void unlink_entries_signal_safe(int dir, const char* prefix) {
  size_t pl = prefix ? std::strlen(prefix) : 0;
  alignas(8) char buf[4096];
  // Deleting while listing can skip entries: repeat until a pass deletes none.
  for (int pass = 0; pass < 8; ++pass) {
    bool deleted = false;
    ::lseek(dir, 0, SEEK_SET);
    while (true) {
      long n = ::syscall(SYS_getdents64, dir, buf, sizeof buf);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        struct Dirent64 {
          uint64_t ino;
          int64_t off;
          unsigned short reclen;
          unsigned char type;
          char name[1];
        };
        auto* d = reinterpret_cast<Dirent64*>(buf + off);
        off += d->reclen;
        bool dot = d->name[0] == '.' &&
                   (d->name[1] == 0 || (d->name[1] == '.' && d->name[2] == 0));
        if (dot) continue;
        if (prefix &&
            !(std::strncmp(d->name, prefix, pl) == 0 && d->name[pl] == '.'))
          continue;
        if (::unlinkat(dir, d->name, 0) == 0 ||
            ::unlinkat(dir, d->name, AT_REMOVEDIR) == 0)
          deleted = true;
      }
    }
    if (!deleted) break;
  }
}

void remove_dir_signal_safe(const char* path) {
  int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return;
  unlink_entries_signal_safe(fd, nullptr);
  ::close(fd);
  ::rmdir(path);
}

}  // namespace ss::dist::detail
