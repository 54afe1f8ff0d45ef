// An output must never be one of the run's inputs: "-o corpus.txt -f corpus.txt" would read the input while the
// output's rename replaces it, and a directory output replaced under --force takes whatever lies inside it along.
// Checked before anything is opened for writing, by device and inode (links followed, so a symbolic or hard link
// to an input is that input) rather than by spelling.
#pragma once

#include <string>
#include <vector>

namespace bk {

enum class OutputKind { file, directory };

// A usage error (exit 2), naming `flag` and the input, when `output`
//   - is an existing file or directory that is also one of `inputs`;
//   - lies inside an input that is a directory (a checkpoint's or a data directory: every file in it is read, or
//     may be by the next run);
//   - for a directory output (replaced whole under --force): holds an input (the input lies inside it).
// "-" (stdin or stdout) and inputs that do not exist pass; so does an output that does not exist yet, unless it
// would be made inside an input directory.
void refuse_output_over_inputs(const char* flag, const std::string& output, OutputKind kind,
                               const std::vector<std::string>& inputs);

// Whether `path` (existing) is the directory `dir` or lies inside it, by device and inode, links followed.
bool is_or_lies_inside(const std::string& path, const std::string& dir);

}  // namespace bk
