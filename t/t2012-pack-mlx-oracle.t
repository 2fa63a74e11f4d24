#!/bin/sh
# MLX as the independent oracle. mlx.core.quantize must give the codes,
# scales and biases tf-pack --bits writes; mlx-lm's converter (4-bit g64,
# 3-bit, 8-bit and the mixed_2_6 recipe) must give the same tensors as
# tf-pack on the same float weights; tf-pack must keep every byte of an MLX
# folder; and tf-run's logits on the MLX folder, directly or through a
# bundle, must agree with mlx-lm's own forward on the same weights.
. "$(dirname "$0")/lib-tf.sh"
python3 -c 'import mlx.core, mlx_lm' 2>/dev/null || skip_all 'mlx and mlx-lm are not installed (make test installs them)'
ORC="python3 $TF_ROOT/t/helper/mlx-oracle.py"
FIX="python3 $TF_ROOT/t/helper/pack-fixture.py"

# 21 tensors: 7 value patterns (normal, uniform, negative- and
# positive-heavy, tiny, huge, quarter steps, each with constant, zero and
# signed-zero groups) in f32, bf16 and f16
$FIX random rnd 1 || exit 1
for b in 2 3 4 5 6 8; do
	test_expect "--bits $b, groups 32, 64, 128: codes, scales and biases equal mlx.core.quantize" "
		for g in 32 64 128; do
			tf-pack -q --bits $b --group \$g rnd r.tfb && $ORC quantized r.tfb rnd || exit 1
		done
	"
done

# logits: mlx-lm runs in fp32 here (scales, biases and norms widened, which
# is exact), as tf-run does, so what is left is the two engines' own fp32
# arithmetic: summation orders, fused kernels, and mlx-lm's q/k l2norm eps
# (mlx-lm adds 1e-6 to the mean of the squares, transformers to their sum).
# That is a few hundred fp32 ulps of logits of size ~10, well
# under 1e-4; a wrong code, scale or bias moves logits by orders more. The
# top-1 id must agree at every position.
compare() {
	python3 - "$@" <<'PY'
import sys
import numpy as np
a, b, vocab = sys.argv[1], sys.argv[2], int(sys.argv[3])
x = np.fromfile(a, "<f4").reshape(-1, vocab)
y = np.fromfile(b, "<f4").reshape(-1, vocab)
assert x.shape == y.shape, (x.shape, y.shape)
d = float(np.abs(x - y).max())
top1 = float((x.argmax(1) == y.argmax(1)).mean())
print("rows %d, max abs %.3g, top-1 agreement %.4f" % (len(x), d, top1))
sys.exit(not (d <= 1e-4 and top1 == 1.0))
PY
}

# the Shakespeare model scores its prompt and the first 256 held-out tokens
tr ' ' '\n' <$DATA/shakespeare-q35/val4096.ids | awk 'NF' | head -256 | tr '\n' ' ' >s.ids
echo >>s.ids
cat $DATA/shakespeare-q35/prompt.ids >>s.ids

for m in tiny-q35 shakespeare-q35; do
	S=$DATA/$m
	if [ $m = tiny-q35 ]; then V=1024 ids=$S/prompt.ids; else V=2048 ids=s.ids; fi
	for cfg in '4 64' '3 64' '8 64' '2 64 mixed_2_6'; do
		set -- $cfg
		tag=$m-$1bit${3:+-$3}
		if [ -n "$3" ]; then opt="--recipe $3 --group $2"; else opt="--bits $1 --group $2"; fi
		$ORC convert $S mlx-$tag $1 $2 $3 >convert.log 2>&1 || { cat convert.log; exit 1; }
		test_expect "$tag: tf-pack $opt gives mlx-lm's quantized tensors, byte for byte" "
			tf-pack -q $opt $S ours-$tag.tfb && $ORC same ours-$tag.tfb mlx-$tag
		"
		test_expect "$tag: packing the MLX folder keeps every byte" "
			tf-pack -q mlx-$tag mlx-$tag.tfb && $ORC same mlx-$tag.tfb mlx-$tag --all
		"
		test_expect "$tag: tf-run gives the same logits from the folder and the bundle" "
			tf-run --raw mlx-$tag $ids >dir.f32 && tf-run --raw mlx-$tag.tfb $ids >tfb.f32 && cmp dir.f32 tfb.f32
		"
		test_expect "$tag: tf-run within 1e-4 of mlx-lm's forward, same top-1" "
			$ORC logits mlx-$tag $ids mlx.f32 && compare dir.f32 mlx.f32 $V
		"
	done
done

M4=mlx-shakespeare-q35-4bit
$FIX mlx-bad $M4 bad-codes codes-shape
test_error 'MLX codes whose shape disagrees with the scales' tf-pack \
	"'layers.0.mlp.up_proj': codes \[640, 32\] disagree with scales \[640, 2\] at 4 bits, group 64" \
	tf-pack bad-codes bad.tfb
$FIX mlx-bad $M4 bad-module missing-module
test_error 'a quantization config naming a missing module' tf-pack \
	"quantization names module 'language_model.model.layers.0.mlp.gate_pro', which the checkpoint does not have" \
	tf-pack bad-module bad.tfb
$FIX mlx-bad $M4 bad-bits bits9
test_error 'quantization bits 9 in config.json' tf-pack 'quantization bits 9 not supported' tf-pack bad-bits bad.tfb
test_expect 'no output file after these' "test ! -e bad.tfb && ! ls bad.tfb.tmp.* 2>/dev/null"

done_testing
