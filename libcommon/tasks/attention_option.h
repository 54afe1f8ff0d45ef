// --attention unpadded|padded: the flag bert-train, bert-finetune train and predict share (torch-free).
#pragma once

namespace bk {

class Options;

// --attention unpadded|padded, bound to `unpadded` (its current value is the default); `help` says what it does
// for the tool's task.
void add_attention_option(Options& options, bool& unpadded, const char* help);

}  // namespace bk
