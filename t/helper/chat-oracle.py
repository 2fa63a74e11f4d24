#!/usr/bin/env python3
"""chat-oracle.py: the Qwen3.5 chat template rendered by jinja2 as
transformers' apply_chat_template renders it, against tf-serve's own
rendering (t/helper/chat-render).

    chat-oracle.py TEMPLATE RENDER N SEED

makes N conversations from SEED (system, user, assistant, tool turns,
reasoning, tool calls, tools, thinking on and off, and inputs the template
refuses), renders each both ways and prints one line per difference; the
exit status is 1 when there is one. The environment is transformers'
(chat_template_utils._compile_jinja_template): a sandbox with trim_blocks
and lstrip_blocks, loop controls, raise_exception, and tojson as
json.dumps(x, ensure_ascii=False).
"""
import json
import random
import subprocess
import sys

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment


class TemplateError(Exception):
    pass


def raise_exception(message):
    raise TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def compile_template(text):
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env.from_string(text)


WORDS = ["hello", "world", "the", "king", "  ", "\n", "\t", "é", "你好", "🙂", "\u00a0", "\u3000",
         "<think>", "</think>", "\n\n", "a\"b", "back\\slash", "x\x01y", "<tool_call>", "ok", "42"]


def text(r, lo=0, hi=8):
    return "".join(r.choice(WORDS) + r.choice(["", " "]) for _ in range(r.randint(lo, hi)))


def value(r, depth=0):
    k = r.randint(0, 9 if depth < 2 else 6)
    if k == 0:
        return r.randint(-1000, 10 ** 12)
    if k == 1:
        return r.choice([0.1, 1.0, 1e-05, 0.0001, 1e16, 123456789.125, -2.5, 3e-300, 1.5e300])
    if k == 2:
        return r.choice([True, False, None])
    if k in (3, 4, 5, 6):
        return text(r, 0, 4)
    if k == 7:
        return [value(r, depth + 1) for _ in range(r.randint(0, 3))]
    return {text(r, 1, 2) or "k": value(r, depth + 1) for _ in range(r.randint(0, 3))}


def content(r):
    k = r.randint(0, 9)
    if k == 0:
        return None
    if k == 1:
        return [{"type": "text", "text": text(r)} for _ in range(r.randint(1, 3))]
    return text(r)


def tool_call(r):
    args = {text(r, 1, 2) or "arg": value(r) for _ in range(r.randint(0, 3))}
    f = {"name": r.choice(["get_weather", "search", "f"]), "arguments": args}
    return {"type": "function", "id": "call_1", "function": f} if r.random() < 0.7 else f


def assistant(r):
    m = {"role": "assistant"}
    k = r.randint(0, 5)
    if k == 0:
        m["content"] = "<think>\n" + text(r) + "\n</think>\n\n" + text(r)
    elif k == 1:
        m["content"] = text(r) + "</think>" + text(r)
    else:
        m["content"] = content(r)
    if r.random() < 0.3:
        m["reasoning_content"] = text(r)
    if r.random() < 0.4:
        m["tool_calls"] = [tool_call(r) for _ in range(r.randint(1, 3))]
    return m


def conversation(r):
    msgs = []
    if r.random() < 0.5:
        msgs.append({"role": "system", "content": content(r)})
    for _ in range(r.randint(1, 4)):
        msgs.append({"role": "user", "content": content(r)})
        for _ in range(r.randint(0, 2)):
            msgs.append(assistant(r))
            for _ in range(r.randint(0, 2) if "tool_calls" in msgs[-1] else 0):
                msgs.append({"role": "tool", "content": text(r)})
        if r.random() < 0.2:
            msgs.append({"role": "user", "content": "<tool_response>\n" + text(r) + "\n</tool_response>"})
    # what the template refuses
    k = r.randint(0, 19)
    if k == 0:
        msgs.append({"role": "system", "content": "late"})
    elif k == 1:
        msgs = [{"role": "user", "content": "<tool_response>x</tool_response>"}]
    elif k == 2:
        msgs.append({"role": "narrator", "content": "x"})
    elif k == 3:
        msgs.append({"role": "user", "content": 7})
    elif k == 4:
        msgs = []
    case = {"messages": msgs}
    if r.random() < 0.3:
        case["tools"] = [{"type": "function", "function": {"name": "get_weather", "description": text(r),
                          "parameters": value(r)}} for _ in range(r.randint(0, 2))]
    if r.random() < 0.6:
        case["enable_thinking"] = r.random() < 0.5
    if r.random() < 0.2:
        case["add_generation_prompt"] = False
    return case


def render(tmpl, case):
    kw = {k: v for k, v in case.items() if k != "messages"}
    kw.setdefault("add_generation_prompt", True)
    try:
        return {"text": tmpl.render(messages=case["messages"], **kw)}
    except TemplateError as e:
        return {"error": str(e)}


def main():
    template, helper, n, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    tmpl = compile_template(open(template, encoding="utf-8").read())
    r = random.Random(seed)
    cases = [conversation(r) for _ in range(n)]
    lines = "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases)
    got = subprocess.run([helper], input=lines.encode(), capture_output=True, check=True).stdout
    got = [json.loads(x) for x in got.decode().splitlines()]
    if len(got) != n:
        print(f"{helper} gave {len(got)} answers to {n} cases")
        return 1
    bad = texts = errors = 0
    for i, (c, g) in enumerate(zip(cases, got)):
        want = render(tmpl, c)
        texts += "text" in want
        errors += "error" in want
        if want != g:
            bad += 1
            if bad <= 5:
                print(f"case {i}: {json.dumps(c, ensure_ascii=False)}")
                print(f"  jinja2:  {json.dumps(want, ensure_ascii=False)}")
                print(f"  tf-serve: {json.dumps(g, ensure_ascii=False)}")
    print(f"{n} cases ({texts} rendered, {errors} refused by the template), {bad} different")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
