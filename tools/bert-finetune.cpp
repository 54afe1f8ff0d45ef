// bert-finetune: BERT fine-tuning for SQuAD and GLUE: features identical to google-research/bert's run_squad.py and
// run_classifier.py, training on the loop bert-train uses, prediction and inference speed.
#include "cli/run_tool.h"
#include "tasks/finetune/bert_finetune_commands.h"

int main(int argc, char** argv) { return bk::run_tool("bert-finetune", argc, argv, bk::run_bert_finetune); }
