#!/bin/sh
# tf-tok on a GGUF: the vocabulary, merges and added tokens of its
# tokenizer.ggml.* keys (written by t/helper/mkgguf.py from tokenizer.json,
# as llama.cpp's converter writes them) must give Hugging Face tokenizers'
# ids of the tokenizer.json they came from, on the held-out text and the
# awkward texts, and decode back to the same bytes as the checkpoint.
. "$(dirname "$0")/lib-tf.sh"
python3 -c 'import gguf, numpy, tokenizers' 2>/dev/null ||
	skip_all 'the gguf and tokenizers packages are not installed (make test installs them)'
MK="python3 $TF_ROOT/t/helper/mkgguf.py"
HF="python3 $T_DIR/helper/tok-hf.py"
M=$DATA/shakespeare-q35

$MK write $M sh.gguf --type BF16 || exit 1
$HF decode "$M" "$M/val4096.ids" >val.txt || exit 1
$HF awkward aw || exit 1
cp val.txt aw/val.txt
$HF encode "$M" aw/*.txt || exit 1

test_expect "held-out text: the GGUF gives tokenizers' ids" "
	tf-tok encode sh.gguf val.txt >val.tf && cmp aw/val.txt.hf val.tf
"
test_expect "awkward texts: the GGUF gives tokenizers' ids, each text whole" '
	bad=0
	for f in aw/*.txt; do
		tf-tok encode sh.gguf "$f" >"$f.tf" 2>&1 && cmp -s "$f.hf" "$f.tf" || { bad=$((bad + 1)); echo "differs: $f"; }
	done
	test $bad = 0
'
test_expect "special tokens are added tokens, found in the text" "
	printf '<|im_start|>user\nhi<|im_end|>' >sp.txt &&
	tf-tok encode sh.gguf sp.txt >a.ids && tf-tok encode $M sp.txt >b.ids && cmp a.ids b.ids &&
	test \"\$(cut -d' ' -f1 a.ids)\" = 1
"
test_expect "decode: the GGUF's bytes are the checkpoint's" "
	tf-tok decode sh.gguf $M/val4096.ids >a.txt && tf-tok decode $M $M/val4096.ids >b.txt && cmp a.txt b.txt
"
test_expect "a bundle packed from the GGUF carries its tokenizer" "
	tf-pack -q sh.gguf sh.tfb && tf-tok encode sh.tfb val.txt >b.tf && cmp aw/val.txt.hf b.tf
"
test_expect "tf-run -n ends at the GGUF's end-of-sequence id as at the checkpoint's" "
	tf-run -n 64 sh.gguf $M/prompt.ids >a.ids && tf-run -n 64 $M $M/prompt.ids >b.ids && cmp a.ids b.ids
"

done_testing
