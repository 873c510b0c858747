#pragma once
// Removing a job's names with raw syscalls only, so that a signal handler
// may do it: the controller's (pool_registry.cpp, on SIGINT/SIGTERM/SIGHUP)
// and a worker's (worker.cpp, when its controller died). Private to
// dist/control/.

namespace ss::dist::detail {

/// Unlinks the entries of the directory open as [dir] whose name starts
/// with "[prefix]." (every entry but . and .. when [prefix] is null), and
/// empty subdirectories of that name.
void unlink_entries_signal_safe(int dir, const char* prefix);

/// Removes directory [path] (not followed if a symlink) with its entries.
void remove_dir_signal_safe(const char* path);

}  // namespace ss::dist::detail
