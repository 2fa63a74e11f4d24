#!/bin/sh
# MLX folders of 1-bit weights (affine, bits 1: scale 2s and bias -s a
# group, w = s (2b - 1)), written by t/helper/mkmlx1.py from the 1-bit
# twin: loaded as sign1 with the codes as they are, so tf-run gives the
# sign1 bundle's logits bit for bit at groups of 128, 64 and 32; tf-pack
# makes sign1 tensors of them; a group that is not (2s, -s) is named.
. "$(dirname "$0")/lib-tf.sh"
python3 -c 'import numpy' 2>/dev/null || skip_all 'numpy is not installed (make test installs it)'
MK="python3 $TF_ROOT/t/helper/mkmlx1.py"
B=$DATA/shakespeare-q35-1bit

tf-pack -q $B sign1.tfb && tf-run sign1.tfb $B/prompt.ids >s1.out || exit 1
for g in 128 64 32; do
	$MK $B m$g --group $g || exit 1
	test_expect "group $g: logits equal the sign1 bundle's bit for bit" "
		tf-run m$g $B/prompt.ids >g.out && cmp s1.out g.out
	"
done
test_expect "tf-pack of a 1-bit folder writes sign1 tensors and the same logits" "
	tf-pack -q m64 m.tfb && tf-pack --show m.tfb | tail -n 1 | grep -q ' 0 affine, 63 sign1, 45 other' &&
	tf-run m.tfb $B/prompt.ids >b.out && cmp s1.out b.out
"
$MK $B bad --group 64 --break layers.2.mlp.up_proj || exit 1
test_error "a group that is not 2s and -s is named" tf-run \
	"'layers.2.mlp.up_proj': 1-bit group 1 of row 0 has scale .* not a binary weight" tf-run bad $B/prompt.ids
test_error "tf-pack refuses it too" tf-pack "1-bit group 1 of row 0" tf-pack -q bad bad.tfb
test_expect "and leaves nothing" "! ls bad.tfb* 2>/dev/null"

done_testing
