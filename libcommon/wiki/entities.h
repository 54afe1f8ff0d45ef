// Character references: the five XML ones (for the dump's own escaping) and the HTML5 named set plus
// numeric references (for the wikitext inside it, which writes "&nbsp;", "&ndash;", "&#x1F600;"...).
#pragma once

#include <string>
#include <string_view>

namespace bk {

// If text[pos] is '&' starting a complete HTML character reference ("&name;", "&#123;", "&#x1F;"), appends
// its UTF-8 to out, advances pos past the ';' and returns true. Otherwise returns false and leaves both alone.
// Numeric references to 0, surrogates or values above U+10FFFF give U+FFFD (as browsers do).
bool decode_html_entity(std::string_view text, size_t& pos, std::string& out);

// The same for XML's five predefined entities and numeric references only (the dump's escaping layer).
bool decode_xml_entity(std::string_view text, size_t& pos, std::string& out);

// Appends text to out with every HTML reference decoded; unknown "&..." sequences are copied unchanged.
void append_html_decoded(std::string_view text, std::string& out);

// Appends text with XML references decoded.
void append_xml_decoded(std::string_view text, std::string& out);

}  // namespace bk
