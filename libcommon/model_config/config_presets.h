// `bert-train --config NAME`: a bert_config.json path, or the name of a model shape shipped with bertkit.
//
// Presets (configs/NAME.json in the source tree, installed as share/bertkit/configs/NAME.json), Google's keys:
//   bert-base, bert-large   L=12 H=768 A=12 FF=3072; L=24 H=1024 A=16 FF=4096
//   bert-L{2,4,6,8,10,12}-H{128,256,512,768}
//                           Google's 24 small BERTs: L layers, hidden H, H/64 heads, intermediate 4H
// all with vocab 30522 (bert-train takes a preset's from --vocab or --vocab-size instead), 512 positions, 2 token
// types, gelu, dropout 0.1, initializer range 0.02, as google-research/bert's README lists them; and
//   modernbert-base, modernbert-large
//                           L=22 H=768 A=12 FF=1152; L=28 H=1024 A=16 FF=2624, HF's ModernBertConfig defaults
//                           (a global layer every 3rd, window 128, theta 160,000 / 10,000, 8,192 positions, no
//                           dropout), in HF's keys; their special tokens' ids are bert-base-uncased's until
//                           bert-train takes them from --vocab.
//
// Resolution: a path that exists wins (a file named like a preset in the working directory included; a directory
// does not count); else a
// preset name is looked up in share/bertkit/configs of the executable's installation (PREFIX/bin/../share,
// PREFIX/libexec/bertkit/../../share; a build tree has its copy in BUILD/share, a bundle in its payload); else a
// bk::Error that lists the presets. Torch-free.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace bk {

// The preset names, in the order help texts list them.
const std::vector<std::string>& bert_config_presets();

// Where presets are looked for, first match wins, for a program at `executable`.
std::vector<std::filesystem::path> bert_config_preset_dirs(const std::filesystem::path& executable);

// True when `name_or_path` names a preset rather than a file (as resolve_bert_config decides).
bool names_bert_config_preset(const std::string& name_or_path);

// The file `name_or_path` names, as above, searching `preset_dirs`.
std::string resolve_bert_config(const std::string& name_or_path,
                                const std::vector<std::filesystem::path>& preset_dirs);
// The same, with the directories of this program (/proc/self/exe).
std::string resolve_bert_config(const std::string& name_or_path);

}  // namespace bk
