"""HF transformers' BertForPreTraining (or ModernBertForMaskedLM, for a config with "model_type": "modernbert")
trained eagerly on the same HDF5 batches bert-train reads: the peer of
bench/bert_train.sh (CPU) and bench/bert_train_gpu.sh (CUDA). Same config, optimizer (AdamW; fused on CUDA, as
the HF Trainer's default adamw_torch_fused), batch size, steps; each batch cut to its longest sequence as
bert-train does (dynamic padding); prints one JSON line per variant with the mean seconds per step after the
warm-up steps, and the sequences and real tokens per step.

Variants: "full" is BertForPreTraining as users run it (vocabulary logits for every token); "masked" runs the same
model and loss with the MLM head (transform + decoder over the vocabulary) on the masked positions only, as
bert-train's does (and NVIDIA's and MLPerf's): BertModel, then model.cls on the gathered hidden states.
"full-compiled" and "masked-compiled" are the same under torch.compile (the forward and loss compiled, the default
mode and dynamic shapes as torch chooses): the peer a user who wants speed would pick. A variant that fails to
compile prints {"variant": ..., "failed": "the error"} and the others still run.

ModernBERT has no next-sentence head: its loss is the masked LM's alone; "masked" runs ModernBertModel, then
model.head and model.decoder on the masked positions (what its sparse_prediction does). --attention picks HF's
attention implementation (sdpa, its default, or eager).

On CUDA the batches are read and moved to the GPU before the timed steps, and the steps are timed together
(synchronising before and after), so the peer is measured at its best; --precision bf16 is autocast with fp32
weights (the Trainer's --bf16), fp16 adds torch's GradScaler (--fp16)."""
import argparse
import json
import time

import h5py
import numpy as np
import torch
from transformers import BertConfig, BertForPreTraining, ModernBertConfig, ModernBertForMaskedLM

p = argparse.ArgumentParser()
p.add_argument("--config")
p.add_argument("--data")
p.add_argument("--batch-size", type=int)
p.add_argument("--steps", type=int)
p.add_argument("--warmup", type=int)
p.add_argument("--lr", type=float)
p.add_argument("--masked-only", action="store_true", help="the same as --variants masked")
p.add_argument("--variants", default="full",
               help="comma-separated: full, masked, and either under torch.compile: full-compiled, masked-compiled")
p.add_argument("--device", default="cpu")
p.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "fp16"])
p.add_argument("--attention", default="sdpa", choices=["sdpa", "eager"])
a = p.parse_args()
config_json = json.load(open(a.config))
modern = config_json.get("model_type") == "modernbert"
variants = ["masked"] if a.masked_only else a.variants.split(",")
device = torch.device(a.device)
cuda = device.type == "cuda"


def load_batches():
    """The batches of the run as tensors: ids, segments, mask (each [B, T], T the batch's longest), labels, nsp."""
    f = h5py.File(a.data, "r")
    n = f["input_ids"].shape[0]
    batches = []
    for step in range(a.steps):
        rows = sorted(set(int(r) for r in np.arange(step * a.batch_size, (step + 1) * a.batch_size) % n))
        mask = torch.from_numpy(f["input_mask"][rows].astype(np.int64))
        t = int(mask.sum(1).max())
        ids = torch.from_numpy(f["input_ids"][rows][:, :t].astype(np.int64))
        seg = torch.from_numpy(f["segment_ids"][rows][:, :t].astype(np.int64))
        pos = f["masked_lm_positions"][rows]
        mids = f["masked_lm_ids"][rows]
        labels = torch.full((len(rows), t), -100, dtype=torch.int64)
        for i in range(len(rows)):
            k = int(np.argmax(pos[i] == 0)) if (pos[i] == 0).any() else len(pos[i])
            labels[i, pos[i][:k]] = torch.from_numpy(mids[i][:k].astype(np.int64))
        nsp = torch.from_numpy(f["next_sentence_labels"][rows].astype(np.int64))
        batches.append((ids, seg, mask[:, :t].contiguous(), labels, nsp, int(mask.sum())))
    return batches


def forward_loss(model, variant):
    """The step's forward and loss as one function of the batch, for torch.compile to take whole."""
    def loss_of(ids, seg, mask, labels, nsp):
        if modern:
            if variant.startswith("masked"):
                hidden = model.model(input_ids=ids, attention_mask=mask).last_hidden_state
                where = labels.view(-1) != -100
                logits = model.decoder(model.head(hidden.reshape(-1, hidden.size(-1))[where]))
                return torch.nn.functional.cross_entropy(logits.float(), labels.view(-1)[where])
            return model(input_ids=ids, attention_mask=mask, labels=labels).loss
        if variant.startswith("masked"):
            hidden, pooled = model.bert(input_ids=ids, token_type_ids=seg, attention_mask=mask, return_dict=False)[:2]
            where = labels.view(-1) != -100
            mlm, nsp_logits = model.cls(hidden.reshape(-1, hidden.size(-1))[where], pooled)
            return torch.nn.functional.cross_entropy(mlm.float(), labels.view(-1)[where]) + \
                torch.nn.functional.cross_entropy(nsp_logits.float(), nsp)
        return model(input_ids=ids, token_type_ids=seg, attention_mask=mask, labels=labels,
                     next_sentence_label=nsp).loss
    return torch.compile(loss_of) if variant.endswith("-compiled") else loss_of


def run(variant, batches):
    torch.manual_seed(1)
    if modern:
        model = ModernBertForMaskedLM(ModernBertConfig(**config_json, attn_implementation=a.attention)).to(device)
    else:
        model = BertForPreTraining(BertConfig(**config_json, attn_implementation=a.attention)).to(device)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=a.lr, eps=1e-6, weight_decay=0.01, fused=cuda or None)
    scaler = torch.amp.GradScaler("cuda", enabled=a.precision == "fp16")
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(a.precision)
    times = []
    loss_of = forward_loss(model, variant)
    if cuda:
        batches = [tuple(x.to(device) if torch.is_tensor(x) else x for x in b) for b in batches]
    for step, (ids, seg, mask, labels, nsp, _) in enumerate(batches):
        if step == a.warmup and cuda:
            torch.cuda.synchronize()
            timed_start = time.perf_counter()
        start = time.perf_counter()
        with torch.autocast(device.type, dtype=dtype, enabled=dtype is not None):
            loss = loss_of(ids, seg, mask, labels, nsp)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        times.append(time.perf_counter() - start)
    if cuda:
        torch.cuda.synchronize()
        seconds = (time.perf_counter() - timed_start) / (len(batches) - a.warmup)
    else:
        timed = times[a.warmup:]
        seconds = sum(timed) / len(timed)
    timed_batches = batches[a.warmup:]
    return {"variant": variant, "seconds_per_step": seconds, "final_loss": loss.item(),
            "sequences_per_step": sum(len(b[4]) for b in timed_batches) / len(timed_batches),
            "real_tokens_per_step": sum(b[5] for b in timed_batches) / len(timed_batches),
            "computed_tokens_per_step": sum(b[0].numel() for b in timed_batches) / len(timed_batches)}


batches = load_batches()
for v in variants:
    try:
        print(json.dumps(run(v, batches)), flush=True)
    except Exception as e:  # noqa: BLE001 - a compile failure is a result to report, not the end of the run
        if not v.endswith("-compiled"):
            raise
        print(json.dumps({"variant": v, "failed": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}),
              flush=True)
    if cuda:
        torch.cuda.empty_cache()
