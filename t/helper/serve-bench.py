#!/usr/bin/env python3
"""serve-bench.py URL [-c 1,8,32] [-p 512] [-n 128] [-r 1] [--warmup 1] [--json]:
tf-serve's time to first token and tokens a second at each count of
concurrent requests.

At each count C, C streaming completions are sent at once, each of a
prompt of P ids (ids from 1 up, shifted per request so that no two are
alike) and max_tokens N, greedy and with ignore_eos, so that every one
makes exactly N tokens (return_token_ids counts them); a request that
gets another count, or an error, stops the run (exit 1). Each count runs
--warmup rounds untimed, then R timed rounds. Per request: the time to
first token (from the request sent to the first event holding an id) and
its decode speed (the ids after the first over the time after the first);
per round: the aggregate, all ids over the round's wall time. The table
shows the median and 90th percentile of the times to first token and the
median decode speed over every timed request, and the mean aggregate
over the rounds; --json writes those and every request's figures instead.
Compare one request with `tf-run -n N` and the aggregate at C with
`tf-bench --streams C` on the same model. The standard library only."""
import argparse
import http.client
import json
import statistics
import sys
import threading
import time
import urllib.parse

ap = argparse.ArgumentParser(description="tf-serve's time to first token and tokens a second at each count of "
                             "concurrent requests")
ap.add_argument("url")
ap.add_argument("-c", "--concurrency", default="1,8,32", help="counts of requests at once (default 1,8,32)")
ap.add_argument("-p", "--prompt-len", type=int, default=512, help="prompt ids a request (default 512)")
ap.add_argument("-n", "--max-tokens", type=int, default=128, help="tokens a request makes (default 128)")
ap.add_argument("-r", "--rounds", type=int, default=1, help="timed rounds at each count (default 1)")
ap.add_argument("--warmup", type=int, default=1, help="untimed rounds before them (default 1)")
ap.add_argument("--vocab", type=int, default=2048, help="the prompts' ids stay below this (default 2048)")
ap.add_argument("--timeout", type=float, default=3600, help="seconds a request may take (default 3600)")
ap.add_argument("--json", action="store_true", help="write JSON instead of the table")
a = ap.parse_args()


def die(msg):
    sys.stderr.write("serve-bench: error: %s\n" % msg)
    sys.exit(1)


try:
    counts = [int(x) for x in a.concurrency.split(",")]
except ValueError:
    die("bad --concurrency '%s': counts such as 1,8,32" % a.concurrency)
if not counts or min(counts) < 1 or a.prompt_len < 1 or a.max_tokens < 1 or a.rounds < 1 or a.warmup < 0 \
        or a.vocab < 2:
    die("counts, --prompt-len, --max-tokens and --rounds must be 1 or more, --warmup 0 or more")
u = urllib.parse.urlsplit(a.url)
if u.scheme != "http" or not u.hostname:
    die("bad URL '%s': http://HOST:PORT, as tf-serve prints it" % a.url)
host, port = u.hostname, u.port or 80


def one(k, out):
    """request k of a round: (ttft s, decode tokens/s, tokens) into
    out[k], or an error message"""
    prompt = [1 + (i + 7 * k) % (a.vocab - 1) for i in range(a.prompt_len)]
    body = json.dumps({"prompt": prompt, "max_tokens": a.max_tokens, "temperature": 0, "ignore_eos": True,
                       "stream": True, "return_token_ids": True})
    try:
        c = http.client.HTTPConnection(host, port, timeout=a.timeout)
        t0 = time.monotonic()
        c.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
        r = c.getresponse()
        if r.status != 200:
            out[k] = "request %d: HTTP %d: %s" % (k, r.status, r.read()[:300].decode(errors="replace"))
            return
        first, n = None, 0
        while True:
            line = r.readline()
            if not line or line.strip() == b"data: [DONE]":
                break
            if not line.startswith(b"data: {"):
                continue
            ev = json.loads(line[6:])
            if "error" in ev:
                out[k] = "request %d: %s" % (k, ev["error"].get("message"))
                return
            ids = sum(len(ch.get("token_ids", [])) for ch in ev["choices"])
            if ids and first is None:
                first = time.monotonic()
            n += ids
        end = time.monotonic()
        c.close()
    except (OSError, http.client.HTTPException, ValueError) as e:
        out[k] = "request %d: %s" % (k, e)
        return
    if n != a.max_tokens:
        out[k] = "request %d made %d tokens, not %d" % (k, n, a.max_tokens)
        return
    out[k] = (first - t0, (n - 1) / (end - first) if n > 1 and end > first else 0.0, n)


def round_of(cc):
    """cc requests at once: their figures and the aggregate tokens/s"""
    out = [None] * cc
    ts = [threading.Thread(target=one, args=(k, out)) for k in range(cc)]
    t0 = time.monotonic()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    wall = time.monotonic() - t0
    for x in out:
        if not isinstance(x, tuple):
            die(x or "a request did not end")
    return out, sum(x[2] for x in out) / wall


def p90(xs):
    return statistics.quantiles(xs, n=10, method="inclusive")[8] if len(xs) > 1 else xs[0]


results = []
for cc in counts:
    for _ in range(a.warmup):
        round_of(cc)
    reqs, agg = [], []
    for _ in range(a.rounds):
        out, total = round_of(cc)
        reqs += out
        agg.append(total)
    ttft = [x[0] * 1000 for x in reqs]
    results.append({"concurrency": cc, "ttft_ms_median": statistics.median(ttft), "ttft_ms_p90": p90(ttft),
                    "tokens_per_s_request_median": statistics.median(x[1] for x in reqs),
                    "tokens_per_s_aggregate": statistics.mean(agg),
                    "requests": [{"ttft_ms": x[0] * 1000, "tokens_per_s": x[1], "tokens": x[2]} for x in reqs]})
    if not a.json:
        if len(results) == 1:
            print("prompt %d ids, %d tokens a request (greedy, ignore_eos); at each count %d timed round%s, "
                  "%d untimed before" % (a.prompt_len, a.max_tokens, a.rounds, "s" if a.rounds > 1 else "", a.warmup))
            print()
            print("| requests | ttft ms (median) | ttft ms (p90) | tokens/s a request (median) | tokens/s aggregate |")
            print("|---:|---:|---:|---:|---:|")
        r = results[-1]
        print("| %d | %.1f | %.1f | %.1f | %.1f |" % (cc, r["ttft_ms_median"], r["ttft_ms_p90"],
                                                   r["tokens_per_s_request_median"], r["tokens_per_s_aggregate"]),
              flush=True)
if a.json:
    json.dump({"url": a.url, "prompt_len": a.prompt_len, "max_tokens": a.max_tokens, "rounds": a.rounds,
               "warmup": a.warmup, "results": results}, sys.stdout, indent=1)
    print()
