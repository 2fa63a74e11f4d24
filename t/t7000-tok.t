#!/bin/sh
# tf-tok: the command line, and agreement with the references shipped
# with the test models (prompt.ids and the greedy text in reference.json,
# both made by transformers when the models were built)
. "$(dirname "$0")/lib-tf.sh"

M=$DATA/shakespeare-q35
M1=$DATA/shakespeare-q35-1bit

ref_text() {
	python3 -c 'import json, sys; sys.stdout.buffer.write(json.load(open(sys.argv[1]))[sys.argv[2]].encode())' \
		"$1/reference.json" "$2"
}

test_expect 'help goes to stdout and exits 0' '
	tf-tok --help >out && grep -q "usage: tf-tok encode" out
'
test_expect 'version is one line' '
	tf-tok --version >out && grep -qx "tf-tok [0-9.]*" out
'
for args in '' 'encode' 'frob M' '--bogus encode M' 'decode --chat M' 'encode --skip-special M' 'encode M a b'; do
	test_expect "usage error exits 2: tf-tok $args" "
		tf-tok $args 2>err; test \$? = 2 && grep -q 'Try .tf-tok --help' err
	"
done

for m in "$M" "$M1"; do
	name=$(basename "$m")
	test_expect "$name: the prompt encodes to prompt.ids" '
		ref_text "$m" prompt_text >prompt.txt &&
		tf-tok encode "$m" <prompt.txt >ids && cmp ids "$m/prompt.ids"
	'
	test_expect "$name: greedy64.ids decodes to greedy64_text" '
		ref_text "$m" greedy64_text >expect &&
		tf-tok decode "$m" <"$m/greedy64.ids" >got && cmp expect got
	'
done

test_expect 'MODEL may be the tokenizer.json itself' '
	printf "ROMEO:\nI will" | tf-tok encode "$M/tokenizer.json" >ids && cmp ids "$M/prompt.ids"
'
test_expect 'MODEL may be a tf-pack bundle, which carries tokenizer.json' '
	tf-pack -q "$M" m.tfb &&
	printf "ROMEO:\nI will" | tf-tok encode m.tfb >ids && cmp ids "$M/prompt.ids" &&
	tf-tok decode m.tfb "$M/greedy64.ids" >a && tf-tok decode "$M" "$M/greedy64.ids" >b && cmp a b
'
test_expect 'FILE argument and - are the same as stdin' '
	printf "to be, or not" >in.txt &&
	tf-tok encode "$M" in.txt >a && tf-tok encode "$M" - <in.txt >b && cmp a b
'
test_expect 'empty text encodes to an empty line, which decodes to nothing' '
	tf-tok encode "$M" </dev/null >ids && printf "\n" | cmp - ids &&
	tf-tok decode "$M" <ids >out && test ! -s out
'
test_expect 'the text is taken byte for byte: no newline added or dropped' '
	printf "a\n" | tf-tok encode "$M" >a && printf "a" | tf-tok encode "$M" >b &&
	! cmp -s a b && tf-tok decode "$M" <a | od -c | grep -q "a  *\\\\n"
'
test_expect '--lines encodes each line as its own text' '
	printf "First Citizen:\n\nBefore we proceed\nlast" >in.txt &&
	tf-tok encode --lines "$M" <in.txt >ids && test $(wc -l <ids) = 4 &&
	printf "First Citizen:" | tf-tok encode "$M" >l1 && sed -n 1p ids | cmp - l1 &&
	sed -n 2p ids | grep -qx "" &&
	printf "last" | tf-tok encode "$M" >l4 && sed -n 4p ids | cmp - l4
'
test_expect 'decode --lines gives the lines back, blank ones too' '
	printf "First Citizen:\n\n  Before we proceed\t\nlast\n" >in.txt &&
	tf-tok encode -l "$M" <in.txt | tf-tok decode -l "$M" >out && cmp in.txt out
'
test_expect 'decode without --lines joins the texts' '
	printf "ab\ncd\n" | tf-tok encode -l "$M" | tf-tok decode "$M" >out && printf abcd | cmp - out
'
test_expect 'decode skips comments and blanks between ids' '
	printf "# a comment\n  827\t 271 #more\n\n# x\n43 394\n" | tf-tok decode "$M" >out &&
	printf "ROMEO:\nI will" | cmp - out
'
test_expect '--chat wraps the text in a ChatML user turn' '
	printf "Who is there?" | tf-tok encode --chat "$M" >a &&
	printf "<|im_start|>user\nWho is there?<|im_end|>\n<|im_start|>assistant\n" | tf-tok encode "$M" >b &&
	cmp a b && cut -d" " -f1 a | grep -qx 1
'
test_expect 'special tokens are matched inside the text and decode back' '
	printf "a<|im_end|>b<|endoftext|>" | tf-tok encode "$M" >ids &&
	grep -q " 2 " ids && grep -q " 0$" ids &&
	tf-tok decode "$M" <ids | grep -qx "a<|im_end|>b<|endoftext|>"
'
test_expect '--skip-special leaves special tokens out' '
	echo "1 827 2 0" | tf-tok decode --skip-special "$M" >out && printf "ROMEO" | cmp - out
'
test_expect 'decode reads tf-records(5) ids too' '
	python3 -c "
import struct, sys
out = sys.stdout.buffer
for seq, ids in enumerate([[827, 271, 43, 394], [311, 1013]]):
    out.write(b\"\x89TFR\r\n\x1a\n\" + struct.pack(\"<HHHHIIQQQ\", 1, 1, 1, 48, len(ids), 1, seq, 0, 0))
    out.write(struct.pack(\"<%di\" % len(ids), *ids))
" >ids.rec &&
	tf-tok decode -l "$M" <ids.rec >out && printf "ROMEO:\nI will\n be gone\n" | cmp - out
'
test_expect 'a closed pipe ends tf-tok quietly by SIGPIPE, as cat ends, not a crash' '
	awk "BEGIN { for (i = 0; i < 20000; i++) print \"827 271 43 394\" }" >many.ids &&
	{ tf-tok decode "$M" many.ids 2>err; echo $? >rc; } | head -c 10 >/dev/null;
	test "$(cat rc)" = 141 && test ! -s err
'

done_testing
