#!/usr/bin/env python3
"""tok-hf.py: Hugging Face tokenizers as the reference for tf-tok's tests.

  tok-hf.py encode TOKENIZER FILE...      ids of each FILE as one text -> FILE.hf
  tok-hf.py expect DIR FILE...            for each DIR/NAME.json, ids of each
                                          FILE whole -> DIR/NAME.FILE.hf, of
                                          its lines -> DIR/NAME.FILE.lines.hf,
                                          FILE normalized -> DIR/NAME.FILE.norm
  tok-hf.py normalize TOKENIZER FILE...   each FILE normalized -> FILE.norm
  tok-hf.py encode-lines TOKENIZER FILE   ids of each line of FILE -> stdout
  tok-hf.py decode TOKENIZER IDS          each line of ids -> its text, lossy
                                          UTF-8 as tokenizers gives it -> stdout
  tok-hf.py pretok TOKENIZER FILE         the pre-tokenizer's words of each
                                          line of FILE, as hex -> stdout
  tok-hf.py awkward DIR                   the awkward texts -> DIR/NNN.txt
  tok-hf.py codepoints FILE BMP ASTRAL [SKIP]
                                          a line probing every BMP-th code point
                                          below U+10000 and every ASTRAL-th one
                                          above, less those listed in SKIP -> FILE
  tok-hf.py randids TOKENIZER N SEED      N lines of random ids -> stdout
  tok-hf.py decode-check TOKENIZER IDS OURS
                                          OURS (tf-tok decode of IDS, each line
                                          ended by the first added token) reads
                                          as tokenizers' decode of each line
  tok-hf.py variants TOKENIZER DIR        variants of TOKENIZER that use the
                                          other options of tokenizer.json
                                          -> DIR/NAME.json
  tok-hf.py bigvocab WORDS OUT            a Qwen3.5-shaped tokenizer.json with
                                          a 248k vocab, merges built over the
                                          words of WORDS and random words -> OUT

Files are read and written as bytes, so the texts are exactly what tf-tok
reads. Everything is generated here at test time from seeds.
"""
import json
import os
import random
import sys

from tokenizers import Regex, Tokenizer
from tokenizers import pre_tokenizers as pt


def load(path):
    if os.path.isdir(path):
        path = os.path.join(path, "tokenizer.json")
    return Tokenizer.from_file(path)


def read_text(path):
    with open(path, "rb") as f:
        return f.read().decode("utf-8")


def write_bytes(path, data):
    with open(path, "wb") as f:
        f.write(data)


def ids_line(ids):
    return " ".join(map(str, ids)) + "\n"


def cmd_encode(tok, files):
    for path in files:
        write_bytes(path + ".hf", ids_line(tok.encode(read_text(path)).ids).encode())


def cmd_expect(d, files):
    # for every tokenizer DIR/NAME.json: the ids of each FILE as one text
    # (DIR/NAME.FILE.hf) and of each of its lines (DIR/NAME.FILE.lines.hf),
    # and the text normalized (DIR/NAME.FILE.norm)
    for js in sorted(os.listdir(d)):
        if not js.endswith(".json"):
            continue
        tok = load(os.path.join(d, js))
        for path in files:
            base = os.path.join(d, js[:-5] + "." + os.path.basename(path))
            text = read_text(path)
            write_bytes(base + ".hf", ids_line(tok.encode(text).ids).encode())
            lines = text.split("\n")
            if text.endswith("\n"):
                lines.pop()
            write_bytes(base + ".lines.hf",
                        "".join(ids_line(e.ids) for e in tok.encode_batch(lines)).encode())
            norm = tok.normalizer.normalize_str(text) if tok.normalizer else text
            write_bytes(base + ".norm", norm.encode())


def cmd_normalize(tok, files):
    for path in files:
        text = read_text(path)
        if tok.normalizer:
            text = tok.normalizer.normalize_str(text)
        write_bytes(path + ".norm", text.encode())


def cmd_encode_lines(tok, path):
    text = read_text(path)
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    if not text:
        lines = []
    out = sys.stdout.buffer
    for enc in tok.encode_batch(lines):
        out.write(ids_line(enc.ids).encode())


def cmd_decode(tok, path):
    out = sys.stdout.buffer
    with open(path) as f:
        for line in f:
            ids = [int(x) for x in line.split()]
            out.write(tok.decode(ids, skip_special_tokens=False).encode())


def cmd_pretok(tok, path):
    # per line, the words as hex bytes: what t/helper/tok-words prints
    to_byte = {ch: b for b, ch in enumerate(byte_alphabet())}
    out = sys.stdout.buffer
    text = read_text(path)
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    for line in lines:
        if tok.normalizer:
            line = tok.normalizer.normalize_str(line)
        words = [bytes(to_byte[ch] for ch in w).hex()
                 for w, _ in tok.pre_tokenizer.pre_tokenize_str(line)]
        out.write((" ".join(words) + "\n").encode())


def byte_alphabet():
    """GPT-2's bytes_to_unicode: the character of each byte, in byte order"""
    keep = list(range(0x21, 0x7f)) + list(range(0xa1, 0xad)) + list(range(0xae, 0x100))
    chars, n = [], 0
    for b in range(256):
        if b in keep:
            chars.append(chr(b))
        else:
            chars.append(chr(256 + n))
            n += 1
    return chars


def awkward():
    """texts that tokenizers get wrong when they cut corners"""
    t = [
        "",
        "café", "cafe\u0301", "Cafe\u0301 au lait", "e\u0301\u0302\u0323",
        "A\u030a", "\u212b", "\u1e9b\u0323", "o\u0308\u0304", "\u0301", " \u0301x",
        "a\u0301\u0301\u0301\u0301", "\u1100\u1161\u11a8", "한국어 텍스트",
        "ﬁ ligature ﬀ", "x\u00b2 + y\u00b2", "Ⅻ", "\uff21\uff22\uff23",
        "你好，世界！今天是2026年8月13日", "こんにちは、世界。", "カタカナ ｶﾀｶﾅ",
        "สวัสดีครับ ผมชื่ออเล็กซ์", "Привет, мир!", "Γειά σου Κόσμε", "مرحبا بالعالم",
        "नमस्ते दुनिया", "שלום עולם", "Ελληνικά και English mixed",
        "👍", "👍🏽 thumbs", "👨\u200d👩\u200d👧\u200d👦", "🇫🇷🇩🇪", "❤️❤", "🙂🙃🤔", "a😀b",
        "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "𐍈𐌰", "\U0001f600" * 7,
        "0", "1234567890", "3.14159265358979", "1,000,000.00", "-42", "1e-10",
        "٣٤٥ ۴۵۶", "①②③", "2026-11-29T20:15:00Z", "0x7fffffff", "99 bottles",
        "a\tb\t\tc", "\t\tindented", "line1\r\nline2\r\n", "\r\r\n\n", "\r", "x\ry",
        " ", "  ", "       ", " " * 100, "\n", "\n\n", "\n" * 7, "  \n  \n", " \n\n ",
        "a    b", "a \n b", "trailing   ", "   leading", "\n\nROMEO:\nI will\n\n",
        "\t \n \r\n \x0b\x0c", "\x1c\x1d\x1e\x1f", "\x85", "a\x85b", "\u2028\u2029",
        "<|im_start|>user\nhello<|im_end|>\n", "a<|endoftext|>b", "<|im_start|><|im_end|>",
        "<|im_sta", "<<|im_end|>>", "<|IM_START|>", "< |im_end| >", " <|endoftext|> ",
        "<|endoftext|><|endoftext|>", "x<|im_start|>", "<|im_end|>\n\n",
        "\x00", "a\x00b", "\x00\x00 \x00", "a\u00a0b", "\u00a0\u00a0", "\u202f", "\u3000x",
        "\u2009thin", "a\u200bb", "\ufeffBOM", "\u200d", "\u180e", "\ufffd", "\uffff", "\U0010ffff",
        "I'm, you're, he'll, she'd, it's, we've, don't",
        "I'M YOU'RE HE'LL SHE'D IT'S WE'VE DON'T", "'s 'S 's's", "'ſ", "rock 'n' roll",
        "Hello, world!!! ... --- ???", "foo@bar.com", "http://x.y/z?a=1&b=2#frag",
        "#include <stdio.h>\nint main(void) { return 0; }\n", "def f(x):\n    return x**2\n",
        "(((nested)))", "[]{}()<>", "$$$ %%% ^^^", "«quoted» “curly” ‘single’",
        "naïve coöperate façade", "Ærøskøbing", "Straße STRASSE", "İstanbul ıi",
        "a" * 3000, "1" * 500, "ab" * 700, "!?" * 300, "\u00e9" * 400, "e\u0301" * 300,
        "word " * 400,
    ]
    rnd = random.Random(35)
    ranges = [(0x20, 0x7f), (0xa0, 0x250), (0x300, 0x370), (0x370, 0x530), (0x590, 0x700),
              (0x900, 0xe80), (0x1100, 0x1200), (0x2000, 0x2070), (0x3000, 0x3100),
              (0x4e00, 0x9fff), (0xac00, 0xd7a3), (0xfe00, 0xff00), (0x1f300, 0x1fa00),
              (0x10000, 0x10100), (0x20000, 0x20100)]
    for _ in range(120):
        s = []
        for _ in range(rnd.randint(1, 24)):
            if rnd.random() < 0.3:
                s.append(rnd.choice(" \n\t\r'0123456789.,!<|>"))
            else:
                lo, hi = rnd.choice(ranges)
                s.append(chr(rnd.randrange(lo, hi)))
        t.append("".join(s))
    return t


def cmd_awkward(d):
    os.makedirs(d, exist_ok=True)
    for i, s in enumerate(awkward()):
        write_bytes(os.path.join(d, "%03d.txt" % i), s.encode())


def cmd_codepoints(path, bmp_stride, astral_stride, skip_path):
    # each code point alone and beside letters, digits, blanks, itself and
    # an apostrophe, so every branch of a split regex sees it; the code
    # points in skip_path (one hex number a line) are left out
    skip = set()
    if skip_path:
        with open(skip_path) as f:
            skip = set(int(x, 16) for x in f)
    with open(path, "wb") as f:
        c = 0
        while c < 0x110000:
            if not (0xd800 <= c < 0xe000 or c == 10 or c in skip):
                ch = chr(c)
                f.write(("a%sb %s1 %s%s '%s %s  x%s\n" % ((ch,) * 7)).encode())
            c += bmp_stride if c < 0x10000 else astral_stride


def cmd_randids(tok, n, seed):
    # ids of the BPE vocabulary only, so that no added token's text shows
    # up where decode-check cuts the outputs apart
    rnd = random.Random(seed)
    added = set(tok.get_added_tokens_decoder())
    ids = [i for i in tok.get_vocab().values() if i not in added]
    out = sys.stdout.buffer
    for _ in range(n):
        out.write(ids_line(rnd.choice(ids) for _ in range(rnd.randint(1, 40))).encode())


def cmd_decode_check(tok, ids_path, ours_path):
    # ours_path: tf-tok decode of each line of ids_path with the first added
    # token appended, so the texts can be cut apart; each text must read as
    # tokenizers' decode does (invalid UTF-8 replaced as from_utf8_lossy)
    sep_id = min(tok.get_added_tokens_decoder())
    sep = tok.id_to_token(sep_id).encode()
    with open(ours_path, "rb") as f:
        ours = f.read().split(sep)
    bad = 0
    with open(ids_path) as f:
        for i, line in enumerate(f):
            want = tok.decode([int(x) for x in line.split()], skip_special_tokens=False)
            got = ours[i].decode("utf-8", "replace") if i < len(ours) else None
            if got != want:
                bad += 1
                if bad <= 5:
                    print("# line %d: want %r got %r" % (i + 1, want, got))
    print("# %d texts, %d differ" % (i + 1, bad))
    sys.exit(1 if bad else 0)


def cmd_variants(path, d):
    if os.path.isdir(path):
        path = os.path.join(path, "tokenizer.json")
    with open(path, "rb") as f:
        base = json.loads(f.read())
    os.makedirs(d, exist_ok=True)
    regex = base["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"]

    def split(pattern, behavior, invert=False, literal=False):
        return {"type": "Split", "pattern": {"String" if literal else "Regex": pattern},
                "behavior": behavior, "invert": invert}

    def bytelevel(prefix=False, use_regex=False):
        return {"type": "ByteLevel", "add_prefix_space": prefix, "trim_offsets": False,
                "use_regex": use_regex}

    def pre(*steps):
        return {"type": "Sequence", "pretokenizers": list(steps)}

    def added(content, id, **kw):
        t = {"id": id, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": False}
        t.update(kw)
        return t

    v = {}
    v["merges-string"] = {"model": {"merges": ["%s %s" % tuple(m) for m in base["model"]["merges"]]}}
    for b in ["Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous"]:
        v["split-" + b] = {"pre_tokenizer": pre(split(regex, b), bytelevel())}
        v["split-ws-" + b] = {"pre_tokenizer": pre(split(r"\s+", b), bytelevel())}
    v["split-invert"] = {"pre_tokenizer": pre(split(r"\p{L}+", "Removed", True), bytelevel())}
    v["split-invert-isolated"] = {"pre_tokenizer": pre(split(r"\p{N}", "Isolated", True),
                                                       bytelevel())}
    v["split-empty-matches"] = {"pre_tokenizer": pre(split(r"a*|\s*", "MergedWithPrevious"),
                                                     bytelevel())}
    # the escapes that mean something else to PCRE2 than to Oniguruma, and
    # an escaped backslash before an s, which is no \s
    v["split-onig-escapes"] = {"pre_tokenizer": pre(split(r"\\s|\h+|[^\S\n]+|\H", "Isolated"),
                                                    bytelevel())}
    v["split-string"] = {"pre_tokenizer": pre(split(" ", "Removed", literal=True), bytelevel())}
    v["split-twice"] = {"pre_tokenizer": pre(split(r"\p{N}+", "Isolated"),
                                             split(regex, "Isolated"), bytelevel())}
    v["gpt2"] = {"pre_tokenizer": bytelevel(True, True), "normalizer": None}
    v["bytelevel-regex"] = {"pre_tokenizer": bytelevel(False, True)}
    v["prefix-space"] = {"pre_tokenizer": pre(split(regex, "Isolated"), bytelevel(True))}
    for form in ["NFD", "NFKC", "NFKD"]:
        v["norm-" + form] = {"normalizer": {"type": form}}
    v["norm-sequence"] = {"normalizer": {"type": "Sequence", "normalizers": [
        {"type": "NFKD"}, {"type": "NFC"}]}}
    v["norm-none"] = {"normalizer": None}
    extra = [added("<b>", 2048, lstrip=True), added("</b>", 2049, rstrip=True),
             added("cat", 2050, single_word=True), added("café", 2051, normalized=True),
             added("hello world", 2052), added("e\u0301!", 2053, normalized=True),
             added("<|im_start|>user", 2054, special=True)]
    v["added"] = {"added_tokens": base["added_tokens"] + extra}
    v["ignore-merges"] = {"model": {"ignore_merges": True}}
    # merges that make a token the vocab already makes another way, put in
    # among the others: a candidate pair that changed under a pending merge
    # can then name the same token, and must be judged as tokenizers does
    merges = [list(m) for m in base["model"]["merges"]]
    have = set(map(tuple, merges))
    rnd = random.Random(5)
    for tok in base["model"]["vocab"]:
        for k in range(1, len(tok)):
            pair = (tok[:k], tok[k:])
            if pair not in have and pair[0] in base["model"]["vocab"] and pair[1] in base["model"]["vocab"]:
                merges.insert(rnd.randrange(len(merges) + 1), list(pair))
                have.add(pair)
    v["merges-alternate"] = {"model": {"merges": merges}}
    # a vocab without the byte characters no merge needs: such bytes are
    # dropped, or become unk_token, one per run with fuse_unk
    used = set(ch for m in base["model"]["merges"] for part in m for ch in part)
    vocab = {k: i for k, i in base["model"]["vocab"].items()
             if len(k) != 1 or k in used or i < 3}
    v["byte-missing"] = {"model": {"vocab": vocab}}
    v["byte-unk"] = {"model": {"vocab": vocab, "unk_token": "<|endoftext|>"}}
    v["byte-unk-fused"] = {"model": {"vocab": vocab, "unk_token": "<|endoftext|>",
                                     "fuse_unk": True}}
    for name, change in v.items():
        doc = json.loads(json.dumps(base))
        for k, val in change.items():
            if k == "model":
                doc["model"].update(val)
            else:
                doc[k] = val
        write_bytes(os.path.join(d, name + ".json"), json.dumps(doc, ensure_ascii=False).encode())


QWEN35_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"
                r"| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>",
            "<|object_ref_end|>", "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>",
            "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>",
            "<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>",
            "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>", "<tool_response>", "</tool_response>",
            "<think>", "</think>"]
NOT_SPECIAL = {"<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>",
               "</think>"}
VOCAB = 248044      # ids of the BPE vocabulary; the added tokens follow


def cmd_bigvocab(words_path, out):
    """A tokenizer.json shaped like Qwen3.5's: NFC, its split regex, ByteLevel,
    merges in the "a b" string form, 248044 BPE ids then the added tokens.
    Its merges are merge trees over the bytes of real words (the words of
    WORDS and the awkward texts, so encoding them exercises long chains of
    merges) and of random words in many scripts, until the vocab is full."""
    alphabet = sorted(pt.ByteLevel.alphabet())
    split = pt.Sequence([pt.Split(Regex(QWEN35_SPLIT), "isolated"),
                         pt.ByteLevel(add_prefix_space=False, use_regex=False)])
    rnd = random.Random(248)
    vocab = {ch: i for i, ch in enumerate(alphabet)}
    merges = []

    def tree(word):
        # merges that build word from its characters, split at random
        if len(word) < 2 or len(vocab) >= VOCAB:
            return
        if word in vocab:
            return
        k = rnd.randint(1, len(word) - 1)
        tree(word[:k])
        tree(word[k:])
        if word[:k] in vocab and word[k:] in vocab and word not in vocab and len(vocab) < VOCAB:
            vocab[word] = len(vocab)
            merges.append((word[:k], word[k:]))

    texts = awkward() + [read_text(words_path)]
    words = [w for t in texts for w, _ in split.pre_tokenize_str(t)]
    for w in words:
        for i in range(0, len(w), 16):     # long runs become several tokens
            tree(w[i:i + 16])
    scripts = [(0x61, 0x7b), (0xe0, 0x100), (0x430, 0x450), (0x3b1, 0x3ca), (0x5d0, 0x5eb),
               (0x627, 0x64b), (0x905, 0x940), (0xe01, 0xe30), (0x3041, 0x3097), (0x4e00, 0x9fa6),
               (0xac00, 0xd7a4), (0x1f600, 0x1f650)]
    while len(vocab) < VOCAB:
        lo, hi = rnd.choice(scripts)
        w = "".join(chr(rnd.randrange(lo, hi)) for _ in range(rnd.randint(2, 6)))
        if rnd.random() < 0.5:
            w = " " + w
        for piece, _ in split.pre_tokenize_str(w):
            tree(piece)
    # shorter merges first, as training makes them, ties in random order
    order = list(range(len(merges)))
    rnd.shuffle(order)
    order.sort(key=lambda i: len(merges[i][0]) + len(merges[i][1]))
    added = []
    for i, content in enumerate(SPECIALS):
        special = content not in NOT_SPECIAL
        added.append({"id": VOCAB + i, "content": content, "single_word": False, "lstrip": False,
                      "rstrip": False, "normalized": False, "special": special})
    doc = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": QWEN35_SPLIT}, "behavior": "Isolated",
             "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
             "use_regex": False}]},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                           "use_regex": False},
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                    "use_regex": False},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": "", "end_of_word_suffix": "", "fuse_unk": False,
                  "byte_fallback": False, "ignore_merges": False, "vocab": vocab,
                  "merges": ["%s %s" % merges[i] for i in order]},
    }
    write_bytes(out, json.dumps(doc, ensure_ascii=False).encode())
    print("vocab %d, merges %d, added %d" % (len(vocab), len(merges), len(added)))


def main():
    a = sys.argv[1:]
    if not a:
        sys.exit(__doc__)
    cmd = a[0]
    if cmd == "encode":
        cmd_encode(load(a[1]), a[2:])
    elif cmd == "expect":
        cmd_expect(a[1], a[2:])
    elif cmd == "normalize":
        cmd_normalize(load(a[1]), a[2:])
    elif cmd == "encode-lines":
        cmd_encode_lines(load(a[1]), a[2])
    elif cmd == "decode":
        cmd_decode(load(a[1]), a[2])
    elif cmd == "pretok":
        cmd_pretok(load(a[1]), a[2])
    elif cmd == "awkward":
        cmd_awkward(a[1])
    elif cmd == "codepoints":
        cmd_codepoints(a[1], int(a[2]), int(a[3]), a[4] if len(a) > 4 else None)
    elif cmd == "randids":
        cmd_randids(load(a[1]), int(a[2]), int(a[3]))
    elif cmd == "variants":
        cmd_variants(a[1], a[2])
    elif cmd == "decode-check":
        cmd_decode_check(load(a[1]), a[2], a[3])
    elif cmd == "bigvocab":
        cmd_bigvocab(a[1], a[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
