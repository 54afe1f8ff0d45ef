"""HF transformers' BertForPreTraining trained eagerly on the same HDF5 batches bert-train reads: the peer of
bench/bert_train.sh. Same config, optimizer (AdamW), batch size, steps; each batch cut to its longest sequence as
bert-train does; prints the mean seconds per step after the warm-up steps.

--masked-only: the same model and loss, but the MLM head (transform + decoder over the vocabulary) runs on the
masked positions only, as bert-train's does (and NVIDIA's and MLPerf's): BertModel, then model.cls on the gathered
hidden states. Without it HF computes vocabulary logits for every token, as users of BertForPreTraining run it."""
import argparse
import json
import time

import h5py
import numpy as np
import torch
from transformers import BertConfig, BertForPreTraining

p = argparse.ArgumentParser()
p.add_argument("--config")
p.add_argument("--data")
p.add_argument("--batch-size", type=int)
p.add_argument("--steps", type=int)
p.add_argument("--warmup", type=int)
p.add_argument("--lr", type=float)
p.add_argument("--masked-only", action="store_true")
a = p.parse_args()

torch.manual_seed(1)
model = BertForPreTraining(BertConfig(**json.load(open(a.config))))
model.train()
optimizer = torch.optim.AdamW(model.parameters(), lr=a.lr, eps=1e-6, weight_decay=0.01)
f = h5py.File(a.data, "r")
n = f["input_ids"].shape[0]
times = []
for step in range(a.steps):
    rows = np.arange(step * a.batch_size, (step + 1) * a.batch_size) % n
    mask = torch.from_numpy(f["input_mask"][sorted(rows)].astype(np.int64))
    t = int(mask.sum(1).max())
    ids = torch.from_numpy(f["input_ids"][sorted(rows)][:, :t].astype(np.int64))
    seg = torch.from_numpy(f["segment_ids"][sorted(rows)][:, :t].astype(np.int64))
    pos = f["masked_lm_positions"][sorted(rows)]
    mids = f["masked_lm_ids"][sorted(rows)]
    labels = torch.full((len(rows), t), -100, dtype=torch.int64)
    for i in range(len(rows)):
        k = int(np.argmax(pos[i] == 0)) if (pos[i] == 0).any() else len(pos[i])
        labels[i, pos[i][:k]] = torch.from_numpy(mids[i][:k].astype(np.int64))
    nsp = torch.from_numpy(f["next_sentence_labels"][sorted(rows)].astype(np.int64))
    start = time.perf_counter()
    if a.masked_only:
        hidden, pooled = model.bert(input_ids=ids, token_type_ids=seg, attention_mask=mask[:, :t], return_dict=False)[:2]
        where = labels.view(-1) != -100
        mlm, nsp_logits = model.cls(hidden.reshape(-1, hidden.size(-1))[where], pooled)
        loss = torch.nn.functional.cross_entropy(mlm, labels.view(-1)[where]) + \
            torch.nn.functional.cross_entropy(nsp_logits, nsp)
    else:
        loss = model(input_ids=ids, token_type_ids=seg, attention_mask=mask[:, :t], labels=labels,
                     next_sentence_label=nsp).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad()
    times.append(time.perf_counter() - start)
timed = times[a.warmup:]
print(json.dumps({"seconds_per_step": sum(timed) / len(timed), "final_loss": loss.item()}))
