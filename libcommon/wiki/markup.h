// Wikitext -> plain paragraphs, the heart of wiki-clean.
//
// The cleaner runs a few single-pass scanners over the text, each one linear and allocation-light:
//   1. markup_tags.cpp   comments, <nowiki> (its text protected), and the tags whose content is not prose
//                        (<ref>, <math>, <gallery>, <pre>, <syntaxhighlight>, <timeline>, <score>...)
//   2. markup_braces.cpp templates {{...}} and parser functions {{#if:...}} (nested, any depth),
//                        parameters {{{1}}}, tables {| ... |} (nested)
//   3. markup_links.cpp  [[target|label]] -> label, [[File:..]]/[[Category:..]]/interlanguage links dropped
//                        (captions with links inside them too), [http://x label] -> label, [http://x] dropped
//   4. markup_lines.cpp  lines: headings, lists, sections without prose, paragraphs; inline HTML tags,
//                        bold/italic quotes, magic words, character references, whitespace.
// Unbalanced markup never swallows the rest of an article: an opener without its closer is dropped and the
// text after it kept.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace bk {

struct WikiMarkupOptions {
  bool keep_headings = false;  // heading text as its own paragraph line
  bool keep_lists = false;     // list item text (*, #, :, ;) as lines
};

// The article's paragraphs, in order, each non-empty, without newlines, with single spaces.
std::vector<std::string> clean_wikitext(std::string_view wikitext, const WikiMarkupOptions& options);

// True for disambiguation (and set index) pages: a title ending in "(disambiguation)", a template such as
// {{disambiguation}}, {{dab}}, {{hndis}}, {{geodis}}, {{set index article}}..., or __DISAMBIG__.
bool is_disambiguation(std::string_view title, std::string_view wikitext);

}  // namespace bk
