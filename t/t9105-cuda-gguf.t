#!/bin/sh
# GGUF models on the GPU (t/helper/mkgguf.py, with the gguf package):
# Shakespeare as BF16, Q8_0 and Q4_0 and the 1-bit twin as Q1_0, each
# within KL 1e-3 and top-1 99.5% of the CPU on the same file, windows of
# 16 rows bit-identical to steps, and the CPU's 32 greedy ids.
. "$(dirname "$0")/lib-tf.sh"

if ! tf-run --device cuda $DATA/tiny-q35 </dev/null >/dev/null 2>err; then
	grep -Eq 'no CUDA|without CUDA|no CUDA support' err && skip_all "no CUDA device"
fi
python3 -c 'import gguf, numpy, safetensors' 2>/dev/null || skip_all 'the gguf package is not installed (make test installs it)'
MK="python3 $TF_ROOT/t/helper/mkgguf.py"
P=$DATA/shakespeare-q35/prompt.ids

tr ' ' '\n' <$DATA/shakespeare-q35/val4096.ids | awk 'NF' | head -600 | paste -sd ' ' - >ids
cat $P >>ids
for f in sh-BF16 sh-Q8_0 sh-Q4_0 sh1-Q1_0; do
	t=${f#*-}
	src=$DATA/shakespeare-q35
	test $f = sh1-Q1_0 && src=$DATA/shakespeare-q35-1bit
	$MK write $src $f.gguf --type $t >/dev/null || { say_ok 1 "$f: the GGUF is written"; continue; }
	tf-run --device cpu $f.gguf ids >cpu.$f && tf-run --device cuda $f.gguf ids >gpu.$f
	tf-gate --kl 1e-3 --top1 0.995 cpu.$f gpu.$f >gate.out 2>&1
	rc=$?
	sed 's/^/# /' gate.out
	say_ok $rc "$f: prompt mode on the GPU within KL 1e-3 and top-1 99.5% of the CPU"
	test_expect "$f: GPU windows of 16 rows bit-identical to steps" "
		tf-run --device cuda --mode step $f.gguf $P >st.$f && tf-run --device cuda --window 16 $f.gguf $P >w.$f &&
		tf-gate --exact st.$f w.$f
	"
	test_expect "$f: 32 greedy ids on the GPU equal the CPU's" "
		tf-run --device cpu -n 32 --ignore-eos $f.gguf $P >c.ids && tf-run --device cuda -n 32 --ignore-eos $f.gguf $P >g.ids &&
		cmp c.ids g.ids
	"
done

done_testing
