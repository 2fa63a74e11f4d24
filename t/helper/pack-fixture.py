#!/usr/bin/env python3
"""pack-fixture.py: inputs for the tf-pack tests, made at test time.

  random OUT SEED          a folder of float weights (f32, bf16, f16) with the
                           awkward groups a quantizer meets: constant, zero,
                           negative-dominated, tiny, huge, signed zeros
  flip SRC OUT TENSOR      a copy of the folder SRC where one weight of TENSOR
                           has its magnitude changed by one unit in the last place
  mlx-bad SRC OUT KIND     a copy of the MLX folder SRC, damaged as KIND:
                           codes-shape (scales disagree with the codes),
                           missing-module (a quantization override for a module
                           the checkpoint lacks), bits9 (bits outside 2..8)
  bundle-bad SRC OUT KIND  a copy of the bundle SRC, damaged as KIND:
                           truncated, past-end, magic, version, notjson, deep,
                           notarray, dupkey, overlap, overlap-hidden, bytes, shape, trailing
"""
import json
import os
import shutil
import struct
import sys

import numpy as np


def save_st(path, tensors):
    """tensors: [(name, dtype string, shape, bytes)]"""
    h, blob = {}, b""
    for name, dtype, shape, b in tensors:
        h[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [len(blob), len(blob) + len(b)]}
        blob += b
    text = json.dumps(h).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + blob)


def load_st(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    hdr = json.loads(raw[8:8 + n])
    out = []
    for k, v in hdr.items():
        if k == "__metadata__":
            continue
        b, e = v["data_offsets"]
        out.append([k, v["dtype"], v["shape"], raw[8 + n + b:8 + n + e]])
    return out


def to_bf16(f):
    """round to nearest even, as every converter does"""
    u = f.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def random_folder(out, seed):
    rng = np.random.default_rng(int(seed))
    os.makedirs(out)
    rows, cols = 24, 384
    pats = {
        "normal": lambda: rng.normal(0, 0.02, (rows, cols)),
        "uniform": lambda: rng.uniform(-1, 1, (rows, cols)),
        "negheavy": lambda: rng.uniform(-3, 0.5, (rows, cols)),
        "posheavy": lambda: rng.uniform(-0.5, 3, (rows, cols)),
        "tiny": lambda: rng.normal(0, 1e-6, (rows, cols)),
        "huge": lambda: rng.normal(0, 300, (rows, cols)),
        "steps": lambda: np.round(rng.normal(0, 2, (rows, cols))) / 4,
    }
    tensors = []
    for pname, make in pats.items():
        w = make()
        # whole groups of one value (the eps scale), of zeros, and of
        # signed zeros, somewhere in every tensor
        w[1, :32] = 0.37
        w[2, :128] = 0.0
        w[3, 32:64] = -0.0
        w[4, 64:96] = -1.5
        for dt in ("F32", "BF16", "F16"):
            if dt == "F32":
                b = w.astype("<f4").tobytes()
            elif dt == "F16":
                b = np.clip(w, -60000, 60000).astype("<f2").tobytes()
            else:
                b = to_bf16(w).tobytes()
            tensors.append((f"model.layers.0.{pname}_{dt.lower()}.weight", dt, (rows, cols), b))
    save_st(os.path.join(out, "model.safetensors"), tensors)
    json.dump({"model_type": "test"}, open(os.path.join(out, "config.json"), "w"))


def copy_folder(src, out):
    shutil.copytree(src, out)
    os.chmod(out, 0o755)
    for f in os.listdir(out):
        os.chmod(os.path.join(out, f), 0o644)


def flip(src, out, tensor):
    copy_folder(src, out)
    st = os.path.join(out, "model.safetensors")
    ts = load_st(st)
    for t in ts:
        if t[0] == tensor:
            assert t[1] == "BF16"
            a = np.frombuffer(t[3], np.uint16).copy()
            a[5] += 1           # one ulp more magnitude (sign bit untouched)
            t[3] = a.tobytes()
            break
    else:
        sys.exit(f"no tensor {tensor}")
    save_st(st, ts)


def mlx_bad(src, out, kind):
    copy_folder(src, out)
    cfg_path = os.path.join(out, "config.json")
    cfg = json.load(open(cfg_path))
    if kind == "missing-module":
        cfg["quantization"]["language_model.model.layers.0.mlp.gate_pro"] = {"group_size": 64, "bits": 4}
    elif kind == "bits9":
        cfg["quantization"]["bits"] = 9
        cfg["quantization_config"]["bits"] = 9
    elif kind == "codes-shape":
        st = [f for f in os.listdir(out) if f.endswith(".safetensors")][0]
        ts = load_st(os.path.join(out, st))
        for t in ts:
            if t[0].endswith("layers.0.mlp.up_proj.scales") or t[0].endswith("layers.0.mlp.up_proj.biases"):
                r, c = t[2]
                es = len(t[3]) // (r * c)
                a = np.frombuffer(t[3], np.uint8).reshape(r, c * es)[:, :c // 2 * es]
                t[2], t[3] = [r, c // 2], a.tobytes()
        save_st(os.path.join(out, st), ts)
    else:
        sys.exit(f"unknown kind {kind}")
    json.dump(cfg, open(cfg_path, "w"))


def bundle_bad(src, out, kind):
    raw = bytearray(open(src, "rb").read())
    version, hdr_len, moff, mlen, doff, dlen = struct.unpack("<IIQQQQ", raw[8:48])
    man = json.loads(raw[moff:moff + mlen])

    def put_manifest(text):
        assert 64 + len(text) <= doff, "manifest too large for its room"
        raw[64:doff] = text + bytes(doff - 64 - len(text))
        raw[24:32] = struct.pack("<Q", len(text))

    ts = man["tensors"]
    big = max(range(len(ts)), key=lambda i: ts[i]["bytes"])
    if kind == "truncated":
        raw = raw[:len(raw) - len(raw) // 3]
    elif kind == "trailing":
        raw += b"extra"
    elif kind == "magic":
        raw[1:4] = b"TFX"
    elif kind == "version":
        raw[8:12] = struct.pack("<I", 7)
    elif kind == "past-end":
        ts[big]["offset"] = (dlen // 4096 + 1) * 4096
        put_manifest(json.dumps(man).encode())
    elif kind == "overlap":
        other = (big + 1) % len(ts)
        ts[other]["offset"] = ts[big]["offset"]
        put_manifest(json.dumps(man).encode())
    elif kind == "overlap-hidden":
        # a small tensor inside the largest, an empty one between their
        # starts: neighbours in offset order do not overlap
        small = min((i for i in range(len(ts)) if i != big and ts[i]["bytes"]), key=lambda i: ts[i]["bytes"])
        empty = dict(ts[small], name="extra.empty", shape=[0], bytes=0, offset=ts[big]["offset"] + 4096)
        ts[small]["offset"] = ts[big]["offset"] + 8192
        ts.append(empty)
        put_manifest(json.dumps(man).encode())
    elif kind == "bytes":
        ts[big]["bytes"] += 4096
        put_manifest(json.dumps(man).encode())
    elif kind == "shape":
        ts[big]["shape"] = [1 << 41, 3]
        put_manifest(json.dumps(man).encode())
    elif kind == "notjson":
        put_manifest(b'{"tf_bundle": 1, "tensors": [{"name": ')
    elif kind == "deep":
        put_manifest(b"[" * 100000 + b"]" * 100000 if 64 + 200000 <= doff else b"[" * ((doff - 64) // 2) + b"]" * ((doff - 64) // 2))
    elif kind == "notarray":
        man["tensors"] = {"a": 1}
        put_manifest(json.dumps(man).encode())
    elif kind == "dupkey":
        text = json.dumps(man).encode()
        put_manifest(b'{"tensors": [], ' + text[1:])
    else:
        sys.exit(f"unknown kind {kind}")
    open(out, "wb").write(raw)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    {"random": random_folder, "flip": flip, "mlx-bad": mlx_bad, "bundle-bad": bundle_bad}[cmd](*args)


if __name__ == "__main__":
    main()
