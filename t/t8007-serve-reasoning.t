#!/bin/sh
# tf-serve's chat answers apart into reasoning_content and content, as
# vLLM's qwen3 reasoning parser splits them: with thinking on (the prompt
# ends in an open "<think>\n") the text up to "</think>" is the reasoning
# and the rest the content, the tag dropped and the text beside it kept;
# a reply that never closes the block is all reasoning (content null);
# with thinking off it is all content (reasoning_content null). Streamed,
# the deltas' reasoning_content and content add up to the whole answer's.
# The test model knows no tags, so a copy of it has a tokenizer that
# spells two ids of its greedy answer as "ay<" and "/think>\n\n": the
# model draws the same ids, and "</think>" comes cut across two tokens.
# /v1/completions is unchanged: its text holds the tags. The splitter's
# cases, cut at every byte, are t/unit/think.c's.
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-serve.sh"

command -v curl >/dev/null && command -v jq >/dev/null || skip_all "curl and jq are needed"

ASK='"messages": [{"role": "user", "content": "Who art thou?"}], "temperature": 0, "return_token_ids": true'
OFF='"chat_template_kwargs": {"enable_thinking": false}'

serve_start S tf-serve $M -P 4 || skip_all "tf-serve did not start"

# chat URL NAME FIELDS: the answer in NAME.json, the streamed one's
# events in NAME.ev.json (one JSON chunk a line)
chat() {
	curl -sf $1/v1/chat/completions -d "{$ASK, $3}" >$2.json &&
	curl -sfN $1/v1/chat/completions -d "{$ASK, $3, \"stream\": true}" | grep '^data: {' | sed 's/^data: //' >$2.ev.json
}
# streamed NAME FIELD: the events' FIELD of choice 0, joined
streamed() {
	jq -s -j --arg f "$2" 'map(.choices[0].delta[$f] // empty) | join("")' $1.ev.json
}

test_expect "thinking on, the block never closed: all reasoning, content null" "
	chat $S_URL on '\"max_tokens\": 16' &&
	jq -e '.choices[0].message.content == null and (.choices[0].message.reasoning_content | length) > 0' on.json &&
	jq -r '.choices[0].token_ids | map(tostring) | join(\" \")' on.json | tf-tok decode $M >want &&
	jq -j '.choices[0].message.reasoning_content' on.json | cmp - want
"
test_expect "... streamed: every delta reasoning_content, none content" "
	streamed on reasoning_content | cmp - want &&
	test -z \"\$(streamed on content)\" &&
	jq -s -e '.[0].choices[0].delta == {\"role\": \"assistant\", \"content\": \"\"}' on.ev.json
"
test_expect "thinking off: all content, reasoning_content null" "
	chat $S_URL off \"\\\"max_tokens\\\": 16, \$OFF\" &&
	jq -e '.choices[0].message.reasoning_content == null and (.choices[0].message.content | length) > 0' off.json &&
	jq -r '.choices[0].token_ids | map(tostring) | join(\" \")' off.json | tf-tok decode $M >want &&
	jq -j '.choices[0].message.content' off.json | cmp - want &&
	streamed off content | cmp - want && test -z \"\$(streamed off reasoning_content)\"
"
test_expect "a stop string cuts the reply, reasoning included" "
	jq -j '.choices[0].message.reasoning_content' on.json >r && w=\$(cut -c 5-9 r | head -1) && test -n \"\$w\" &&
	curl -sf $S_URL/v1/chat/completions -d \"{\$ASK, \\\"max_tokens\\\": 16, \\\"stop\\\": \\\"\$w\\\"}\" >stop.json &&
	jq -e --arg p \"\$(head -c 4 r)\" '.choices[0].message.reasoning_content == \$p and .choices[0].message.content == null and .choices[0].finish_reason == \"stop\"' stop.json
"

# the copy whose tokenizer spells ids K to K+2 of the greedy answer (the
# first three from the fourth on that came up nowhere before them) as "ay<", "/think>" and
# "\n\n", as Qwen3.5 writes the end of its block; none of the texts is in
# the prompt, so its ids stay the same. K+2, the ids up to the tag, goes
# to upto
cp -r $M m && chmod -R u+w m
$PY - on.json <<'EOF' || exit 1
import json, sys
ids = json.load(open(sys.argv[1]))["choices"][0]["token_ids"]
k = next(k for k in range(3, len(ids) - 3) if len(set(ids[:k + 3])) == k + 3)
t = json.load(open("m/tokenizer.json"))
for id, text in zip(ids[k:k + 3], ("ay<", "/think>", "\n\n")):
    t["added_tokens"].append({"id": id, "content": text, "single_word": False, "lstrip": False, "rstrip": False,
                              "normalized": False, "special": False})
json.dump(t, open("m/tokenizer.json", "w"))
open("upto", "w").write("%d\n" % (k + 2))
EOF
serve_start T tf-serve m -P 4 || skip_all "tf-serve did not start on the copy"

# split NAME: the answer's text through the copy's tokenizer, parted at
# the first "</think>" as vLLM parts it, into NAME.r and NAME.c
split() {
	jq -r '.choices[0].token_ids | map(tostring) | join(" ")' $1.json | tf-tok decode m >$1.txt &&
	$PY -c '
import sys
r, tag, c = open(sys.argv[1]).read().partition("</think>")
assert tag, "no </think> in the text"
open(sys.argv[2], "w").write(r); open(sys.argv[3], "w").write(c)' $1.txt $1.r $1.c
}

test_expect "the copy draws the same ids, and their text holds </think>" "
	chat $T_URL tags '\"max_tokens\": 16' &&
	jq -e --slurpfile a on.json '.choices[0].token_ids == \$a[0].choices[0].token_ids' tags.json &&
	split tags && test -s tags.r && test -s tags.c
"
test_expect "</think> across two tokens: reasoning before it, content after, the tag gone" "
	jq -j '.choices[0].message.reasoning_content' tags.json | cmp - tags.r &&
	jq -j '.choices[0].message.content' tags.json | cmp - tags.c &&
	jq -e '.choices[0].message.content | startswith(\"\\n\\n\")' tags.json &&
	jq -e '.choices[0].message.reasoning_content | endswith(\"ay\")' tags.json
"
test_expect "... streamed: the deltas add up to the same two texts" "
	streamed tags reasoning_content | cmp - tags.r && streamed tags content | cmp - tags.c
"
test_expect "... and no delta holds a piece of the tag" "
	! grep -q 'think>' tags.ev.json &&
	! jq -s -e 'map(.choices[0].delta | (.content // \"\") + (.reasoning_content // \"\")) | any(test(\"[<>/]\"))' tags.ev.json
"
test_expect "an answer that ends with the tag: content null, streamed none" "
	chat $T_URL end \"\\\"max_tokens\\\": \$(cat upto)\" &&
	jq -e '.choices[0].message.content == null' end.json &&
	jq -j '.choices[0].message.reasoning_content' end.json | cmp - tags.r &&
	streamed end reasoning_content | cmp - tags.r && test -z \"\$(streamed end content)\"
"
test_expect "n 2, sampled: each choice split on its own, streamed as whole" "
	curl -sf $T_URL/v1/chat/completions -d \"{\$ASK, \\\"max_tokens\\\": 16, \\\"n\\\": 2, \\\"temperature\\\": 0.6, \\\"seed\\\": 3}\" >n2.json &&
	curl -sfN $T_URL/v1/chat/completions -d \"{\$ASK, \\\"max_tokens\\\": 16, \\\"n\\\": 2, \\\"temperature\\\": 0.6, \\\"seed\\\": 3, \\\"stream\\\": true}\" |
		grep '^data: {' | sed 's/^data: //' >n2.ev.json &&
	for i in 0 1; do
		for f in reasoning_content content; do
			jq -j --argjson i \$i --arg f \$f '.choices[] | select(.index == \$i) | .message[\$f] // empty' n2.json >a &&
			jq -s -j --argjson i \$i --arg f \$f 'map(.choices[] | select(.index == \$i) | .delta[\$f] // empty) | join(\"\")' n2.ev.json >b &&
			cmp a b || exit 1
		done
	done
"
test_expect "/v1/completions is unchanged: the tags stay in its text" "
	curl -sf $T_URL/v1/completions -d '{\"prompt\": \"<|im_start|>user\\nWho art thou?<|im_end|>\\n<|im_start|>assistant\\n<think>\\n\", \"max_tokens\": 16, \"temperature\": 0}' >cmpl.json &&
	jq -j '.choices[0].text' cmpl.json | cmp - tags.txt &&
	jq -e '.choices[0] | has(\"reasoning_content\") | not' cmpl.json
"
serve_stop S
say_ok $? "SIGTERM: exit status 0"
serve_stop T
say_ok $? "SIGTERM on the copy: exit status 0"

done_testing
