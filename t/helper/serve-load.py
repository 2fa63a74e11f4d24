#!/usr/bin/env python3
"""serve-load.py URL CLIENTS PROMPTS OUT: CLIENTS streaming completions at
once against tf-serve, each on its own connection and thread.

Client i asks for prompt i % P (PROMPTS: one line of ids each), greedy
when i is even, else sampled (temperature 0.9, top_k 40, seed 100 + the
prompt's index), for 24 + 4 * (i % 5) ids with ignore_eos; every sixth
client closes its connection after its third event, mid-answer. OUT gets
one JSON line a client: its index, prompt, sampled or not, max_tokens,
whether it dropped, and for those that did not, the ids of its events and
the finish_reason. The exit status is 1 when a client that did not drop
got no complete answer (an error, a timeout, no [DONE])."""
import http.client
import json
import sys
import threading

url, clients, prompts_path, out_path = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
host, port = url.split("//")[1].split(":")
prompts = [[int(x) for x in line.split()] for line in open(prompts_path) if line.strip()]
results = [None] * clients


def client(i):
    p = i % len(prompts)
    sampled = i % 2 == 1
    body = {"prompt": prompts[p], "max_tokens": 24 + 4 * (i % 5), "ignore_eos": True, "stream": True,
            "return_token_ids": True}
    if sampled:
        body.update(temperature=0.9, top_k=40, seed=100 + p)
    else:
        body.update(temperature=0)
    drop = i % 6 == 5
    r = {"client": i, "prompt": p, "sampled": sampled, "max_tokens": body["max_tokens"], "dropped": drop}
    try:
        c = http.client.HTTPConnection(host, int(port), timeout=300)
        c.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
        resp = c.getresponse()
        r["status"] = resp.status
        ids, events, done, finish = [], 0, False, None
        while True:
            line = resp.readline()
            if not line:
                break
            line = line.decode().strip()
            if not line.startswith("data: "):
                continue
            if line == "data: [DONE]":
                done = True
                break
            ev = json.loads(line[6:])
            events += 1
            for ch in ev["choices"]:
                ids += ch.get("token_ids", [])
                finish = ch.get("finish_reason") or finish
            if drop and events == 3:
                break
        c.close()
        if not drop:
            r.update(ids=ids, finish=finish, done=done)
    except Exception as e:
        r["error"] = repr(e)
    results[i] = r


threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
for t in threads:
    t.start()
for t in threads:
    t.join()
with open(out_path, "w") as f:
    for r in results:
        f.write(json.dumps(r) + "\n")
bad = [r for r in results if not r["dropped"] and not (r.get("done") and r.get("status") == 200)]
for r in bad[:5]:
    print("incomplete:", json.dumps(r))
sys.exit(1 if bad else 0)
