#!/usr/bin/env python3
"""train-mtp.py TEXT BASE OUT [--steps N] [--seed S]: trains a
multi-token-prediction head for the frozen model in folder BASE on the
first 90% of the text file TEXT (Tiny Shakespeare; the last 10% is held
out, as BASE's val4096.ids is) and writes BASE's files plus the head's
mtp.* tensors into folder OUT.

The head is the form Qwen3.5 and Qwen3-Next checkpoints carry (vLLM's
qwen3_5_mtp.py and qwen3_next_mtp.py, SGLang's qwen3_next_mtp.py), which
transformers skips on load (_keys_to_ignore_on_load_unexpected = ^mtp.*):

    e   = pre_fc_norm_embedding(embed(token t+1))      (1 + w) RMSNorms,
    h   = pre_fc_norm_hidden(hidden t)                  as the model's own
    x   = fc([e, h])                                    fc: (H, 2H), no bias
    x   = layers.0(x)        a full-attention decoder layer with its MLP,
                             its own KV cache, at the position of token t
    g   = norm(x)            the hidden state the next chained step takes
    logits = lm_head(g)      the model's head (here its tied embedding)

with `hidden t` the model's last hidden state after its final norm (what
vLLM's and SGLang's models return and their MTP proposers take), so row t
predicts token t + 2. A chain of k drafts feeds g and the embedding of the
draft it just made back in, one position further (vLLM's proposer). Only
the head is trained (cross-entropy of token t + 2); torch and transformers
run on the CPU, a few minutes (the model's hidden states come from
tf-test-tool hidden, beside this script once built). mtp-ref.py is the reference of the draft
step the tests hold tf-run to.
"""
import argparse
import copy
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import time

import torch
from torch import nn

from transformers import Qwen3_5ForCausalLM
from transformers.models.qwen3_5.modeling_qwen3_5 import (Qwen3_5DecoderLayer, Qwen3_5RMSNorm,
                                                          Qwen3_5TextRotaryEmbedding)


class MTP(nn.Module):
    """the head over a frozen target: its embedding and head are the target's"""

    def __init__(self, cfg, target):
        super().__init__()
        H = cfg.hidden_size
        c = copy.deepcopy(cfg)
        c.num_hidden_layers = 1
        c.layer_types = ["full_attention"]
        c._attn_implementation = "eager"
        self.fc = nn.Linear(2 * H, H, bias=False)
        self.pre_fc_norm_embedding = Qwen3_5RMSNorm(H, eps=cfg.rms_norm_eps)
        self.pre_fc_norm_hidden = Qwen3_5RMSNorm(H, eps=cfg.rms_norm_eps)
        self.layers = nn.ModuleList([Qwen3_5DecoderLayer(c, 0)])
        self.norm = Qwen3_5RMSNorm(H, eps=cfg.rms_norm_eps)
        self.rope = Qwen3_5TextRotaryEmbedding(c)
        # not parameters of the head: the target's, frozen
        self.target = [target]

    def forward(self, hidden, next_ids, pos0=0):
        """hidden (B, T, H) and the ids after each row (B, T) at positions
        pos0.. -> g (B, T, H), logits (B, T, V); causal over the T rows"""
        t = self.target[0]
        B, T, _ = hidden.shape
        e = self.pre_fc_norm_embedding(t.model.embed_tokens(next_ids))
        x = self.fc(torch.cat([e, self.pre_fc_norm_hidden(hidden)], dim=-1))
        pos = torch.arange(pos0, pos0 + T).unsqueeze(0).expand(B, T)
        cos_sin = self.rope(x, pos)
        mask = torch.full((T, T), float("-inf")).triu(1)[None, None]
        x = self.layers[0](x, position_embeddings=cos_sin, attention_mask=mask, position_ids=pos)
        g = self.norm(x)
        return g, t.lm_head(g)


def load_target(base):
    m = Qwen3_5ForCausalLM.from_pretrained(base, dtype=torch.float32, attn_implementation="eager")
    m.eval()
    for p in m.parameters():
        p.requires_grad_(False)
    return m


def target_hidden(tool, base, seqs, H):
    """seqs (B, T) -> the model's last hidden states after its final norm
    (B, T, H), from tf-test-tool hidden (the CPU reference, which agrees
    with transformers' last_hidden_state within a few 1e-6 and runs this
    model many times faster than transformers' CPU fallback of the delta
    rule)"""
    text = "".join(" ".join(str(int(x)) for x in row) + "\n" for row in seqs)
    out = subprocess.run([tool, "hidden", base], input=text.encode(), stdout=subprocess.PIPE,
                         check=True).stdout
    return torch.frombuffer(bytearray(out), dtype=torch.float32).reshape(seqs.shape[0], seqs.shape[1], H)


def read_st(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    hdr = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    return {k: (v, data[v["data_offsets"][0]:v["data_offsets"][1]]) for k, v in hdr.items()
            if k != "__metadata__"}


def bf16_bytes(t):
    return t.detach().to(torch.bfloat16).contiguous().view(torch.int16).numpy().tobytes()


def write(base, out, head, cfg, info):
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(base):
        if f not in ("model.safetensors", "config.json", "reference.json", "prompt.logits.f32"):
            shutil.copy(os.path.join(base, f), out)
    c = json.load(open(os.path.join(base, "config.json")))
    # the fields the Qwen3.5 checkpoints name their head with
    c["mtp_num_hidden_layers"] = 1
    c["mtp_use_dedicated_embeddings"] = False
    json.dump(c, open(os.path.join(out, "config.json"), "w"), indent=2)
    items = list(read_st(os.path.join(base, "model.safetensors")).items())
    for name, p in head.state_dict().items():
        if name.startswith("rope."):
            continue
        b = bf16_bytes(p)
        items.append(("mtp." + name, ({"dtype": "BF16", "shape": list(p.shape)}, b)))
    h, blob = {"__metadata__": {"format": "pt"}}, b""
    for name, (meta, b) in items:
        h[name] = {"dtype": meta["dtype"], "shape": meta["shape"],
                   "data_offsets": [len(blob), len(blob) + len(b)]}
        blob += b
    text = json.dumps(h).encode()
    text += b" " * (-len(text) % 8)
    with open(os.path.join(out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + blob)
    json.dump(info, open(os.path.join(out, "reference.json"), "w"), indent=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("text")
    ap.add_argument("base")
    ap.add_argument("out")
    ap.add_argument("--tokens", type=int, default=32768, help="training ids the model is run over")
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tool", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf-test-tool"))
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    from tokenizers import Tokenizer

    text = open(a.text, encoding="utf-8").read()
    train = text[:int(len(text) * 0.9)]
    tok = Tokenizer.from_file(os.path.join(a.base, "tokenizer.json"))
    ids = tok.encode(train).ids
    # the training ids: evenly spaced windows over the 90%
    nseq = a.tokens // a.seq
    stride = (len(ids) - a.seq) // nseq
    seqs = torch.tensor([ids[i * stride:i * stride + a.seq] for i in range(nseq)])
    val = [int(x) for x in open(os.path.join(a.base, "val4096.ids")).read().split()]
    vseq = torch.tensor([val[i * a.seq:(i + 1) * a.seq] for i in range(len(val) // a.seq)])

    target = load_target(a.base)
    cfg = target.config
    t0 = time.time()
    H = cfg.hidden_size
    hid = target_hidden(a.tool, a.base, seqs, H)
    vhid = target_hidden(a.tool, a.base, vseq, H)
    print("target hidden states of %d ids: %.0f s" % (seqs.numel(), time.time() - t0), file=sys.stderr)

    head = MTP(cfg, target)
    for n, p in head.named_parameters():
        if n.startswith("fc.") or n.endswith("proj.weight"):
            nn.init.normal_(p, std=0.02)
    # row t: hidden t and token t + 1 guess token t + 2, taught by the model's
    # own distribution there (its head over hidden t + 1): what a verify
    # accepts is the model's id, not the text's
    def loss_of(h, s):
        _, logits = head(h[:, :-2], s[:, 1:-1])
        with torch.no_grad():
            teacher = torch.softmax(target.lm_head(h[:, 1:-1]), dim=-1)
        V = logits.shape[-1]
        return nn.functional.cross_entropy(logits.reshape(-1, V), teacher.reshape(-1, V))

    def agree(h, s):
        with torch.no_grad():
            _, logits = head(h[:, :-2], s[:, 1:-1])
            return (logits.argmax(-1) == target.lm_head(h[:, 1:-1]).argmax(-1)).float().mean().item()

    opt = torch.optim.AdamW([p for p in head.parameters()], lr=a.lr, weight_decay=0.01)
    steps = a.epochs * (nseq // a.batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, a.lr, total_steps=steps, pct_start=0.1)
    step = 0
    for ep in range(a.epochs):
        perm = torch.randperm(nseq)
        for b in range(nseq // a.batch):
            idx = perm[b * a.batch:(b + 1) * a.batch]
            loss = loss_of(hid[idx], seqs[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            if step % 50 == 0:
                print("step %d/%d loss %.3f (%.0f s)" % (step, steps, loss.item(), time.time() - t0),
                      file=sys.stderr)
        with torch.no_grad():
            vl = loss_of(vhid, vseq).item()
        acc = agree(vhid, vseq)
        print("epoch %d: held-out loss %.3f, top-1 agreement with the model %.3f" % (ep + 1, vl, acc),
              file=sys.stderr)
    info = {
        "made_by": "t/helper/train-mtp.py TEXT t/data/shakespeare-q35 OUT (torch %s, transformers %s, CPU)"
                   % (torch.__version__, __import__("transformers").__version__),
        "base": "shakespeare-q35, its every tensor unchanged, plus the mtp.* head (bf16)",
        "corpus": "Tiny Shakespeare, the first 90% (the last 10% held out, as val4096.ids)",
        "training": "%d windows of %d ids, %d epochs, batch %d, AdamW lr %g one-cycle, seed %d; "
                    "only the head trained: cross-entropy of its guess of token t+2 from (hidden t, "
                    "token t+1) against the model's own distribution of token t+2"
                    % (nseq, a.seq, a.epochs, a.batch, a.lr, a.seed),
        "val4096_loss": vl,
        "val4096_top1_agreement_with_the_model": acc,
    }
    write(a.base, a.out, head, cfg, info)
    print("held-out loss %.3f, top-1 agreement %.3f; written to %s" % (vl, acc, a.out), file=sys.stderr)


if __name__ == "__main__":
    main()
