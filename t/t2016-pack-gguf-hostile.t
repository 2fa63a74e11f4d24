#!/bin/sh
# Damaged and hostile GGUF files (t/helper/mkgguf.py hostile): each must
# fail with a tf-X: error naming what is wrong, exit 1, no signal, no
# sanitizer report, and tf-pack must leave no output behind.
. "$(dirname "$0")/lib-tf.sh"
python3 -c 'import gguf, numpy' 2>/dev/null || skip_all 'the gguf package is not installed (make test installs it)'
MK="python3 $TF_ROOT/t/helper/mkgguf.py"
TINY=$DATA/tiny-q35
P=$TINY/prompt.ids

$MK write $TINY base.gguf --type Q8_0 --align 64 --no-tok || exit 1
$MK hostile base.gguf bad || exit 1

test_expect "the base file itself loads" "tf-run base.gguf $P >/dev/null"

# name and what the error must say
while read -r name ere; do
	test_error "$name: tf-run says why" tf-run "$ere" tf-run bad/$name.gguf $P
done <<'CASES'
empty not a GGUF file: wrong magic
magic not a GGUF file: wrong magic
version1 GGUF version 1 is not read here
version9 GGUF version 9 is not read here
cut10 truncated GGUF file: the tensor count runs past the end
cut100 truncated GGUF file
cut-half tensor '[^']*' is out of bounds
cut-last tensor '[^']*' is out of bounds
ntensors truncated GGUF file: 1152921504606846976 tensor infos cannot fit
nkv truncated GGUF file: 2305843009213693952 metadata entries cannot fit
keylen truncated GGUF file: a metadata key runs past the end
kvtype metadata 'qwen35.block_count' runs past the end
kvtype99 metadata 'qwen35.block_count' has unknown value type 99
kvfloat metadata 'qwen35.block_count' is not an integer
kvdup metadata 'qwen35.ssm.state_size' appears twice
tdup tensor 'blk.0.ffn_up.weight' appears twice
arch architecture 'llama9' is not read here \(qwen35 is\)
align48 general.alignment 48 is not a power of two
align0 general.alignment 0 is not a power of two
ttype tensor 'output.weight' has unknown type 77
kquant tensor 'output.weight' is Q4_K, which has no exact form here \(F32, F16, BF16, Q8_0, Q4_0 and Q1_0
toffset tensor 'output.weight' is out of bounds
toffset-wrap tensor 'output.weight' is out of bounds: 278528 bytes at data offset 18446744073709551360
tunaligned tensor 'output.weight': offset 1 is not a multiple of the alignment 64
overlap tensors '[^']*' and '[^']*' overlap
ndims tensor 'output.weight' has 9 dimensions
tname tensor 'XXXXXXXXXXXXX' has no place in a qwen35 model
CASES

while read -r name ere; do
	test_error "$name: tf-pack fails" tf-pack "$ere" tf-pack -q bad/$name.gguf out-$name.tfb
	test_expect "$name: no output file is left" "! ls out-$name.tfb* 2>/dev/null"
done <<'CASES'
cut-half is out of bounds
kquant is Q4_K
overlap overlap
tname has no place in a qwen35 model
CASES
test_error "a K-quant is named by tf-pack --show, with its tensor" tf-pack "tensor 'output.weight' is Q4_K" \
	tf-pack --show bad/kquant.gguf

$MK write $TINY drop.gguf --type Q8_0 --no-tok --drop blk.2.ffn_up.weight || exit 1
test_error "a missing tensor is named" tf-run "missing tensor 'layers.2.mlp.up_proj.weight'" tf-run drop.gguf $P
test_error "tf-tok on a GGUF without a tokenizer says so" tf-tok "the GGUF carries no tokenizer" \
	tf-tok encode base.gguf /dev/null
mkdir two && cp base.gguf two/a.gguf && cp base.gguf two/b.gguf
test_error "a folder of two unrelated GGUF files is refused" tf-run "holds 2 GGUF files that are not one split set" \
	tf-run two $P

done_testing
