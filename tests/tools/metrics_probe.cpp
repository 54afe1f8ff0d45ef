// Test-only: the GLUE scores of tasks/finetune/glue_metrics.h on data given as JSON, for tests/compat/test_glue_metrics.py.
//   metrics_probe < {"predicted": [ints], "gold": [ints], "x": [floats], "y": [floats]}
//   -> {"accuracy", "f1", "mcc", "pearson", "spearman"} (each present when its inputs are)
#include "cli/run_tool.h"
#include "tasks/finetune/glue_metrics.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <iterator>
#include <string>

int main(int argc, char** argv) {
  return bk::run_tool("metrics_probe", argc, argv, [](int, char**) {
    const std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    const auto in = nlohmann::json::parse(text);
    nlohmann::json out = nlohmann::json::object();
    if (in.contains("predicted")) {
      const auto p = in["predicted"].get<std::vector<int64_t>>(), g = in["gold"].get<std::vector<int64_t>>();
      out["accuracy"] = bk::accuracy(p, g);
      out["f1"] = bk::f1_score(p, g);
      out["mcc"] = bk::matthews_corrcoef(p, g);
    }
    if (in.contains("x")) {
      const auto x = in["x"].get<std::vector<double>>(), y = in["y"].get<std::vector<double>>();
      out["pearson"] = bk::pearson(x, y);
      out["spearman"] = bk::spearman(x, y);
    }
    std::cout << out.dump() << "\n";
    return 0;
  });
}
