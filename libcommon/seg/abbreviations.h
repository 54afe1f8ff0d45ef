// The abbreviation rules sent-seg applies on top of ICU's sentence breaks.
//
// An abbreviation is looked up by the token before a final period, without that period and with ASCII letters
// folded to lower case ("U.S." -> "u.s", "Mr." -> "mr"). Its kind says when a period after it still ends a
// sentence. A "sentence starter" is a word that, capitalised after an ambiguous abbreviation, shows that a new
// sentence begins ("...in the U.S. He left." breaks; "...the U.S. Army..." does not).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace bk {

enum class AbbrevKind {
  never_break,       // titles and Latin forms that always lead into more text: "Mr.", "Dr.", "e.g.", "vs."
  before_number,     // no break when a digit follows: "No. 5", "c. 1900", "pp. 12", "Fig. 3"
  ambiguous,         // may end a sentence: no break unless a capitalised sentence starter follows ("U.S.", "Inc.")
  before_lowercase,  // no break only when a lower-case word follows: "etc."
};

class AbbreviationTable {
 public:
  // Adds or replaces an entry; `word` may carry its final period ("Dr." or "Dr" are the same entry).
  void add(std::string_view word, AbbrevKind kind);
  void add_starter(std::string_view word);
  // Entries to take out of ICU's own suppression list for the locale, exactly as ICU spells them ("AD.").
  void add_icu_unsuppress(std::string_view entry) { icu_unsuppress_.emplace_back(entry); }
  const std::vector<std::string>& icu_unsuppress() const { return icu_unsuppress_; }

  std::optional<AbbrevKind> find(std::string_view token) const;  // token without its final period
  bool is_starter(std::string_view word) const;                  // word as written ("The"); case-folded here
  size_t size() const { return entries_.size(); }
  bool has_starters() const { return !starters_.empty(); }

 private:
  std::unordered_map<std::string, AbbrevKind> entries_;
  std::unordered_set<std::string> starters_;
  std::vector<std::string> icu_unsuppress_;
};

// The built-in list for a language ("en", "en_US", ...); languages without a list get an empty table, which
// leaves them with ICU's own suppressions and the language-independent rules.
AbbreviationTable builtin_abbreviations(std::string_view lang);

// Adds the entries of a user file: one abbreviation per line, optionally followed by whitespace and a kind
// (never, number, ambiguous, lowercase; default ambiguous). '#' starts a comment. Errors name file and line.
void load_abbreviation_file(const std::string& path, AbbreviationTable& table);

}  // namespace bk
