#!/bin/sh
# tf-serve --draft mtp: several requests at once, drafted by the model's
# own MTP head (a cache of its own for each request), get the ids tf-run
# gives their prompts without a draft, greedy and sampled; a model without
# the head stops it at start with the reason.
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-serve.sh"

M=$DATA/shakespeare-q35-mtp
tr ' ' '\n' <$M/val4096.ids | awk 'NF' | awk '
	{ id[NR] = $1 }
	END { for (a = 1; a <= 5; a++) { for (i = 0; i < 20 * a; i++) printf "%s%d", (i ? " " : ""), id[a * 500 + i]; print "" } }' >lines.ids
tf-run -n 32 --ignore-eos $M lines.ids >greedy.want
while IFS= read -r line; do
	echo "$line" | tf-run -n 32 --ignore-eos --temp 1 --top-k 50 --seed 7 $M - >>sampled.want
done <lines.ids

serve_start S tf-serve $M -P 4 --draft mtp || skip_all "tf-serve --draft mtp did not start"
test_expect "greedy answers drafted by the head are tf-run's" "
	$PY $TF_ROOT/t/helper/serve-ask.py $S_URL 32 <lines.ids >greedy.got && cmp greedy.got greedy.want
"
test_expect "sampled answers drafted by the head are tf-run's" "
	$PY $TF_ROOT/t/helper/serve-ask.py $S_URL 32 7 <lines.ids >sampled.got && cmp sampled.got sampled.want
"
serve_stop S
say_ok $? "it stops cleanly"

S=$DATA/shakespeare-q35
test_error "a model without a head stops it at start" tf-serve "drafter 'mtp': the model has no MTP head" \
	tf-serve $S --port 0 --draft mtp

done_testing
