"""The HF side of bench/finetune_train.sh: saves the shared initial model (--init) and times
BertForSequenceClassification training steps (forward, backward, clip, AdamW) on the same features, padded to the
features' width and cut to each batch's longest row. Prints {"padded": s/step, "dynamic": s/step} (warm-up left out)."""
import argparse
import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf
import torch
from transformers import BertConfig, BertForSequenceClassification

p = argparse.ArgumentParser()
p.add_argument("--init", required=True)
p.add_argument("--features", required=True)
p.add_argument("--batch-size", type=int, default=32)
p.add_argument("--steps", type=int, default=30)
p.add_argument("--warmup", type=int, default=5)
a = p.parse_args()
torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))

rows = []
for raw in tf.data.TFRecordDataset(a.features):
    f = tf.train.Example.FromString(raw.numpy()).features.feature
    rows.append({k: np.array(f[k].int64_list.value) for k in ("input_ids", "input_mask", "segment_ids", "label_ids")})
torch.manual_seed(1)
config = BertConfig(vocab_size=30522, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                    intermediate_size=1024, max_position_embeddings=512, num_labels=2)
BertForSequenceClassification(config).save_pretrained(a.init, safe_serialization=True)


def run(dynamic):
    model = BertForSequenceClassification.from_pretrained(a.init).train()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-5, eps=1e-6, weight_decay=0.01)
    rng = np.random.default_rng(0)
    times = []
    for step in range(a.steps):
        batch = [rows[i] for i in rng.choice(len(rows), a.batch_size, replace=False)]
        t = max(int(r["input_mask"].sum()) for r in batch) if dynamic else len(batch[0]["input_ids"])
        start = time.perf_counter()
        tensors = {k: torch.tensor(np.stack([r[k][:t] for r in batch])) for k in ("input_ids", "input_mask", "segment_ids")}
        out = model(input_ids=tensors["input_ids"], attention_mask=tensors["input_mask"],
                    token_type_ids=tensors["segment_ids"], labels=torch.tensor([int(r["label_ids"][0]) for r in batch]))
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        times.append(time.perf_counter() - start)
    return sum(times[a.warmup:]) / len(times[a.warmup:])


print(json.dumps({"padded": run(False), "dynamic": run(True)}))
