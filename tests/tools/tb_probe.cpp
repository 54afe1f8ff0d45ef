// Test-only helper (not a product tool): writes TensorBoard scalars with bk::TensorBoardWriter so that the
// compat test can read them back with TensorBoard's own EventAccumulator.
//
//   tb_probe LOGDIR     reads lines "STEP<tab>TAG<tab>VALUE" from stdin (tags may hold spaces); consecutive lines with the same STEP are one
//                       add_scalars() call. Prints the event file's path on stdout.
#include "cli/run_tool.h"
#include "train/loop/tensorboard.h"

#include <iostream>
#include <optional>

int main(int argc, char** argv) {
  return bk::run_tool("tb_probe", argc, argv, [](int argc, char** argv) {
    if (argc != 2) bk::usage_fail("usage: tb_probe LOGDIR < scalars");
    bk::TensorBoardWriter writer(argv[1]);
    std::optional<int64_t> step;
    bk::Scalars scalars;
    for (std::string line; std::getline(std::cin, line);) {
      if (line.empty()) continue;
      size_t tab1 = line.find('\t'), tab2 = line.rfind('\t');
      if (tab1 == std::string::npos || tab2 == tab1) bk::fail("bad line: {}", line);
      int64_t s = std::stoll(line.substr(0, tab1));
      std::string tag = line.substr(tab1 + 1, tab2 - tab1 - 1);
      double value = std::stod(line.substr(tab2 + 1));
      if (step && *step != s) {
        writer.add_scalars(*step, scalars);
        scalars.clear();
      }
      step = s;
      scalars.emplace_back(tag, value);
    }
    if (step) writer.add_scalars(*step, scalars);
    std::cout << writer.path() << "\n";
    return 0;
  });
}
