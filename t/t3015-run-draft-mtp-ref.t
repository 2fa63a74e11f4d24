#!/bin/sh
# tf-run --draft mtp's drafts against mtp-ref.py, the draft step in torch
# and transformers alone (the model's hidden states from transformers'
# forward, the head from train-mtp.py): for held-out prompts, every
# proposal of chains of 1, 3 and 5 ids, through a whole greedy run, is the
# reference's, id for id. Skipped where torch or transformers is missing.
. "$(dirname "$0")/lib-tf.sh"

python3 -c 'import torch, transformers' 2>/dev/null || skip_all "no torch and transformers"
M=$DATA/shakespeare-q35-mtp
tr ' ' '\n' <$M/val4096.ids | awk 'NF' | sed -n 1000,1023p | xargs >p1.ids
tr ' ' '\n' <$M/val4096.ids | awk 'NF' | sed -n 3001,3040p | xargs >p2.ids
cp $M/prompt.ids p3.ids

for p in p1 p2 p3; do
	tf-run -n 48 --ignore-eos $M $p.ids >$p.greedy || exit 1
	for k in 1 3 5; do
		test_expect "$p: the drafts of mtp:$k are the reference's" "
			TF_TEST_DRAFTS=ours tf-run -n 48 --ignore-eos --draft mtp:$k $M $p.ids >got &&
			cmp got $p.greedy &&
			python3 $TF_ROOT/t/helper/mtp-ref.py $M $p.ids $p.greedy $k >ref 2>err &&
			test -s ref && diff ours ref
		"
		rm -f ours
	done
done

done_testing
