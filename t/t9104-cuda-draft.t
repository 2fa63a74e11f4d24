#!/bin/sh
# tf-run --draft on the GPU: drafted trees verified in one pass there, and
# the ids are those of the plain GPU decode, greedy and sampled, with the
# ngram drafter (chain and tree) and random drafts, alone and with -P 4,
# on the bf16, 1-bit and 4-bit models.
. "$(dirname "$0")/lib-tf.sh"

if ! tf-run --device cuda $DATA/tiny-q35 </dev/null >/dev/null 2>err; then
	grep -Eq 'no CUDA|without CUDA|no CUDA support' err && skip_all "no CUDA device"
fi

tr ' ' '\n' <$DATA/shakespeare-q35/val4096.ids | awk 'NF' | awk '
	{ id[NR] = $1 }
	END { line(1, 64); line(300, 200); line(900, 9) }
	function line(a, n,   i) { for (i = 0; i < n; i++) printf "%s%d", (i ? " " : ""), id[a + i]; print "" }' >p.ids
tf-pack -q --bits 4 $DATA/shakespeare-q35 q4.tfb

for M in $DATA/shakespeare-q35 $DATA/shakespeare-q35-1bit q4.tfb; do
	name=$(basename $M)
	for S in "" "--temp 0.7 --top-k 40 --seed 3"; do
		kind=${S:+sampled}
		kind=${kind:-greedy}
		tf-run --device cuda -n 48 --ignore-eos $S $M p.ids >plain
		for D in "ngram" "ngram:2 --draft-tree 4x3" "random:5 --draft-tree 3x3"; do
			test_expect "$name, $kind, --draft $D: the plain decode's ids" "
				tf-run --device cuda -n 48 --ignore-eos $S --draft $D $M p.ids >d1 && cmp plain d1 &&
				tf-run --device cuda -n 48 --ignore-eos $S -P 4 --draft $D $M p.ids >d4 && cmp plain d4
			"
		done
	done
done

done_testing
