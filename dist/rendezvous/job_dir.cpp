#include "dist/rendezvous/job_dir.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace ss::dist {

JobDir::JobDir(std::string path) : path_(std::move(path)), owner_(getpid()) {}

JobDir::~JobDir() {
  remove();
}

JobDir::JobDir(JobDir&& o) noexcept
    : path_(std::move(o.path_)), owner_(o.owner_) {
  o.path_.clear();
}

JobDir& JobDir::operator=(JobDir&& o) noexcept {
  if (this != &o) {
    remove();
    path_ = std::move(o.path_);
    owner_ = o.owner_;
    o.path_.clear();
  }
  return *this;
}

void JobDir::remove() {
  if (path_.empty()) return;
  if (getpid() == owner_) {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  path_.clear();
}

std::string JobDir::release() {
  std::string p = std::move(path_);
  path_.clear();
  return p;
}

std::string temp_root() {
  std::string base;
  if (const char* t = std::getenv("TMPDIR"); t && *t)
    base = t;
  else
    base = "/tmp";
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  return base;
}

std::string create_job_dir(std::string_view name) {
  std::string tmpl = temp_root() + "/" + std::string(name) + "XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data()))
    throw std::runtime_error("cannot create a job directory " + tmpl + ": " +
                             std::strerror(errno));
  return std::string(buf.data());
}

JobDir make_job_dir(std::string_view prefix) {
  return JobDir(create_job_dir(std::string(prefix) + "-"));
}

}  // namespace ss::dist
