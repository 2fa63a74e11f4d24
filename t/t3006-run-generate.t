#!/bin/sh
# Generation options: end-of-sequence ids, sampling, streaming.
. "$(dirname "$0")/lib-tf.sh"
M=$DATA/tiny-q35

cp -r $M m && chmod -R u+w m
fifth=$(cut -d' ' -f5 $M/greedy32.ids)
python3 -c '
import json, sys
c = json.load(open("m/config.json")); c["eos_token_id"] = None
json.dump(c, open("m/config.json", "w"))
g = json.load(open("m/generation_config.json")); g["eos_token_id"] = [5000, int(sys.argv[1])]
json.dump(g, open("m/generation_config.json", "w"))' $fifth

test_expect 'generation stops before an eos id of generation_config.json' '
	tf-run -n 32 m $M/prompt.ids >g.ids &&
	cut -d" " -f1-4 $M/greedy32.ids | diff - g.ids
'
test_expect '--ignore-eos goes on to the full count' '
	tf-run -n 32 --ignore-eos m $M/prompt.ids | diff - $M/greedy32.ids
'
test_expect '--stream writes the same ids, each followed by a space' '
	tf-run -n 32 --ignore-eos --stream $M $M/prompt.ids >s.ids &&
	test "$(cat s.ids)" = "$(cat $M/greedy32.ids) "
'
test_expect 'sampling with a seed repeats itself' '
	tf-run -n 32 --ignore-eos --temp 1 --seed 7 $M $M/prompt.ids >a.ids &&
	tf-run -n 32 --ignore-eos --temp 1 --seed 7 $M $M/prompt.ids >b.ids &&
	cmp a.ids b.ids && test $(wc -w <a.ids) = 32
'
test_expect 'another seed gives another sample' '
	tf-run -n 32 --ignore-eos --temp 1 --seed 8 $M $M/prompt.ids >c.ids &&
	! cmp -s a.ids c.ids
'
test_expect 'top-k 1 at any temperature is greedy' '
	tf-run -n 32 --ignore-eos --temp 5 --top-k 1 --seed 3 $M $M/prompt.ids | diff - $M/greedy32.ids
'
test_expect 'a tiny top-p is greedy' '
	tf-run -n 32 --ignore-eos --temp 1 --top-p 0.000001 --seed 3 $M $M/prompt.ids | diff - $M/greedy32.ids
'
test_expect 'each input line gets its own output line' '
	{ cat $M/prompt.ids; cat $M/prompt.ids; } | tf-run -n 4 --ignore-eos $M >two.ids &&
	test $(wc -l <two.ids) = 2 && test "$(sed -n 1p two.ids)" = "$(sed -n 2p two.ids)"
'

done_testing
