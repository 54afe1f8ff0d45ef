// The evaluation behind bert-eval (bert_eval.h), for any caller holding a model.
#pragma once

#include "model/bert.h"
#include "tasks/pretraining/bert_eval.h"

#include <c10/core/Device.h>

#include <string>

namespace bk {

class Progress;

// Evaluates the model (switched to eval mode; on its current device) in file order. Every batch is padded only to
// its longest sample. `progress` may be null.
EvalTotals evaluate_pretraining(BertForPreTraining& model, const EvalSettings& settings, Progress* progress = nullptr);

}  // namespace bk
