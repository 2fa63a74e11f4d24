#!/bin/sh
# The Shakespeare model and its 1-bit twin against transformers' references:
# prompt logits, greedy text and held-out perplexity.
. "$(dirname "$0")/lib-tf.sh"

for name in shakespeare-q35 shakespeare-q35-1bit; do
	M=$DATA/$name
	test_expect "$name: prompt logits within 1e-3 of transformers" "
		tf-run --raw $M $M/prompt.ids >p.f32 &&
		tf-gate --raw 2048 --max-abs 1e-3 --top1 1 p.f32 $M/prompt.logits.f32
	"
	# All 64 must match: along both greedy paths the smallest lead of the
	# chosen id over the runner-up is 0.0055 logits (0.023 for the 1-bit
	# twin), over five times the 1e-3 error allowed above, so no near-tie
	# can flip a token and any difference is a real fault.
	test_expect "$name: 64 greedy tokens equal greedy64.ids" "
		tf-run -n 64 $M $M/prompt.ids >g.ids &&
		diff g.ids $M/greedy64.ids
	"
	# reference.json: val4096.ids as 4 independent sequences of 1024 tokens,
	# every token after the first of its sequence scored
	test_expect "$name: held-out perplexity within 0.5% of val4096_ppl" "
		tr ' ' '\n' <$M/val4096.ids | awk 'NF' |
			awk '{ printf \"%s%s\", (NR - 1) % 1024 ? \" \" : \"\", \$1 } NR % 1024 == 0 { print \"\" }' >val.ids &&
		test \$(wc -l <val.ids) = 4 &&
		tf-run $M val.ids >val.rec &&
		want=\$(grep -o '\"val4096_ppl\": [0-9.]*' $M/reference.json | grep -o '[0-9.]*\$') &&
		tf-gate --json --targets val.ids val.rec >ppl.json &&
		python3 -c 'import json,sys; p = json.load(open(\"ppl.json\"))[\"ppl_a\"]; w = float(sys.argv[1]); print(p, w); sys.exit(abs(p - w) / w > 0.005)' \$want
	"
done

done_testing
