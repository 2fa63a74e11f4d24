#!/usr/bin/env python3
"""GGUF files from the t/data checkpoints, made with llama.cpp's gguf package.

  mkgguf.py write SRC OUT.gguf --type T [--split N] [--align A] [--no-tok] [--drop NAME]
      SRC (a safetensors checkpoint folder) as llama.cpp's converter writes a
      qwen35 GGUF (convert_hf_to_gguf.py: Qwen3NextModel and
      _LinearAttentionVReorderBase): its tensor names, the 1 added to every
      RMSNorm weight but the DeltaNet's, ssm_a = -exp(A_log), conv1d
      squeezed, the value heads tiled, the qwen35.* and tokenizer.ggml.* keys.
      T is the type of the matrices: F32, F16, BF16, Q8_0 or Q4_0 (through
      gguf.quants), or Q1_0 (written here: gguf 0.19.0 has no Q1_0 codec),
      where a matrix whose every group of 128 is exactly {-s, +s} is Q1_0
      and any other stays BF16. The vectors are F32, conv1d too, as the
      converter keeps them. The sums are float32 (the 1 added, -exp in
      float64 rounded once), as the model computes them from the checkpoint.
      --split N writes NAME-0000k-of-0000M.gguf parts of N tensors each;
      --align A sets general.alignment; --drop leaves a tensor out.
  mkgguf.py check OUT.gguf WEIGHTS
      every tensor of the GGUF dequantized by gguf.quants (Q1_0 here, as
      ggml's dequantize_row_q1_0 does it), its reordering undone, against
      what tf-test-tool weights wrote of the model loaded from it: equal
      bit for bit (a zero's sign aside: Q4_0 gives -0 where d < 0 and
      q = 8, the affine form +0), or the first difference is named (exit 1)
  mkgguf.py mlx OUT.gguf DIR
      the same weights as an MLX-layout checkpoint folder, written
      independently of tf-pack: Q8_0 and Q4_0 blocks as affine codes with
      scale d and bias -128 d or -8 d, floats as they are; tf-run of DIR
      must give the GGUF's logits bit for bit
  mkgguf.py hostile OUT.gguf DIR
      damaged copies of a GGUF, one a way of breaking it (DIR/NAME.gguf)
"""
import json
import os
import struct
import sys

import numpy as np

import gguf
from gguf import GGMLQuantizationType as Q


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        head = json.loads(f.read(n))
        buf = f.read()
    out = {}
    for k, v in head.items():
        if k == "__metadata__":
            continue
        b, e = v["data_offsets"]
        raw = buf[b:e]
        if v["dtype"] == "BF16":
            a = (np.frombuffer(raw, np.uint16).astype(np.uint32) << 16).view(np.float32)
        elif v["dtype"] == "F32":
            a = np.frombuffer(raw, np.float32)
        elif v["dtype"] == "F16":
            a = np.frombuffer(raw, np.float16).astype(np.float32)
        else:
            raise SystemExit("mkgguf: %s: dtype %s" % (k, v["dtype"]))
        out[k] = a.reshape(v["shape"]).copy()
    return out


def reorder(a, dim, hk, r, hd):
    """grouped by key head (k r + j) to tiled (j hk + k), as the converter does"""
    if r == 1:
        return a
    shape = list(a.shape)
    a = a.reshape(shape[:dim] + [hk, r, hd] + shape[dim + 1:])
    a = np.swapaxes(a, dim, dim + 1)
    return np.ascontiguousarray(a).reshape(shape)


def unorder(a, dim, hk, r, hd):
    if r == 1:
        return a
    shape = list(a.shape)
    a = a.reshape(shape[:dim] + [r, hk, hd] + shape[dim + 1:])
    a = np.swapaxes(a, dim, dim + 1)
    return np.ascontiguousarray(a).reshape(shape)


# ---------------------------------------------------------------------------
# Q1_0: groups of 128, f16 d then 16 bytes of sign bits, bit j % 8 of byte j / 8

def q1_exact(w):
    g = w.reshape(w.shape[0], -1, 128)
    s = np.abs(g[:, :, :1])
    return bool(np.all(np.abs(g) == s)) and bool(np.all(s.astype(np.float16).astype(np.float32) == s))


def q1_quantize(w):
    rows, cols = w.shape
    g = w.reshape(rows, cols // 128, 128)
    d = np.abs(g[:, :, 0]).astype(np.float16)
    bits = np.packbits((g > 0).astype(np.uint8), axis=-1, bitorder="little")
    blk = np.concatenate([d.view(np.uint8).reshape(rows, cols // 128, 2), bits], axis=-1)
    return blk.reshape(rows, cols // 128 * 18)


def q1_dequantize(data, cols):
    rows = data.shape[0]
    blk = data.reshape(rows, cols // 128, 18)
    d = blk[:, :, :2].copy().view(np.float16).astype(np.float32)
    bits = np.unpackbits(blk[:, :, 2:], axis=-1, bitorder="little").astype(np.float32)
    return ((2 * bits - 1) * d).reshape(rows, cols)


def dequantize(t):
    cols = int(t.shape[0])
    if t.tensor_type == Q.Q1_0:
        return q1_dequantize(np.asarray(t.data).reshape(-1, cols // 128 * 18), cols)
    a = gguf.quants.dequantize(np.asarray(t.data), t.tensor_type)
    return np.asarray(a, np.float32).reshape([int(x) for x in reversed(t.shape)])


# ---------------------------------------------------------------------------

BLOCK = {"input_layernorm.weight": "attn_norm.weight",
         "post_attention_layernorm.weight": "post_attention_norm.weight",
         "self_attn.q_proj.weight": "attn_q.weight", "self_attn.k_proj.weight": "attn_k.weight",
         "self_attn.v_proj.weight": "attn_v.weight", "self_attn.o_proj.weight": "attn_output.weight",
         "self_attn.q_norm.weight": "attn_q_norm.weight", "self_attn.k_norm.weight": "attn_k_norm.weight",
         "linear_attn.in_proj_qkv.weight": "attn_qkv.weight", "linear_attn.in_proj_z.weight": "attn_gate.weight",
         "linear_attn.in_proj_b.weight": "ssm_beta.weight", "linear_attn.in_proj_a.weight": "ssm_alpha.weight",
         "linear_attn.conv1d.weight": "ssm_conv1d.weight", "linear_attn.A_log": "ssm_a",
         "linear_attn.dt_bias": "ssm_dt.bias", "linear_attn.norm.weight": "ssm_norm.weight",
         "linear_attn.out_proj.weight": "ssm_out.weight", "mlp.gate_proj.weight": "ffn_gate.weight",
         "mlp.up_proj.weight": "ffn_up.weight", "mlp.down_proj.weight": "ffn_down.weight"}
# what tf-test-tool weights calls each
DUMP = {"attn_norm.weight": "in_norm", "post_attention_norm.weight": "post_norm", "attn_q.weight": "q_proj",
        "attn_k.weight": "k_proj", "attn_v.weight": "v_proj", "attn_output.weight": "o_proj",
        "attn_q_norm.weight": "q_norm", "attn_k_norm.weight": "k_norm", "attn_qkv.weight": "in_qkv",
        "attn_gate.weight": "in_z", "ssm_beta.weight": "in_b", "ssm_alpha.weight": "in_a",
        "ssm_conv1d.weight": "conv", "ssm_a": "A", "ssm_dt.bias": "dt_bias", "ssm_norm.weight": "gnorm",
        "ssm_out.weight": "out_proj", "ffn_gate.weight": "gate", "ffn_up.weight": "up",
        "ffn_down.weight": "down"}
# MLX-layout names of the same (the store's names)
OURS = {v: k for k, v in BLOCK.items()}
OURS["ssm_a"] = "linear_attn.A"


def text_config(src):
    cfg = json.load(open(os.path.join(src, "config.json")))
    return cfg.get("text_config", cfg), cfg


def geometry(tc):
    hk, hv = tc["linear_num_key_heads"], tc["linear_num_value_heads"]
    return hk, hv // hk, tc["linear_key_head_dim"], tc["linear_value_head_dim"]


def convert(src):
    """(gguf name, float32 array) of SRC, as the converter's modify_tensors gives them"""
    tc, _ = text_config(src)
    hk, r, dk, dv = geometry(tc)
    w = read_safetensors(os.path.join(src, "model.safetensors"))
    out = []
    for name in sorted(w):
        a = w[name]
        base = name[len("model."):] if name.startswith("model.") else name
        if base.startswith("language_model."):
            base = base[len("language_model."):]
        if base == "embed_tokens.weight":
            out.append(("token_embd.weight", a))
            continue
        if base == "lm_head.weight":
            out.append(("output.weight", a))
            continue
        if base == "norm.weight":
            out.append(("output_norm.weight", (a + np.float32(1)).astype(np.float32)))
            continue
        parts = base.split(".", 2)
        if parts[0] != "layers" or parts[2] not in BLOCK:
            raise SystemExit("mkgguf: no mapping for %s" % name)
        bid, suf = parts[1], parts[2]
        if suf.endswith("norm.weight") and suf != "linear_attn.norm.weight":
            a = (a + np.float32(1)).astype(np.float32)
        if suf == "linear_attn.in_proj_qkv.weight":
            qk = 2 * hk * dk
            a = np.concatenate([a[:qk], reorder(a[qk:], 0, hk, r, dv)])
        elif suf == "linear_attn.in_proj_z.weight":
            a = reorder(a, 0, hk, r, dv)
        elif suf in ("linear_attn.in_proj_a.weight", "linear_attn.in_proj_b.weight"):
            a = reorder(a, 0, hk, r, 1)
        elif suf == "linear_attn.A_log":
            a = (-np.exp(reorder(a, 0, hk, r, 1).astype(np.float64))).astype(np.float32)
        elif suf == "linear_attn.dt_bias":
            a = reorder(a, 0, hk, r, 1)
        elif suf == "linear_attn.conv1d.weight":
            a = a.reshape(a.shape[0], a.shape[-1])
            qk = 2 * hk * dk
            a = np.concatenate([a[:qk], reorder(a[qk:], 0, hk, r, dv)])
        elif suf == "linear_attn.out_proj.weight":
            a = reorder(a, 1, hk, r, dv)
        out.append(("blk.%s.%s" % (bid, BLOCK[suf]), np.ascontiguousarray(a, np.float32)))
    return out


def to_bf16(a):
    u = a.astype(np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def encode(name, a, typ):
    """the bytes and type of one tensor at matrix type typ"""
    if a.ndim == 1 or name.endswith("ssm_conv1d.weight") or typ == "F32":
        return a.astype(np.float32), Q.F32
    if typ == "F16":
        return a.astype(np.float16), Q.F16
    if typ == "BF16":
        return to_bf16(a), Q.BF16
    if typ == "Q1_0":
        if a.shape[1] % 128 == 0 and q1_exact(a):
            return q1_quantize(a), Q.Q1_0
        return to_bf16(a), Q.BF16
    qt = {"Q8_0": Q.Q8_0, "Q4_0": Q.Q4_0}[typ]
    if a.shape[1] % 32:
        return a.astype(np.float32), Q.F32
    return gguf.quants.quantize(a, qt), qt


def add_tokenizer(wr, src, tc, cfg):
    path = os.path.join(src, "tokenizer.json")
    if not os.path.exists(path):
        return
    tj = json.load(open(path, encoding="utf-8"))
    vocab = dict(tj["model"]["vocab"])
    added = {t["id"]: t for t in tj.get("added_tokens", [])}
    n = max(tc["vocab_size"], max(list(vocab.values()) + list(added)) + 1)
    rev = {i: s for s, i in vocab.items()}
    tokens, types = [], []
    for i in range(n):
        if i in added:
            tokens.append(added[i]["content"])
            types.append(gguf.TokenType.CONTROL if added[i].get("special") else gguf.TokenType.USER_DEFINED)
        elif i in rev:
            tokens.append(rev[i])
            types.append(gguf.TokenType.NORMAL)
        else:
            tokens.append("[PAD%d]" % i)
            types.append(gguf.TokenType.UNUSED)
    merges = [m if isinstance(m, str) else " ".join(m) for m in tj["model"]["merges"]]
    wr.add_tokenizer_model("gpt2")
    wr.add_tokenizer_pre("qwen2")
    wr.add_token_list(tokens)
    wr.add_token_types(types)
    wr.add_token_merges(merges)
    eos = tc.get("eos_token_id", cfg.get("eos_token_id"))
    if isinstance(eos, list):
        eos = eos[0]
    if eos is not None:
        wr.add_eos_token_id(eos)
        wr.add_pad_token_id(tc.get("pad_token_id") if tc.get("pad_token_id") is not None else eos)


def write(args):
    src, out = args[0], args[1]
    typ, split, align, tok, drop = "F32", 0, None, True, []
    i = 2
    while i < len(args):
        if args[i] == "--type":
            typ = args[i + 1]; i += 2
        elif args[i] == "--split":
            split = int(args[i + 1]); i += 2
        elif args[i] == "--align":
            align = int(args[i + 1]); i += 2
        elif args[i] == "--no-tok":
            tok = False; i += 1
        elif args[i] == "--drop":
            drop.append(args[i + 1]); i += 2
        else:
            raise SystemExit("mkgguf: unknown option %s" % args[i])
    tc, cfg = text_config(src)
    hk, r, dk, dv = geometry(tc)
    hd = tc.get("head_dim", tc["hidden_size"] // tc["num_attention_heads"])
    rope = tc.get("rope_parameters") or {}
    prf = rope.get("partial_rotary_factor", tc.get("partial_rotary_factor", 0.25))
    a = "qwen35"
    wr = gguf.GGUFWriter(out, a, split_max_tensors=split)
    wr.add_uint32(a + ".block_count", tc["num_hidden_layers"])
    wr.add_uint32(a + ".context_length", tc.get("max_position_embeddings", 4096))
    wr.add_uint32(a + ".embedding_length", tc["hidden_size"])
    wr.add_uint32(a + ".feed_forward_length", tc["intermediate_size"])
    wr.add_uint32(a + ".attention.head_count", tc["num_attention_heads"])
    wr.add_uint32(a + ".attention.head_count_kv", tc["num_key_value_heads"])
    wr.add_uint32(a + ".attention.key_length", hd)
    wr.add_uint32(a + ".attention.value_length", hd)
    wr.add_uint32(a + ".rope.dimension_count", int(hd * prf))
    wr.add_array(a + ".rope.dimension_sections", [11, 11, 10, 0])
    wr.add_float32(a + ".rope.freq_base", rope.get("rope_theta", tc.get("rope_theta", 10000.0)))
    wr.add_float32(a + ".attention.layer_norm_rms_epsilon", tc.get("rms_norm_eps", 1e-6))
    wr.add_uint32(a + ".ssm.conv_kernel", tc["linear_conv_kernel_dim"])
    wr.add_uint32(a + ".ssm.state_size", dk)
    wr.add_uint32(a + ".ssm.group_count", hk)
    wr.add_uint32(a + ".ssm.time_step_rank", hk * r)
    wr.add_uint32(a + ".ssm.inner_size", hk * r * dv)
    wr.add_uint32(a + ".full_attention_interval", tc.get("full_attention_interval", 4))
    if align:
        wr.add_custom_alignment(align)
    if tok:
        add_tokenizer(wr, src, tc, cfg)
    for name, arr in convert(src):
        if name in drop:
            continue
        data, qt = encode(name, arr, typ)
        wr.add_tensor(name, data, raw_dtype=qt)
    wr.write_header_to_file()
    wr.write_kv_data_to_file()
    wr.write_tensors_to_file()
    wr.close()


def load_dump(path):
    out = {}
    with open(path, "rb") as f:
        while True:
            line = f.readline()
            if not line:
                break
            name, rows, cols = line.split()
            n = int(rows) * int(cols)
            out[name.decode()] = np.frombuffer(f.read(4 * n), np.float32).reshape(int(rows), int(cols))
    return out


def geometry_of(rd):
    f = {k: v for k, v in rd.fields.items()}

    def val(k):
        p = f[k]
        return int(p.parts[p.data[0]][0])
    hk, hv = val("qwen35.ssm.group_count"), val("qwen35.ssm.time_step_rank")
    return hk, hv // hk, val("qwen35.ssm.state_size"), val("qwen35.ssm.inner_size") // hv


def ours(rd, t):
    """a GGUF tensor dequantized, in our order: (dump name, store name, array)"""
    hk, r, dk, dv = geometry_of(rd)
    a = dequantize(t)
    name = t.name
    if name in ("token_embd.weight", "output.weight", "output_norm.weight"):
        d = {"token_embd.weight": "embed_tokens", "output.weight": "lm_head", "output_norm.weight": "norm"}[name]
        return d, {"norm": "norm.weight"}.get(d, d + ".weight"), a
    _, bid, suf = name.split(".", 2)
    if suf in ("attn_qkv.weight", "ssm_conv1d.weight"):
        qk = 2 * hk * dk
        a = np.concatenate([a[:qk], unorder(a[qk:], 0, hk, r, dv)])
    elif suf == "attn_gate.weight":
        a = unorder(a, 0, hk, r, dv)
    elif suf in ("ssm_beta.weight", "ssm_alpha.weight", "ssm_a", "ssm_dt.bias"):
        a = unorder(a, 0, hk, r, 1)
    elif suf == "ssm_out.weight":
        a = unorder(a, 1, hk, r, dv)
    return "layers.%s.%s" % (bid, DUMP[suf]), "layers.%s.%s" % (bid, OURS[suf]), a


def check(args):
    rd = gguf.GGUFReader(args[0])
    dump = load_dump(args[1])
    seen = 0
    for t in rd.tensors:
        d, _, a = ours(rd, t)
        got = dump.get(d)
        if got is None:
            print("# %s (%s): not in the model" % (t.name, d))
            return 1
        a = a.reshape(got.shape)
        # bit for bit, but for the sign of a zero: an affine weight s q + b
        # is +0 where Q4_0's d (q - 8) is -0 (d < 0, q = 8); the two are
        # the same number in every sum
        same = (a.view(np.uint32) == got.view(np.uint32)) | ((a == 0) & (got == 0))
        if not same.all():
            bad = np.argwhere(~same)[0]
            print("# %s (%s, %s): at %s gguf gives %r, the model %r" % (
                t.name, d, t.tensor_type.name, tuple(bad), a[tuple(bad)], got[tuple(bad)]))
            return 1
        seen += 1
    if "output.weight" not in [t.name for t in rd.tensors]:
        if not np.array_equal(dump["lm_head"].view(np.uint32), dump["embed_tokens"].view(np.uint32)):
            print("# the tied head is not the embedding")
            return 1
    print("# %d tensors equal bit for bit" % seen)
    return 0


def mlx(args):
    from safetensors.numpy import save_file
    rd = gguf.GGUFReader(args[0])
    os.makedirs(args[1], exist_ok=True)
    tensors, quant = {}, {}
    for t in rd.tensors:
        _, name, a = ours(rd, t)
        hk, r, dk, dv = geometry_of(rd)
        if t.tensor_type in (Q.Q8_0, Q.Q4_0):
            bits = 8 if t.tensor_type == Q.Q8_0 else 4
            cols = int(t.shape[0])
            blk = np.asarray(t.data).reshape(-1, cols // 32, 2 + 32 * bits // 8)
            d = blk[:, :, :2].copy().view(np.float16)[:, :, 0]
            if bits == 8:
                q = blk[:, :, 2:].view(np.int8).astype(np.int32) + 128
            else:
                lo, hi = blk[:, :, 2:] & 15, blk[:, :, 2:] >> 4
                q = np.concatenate([lo, hi], axis=-1).astype(np.int32)
            q = q.reshape(q.shape[0], cols)
            # the reordering acts on whole rows and whole groups of 32
            if name.endswith(("in_proj_qkv.weight", "in_proj_z.weight", "in_proj_a.weight",
                              "in_proj_b.weight", "out_proj.weight")) and r > 1:
                rows = np.arange(q.shape[0])[:, None].astype(np.float32)
                colsidx = np.arange(cols)[None, :].astype(np.float32)
                if name.endswith("in_proj_qkv.weight"):
                    qk = 2 * hk * dk
                    perm = np.concatenate([rows[:qk], unorder(rows[qk:], 0, hk, r, dv)])[:, 0].astype(int)
                    q, d = q[perm], d[perm]
                elif name.endswith("in_proj_z.weight"):
                    perm = unorder(rows, 0, hk, r, dv)[:, 0].astype(int)
                    q, d = q[perm], d[perm]
                elif name.endswith(("in_proj_a.weight", "in_proj_b.weight")):
                    perm = unorder(rows, 0, hk, r, 1)[:, 0].astype(int)
                    q, d = q[perm], d[perm]
                else:
                    perm = unorder(colsidx, 1, hk, r, dv)[0].astype(int)
                    q = q[:, perm]
                    gperm = perm.reshape(-1, 32)[:, 0] // 32
                    d = d[:, gperm]
            per = 32 // bits
            qq = q.reshape(q.shape[0], -1, per).astype(np.uint32)
            words = np.zeros(qq.shape[:2], np.uint32)
            for k in range(per):
                words |= qq[:, :, k] << np.uint32(k * bits)
            base = name[:-len(".weight")]
            tensors[name] = words
            tensors[base + ".scales"] = d.astype(np.float16)
            tensors[base + ".biases"] = (-(128 if bits == 8 else 8) * d.astype(np.float32)).astype(np.float16)
            quant[base] = {"bits": bits, "group_size": 32}
        else:
            if name.endswith("conv1d.weight"):
                a = a.reshape(a.shape[0], a.shape[1], 1)
            tensors[name] = np.ascontiguousarray(a, np.float32)
    f = {k: v for k, v in rd.fields.items()}

    def val(k, cast=int):
        p = f[k]
        return cast(p.parts[p.data[0]][0])
    L = val("qwen35.block_count")
    hk, r, dk, dv = geometry_of(rd)
    hd = val("qwen35.attention.key_length")
    cfg = {"architectures": ["Qwen3_5ForCausalLM"], "model_type": "qwen3_5_text",
           "hidden_size": val("qwen35.embedding_length"), "intermediate_size": val("qwen35.feed_forward_length"),
           "num_hidden_layers": L, "num_attention_heads": val("qwen35.attention.head_count"),
           "num_key_value_heads": val("qwen35.attention.head_count_kv"), "head_dim": hd,
           "linear_num_key_heads": hk, "linear_num_value_heads": hk * r, "linear_key_head_dim": dk,
           "linear_value_head_dim": dv, "linear_conv_kernel_dim": val("qwen35.ssm.conv_kernel"),
           "rope_parameters": {"rope_theta": val("qwen35.rope.freq_base", float),
                               "partial_rotary_factor": val("qwen35.rope.dimension_count") / hd},
           "rms_norm_eps": val("qwen35.attention.layer_norm_rms_epsilon", float),
           "tie_word_embeddings": "output.weight" not in [t.name for t in rd.tensors],
           "layer_types": ["full_attention" if "blk.%d.attn_q.weight" % i in [t.name for t in rd.tensors]
                           else "linear_attention" for i in range(L)],
           "quantization": dict({"bits": 8, "group_size": 32}, **quant)}
    for t in rd.tensors:
        if t.name == "token_embd.weight":
            cfg["vocab_size"] = int(t.shape[1])
    json.dump(cfg, open(os.path.join(args[1], "config.json"), "w"), indent=1)
    # safetensors writes a strided array's memory as it lies: make each contiguous
    save_file({k: np.ascontiguousarray(v) for k, v in tensors.items()}, os.path.join(args[1], "model.safetensors"))
    return 0


def hostile(args):
    src = open(args[0], "rb").read()
    d = args[1]
    os.makedirs(d, exist_ok=True)
    rd = gguf.GGUFReader(args[0])

    def put(name, b):
        open(os.path.join(d, name + ".gguf"), "wb").write(b)
    put("empty", b"")
    put("magic", b"GGUX" + src[4:])
    put("version1", src[:4] + struct.pack("<I", 1) + src[8:])
    put("version9", src[:4] + struct.pack("<I", 9) + src[8:])
    put("ntensors", src[:8] + struct.pack("<Q", 1 << 60) + src[16:])
    put("nkv", src[:16] + struct.pack("<Q", 1 << 61) + src[24:])
    # the first key's length past the end of the file
    put("keylen", src[:24] + struct.pack("<Q", len(src) * 4) + src[32:])
    for cut in (10, 100, 1000, len(src) // 2, len(src) - 1):
        put("cut%d" % cut if cut < 1000 else ("cut-half" if cut == len(src) // 2 else "cut-last"), src[:cut])

    # metadata of the wrong type: block_count's value type u32 -> string
    fl = rd.fields["qwen35.block_count"]
    off = int(fl.offset) + 8 + len(fl.name.encode())
    b = bytearray(src)
    b[off:off + 4] = struct.pack("<I", 8)
    put("kvtype", bytes(b))
    b = bytearray(src)
    b[off:off + 4] = struct.pack("<I", 99)
    put("kvtype99", bytes(b))
    b = bytearray(src)
    b[off:off + 4] = struct.pack("<I", 6)
    put("kvfloat", bytes(b))
    # a key given twice: inner_size renamed state_size
    b = src.replace(b"qwen35.ssm.inner_size", b"qwen35.ssm.state_size", 1)
    put("kvdup", b)
    # another architecture
    key = b"general.architecture"
    at = src.index(struct.pack("<Q", len(key)) + key)
    b = bytearray(src)
    v = at + 8 + len(key) + 4 + 8
    b[v:v + 6] = b"llama9"
    put("arch", bytes(b))
    # the alignment (in a file written with --align)
    if "general.alignment" in rd.fields:
        key = b"general.alignment"
        at = src.index(struct.pack("<Q", len(key)) + key)
        v = at + 8 + len(key) + 4
        for a in (48, 0):
            b = bytearray(src)
            b[v:v + 4] = struct.pack("<I", a)
            put("align%d" % a, bytes(b))
    # tensor infos: the first tensor's type and offset
    t0 = rd.tensors[0]
    # the first tensor info, found by its name after the last key
    name = t0.name.encode()
    at = src.index(struct.pack("<Q", len(name)) + name, int(rd.fields[list(rd.fields)[-1]].offset))
    nd = struct.unpack("<I", src[at + 8 + len(name):at + 12 + len(name)])[0]
    tpos = at + 12 + len(name) + 8 * nd
    b = bytearray(src)
    b[tpos:tpos + 4] = struct.pack("<I", 77)
    put("ttype", bytes(b))
    b = bytearray(src)
    b[tpos:tpos + 4] = struct.pack("<I", int(Q.Q4_K))
    put("kquant", bytes(b))
    b = bytearray(src)
    b[tpos + 4:tpos + 12] = struct.pack("<Q", (len(src) // 256 + 1) * 256)
    put("toffset", bytes(b))
    b = bytearray(src)
    b[tpos + 4:tpos + 12] = struct.pack("<Q", (1 << 64) - 256)
    put("toffset-wrap", bytes(b))
    b = bytearray(src)
    b[tpos + 4:tpos + 12] = struct.pack("<Q", 1)
    put("tunaligned", bytes(b))
    # the second tensor at the first one's offset: overlap
    o0 = src[tpos + 4:tpos + 12]
    name1 = rd.tensors[1].name.encode()
    at1 = src.index(struct.pack("<Q", len(name1)) + name1, tpos)
    nd1 = struct.unpack("<I", src[at1 + 8 + len(name1):at1 + 12 + len(name1)])[0]
    t1 = at1 + 12 + len(name1) + 8 * nd1
    b = bytearray(src)
    b[t1 + 4:t1 + 12] = o0
    put("overlap", bytes(b))
    b = bytearray(src)
    b[at + 8 + len(name):at + 12 + len(name)] = struct.pack("<I", 9)
    put("ndims", bytes(b))
    # a tensor name given twice
    put("tdup", src.replace(b"blk.1.ffn_up.weight", b"blk.0.ffn_up.weight", 1))
    # a tensor renamed to one no qwen35 model has, and one missing
    b = bytearray(src)
    b[at + 8:at + 8 + len(name)] = (b"X" * len(name))
    put("tname", bytes(b))
    return 0


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    cmd = sys.argv[1]
    return {"write": write, "check": check, "mlx": mlx, "hostile": hostile}[cmd](sys.argv[2:]) or 0


if __name__ == "__main__":
    sys.exit(main())
