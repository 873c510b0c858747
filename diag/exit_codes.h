#pragma once
// The process exit codes of cli.md, shared by the subcommands and the
// controller of a run on several devices.

namespace ss::diag {

constexpr int kExitOk = 0;
constexpr int kExitStatic = 1;
constexpr int kExitRuntime = 2;
constexpr int kExitWorker = 3;
constexpr int kExitUsage = 64;

}  // namespace ss::diag
