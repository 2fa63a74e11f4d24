#!/bin/sh
# Step mode (one token at a time through the caches) against prompt mode
# (the whole prompt in one pass, chunked delta rule) on the same ids.
. "$(dirname "$0")/lib-tf.sh"

for M in tiny-q35 shakespeare-q35; do
	# 200 ids: more than three chunks of the delta rule, and a partial one
	tr ' ' '\n' <$DATA/shakespeare-q35/val4096.ids | awk 'NF' | head -200 |
		awk -v v=$(grep -o '"vocab_size": [0-9]*' $DATA/$M/config.json | grep -o '[0-9]*$') \
		'{ printf "%s%d", (NR > 1 ? " " : ""), $1 % v } END { print "" }' >ids.$M
	test_expect "$M: step and prompt logits agree within 1e-4 over 200 positions" "
		tf-run --raw --mode prompt $DATA/$M ids.$M >prompt.f32 &&
		tf-run --raw --mode step $DATA/$M ids.$M >step.f32 &&
		test \$(wc -c <step.f32) -gt 0 &&
		tf-gate --raw \$(grep -o '\"vocab_size\": [0-9]*' $DATA/$M/config.json | grep -o '[0-9]*\$') \
			--max-abs 1e-4 --top1 1 prompt.f32 step.f32
	"
done

done_testing
