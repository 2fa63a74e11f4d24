#!/usr/bin/env python3
"""serve-bench.py URL [-c 1,8,32] [-n 128] [-p 512] [-r 3]: tf-serve's
time to first token and tokens a second at each count of concurrent
requests.

At each count C, C streaming completions start together, each with a
prompt of P ids (ids 1..P, shifted per request, so no two are alike) and
N generated ids (ignore_eos); the round is run R times after one warm-up
round and the mean is shown. Per request: time to first token (from the
request sent to the first event with an id) and decode tokens a second
(ids after the first over the time after the first); aggregate: all ids
over the round's wall time. Compare the single stream with `tf-run -n N`
and the aggregate at C with `tf-bench --streams C` on the same model."""
import argparse
import http.client
import json
import statistics
import threading
import time

ap = argparse.ArgumentParser()
ap.add_argument("url")
ap.add_argument("-c", "--concurrency", default="1,8,32")
ap.add_argument("-n", "--tokens", type=int, default=128)
ap.add_argument("-p", "--prompt", type=int, default=512)
ap.add_argument("-r", "--repeat", type=int, default=3)
ap.add_argument("--vocab", type=int, default=2048, help="ids of the prompts stay below this")
a = ap.parse_args()
host, port = a.url.split("//")[1].split(":")


def one(k, out):
    prompt = [1 + (i + 7 * k) % (a.vocab - 1) for i in range(a.prompt)]
    body = json.dumps({"prompt": prompt, "max_tokens": a.tokens, "temperature": 0, "ignore_eos": True,
                       "stream": True, "return_token_ids": True})
    c = http.client.HTTPConnection(host, int(port), timeout=3600)
    t0 = time.monotonic()
    c.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
    r = c.getresponse()
    if r.status != 200:
        raise SystemExit(f"request {k}: HTTP {r.status}: {r.read()[:300]!r}")
    first = None
    n = 0
    while True:
        line = r.readline()
        if not line or line.strip() == b"data: [DONE]":
            break
        if not line.startswith(b"data: {"):
            continue
        ids = sum((len(ch.get("token_ids", [])) for ch in json.loads(line[6:])["choices"]), 0)
        if ids and first is None:
            first = time.monotonic()
        n += ids
    end = time.monotonic()
    c.close()
    out[k] = (first - t0, (n - 1) / (end - first) if n > 1 and end > first else 0.0, n)


def round_of(cc):
    out = [None] * cc
    ts = [threading.Thread(target=one, args=(k, out)) for k in range(cc)]
    t0 = time.monotonic()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    wall = time.monotonic() - t0
    return out, sum(x[2] for x in out) / wall


print(f"prompt {a.prompt} ids, {a.tokens} generated, mean of {a.repeat} rounds after a warm-up")
print("| requests | ttft ms (mean) | ttft ms (max) | tokens/s a request | tokens/s aggregate |")
print("|---:|---:|---:|---:|---:|")
for cc in [int(x) for x in a.concurrency.split(",")]:
    round_of(cc)
    ttft, ttft_max, per, agg = [], [], [], []
    for _ in range(a.repeat):
        out, total = round_of(cc)
        ttft.append(statistics.mean(x[0] for x in out) * 1000)
        ttft_max.append(max(x[0] for x in out) * 1000)
        per.append(statistics.mean(x[1] for x in out))
        agg.append(total)
    print(f"| {cc} | {statistics.mean(ttft):.1f} | {statistics.mean(ttft_max):.1f} | "
          f"{statistics.mean(per):.1f} | {statistics.mean(agg):.1f} |", flush=True)
