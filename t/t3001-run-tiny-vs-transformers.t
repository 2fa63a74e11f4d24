#!/bin/sh
# tf-run on the random tiny Qwen3.5 against transformers' fp32 logits
. "$(dirname "$0")/lib-tf.sh"
M=$DATA/tiny-q35

test_expect 'prompt logits of all 48 rows within 1e-3 of transformers, same top-1' '
	tf-run --raw $M $M/prompt.ids >p.f32 &&
	test $(wc -c <p.f32) = $((48 * 1024 * 4)) &&
	tf-gate --raw 1024 --max-abs 1e-3 --top1 1 p.f32 $M/prompt.logits.f32
'

test_expect 'records hold the same floats as --raw, behind a 48-byte header' '
	tf-run $M $M/prompt.ids >p.rec &&
	tail -c +49 p.rec >payload &&
	cmp payload p.f32
'

test_expect '32 greedy tokens equal transformers greedy32.ids' '
	tf-run -n 32 --ignore-eos $M $M/prompt.ids >g.ids &&
	diff g.ids $M/greedy32.ids
'

test_expect 'step mode gives the same 32 greedy tokens' '
	tf-run -n 32 --ignore-eos --mode step $M $M/prompt.ids >gs.ids &&
	diff gs.ids $M/greedy32.ids
'

test_expect '--last writes only the last row of each sequence' '
	tf-run --raw --last $M $M/prompt.ids >last.f32 &&
	tail -c 4096 p.f32 >want &&
	cmp last.f32 want
'

test_expect 'two sequences on two lines are independent' '
	{ cat $M/prompt.ids; cat $M/prompt.ids; } >two.ids &&
	tf-run --raw $M two.ids >two.f32 &&
	cat p.f32 p.f32 | cmp - two.f32
'

test_expect '--text K lists the top K ids of each row, best first' '
	tf-run --text 3 $M $M/prompt.ids >top.txt &&
	test $(wc -l <top.txt) = 48 &&
	head -1 top.txt | grep -Eq "^0: [0-9]+ [-0-9.e]+ [0-9]+ [-0-9.e]+ [0-9]+ [-0-9.e]+$"
'

done_testing
