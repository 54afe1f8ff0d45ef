#include "tok/tokenizer_json.h"

#include "io/input.h"
#include "util/error.h"
#include "util/json_read.h"
#include "util/printable.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <filesystem>
#include <unordered_set>

namespace bk {
namespace {

using nlohmann::json;

// Keys inside one tokenizer file, for messages: "tokenizer.json: model.vocab: ...".
struct Reader {
  std::string path;

  [[noreturn]] void refuse(const std::string& where, const std::string& what) const {
    fail("{}: {}: {}", path, where, what);
  }
  const json& member(const json& object, const char* key, const std::string& where) const {
    if (!object.is_object() || !object.contains(key)) refuse(where, fmt::format("no \"{}\"", key));
    return object.at(key);
  }
  bool flag(const json& object, const char* key, bool fallback, const std::string& where) const {
    if (!object.contains(key) || object.at(key).is_null()) return fallback;
    if (!object.at(key).is_boolean()) refuse(where + "." + key, "expected true or false");
    return object.at(key).get<bool>();
  }
  std::string text(const json& value, const std::string& where) const {
    if (!value.is_string()) refuse(where, "expected a string");
    return value.get<std::string>();
  }
  std::string type(const json& component, const std::string& where) const {
    return text(member(component, "type", where), where + ".type");
  }
  int64_t id(const json& value, const std::string& where) const {
    if (!value.is_number_integer()) refuse(where, "expected an integer id");
    return value.get<int64_t>();
  }
};

// The model's vocabulary and merges, read while the file is parsed instead of into the JSON tree (a tree of 50,000
// map nodes costs more than the rest of loading).
struct ModelLists {
  std::vector<std::string> vocab_path, merges_path;  // the keys that lead to them ({} for a vocab.json's root)
  std::vector<std::pair<std::string, json>> vocab;   // token, id (checked by read_model)
  std::vector<json> merges;

  // A parser callback that moves the members of the vocabulary object and the elements of the merges list into
  // these lists, out of the tree. An element of the container at path P is reported at depth |P| + 1.
  json::parser_callback_t capture() {
    return [this, keys = std::vector<std::string>()](int depth, json::parse_event_t event, json& parsed) mutable {
      const auto inside = [&](const std::vector<std::string>& path) {
        return depth == static_cast<int>(path.size()) + 1 && keys.size() >= path.size() &&
               std::equal(path.begin(), path.end(), keys.begin());
      };
      if (event == json::parse_event_t::key) {  // keys[d - 1]: the key last read at depth d
        keys.resize(depth - 1);
        keys.push_back(parsed.get<std::string>());
        return !inside(vocab_path);  // a vocabulary member is not even given a place in the tree
      }
      if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
          inside(vocab_path) && keys.size() > vocab_path.size()) {
        vocab.emplace_back(keys[vocab_path.size()], json::value_t::object);  // refused by read_model, not dropped
        return false;
      }
      if (event != json::parse_event_t::value && event != json::parse_event_t::object_end &&
          event != json::parse_event_t::array_end)
        return true;
      if (inside(vocab_path) && keys.size() > vocab_path.size()) {
        vocab.emplace_back(keys[vocab_path.size()], std::move(parsed));
        return false;
      }
      if (!merges_path.empty() && inside(merges_path)) {
        merges.push_back(std::move(parsed));
        return false;
      }
      return true;
    };
  }
};

std::unique_ptr<BpeModel> read_model(const Reader& r, const json& model, ModelLists& lists) {
  const std::string type = r.type(model, "model");
  if (type != "BPE") r.refuse("model.type", fmt::format("'{}' is not supported (only byte-level BPE)", printable_excerpt(type)));
  if (model.contains("dropout") && !model["dropout"].is_null() && model["dropout"] != 0)
    r.refuse("model.dropout", "BPE dropout is random; encoding needs it null");
  for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (model.contains(affix) && !model[affix].is_null() && model[affix] != "")
      r.refuse(std::string("model.") + affix, "is not supported (byte-level BPE has none)");
  BpeModelOptions options;
  if (model.contains("unk_token") && !model["unk_token"].is_null()) options.unk_token = r.text(model["unk_token"], "model.unk_token");
  options.fuse_unk = r.flag(model, "fuse_unk", false, "model");
  options.byte_fallback = r.flag(model, "byte_fallback", false, "model");
  options.ignore_merges = r.flag(model, "ignore_merges", false, "model");

  if (model.contains("vocab") && !model["vocab"].is_object()) r.refuse("model.vocab", "expected an object of token: id");
  if (lists.vocab.empty()) r.refuse("model.vocab", "no tokens");
  std::vector<std::string> tokens(lists.vocab.size());
  std::vector<bool> seen(lists.vocab.size());
  for (auto& [token, value] : lists.vocab) {
    if (!value.is_number_integer()) r.refuse(fmt::format("model.vocab['{}']", printable_excerpt(token)), "expected an integer id");
    const int64_t id = value.get<int64_t>();
    if (id < 0 || static_cast<size_t>(id) >= tokens.size() || seen[id])
      r.refuse(fmt::format("model.vocab['{}']", printable_excerpt(token)),
               fmt::format("id {} {} (the {} ids must be 0..{}, each once)", id, id >= 0 && static_cast<size_t>(id) < tokens.size() ? "is given twice" : "is out of range", tokens.size(), tokens.size() - 1));
    seen[id] = true;
    tokens[id] = std::move(token);
  }
  auto bpe = std::make_unique<BpeModel>(std::move(tokens), options, r.path + ": model.vocab");
  if (model.contains("merges") && !model["merges"].is_array()) r.refuse("model.merges", "expected a list");
  std::string left, right;
  for (size_t i = 0; i < lists.merges.size(); ++i) {
    const json& m = lists.merges[i];
    if (m.is_string()) {
      const std::string& s = m.get_ref<const std::string&>();
      const size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
        r.refuse(fmt::format("model.merges[{}]", i), fmt::format("'{}' is not two tokens separated by one space", printable_excerpt(s)));
      left.assign(s, 0, space);
      right.assign(s, space + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      left = m[0].get<std::string>();
      right = m[1].get<std::string>();
    } else {
      r.refuse(fmt::format("model.merges[{}]", i), "expected \"a b\" or [\"a\", \"b\"]");
    }
    bpe->add_merge(left, right, r.path + ": model.merges");
  }
  return bpe;
}

constexpr int kMaxNesting = 8;  // Sequences inside Sequences: real files nest one level

void read_normalizer(const Reader& r, const json& normalizer, const std::string& where, std::vector<NormalForm>& forms,
                     int depth = 0) {
  if (normalizer.is_null()) return;
  const std::string type = r.type(normalizer, where);
  if (type == "Sequence") {
    const json& list = r.member(normalizer, "normalizers", where);
    if (!list.is_array() || depth >= kMaxNesting) r.refuse(where + ".normalizers", "expected a list (of at most 8 levels)");
    for (size_t i = 0; i < list.size(); ++i)
      read_normalizer(r, list[i], fmt::format("{}.normalizers[{}]", where, i), forms, depth + 1);
    return;
  }
  NormalForm form;
  if (!parse_normal_form(type, form))
    r.refuse(where, fmt::format("the {} normalizer is not supported (only NFC, NFKC, NFD, NFKD)", printable_excerpt(type)));
  forms.push_back(form);
}

void read_byte_level(const Reader& r, const json& p, const std::string& where, BpeTokenizerSpec& spec) {
  spec.add_prefix_space = r.flag(p, "add_prefix_space", true, where);
  spec.byte_level_regex = r.flag(p, "use_regex", true, where);
}

void read_split(const Reader& r, const json& p, const std::string& where, BpeTokenizerSpec& spec) {
  const json& pattern = r.member(p, "pattern", where);
  if (!pattern.is_object() || !pattern.contains("Regex"))
    r.refuse(where + ".pattern", "only a Regex pattern is supported");
  const std::string regex = r.text(pattern["Regex"], where + ".pattern.Regex");
  const auto known = recognize_split_pattern(regex);
  if (!known) r.refuse(where + ".pattern.Regex", fmt::format("'{}' is not supported (GPT-2's or the cl100k pattern)", printable_excerpt(regex, 160)));
  const std::string behavior = p.contains("behavior") ? r.text(p["behavior"], where + ".behavior") : "Isolated";
  if (behavior != "Isolated") r.refuse(where + ".behavior", fmt::format("'{}' is not supported (only Isolated)", printable_excerpt(behavior)));
  if (r.flag(p, "invert", false, where)) r.refuse(where + ".invert", "an inverted split is not supported");
  spec.splits.push_back(*known);
}

void read_pre_tokenizer(const Reader& r, const json& p, BpeTokenizerSpec& spec) {
  const std::string where = "pre_tokenizer";
  if (p.is_null()) r.refuse(where, "none: a byte-level BPE tokenizer needs the ByteLevel pre-tokenizer");
  std::vector<const json*> steps;
  if (r.type(p, where) == "Sequence") {
    const json& list = r.member(p, "pretokenizers", where);
    if (!list.is_array() || list.empty()) r.refuse(where + ".pretokenizers", "expected a list ending with ByteLevel");
    for (const json& step : list) steps.push_back(&step);
  } else {
    steps.push_back(&p);
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    const std::string at = steps.size() == 1 ? where : fmt::format("{}.pretokenizers[{}]", where, i);
    const std::string type = r.type(*steps[i], at);
    const bool last = i + 1 == steps.size();
    if (type == "ByteLevel" && last) read_byte_level(r, *steps[i], at, spec);
    else if (type == "Split" && !last) read_split(r, *steps[i], at, spec);
    else if (type == "ByteLevel" || type == "Split")
      r.refuse(at, "bertkit takes Split pre-tokenizers followed by one ByteLevel, last");
    else r.refuse(at, fmt::format("the {} pre-tokenizer is not supported (byte-level BPE: Split, ByteLevel)", printable_excerpt(type)));
  }
}

int32_t special_id(const Reader& r, const BpeTokenizerSpec& spec, const json& pair, const std::string& where) {
  if (!pair.is_array() || pair.size() != 2) r.refuse(where, "expected [token, id]");
  const std::string token = r.text(pair[0], where + "[0]");
  const int64_t id = r.id(pair[1], where + "[1]");
  if (spec.id_of(token) != id) r.refuse(where, fmt::format("'{}' does not have id {} in this tokenizer", printable_excerpt(token), id));
  return static_cast<int32_t>(id);
}

std::vector<TemplateItem> read_template(const Reader& r, const BpeTokenizerSpec& spec, const json& p, const json& items,
                                        const std::string& where) {
  if (!items.is_array()) r.refuse(where, "expected a list");
  std::vector<TemplateItem> out;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string at = fmt::format("{}[{}]", where, i);
    if (items[i].contains("Sequence")) {
      const std::string id = r.text(r.member(items[i]["Sequence"], "id", at), at + ".Sequence.id");
      if (id != "A" && id != "B") r.refuse(at, "a sequence must be A or B");
      out.push_back({id[0], {}});
    } else if (items[i].contains("SpecialToken")) {
      const std::string name = r.text(r.member(items[i]["SpecialToken"], "id", at), at + ".SpecialToken.id");
      const json& special = r.member(r.member(p, "special_tokens", "post_processor"), name.c_str(), "post_processor.special_tokens");
      TemplateItem item;
      const json& ids = r.member(special, "ids", "post_processor.special_tokens." + name);
      if (!ids.is_array()) r.refuse("post_processor.special_tokens." + name + ".ids", "expected a list");
      for (const json& id : ids) {
        const int64_t value = r.id(id, "post_processor.special_tokens." + name + ".ids");
        if (value < 0 || value > INT32_MAX || !spec.token(static_cast<int32_t>(value)))
          r.refuse("post_processor.special_tokens." + name, fmt::format("id {} is not in the vocabulary", value));
        item.ids.push_back(static_cast<int32_t>(value));
      }
      out.push_back(item);
    } else {
      r.refuse(at, "expected a Sequence or a SpecialToken");
    }
  }
  return out;
}

void read_post_processor(const Reader& r, const json& p, const std::string& where, BpeTokenizerSpec& spec,
                         int depth = 0) {
  if (p.is_null()) return;
  const std::string type = r.type(p, where);
  auto set = [&](PostTemplate t) {
    if (!spec.post.empty()) r.refuse(where, "a second template post-processor");
    spec.post = std::move(t);
  };
  if (type == "Sequence") {
    const json& list = r.member(p, "processors", where);
    if (!list.is_array() || depth >= kMaxNesting) r.refuse(where + ".processors", "expected a list (of at most 8 levels)");
    for (size_t i = 0; i < list.size(); ++i)
      read_post_processor(r, list[i], fmt::format("{}.processors[{}]", where, i), spec, depth + 1);
  } else if (type == "ByteLevel") {
    return;  // offsets only
  } else if (type == "TemplateProcessing") {
    set({read_template(r, spec, p, r.member(p, "single", where), where + ".single"),
         read_template(r, spec, p, r.member(p, "pair", where), where + ".pair")});
  } else if (type == "RobertaProcessing" || type == "BertProcessing") {
    const int32_t cls = special_id(r, spec, r.member(p, "cls", where), where + ".cls");
    const int32_t sep = special_id(r, spec, r.member(p, "sep", where), where + ".sep");
    set(PostTemplate::bert_like(cls, sep, type == "RobertaProcessing"));
  } else {
    r.refuse(where, fmt::format("the {} post-processor is not supported", printable_excerpt(type)));
  }
}

void read_added_tokens(const Reader& r, const json& list, BpeTokenizerSpec& spec) {
  if (!list.is_array()) r.refuse("added_tokens", "expected a list");
  const size_t limit = spec.model->size() + list.size();  // ids beyond the model's: at most one per added token
  std::unordered_set<std::string> contents;
  std::unordered_set<int32_t> ids;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = fmt::format("added_tokens[{}]", i);
    AddedToken t;
    t.content = r.text(r.member(list[i], "content", at), at + ".content");
    const int64_t id = r.id(r.member(list[i], "id", at), at + ".id");
    if (t.content.empty()) r.refuse(at, "empty content");
    if (id < 0 || static_cast<size_t>(id) >= limit)
      r.refuse(at, fmt::format("'{}' has id {}, beyond the {} tokens", printable_excerpt(t.content), id, limit));
    t.id = static_cast<int32_t>(id);
    if (const int32_t model_id = spec.model->id_of(t.content); model_id >= 0 && model_id != t.id)
      r.refuse(at, fmt::format("'{}' has id {} but {} in model.vocab", printable_excerpt(t.content), id, model_id));
    if (t.id < static_cast<int32_t>(spec.model->size()) && spec.model->token(t.id) != t.content)
      r.refuse(at, fmt::format("id {} is '{}' in model.vocab, not '{}'", id, printable_excerpt(spec.model->token(t.id)), printable_excerpt(t.content)));
    if (!contents.insert(t.content).second || !ids.insert(t.id).second)
      r.refuse(at, fmt::format("'{}' (id {}) repeats an earlier added token", printable_excerpt(t.content), id));
    t.single_word = r.flag(list[i], "single_word", false, at);
    t.lstrip = r.flag(list[i], "lstrip", false, at);
    t.rstrip = r.flag(list[i], "rstrip", false, at);
    t.normalized = r.flag(list[i], "normalized", true, at);
    t.special = r.flag(list[i], "special", false, at);
    spec.added_tokens.push_back(std::move(t));
  }
}

std::string merges_path_beside(const std::string& vocab_json) {
  const std::filesystem::path p(vocab_json);
  const std::string name = p.filename().string();
  const std::string prefix = name.size() > 10 && name.ends_with("-vocab.json") ? name.substr(0, name.size() - 10) : "";
  return (p.parent_path() / (prefix + "merges.txt")).string();
}

// GPT-2's pair: vocab.json and merges.txt, read as transformers' RobertaTokenizerFast reads them (5.x: the special
// tokens are added tokens without lstrip or rstrip; RoBERTa's template when <s> and </s> are there).
BpeTokenizerSpec load_vocab_and_merges(const std::string& path) {
  const std::string merges_path = merges_path_beside(path);
  if (!std::filesystem::exists(merges_path))
    fail("{}: a vocab.json needs its merges.txt beside it ({} is missing)", path, merges_path);
  ModelLists lists;
  const json vocab = parse_json(read_file(path), path, lists.capture());
  if (!vocab.is_object()) fail("{}: expected an object of token: id", path);
  const std::string text = read_file(merges_path);
  size_t line_number = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (line_number == 1 && line.starts_with("#version"))) continue;
    lists.merges.emplace_back(std::move(line));
  }
  BpeTokenizerSpec spec;
  spec.path = path;
  spec.model = read_model(Reader{path + " and " + merges_path}, json{{"type", "BPE"}}, lists);
  for (const char* special : {"<s>", "<pad>", "</s>", "<unk>", "<mask>", "<|endoftext|>"}) {
    const int32_t id = spec.model->id_of(special);
    if (id >= 0) spec.added_tokens.push_back({special, id, false, false, false, false, true});
  }
  const int32_t cls = spec.model->id_of("<s>"), sep = spec.model->id_of("</s>");
  if (cls >= 0 && sep >= 0) spec.post = PostTemplate::bert_like(cls, sep, true);
  spec.finish();
  return spec;
}

BpeTokenizerSpec read_bpe_tokenizer(const std::string& path) {
  if (path.ends_with("vocab.json")) return load_vocab_and_merges(path);
  const Reader r{path};
  ModelLists lists{{"model", "vocab"}, {"model", "merges"}, {}, {}};
  const json file = parse_json(read_file(path), path, lists.capture());
  if (!file.is_object()) fail("{}: not a tokenizer.json (expected an object)", path);
  BpeTokenizerSpec spec;
  spec.path = path;
  spec.model = read_model(r, r.member(file, "model", "file"), lists);
  if (file.contains("normalizer")) read_normalizer(r, file["normalizer"], "normalizer", spec.normalizer);
  read_pre_tokenizer(r, file.contains("pre_tokenizer") ? file["pre_tokenizer"] : json(), spec);
  if (file.contains("added_tokens")) read_added_tokens(r, file["added_tokens"], spec);
  spec.finish();  // the post-processor's ids are checked against the whole vocabulary
  if (file.contains("post_processor")) read_post_processor(r, file["post_processor"], "post_processor", spec);
  if (file.contains("decoder") && !file["decoder"].is_null() && r.type(file["decoder"], "decoder") != "ByteLevel")
    r.refuse("decoder", fmt::format("the {} decoder is not supported (only ByteLevel)", printable_excerpt(r.type(file["decoder"], "decoder"))));
  spec.finish();
  return spec;
}

}  // namespace

bool is_bpe_tokenizer_path(const std::string& path) {
  return path.ends_with(".json");
}

std::vector<std::string> tokenizer_file_paths(const std::string& path) {
  if (path.ends_with("vocab.json")) return {path, merges_path_beside(path)};
  return {path};
}

bool is_byte_level_tokenizer_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  if (path.ends_with("vocab.json")) return std::filesystem::is_regular_file(merges_path_beside(path), ec);
  try {
    ModelLists lists{{"model", "vocab"}, {"model", "merges"}, {}, {}};  // kept out of the tree, as when loading
    const json file = json::parse(read_file(path), lists.capture());
    const auto type_of = [](const json& j) { return j.is_object() && j.contains("type") ? j["type"] : json(); };
    if (!file.is_object() || type_of(file.value("model", json())) != "BPE") return false;
    const json pre = file.value("pre_tokenizer", json());
    if (type_of(pre) == "ByteLevel") return true;
    return type_of(pre) == "Sequence" && pre.contains("pretokenizers") && pre["pretokenizers"].is_array() &&
           !pre["pretokenizers"].empty() && type_of(pre["pretokenizers"].back()) == "ByteLevel";
  } catch (const std::exception&) {
    return false;
  }
}

BpeTokenizerSpec load_bpe_tokenizer(const std::string& path) {
  try {
    return read_bpe_tokenizer(path);
  } catch (const json::exception& e) {  // a value of another type than the reader checked for
    fail("{}: {}", path, json_error_text(e));
  }
}

}  // namespace bk

namespace bk {
namespace {

nlohmann::json template_json(const BpeTokenizerSpec& spec, const std::vector<TemplateItem>& items,
                             nlohmann::json& special_tokens) {
  nlohmann::json out = nlohmann::json::array();
  for (const TemplateItem& item : items) {
    if (item.sequence != 0) {
      out.push_back({{"Sequence", {{"id", std::string(1, item.sequence)}, {"type_id", item.sequence == 'A' ? 0 : 1}}}});
      continue;
    }
    std::string name;
    nlohmann::json tokens = nlohmann::json::array();
    for (int32_t id : item.ids) {
      name += std::string(*spec.token(id));
      tokens.push_back(std::string(*spec.token(id)));
    }
    out.push_back({{"SpecialToken", {{"id", name}, {"type_id", 0}}}});
    special_tokens[name] = {{"id", name}, {"ids", item.ids}, {"tokens", tokens}};
  }
  return out;
}

nlohmann::json post_processor_json(const BpeTokenizerSpec& spec) {
  if (spec.post.empty()) return nullptr;
  nlohmann::json special_tokens = nlohmann::json::object();
  nlohmann::json single = template_json(spec, spec.post.single, special_tokens);
  nlohmann::json pair = template_json(spec, spec.post.pair, special_tokens);
  return {{"type", "TemplateProcessing"}, {"single", single}, {"pair", pair}, {"special_tokens", special_tokens}};
}

nlohmann::json pre_tokenizer_json(const BpeTokenizerSpec& spec) {
  nlohmann::json byte_level = {{"type", "ByteLevel"}, {"add_prefix_space", spec.add_prefix_space},
                               {"trim_offsets", true}, {"use_regex", spec.byte_level_regex}};
  if (spec.splits.empty()) return byte_level;
  nlohmann::json steps = nlohmann::json::array();
  for (SplitPattern pattern : spec.splits)
    steps.push_back({{"type", "Split"}, {"pattern", {{"Regex", split_pattern_regex(pattern)}}},
                     {"behavior", "Isolated"}, {"invert", false}});
  steps.push_back(byte_level);
  return {{"type", "Sequence"}, {"pretokenizers", steps}};
}

nlohmann::json normalizer_json(const BpeTokenizerSpec& spec) {
  if (spec.normalizer.empty()) return nullptr;
  nlohmann::json forms = nlohmann::json::array();
  for (NormalForm form : spec.normalizer) forms.push_back({{"type", normal_form_name(form)}});
  if (forms.size() == 1) return forms[0];
  return {{"type", "Sequence"}, {"normalizers", forms}};
}

}  // namespace

std::string tokenizer_json_text(const BpeTokenizerSpec& spec) {
  nlohmann::json added = nlohmann::json::array();
  for (const AddedToken& t : spec.added_tokens)
    added.push_back({{"id", t.id}, {"content", t.content}, {"single_word", t.single_word}, {"lstrip", t.lstrip},
                     {"rstrip", t.rstrip}, {"normalized", t.normalized}, {"special", t.special}});
  const BpeModel& model = *spec.model;
  const BpeModelOptions& o = model.options();
  std::string out = "{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n";
  out += fmt::format("  \"added_tokens\": {},\n", added.dump());
  out += fmt::format("  \"normalizer\": {},\n", normalizer_json(spec).dump());
  out += fmt::format("  \"pre_tokenizer\": {},\n", pre_tokenizer_json(spec).dump());
  out += fmt::format("  \"post_processor\": {},\n", post_processor_json(spec).dump());
  out += "  \"decoder\": {\"type\":\"ByteLevel\",\"add_prefix_space\":true,\"trim_offsets\":true,\"use_regex\":true},\n";
  out += fmt::format(
      "  \"model\": {{\"type\":\"BPE\",\"dropout\":null,\"unk_token\":{},\"continuing_subword_prefix\":null,"
      "\"end_of_word_suffix\":null,\"fuse_unk\":{},\"byte_fallback\":{},\"ignore_merges\":{},\n    \"vocab\": {{",
      o.unk_token.empty() ? "null" : nlohmann::json(o.unk_token).dump(), o.fuse_unk, o.byte_fallback, o.ignore_merges);
  for (size_t id = 0; id < model.size(); ++id)
    out += fmt::format("{}\n      {}: {}", id ? "," : "", nlohmann::json(model.token(id)).dump(), id);
  out += "\n    },\n    \"merges\": [";
  for (size_t i = 0; i < model.merges().size(); ++i) {
    const auto [left, right] = model.merges()[i];
    out += fmt::format("{}\n      [{}, {}]", i ? "," : "", nlohmann::json(model.token(left)).dump(),
                       nlohmann::json(model.token(right)).dump());
  }
  out += "\n    ]\n  }\n}\n";
  return out;
}

}  // namespace bk
