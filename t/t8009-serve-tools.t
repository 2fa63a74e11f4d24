#!/bin/sh
# tf-serve reads a chat reply's tool calls back as OpenAI tool_calls, as
# vLLM's qwen3_coder tool parser reads them: the text before the first
# call is the content (null when there is none), each call an id
# call_..., its name and its arguments as a JSON string typed by the
# tool's schema, finish_reason "tool_calls"; streamed, the content goes
# out up to the call (no piece of a tag in it) and each call in one
# delta.tool_calls chunk that the openai client adds up to the same
# calls. The test model knows no tags, so, as in t8007, a copy of it has
# a tokenizer that spells ids of its greedy answer as the pieces of two
# calls, "<tool_call>" cut across two tokens: the model draws the same
# ids, and the answer is checked against the parser's regular
# expressions run on its text in Python. Around it: thinking on (the
# call ends the reasoning), tool_choice "none" (the text as it is), a
# call cut by max_tokens (content, no call), n 2 (ids apart), no tools
# (no tool_calls), the forms of tool_choice refused (400). The parser's
# cases, cut at every byte, are t/unit/toolcall.c's.
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-serve.sh"

command -v curl >/dev/null && command -v jq >/dev/null || skip_all "curl and jq are needed"
$PY -c 'import openai' 2>/dev/null || skip_all "the openai package is missing (make test puts it in .venv)"

cat >tools.json <<'EOF'
[{"type": "function", "function": {"name": "get_weather", "description": "The weather in a city",
  "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
  "required": ["city"]}}}]
EOF
# req THINK [MAX] [more jq]: a request body on stdout
req() {
	jq -n --slurpfile t tools.json --argjson think $1 --argjson max ${2:-16} "{messages: [{role: \"user\",
		content: \"What is the weather in Paris?\"}], tools: \$t[0], temperature: 0, max_tokens: \$max,
		return_token_ids: true, chat_template_kwargs: {enable_thinking: \$think}} ${3:-}"
}
# chat URL NAME BODY: the answer in NAME.json, the streamed one's events
# in NAME.ev.json (one JSON chunk a line)
chat() {
	printf '%s' "$3" >$2.req &&
	curl -sf $1/v1/chat/completions -d @$2.req >$2.json &&
	jq '. + {stream: true}' $2.req | curl -sfN $1/v1/chat/completions -d @- | grep '^data: {' | sed 's/^data: //' >$2.ev.json
}
# streamed NAME FIELD: the events' delta FIELD of choice 0, joined
streamed() {
	jq -s -j --arg f "$2" 'map(.choices[0].delta[$f] // empty) | join("")' $1.ev.json
}

serve_start S tf-serve $M -P 4 || skip_all "tf-serve did not start"
chat $S_URL off "$(req false)" && chat $S_URL on "$(req true)" || { diag "the first answers failed"; exit 1; }

# copy DIR ANSWER TEXT...: a copy of the model whose tokenizer spells ids
# K, K+1, ... of ANSWER's ids as TEXT... (the first K from 3 on whose ids
# come up once in the answer, so that no call comes twice); K+1 plus the
# count of texts, the ids up to the last, goes to DIR.upto
copy() {
	cp -r $M $1 && chmod -R u+w $1 && $PY - "$@" <<'EOF'
import json, sys
# the texts come with \n written as two characters
d, answer, texts = sys.argv[1], sys.argv[2], [a.replace("\\n", "\n") for a in sys.argv[3:]]
ids = json.load(open(answer))["choices"][0]["token_ids"]
m = len(texts)
k = next(k for k in range(3, len(ids) - m) if all(ids.count(i) == 1 for i in ids[k:k + m]))
t = json.load(open(d + "/tokenizer.json"))
for id, text in zip(ids[k:k + m], texts):
    t["added_tokens"].append({"id": id, "content": text, "single_word": False, "lstrip": False, "rstrip": False,
                              "normalized": False, "special": False})
json.dump(t, open(d + "/tokenizer.json", "w"))
open(d + ".upto", "w").write("%d\n" % (k + m))
EOF
}
copy m off.json 'ay.\n\n<tool_' 'call>\n<function=get_weather>\n<parameter=city>\nPar' \
	'is\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>' \
	'\n<tool_call>\n<function=get_weather>\n<parameter=city>\nRome\n</parameter>\n</function>\n</tool_call>' || exit 1
copy n on.json '<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n</function>\n</tool_call>' || exit 1
serve_start T tf-serve m -P 4 || skip_all "tf-serve did not start on the copy"
serve_start U tf-serve n -P 4 || skip_all "tf-serve did not start on the second copy"

# the oracle: vLLM's qwen3_coder regular expressions on a text (after the
# reasoning, thinking on), days an integer as the schema says: a JSON
# {"reasoning", "content", "calls": [[name, arguments]]} on stdout
cat >oracle.py <<'EOF'
import json, re, sys
text, think = open(sys.argv[1]).read(), sys.argv[2] == "on"
reasoning = None
if think:
    at = text.find("<tool_call>")
    reasoning, text = text[:at], text[at:]
calls = []
blocks = [a or b for a, b in re.findall(r"<tool_call>(.*?)</tool_call>|<tool_call>(.*?)$", text, re.DOTALL)]
for f in [a or b for blk in blocks for a, b in re.findall(r"<function=(.*?)</function>|<function=(.*)$", blk, re.DOTALL)]:
    i = f.index(">")
    args = {}
    for p in re.findall(r"<parameter=(.*?)(?:</parameter>|(?=<parameter=)|(?=</function>)|$)", f[i + 1:], re.DOTALL):
        j = p.index(">")
        v = p[j + 1:]
        v = v[1:] if v.startswith("\n") else v
        v = v[:-1] if v.endswith("\n") else v
        args[p[:j]] = int(v) if p[:j] == "days" else v
    calls.append([f[:i], json.dumps(args, ensure_ascii=False)])
content = text[:text.find("<tool_call>")] if calls else text
print(json.dumps({"reasoning": reasoning, "content": content or None, "calls": calls}, ensure_ascii=False,
                 separators=(",", ":")))
EOF
# got NAME: the answer NAME.json in the oracle's form
got() {
	jq -c '.choices[0] | {reasoning: .message.reasoning_content, content: .message.content,
		calls: [(.message.tool_calls // [])[] | [.function.name, .function.arguments]]}' $1.json
}
# text NAME DIR: the answer's ids as text through DIR's tokenizer
text() {
	jq -r '.choices[0].token_ids | map(tostring) | join(" ")' $1.json | tf-tok decode $2 >$1.txt
}

test_expect "the copy draws the same ids, and their text holds two calls" "
	chat $T_URL calls \"\$(req false)\" &&
	jq -e --slurpfile a off.json '.choices[0].token_ids == \$a[0].choices[0].token_ids' calls.json &&
	text calls m && test \$(grep -c '<function=' calls.txt) = 2
"
test_expect "tool_calls as the parser's expressions read them; content the text before them" "
	$PY oracle.py calls.txt off >want && got calls >have && diff want have &&
	jq -e '.calls | length == 2' want &&
	jq -e '.choices[0].message.content | endswith(\"ay.\\n\\n\")' calls.json
"
test_expect "each call an id call_..., type function, arguments a JSON string; finish_reason tool_calls" "
	jq -e '.choices[0] | .finish_reason == \"tool_calls\" and (.message.tool_calls | length == 2 and
		all(.[]; (.id | test(\"^call_[0-9a-f]{24}\$\")) and .type == \"function\" and (.function.arguments | type) == \"string\")) and
		.message.tool_calls[0].id != .message.tool_calls[1].id' calls.json &&
	jq -e '.choices[0].message.tool_calls | map(.function.arguments | fromjson) == [{\"city\": \"Paris\", \"days\": 3}, {\"city\": \"Rome\"}]' calls.json
"
test_expect "streamed: the content deltas add up to the content, no piece of a tag among them" "
	streamed calls content >a && jq -j '.choices[0].message.content' calls.json >b && cmp a b &&
	! jq -s -e 'map(.choices[0].delta.content // \"\") | any(test(\"[<>]\"))' calls.ev.json
"
test_expect "... each call one delta.tool_calls chunk: index, id, type, name, whole arguments" "
	jq -s -c '[.[].choices[0].delta.tool_calls // empty | .[]]' calls.ev.json >chunks &&
	jq -e 'length == 2 and (map(.index) == [0, 1]) and all(.[]; (.id | startswith(\"call_\")) and .type == \"function\")' chunks &&
	jq -c 'map([.function.name, .function.arguments])' chunks >a &&
	jq -c '[.choices[0].message.tool_calls[] | [.function.name, .function.arguments]]' calls.json >b && cmp a b
"
test_expect "... and the last chunk's finish_reason is tool_calls" "
	jq -s -e 'map(.choices[0].finish_reason // empty) == [\"tool_calls\"]' calls.ev.json
"
test_expect "the openai client: message.tool_calls, and the deltas added up its way, give the same calls" "
	$PY - $T_URL <<'EOF'
import json, openai, sys
c = openai.OpenAI(base_url=sys.argv[1] + '/v1', api_key='none', max_retries=0)
tools = json.load(open('tools.json'))
ask = dict(model=c.models.list().data[0].id, messages=[{'role': 'user', 'content': 'What is the weather in Paris?'}], tools=tools,
           temperature=0, max_tokens=16, extra_body={'chat_template_kwargs': {'enable_thinking': False}})
r = c.chat.completions.create(**ask)
ch = r.choices[0]
assert ch.finish_reason == 'tool_calls', ch.finish_reason
calls = [(t.function.name, json.loads(t.function.arguments)) for t in ch.message.tool_calls]
assert calls == [('get_weather', {'city': 'Paris', 'days': 3}), ('get_weather', {'city': 'Rome'})], calls
acc, content, finish = {}, '', None
for chunk in c.chat.completions.create(stream=True, **ask):
    d = chunk.choices[0].delta
    content += d.content or ''
    for t in d.tool_calls or []:
        a = acc.setdefault(t.index, {'id': None, 'name': '', 'arguments': ''})
        a['id'] = t.id or a['id']
        a['name'] += t.function.name or ''
        a['arguments'] += t.function.arguments or ''
    finish = chunk.choices[0].finish_reason or finish
assert content == ch.message.content, (content, ch.message.content)
assert finish == 'tool_calls'
assert [(a['name'], json.loads(a['arguments'])) for _, a in sorted(acc.items())] == calls
# the calls and a tool's answer go back as the client sends them
msgs = ask['messages'] + [ch.message.model_dump(exclude_none=True),
        {'role': 'tool', 'tool_call_id': ch.message.tool_calls[0].id, 'content': 'Rain, 12 C'},
        {'role': 'tool', 'tool_call_id': ch.message.tool_calls[1].id, 'content': 'Sun, 20 C'}]
r2 = c.chat.completions.create(**dict(ask, messages=msgs, max_tokens=4))
assert r2.choices[0].message.content is not None
EOF
"
test_expect "thinking on: the call ends the reasoning; content null, the call in tool_calls" "
	chat $U_URL think \"\$(req true)\" &&
	jq -e --slurpfile a on.json '.choices[0].token_ids == \$a[0].choices[0].token_ids' think.json &&
	text think n && $PY oracle.py think.txt on >want && got think >have && diff want have &&
	jq -e '.choices[0] | .message.content == null and (.message.reasoning_content | length) > 0 and
		(.message.tool_calls | length) == 1 and .finish_reason == \"tool_calls\"' think.json
"
test_expect "... streamed: reasoning deltas, no content, the call" "
	streamed think reasoning_content >a && jq -j '.choices[0].message.reasoning_content' think.json >b && cmp a b &&
	test -z \"\$(streamed think content)\" &&
	jq -s -e '[.[].choices[0].delta.tool_calls // empty | .[] | .function.arguments] == [\"{\\\"city\\\": \\\"Oslo\\\"}\"]' think.ev.json
"
test_expect "tool_choice none: the text as it is, tags and all, no tool_calls" "
	chat $T_URL none \"\$(req false 16 '+ {tool_choice: \"none\"}')\" &&
	jq -j '.choices[0].message.content' none.json | cmp - calls.txt &&
	jq -e '.choices[0] | (has(\"message\") and (.message | has(\"tool_calls\") | not)) and .finish_reason == \"length\"' none.json &&
	streamed none content | cmp - calls.txt
"
test_expect "tool_choice auto is the default" "
	chat $T_URL auto \"\$(req false 16 '+ {tool_choice: \"auto\"}')\" && got calls >c1 && got auto >c2 && cmp c1 c2
"
test_expect "a call cut by max_tokens is no call: its text is content, finish_reason length" "
	k=\$((\$(cat m.upto) - 2)) &&
	chat $T_URL cut \"\$(req false \$k)\" && text cut m &&
	grep -q '<function=get_weather>' cut.txt &&
	jq -j '.choices[0].message.content' cut.json | cmp - cut.txt &&
	jq -e '.choices[0] | (.message | has(\"tool_calls\") | not) and .finish_reason == \"length\"' cut.json &&
	streamed cut content | cmp - cut.txt
"
test_expect "n 2: each choice the same calls, every id its own" "
	curl -sf $T_URL/v1/chat/completions -d \"\$(req false 16 '+ {n: 2}')\" >n2.json &&
	jq -e '[.choices[].message.tool_calls | map([.function.name, .function.arguments])] | .[0] == .[1] and (.[0] | length) == 2' n2.json &&
	jq -e '[.choices[].message.tool_calls[].id] | length == 4 and (unique | length) == 4' n2.json
"
test_expect "no tools: no tool_calls, whatever the text" "
	curl -sf $T_URL/v1/chat/completions -d \"\$(req false 16 '| del(.tools)')\" >plain.json &&
	jq -e '.choices[0] | (.message | has(\"tool_calls\") | not) and .finish_reason != \"tool_calls\"' plain.json
"
# bad CHOICE: 400 naming tool_choice, and the server still answers
bad() {
	code=$(curl -s -o err.json -w '%{http_code}' $T_URL/v1/chat/completions -d "$(req false 2 "+ {tool_choice: $1}")") &&
	test "$code" = 400 && jq -e '.error.type == "invalid_request_error" and .error.param == "tool_choice" and
		(.error.message | length) > 0' err.json && curl -sf $T_URL/health >/dev/null
}
test_expect "tool_choice required: 400, not supported" "bad '\"required\"' && grep -q 'not supported' err.json"
test_expect "tool_choice naming a function: 400, not supported" "
	bad '{type: \"function\", function: {name: \"get_weather\"}}' && grep -q 'not supported' err.json
"
test_expect "tool_choice of another word: 400" "bad '\"always\"'"
test_expect "tool_choice not a string: 400" "bad 5"
test_expect "tools not an array: 400 naming it" "
	code=\$(curl -s -o err.json -w '%{http_code}' $T_URL/v1/chat/completions -d \"\$(req false 2 '+ {tools: 1}')\") &&
	test \$code = 400 && jq -e '.error.param == \"tools\"' err.json
"
for s in S T U; do
	serve_stop $s
	say_ok $? "SIGTERM ($s): exit status 0"
done

done_testing
