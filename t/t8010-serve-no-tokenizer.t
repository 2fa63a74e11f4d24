#!/bin/sh
# tf-serve --no-tokenizer: a model that carries no tokenizer (a bundle of
# tf-pack --synth) is served by ids alone, as random weights are served
# for speed: completions of token ids answer tf-run's ids; a text prompt,
# stop strings and chat get 400 naming why. Without the option such a
# model is refused at start, with the option named.
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-serve.sh"

command -v curl >/dev/null && command -v jq >/dev/null || skip_all "curl and jq are needed"

tf-pack --synth $DATA/tiny-q35/config.json --bits 4 syn.tfb 2>/dev/null || skip_all "tf-pack --synth failed"
printf '5 17 2 99\n' >p.ids

test_error "a model without a tokenizer is refused, naming --no-tokenizer" tf-serve \
	"carries no tokenizer .*--no-tokenizer serves ids alone" tf-serve syn.tfb --port 0
test_expect "... and nothing went to stdout" "! test -s $TMP/.stdout"

serve_start S tf-serve syn.tfb -P 2 --no-tokenizer || skip_all "tf-serve did not start"
U=$S_URL

test_expect "a prompt of ids: tf-run's ids (greedy), the text empty" "
	tf-run -n 12 --ignore-eos syn.tfb p.ids >want &&
	curl -sf $U/v1/completions -d '{\"prompt\": [5, 17, 2, 99], \"max_tokens\": 12, \"ignore_eos\": true, \"return_token_ids\": true, \"temperature\": 0}' >g.json &&
	jq -r '.choices[0].token_ids | map(tostring) | join(\" \")' g.json >got && cmp got want &&
	jq -e '.choices[0].text == \"\" and .usage.completion_tokens == 12 and .usage.prompt_tokens == 4' g.json
"
test_expect "sampled at a seed, streamed: tf-run's ids" "
	tf-run -n 10 --ignore-eos --temp 0.9 --seed 4 syn.tfb p.ids >want &&
	curl -sfN $U/v1/completions -d '{\"prompt\": [5, 17, 2, 99], \"max_tokens\": 10, \"ignore_eos\": true, \"return_token_ids\": true, \"temperature\": 0.9, \"seed\": 4, \"stream\": true}' |
	grep '^data: {' | sed 's/^data: //' | jq -s -r 'map(.choices[0].token_ids // []) | add | map(tostring) | join(\" \")' >got &&
	cmp got want
"
# refused STATUS PARAM BODY [ENDPOINT]: the status and an error naming PARAM
refused() {
	code=$(curl -s -o err.json -w '%{http_code}' "$U${4:-/v1/completions}" -d "$3") &&
	test "$code" = "$1" && jq -e --arg p "$2" '(.error.param // "") == $p and (.error.message | test("tokenizer"))' err.json ||
	{ echo "status $code"; cat err.json; return 1; }
}
test_expect "a text prompt: 400 naming the prompt and the missing tokenizer" "refused 400 prompt '{\"prompt\": \"hello\"}'"
test_expect "stop strings: 400 naming stop" "refused 400 stop '{\"prompt\": [1, 2], \"stop\": [\"x\"]}'"
test_expect "an empty list of stop strings is fine" "
	curl -sf $U/v1/completions -d '{\"prompt\": [1, 2], \"max_tokens\": 2, \"stop\": []}' | jq -e '.usage.completion_tokens >= 1'
"
test_expect "chat: 400, no tokenizer to render the turns" "refused 400 '' '{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}' /v1/chat/completions"
test_expect "logprobs come with empty token strings" "
	curl -sf $U/v1/completions -d '{\"prompt\": [5, 17], \"max_tokens\": 3, \"ignore_eos\": true, \"logprobs\": 2}' |
	jq -e '.choices[0].logprobs.token_logprobs | length == 3'
"
serve_stop S
say_ok $? "SIGTERM: exit status 0"

done_testing
