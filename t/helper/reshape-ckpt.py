#!/usr/bin/env python3
"""reshape-ckpt.py GOOD OUT FLAVOUR: rewrite a text-only HF checkpoint folder
in another layout with the same tensor bytes.

multimodal: names under model.language_model., config nested in text_config,
            plus mtp.* and model.visual.* tensors that must be skipped
mlxnames:   names under language_model.model. (head language_model.lm_head.)
sharded:    three shards and a model.safetensors.index.json
"""
import json
import os
import shutil
import struct
import sys

good, out, flavour = sys.argv[1:4]
os.makedirs(out)
for f in os.listdir(good):
    if f != "model.safetensors":
        shutil.copy(os.path.join(good, f), out)
        os.chmod(os.path.join(out, f), 0o644)
raw = open(os.path.join(good, "model.safetensors"), "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
hdr = json.loads(raw[8:8 + n])
data = raw[8 + n:]
tensors = {k: (v, data[v["data_offsets"][0]:v["data_offsets"][1]])
           for k, v in hdr.items() if k != "__metadata__"}


def save(path, items):
    h, blob = {}, b""
    for name, (meta, b) in items:
        h[name] = {"dtype": meta["dtype"], "shape": meta["shape"],
                   "data_offsets": [len(blob), len(blob) + len(b)]}
        blob += b
    text = json.dumps(h).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + blob)


def rename(prefix, head):
    return [(head if k == "lm_head.weight" else prefix + k[len("model."):], v)
            for k, v in tensors.items()]


if flavour == "multimodal":
    items = rename("model.language_model.", "lm_head.weight")
    junk = ({"dtype": "F32", "shape": [3]}, b"\0" * 12)
    items += [("mtp.fc.weight", junk), ("model.visual.patch.weight", junk)]
    save(os.path.join(out, "model.safetensors"), items)
    cfg = json.load(open(os.path.join(good, "config.json")))
    json.dump({"model_type": "qwen3_5", "text_config": cfg,
               "tie_word_embeddings": cfg.get("tie_word_embeddings", False)},
              open(os.path.join(out, "config.json"), "w"))
elif flavour == "mlxnames":
    save(os.path.join(out, "model.safetensors"),
         rename("language_model.model.", "language_model.lm_head.weight"))
elif flavour == "sharded":
    items = sorted(tensors.items())
    wmap = {}
    for i in range(3):
        name = "model-%05d-of-00003.safetensors" % (i + 1)
        part = items[i::3]
        save(os.path.join(out, name), part)
        wmap.update({k: name for k, _ in part})
    json.dump({"metadata": {"total_size": len(data)}, "weight_map": wmap},
              open(os.path.join(out, "model.safetensors.index.json"), "w"))
else:
    sys.exit("unknown flavour " + flavour)
