#!/bin/sh
# tf-tok against Hugging Face tokenizers: ids for the held-out text and for
# awkward texts, decode of random ids, round trips, the pre-tokenizer on
# every code point, and variants of tokenizer.json that use its other
# options. No difference is allowed anywhere.
. "$(dirname "$0")/lib-tf.sh"

python3 -c 'import tokenizers' 2>/dev/null || skip_all 'Python package tokenizers not installed (make test installs it)'

M=$DATA/shakespeare-q35
HF="python3 $T_DIR/helper/tok-hf.py"

# the held-out text, from its ids, by tokenizers
$HF decode "$M" "$M/val4096.ids" >val.txt || exit 1
$HF awkward aw || exit 1
cp val.txt aw/val.txt
n_aw=$(ls aw/*.txt | wc -l)
diag "$n_aw texts, held-out text $(wc -c <val.txt) bytes"

# every file's ids against tokenizers'; prints the files that differ
compare_files() {
	$HF encode "$1" aw/*.txt || return 1
	bad=0
	for f in aw/*.txt; do
		tf-tok encode "$1" "$f" >"$f.tf" 2>&1 && cmp -s "$f.hf" "$f.tf" || {
			bad=$((bad + 1))
			echo "differs: $f: $(od -An -c "$f" | head -c 120)"
		}
	done
	test $bad = 0
}

test_expect 'held-out text: same ids as tokenizers' '
	$HF encode "$M" val.txt && tf-tok encode "$M" val.txt >val.tf && cmp val.txt.hf val.tf
'
test_expect "awkward texts: same ids as tokenizers, each text whole" '
	compare_files "$M"
'
# decode(encode(x)) is x in normal form (NFC here), as tokenizers normalizes it
$HF normalize "$M" aw/*.txt || exit 1
test_expect 'decode(encode(x)) = NFC(x) for every text' '
	for f in aw/*.txt; do cat "$f.tf"; done | tf-tok decode "$M" >rt &&
	for f in aw/*.txt; do cat "$f.norm"; done | cmp - rt
'
# the texts that have no newline, one a line; and all texts as one
for f in aw/*.txt; do
	if [ "$(wc -l <"$f")" = 0 ]; then cat "$f"; echo; fi
done >lines.txt
cat aw/*.txt >all.txt
test_expect '--lines: same ids as tokenizers for each line' '
	$HF encode-lines "$M" lines.txt >lines.hf && tf-tok encode --lines "$M" lines.txt >lines.tf &&
	test -s lines.hf && cmp lines.hf lines.tf
'
$HF normalize "$M" lines.txt all.txt || exit 1
test_expect '--lines round trip' '
	tf-tok encode -l "$M" lines.txt >lines.ids && tf-tok decode -l "$M" lines.ids | cmp - lines.txt.norm
'
test_expect 'all texts as one: same ids as tokenizers, and round trip' '
	$HF encode "$M" all.txt && tf-tok encode "$M" all.txt >all.tf && cmp all.txt.hf all.tf &&
	tf-tok decode "$M" all.tf | cmp - all.txt.norm
'
test_expect '--chat: same ids as tokenizers for the wrapped text' '
	printf "<|im_start|>user\n" >chat.txt && cat val.txt >>chat.txt &&
	printf "<|im_end|>\n<|im_start|>assistant\n" >>chat.txt &&
	$HF encode "$M" chat.txt && tf-tok encode --chat "$M" val.txt | cmp - chat.txt.hf
'
test_expect 'random ids decode to what tokenizers decodes' '
	$HF randids "$M" 300 7 >rand.ids &&
	sed "s/\$/ 0/" rand.ids | tf-tok decode "$M" >rand.out &&
	$HF decode-check "$M" rand.ids rand.out
'
test_expect 'decode of the held-out ids equals tokenizers decode' '
	tf-tok decode "$M" "$M/val4096.ids" | cmp - val.txt
'

# the pre-tokenizer's words for code points in every context the regex
# distinguishes; characters PCRE2's Unicode tables do not know yet (newer
# than its Unicode version) are left out: they have no properties there
tok-words --unknown >unknown.txt 2>unknown.err || exit 1
diag "$(cat unknown.err)"
$HF codepoints cp.txt 2 53 unknown.txt || exit 1
test_expect "pre-tokenizer words for $(wc -l <cp.txt) code points equal tokenizers'" '
	$HF pretok "$M" cp.txt >cp.hf && tok-words "$M" cp.txt >cp.tf && cmp cp.hf cp.tf
'

# variants: the other options of tokenizer.json, each against tokenizers
$HF variants "$M" var && $HF expect var all.txt val.txt || exit 1
for v in var/*.json; do
	name=$(basename "$v" .json)
	test_expect "variant $name: same ids as tokenizers" '
		tf-tok encode "$v" all.txt | cmp - var/$name.all.txt.hf &&
		tf-tok encode -l "$v" all.txt | cmp - var/$name.all.txt.lines.hf &&
		tf-tok encode "$v" val.txt | cmp - var/$name.val.txt.hf &&
		tf-tok encode -l "$v" val.txt | cmp - var/$name.val.txt.lines.hf
	'
done
test_expect 'variant gpt2: pre-tokenizer words for the code points equal tokenizers'"'" '
	$HF pretok var/gpt2.json cp.txt >cp.hf && tok-words var/gpt2.json cp.txt >cp.tf && cmp cp.hf cp.tf
'

done_testing
