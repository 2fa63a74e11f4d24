#!/usr/bin/env python3
"""serve-ask.py URL N [K]: for each line of ids on stdin, a completion of
N ids (greedy unless K, the seed of a temperature-1 top-k-50 draw; end
ids ignored) from tf-serve, all lines at once, each on its own
connection; prints the ids of each line, in input order, as tf-run
writes them. The standard library only, for machines without curl."""
import http.client
import json
import sys
import threading

url, n = sys.argv[1], int(sys.argv[2])
seed = int(sys.argv[3]) if len(sys.argv) > 3 else None
host, port = url.split("//")[1].split(":")
lines = [l.split() for l in sys.stdin.read().splitlines()]
out = [None] * len(lines)


def ask(i):
    body = {"prompt": [int(x) for x in lines[i]], "max_tokens": n, "ignore_eos": True, "return_token_ids": True}
    if seed is not None:
        body.update(temperature=1, top_k=50, seed=seed)
    else:
        body.update(temperature=0)
    c = http.client.HTTPConnection(host, int(port), timeout=300)
    c.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    j = json.loads(r.read())
    if r.status != 200:
        sys.exit("serve-ask: HTTP %d: %s" % (r.status, j))
    out[i] = " ".join(str(x) for x in j["choices"][0]["token_ids"])


ts = [threading.Thread(target=ask, args=(i,)) for i in range(len(lines))]
for t in ts:
    t.start()
for t in ts:
    t.join()
if any(o is None for o in out):
    sys.exit("serve-ask: a request failed")
print("\n".join(out))
