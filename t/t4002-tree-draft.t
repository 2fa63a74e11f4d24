#!/bin/sh
# tf-tree --draft: after each prompt the drafter's tree runs as a tree line
# of the input would. Its text form's "draft:" line, fed back as that tree
# line, gives the same nodes' logits, bit for bit as records and as the
# same text, and the same path kept; a drafter with nothing to propose
# runs no tree; bad drafters are errors and options that cannot go with
# --draft are usage errors. What the trees are is t/unit/draft.c's.
. "$(dirname "$0")/lib-tf.sh"

for M in tiny-q35 shakespeare-q35; do
	p=$DATA/$M
	# the prompt, then the prompt with its greedy continuation and the
	# prompt's first three ids again, which ngram finds earlier
	gen=$(tf-run -n 40 --ignore-eos $p $p/prompt.ids)
	{ cat $p/prompt.ids; echo "$(cat $p/prompt.ids) $gen $(cut -d" " -f1-3 $p/prompt.ids)"; } >in.ids
	for d in "ngram:2 3x4" "ngram off" "random:3 2x3"; do
		spec=${d% *} tree=${d#* }
		test_expect "$M, --draft $spec --draft-tree $tree: the draft line fed back runs the same tree" "
			tf-tree --draft $spec --draft-tree $tree --text 2 --commit best $p in.ids >drafted &&
			grep -q '^draft: [0-9]' drafted && test \$(grep -c '^draft:' drafted) = 2 &&
			awk '/^draft:/ { sub(/^draft: */, \"\"); d[++n] = \$0 } END { for (i = 1; i <= n; i++) print d[i] }' \
				drafted >lines &&
			paste -d '\\n' in.ids lines | awk 'NF' >fed &&
			tf-tree --text 2 --commit best $p fed >plain &&
			grep -v '^draft:' drafted | awk 'NF' >a && awk 'NF' plain >b && cmp a b &&
			tf-tree --draft $spec --draft-tree $tree --commit best -o drafted.rec $p in.ids &&
			tf-tree --commit best -o plain.rec $p fed && cmp drafted.rec plain.rec
		"
	done
done

M=$DATA/shakespeare-q35
test_expect "a prompt with nothing to look up: an empty draft line and no tree" "
	echo 1 2 3 | tf-tree --draft ngram --text 1 $M >o && printf 'draft:\n\n' | cmp - o &&
	echo 1 2 3 | tf-tree --draft ngram -o none.rec $M && ! test -s none.rec
"
test_error "an unknown drafter is named" tf-tree "no drafter 'nope'" tf-tree --draft nope $M $M/prompt.ids
test_error "a bad tree shape is named" tf-tree "bad draft tree '0x2'" \
	tf-tree --draft ngram --draft-tree 0x2 $M $M/prompt.ids
tf-tree --draft-tree 2x2 $M $M/prompt.ids >out 2>err
test $? = 2 && grep -q '^tf-tree: .*needs --draft' err
say_ok $? "--draft-tree without --draft is a usage error"
tf-tree --draft ngram --commit 0,1 $M $M/prompt.ids >out 2>err
test $? = 2 && grep -q '^tf-tree: .*--commit takes best with --draft' err
say_ok $? "--commit with node indices and --draft is a usage error"

done_testing
