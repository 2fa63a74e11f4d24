#!/bin/sh
# tf-serve through curl: every endpoint, answers in JSON and as server-sent
# events, usage, stop strings, logprobs, n choices, then SIGTERM: the
# request in flight is answered in full and the server exits 0. The ids
# are held to tf-run's in t8004; here the text is held to tf-tok decode
# of tf-run's ids.
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-serve.sh"

command -v curl >/dev/null && command -v jq >/dev/null || skip_all "curl and jq are needed"

test_expect "--help names every option" "
	tf-serve --help >help &&
	for o in --port --host --parallel --ctx --api-key-file --queue --max-body --timeout --drain; do
		grep -q -- \"\$o\" help || exit 1
	done
"

serve_start S tf-serve $M -P 4 || skip_all "tf-serve did not start"
U=$S_URL
P=$(cat $M/prompt.ids | tr ' ' ,)

test_expect "it listens on 127.0.0.1 by default and says where" "
	echo '$U' | grep -Eq '^http://127\.0\.0\.1:[0-9]+$'
"

test_expect "GET /health" "
	curl -sf $U/health >h && jq -e '.status == \"ok\"' h
"

test_expect "GET /v1/models lists the model by its folder's name" "
	curl -sf $U/v1/models >m &&
	jq -e '.object == \"list\" and (.data | length) == 1 and .data[0].id == \"shakespeare-q35\" and .data[0].object == \"model\"' m
"

tf-run -n 10 --ignore-eos $M $M/prompt.ids >g10.ids
tf-tok decode $M <g10.ids >g10.txt

test_expect "POST /v1/completions: a text prompt, greedy, as tf-run and tf-tok decode" "
	curl -sf $U/v1/completions -H 'Content-Type: application/json' \
		-d '{\"model\":\"shakespeare-q35\",\"prompt\":\"ROMEO:\\nI will\",\"max_tokens\":10,\"temperature\":0,\"ignore_eos\":true}' >c &&
	jq -e '.object == \"text_completion\" and .choices[0].finish_reason == \"length\"' c &&
	jq -j '.choices[0].text' c >c.txt && cmp c.txt g10.txt &&
	jq -e '.usage == {\"prompt_tokens\":4,\"completion_tokens\":10,\"total_tokens\":14}' c
"

test_expect "POST /v1/completions with stream: the same text in events, then [DONE]" "
	curl -sfN $U/v1/completions \
		-d '{\"prompt\":[$P],\"max_tokens\":10,\"temperature\":0,\"ignore_eos\":true,\"stream\":true,\"stream_options\":{\"include_usage\":true}}' >ev &&
	tail -2 ev | head -1 | grep -qx 'data: \\[DONE\\]' &&
	grep '^data: {' ev | sed 's/^data: //' >ev.json &&
	jq -s -e 'map(select(.choices | length > 0)) | last | .choices[0].finish_reason == \"length\"' ev.json &&
	jq -s -e 'last | .usage.completion_tokens == 10 and (.choices | length) == 0' ev.json &&
	jq -s -j 'map(.choices[0].text // empty) | join(\"\")' ev.json >ev.txt && cmp ev.txt g10.txt &&
	test \$(grep -c '^data: {' ev) -ge 3
"

test_expect "POST /v1/chat/completions: an assistant message, and usage counts the rendered prompt" "
	curl -sf $U/v1/chat/completions \
		-d '{\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Who are you?\"}],\"max_tokens\":6,\"temperature\":0,\"chat_template_kwargs\":{\"enable_thinking\":false}}' >ch &&
	jq -e '.object == \"chat.completion\" and .choices[0].message.role == \"assistant\" and (.choices[0].message.content | type) == \"string\"' ch &&
	printf '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nWho are you?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n' |
		tf-tok encode $M | wc -w >n &&
	jq -e \".usage.prompt_tokens == \$(cat n)\" ch
"

test_expect "POST /v1/chat/completions with stream: a role delta, content deltas, a finish, [DONE]" "
	curl -sfN $U/v1/chat/completions \
		-d '{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":5,\"temperature\":0,\"ignore_eos\":true,\"stream\":true}' >cev &&
	grep '^data: {' cev | sed 's/^data: //' >cev.json &&
	jq -s -e '.[0].object == \"chat.completion.chunk\" and .[0].choices[0].delta.role == \"assistant\"' cev.json &&
	jq -s -e 'last | .choices[0].finish_reason == \"length\"' cev.json &&
	tail -2 cev | head -1 | grep -qx 'data: \\[DONE\\]'
"

# thinking on, and this model never closes the block: the text is reasoning
test_expect "the streamed chat text equals the chat answer's" "
	curl -sf $U/v1/chat/completions -d '{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":5,\"temperature\":0,\"ignore_eos\":true}' >ca &&
	jq -j '.choices[0].message.reasoning_content' ca >a.txt && test -s a.txt &&
	jq -s -j 'map(.choices[0].delta.reasoning_content // empty) | join(\"\")' cev.json >b.txt &&
	cmp a.txt b.txt
"

test_expect "a stop string ends the text before it, finish_reason stop" "
	jq -r '.choices[0].text' c | head -c 9 >pre && test \"\$(cat pre)\" = ' be gone,' &&
	curl -sf $U/v1/completions -d '{\"prompt\":\"ROMEO:\\nI will\",\"max_tokens\":10,\"temperature\":0,\"stop\":[\"gone\",\"zzz\"]}' >st &&
	jq -e '.choices[0].text == \" be \" and .choices[0].finish_reason == \"stop\"' st
"

test_expect "a stop string that spans tokens is found, and never sent in events" "
	curl -sfN $U/v1/completions -d '{\"prompt\":\"ROMEO:\\nI will\",\"max_tokens\":10,\"temperature\":0,\"stop\":\"e gone, a\",\"stream\":true}' >sev &&
	grep '^data: {' sev | sed 's/^data: //' | jq -s -j 'map(.choices[0].text // empty) | join(\"\")' >sev.txt &&
	test \"\$(cat sev.txt)\" = ' b'
"

test_expect "logprobs: each token's, its alternatives, the drawn one the most likely when greedy" "
	curl -sf $U/v1/completions -d '{\"prompt\":[$P],\"max_tokens\":4,\"temperature\":0,\"logprobs\":3}' >lp &&
	jq -e '.choices[0].logprobs | (.tokens | length) == 4 and (.token_logprobs | length) == 4 and (.top_logprobs | length) == 4' lp &&
	jq -e '.choices[0].logprobs | [range(0; 4) as \$i | (.top_logprobs[\$i] | to_entries | max_by(.value).value) == .token_logprobs[\$i]] | all' lp &&
	jq -e '.choices[0].logprobs | [.token_logprobs[] | . <= 0] | all' lp &&
	jq -j '.choices[0].logprobs.tokens | join(\"\")' lp >lp.txt && jq -j '.choices[0].text' lp >lpt.txt && cmp lp.txt lpt.txt
"

test_expect "chat logprobs: top_logprobs of each token, with bytes" "
	curl -sf $U/v1/chat/completions -d '{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":3,\"temperature\":0,\"ignore_eos\":true,\"logprobs\":true,\"top_logprobs\":2}' >clp &&
	jq -e '.choices[0].logprobs.content | length == 3 and all(.[]; (.top_logprobs | length) == 2 and (.bytes | length) > 0)' clp
"

test_expect "n choices: n answers, counted in usage" "
	curl -sf $U/v1/completions -d '{\"prompt\":[$P],\"max_tokens\":6,\"temperature\":1,\"seed\":5,\"n\":3,\"ignore_eos\":true}' >n3 &&
	jq -e '(.choices | length) == 3 and ([.choices[].index] == [0,1,2]) and .usage.completion_tokens == 18' n3
"

test_expect "GET /metrics: Prometheus text with requests, tokens, queue, slots, tokens/s" "
	curl -sf $U/metrics >met &&
	grep -q '^# TYPE tf_serve_requests_total counter' met &&
	grep -Eq '^tf_serve_requests_total\\{endpoint=\"/v1/completions\"\\} [1-9]' met &&
	grep -Eq '^tf_serve_generated_tokens_total [1-9]' met &&
	grep -Eq '^tf_serve_queue_length 0$' met &&
	grep -Eq '^tf_serve_slots_in_use 0$' met &&
	grep -Eq '^tf_serve_slots_total 4$' met &&
	grep -Eq '^tf_serve_tokens_per_second [0-9.]+$' met
"

test_expect "an unknown path is 404 and a wrong method 405, with error objects" "
	test \$(curl -s -o e1 -w '%{http_code}' $U/v2/nothing) = 404 && jq -e '.error.message | test(\"/v2/nothing\")' e1 &&
	test \$(curl -s -o e2 -w '%{http_code}' $U/v1/completions) = 405 && jq -e '.error.type == \"invalid_request_error\"' e2 &&
	test \$(curl -s -o e3 -w '%{http_code}' -d '{}' $U/health) = 405
"

# SIGTERM while a request runs: it is answered in full, then the exit
curl -sfN $U/v1/completions -d '{"prompt":"ROMEO:","max_tokens":300,"temperature":0,"ignore_eos":true,"stream":true}' >long &
cpid=$!
i=0
while [ $i -lt 600 ] && ! grep -q '^data: {' long 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
serve_stop S
say_ok $? "SIGTERM with a request in flight: exit status 0"
wait $cpid
say_ok $? "the request in flight got its whole answer"
test_expect "... 300 tokens and [DONE]" "
	grep '^data: {' long | sed 's/^data: //' | jq -s -e 'map(select(.choices[0].finish_reason != null)) | .[0].choices[0].finish_reason == \"length\"' &&
	grep -qx 'data: \\[DONE\\]' long
"
test_expect "after the exit nothing listens" "
	! curl -s --max-time 5 $U/health
"

test_error "a model that cannot be loaded is an error at start" tf-serve "nope" tf-serve nope --port 0
serve_start B tf-serve $M || exit 1
test_error "a port in use is an error naming it" tf-serve "cannot listen on 127\.0\.0\.1 port [0-9]+: Address already in use" \
	tf-serve $M --port "${B_URL##*:}"
serve_stop B
printf 'k\n' >key && chmod 644 key
test_error "a key file others may read is refused" tf-serve "mode 0644.*chmod 600" tf-serve $M --api-key-file key --port 0
test_error "a missing key file is refused" tf-serve "cannot open the API key file 'nokey'" tf-serve $M --api-key-file nokey --port 0
: >empty && chmod 600 empty
test_error "an empty key file is refused" tf-serve "is empty" tf-serve $M --api-key-file empty --port 0

done_testing
