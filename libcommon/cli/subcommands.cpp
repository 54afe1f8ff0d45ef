#include "cli/subcommands.h"

#include "cli/options.h"
#include "util/error.h"

#include <cstdio>
#include <cstring>

namespace bk {
namespace {

// "encode, decode or train"
std::string names_of(const std::vector<Subcommand>& subcommands) {
  std::string names;
  for (size_t i = 0; i < subcommands.size(); ++i) {
    if (i > 0) names += i + 1 == subcommands.size() ? " or " : ", ";
    names += subcommands[i].name;
  }
  return names;
}

}  // namespace

int run_subcommands(const char* tool, const char* synopsis, const char* description,
                    const std::vector<Subcommand>& subcommands, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') {
    Options top(tool, synopsis, description);
    if (!top.parse(argc, argv)) {
      if (argc > 1 && std::strcmp(argv[1], "--version") == 0) return 0;
      for (const Subcommand& s : subcommands) std::printf("\n%s", s.help_text().c_str());
      return 0;
    }
    usage_fail("missing subcommand ({})", names_of(subcommands));
  }
  for (const Subcommand& s : subcommands)
    if (std::strcmp(argv[1], s.name) == 0) return s.run(argc - 1, argv + 1);
  usage_fail("unknown subcommand '{}' (expected {})", argv[1], names_of(subcommands));
}

}  // namespace bk
