// Each text tool's config checks itself: the defaults (with what a run must be given) pass, and each bad value
// is refused by validate() with the message the tool prints for it.
#include <doctest/doctest.h>

#include "util/error.h"
#include "seg/sent_seg.h"
#include "wiki/wiki_clean.h"

#include <string>

namespace {

// validate()'s UsageError message for `config` changed by `change`, or "accepted".
template <typename Config, typename Change>
std::string usage_of(Config config, Change change) {
  change(config);
  try {
    config.validate();
  } catch (const bk::UsageError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("wiki-clean config: defaults pass, a bad format or thread count is named") {
  bk::WikiCleanConfig c;
  CHECK_NOTHROW(c.validate());
  CHECK(usage_of(c, [](auto& b) { b.format = "jsonl"; }) == "accepted");
  CHECK(usage_of(c, [](auto& b) { b.format = "xml"; }) == "--format must be text, jsonl or wikiextractor, got 'xml'");
  CHECK(usage_of(c, [](auto& b) { b.threads = -1; }) == "--threads must be 0 (all cores) or positive, got -1");
}

TEST_CASE("sent-seg config: defaults pass, a bad thread count or locale is named") {
  bk::SentSegConfig c;
  CHECK_NOTHROW(c.validate());
  CHECK(usage_of(c, [](auto& b) { b.segmenter.lang = "de_CH"; }) == "accepted");
  CHECK(usage_of(c, [](auto& b) { b.threads = -2; }) == "--threads must be 0 (all cores) or positive, got -2");
  CHECK(usage_of(c, [](auto& b) { b.segmenter.lang = "en/../x"; }) ==
        "--lang expects a locale such as en or de_CH, got 'en/../x'");
}
