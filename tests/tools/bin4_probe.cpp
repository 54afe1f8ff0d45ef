// Bench helper (bench/pipeline.sh): bin4 in process, then the CPU seconds of its calling thread (dealing,
// appending, the writers' HDF5 calls), of its reading thread, and of the whole process (the deflate workers too).
// The two named threads are the parts --threads does not spread.
//   bin4_probe THREADS OUTPUT_DIR INPUT.hdf5...
//     -> {"main_thread_cpu_s": ..., "reading_thread_cpu_s": ..., "process_cpu_s": ...}
#include "cli/run_tool.h"
#include "datasets/bin4.h"
#include "util/cpu_time.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  return bk::run_tool("bin4_probe", argc, argv, [](int argc, char** argv) {
    if (argc < 4) bk::usage_fail("usage: bin4_probe THREADS OUTPUT_DIR INPUT.hdf5...");
    bk::Bin4Config cfg;
    cfg.threads = std::stoi(argv[1]);
    cfg.output_dir = argv[2];
    cfg.quiet = true;
    for (int i = 3; i < argc; ++i) cfg.inputs.push_back(argv[i]);
    const bk::Bin4Result result = bk::run_bin4(cfg);
    std::cout << nlohmann::json{{"main_thread_cpu_s", bk::cpu_seconds(RUSAGE_THREAD)},
                                {"reading_thread_cpu_s", result.reading_cpu_seconds},
                                {"process_cpu_s", bk::cpu_seconds(RUSAGE_SELF)}}.dump()
              << "\n";
    return 0;
  });
}
