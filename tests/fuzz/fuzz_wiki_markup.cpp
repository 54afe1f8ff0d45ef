// libFuzzer target for the wikitext cleaner: any bytes must be cleaned without a crash, a sanitizer report or
// a hang, and the result must keep the cleaner's promises: paragraphs non-empty, without newlines or
// leading/trailing spaces, and valid UTF-8 whenever the input was.
#include "util/utf8.h"
#include "wiki/markup.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const bool valid_input = bk::utf8_invalid_offset(text) == std::string_view::npos;
  for (int variant = 0; variant < 2; ++variant) {
    bk::WikiMarkupOptions options;
    options.keep_headings = options.keep_lists = variant == 1;
    for (const auto& p : bk::clean_wikitext(text, options)) {
      if (p.empty() || p.find('\n') != std::string::npos || p.front() == ' ' || p.back() == ' ') std::abort();
      if (valid_input && bk::utf8_invalid_offset(p) != std::string_view::npos) std::abort();
    }
  }
  (void)bk::is_disambiguation(text.substr(0, 40), text);
  return 0;
}
