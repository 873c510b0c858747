#pragma once
// A private temp directory for one job's rendezvous (Gloo's FileStore needs
// an existing, fresh directory: deps.md §5). make_job_dir() creates it with
// mkdtemp under $TMPDIR (else /tmp), mode 0700; the JobDir removes it
// recursively when destroyed, but only in the process that created it (a
// forked child that exits normally leaves it alone).

#include <sys/types.h>

#include <string>
#include <string_view>

namespace ss::dist {

class JobDir {
 public:
  JobDir() = default;
  explicit JobDir(std::string path);
  ~JobDir();
  JobDir(JobDir&& o) noexcept;
  JobDir& operator=(JobDir&& o) noexcept;
  JobDir(const JobDir&) = delete;
  JobDir& operator=(const JobDir&) = delete;

  const std::string& path() const { return path_; }
  bool empty() const { return path_.empty(); }
  /// Remove it now (idempotent; errors ignored).
  void remove();
  /// Keep it on disk: the destructor will not remove it.
  std::string release();

 private:
  std::string path_;
  pid_t owner_ = 0;
};

/// Where job directories go: $TMPDIR when set and not empty, else /tmp,
/// without a trailing '/'. A sweep for a dead job's directory looks here.
std::string temp_root();

/// Creates `<temp_root()>/<name>XXXXXX` with mkdtemp (mode 0700) and
/// returns its path; the caller removes it. The one maker of a job's
/// directory: make_job_dir below and the WorkerPool's rendezvous store
/// (dist/control/pool.cpp), whose name a later pool's sweep parses.
/// Throws std::runtime_error (with errno's text) when mkdtemp fails.
std::string create_job_dir(std::string_view name);

/// create_job_dir(`<prefix>-`), removed when the JobDir is destroyed.
/// Throws std::runtime_error (with errno's text) when mkdtemp fails.
JobDir make_job_dir(std::string_view prefix = "ss-job");

}  // namespace ss::dist
