#!/usr/bin/env python3
"""gate-oracle.py: tf-gate's figures computed independently with numpy.

  gate-oracle.py gen DIR --rows R --cols V --seed S --noise X --lens L,L,...
      writes DIR/a.f32 and DIR/b.f32 (bare float32 rows) and DIR/ids.txt
      (targets: one sequence of each length L), chosen to hold bit-equal
      rows, argmax ties, top-1 disagreements and a row shifted by +1000
  gate-oracle.py figures A.f32 [B.f32] --cols V [--targets IDS] [--hash] > expect.json
      the figures tf-gate --json reports, from the raw rows
  gate-oracle.py check EXPECT.json GOT.json
      exit 0 when every figure in EXPECT matches GOT: counts and max abs
      exactly, sums (NMSE, KL, NLL, perplexity) to 1e-9 relative (the two
      programs add the same terms in a different order, which moves a double
      sum over 1e5 terms by far less), per-row sha256 exactly
"""
import argparse
import hashlib
import json
import math
import sys

import numpy as np


def read_ids(path):
    """token ids as text lines (tf-records(5)); '#' starts a comment"""
    seqs = []
    with open(path, "rb") as f:
        for line in f:
            line = line.split(b"#", 1)[0].split()
            if line:
                seqs.append([int(w) for w in line])
    return seqs


def log_softmax(x):
    m = x.max(axis=1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))


def figures(a32, b32, targets, hashes):
    rows, cols = a32.shape
    out = {"rows": rows, "cols": cols}
    a = a32.astype(np.float64)
    la = log_softmax(a)
    if b32 is not None:
        b = b32.astype(np.float64)
        lb = log_softmax(b)
        equal = [a32[r].tobytes() == b32[r].tobytes() for r in range(rows)]
        diff = np.abs(a - b)
        p = np.exp(la)
        kl = np.where(p > 0, p * (la - lb), 0.0).sum(axis=1)
        top1 = a32.argmax(axis=1) == b32.argmax(axis=1)
        out.update({
            "rows_equal": int(sum(equal)),
            "max_abs": float(diff.max()),
            "max_abs_row": int(diff.max(axis=1).argmax()),
            "nmse": float((diff ** 2).sum() / (a ** 2).sum()),
            "kl_mean": float(kl.mean()),
            "kl_max": float(kl.max()),
            "kl_max_row": int(kl.argmax()),
            "top1": float(top1.mean()),
            "top1_rows": int(top1.sum()),
        })
        if hashes:
            out["row_sha256"] = [
                {"row": r, "sha256_a": hashlib.sha256(a32[r].tobytes()).hexdigest(),
                 "sha256_b": hashlib.sha256(b32[r].tobytes()).hexdigest(), "equal": equal[r]}
                for r in range(rows)]
    elif hashes:
        out["row_sha256"] = [
            {"row": r, "sha256_a": hashlib.sha256(a32[r].tobytes()).hexdigest()} for r in range(rows)]
    if targets is not None:
        # row t of a sequence predicts its id t+1; the last row predicts nothing
        nll_a, nll_b, r0 = [], [], 0
        for seq in targets:
            for t in range(len(seq) - 1):
                nll_a.append(-la[r0 + t, seq[t + 1]])
                if b32 is not None:
                    nll_b.append(-lb[r0 + t, seq[t + 1]])
            r0 += len(seq)
        assert r0 == rows, "targets and rows disagree"
        out["scored_rows"] = len(nll_a)
        if b32 is not None:
            pa, pb = math.exp(np.mean(nll_a)), math.exp(np.mean(nll_b))
            out.update({"nll_a": float(np.mean(nll_a)), "ppl_a": pa,
                        "nll_b": float(np.mean(nll_b)), "ppl_b": pb,
                        "ppl_diff_pct": 100 * (pb - pa) / pa})
        else:
            out.update({"nll_a": float(np.mean(nll_a)), "ppl_a": math.exp(np.mean(nll_a))})
    return out


def gen(args):
    rng = np.random.default_rng(args.seed)
    R, V = args.rows, args.cols
    a = rng.normal(0.0, 2.0, (R, V)).astype(np.float32)
    b = (a + rng.normal(0.0, args.noise, (R, V))).astype(np.float32)
    for r in (0, 5, 9):                 # bit-equal rows
        b[r] = a[r]
    top = a[3].max() + 1                # a tie in a that b breaks the other way
    a[3, 10] = a[3, 20] = top
    b[3] = a[3]
    b[3, 20] = top + 0.5
    top = a[7].max() + 1                # the same tie in both: first index wins
    a[7, 10] = a[7, 20] = b[7, 10] = b[7, 20] = top
    for r in range(11, 15):             # b prefers the runner-up
        j = np.argsort(a[r])[-2]
        b[r, j] = a[r].max() + 0.3
    a[15] += 1000                       # exp() of these overflows without the max shift
    b[15] += 1000
    a.tofile(f"{args.dir}/a.f32")
    b.tofile(f"{args.dir}/b.f32")
    lens = [int(x) for x in args.lens.split(",")]
    assert sum(lens) == R, "the lengths must cover the rows"
    with open(f"{args.dir}/ids.txt", "w") as f:
        f.write("# targets for the synthetic streams\n\n")
        for n in lens:
            f.write(" ".join(str(int(x)) for x in rng.integers(0, V, n)) + "\n")


def check(args):
    exp = json.load(open(args.expect))
    got = json.load(open(args.got))
    exact = {"rows", "cols", "rows_equal", "max_abs", "max_abs_row", "kl_max_row",
             "top1_rows", "scored_rows", "row_sha256"}
    bad = 0
    for k, v in exp.items():
        if k not in got:
            print(f"# missing {k}")
            bad += 1
        elif k in exact:
            if got[k] != v:
                print(f"# {k}: got {str(got[k])[:200]} expected {str(v)[:200]}")
                bad += 1
        elif not abs(got[k] - v) <= 1e-9 * abs(v):
            print(f"# {k}: got {got[k]!r} expected {v!r}")
            bad += 1
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("dir")
    g.add_argument("--rows", type=int, required=True)
    g.add_argument("--cols", type=int, required=True)
    g.add_argument("--seed", type=int, required=True)
    g.add_argument("--noise", type=float, required=True)
    g.add_argument("--lens", required=True)
    f = sub.add_parser("figures")
    f.add_argument("a")
    f.add_argument("b", nargs="?")
    f.add_argument("--cols", type=int, required=True)
    f.add_argument("--targets")
    f.add_argument("--hash", action="store_true")
    c = sub.add_parser("check")
    c.add_argument("expect")
    c.add_argument("got")
    args = ap.parse_args()
    if args.cmd == "gen":
        gen(args)
    elif args.cmd == "figures":
        a = np.fromfile(args.a, dtype="<f4").reshape(-1, args.cols)
        b = np.fromfile(args.b, dtype="<f4").reshape(-1, args.cols) if args.b else None
        t = read_ids(args.targets) if args.targets else None
        json.dump(figures(a, b, t, args.hash), sys.stdout)
        print()
    else:
        sys.exit(check(args))


if __name__ == "__main__":
    main()
