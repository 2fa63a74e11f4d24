#!/usr/bin/env python3
"""Writes the seed corpus of t/fuzz (t/fuzz/corpus/HARNESS/NAME), small
sound inputs for each reader to mutate, from t/data and from nothing.

    t/fuzz/mkcorpus.py            (from the top of the tree)

Inputs that once crashed a reader are added beside these by hand, named
crash-WHAT, and stay: make test replays every file here.
"""
import io
import json
import os
import struct
import subprocess
import sys
import tarfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")
OUT = os.path.join(HERE, "corpus")


def put(harness, name, data):
    d = os.path.join(OUT, harness)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    open(os.path.join(d, name), "wb").write(data)


def safetensors(tensors, meta=None):
    hdr, blob = {}, b""
    if meta:
        hdr["__metadata__"] = meta
    for name, dtype, shape, raw in tensors:
        hdr[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(blob), len(blob) + len(raw)]}
        blob += raw
    text = json.dumps(hdr).encode()
    return struct.pack("<Q", len(text)) + text + blob


def record(kind, dtype, rows, cols, payload, seq=0, pos=0):
    return (b"\x89TFR\r\n\x1a\n" + struct.pack("<HHHHIIQQQ", 1, kind, dtype, 48, rows, cols, seq, pos, 0)
            + payload)


def main():
    # safetensors: a few dtypes and shapes, MLX-style names, metadata
    f32 = struct.pack("<6f", *range(6))
    put("safetensors", "small", safetensors([
        ("model.embed_tokens.weight", "F32", [2, 3], f32),
        ("model.norm.weight", "BF16", [3], b"\x80\x3f" * 3),
        ("model.layers.0.mlp.up_proj.weight", "U32", [2, 1], struct.pack("<2I", 7, 9)),
        ("empty", "F16", [0], b"")], {"format": "pt"}))
    put("safetensors", "one", safetensors([("x", "I64", [1], struct.pack("<q", -1))]))

    # config.json: the test models' and the published geometries'
    for name in ("tiny-q35", "shakespeare-q35", "shakespeare-q35-1bit"):
        put("config", name, open(os.path.join(DATA, name, "config.json")).read())
    for name in sorted(os.listdir(os.path.join(DATA, "synth"))):
        put("config", name, open(os.path.join(DATA, "synth", name)).read())

    # tokenizer.json: the Shakespeare one cut to its bytes and a few merges
    tj = json.load(open(os.path.join(DATA, "shakespeare-q35", "tokenizer.json")))
    vocab = tj["model"]["vocab"]
    keep = sorted(vocab.items(), key=lambda kv: kv[1])[:300]
    tj["model"]["vocab"] = dict(keep)
    kept = set(tj["model"]["vocab"])
    merges = []
    for m in tj["model"]["merges"]:
        a, b = m.split(" ") if isinstance(m, str) else m
        if a in kept and b in kept and a + b in kept:
            merges.append(m)
    tj["model"]["merges"] = merges[:40]
    tj["added_tokens"] = [t for t in tj["added_tokens"] if t["id"] < 300] or tj["added_tokens"][:2]
    put("tokenizer", "shakespeare-cut", json.dumps(tj))

    # texts for the encoder
    for i, text in enumerate([
            "ROMEO:\nI will be gone, and I will not do it.\n",
            "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n",
            "caf\u00e9 cafe\u0301 \u4e2d\u6587 \U0001f600 1234567 \r\n\t  \u00a0x\0y",
            "   \n\n\n  a  b\u2003c"]):
        put("encode", "text%d" % i, text)

    # records: ids, logits, a tree, two records in a row; raw rows of 7
    ids = record(1, 1, 4, 1, struct.pack("<4i", 5, 6, 7, 8), seq=3)
    logits = record(2, 2, 2, 7, struct.pack("<14f", *[i / 7 for i in range(14)]), pos=1)
    put("records", "ids", ids)
    put("records", "logits", logits)
    put("records", "two", logits + logits)
    put("records", "tree", record(3, 1, 3, 2, struct.pack("<6i", 1, -1, 2, 0, 3, 0)))
    put("records", "raw7", struct.pack("<14f", *range(14)))

    # ids: text lines, comments, CRLF, a binary record
    # a reply's tool calls: the first byte is where streaming cuts it
    call = ("Let me look.\n\n<tool_call>\n<function=f>\n<parameter=s>\nParis\n</parameter>\n"
            "<parameter=i>\n3\n</parameter>\n<parameter=n>\n2.5\n</parameter>\n<parameter=b>\nTrue\n</parameter>\n"
            "<parameter=o>\n{\"k\": [1, null]}\n</parameter>\n<parameter=a>\n['x', (1, 2)]\n</parameter>\n"
            "<parameter=u>\n{'a': \"b\\u00e9\", 1: None}\n</parameter>\n<parameter=z>\nnull\n</parameter>\n"
            "</function>\n</tool_call>\n<tool_call>\n<function=g>\n<parameter=x\n1")
    put("toolcall", "calls", "\x17" + call)
    put("toolcall", "literal", "\x05[1, -2.5e3, 0x1f, 'a' \"b\", (), {None: True}], 3")
    put("ids", "text", "1 2 3\n\n# a comment\n4 5 # trailing\r\n007 999\n")
    put("ids", "binary", ids)

    # a bundle of a small random model, made by tf-pack --synth
    cfg = json.load(open(os.path.join(DATA, "tiny-q35", "config.json")))
    tc = cfg.get("text_config", cfg)
    tc.update(vocab_size=64, hidden_size=128, intermediate_size=128, num_hidden_layers=2,
              num_attention_heads=2, num_key_value_heads=1, head_dim=64, linear_num_key_heads=1,
              linear_num_value_heads=2, linear_key_head_dim=64, linear_value_head_dim=64,
              layer_types=["linear_attention", "full_attention"])
    tmp = os.path.join(OUT, ".micro.json")
    json.dump(cfg, open(tmp, "w"))
    for bits in ("4", "1"):
        out = os.path.join(OUT, ".micro.tfb")
        subprocess.run([os.path.join(HERE, "..", "..", "bin", "tf-pack"), "-q", "--synth", tmp, "--bits", bits,
                        out], check=True)
        put("bundle", "micro-q%s" % bits, open(out, "rb").read())
        os.remove(out)
    os.remove(tmp)

    # archives: tar, tar.gz, zip, cpio, each with a link
    good = b'{"good": true}\n'
    for mode, name in (("w", "tar"), ("w:gz", "tgz")):
        b = io.BytesIO()
        with tarfile.open(fileobj=b, mode=mode, format=tarfile.GNU_FORMAT) as t:
            i = tarfile.TarInfo("m/config.json")
            i.size = len(good)
            t.addfile(i, io.BytesIO(good))
            l = tarfile.TarInfo("m/alias.json")
            l.type, l.linkname = tarfile.SYMTYPE, "config.json"
            t.addfile(l)
        put("archive", name, b.getvalue())
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("config.json", good)
        z.writestr("sub/model.safetensors", safetensors([("x", "F32", [1], b"\0" * 4)]))
    put("archive", "zip", b.getvalue())
    subprocess.run([sys.executable, os.path.join(HERE, "..", "helper", "mkarchive.py"),
                    os.path.join(OUT, "archive", "cpio"), "cpiohard"], check=True)


if __name__ == "__main__":
    main()
