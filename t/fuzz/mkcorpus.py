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


def gguf(kvs, tensors, align=32):
    """a GGUF v3 file: kvs (key, type, value) and tensors (name, ne, type, bytes)"""
    def string(x):
        x = x.encode() if isinstance(x, str) else x
        return struct.pack("<Q", len(x)) + x
    fmt = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}

    def value(t, v):
        if t == 8:
            return string(v)
        if t == 9:
            et, items = v
            return struct.pack("<IQ", et, len(items)) + b"".join(value(et, x) for x in items)
        return struct.pack("<" + fmt[t], v)
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs))
    for k, t, v in kvs:
        out += string(k) + struct.pack("<I", t) + value(t, v)
    off, blobs = 0, b""
    for name, ne, typ, raw in tensors:
        out += string(name) + struct.pack("<I", len(ne)) + struct.pack("<%dQ" % len(ne), *ne)
        out += struct.pack("<IQ", typ, off)
        pad = (len(raw) + align - 1) // align * align
        blobs += raw + b"\0" * (pad - len(raw))
        off += pad
    out += b"\0" * ((len(out) + align - 1) // align * align - len(out))
    return out + blobs


def micro_qwen35():
    """a qwen35 GGUF of two layers (DeltaNet with two value heads a key
    head, then full attention) and a tokenizer, in every exact type"""
    H, V, I, Dk, Dv, K = 32, 64, 32, 32, 16, 4
    U32, F32T, STR, ARR = 4, 6, 8, 9
    kv = [("general.architecture", STR, "qwen35"), ("general.alignment", U32, 32),
          ("qwen35.block_count", U32, 2), ("qwen35.embedding_length", U32, H),
          ("qwen35.feed_forward_length", U32, I), ("qwen35.attention.head_count", U32, 1),
          ("qwen35.attention.head_count_kv", U32, 1), ("qwen35.attention.key_length", U32, 32),
          ("qwen35.rope.dimension_count", U32, 8), ("qwen35.rope.freq_base", F32T, 10000.0),
          ("qwen35.attention.layer_norm_rms_epsilon", F32T, 1e-6), ("qwen35.ssm.conv_kernel", U32, K),
          ("qwen35.ssm.state_size", U32, Dk), ("qwen35.ssm.group_count", U32, 1),
          ("qwen35.ssm.time_step_rank", U32, 2), ("qwen35.ssm.inner_size", U32, 2 * Dv),
          ("qwen35.full_attention_interval", U32, 2),
          ("qwen35.rope.dimension_sections", ARR, (5, [11, 11, 10, 0])),
          ("tokenizer.ggml.model", STR, "gpt2"), ("tokenizer.ggml.pre", STR, "qwen35"),
          ("tokenizer.ggml.tokens", ARR, (STR, ["a", "b", "ab", "\u0120", "<|endoftext|>"])),
          ("tokenizer.ggml.token_type", ARR, (5, [1, 1, 1, 1, 3])),
          ("tokenizer.ggml.merges", ARR, (STR, ["a b"])), ("tokenizer.ggml.eos_token_id", U32, 4)]

    def mat(rows, cols, typ, seed):
        if typ == 0:
            return struct.pack("<%df" % (rows * cols), *[((seed * 7 + i) % 13 - 6) / 64 for i in range(rows * cols)])
        if typ in (1, 30):     # F16 and BF16 of small values
            return b"".join(struct.pack("<H", (0x2c00 if typ == 1 else 0x3c00) + (seed * 31 + i) % 512)
                            for i in range(rows * cols))
        blk = {8: 34, 2: 18}[typ]
        out = b""
        for r in range(rows * cols // 32):
            out += struct.pack("<H", 0x2000 + (seed + r) % 256)
            out += bytes(((seed * 5 + r + j) * 37) % 256 for j in range(blk - 2))
        return out
    vec = lambda n, base: struct.pack("<%df" % n, *[base + i / 256 for i in range(n)])
    C = 2 * Dk + 2 * Dv
    t = [("token_embd.weight", [H, V], 8, mat(V, H, 8, 1)), ("output_norm.weight", [H], 0, vec(H, 1)),
         ("blk.0.attn_norm.weight", [H], 0, vec(H, 1)), ("blk.0.post_attention_norm.weight", [H], 0, vec(H, 1)),
         ("blk.0.attn_qkv.weight", [H, C], 2, mat(C, H, 2, 2)), ("blk.0.attn_gate.weight", [H, 2 * Dv], 1, mat(2 * Dv, H, 1, 3)),
         ("blk.0.ssm_beta.weight", [H, 2], 30, mat(2, H, 30, 4)), ("blk.0.ssm_alpha.weight", [H, 2], 0, mat(2, H, 0, 5)),
         ("blk.0.ssm_conv1d.weight", [K, C], 0, mat(C, K, 0, 6)), ("blk.0.ssm_a", [2], 0, vec(2, -1)),
         ("blk.0.ssm_dt.bias", [2], 0, vec(2, 0)), ("blk.0.ssm_norm.weight", [Dv], 0, vec(Dv, 1)),
         ("blk.0.ssm_out.weight", [2 * Dv, H], 8, mat(H, 2 * Dv, 8, 7)),
         ("blk.0.ffn_gate.weight", [H, I], 8, mat(I, H, 8, 8)), ("blk.0.ffn_up.weight", [H, I], 2, mat(I, H, 2, 9)),
         ("blk.0.ffn_down.weight", [I, H], 1, mat(H, I, 1, 10)),
         ("blk.1.attn_norm.weight", [H], 0, vec(H, 1)), ("blk.1.post_attention_norm.weight", [H], 0, vec(H, 1)),
         ("blk.1.attn_q.weight", [H, 64], 8, mat(64, H, 8, 11)), ("blk.1.attn_k.weight", [H, 32], 2, mat(32, H, 2, 12)),
         ("blk.1.attn_v.weight", [H, 32], 30, mat(32, H, 30, 13)), ("blk.1.attn_output.weight", [32, H], 8, mat(H, 32, 8, 14)),
         ("blk.1.attn_q_norm.weight", [32], 0, vec(32, 1)), ("blk.1.attn_k_norm.weight", [32], 0, vec(32, 1)),
         ("blk.1.ffn_gate.weight", [H, I], 8, mat(I, H, 8, 15)), ("blk.1.ffn_up.weight", [H, I], 8, mat(I, H, 8, 16)),
         ("blk.1.ffn_down.weight", [I, H], 8, mat(H, I, 8, 17))]
    return gguf(kv, t)


def main():
    write_gguf()
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


def write_gguf():
    # gguf: a micro qwen35 model, a file of one Q1_0 tensor and metadata of
    # every type, a split part
    put("gguf", "micro-qwen35", micro_qwen35())
    kinds = [("u8", 0, 7), ("i8", 1, -7), ("u16", 2, 700), ("i16", 3, -700), ("u32", 4, 7), ("i32", 5, -7),
             ("f32", 6, 0.5), ("bool", 7, True), ("str", 8, "x"), ("u64", 10, 1 << 40), ("i64", 11, -1),
             ("f64", 12, 0.25), ("arr", 9, (8, ["p", "q"]))]
    q1 = struct.pack("<H", 0x3c00) + bytes(range(16))
    put("gguf", "kinds", gguf([("k." + n, t, v) for n, t, v in kinds], [("w", [128, 2], 41, q1 * 2)], 64))
    put("gguf", "split", gguf([("split.no", 2, 1), ("split.count", 2, 2)], []))


if __name__ == "__main__":
    main()
