// model_probe: exposes the model library to the compat tests.
//
//   model_probe forward MODEL_DIR BATCH.safetensors OUT.safetensors
//       BATCH holds int64 input_ids, segment_ids, attention_mask [B, T] and optionally masked_lm_positions [B, P] and
//       masked_lm_ids [B, P]; OUT gets mlm_logits (gathered, when positions are given), full_mlm_logits [B, T, V],
//       nsp_logits (where the architecture has the head), and with masked_lm_ids also mlm_loss, nsp_loss,
//       mlm_correct, mlm_total (scalars). With row_lengths int64 [B, K] (the lengths of each row's packed samples,
//       0 after the last) also stream_mlm_logits [N, V]: the unpadded forward (model/token_stream.h), in stream order.
//   model_probe forward-task MODEL_DIR TASK BATCH.safetensors OUT.safetensors
//       a fine-tuned model (tasks/finetune/finetuned_model.h): start_logits/end_logits, or logits.
//   model_probe resave MODEL_DIR OUT_DIR
//       loads a model directory and writes it back with save_model_dir.
//   model_probe init CONFIG.json SEED OUT_DIR
//       a freshly initialised model (at::manual_seed(SEED)) saved with save_model_dir.
#include "cli/run_tool.h"
#include "model/finetune_models.h"
#include "model/model_dir.h"
#include "model/token_stream.h"
#include "tasks/pretraining/pretrain_loss.h"
#include "model/safetensors_torch.h"
#include "tasks/finetune/finetuned_model.h"

#include <ATen/ATen.h>

#include <string>

int main(int argc, char** argv) {
  return bk::run_tool("model_probe", argc, argv, [](int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "forward" && argc == 5) {
      auto model = bk::load_model_dir(argv[2]);
      model->eval();
      at::InferenceMode guard;
      auto in = bk::load_safetensors(argv[3]);
      auto get = [&](const char* name) { return in.count(name) ? in.at(name).to(at::kLong) : at::Tensor(); };
      std::map<std::string, at::Tensor> out;
      const auto full = model->forward(get("input_ids"), get("segment_ids"), get("attention_mask"));
      out["full_mlm_logits"] = full.mlm_logits;
      if (full.nsp_logits.defined()) out["nsp_logits"] = full.nsp_logits;
      if (in.count("row_lengths")) {
        const at::Tensor lengths = get("row_lengths");
        std::vector<std::vector<int64_t>> rows(static_cast<size_t>(lengths.size(0)));
        for (int64_t b = 0; b < lengths.size(0); ++b)
          for (int64_t k = 0; k < lengths.size(1) && lengths[b][k].item<int64_t>() > 0; ++k)
            rows[static_cast<size_t>(b)].push_back(lengths[b][k].item<int64_t>());
        const bk::TokenStream stream = bk::make_token_stream(get("input_ids").size(1), rows);
        out["stream_mlm_logits"] = model->forward_stream(get("input_ids"), get("segment_ids"), stream, {}).mlm_logits;
      }
      if (in.count("masked_lm_positions")) {
        bk::PretrainBatch b;
        b.input_ids = get("input_ids");
        b.segment_ids = get("segment_ids");
        b.attention_mask = get("attention_mask");
        b.masked_lm_positions = get("masked_lm_positions");
        b.masked_lm_ids = get("masked_lm_ids");
        b.next_sentence_labels = get("next_sentence_labels");
        const auto gathered = model->forward(b.input_ids, b.segment_ids, b.attention_mask, b.masked_lm_positions);
        out["mlm_logits"] = gathered.mlm_logits;
        if (gathered.nsp_logits.defined()) out["gathered_nsp_logits"] = gathered.nsp_logits;
        if (b.masked_lm_ids.defined() && b.next_sentence_labels.defined()) {
          const auto r = bk::pretraining_loss(gathered, b);
          out["mlm_loss"] = r.mlm_loss;
          out["nsp_loss"] = r.nsp_loss;
          out["mlm_correct"] = r.mlm_correct;
          out["mlm_total"] = r.mlm_total;
        }
      }
      bk::save_safetensors(argv[4], out, {}, true);
      return 0;
    }
    if (mode == "forward-task" && argc == 6) {  // a fine-tuned model: start/end or class logits
      const auto model = bk::load_finetuned_model(argv[2], argv[3], at::Device(at::kCPU));
      auto in = bk::load_safetensors(argv[4]);
      auto get = [&](const char* name) { return in.at(name).to(at::kLong); };
      std::map<std::string, at::Tensor> out;
      if (model.qa) {
        const auto l = model.spans(get("input_ids"), get("segment_ids"), get("attention_mask"));
        out["start_logits"] = l.start;
        out["end_logits"] = l.end;
      } else {
        out["logits"] = model.classes(get("input_ids"), get("segment_ids"), get("attention_mask"));
      }
      bk::save_safetensors(argv[5], out, {}, true);
      return 0;
    }
    if (mode == "resave" && argc == 4) {
      bk::save_model_dir(argv[3], *bk::load_model_dir(argv[2]), true);
      return 0;
    }
    if (mode == "init" && argc == 5) {
      at::manual_seed(std::stoull(argv[3]));
      bk::BertForPreTraining model(bk::BertConfig::load(argv[2]));
      bk::save_model_dir(argv[4], model, true);
      return 0;
    }
    bk::usage_fail("usage: model_probe forward MODEL_DIR BATCH OUT | forward-task MODEL_DIR TASK BATCH OUT | resave MODEL_DIR OUT_DIR | init CONFIG SEED OUT_DIR");
  });
}
