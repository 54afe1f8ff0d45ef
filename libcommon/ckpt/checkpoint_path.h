// Where a checkpoint is, from what a user names (torch-free): the checkpoint directory itself, a training run's
// output directory or its checkpoints/ (both followed to the newest checkpoint), a TF1 prefix or a weights file;
// and the small files that describe it (vocab.txt, tokenizer_config.json, task.json).
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace bk {

// The complete step directories under OUTPUT_DIR/checkpoints (step-NNNNNNNN, renamed into place whole; never the
// temporary step-N.tmp.* ones), in step order.
std::vector<std::string> checkpoint_step_dirs(const std::string& output_dir);

// The temporaries a save leaves when killed (step-NNNNNNNN.tmp.XXXXXX and latest.tmp.XXXXXX under
// OUTPUT_DIR/checkpoints): only these are the tool's to clean up; any other file there is the user's.
std::vector<std::string> checkpoint_step_temporaries(const std::string& output_dir);

// The directory OUTPUT_DIR/checkpoints/latest names (a one-line file, as bert-train writes it, or a symbolic link
// to the step directory); without `latest` (a run stopped between renaming a step
// directory into place and replacing it), the newest complete step directory; nullopt when there is none.
std::optional<std::string> latest_checkpoint(const std::string& output_dir);

// `path` unchanged when it is a checkpoint directory (it holds model.safetensors) or not a directory at all;
// for a directory holding one TF1 checkpoint (Google's downloads: bert_model.ckpt.index beside its data), its
// prefix; for a run's output directory or its checkpoints/, the checkpoint `latest` names. bk::Error when a run directory
// holds no complete checkpoint yet, or when nothing has that name (nor a TF1 prefix's .index).
std::string resolve_checkpoint(const std::string& path);
// The prefix of the one TF1 checkpoint in `dir` (NAME for its NAME.index); empty for none or more than one.
std::string tf_prefix_in(const std::filesystem::path& dir);

// Every path that reading the resolved checkpoint `resolved` touches or may touch, for the outputs kept apart from
// them (io/output_over_input.h): the checkpoint itself (a directory: all it holds), a TF prefix's index and data,
// the configs beside a TF prefix or weights file, the vocabulary beside it and its tokenizer_config.json, and in a
// training run its checkpoints/ directory with `latest`. Paths that do not exist are listed too (they pass).
std::vector<std::string> checkpoint_read_paths(const std::string& resolved);

// The tokenizer beside a resolved checkpoint (in its directory, or beside a TF prefix or weights file), then in the
// run's output directory: vocab.txt, else a byte-level tokenizer.json or vocab.json; empty when there is none.
std::string vocab_beside_checkpoint(const std::string& resolved);

// A checkpoint directory's task.json (null when it has none); bk::Error naming the file when it is not JSON.
nlohmann::json read_checkpoint_task(const std::string& dir);

// do_lower_case from the tokenizer_config.json beside a vocabulary file (as transformers writes it), if there is
// one and it says; bk::Error naming the file when it is not JSON.
std::optional<bool> tokenizer_lower_case(const std::string& vocab_path);

}  // namespace bk
