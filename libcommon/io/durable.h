// Putting a finished temporary file in place so that it survives a power cut.
//
// A rename alone makes a file appear whole or not at all to other processes, but not on disk: after a power
// cut the new name can be there with the data lost (an empty or short file), and a marker file written after it
// would vouch for it. commit_temporary() is the one place outputs are put in place: bk::Output (io/output.h)
// and the HDF5 temporary (hdf5/hdf5_handle.h) both go through it; directories renamed into place (ckpt-convert's
// output, bert-train's step directories) and directories created for outputs (bin4) use the two below.
#pragma once

#include <string>

namespace bk {

// fsyncs `temp`, renames it onto `path`, fsyncs the directory. `name` is the file as messages call it.
// Throws bk::Error naming it when a step fails.
void commit_temporary(const std::string& temp, const std::string& path, const std::string& name);

// fsyncs the directory `dir` ("" = "."), so that the entries made in it (renamed files, new subdirectories)
// survive a power cut. What commit_temporary does after its rename, for renames and mkdirs made elsewhere: a
// directory renamed into place, or directories a run created before writing its marker file.
void sync_directory(const std::string& dir, const std::string& name);

// A directory built under a temporary name, before it is renamed into place: fsyncs every regular file in `dir`
// and its subdirectories, each subdirectory, then `dir` itself. After the rename, sync_directory() of the parent makes the new name last.
void sync_directory_contents(const std::string& dir, const std::string& name);

}  // namespace bk
