#pragma once
// `ss worker` (program_server.cpp): the process the controller starts on
// each device, serving the controller's calls of a program.

#include <string>
#include <vector>

namespace ss::devices::worker {

/// `ss worker ARGS` (hidden: started by the controller): joins the job,
/// then runs the calls it is sent until the controller stops it.
int worker_main(const std::vector<std::string>& args);

/// The environment's problem with the devices' settings
/// (SHAPESCRIPT_COLLECTIVE_TIMEOUT), or "" when there is none.
std::string bad_device_environment();

}  // namespace ss::devices::worker
