#!/usr/bin/env python3
"""mkbad.py GOOD OUT KIND: copy the model folder GOOD to OUT, damaged as KIND.

Kinds: truncated, hdrlen, overlap, overlap-hidden, range, dtype, missing,
shape, config-notjson, config-nofield, notobject.
"""
import json
import os
import shutil
import struct
import sys

good, out, kind = sys.argv[1:4]
shutil.copytree(good, out)
os.chmod(out, 0o755)
st = os.path.join(out, "model.safetensors")
os.chmod(st, 0o644)
raw = open(st, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
hdr = json.loads(raw[8:8 + n])
data = raw[8 + n:]
names = sorted(k for k in hdr if k != "__metadata__")


def write(h, d, hlen=None):
    text = json.dumps(h).encode()
    with open(st, "wb") as f:
        f.write(struct.pack("<Q", len(text) if hlen is None else hlen))
        f.write(text)
        f.write(d)


if kind == "truncated":
    open(st, "wb").write(raw[:len(raw) // 2])
elif kind == "hdrlen":
    write(hdr, data, hlen=len(raw) * 2)
elif kind == "overlap":
    a, b = names[0], names[1]
    beg = hdr[b]["data_offsets"][0]
    size = hdr[a]["data_offsets"][1] - hdr[a]["data_offsets"][0]
    # a starts inside b but keeps its own size, so only the overlap is wrong
    hdr[a]["data_offsets"] = [beg + 2, beg + 2 + size]
    write(hdr, data)
elif kind == "overlap-hidden":
    # a small tensor inside the largest one, with an empty tensor between
    # their starts: neighbours in offset order do not overlap
    big = max(names, key=lambda k: hdr[k]["data_offsets"][1] - hdr[k]["data_offsets"][0])
    small = min((k for k in names if k != big), key=lambda k: hdr[k]["data_offsets"][1] - hdr[k]["data_offsets"][0])
    beg = hdr[big]["data_offsets"][0]
    size = hdr[small]["data_offsets"][1] - hdr[small]["data_offsets"][0]
    hdr["extra.empty"] = {"dtype": "F32", "shape": [0], "data_offsets": [beg + 16, beg + 16]}
    hdr[small]["data_offsets"] = [beg + 64, beg + 64 + size]
    write(hdr, data)
elif kind == "range":
    t = hdr[names[0]]
    size = t["data_offsets"][1] - t["data_offsets"][0]
    t["data_offsets"] = [len(data) - size + 64, len(data) + 64]
    write(hdr, data)
elif kind == "dtype":
    hdr[names[0]]["dtype"] = "Q7"
    write(hdr, data)
elif kind == "missing":
    del hdr["model.layers.1.mlp.up_proj.weight"]
    write(hdr, data)
elif kind == "shape":
    t = hdr["model.layers.0.mlp.gate_proj.weight"]
    t["shape"] = [t["shape"][1], t["shape"][0]]
    write(hdr, data)
elif kind == "notobject":
    text = b"[1, 2, 3]"
    with open(st, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)
elif kind == "config-notjson":
    cfg = os.path.join(out, "config.json")
    os.chmod(cfg, 0o644)
    open(cfg, "w").write('{"vocab_size": 1024, "hidden_size": ')
elif kind == "config-nofield":
    cfg = os.path.join(out, "config.json")
    os.chmod(cfg, 0o644)
    c = json.load(open(cfg))
    del c["num_attention_heads"]
    json.dump(c, open(cfg, "w"))
else:
    sys.exit("unknown kind " + kind)
