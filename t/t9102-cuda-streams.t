#!/bin/sh
# tf-run -P on the GPU: every line of -P 8 and -P 3 equals the line of
# -P 1 and the line of the sequence run alone, greedy and sampled, on the
# bf16, 1-bit and 4-bit models, with lines of 48, 300 (past a prompt chunk
# of 256 and the delta rule's chunks of 64), 3 and 70 ids and empty lines
# among them; the CPU's lines within tf-gate's bounds are t3010's.
. "$(dirname "$0")/lib-tf.sh"

if ! tf-run --device cuda $DATA/tiny-q35 </dev/null >/dev/null 2>err; then
	grep -Eq 'no CUDA|without CUDA|no CUDA support' err && skip_all "no CUDA device"
fi

. "$T_DIR/lib-streams.sh"
stream_lines 1024 >tiny.ids
stream_lines 2048 >sh.ids
tf-pack -q --bits 4 $DATA/shakespeare-q35 q4.tfb

for M in $DATA/tiny-q35 $DATA/shakespeare-q35 $DATA/shakespeare-q35-1bit q4.tfb; do
	ids=sh.ids
	case $M in *tiny-q35) ids=tiny.ids ;; esac
	name=$(basename $M)
	test_expect "$name: -P 8 and -P 3 write the lines of -P 1, greedy" "
		tf-run --device cuda -n 24 --ignore-eos -P 1 $M $ids >p1 &&
		tf-run --device cuda -n 24 --ignore-eos -P 8 $M $ids >p8 &&
		tf-run --device cuda -n 24 --ignore-eos -P 3 $M $ids >p3 &&
		test \$(wc -l <p1) = 7 && cmp p1 p8 && cmp p1 p3
	"
	test_expect "$name: -P 8 writes the lines of -P 1, sampled" "
		tf-run --device cuda -n 24 --ignore-eos --temp 1 --top-k 50 --seed 9 -P 1 $M $ids >s1 &&
		tf-run --device cuda -n 24 --ignore-eos --temp 1 --top-k 50 --seed 9 -P 8 $M $ids >s8 &&
		cmp s1 s8
	"
	test_expect "$name: a line of -P 8 is the line of its sequence alone" "
		while IFS= read -r l; do
			if [ -z \"\$l\" ]; then echo; else echo \"\$l\" | tf-run --device cuda -n 24 --ignore-eos $M; fi
		done <$ids >alone &&
		cmp p8 alone
	"
done

done_testing
