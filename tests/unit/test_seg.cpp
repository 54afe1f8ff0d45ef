// Sentence segmentation: one case per rule, with the split a careful human reader makes.
#include <doctest/doctest.h>

#include "util/error.h"
#include "seg/abbreviations.h"
#include "seg/segmenter.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using Sentences = std::vector<std::string>;
using bk::AbbrevKind;
using bk::SentenceSegmenter;

namespace {

Sentences split_en(const std::string& text) {
  static SentenceSegmenter segmenter(bk::SentenceSegmenterOptions{});
  return segmenter.split(text);
}

}  // namespace

TEST_CASE("seg: plain sentences and trimming") {
  CHECK(split_en("One. Two! Three? Four") == Sentences{"One.", "Two!", "Three?", "Four"});
  CHECK(split_en("  Leading and trailing.   Spaces  here.  ") ==
        Sentences{"Leading and trailing.", "Spaces  here."});
  CHECK(split_en("Tabs.\tAnd\u00a0no-break spaces.\u00a0\u00a0Next.") ==
        Sentences{"Tabs.", "And\u00a0no-break spaces.", "Next."});
  CHECK(split_en("").empty());
  CHECK(split_en("   ").empty());
  CHECK(split_en("\u3000\u00a0").empty());
  CHECK(split_en("No final period") == Sentences{"No final period"});
}

TEST_CASE("seg: titles and Latin abbreviations never end a sentence") {
  CHECK(split_en("Mr. Smith met Mrs. Jones and Dr. Who. They talked.") ==
        Sentences{"Mr. Smith met Mrs. Jones and Dr. Who.", "They talked."});
  CHECK(split_en("Prof. Xavier, Gen. Lee, Gov. Brown, Sen. Kay, Rep. Ode, Lt. Col. Capt. Sgt. Moe.") ==
        Sentences{"Prof. Xavier, Gen. Lee, Gov. Brown, Sen. Kay, Rep. Ode, Lt. Col. Capt. Sgt. Moe."});
  CHECK(split_en("Some fruits, e.g. Apples, are red, i.e. Not green. Next.") ==
        Sentences{"Some fruits, e.g. Apples, are red, i.e. Not green.", "Next."});
  CHECK(split_en("Roe vs. Wade and cf. Smith were cited. Done.") ==
        Sentences{"Roe vs. Wade and cf. Smith were cited.", "Done."});
  CHECK(split_en("It took approx. Ten days, ca. Twelve at most.") ==
        Sentences{"It took approx. Ten days, ca. Twelve at most."});
  CHECK(split_en("See Fig. 3 and Vol. II of the work.") == Sentences{"See Fig. 3 and Vol. II of the work."});
  CHECK(split_en("Mr.  Smith had two spaces.") == Sentences{"Mr.  Smith had two spaces."});
  CHECK(split_en("MR. SMITH shouted.") == Sentences{"MR. SMITH shouted."});
}

TEST_CASE("seg: abbreviations before numbers") {
  CHECK(split_en("He was ranked No. 1 in 1995. Then he fell.") ==
        Sentences{"He was ranked No. 1 in 1995.", "Then he fell."});
  CHECK(split_en("Built c. 1900 and rebuilt c. AD 1950.") == Sentences{"Built c. 1900 and rebuilt c. AD 1950."});
  CHECK(split_en("See pp. 12-14 and p. 7 of it.") == Sentences{"See pp. 12-14 and p. 7 of it."});
  CHECK(split_en("The answer was No. The question remained.") ==
        Sentences{"The answer was No.", "The question remained."});
}

TEST_CASE("seg: months, companies and other ambiguous abbreviations") {
  CHECK(split_en("It opened on Jan. 5, 1990 and closed in Dec. 1999.") ==
        Sentences{"It opened on Jan. 5, 1990 and closed in Dec. 1999."});
  CHECK(split_en("He joined Apple Inc. The company grew.") == Sentences{"He joined Apple Inc.", "The company grew."});
  CHECK(split_en("Acme Ltd. Chairman Bob resigned.") == Sentences{"Acme Ltd. Chairman Bob resigned."});
  CHECK(split_en("Martin Luther King Jr. He spoke.") == Sentences{"Martin Luther King Jr.", "He spoke."});
  CHECK(split_en("Smith et al. (2005) found it. Jones et al. In 2006 disagreed.") ==
        Sentences{"Smith et al. (2005) found it.", "Jones et al.", "In 2006 disagreed."});
  CHECK(split_en("They lived on St. Helena island.") == Sentences{"They lived on St. Helena island."});
}

TEST_CASE("seg: etc. ends a sentence unless lower case follows") {
  CHECK(split_en("Apples, pears, etc. are fruit.") == Sentences{"Apples, pears, etc. are fruit."});
  CHECK(split_en("Apples, pears, etc. Paris is far.") == Sentences{"Apples, pears, etc.", "Paris is far."});
  CHECK(split_en("Apples, pears, etc. The end.") == Sentences{"Apples, pears, etc.", "The end."});
}

TEST_CASE("seg: U.S. and other dotted acronyms") {
  CHECK(split_en("He served in the U.S. Army for years.") == Sentences{"He served in the U.S. Army for years."});
  CHECK(split_en("He went to the U.S. He left.") == Sentences{"He went to the U.S.", "He left."});
  CHECK(split_en("The U.K. and the U.S. signed. Both agreed.") ==
        Sentences{"The U.K. and the U.S. signed.", "Both agreed."});
  CHECK(split_en("She moved to Washington, D.C. The city was new.") ==
        Sentences{"She moved to Washington, D.C.", "The city was new."});
  CHECK(split_en("He earned a Ph.D. in 1990 at 10 a.m. on Monday.") ==
        Sentences{"He earned a Ph.D. in 1990 at 10 a.m. on Monday."});
  CHECK(split_en("I live in N.Y. City now.") == Sentences{"I live in N.Y. City now."});
}

TEST_CASE("seg: single-letter initials") {
  CHECK(split_en("J. R. R. Tolkien wrote it.") == Sentences{"J. R. R. Tolkien wrote it."});
  CHECK(split_en("George W. Bush spoke.") == Sentences{"George W. Bush spoke."});
  CHECK(split_en("By J. A. Smith and T. N. Newman.") == Sentences{"By J. A. Smith and T. N. Newman."});
  CHECK(split_en("It ended in World War I. The peace followed.") ==
        Sentences{"It ended in World War I.", "The peace followed."});
  CHECK(split_en("Take vitamin C. It helps.") == Sentences{"Take vitamin C.", "It helps."});
}

TEST_CASE("seg: decimals, versions and glued punctuation") {
  CHECK(split_en("Pi is 3.14 and e is 2.718. Both are irrational.") ==
        Sentences{"Pi is 3.14 and e is 2.718.", "Both are irrational."});
  CHECK(split_en("Upgrade from v1.2 to v1.10 now.") == Sentences{"Upgrade from v1.2 to v1.10 now."});
  CHECK(split_en("Visit www.Example.com today.") == Sentences{"Visit www.Example.com today."});
  CHECK(split_en("A typo.Here it is.") == Sentences{"A typo.Here it is."});
}

TEST_CASE("seg: sentences that start with a number") {
  CHECK(split_en("The state has 383 species. 113 of these are rare.") ==
        Sentences{"The state has 383 species.", "113 of these are rare."});
  CHECK(split_en("Over the age of 60. 33% of members voted.") ==
        Sentences{"Over the age of 60.", "33% of members voted."});
}

TEST_CASE("seg: ellipses") {
  CHECK(split_en("He paused... and went on.") == Sentences{"He paused... and went on."});
  CHECK(split_en("He paused\u2026 and went on.") == Sentences{"He paused\u2026 and went on."});
  CHECK(split_en("It was over... The next day came.") == Sentences{"It was over...", "The next day came."});
  CHECK(split_en("It was over. . . and yet.") == Sentences{"It was over. . . and yet."});
}

TEST_CASE("seg: quotes and brackets") {
  CHECK(split_en("\"Why?\" he asked. \"Because.\" She left.") ==
        Sentences{"\"Why?\" he asked.", "\"Because.\"", "She left."});
  CHECK(split_en("He said \u201cStop!\u201d and ran. Then quiet.") ==
        Sentences{"He said \u201cStop!\u201d and ran.", "Then quiet."});
  CHECK(split_en("It is big (very big!) and old. (It is.) Yes.") ==
        Sentences{"It is big (very big!) and old.", "(It is.)", "Yes."});
  CHECK(split_en("Who knows? Nobody.") == Sentences{"Who knows?", "Nobody."});
}

TEST_CASE("seg: CJK and other scripts") {
  CHECK(split_en("東京は大きい。大阪も大きい。") == Sentences{"東京は大きい。", "大阪も大きい。"});
  CHECK(split_en("这是第一句。这是第二句！这是第三句？") ==
        Sentences{"这是第一句。", "这是第二句！", "这是第三句？"});
  CHECK(split_en("Ελληνικά κείμενα. Δεύτερη πρόταση.") == Sentences{"Ελληνικά κείμενα.", "Δεύτερη πρόταση."});
  CHECK(split_en("Emoji 😀 here. Äpfel und Birnen.") == Sentences{"Emoji 😀 here.", "Äpfel und Birnen."});
}

TEST_CASE("seg: pieces always rebuild the paragraph") {
  const std::string text =
      "In 1990 the U.S. Army moved.  Dr. Who (i.e. the Doctor) left!  \"Really?\" asked J. Smith... Yes. 5 stayed.";
  std::string joined, squeezed;
  for (const auto& s : split_en(text)) joined += s;
  for (char c : text)
    if (c != ' ') squeezed += c;
  std::string joined_squeezed;
  for (char c : joined)
    if (c != ' ') joined_squeezed += c;
  CHECK(joined_squeezed == squeezed);
}

TEST_CASE("seg: other languages use ICU's suppressions only") {
  SentenceSegmenter german(bk::SentenceSegmenterOptions{"de", ""});
  CHECK(german.split("Er kam z.B. spät. Dann ging er.") == Sentences{"Er kam z.B. spät.", "Dann ging er."});
  CHECK(german.split("Das Haus. Der Garten.") == Sentences{"Das Haus.", "Der Garten."});
  // The English list is not used: "Bros." followed by a capital breaks as ICU decides.
  CHECK(german.split("Er kaufte Acme Bros. Chef war Bob.") == Sentences{"Er kaufte Acme Bros.", "Chef war Bob."});
  // Initials hold in every language.
  CHECK(german.split("Von J. R. R. Tolkien.") == Sentences{"Von J. R. R. Tolkien."});
}

TEST_CASE("seg: a language without ICU abbreviation data") {
  SentenceSegmenter japanese(bk::SentenceSegmenterOptions{"ja", ""});
  CHECK(japanese.split("東京は大きい。大阪も大きい。Mr. Smith.") == Sentences{"東京は大きい。", "大阪も大きい。", "Mr.", "Smith."});
}

TEST_CASE("seg: abbreviation files") {
  auto dir = std::filesystem::temp_directory_path() / ("bertkit-seg-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "abbr.txt") << "# extra entries\nAbt.\nzzq never\n\nmisc. lowercase\n";
    bk::SentenceSegmenterOptions options;
    options.abbreviations_file = (dir / "abbr.txt").string();
    SentenceSegmenter segmenter(options);
    CHECK(segmenter.split("See Abt. Vogel for it. Ask zzq. Moe about it.") ==
          Sentences{"See Abt. Vogel for it.", "Ask zzq. Moe about it."});
    CHECK(segmenter.split("See Abt. The rest.") == Sentences{"See Abt.", "The rest."});
  }
  {
    std::ofstream(dir / "bad.txt") << "Abt.\nfoo sometimes\n";
    bk::SentenceSegmenterOptions options;
    options.abbreviations_file = (dir / "bad.txt").string();
    CHECK_THROWS_WITH_AS(SentenceSegmenter{options}, doctest::Contains("bad.txt: line 2: unknown kind"), bk::Error);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("seg: abbreviation table lookups") {
  auto table = bk::builtin_abbreviations("en_US");
  CHECK(table.find("Mr") == AbbrevKind::never_break);
  CHECK(table.find("U.S") == AbbrevKind::ambiguous);
  CHECK(table.find("etc") == AbbrevKind::before_lowercase);
  CHECK(table.find("No") == AbbrevKind::before_number);
  CHECK_FALSE(table.find("house").has_value());
  CHECK(table.is_starter("The"));
  CHECK_FALSE(table.is_starter("Army"));
  CHECK(bk::builtin_abbreviations("de").size() == 0);
  CHECK(bk::builtin_abbreviations("eng").size() == 0);
}

TEST_CASE("seg: clones split the same way on other threads") {
  SentenceSegmenter prototype(bk::SentenceSegmenterOptions{});
  const std::string text = "Mr. Smith went to the U.S. He left. J. R. R. Tolkien wrote. Done.";
  const Sentences expected{"Mr. Smith went to the U.S.", "He left.", "J. R. R. Tolkien wrote.", "Done."};
  std::vector<Sentences> results(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    auto clone = prototype.clone();
    threads.emplace_back([&results, t, &text, seg = std::shared_ptr<SentenceSegmenter>(std::move(clone))] {
      for (int i = 0; i < 200; ++i) results[t] = seg->split(text);
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& r : results) CHECK(r == expected);
}
