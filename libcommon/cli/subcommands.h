// Tools made of subcommands that share one shape (wordpiece and bpe: encode, decode, train): `TOOL SUB [options]`,
// each subcommand parsed by its own Options into its config; `TOOL --help` prints the overview and every
// subcommand's help.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace bk {

struct Subcommand {
  const char* name;
  std::function<std::string()> help_text;
  std::function<int(int, char**)> run;  // gets argv from the subcommand's own name on ("wordpiece encode" in --help)
};

// A subcommand whose `Parsed` holds `opts` (bk::Options) and `config` (with inputs and quiet): parses, then runs.
template <typename Parsed, typename Run>
Subcommand subcommand(const char* name, Run run) {
  return {name, [] { return Parsed().opts.help_text(); }, [run](int argc, char** argv) {
            Parsed o;
            if (!o.opts.parse(argc, argv)) return 0;
            o.config.inputs = o.opts.positionals();
            o.config.quiet = o.opts.quiet();
            run(o.config);
            return 0;
          }};
}

// The main of such a tool, inside bk::run_tool.
int run_subcommands(const char* tool, const char* synopsis, const char* description,
                    const std::vector<Subcommand>& subcommands, int argc, char** argv);

}  // namespace bk
