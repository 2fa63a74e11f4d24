#!/bin/sh
# A request's ids equal tf-run's for the same prompt ids, sampling settings
# and seed, whatever else the server is doing: checked while four other
# streams run beside it (long, sampled, with logprobs, one taking in a
# 900-id prompt a chunk a round). A lone prompt is tf-run's sequence 0;
# choice i of n is its sequence i (the prompt on n lines).
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-serve.sh"

command -v curl >/dev/null && command -v jq >/dev/null || skip_all "curl and jq are needed"

tr ' ' '\n' <$M/val4096.ids | awk 'NF' | awk '
	{ id[NR] = $1 }
	END { line(1, 600); line(700, 900); line(2000, 33) }
	function line(a, n,   i) { for (i = 0; i < n; i++) printf "%s%d", (i ? " " : ""), id[a + i]; print "" }' >p.ids
sed -n 1p p.ids >long.ids
sed -n 3p p.ids >short.ids
cp $M/prompt.ids prompt.ids

long_model long 16384
serve_start S tf-serve long -P 8 --ctx 16384 || skip_all "tf-serve did not start"
U=$S_URL

# the others: four streams for the whole test (cut when it ends)
for k in 1 2 3 4; do
	case $k in
	1) body="{\"prompt\": [$(tr ' ' , <short.ids)], \"max_tokens\": 15000, \"temperature\": 1, \"seed\": $k, \"ignore_eos\": true, \"stream\": true}" ;;
	2) body="{\"prompt\": \"To be, or not\", \"max_tokens\": 15000, \"temperature\": 0.7, \"top_p\": 0.9, \"ignore_eos\": true, \"stream\": true, \"logprobs\": 5}" ;;
	3) body="{\"prompt\": [$(sed -n 2p p.ids | tr ' ' ,)], \"max_tokens\": 15000, \"temperature\": 0, \"ignore_eos\": true, \"stream\": true}" ;;
	4) body="{\"messages\": [{\"role\": \"user\", \"content\": \"Speak.\"}], \"max_tokens\": 15000, \"ignore_eos\": true, \"stream\": true}" ;;
	esac
	ep=/v1/completions
	[ $k = 4 ] && ep=/v1/chat/completions
	curl -sN $U$ep -d "$body" >other$k &
	eval "o$k=\$!"
done
test_expect "four other streams run" "wait_metric $U tf_serve_slots_in_use 4"

# ask NAME IDS N SETTINGS: the ids the server draws for IDS's first line
ask() {
	curl -sf $U/v1/completions -d "{\"prompt\": [$(head -1 $2 | tr ' ' ,)], \"max_tokens\": $3, \"ignore_eos\": true, \"return_token_ids\": true $4}" >$1.json &&
	jq -r '.choices[0].token_ids | map(tostring) | join(" ")' $1.json >$1.got
}

test_expect "greedy: the ids of tf-run -n 32" "
	tf-run -n 32 --ignore-eos $M prompt.ids >want && ask g prompt.ids 32 ', \"temperature\": 0' && cmp g.got want
"
test_expect "sampled at a seed: the ids of tf-run --temp 0.8 --top-p 0.95 --seed 11" "
	tf-run -n 32 --ignore-eos --temp 0.8 --top-p 0.95 --seed 11 $M prompt.ids >want &&
	ask s prompt.ids 32 ', \"temperature\": 0.8, \"top_p\": 0.95, \"seed\": 11' && cmp s.got want
"
test_expect "sampled with top_k at seed 0: the ids of tf-run --temp 1.3 --top-k 7" "
	tf-run -n 32 --ignore-eos --temp 1.3 --top-k 7 $M prompt.ids >want &&
	ask k prompt.ids 32 ', \"temperature\": 1.3, \"top_k\": 7, \"seed\": 0' && cmp k.got want
"
test_expect "a 600-id prompt (three chunks), sampled: tf-run's ids" "
	tf-run -n 20 --ignore-eos --temp 1 --seed 3 $M long.ids >want &&
	ask l long.ids 20 ', \"temperature\": 1, \"seed\": 3' && cmp l.got want
"
test_expect "a different seed draws differently (the seed is used)" "
	ask d prompt.ids 32 ', \"temperature\": 0.8, \"top_p\": 0.95, \"seed\": 12' && ! cmp -s d.got s.got
"
test_expect "n 3 at a seed: choice i is tf-run's sequence i of three identical lines" "
	cat prompt.ids prompt.ids prompt.ids >three.ids &&
	tf-run -n 16 --ignore-eos --temp 1 --seed 5 $M three.ids >want &&
	curl -sf $U/v1/completions -d '{\"prompt\": [$(tr ' ' , <prompt.ids)], \"max_tokens\": 16, \"ignore_eos\": true, \"return_token_ids\": true, \"temperature\": 1, \"seed\": 5, \"n\": 3}' |
		jq -r '.choices | sort_by(.index) | .[].token_ids | map(tostring) | join(\" \")' >n3.got &&
	cmp n3.got want
"
test_expect "streamed: the events' ids are tf-run's" "
	tf-run -n 24 --ignore-eos --temp 0.8 --seed 21 $M short.ids >want &&
	curl -sfN $U/v1/completions -d '{\"prompt\": [$(tr ' ' , <short.ids)], \"max_tokens\": 24, \"ignore_eos\": true, \"return_token_ids\": true, \"temperature\": 0.8, \"seed\": 21, \"stream\": true}' |
		grep '^data: {' | sed 's/^data: //' | jq -s -r 'map(.choices[0].token_ids // []) | add | map(tostring) | join(\" \")' >st.got &&
	cmp st.got want
"
test_expect "end ids end the answer as they end tf-run's (no ignore_eos)" "
	tf-run -n 200 $M short.ids >want &&
	curl -sf $U/v1/completions -d '{\"prompt\": [$(tr ' ' , <short.ids)], \"max_tokens\": 200, \"return_token_ids\": true, \"temperature\": 0}' >e.json &&
	jq -r '.choices[0].token_ids | map(tostring) | join(\" \")' e.json >e.got && cmp e.got want
"
test_expect "the four others still ran all along" "
	test \$(metric $U tf_serve_slots_in_use) -ge 4 &&
	for k in 1 2 3 4; do test \$(grep -c '^data: {' other\$k) -gt 10 || exit 1; done
"
kill $o1 $o2 $o3 $o4
wait $o1 $o2 $o3 $o4 2>/dev/null
test_expect "their clients gone, every slot is free" "wait_metric $U tf_serve_slots_in_use 0"
serve_stop S
say_ok $? "SIGTERM: exit status 0"

done_testing
