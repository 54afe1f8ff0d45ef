#include "wiki/markup.h"

#include "wiki/markup_passes.h"

namespace bk {

std::vector<std::string> clean_wikitext(std::string_view wikitext, const WikiMarkupOptions& options) {
  // Scratch buffers reused across articles on the same thread: the passes ping-pong between them.
  thread_local std::string a, b;
  a.clear();
  detail::strip_comments_and_extension_tags(wikitext, a);
  b.clear();
  detail::drop_templates_and_tables(a, b);
  a.clear();
  detail::unwrap_links(b, a);
  std::vector<std::string> paragraphs;
  detail::render_lines(a, options, paragraphs);
  if (a.capacity() > (64u << 20)) std::string().swap(a);  // don't keep a huge article's buffer forever
  if (b.capacity() > (64u << 20)) std::string().swap(b);
  return paragraphs;
}

}  // namespace bk
