#!/usr/bin/env python3
"""serve-openai.py URL MODEL: tf-serve through the openai client, as an
editor or an agent talks to it. Prints TAP lines (no plan); the ids each
answer must hold come from tf-run in the caller (t8002), in the files
greedy.ids and seeded.ids of the working folder."""
import sys

import openai

url, model = sys.argv[1], sys.argv[2]
client = openai.OpenAI(base_url=url + "/v1", api_key="none", max_retries=0, timeout=120)
n = 0


def ok(cond, title, why=""):
    global n
    n += 1
    print(("ok" if cond else "not ok") + f" {n} - {title}")
    if not cond and why:
        for line in str(why).splitlines():
            print("#   " + line)


def ids(path):
    return [int(x) for x in open(path).read().split()]


greedy, seeded = ids("greedy.ids"), ids("seeded.ids")
prompt = ids("prompt.ids")

m = client.models.list()
ok([x.id for x in m.data] == [model], "models.list names the model", m)

r = client.completions.create(model=model, prompt=prompt, max_tokens=len(greedy), temperature=0,
                              extra_body={"ignore_eos": True, "return_token_ids": True})
ok(r.choices[0].model_extra.get("token_ids") == greedy, "completions.create: greedy ids equal tf-run's", r)
ok(r.usage.prompt_tokens == len(prompt) and r.usage.completion_tokens == len(greedy), "... and usage counts them", r.usage)
ok(r.choices[0].finish_reason == "length", "... finish_reason length")

r = client.completions.create(model=model, prompt=prompt, max_tokens=len(seeded), temperature=0.8, top_p=0.95,
                              seed=11, extra_body={"ignore_eos": True, "return_token_ids": True})
ok(r.choices[0].model_extra.get("token_ids") == seeded, "completions.create: seeded ids equal tf-run's", r)
text = r.choices[0].text

chunks = list(client.completions.create(model=model, prompt=prompt, max_tokens=len(seeded), temperature=0.8,
                                        top_p=0.95, seed=11, stream=True, stream_options={"include_usage": True},
                                        extra_body={"ignore_eos": True, "return_token_ids": True}))
got = [i for c in chunks if c.choices for i in c.choices[0].model_extra.get("token_ids", [])]
ok(got == seeded, "completions.create(stream=True): the same ids, in events", got)
ok("".join(c.choices[0].text for c in chunks if c.choices) == text, "... and the same text")
ok(chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == len(seeded), "... and usage at the end")

msgs = [{"role": "system", "content": "You are brief."}, {"role": "user", "content": "Speak, ROMEO."}]
r = client.chat.completions.create(model=model, messages=msgs, max_tokens=8, temperature=0,
                                   extra_body={"ignore_eos": True, "chat_template_kwargs": {"enable_thinking": False}})
ok(r.choices[0].message.role == "assistant" and isinstance(r.choices[0].message.content, str),
   "chat.completions.create: an assistant message", r)
ok(r.usage.completion_tokens == 8, "... of 8 tokens", r.usage)
chat_text = r.choices[0].message.content

s = client.chat.completions.create(model=model, messages=msgs, max_tokens=8, temperature=0, stream=True,
                                   extra_body={"ignore_eos": True, "chat_template_kwargs": {"enable_thinking": False}})
parts = [c.choices[0].delta.content or "" for c in s if c.choices]
ok("".join(parts) == chat_text, "chat.completions.create(stream=True): the same text in deltas", parts)

# thinking on: this model never closes its block, so the reply is all
# reasoning_content, a field the client keeps among the message's extras
r = client.chat.completions.create(model=model, messages=msgs, max_tokens=8, temperature=0,
                                   extra_body={"ignore_eos": True})
thought = getattr(r.choices[0].message, "reasoning_content", None)
ok(isinstance(thought, str) and thought and r.choices[0].message.content is None,
   "thinking on: reasoning_content the reply, content None", r)
s = client.chat.completions.create(model=model, messages=msgs, max_tokens=8, temperature=0, stream=True,
                                   extra_body={"ignore_eos": True})
parts = [getattr(c.choices[0].delta, "reasoning_content", None) or "" for c in s if c.choices]
ok("".join(parts) == thought, "... streamed: the same text in the deltas' reasoning_content", parts)

r = client.chat.completions.create(model=model, messages=msgs, max_tokens=3, temperature=0, logprobs=True,
                                   top_logprobs=2, extra_body={"ignore_eos": True})
lp = r.choices[0].logprobs.content
ok(len(lp) == 3 and all(len(t.top_logprobs) == 2 and t.logprob <= 0 for t in lp), "chat logprobs and top_logprobs", lp)

tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
          "properties": {"city": {"type": "string"}}}}}]
conv = msgs + [{"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
               "function": {"name": "get_weather", "arguments": '{"city": "Verona"}'}}]},
               {"role": "tool", "tool_call_id": "c1", "content": "fair"}]
r = client.chat.completions.create(model=model, messages=conv, tools=tools, max_tokens=2, temperature=0)
ok(r.usage.prompt_tokens > 200, "a conversation with tools and a tool turn is taken", r.usage)

for title, call, kind in [
        ("an unknown model raises NotFoundError", lambda: client.completions.create(model="gpt-9", prompt="a"),
         openai.NotFoundError),
        ("max_tokens < 0 raises BadRequestError",
         lambda: client.completions.create(model=model, prompt="a", max_tokens=-1), openai.BadRequestError),
        ("a prompt past the context raises BadRequestError",
         lambda: client.completions.create(model=model, prompt=[1] * 5000), openai.BadRequestError),
        ("a bad role raises BadRequestError",
         lambda: client.chat.completions.create(model=model, messages=[{"role": "bard", "content": "x"}]),
         openai.BadRequestError)]:
    try:
        call()
        ok(False, title, "no exception")
    except kind as e:
        ok(isinstance(e.body, dict) and isinstance(e.body.get("message"), str), title, e)
    except Exception as e:
        ok(False, title, repr(e))

bad = openai.OpenAI(base_url=url + "/v1", api_key="wrong", max_retries=0)
try:
    bad.models.list()
    ok(True, "without --api-key-file any key is let in")
except Exception as e:
    ok(False, "without --api-key-file any key is let in", repr(e))
