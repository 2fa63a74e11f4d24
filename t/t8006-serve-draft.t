#!/bin/sh
# tf-serve --draft: speculative decoding never changes an answer. With the
# ngram drafter as a chain and as a tree, and with a drafter of random
# ids (nothing it proposes is right), several requests at once get the
# ids tf-run gives their prompts, and the ids of the server without a
# draft: greedy and sampled at a seed, n choices, streamed, at short
# max_tokens, ended by an end id placed where drafts run across it (the
# model's end id moved to an id its greedy answer draws early), chat
# turns (whose end id is a stop id), and with logprobs (those step
# without drafts). /metrics shows that the ngram
# drafts were taken, so the exactness covers accepted drafts and not only
# rejected ones. Bad drafters and tree shapes stop it at start.
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-serve.sh"
. "$T_DIR/lib-streams.sh"

command -v curl >/dev/null && command -v jq >/dev/null || skip_all "curl and jq are needed"

# prompts of 48, 300 (past a 256-id chunk), 48, 3 and 70 ids, and ROMEO's
{ stream_lines 2048 | awk NF; cat $M/prompt.ids; } >lines.ids
sed -n 2p lines.ids >long.ids
sed -n 1p lines.ids >mid.ids

# the model with an end id the greedy answer to long.ids draws early (its
# 17th id, at its first place): answers end where drafts run across it
e=$(tf-run -n 17 --ignore-eos $M long.ids | awk '{ print $17 }')
cp -r $M m && chmod -R u+w m
$PY -c '
import json, sys
for f in ("m/config.json", "m/generation_config.json"):
    c = json.load(open(f)); c["eos_token_id"] = int(sys.argv[1]); json.dump(c, open(f, "w"))' $e

# tf-run's answers: greedy for all lines; sampled (temperature 1, top-k
# 50, seed 7) for each line alone, its sequence 0, as each request is;
# n 3 (the prompt on three lines); short; streamed; ended by the end id
tf-run -n 32 --ignore-eos m lines.ids >greedy.want
while IFS= read -r line; do
	echo "$line" | tf-run -n 32 --ignore-eos --temp 1 --top-k 50 --seed 7 m - >>sampled.want
done <lines.ids
cat long.ids long.ids long.ids >three.ids
tf-run -n 24 --ignore-eos --temp 0.7 --top-p 0.9 --seed 3 m three.ids >n3.want
for n in 1 2 3 4 5 6 7 8 9; do
	tf-run -n $n --ignore-eos m mid.ids >short$n.want
done
tf-run -n 40 --ignore-eos --temp 0.8 --seed 21 m long.ids >stream.want
tf-run -n 64 m long.ids >end.want
tf-run -n 64 --temp 0.7 --seed 2 m long.ids >end-sampled.want
tf-run -n 16 --ignore-eos --temp 1 --seed 4 m long.ids >lp.want
test_expect "tf-run's answers to hold the servers to; the end id ends the greedy one early" "
	test \$(wc -l <greedy.want) = 6 && test \$(wc -l <sampled.want) = 6 && test \$(wc -l <n3.want) = 3 &&
	test \$(wc -w <end.want) -lt 17
"

serve_start S0 tf-serve m -P 8 || skip_all "tf-serve did not start"
serve_start S1 tf-serve m -P 8 --draft ngram || skip_all "tf-serve --draft ngram did not start"
serve_start S2 tf-serve m -P 8 --draft ngram:2 --draft-tree 4x6 || skip_all "tf-serve --draft-tree did not start"
serve_start S3 tf-serve m -P 8 --draft random:5 --draft-tree 3x3 || skip_all "tf-serve --draft random did not start"

# ask URL N SETTINGS [IDS]: a completion of the prompt ids of long.ids
# (or IDS); its ids
ask() {
	curl -sf $1/v1/completions -d "{\"prompt\": [$(tr ' ' , <${4:-long.ids})], \"max_tokens\": $2, \"return_token_ids\": true $3}" |
		jq -r '.choices | sort_by(.index) | .[].token_ids | map(tostring) | join(" ")'
}

# chat URL: the ids of a sampled chat answer
chat() {
	curl -sf $1/v1/chat/completions -d '{"messages": [{"role": "user", "content": "Speak, ROMEO."}], "max_tokens": 48, "temperature": 0.9, "seed": 5, "return_token_ids": true}' |
		jq -r '.choices[0].token_ids | map(tostring) | join(" ")'
}
test_expect "the undrafted server's chat answer, the reference" "chat $S0_URL >chat.S0 && test -s chat.S0"

for s in S0 S1 S2 S3; do
	eval "U=\$${s}_URL"
	case $s in
	S0) what="without a draft" ;;
	S1) what="--draft ngram" ;;
	S2) what="--draft ngram:2 --draft-tree 4x6" ;;
	S3) what="--draft random:5 --draft-tree 3x3" ;;
	esac
	test_expect "$what: six greedy requests at once get tf-run's ids" "
		serve-ask.py $U 32 <lines.ids >g.$s && cmp g.$s greedy.want
	"
	test_expect "$what: six requests sampled at seed 7 at once get tf-run's ids" "
		serve-ask.py $U 32 7 <lines.ids >s.$s && cmp s.$s sampled.want
	"
	test_expect "$what: n 3 at temperature 0.7, top_p 0.9: tf-run's sequences 0 to 2" "
		ask $U 24 ', \"ignore_eos\": true, \"temperature\": 0.7, \"top_p\": 0.9, \"seed\": 3, \"n\": 3' >got &&
		cmp got n3.want
	"
	test_expect "$what: max_tokens 1 to 9, each tf-run's and never more" "
		for n in 1 2 3 4 5 6 7 8 9; do
			ask $U \$n ', \"ignore_eos\": true, \"temperature\": 0' mid.ids >got && cmp got short\$n.want || exit 1
		done
	"
	test_expect "$what: streamed, the events' ids are tf-run's" "
		curl -sfN $U/v1/completions -d '{\"prompt\": [$(tr ' ' , <long.ids)], \"max_tokens\": 40, \"ignore_eos\": true, \"return_token_ids\": true, \"temperature\": 0.8, \"seed\": 21, \"stream\": true}' |
			grep '^data: {' | sed 's/^data: //' |
			jq -s -r 'map(.choices[0].token_ids // []) | add | map(tostring) | join(\" \")' >got &&
		cmp got stream.want
	"
	test_expect "$what: the end id ends answers where it ends tf-run's, greedy and sampled" "
		ask $U 64 ', \"temperature\": 0' >got && cmp got end.want &&
		ask $U 64 ', \"temperature\": 0.7, \"seed\": 2' >got && cmp got end-sampled.want
	"
	test_expect "$what: with logprobs, the same ids and a log-probability each" "
		curl -sf $U/v1/completions -d '{\"prompt\": [$(tr ' ' , <long.ids)], \"max_tokens\": 16, \"ignore_eos\": true, \"return_token_ids\": true, \"temperature\": 1, \"seed\": 4, \"logprobs\": 2}' >lp.json &&
		jq -e '.choices[0].logprobs.token_logprobs | length == 16 and all(. <= 0)' lp.json &&
		jq -r '.choices[0].token_ids | map(tostring) | join(\" \")' lp.json >got && cmp got lp.want
	"
	# a chat turn's end (<|im_end|>) is a stop id: the server without a
	# draft is the reference
	test $s = S0 && continue
	test_expect "$what: a chat answer's ids are the undrafted server's" "
		chat $U >chat.$s && cmp chat.$s chat.S0
	"
done

test_expect "the ngram drafts were taken: accepted ids in /metrics" "
	test \$(metric $S1_URL tf_serve_draft_accepted_tokens_total) -gt 0 &&
	test \$(metric $S2_URL tf_serve_draft_accepted_tokens_total) -gt 0
"
test_expect "the random drafts were verified, and the undrafted server drafted nothing" "
	test \$(metric $S3_URL tf_serve_draft_passes_total) -gt 0 &&
	test \$(metric $S0_URL tf_serve_draft_passes_total) = 0
"
test_expect "every slot is free again" "
	for u in $S0_URL $S1_URL $S2_URL $S3_URL; do wait_metric \$u tf_serve_slots_in_use 0 || exit 1; done
"
for s in S0 S1 S2 S3; do
	serve_stop $s
	say_ok $? "$s: SIGTERM, exit status 0"
done

test_error "an unknown drafter stops it at start" tf-serve "no drafter 'nope': not ngram\[:N\], mtp\[:K\] or random\[:SEED\]" \
	tf-serve --port 0 --draft nope $M
test_error "ngram:0 is no n-gram" tf-serve "bad drafter 'ngram:0': ngram:N takes an n-gram of 1 to 64 ids" \
	tf-serve --port 0 --draft ngram:0 $M
test_error "random:x is no seed" tf-serve "bad drafter 'random:x'" tf-serve --port 0 --draft random:x $M
test_error "a bad tree shape stops it at start" tf-serve "bad draft tree '0x3'" \
	tf-serve --port 0 --draft ngram --draft-tree 0x3 $M
test_error "a tree of more nodes than a pass takes" tf-serve "bad draft tree '32x64': 2049 nodes" \
	tf-serve --port 0 --draft ngram --draft-tree 32x64 $M
test_expect "a bad drafter is found before the model loads: a missing model is not named" "
	tf-serve --port 0 --draft nope no/such/model 2>err; test \$? = 1 && grep -q \"no drafter 'nope'\" err &&
	! grep -q no/such/model err
"
test_expect "--draft-tree without --draft is a usage error" "
	tf-serve --port 0 --draft-tree 2x2 $M >out 2>err; test \$? = 2 && grep -q '^tf-serve: ' err && ! test -s out
"
test_expect "-h names --draft and --draft-tree" '
	tf-serve -h | grep -q -- "--draft SPEC" && tf-serve -h | grep -q -- "--draft-tree SHAPE"
'

done_testing
