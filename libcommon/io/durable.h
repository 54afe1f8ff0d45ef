// Putting a finished temporary file in place so that it survives a power cut.
//
// A rename alone makes a file appear whole or not at all to other processes, but not on disk: after a power
// cut the new name can be there with the data lost (an empty or short file), and a marker file written after it
// would vouch for it. commit_temporary() is the one place outputs are put in place: bk::Output (io/output.h)
// and the HDF5 temporary (data/hdf5_handle.h) both go through it.
#pragma once

#include <string>

namespace bk {

// fsyncs `temp`, renames it onto `path`, fsyncs the directory. `name` is the file as messages call it.
// Throws bk::Error naming it when a step fails.
void commit_temporary(const std::string& temp, const std::string& path, const std::string& name);

}  // namespace bk
