#include "cli/options.h"

#include "bertkit/version.h"
#include "util/error.h"

#include <boost/make_shared.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string_view>
#include <typeinfo>
#include <vector>
#include <sstream>

namespace bk {

namespace {

// Levenshtein distance, the row kept small: flag names are short.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The declared long flag nearest to a misspelt one, when it is near enough to be what was meant (a few letters
// off, at most a third of the name); "" otherwise.
std::string nearest_flag(const po::options_description& options, std::string_view given) {
  while (given.starts_with('-')) given.remove_prefix(1);
  given = given.substr(0, given.find('='));
  std::string best;
  size_t best_distance = std::max<size_t>(1, given.size() / 3) + 1;
  for (const auto& option : options.options()) {
    const std::string& name = option->long_name();
    if (name.empty()) continue;
    const size_t d = edit_distance(given, name);
    if (d < best_distance) best = name, best_distance = d;
  }
  return best;
}

}  // namespace

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

namespace {

bool is_unsigned_integer(const std::type_info& type) {
  return type == typeid(unsigned char) || type == typeid(unsigned short) || type == typeid(unsigned int) ||
         type == typeid(unsigned long) || type == typeid(unsigned long long);
}

bool is_integer(const std::type_info& type) {
  return is_unsigned_integer(type) || type == typeid(int) || type == typeid(long) || type == typeid(long long) ||
         type == typeid(short) || type == typeid(signed char);
}

bool ends_with(const std::string& text, std::string_view tail) { return text.ends_with(tail); }

// The placeholder --help shows for a value that was declared without value_name(): a name for what the value is
// (FILE, DIR, N, RATE, X), else the option's own name in capitals (--layout LAYOUT).
std::string placeholder_for(const po::option_description& opt) {
  const std::string& name = opt.long_name();
  const auto* typed = dynamic_cast<const po::typed_value_base*>(opt.semantic().get());
  const std::type_info& type = typed ? typed->value_type() : typeid(std::string);
  if (is_integer(type)) return "N";
  if (type == typeid(double) || type == typeid(float))
    return name.find("rate") != std::string::npos ? "RATE" : "X";
  if (ends_with(name, "dir") || ends_with(name, "-directory")) return "DIR";
  if (name == "output" || name == "input" || name == "vocab" || name == "config" || ends_with(name, "file") ||
      ends_with(name, "-path") || ends_with(name, "abbreviations"))
    return "FILE";
  if (name.starts_with("master-addr")) return "HOST";
  if (ends_with(name, "-url") || ends_with(name, "url-base")) return "URL";
  std::string upper;
  for (char c : name) upper += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper;
}

// A value's semantics with another name in --help; every other call goes to the declared semantics.
class NamedValue : public po::value_semantic {
 public:
  NamedValue(boost::shared_ptr<const po::value_semantic> inner, std::string name)
      : inner_(std::move(inner)), name_(std::move(name)) {}
  std::string name() const override { return name_; }
  unsigned min_tokens() const override { return inner_->min_tokens(); }
  unsigned max_tokens() const override { return inner_->max_tokens(); }
  bool is_composing() const override { return inner_->is_composing(); }
  bool is_required() const override { return inner_->is_required(); }
  void parse(boost::any& store, const std::vector<std::string>& tokens, bool utf8) const override {
    inner_->parse(store, tokens, utf8);
  }
  bool apply_default(boost::any& store) const override { return inner_->apply_default(store); }
  void notify(const boost::any& store) const override { inner_->notify(store); }

 private:
  boost::shared_ptr<const po::value_semantic> inner_;
  std::string name_;
};

// `opt` as --help lists it: Boost writes a value declared without value_name() as "arg"; it gets a name here,
// so no tool's --help shows a bare "arg".
boost::shared_ptr<po::option_description> with_placeholder(const boost::shared_ptr<po::option_description>& opt) {
  const auto semantic = opt->semantic();
  if (!semantic || semantic->max_tokens() == 0) return opt;
  std::string shown = semantic->name();
  const std::string& bare = po::arg;
  size_t at = shown.starts_with(bare) ? 0 : shown.starts_with("[=" + bare) ? 2 : std::string::npos;
  if (at == std::string::npos || (shown.size() > at + bare.size() && shown[at + bare.size()] != ' ' &&
                                  shown[at + bare.size()] != '('))
    return opt;
  shown.replace(at, bare.size(), placeholder_for(*opt));
  std::string names = opt->long_name();
  const std::string short_name = opt->canonical_display_name(po::command_line_style::allow_dash_for_short);
  if (short_name.size() == 2 && short_name[0] == '-') names += ',' + short_name.substr(1);
  return boost::make_shared<po::option_description>(names.c_str(), new NamedValue(semantic, shown),
                                                  opt->description().c_str());
}

}  // namespace

std::string Options::help_text() const {
  std::ostringstream out;
  out << "Usage: " << tool_ << ' ' << synopsis_ << "\n\n" << description_ << "\n\n";
  // The positional pseudo-option is an implementation detail; hide it from the listing.
  po::options_description visible("Options", 100, 50);
  for (const auto& opt : options_.options())
    if (opt->long_name() != positional_name_) visible.add(with_placeholder(opt));
  out << visible;
  if (!epilog_.empty()) out << '\n' << epilog_ << (epilog_.back() == '\n' ? "" : "\n");
  return out.str();
}


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
  po::parsed_options parsed(&options_);
  try {
    parsed = po::command_line_parser(argc, argv)
                 .options(options_)
                 .positional(positional_)
                 .style(po::command_line_style::default_style & ~po::command_line_style::allow_guessing)
                 .run();
  } catch (const po::unknown_option& e) {
    const std::string near = nearest_flag(options_, e.get_option_name());
    if (near.empty()) throw;
    usage_fail("{} (did you mean --{}?)", e.what(), near);
  }
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
