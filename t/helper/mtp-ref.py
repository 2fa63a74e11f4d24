#!/usr/bin/env python3
"""mtp-ref.py MODEL PROMPT GREEDY K: the drafts tf-run -n N --ignore-eos
--draft mtp:K proposes (what TF_TEST_DRAFTS=FILE writes: a line a
proposal, ID:PARENT of each drafted node, the root 0), from transformers
and torch alone: the model's forward for its hidden states, train-mtp.py's
head for the drafts.

PROMPT holds the prompt's ids, GREEDY the N ids plain greedy decoding
makes after it (which drafted decoding makes too). Each round is what
tf-run's streams do: after the ids so far (the last, the root, not yet fed
to the model), a chain of min(K, ids left - 1) drafts, each the head's
argmax; the model keeps the drafts its own greedy ids match and adds its
next id. The head's rows are computed afresh each round, causally over
every position so far (as its KV cache holds them), the chain's rows on
top: row t takes the model's hidden state at t and the id at t + 1, a
chained row the head's own output state before it and the id it guessed.
"""
import importlib.util
import json
import os
import struct
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("train_mtp", os.path.join(here, "train-mtp.py"))
tm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tm)


def load_head(model, target):
    head = tm.MTP(target.config, target)
    sd = {}
    for name, (meta, b) in tm.read_st(os.path.join(model, "model.safetensors")).items():
        if name.startswith("mtp."):
            assert meta["dtype"] == "BF16", name
            t = torch.frombuffer(bytearray(b), dtype=torch.bfloat16).reshape(meta["shape"])
            sd[name[4:]] = t.float()
    missing = head.load_state_dict(sd, strict=False)
    assert not missing.unexpected_keys, missing
    assert all(k.startswith("rope.") for k in missing.missing_keys), missing
    head.eval()
    return head


def main():
    model, prompt, greedy, K = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    p = [int(x) for x in open(prompt).read().split()]
    g = [int(x) for x in open(greedy).read().split()]
    seq = p + g
    N = len(g)
    target = tm.load_target(model)
    head = load_head(model, target)
    with torch.no_grad():
        hid = target.model(input_ids=torch.tensor([seq])).last_hidden_state[0]
        P, drawn = len(p), 1
        while drawn < N:
            depth = min(K, N - drawn - 1)
            if depth <= 0:
                drawn += 1
                P += 1
                continue
            hs = [hid[t] for t in range(P)]
            nx = seq[1:P + 1]
            drafts = []
            for _ in range(depth):
                out, logits = head(torch.stack(hs)[None], torch.tensor([nx]))
                d = int(logits[0, -1].argmax())
                drafts.append(d)
                hs.append(out[0, -1])
                nx.append(d)
            print(" ".join("%d:%d" % (d, i) for i, d in enumerate(drafts)))
            k = 0
            while k < depth and drafts[k] == seq[P + 1 + k]:
                k += 1
            drawn += k + 1
            P += k + 1


if __name__ == "__main__":
    main()
