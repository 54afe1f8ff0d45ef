#include "cli/options.h"

#include "bertkit/version.h"
#include "util/error.h"

#include <fmt/format.h>

#include <cstdio>
#include <typeinfo>
#include <sstream>

namespace bk {

Options::Options(std::string tool, std::string synopsis, std::string description)
    : tool_(std::move(tool)),
      synopsis_(std::move(synopsis)),
      description_(std::move(description)),
      options_("Options", 100, 50) {
  options_.add_options()
    ("help,h", "print this help and exit")
    ("version", "print the version and exit")
    ("quiet,q", po::bool_switch(&quiet_), "no progress and no summary line on stderr");
}

void Options::positional(const std::string& name, int max_count) {
  positional_name_ = name;
  options_.add_options()(name.c_str(), po::value<std::vector<std::string>>(), "input files");
  positional_.add(name.c_str(), max_count);
}

std::string Options::help_text() const {
  std::ostringstream out;
  out << "Usage: " << tool_ << ' ' << synopsis_ << "\n\n" << description_ << "\n\n";
  // The positional pseudo-option is an implementation detail; hide it from the listing.
  po::options_description visible("Options", 100, 50);
  for (const auto& opt : options_.options())
    if (opt->long_name() != positional_name_) visible.add(opt);
  out << visible;
  if (!epilog_.empty()) out << '\n' << epilog_ << (epilog_.back() == '\n' ? "" : "\n");
  return out.str();
}

namespace {

bool is_unsigned_integer(const std::type_info& type) {
  return type == typeid(unsigned char) || type == typeid(unsigned short) || type == typeid(unsigned int) ||
         type == typeid(unsigned long) || type == typeid(unsigned long long);
}

}  // namespace

// Boost converts "-1" into an unsigned option as 2^64 - 1 (lexical_cast wraps), so `--min-chars -1` would read
// as "drop every article". A count or size is never negative: refuse it here, once for every tool.
void Options::reject_negative_unsigned(const po::parsed_options& parsed) const {
  for (const auto& option : parsed.options) {
    if (option.string_key.empty() || !vm_.count(option.string_key)) continue;
    if (!is_unsigned_integer(vm_[option.string_key].value().type())) continue;
    for (const auto& token : option.value) {
      size_t first = token.find_first_not_of(" \t");
      if (first != std::string::npos && token[first] == '-')
        usage_fail("--{} must not be negative, got {}", option.string_key, token);
    }
  }
}

bool Options::parse(int argc, char** argv) {
  auto parsed = po::command_line_parser(argc, argv)
                    .options(options_)
                    .positional(positional_)
                    .style(po::command_line_style::default_style & ~po::command_line_style::allow_guessing)
                    .run();
  po::store(parsed, vm_);
  reject_negative_unsigned(parsed);
  if (vm_.count("help")) {
    std::fputs(help_text().c_str(), stdout);
    return false;
  }
  if (vm_.count("version")) {
    std::printf("%s (bertkit) %s\n", tool_.c_str(), BERTKIT_VERSION);
    return false;
  }
  po::notify(vm_);
  return true;
}

std::vector<std::string> Options::positionals() const {
  if (positional_name_.empty() || !vm_.count(positional_name_)) return {};
  return vm_[positional_name_].as<std::vector<std::string>>();
}

std::string default_text(double value) { return fmt::format("{}", value); }  // fmt's shortest round-trip form

void require_positive(const char* flag, long long value) {
  if (value <= 0) usage_fail("--{} must be positive, got {}", flag, value);
}

void require_range(const char* flag, double value, double lo, double hi) {
  if (value < lo || value > hi) usage_fail("--{} must be in [{}, {}], got {}", flag, lo, hi, value);
}

}  // namespace bk
