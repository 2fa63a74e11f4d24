#!/bin/sh
# tf-pack --synth: random models of a geometry, the same bytes for the same
# seed, runnable by tf-run with finite logits, at every bits value.
. "$(dirname "$0")/lib-tf.sh"
C=$DATA/tiny-q35/config.json

finite() {
	python3 -c '
import sys, numpy as np
x = np.fromfile(sys.argv[1], "<f4")
print(x.size, float(np.abs(x).max()))
sys.exit(not (x.size == int(sys.argv[2]) and np.isfinite(x).all() and np.abs(x).max() > 0))' "$@"
}

for b in 1 2 3 4 5 6 8 16; do
	test_expect "--bits $b: a runnable model with finite logits" "
		tf-pack -q --synth $C --bits $b s$b.tfb && tf-run --raw s$b.tfb $DATA/tiny-q35/prompt.ids >s$b.f32 &&
		finite s$b.f32 \$((48 * 1024))
	"
done
test_expect 'the manifest: every tensor made by synth, weights in the asked format' "
	tf-pack --show s4.tfb >s4.txt && ! grep -v '^#' s4.txt | sed 1d | grep -v ' synth ' &&
	grep -Eq '^layers\.0\.mlp\.up_proj\.weight +affine +512x256 +4 +64 ' s4.txt &&
	grep -Eq '^layers\.0\.linear_attn\.conv1d\.weight +bf16 +256x1x4 ' s4.txt &&
	tf-pack --show s1.tfb | grep -Eq '^lm_head\.weight +sign1 +1024x256 +1 +128 '
"
test_expect 'the same seed gives the same bytes, another seed others' "
	tf-pack -q --synth $C --bits 4 again.tfb && cmp s4.tfb again.tfb &&
	tf-pack -q --synth $C --bits 4 --seed 7 other.tfb && ! cmp -s s4.tfb other.tfb
"
test_expect '--group 128' "
	tf-pack -q --synth $C --bits 3 --group 128 g.tfb && tf-pack --show g.tfb | grep -Eq '^embed_tokens\.weight +affine +1024x256 +3 +128 '
"
python3 -c "import json; c = json.load(open('$C')); c['num_experts'] = 8; json.dump(c, open('moe.json', 'w'))"
test_error 'a mixture-of-experts config' tf-pack 'mixture-of-experts' tf-pack --synth moe.json --bits 4 m.tfb
echo '{"hidden_size": 64' >broken.json
test_error 'a config that is not JSON' tf-pack "'broken.json' is not valid JSON" tf-pack --synth broken.json --bits 4 m.tfb
test_expect 'no output file after these' 'test ! -e m.tfb'

done_testing
