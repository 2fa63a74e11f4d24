#!/usr/bin/env python3
"""mlx-oracle.py: mlx and mlx-lm as the independent reference for tf-pack.

  convert SRC DST BITS GROUP [RECIPE]   mlx-lm's converter (RECIPE: mixed_2_6 ...)
  logits MODEL IDS OUT                  mlx-lm's forward in fp32: raw float32 rows
  quantized BUNDLE SRC                  every affine tensor of BUNDLE (made by
                                        tf-pack --bits from the float folder SRC)
                                        equals mlx.core.quantize of its source,
                                        and its max_error is the one mlx's
                                        dequantized values give
  same BUNDLE MLXDIR [--all]            the bundle's affine tensors are the MLX
                                        folder's quantized ones, byte for byte,
                                        the same set with the same bits; --all:
                                        every other tensor's bytes too

Exit status 0 when everything matched; mismatches are printed.
"""
import hashlib
import json
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tfbundle import Bundle  # noqa: E402

import mlx.core as mx  # noqa: E402
import mlx_lm.utils as mlu  # noqa: E402

# mlx-lm knows the text-only Qwen3.5 checkpoints only under the multimodal
# model type; its Model class takes a config without text_config as is
mlu.MODEL_REMAPPING.setdefault("qwen3_5_text", "qwen3_5")

NP = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16, "U32": np.uint32}


def read_folder(path):
    """{name: (dtype string, shape, bytes)} of every safetensors file"""
    out = {}
    for f in sorted(os.listdir(path)):
        if not f.endswith(".safetensors"):
            continue
        raw = open(os.path.join(path, f), "rb").read()
        n = struct.unpack("<Q", raw[:8])[0]
        hdr = json.loads(raw[8:8 + n])
        for k, v in hdr.items():
            if k == "__metadata__":
                continue
            b, e = v["data_offsets"]
            out[k] = (v["dtype"], v["shape"], raw[8 + n + b:8 + n + e])
    return out


def norm(name):
    for p in ("model.language_model.", "language_model.model.", "model."):
        if name.startswith(p):
            return name[len(p):]
    if name.startswith("language_model.lm_head."):
        return name[len("language_model."):]
    return name


def as_mx(dtype, shape, b):
    a = np.frombuffer(b, dtype=NP[dtype]).reshape(shape)
    if dtype == "BF16":
        f = (a.astype(np.uint32) << 16).view(np.float32)
        return mx.array(f).astype(mx.bfloat16)
    return mx.array(a)


def mx_bytes(a):
    if a.dtype == mx.bfloat16:
        return np.asarray(a.view(mx.uint16)).tobytes()
    return np.asarray(a).tobytes()


def cmd_convert(src, dst, bits, group, recipe=None):
    from mlx_lm.convert import convert
    convert(src, dst, quantize=True, q_bits=int(bits), q_group_size=int(group), quant_predicate=recipe)


def cmd_logits(model_path, ids_path, out):
    from pathlib import Path
    from mlx.utils import tree_map
    model, _ = mlu.load_model(Path(model_path))

    # fp32 activations on the same weights: bf16 scales, biases and norms
    # widen exactly, so the only differences left are the engines' own
    def f32(p):
        return p.astype(mx.float32) if p.dtype in (mx.bfloat16, mx.float16) else p
    model.update(tree_map(f32, model.parameters()))
    with open(out, "wb") as f:
        for line in open(ids_path):
            ids = [int(t) for t in line.split()]
            if not ids:
                continue
            y = model(mx.array([ids]))
            mx.eval(y)
            np.asarray(y[0].astype(mx.float32)).astype("<f4").tofile(f)


def cmd_quantized(bundle_path, src):
    b = Bundle(bundle_path)
    tensors = {norm(k): v for k, v in read_folder(src).items()}
    bad = checked = 0
    for t in b.manifest["tensors"]:
        if t["format"] != "affine":
            continue
        dtype, shape, raw = tensors[t["name"]]
        q, s, bi = mx.quantize(as_mx(dtype, shape, raw), group_size=t["group"], bits=t["bits"])
        p = b.parts(t["name"])
        for nm, want in (("codes", mx_bytes(q)), ("scales", mx_bytes(s)), ("biases", mx_bytes(bi))):
            if p[nm] != want:
                got = np.frombuffer(p[nm], np.uint8)
                exp = np.frombuffer(want, np.uint8)
                first = int(np.nonzero(got != exp)[0][0]) if len(got) == len(exp) else -1
                print(f"{t['name']}: {nm} differ from mlx.core.quantize (first byte {first})")
                bad += 1
        # the manifest's max_error: the largest |w - (s*q + b)| with the
        # stored scales and biases, recomputed here in fp32 from mlx's arrays
        w = as_mx(dtype, shape, raw).astype(mx.float32)
        deq = mx.dequantize(q, s.astype(mx.float32), bi.astype(mx.float32), group_size=t["group"], bits=t["bits"])
        err = float(mx.max(mx.abs(w - deq)))
        if abs(err - t["max_error"]) > 1e-6 * max(err, 1e-30) + 1e-12 * float(mx.max(mx.abs(w))):
            print(f"{t['name']}: max_error {t['max_error']!r}, mlx says {err!r}")
            bad += 1
        checked += 1
    print(f"{checked} tensors checked, {bad} parts differ")
    return bad == 0 and checked > 0


def mlx_bits(config, module_path):
    q = config.get("quantization", {})
    o = q.get(module_path)
    bits, group = q.get("bits"), q.get("group_size")
    if isinstance(o, dict):
        bits, group = o.get("bits", bits), o.get("group_size", group)
    return bits, group


def cmd_same(bundle_path, mlxdir, all_tensors=False):
    b = Bundle(bundle_path)
    src = read_folder(mlxdir)
    config = json.load(open(os.path.join(mlxdir, "config.json")))
    bad = 0
    quantized = {k[:-len(".scales")] for k in src if k.endswith(".scales")}
    want = {norm(m + ".weight"): m for m in quantized}
    have = {t["name"] for t in b.manifest["tensors"] if t["format"] == "affine"}
    if set(want) != have:
        print("quantized sets differ:", sorted(set(want) ^ have))
        bad += 1
    for name in sorted(set(want) & have):
        m = want[name]
        t, p = b.entry(name), b.parts(name)
        bits, group = mlx_bits(config, m)
        if (t["bits"], t["group"]) != (bits, group):
            print(f"{name}: bits/group {t['bits']}/{t['group']}, mlx {bits}/{group}")
            bad += 1
        for nm, key in (("codes", ".weight"), ("scales", ".scales"), ("biases", ".biases")):
            if p[nm] != src[m + key][2]:
                print(f"{name}: {nm} differ")
                bad += 1
        if all_tensors:
            # packed from this folder: the checksum is of its codes, scales, biases
            h = hashlib.sha256(src[m + ".weight"][2] + src[m + ".scales"][2] + src[m + ".biases"][2])
            if t["sha256"] != h.hexdigest() or t["path"] != "mlx" or t["max_error"] != 0:
                print(f"{name}: sha256, path or max_error wrong: {t['sha256']} {t['path']} {t['max_error']}")
                bad += 1
    if all_tensors:
        for k, (dtype, shape, raw) in src.items():
            if k.endswith((".scales", ".biases")) or k[:-len(".weight")] in quantized:
                continue
            t = b.by_name.get(norm(k))
            if t is None or t["format"] != dtype.lower() or t["shape"] != shape or b.parts(norm(k))["data"] != raw:
                print(f"{k}: not kept byte for byte")
                bad += 1
    print(f"{len(want)} quantized tensors compared, {bad} differences")
    return bad == 0


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "convert":
        cmd_convert(*args)
        return 0
    if cmd == "logits":
        cmd_logits(*args)
        return 0
    if cmd == "quantized":
        return 0 if cmd_quantized(*args) else 1
    if cmd == "same":
        return 0 if cmd_same(args[0], args[1], "--all" in args[2:]) else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
