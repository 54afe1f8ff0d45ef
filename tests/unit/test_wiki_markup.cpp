// The wikitext cleaner, construct by construct, with the exact text a reader of the rendered page sees.
#include <doctest/doctest.h>

#include "wiki/entities.h"
#include "wiki/markup.h"

#include <string>

namespace {
std::string clean(std::string_view wikitext, bool headings = false, bool lists = false) {
  bk::WikiMarkupOptions options;
  options.keep_headings = headings;
  options.keep_lists = lists;
  std::string joined;
  for (const auto& p : bk::clean_wikitext(wikitext, options)) {
    if (!joined.empty()) joined += '\n';
    joined += p;
  }
  return joined;
}
}  // namespace

TEST_CASE("wiki markup: templates, nested, parser functions and parameters") {
  CHECK(clean("A {{cite web|url=x|title={{lang|fr|t}}}} B.") == "A B.");
  CHECK(clean("{{Infobox person\n| name = X\n| born = {{birth date|1900|1|1}}\n}}\nText here.") == "Text here.");
  CHECK(clean("Before {{#if: {{{1|}}} | yes | no }} after") == "Before after");
  CHECK(clean("x {{a|{{b|{{c|{{d}}}}}}}} y") == "x y");
  CHECK(clean("An {{unclosed template and text") == "An unclosed template and text");
  CHECK(clean("Stray }} closer") == "Stray closer");
}

TEST_CASE("wiki markup: tables, nested, and a template line that looks like a table end") {
  CHECK(clean("Intro.\n{| class=\"wikitable\"\n|-\n| a || b\n|-\n|\n{|\n| inner\n|}\n|}\nOutro.") ==
        "Intro.\nOutro.");
  CHECK(clean("{{Box\n|x=1\n|}}\nKept.") == "Kept.");
  CHECK(clean("Para.\n:{| \n| indented table\n|}") == "Para.");
}

TEST_CASE("wiki markup: references and comments") {
  CHECK(clean("Fact.<ref>{{cite book|title=T}}</ref> More.<ref name=\"a\" /> End<ref name=b>x</ref>.") ==
        "Fact. More. End.");
  CHECK(clean("A<!-- hidden {{x}} -->B<!-- never closed") == "AB");
  CHECK(clean("Unclosed <ref name=x>ref text") == "Unclosed ref text");
  CHECK(clean("<REF>upper</REF>case") == "case");
}

TEST_CASE("wiki markup: internal links") {
  CHECK(clean("[[Paris]] and [[Paris, Texas|the other Paris]]") == "Paris and the other Paris");
  CHECK(clean("three [[apple]]s and [[:Category:Fruit]]") == "three apples and Category:Fruit");
  CHECK(clean("[[Mercury (planet)|]] is small") == "Mercury is small");
  CHECK(clean("Text [[Category:Things]][[de:Ding]][[zh-min-nan:Mih]] end") == "Text end");
  CHECK(clean("See [[wikt:word|word]] here") == "See word here");
  CHECK(clean("[[unclosed link text") == "unclosed link text");
}

TEST_CASE("wiki markup: files and images with nested links in captions") {
  CHECK(clean("[[File:X.jpg|thumb|A [[cat]] on a [[mat|rug]].]]Body text.") == "Body text.");
  CHECK(clean("Before [[Image:Y.png|left|[[a]] [[b|c]] {{d}}]] after") == "Before after");
  CHECK(clean("[[Media:Sound.ogg]] x") == "x");
}

TEST_CASE("wiki markup: external links") {
  CHECK(clean("See [http://example.org the site] now") == "See the site now");
  CHECK(clean("Cited [https://example.org/x].") == "Cited.");
  CHECK(clean("Bare http://example.org stays") == "Bare http://example.org stays");
  CHECK(clean("Not a link [sic] here") == "Not a link [sic] here");
}

TEST_CASE("wiki markup: tags") {
  CHECK(clean("E = <math>mc^2 {{x}}</math> holds") == "E = holds");
  CHECK(clean("<b>bold</b> <i>it</i> H<sub>2</sub>O x<sup>2</sup> <span style=\"a\">s</span> "
              "<small>sm</small>") == "bold it H2O x2 s sm");
  CHECK(clean("one<br>two<br/>three<BR />four") == "one two three four");
  CHECK(clean("<div class=\"x\">inside</div>") == "inside");
  CHECK(clean("Code: <code>a[i]</code>.") == "Code: a[i].");
  CHECK(clean("Lit <nowiki>[[not a link]] {{nor this}} ''x''</nowiki> end") ==
        "Lit [[not a link]] {{nor this}} ''x'' end");
  CHECK(clean("A <gallery>\nFile:a.jpg|cap\n</gallery> B <timeline>x</timeline> C <score>c</score> D") ==
        "A B C D");
  CHECK(clean("Q <syntaxhighlight lang=c>int x;</syntaxhighlight> <source>y</source> <pre>z</pre> R") == "Q R");
  CHECK(clean("a < b and c > d") == "a < b and c > d");
}

TEST_CASE("wiki markup: bold, italic and apostrophes") {
  CHECK(clean("'''Bold''' and ''italic'' and '''''both''''' and rock 'n' roll") ==
        "Bold and italic and both and rock 'n' roll");
  CHECK(clean("''''x''''") == "'x'");
}

TEST_CASE("wiki markup: character references and no-break spaces") {
  CHECK(clean("a&nbsp;b &ndash; c&mdash;d &amp; &lt;e&gt; &quot;q&quot; &minus;1 2&times;3") ==
        "a b – c—d & <e> \"q\" −1 2×3");
  CHECK(clean("&#65;&#x42;&#x1F600; &unknown; & alone") == "AB\xF0\x9F\x98\x80 &unknown; & alone");
  CHECK(clean("no\xC2\xA0" "break") == "no break");
  CHECK(clean("&lt;ref&gt; shown literally") == "<ref> shown literally");
  CHECK(clean("line&#10;break&#x9;tab&#13;") == "line break tab");  // found by fuzz_wiki_markup
}

TEST_CASE("wiki markup: magic words") {
  CHECK(clean("__NOTOC__Text __TOC__ more") == "Text more");
  CHECK(clean("snake_case __not magic") == "snake_case __not magic");
}

TEST_CASE("wiki markup: headings, sections without prose, paragraphs") {
  std::string_view article =
      "Lead line one\nstill lead.\n\nSecond paragraph.\n== History ==\nPast.\n=== Early ===\nEarly.\n"
      "== See also ==\n* [[Other]]\nPlain line.\n=== Sub ===\nStill skipped.\n== References ==\n{{reflist}}\n"
      "== Legacy ==\nLasting.";
  CHECK(clean(article) == "Lead line one still lead.\nSecond paragraph.\nPast.\nEarly.\nLasting.");
  CHECK(clean(article, true) ==
        "Lead line one still lead.\nSecond paragraph.\nHistory\nPast.\nEarly\nEarly.\nLegacy\nLasting.");
}

TEST_CASE("wiki markup: lists") {
  std::string_view text = "Intro:\n* one [[a|A]]\n** two\n# three\n: indented\n; term\nAfter.";
  CHECK(clean(text) == "Intro:\nAfter.");
  CHECK(clean(text, false, true) == "Intro:\none A\ntwo\nthree\nindented\nterm\nAfter.");
}

TEST_CASE("wiki markup: leftovers of removed markup are tidied") {
  CHECK(clean("Anarchism ({{IPA|x}}, {{lang|el|y}}) is") == "Anarchism is");
  CHECK(clean("Word {{cn}}, next {{cn}}.") == "Word, next.");
  CHECK(clean("X (<ref>r</ref>; born 1900) y") == "X (born 1900) y");
  CHECK(clean("{{only a template}}\n\n[[File:a.png]]").empty());
}

TEST_CASE("wiki markup: disambiguation pages") {
  using bk::is_disambiguation;
  CHECK(is_disambiguation("Mercury (disambiguation)", "text"));
  CHECK(is_disambiguation("Mercury", "'''Mercury''' may be:\n* x\n{{disambiguation}}"));
  CHECK(is_disambiguation("Mercury", "{{Disambig|geo}}"));
  CHECK(is_disambiguation("Smith", "{{ hndis |Smith}}"));
  CHECK(is_disambiguation("Aa", "{{geodis}}"));
  CHECK(is_disambiguation("Ships", "{{Set index article}}"));
  CHECK(is_disambiguation("X", "{{Template:Dab}}"));
  CHECK(is_disambiguation("X", "x __DISAMBIG__"));
  CHECK_FALSE(is_disambiguation("Mercury (planet)", "{{Infobox planet}} {{About|the planet|other uses|"
                                                      "Mercury (disambiguation)}}"));
}

TEST_CASE("wiki entities: HTML and XML sets") {
  std::string out;
  bk::append_html_decoded("&eacute;&hellip;&NotEqualTilde;&#0;&#xD800;&#1114112;&amp", out);
  CHECK(out == "é…\xE2\x89\x82\xCC\xB8\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD&amp");
  out.clear();
  bk::append_xml_decoded("&amp;nbsp; &lt;&gt;&quot;&apos; &#233; &eacute;", out);
  CHECK(out == "&nbsp; <>\"' é &eacute;");
}
