// The one options layer: Boost.program_options with the conventions every tool shares.
//
//   bk::WikiCleanConfig cfg;
//   const bk::WikiCleanConfig defaults;        // each default is read from the config, never written here
//   bk::Options opts("wiki-clean", "[options] [INPUT|-]", "Turn a MediaWiki XML dump into plain text.");
//   opts.add()("threads,t", po::value(&cfg.threads)->default_value(defaults.threads), "worker threads");
//   opts.positional("input", 1);               // or -1 for any number
//   if (!opts.parse(argc, argv)) return 0;     // --help / --version were printed
//   run_wiki_clean(cfg);                       // which checks the values (cfg.validate()) first
//
// --help prints the usage to stdout and parse() returns false; so does --version. -q/--quiet is common to
// all tools. Unknown flags and bad values throw boost errors that run_tool turns into exit 2; so does a negative
// value given to an unsigned option (a count or size), which Boost alone would wrap to a huge number.
#pragma once

#include "util/choices.h"
#include "util/error.h"

#include <boost/program_options.hpp>

#include <optional>
#include <string>
#include <vector>

namespace bk {

namespace po = boost::program_options;

class Options {
 public:
  Options(std::string tool, std::string synopsis, std::string description);

  po::options_description_easy_init add() { return options_.add_options(); }
  // Positional arguments collected under `name` (max_count -1 = unlimited). Call at most once.
  void positional(const std::string& name, int max_count);
  // Free text printed after the option list in --help (examples, exit codes).
  void epilog(std::string text) { epilog_ = std::move(text); }

  bool parse(int argc, char** argv);

  bool quiet() const { return quiet_; }
  bool has(const std::string& name) const { return vm_.count(name) > 0 && !vm_[name].defaulted(); }
  std::vector<std::string> positionals() const;
  const po::variables_map& vm() const { return vm_; }

  std::string help_text() const;

 private:
  void reject_negative_unsigned(const po::parsed_options& parsed) const;

  std::string tool_, synopsis_, description_, epilog_;
  std::string positional_name_;
  po::options_description options_;
  po::positional_options_description positional_;
  po::variables_map vm_;
  bool quiet_ = false;
};

// A double default as --help shows it: the shortest text that reads back to the value (0.15, not 0.150000).
//   po::value(&cfg.p)->default_value(defaults.p, bk::default_text(defaults.p))
std::string default_text(double value);

// A flag without a default whose absence the config tells apart from every value it can take: stored into
// `target` only when given.
template <typename T>
po::typed_value<T>* optional_value(std::optional<T>& target) {
  return po::value<T>()->notifier([&target](const T& value) { target = value; });
}

// The value `name` stands for among `choices`; "--FLAG must be a, b or c, got 'x'" (UsageError, exit 2) otherwise.
template <typename T, size_t N>
T parse_choice(const char* flag, const Choice<T> (&choices)[N], const std::string& name) {
  const std::optional<T> value = find_choice(choices, name);
  if (!value) throw UsageError("--" + std::string(flag) + " must be " + choice_list(choices) + ", got '" + name + "'");
  return *value;
}

// A flag that takes one of `choices` by name (util/choices.h) into `target`, its default the name of `fallback`
// (the tool's default).
template <typename T, size_t N>
po::typed_value<std::string>* choice_value(const char* flag, const Choice<T> (&choices)[N], T& target, T fallback) {
  return po::value<std::string>()->default_value(choice_name(choices, fallback))->notifier(
      [&target, &choices, flag](const std::string& name) { target = parse_choice(flag, choices, name); });
}

// The same without a default: stored into `target` only when given (as optional_value).
template <typename T, size_t N>
po::typed_value<std::string>* optional_choice_value(const char* flag, const Choice<T> (&choices)[N],
                                                    std::optional<T>& target) {
  return po::value<std::string>()->notifier(
      [&target, &choices, flag](const std::string& name) { target = parse_choice(flag, choices, name); });
}

// Checks shared by many tools; each throws UsageError naming the flag.
void require_positive(const char* flag, long long value);
void require_range(const char* flag, double value, double lo, double hi);

}  // namespace bk
