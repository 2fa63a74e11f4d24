#!/bin/sh
# tf-tok on a tokenizer.json shaped like Qwen3.5's: 248044 BPE ids and
# about as many merges (in the "a b" string form), its split regex with
# \p{M}, NFC, the ChatML and tool tokens after the vocab. Built here from
# the held-out text and random words, then held to Hugging Face tokenizers:
# nothing in tf-tok may depend on the small vocab of the test model.
. "$(dirname "$0")/lib-tf.sh"

python3 -c 'import tokenizers' 2>/dev/null || skip_all 'Python package tokenizers not installed (make test installs it)'

M=$DATA/shakespeare-q35
HF="python3 $T_DIR/helper/tok-hf.py"

$HF decode "$M" "$M/val4096.ids" >val.txt &&
mkdir q && $HF bigvocab val.txt q/tokenizer.json >info || exit 1
diag "$(cat info)"
Q=q
$HF awkward aw || exit 1
cat aw/*.txt >all.txt
for f in aw/*.txt; do
	if [ "$(wc -l <"$f")" = 0 ]; then cat "$f"; echo; fi
done >lines.txt
printf "<|im_start|>user\n" >chat.txt && cat val.txt >>chat.txt &&
printf "<|im_end|>\n<|im_start|>assistant\n" >>chat.txt
$HF expect q val.txt all.txt lines.txt chat.txt || exit 1

t0=$(date +%s.%N)
echo 248069 | tf-tok decode "$Q" >think 2>&1
diag "load and decode one id: $(awk "BEGIN { print $(date +%s.%N) - $t0 }") s"
test_expect 'it loads, with the vocabulary size of Qwen3.5' '
	grep -qx "</think>" think &&
	echo 248070 | tf-tok decode "$Q" 2>&1 | grep -q "out of range (vocab_size 248070)"
'
test_expect 'held-out text: same ids as tokenizers' '
	tf-tok encode "$Q" val.txt | cmp - q/tokenizer.val.txt.hf
'
test_expect 'awkward texts as one: same ids as tokenizers' '
	tf-tok encode "$Q" all.txt >all.ids && cmp all.ids q/tokenizer.all.txt.hf
'
test_expect 'awkward texts line by line: same ids as tokenizers' '
	tf-tok encode -l "$Q" lines.txt >lines.ids && cmp lines.ids q/tokenizer.lines.txt.lines.hf
'
test_expect '--chat: same ids as tokenizers' '
	tf-tok encode --chat "$Q" val.txt | cmp - q/tokenizer.chat.txt.hf
'
test_expect 'round trips' '
	tf-tok decode "$Q" all.ids | cmp - q/tokenizer.all.txt.norm &&
	tf-tok decode -l "$Q" lines.ids | cmp - q/tokenizer.lines.txt.norm
'
test_expect 'random ids decode to what tokenizers decodes' '
	$HF randids "$Q" 200 11 >rand.ids &&
	sed "s/\$/ 248044/" rand.ids | tf-tok decode "$Q" >rand.out &&
	$HF decode-check "$Q" rand.ids rand.out
'
tok-words --unknown >unknown.txt 2>/dev/null && $HF codepoints cp.txt 3 61 unknown.txt || exit 1
test_expect "the Qwen3.5 regex cuts $(wc -l <cp.txt) code point probes as tokenizers does" '
	$HF pretok "$Q" cp.txt >cp.hf && tok-words "$Q" cp.txt >cp.tf && cmp cp.hf cp.tf
'
done_testing
