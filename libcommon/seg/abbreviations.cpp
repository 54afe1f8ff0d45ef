#include "seg/abbreviations.h"

#include "util/error.h"
#include "util/printable.h"
#include "io/input.h"

#include <array>

namespace bk {

namespace {

// English abbreviations, grouped by how a following word decides the break. Written for Wikipedia prose:
// titles before names never end a sentence; reference and dating forms lead into a number; the rest end a
// sentence now and then, so only a clear sentence starter after them breaks.
constexpr std::array kEnglishNeverBreak = {
    "mr", "mrs", "ms", "messrs", "mmes", "dr", "prof", "rev", "hon", "gen", "gov", "sen", "rep", "lt", "col",
    "capt", "sgt", "maj", "adm", "cmdr", "cdr", "cpl", "pvt", "brig", "supt", "insp", "pres", "fr",
    "e.g", "i.e", "vs", "v", "cf", "viz", "approx", "ca", "c", "esp", "incl", "fig", "figs", "vol", "vols"};

constexpr std::array kEnglishBeforeNumber = {
    "no", "nos", "nr", "p", "pp", "art", "sec", "para", "op", "ch", "chap", "eq", "eqs",
    "b", "d", "fl", "r"};  // born, died, flourished, reigned: "b. 1950"

constexpr std::array kEnglishAmbiguous = {
    "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    "tue", "tues", "thu", "thur", "thurs", "fri",
    "inc", "ltd", "co", "corp", "bros", "llc", "plc", "jr", "sr", "st", "mt", "ft", "ave", "blvd",
    "dept", "univ", "assn", "est", "ed", "eds", "al", "ibid", "resp", "bk", "pt", "pts",
    "u.s", "u.k", "u.n", "u.s.a", "u.s.s.r", "d.c", "ph.d", "a.m", "p.m", "a.d", "b.c",
    "ala", "ariz", "ark", "calif", "colo", "conn", "fla", "ill", "ind", "kan", "mich", "minn", "mont",
    "neb", "nev", "okla", "ore", "pa", "penn", "tenn", "tex", "va", "vt", "wis", "wyo"};

constexpr std::array kEnglishBeforeLowercase = {"etc"};

// Entries of ICU's English suppression list that are ordinary words or often end a sentence ("in AD. The",
// "World War I. He"); ICU would never break after them, so they are handed to our rules instead (single
// capitals go to the initials rule, the rest default to a break unless our table says otherwise).
constexpr std::array kEnglishIcuUnsuppress = {
    "AD.", "AA.", "AB.", "DC.", "PC.", "OK.", "Ok.", "In.", "Is.", "On.", "To.", "Do.", "Go.", "As.", "All.",
    "By.", "Up.", "Or.", "Job.", "Joe.", "Act.", "Hat.", "Link.", "Long.", "Card.", "Mart.", "Pro.", "Lib.",
    "Min.", "Est.", "Yr.", "Hz.", "Kb.", "Mb.", "Gb.", "Op.", "Jam.", "Id.", "Ed.", "Cap.", "Comm.", "Diff.",
    "Def.", "Var.", "Num.", "Org.", "Ex.", "Cont.", "Abs.", "Misc.", "Phys.", "Lev.", "Dec.", "Mar.", "Nov.",
    "Jan.", "Feb.", "Aug.", "Sep.", "Sept.", "Jun.", "Fri.", "Rep.", "Conn.",
    "A.", "B.", "D.", "E.", "F.", "G.", "I.", "K.", "L.", "M.", "O.", "Q.", "S.", "T.", "U.", "X.", "Z."};

// Words that, capitalised right after an ambiguous abbreviation, almost always open a new sentence.
constexpr std::array kEnglishStarters = {
    "the", "a", "an", "he", "she", "it", "they", "we", "i", "you", "his", "her", "its", "their", "our", "my",
    "this", "that", "these", "those", "there", "here", "in", "on", "at", "by", "for", "from", "after", "before",
    "during", "however", "but", "and", "as", "when", "while", "although", "though", "since", "if", "many",
    "some", "most", "several", "both", "each", "such", "another", "all", "not", "what", "which", "who",
    "where", "why", "how", "because", "later", "then", "thus", "today", "meanwhile", "despite", "according",
    "under", "with", "without", "between", "among", "also", "following", "furthermore", "moreover",
    "nevertheless", "nonetheless", "instead", "indeed", "yet", "so", "similarly", "unlike", "upon", "until",
    "unless", "once", "only", "even", "every", "neither", "nor", "either", "finally", "eventually",
    "initially", "originally", "currently", "now", "soon", "other", "one", "over", "through", "within",
    "about", "around", "throughout", "to", "into", "again", "afterwards", "subsequently"};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string fold_ascii(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// "ambiguous" -> AbbrevKind::ambiguous etc.; nullopt for an unknown name.
std::optional<AbbrevKind> parse_abbrev_kind(std::string_view name) {
  if (name == "never") return AbbrevKind::never_break;
  if (name == "number") return AbbrevKind::before_number;
  if (name == "ambiguous") return AbbrevKind::ambiguous;
  if (name == "lowercase") return AbbrevKind::before_lowercase;
  return std::nullopt;
}

}  // namespace

void AbbreviationTable::add(std::string_view word, AbbrevKind kind) {
  while (!word.empty() && word.back() == '.') word.remove_suffix(1);
  if (!word.empty()) entries_[fold_ascii(word)] = kind;
}

void AbbreviationTable::add_starter(std::string_view word) { starters_.insert(fold_ascii(word)); }

std::optional<AbbrevKind> AbbreviationTable::find(std::string_view token) const {
  if (entries_.empty() || token.empty() || token.size() > 32) return std::nullopt;
  char folded[32];
  for (size_t i = 0; i < token.size(); ++i) {
    char c = token[i];
    folded[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  auto it = entries_.find(std::string(folded, token.size()));
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

bool AbbreviationTable::is_starter(std::string_view word) const {
  if (starters_.empty() || word.empty() || word.size() > 32) return false;
  return starters_.count(fold_ascii(word)) > 0;
}

AbbreviationTable builtin_abbreviations(std::string_view lang) {
  AbbreviationTable table;
  if (lang.substr(0, 2) != "en" || (lang.size() > 2 && lang[2] != '_' && lang[2] != '-')) return table;
  for (const char* w : kEnglishNeverBreak) table.add(w, AbbrevKind::never_break);
  for (const char* w : kEnglishBeforeNumber) table.add(w, AbbrevKind::before_number);
  for (const char* w : kEnglishAmbiguous) table.add(w, AbbrevKind::ambiguous);
  for (const char* w : kEnglishBeforeLowercase) table.add(w, AbbrevKind::before_lowercase);
  for (const char* w : kEnglishStarters) table.add_starter(w);
  for (const char* w : kEnglishIcuUnsuppress) table.add_icu_unsuppress(w);
  return table;
}

void load_abbreviation_file(const std::string& path, AbbreviationTable& table) {
  Input input(path);
  LineReader lines(input);
  std::string_view line;
  while (lines.next(line)) {
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    size_t b = 0;
    while (b < line.size() && is_space(line[b])) ++b;
    size_t e = b;
    while (e < line.size() && !is_space(line[e])) ++e;
    std::string_view word = line.substr(b, e - b);
    if (word.empty()) continue;
    while (e < line.size() && is_space(line[e])) ++e;
    size_t k = e;
    while (k < line.size() && !is_space(line[k])) ++k;
    std::string_view kind_name = line.substr(e, k - e);
    while (k < line.size() && is_space(line[k])) ++k;
    if (k != line.size())
      fail("{}: line {}: expected 'ABBREVIATION [KIND]', got extra text", input.name(), lines.line_number());
    auto kind = kind_name.empty() ? std::optional(AbbrevKind::ambiguous) : parse_abbrev_kind(kind_name);
    if (!kind)
      fail("{}: line {}: unknown kind '{}' (never, number, ambiguous, lowercase)", input.name(), lines.line_number(),
           printable_excerpt(kind_name));
    if (word.size() > 32) fail("{}: line {}: abbreviation longer than 32 bytes", input.name(), lines.line_number());
    table.add(word, *kind);
  }
}

}  // namespace bk
