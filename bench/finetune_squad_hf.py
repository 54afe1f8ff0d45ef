"""SQuAD prediction the way HF transformers does it, timed from loading the model to the last answer.

transformers 5 no longer has the question-answering pipeline; what it documents instead is its run_qa.py example:
the fast tokenizer makes the windows (truncation="only_second", stride, return_overflowing_tokens, offsets, padded
to max_length as the example pads by default), BertForQuestionAnswering gives the logits in batches, and
postprocess_qa_predictions picks each question's answer (the n_best_size best starts and ends of every window,
pairs inside the context and at most max_answer_length tokens, the best start + end logit, mapped back to the
context by the offsets). This script does those steps with the same settings as run_squad.py's defaults.
Writes {"seconds": ..., "features": ..., "predictions": {id: text}} to --out."""
import argparse
import json
import time

import numpy as np
import torch
from transformers import BertForQuestionAnswering, BertTokenizerFast

ap = argparse.ArgumentParser()
ap.add_argument("--model", required=True)
ap.add_argument("--data", required=True)
ap.add_argument("--out", required=True)
ap.add_argument("--batch-size", type=int, default=64)
ap.add_argument("--max-seq-length", type=int, default=384)
ap.add_argument("--doc-stride", type=int, default=128)
ap.add_argument("--n-best-size", type=int, default=20)
ap.add_argument("--max-answer-length", type=int, default=30)
args = ap.parse_args()

data = json.load(open(args.data))["data"]
questions = [(qa["id"], qa["question"].lstrip(), p["context"]) for a in data for p in a["paragraphs"] for qa in p["qas"]]
start = time.perf_counter()
model = BertForQuestionAnswering.from_pretrained(args.model).eval()
tokenizer = BertTokenizerFast(vocab_file=f"{args.model}/vocab.txt", do_lower_case=True)
enc = tokenizer([q for _, q, _ in questions], [c for _, _, c in questions], truncation="only_second",
                max_length=args.max_seq_length, stride=args.doc_stride, return_overflowing_tokens=True,
                return_offsets_mapping=True, padding="max_length", return_tensors="np")
starts, ends = [], []
with torch.inference_mode():
    for i in range(0, len(enc["input_ids"]), args.batch_size):
        out = model(input_ids=torch.from_numpy(enc["input_ids"][i:i + args.batch_size]),
                    token_type_ids=torch.from_numpy(enc["token_type_ids"][i:i + args.batch_size]),
                    attention_mask=torch.from_numpy(enc["attention_mask"][i:i + args.batch_size]))
        starts.append(out.start_logits.numpy())
        ends.append(out.end_logits.numpy())
starts, ends = np.concatenate(starts), np.concatenate(ends)
best = {}
for f, example in enumerate(enc["overflow_to_sample_mapping"]):
    seq_ids = enc.sequence_ids(f)
    offsets = enc["offset_mapping"][f]
    context = questions[example][2]
    top_s = np.argsort(starts[f])[-1:-args.n_best_size - 1:-1]
    top_e = np.argsort(ends[f])[-1:-args.n_best_size - 1:-1]
    for s in top_s:
        for e in top_e:
            if seq_ids[s] != 1 or seq_ids[e] != 1 or e < s or e - s + 1 > args.max_answer_length:
                continue
            score = starts[f][s] + ends[f][e]
            if example not in best or score > best[example][0]:
                best[example] = (score, context[offsets[s][0]:offsets[e][1]])
seconds = time.perf_counter() - start
json.dump({"seconds": seconds, "features": len(enc["input_ids"]),
           "predictions": {qid: best.get(i, (0, ""))[1] for i, (qid, _, _) in enumerate(questions)}},
          open(args.out, "w"))
