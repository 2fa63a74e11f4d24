#!/bin/sh
# tf-run with yarn rope against transformers: tiny-q35's weights with
# rope_parameters of rope_type yarn (factor 4 over an original context of
# 64) and a prompt of 128 ids, twice that context, scored by transformers
# in fp32 (t/helper/yarn-fixture.py). The same weights with plain rope miss
# those logits, so the scaling is what is tested; a rope_type the CPU does
# not compute is refused, never read as plain rope.
. "$(dirname "$0")/lib-tf.sh"
M=$DATA/tiny-q35-yarn

test_expect 'yarn prompt logits of all 128 rows within 1e-3 of transformers, same top-1' '
	tf-run --raw $M $M/prompt.ids >p.f32 &&
	test $(wc -c <p.f32) = $((128 * 1024 * 4)) &&
	tf-gate --raw 1024 --max-abs 1e-3 --top1 1 p.f32 $M/prompt.logits.f32
'

test_expect 'step mode within the same bound' '
	tf-run --raw --mode step $M $M/prompt.ids >s.f32 &&
	tf-gate --raw 1024 --max-abs 1e-3 --top1 1 s.f32 $M/prompt.logits.f32
'

# the folder with its config changed, the weights linked
with_rope() {
	mkdir -p "$1" && ln -sf "$M/model.safetensors" "$1/model.safetensors" &&
	sed "s/\"rope_type\": \"yarn\"/\"rope_type\": \"$2\"/" $M/config.json >"$1/config.json"
}

test_expect 'the same weights with plain rope are far from those logits' '
	with_rope plain default &&
	tf-run --raw plain $M/prompt.ids >d.f32 &&
	! tf-gate --raw 1024 --max-abs 1e-2 d.f32 $M/prompt.logits.f32 >/dev/null
'

with_rope linear linear
test_error 'rope_type linear is refused with its name' tf-run "rope_type 'linear' is not supported" \
	tf-run --raw linear $M/prompt.ids

with_rope dyn dynamic
test_error 'rope_type dynamic is refused with its name' tf-run "rope_type 'dynamic' is not supported" \
	tf-run --raw dyn $M/prompt.ids

done_testing
