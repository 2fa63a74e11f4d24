#!/bin/sh
# The same weights under every tensor-name flavour and in shards give the
# same logits, bit for bit.
. "$(dirname "$0")/lib-tf.sh"
M=$DATA/tiny-q35

tf-run --raw $M $M/prompt.ids >want.f32
for f in multimodal mlxnames sharded; do
	test_expect "$f layout: the same logits bit for bit" "
		python3 $TF_ROOT/t/helper/reshape-ckpt.py $M $f $f &&
		tf-run --raw $f $M/prompt.ids >got.f32 &&
		cmp got.f32 want.f32
	"
done

test_expect 'a shard named in the index but absent is an error' '
	rm sharded/model-00002-of-00003.safetensors &&
	tf-run sharded $M/prompt.ids >/dev/null 2>err; test $? = 1 &&
	grep -q "^tf-run: error: .*model-00002-of-00003.safetensors" err
'

done_testing
