#!/bin/sh
# GGUF files as llama.cpp's converter writes them (t/helper/mkgguf.py, with
# the gguf package) from the t/data checkpoints. Every tensor tf-run loads
# from a GGUF must be the value the gguf package's dequantize gives, its
# reordering undone, bit for bit; a BF16 or F32 GGUF must give the
# checkpoint's logits bit for bit; Q8_0 and Q4_0 must give the logits of an
# MLX folder of the same codes written by the helper, not by tf-pack; the
# 1-bit twin's Q1_0 GGUF must give its sign1 bundle's logits; and tf-pack
# must carry all of it into a bundle unchanged.
. "$(dirname "$0")/lib-tf.sh"
python3 -c 'import gguf, numpy, safetensors' 2>/dev/null || skip_all 'the gguf package is not installed (make test installs it)'
MK="python3 $TF_ROOT/t/helper/mkgguf.py"
TINY=$DATA/tiny-q35
SH=$DATA/shakespeare-q35
SH1=$DATA/shakespeare-q35-1bit

tf-run $TINY $TINY/prompt.ids >tiny.out || exit 1
for t in F32 F16 BF16 Q8_0 Q4_0; do
	$MK write $TINY tiny-$t.gguf --type $t || exit 1
	test_expect "tiny $t: every tensor equals gguf's dequantize" "
		tf-test-tool weights tiny-$t.gguf >w.bin && $MK check tiny-$t.gguf w.bin
	"
done
for t in F32 BF16; do
	test_expect "tiny $t: logits equal the checkpoint's bit for bit" "
		tf-run tiny-$t.gguf $TINY/prompt.ids >g.out && cmp tiny.out g.out
	"
done
for t in Q8_0 Q4_0; do
	test_expect "tiny $t: logits equal those of an MLX folder of the same codes" "
		$MK mlx tiny-$t.gguf mlx-$t &&
		tf-run mlx-$t $TINY/prompt.ids >m.out && tf-run tiny-$t.gguf $TINY/prompt.ids >g.out && cmp m.out g.out
	"
	test_expect "tiny $t: the bundle tf-pack makes of it gives its logits" "
		tf-pack -q tiny-$t.gguf t.tfb && tf-pack --verify t.tfb >/dev/null &&
		tf-run t.tfb $TINY/prompt.ids >b.out && tf-run tiny-$t.gguf $TINY/prompt.ids >g.out && cmp b.out g.out
	"
done
test_expect "tiny Q4_0: 32 greedy tokens from the GGUF equal its bundle's" "
	tf-pack -q tiny-Q4_0.gguf t.tfb &&
	tf-run -n 32 tiny-Q4_0.gguf $TINY/prompt.ids >a.ids && tf-run -n 32 t.tfb $TINY/prompt.ids >b.ids &&
	diff a.ids b.ids
"
test_expect "--show lists each tensor's GGUF type and the form it becomes" "
	tf-pack --show tiny-Q4_0.gguf >s.txt &&
	grep -q '^blk.0.attn_qkv.weight  *Q4_0  *256x256  *layers.0.linear_attn.in_proj_qkv.weight  *affine4 g32' s.txt &&
	grep -q '^blk.0.ssm_a  *F32  *4  *layers.0.linear_attn.A  *f32' s.txt &&
	grep -q '^# 56 tensors in 1 file' s.txt
"
test_expect "a bundle of a GGUF says its blocks came from one (path gguf)" "
	tf-pack -q tiny-Q8_0.gguf t.tfb && tf-pack --show t.tfb >s.txt &&
	grep -q '^layers.0.mlp.up_proj.weight  *affine  *512x256  *8  *32 gguf' s.txt
"

# the Shakespeare models: a tied head (no output.weight) and a tokenizer
tf-run $SH $SH/prompt.ids >sh.out || exit 1
$MK write $SH sh.gguf --type BF16 || exit 1
test_expect "shakespeare BF16, tied head: logits equal the checkpoint's bit for bit" "
	tf-run sh.gguf $SH/prompt.ids >g.out && cmp sh.out g.out
"
test_expect "shakespeare BF16: 64 greedy ids equal greedy64.ids" "
	tf-run -n 64 sh.gguf $SH/prompt.ids >g.ids && diff g.ids $SH/greedy64.ids
"
$MK write $SH1 sh1.gguf --type Q1_0 || exit 1
test_expect "1-bit twin Q1_0: every tensor equals ggml's Q1_0 dequantization" "
	tf-test-tool weights sh1.gguf >w.bin && $MK check sh1.gguf w.bin
"
test_expect "1-bit twin Q1_0: its blocks load as sign1" "
	tf-pack --show sh1.gguf >s.txt &&
	grep -q '^token_embd.weight  *Q1_0 .* sign1 g128' s.txt &&
	grep -q '^blk.0.ffn_down.weight  *Q1_0 .* sign1 g128' s.txt
"
tf-pack -q $SH1 sign1.tfb && tf-run sign1.tfb $SH1/prompt.ids >s1.out || exit 1
test_expect "1-bit twin Q1_0: logits equal the sign1 bundle's bit for bit" "
	tf-run sh1.gguf $SH1/prompt.ids >g.out && cmp s1.out g.out
"
test_expect "1-bit twin Q1_0: tf-pack of it gives the sign1 bundle's logits" "
	tf-pack -q sh1.gguf g1.tfb && tf-run g1.tfb $SH1/prompt.ids >b.out && cmp s1.out b.out
"
test_expect "a folder holding one GGUF is that GGUF" "
	mkdir one && cp sh.gguf one/model.gguf && tf-run one $SH/prompt.ids >g.out && cmp sh.out g.out
"

done_testing
