"""tfbundle.py: an independent reader of tf-bundle(5) files for the tests.

Written from the man page, not from lib/bundle.c, so a test that reads a
bundle here and compares with another tool checks the format as documented.

    b = Bundle(path)
    b.manifest                      # the JSON manifest
    b.entry(name)                   # one tensor's manifest entry
    b.parts(name)                   # {"codes"/"data": bytes, "scales": bytes, "biases": bytes}
"""
import json
import struct

MAGIC = b"\x89TFB\r\n\x1a\n"
PART_ALIGN = 64
BYTES = {"f32": 4, "bf16": 2, "f16": 2, "u32": 4, "i32": 4, "u8": 1, "i8": 1, "u16": 2,
         "i16": 2, "f64": 8, "i64": 8, "u64": 8, "bool": 1}


def up(n, a):
    return (n + a - 1) // a * a


class Bundle:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.raw = f.read()
        h = self.raw[:64]
        assert h[:8] == MAGIC, "bad magic"
        version, hdr_len, moff, mlen, doff, dlen = struct.unpack("<IIQQQQ", h[8:48])
        assert version == 1 and hdr_len == 64 and moff == 64, (version, hdr_len, moff)
        assert doff % 4096 == 0 and doff + dlen == len(self.raw), "size"
        assert h[48:64] == bytes(16)
        self.manifest = json.loads(self.raw[moff:moff + mlen])
        self.data = self.raw[doff:]
        self.by_name = {t["name"]: t for t in self.manifest["tensors"]}

    def entry(self, name):
        return self.by_name[name]

    def parts(self, name):
        t = self.by_name[name]
        off = t["offset"]
        assert off % 4096 == 0
        if t["format"] in ("affine", "sign1"):
            rows, cols = t["shape"]
            ss = BYTES[t["scales_dtype"]]
            sizes = [rows * cols * t["bits"] // 8, rows * (cols // t["group"]) * ss]
            if t["format"] == "affine":
                sizes.append(sizes[1])
            names = ["codes", "scales", "biases"]
        else:
            n = 1
            for d in t["shape"]:
                n *= d
            sizes = [n * BYTES[t["format"]]]
            names = ["data"]
        out, at = {}, off
        for nm, sz in zip(names, sizes):
            at = up(at - off, PART_ALIGN) + off
            out[nm] = self.data[at:at + sz]
            at += sz
        assert at - off == t["bytes"], (name, at - off, t["bytes"])
        return out
