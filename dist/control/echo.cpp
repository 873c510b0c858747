// The test handler `ss worker` runs until the evaluator registers its own
// (control.h: EchoKind).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

#include "dist/control/control.h"

namespace ss::dist {

namespace {

// "R=V;R=V;*=V" → this rank's V; a payload without '=' is everyone's V.
bool value_for(const std::string& payload, int rank, long long* v) {
  if (payload.find('=') == std::string::npos) {
    try {
      *v = std::stoll(payload);
      return true;
    } catch (const std::exception&) {
      return false;
    }
  }
  bool found = false;
  size_t i = 0;
  while (i <= payload.size()) {
    size_t end = payload.find(';', i);
    if (end == std::string::npos) end = payload.size();
    std::string item = payload.substr(i, end - i);
    size_t eq = item.find('=');
    if (eq != std::string::npos) {
      std::string key = item.substr(0, eq);
      try {
        long long val = std::stoll(item.substr(eq + 1));
        if (key == std::to_string(rank)) {
          *v = val;
          return true;
        }
        if (key == "*") {
          *v = val;
          found = true;
        }
      } catch (const std::exception&) {
      }
    }
    i = end + 1;
  }
  return found;
}

class EchoHandler : public Handler {
 public:
  explicit EchoHandler(const WorkerArgs& a) : a_(a) {}
  Message handle(Message& m) override {
    Message r{m.kind, m.id, {}};
    long long v = 0;
    switch (m.kind) {
      case kEcho:
        r.payload = m.payload;
        break;
      case kSleep:
        if (value_for(m.payload, a_.rank, &v)) {
          worker_set_status("sleeping " + std::to_string(v) + " ms");
          std::this_thread::sleep_for(std::chrono::milliseconds(v));
        }
        break;
      case kStall:
        if (value_for(m.payload, a_.rank, &v)) {
          worker_set_status("waiting for the other workers at stall.ss:1:1",
                            true);
          std::this_thread::sleep_for(std::chrono::milliseconds(v));
        }
        break;
      case kExit:
        if (value_for(m.payload, a_.rank, &v)) ::_exit(static_cast<int>(v));
        break;
      case kCrash:
        if (m.payload.empty() || value_for(m.payload, a_.rank, &v)) {
          ::signal(SIGSEGV, SIG_DFL);
          ::raise(SIGSEGV);
        }
        break;
      case kWhoAmI:
        r.payload = std::to_string(a_.rank) + " " + std::to_string(a_.world) +
                    " " + std::to_string(::getpid());
        break;
      case kBig:
        if (value_for(m.payload, a_.rank, &v)) {
          r.payload.resize(static_cast<size_t>(v));
          for (long long i = 0; i < v; ++i)
            r.payload[i] = static_cast<char>((i * 131 + a_.rank) & 0xff);
        }
        break;
      case kThrow:
        throw std::runtime_error(m.payload);
      case kEnv:
        if (const char* e = std::getenv(m.payload.c_str())) r.payload = e;
        break;
      default:
        throw std::runtime_error("the test handler has no message kind " +
                                 std::to_string(m.kind));
    }
    return r;
  }

 private:
  WorkerArgs a_;
};

}  // namespace

std::unique_ptr<Handler> make_echo_handler(const WorkerArgs& args) {
  return std::make_unique<EchoHandler>(args);
}

}  // namespace ss::dist
