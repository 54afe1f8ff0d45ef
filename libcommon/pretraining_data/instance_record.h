// The tf.train.Example of one pretraining instance, serialised directly (no Example object, no allocation per
// record): the bytes bk::encode_example writes for google-research/bert's feature order (input_ids, input_mask,
// segment_ids, masked_lm_positions, masked_lm_ids, masked_lm_weights, next_sentence_labels), padded to
// max_seq_length and max_predictions as the reference pads them.
#pragma once

#include "pretraining_data/instances.h"

#include <string>

namespace bk {

// Appends the serialised Example to `out`.
void append_instance_record(const InstanceTokens& instance, int max_seq_length, int max_predictions, std::string& out);

}  // namespace bk
