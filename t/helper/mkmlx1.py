#!/usr/bin/env python3
"""An MLX 1-bit folder of a binary checkpoint, as mlx-lm lays one out.

  mkmlx1.py SRC DIR [--group G] [--break MODULE]

Every matrix of SRC (a bf16 checkpoint folder) whose groups of 128 hold
exactly {-s, +s} becomes an MLX affine triplet with bits 1 and group G (32,
64 or 128, default 128): the codes b (1 for +s) packed 32 to a u32 word,
least significant bit first, scale 2s and bias -s per group in bf16, so
w = 2s b - s. The rest is as mlx-lm's sanitize leaves it: the RMSNorm
weights with their 1 added (in float32 here, the sum the checkpoint path
computes), conv1d as [C, K, 1], the other tensors as they are.
config.json gains "quantization": {"bits": 1, "group_size": G}.
--break MODULE moves the bias of MODULE's second group (row 0) off -s, so
the folder is no longer binary there.
"""
import json
import os
import shutil
import struct
import sys

import numpy as np



def read_safetensors(path):
    """name -> float32 array of a bf16/f32 safetensors file"""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        head = json.loads(f.read(n))
        buf = f.read()
    out = {}
    for k, v in head.items():
        if k == "__metadata__":
            continue
        raw = buf[v["data_offsets"][0]:v["data_offsets"][1]]
        if v["dtype"] == "BF16":
            a = (np.frombuffer(raw, np.uint16).astype(np.uint32) << 16).view(np.float32)
        elif v["dtype"] == "F32":
            a = np.frombuffer(raw, np.float32)
        else:
            raise SystemExit("mkmlx1: %s: dtype %s" % (k, v["dtype"]))
        out[k] = a.reshape(v["shape"]).copy()
    return out


def to_bf16(a):
    u = np.ascontiguousarray(a, np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def write_safetensors(path, tensors):
    """tensors: name -> (dtype string, shape, bytes)"""
    hdr, blob = {}, b""
    for k in sorted(tensors):
        dt, shape, raw = tensors[k]
        hdr[k] = {"dtype": dt, "shape": list(shape), "data_offsets": [len(blob), len(blob) + len(raw)]}
        blob += raw
    text = json.dumps(hdr).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + blob)


def binary(w):
    if w.ndim != 2 or w.shape[1] % 128:
        return False
    g = w.reshape(w.shape[0], -1, 128)
    return bool(np.all(np.abs(g) == np.abs(g[:, :, :1])))


def main():
    src, out = sys.argv[1], sys.argv[2]
    group, brk = 128, None
    a = sys.argv[3:]
    while a:
        if a[0] == "--group":
            group = int(a[1]); a = a[2:]
        elif a[0] == "--break":
            brk = a[1]; a = a[2:]
        else:
            raise SystemExit("mkmlx1: unknown option %s" % a[0])
    os.makedirs(out, exist_ok=True)
    w = read_safetensors(os.path.join(src, "model.safetensors"))
    t = {}
    for name, x in w.items():
        if name.endswith("norm.weight") and not name.endswith("linear_attn.norm.weight"):
            t[name] = ("F32", x.shape, (x + np.float32(1)).astype(np.float32).tobytes())
        elif name.endswith("conv1d.weight"):
            t[name] = ("F32", (x.shape[0], x.shape[-1], 1), x.astype(np.float32).tobytes())
        elif name.endswith(".weight") and binary(x):
            rows, cols = x.shape
            s = np.repeat(np.abs(x.reshape(rows, -1, 128)[:, :, 0]), 128 // group, axis=1)
            codes = np.packbits((x > 0).astype(np.uint8), axis=-1, bitorder="little")
            scales, biases = to_bf16(2 * s), to_bf16(-s)
            base = name[:-len(".weight")]
            if brk and base.endswith(brk):
                biases[0, 1] ^= 1
            t[name] = ("U32", (rows, cols // 32), codes.tobytes())
            t[base + ".scales"] = ("BF16", scales.shape, scales.tobytes())
            t[base + ".biases"] = ("BF16", biases.shape, biases.tobytes())
        else:
            t[name] = ("BF16", x.shape, to_bf16(x).tobytes())
    write_safetensors(os.path.join(out, "model.safetensors"), t)
    cfg = json.load(open(os.path.join(src, "config.json")))
    cfg["quantization"] = {"bits": 1, "group_size": group}
    json.dump(cfg, open(os.path.join(out, "config.json"), "w"), indent=1)
    for f in ("tokenizer.json", "generation_config.json"):
        if os.path.exists(os.path.join(src, f)):
            shutil.copy(os.path.join(src, f), out)


if __name__ == "__main__":
    main()
