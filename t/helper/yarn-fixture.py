#!/usr/bin/env python3
"""Make t/data/tiny-q35-yarn: t/data/tiny-q35 with yarn rope, and its oracle.

    yarn-fixture.py SRC DST      (SRC t/data/tiny-q35, DST t/data/tiny-q35-yarn)

The weights and generation_config.json are SRC's; config.json gets
rope_parameters of rope_type yarn (factor 4 over an original context of
64, so max_position_embeddings 256) and a prompt of 128 ids, twice the
original context, is scored by transformers' Qwen3_5ForCausalLM in fp32
(eager attention, on the CPU): DST/prompt.ids (one line) and
DST/prompt.logits.f32 (128 rows of the vocabulary's float32 logits,
little-endian, as SRC's). It also prints yarn's table as transformers makes
it (inv_freq, attention factor), the numbers t/unit/rope.c holds
model/rope.c to. Needs torch, transformers, numpy and safetensors; the
fixture is committed, so the tests never run this.
"""
import json
import os
import shutil
import sys

import numpy as np
import torch
import transformers
from transformers import AutoConfig, Qwen3_5ForCausalLM
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

PROMPT = 128
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}


def main():
    src, dst = sys.argv[1], sys.argv[2]
    os.makedirs(dst, exist_ok=True)
    for f in ("model.safetensors", "generation_config.json"):
        shutil.copyfile(os.path.join(src, f), os.path.join(dst, f))
    with open(os.path.join(src, "config.json")) as f:
        cfg = json.load(f)
    rp = dict(cfg["rope_parameters"])
    rp.update(YARN)
    cfg["rope_parameters"] = rp
    cfg["max_position_embeddings"] = int(YARN["factor"] * YARN["original_max_position_embeddings"])
    with open(os.path.join(dst, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")

    # the table itself, for the unit test
    conf = AutoConfig.from_pretrained(dst)
    inv, attn = ROPE_INIT_FUNCTIONS["yarn"](conf, "cpu")
    print("attention_factor %.9g" % attn)
    print("inv_freq " + " ".join("%.9g" % v for v in inv.float().tolist()))

    torch.manual_seed(0)
    ids = np.random.default_rng(37).integers(0, cfg["vocab_size"], PROMPT)
    model = Qwen3_5ForCausalLM.from_pretrained(dst, dtype=torch.float32, attn_implementation="eager")
    model.eval()
    assert model.model.rotary_emb.rope_type == "yarn"
    with torch.no_grad():
        out = model(torch.tensor(ids[None, :], dtype=torch.long), use_cache=False)
    logits = out.logits[0].float().numpy()
    with open(os.path.join(dst, "prompt.ids"), "w") as f:
        f.write(" ".join(str(int(i)) for i in ids) + "\n")
    logits.astype("<f4").tofile(os.path.join(dst, "prompt.logits.f32"))
    with open(os.path.join(dst, "reference.json"), "w") as f:
        json.dump({"rows": PROMPT, "vocab": cfg["vocab_size"], "dtype": "float32-le",
                   "made_by": "transformers %s Qwen3_5ForCausalLM fp32 eager on CPU from the bf16 weights "
                              "of tiny-q35, yarn rope (t/helper/yarn-fixture.py)" % transformers.__version__,
                   "rope_parameters": rp, "prompt_seed": 37}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
