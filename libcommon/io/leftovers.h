// What a killed run leaves beside its outputs, and how the next run that writes there removes it (torch-free).
//
// Every temporary a tool makes (a file's NAME.tmp.XXXXXX, StagedFiles' .bertkit-staged-HOST-XXXXXX,
// StagedDirectory's .NAME.partial-PID) is held with an exclusive flock(2) on a descriptor its writer keeps open for
// as long as the temporary lives (HDF5's own lock holds its files). The lock goes with the process, however it
// ends (SIGKILL, a power cut's reboot), so an unheld temporary that is older than the current run is a dead run's:
// sweep_leftovers removes it. A file system without flock (an NFS mount without its lock manager) holds nothing
// and sweeps nothing; one whose locks do not reach other nodes (Lustre's localflock) is why StagedFiles puts the
// host in its name. Two runs writing one output at once were never supported; a temporary made in the instant
// before its writer's lock is taken is newer than any sweeper's start.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace bk {

// Takes the exclusive lock on `fd` (a temporary's own descriptor, or a directory's opened for it); a failure is
// ignored (then nothing sweeps it).
void hold_temporary(int fd);
// Opens `dir` and holds it; returns the descriptor (-1 when it cannot be opened), to close when the directory goes.
int hold_temporary_dir(const std::string& dir);

// Whether `path` is a dead run's temporary: it changed last before this process started and nobody holds it.
bool is_dead_temporary(const std::string& path);

// Removes, files and directories whole, the entries of `dir` whose names `is_temporary` accepts and that are dead
// runs' temporaries. Errors are ignored: a leftover that stays is what there was before.
void sweep_leftovers(const std::string& dir, const std::function<bool(std::string_view name)>& is_temporary);

// This machine's name (uname's nodename, bytes other than letters, digits, '.' and '-' as '_'), for temporaries on
// file systems that several nodes share.
const std::string& host_name();

// For a temporary's name template DIR/PREFIXXXXXXX (create_temporary's, mkdtemp's): sweeps DIR's dead
// PREFIX?????? entries, the leftovers of earlier runs that wrote the same output.
void sweep_dead_siblings(const std::string& name_template);

}  // namespace bk
