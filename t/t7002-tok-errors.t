#!/bin/sh
# tf-tok on bad input: every case a one-line "tf-tok: error: ..." and
# exit 1, never a crash or a hang
. "$(dirname "$0")/lib-tf.sh"

M=$DATA/shakespeare-q35

# edit FILE PYTHON: a copy of the test tokenizer.json as dict d, changed by
# the Python statement, written to FILE
edit() {
	python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
$2
json.dump(d, open(sys.argv[2], 'w'))
" "$M/tokenizer.json" "$1"
}

printf '{ "model": ' >notjson.json
: >empty.json
head -c 50000 "$M/tokenizer.json" >truncated.json
python3 -c "print('[' * 100000 + ']' * 100000)" >deep.json
echo '[1, 2, 3]' >array.json
edit nomodel.json 'del d["model"]'
edit wordpiece.json 'd["model"]["type"] = "WordPiece"'
edit novocab.json 'del d["model"]["vocab"]'
edit negid.json 'd["model"]["vocab"]["zz"] = -1'
edit hugeid.json 'd["model"]["vocab"]["zz"] = 10**12'
edit strid.json 'd["model"]["vocab"]["zz"] = "7"'
edit badmerge.json 'd["model"]["merges"].append(["q", "nosuchtoken"])'
edit merge3.json 'd["model"]["merges"][5] = "a b c"'
edit nomerges.json 'del d["model"]["merges"]'
edit badregex.json 'd["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(\\p{L}+"'
edit badprop.json 'd["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "\\p{NoSuchProperty}"'
edit badbehavior.json 'd["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Sideways"'
edit whitespace.json 'd["pre_tokenizer"] = {"type": "Whitespace"}'
edit nobytelevel.json 'd["pre_tokenizer"]["pretokenizers"].pop()'
edit afterbyte.json 'd["pre_tokenizer"]["pretokenizers"].reverse()'
edit lowercase.json 'd["normalizer"] = {"type": "Lowercase"}'
edit wpdecoder.json 'd["decoder"] = {"type": "WordPiece"}'
edit template.json 'd["post_processor"] = {"type": "TemplateProcessing"}'
edit fallback.json 'd["model"]["byte_fallback"] = True'
edit nocontent.json 'del d["added_tokens"][1]["content"]'
edit nochat.json 'd["added_tokens"] = []; del d["model"]["vocab"]["<|im_start|>"]'
edit hole.json 'd["model"]["vocab"]["zz"] = 3000'
edit catastrophic.json 'd["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(a+)+$"'

test_error 'a tokenizer.json that is not JSON' tf-tok "'notjson.json' is not JSON: line 1" \
	tf-tok encode notjson.json </dev/null
test_error 'an empty tokenizer.json' tf-tok "is not JSON" tf-tok encode empty.json </dev/null
test_error 'a truncated tokenizer.json' tf-tok "'truncated.json' is not JSON" tf-tok encode truncated.json </dev/null
test_error 'JSON nested too deep' tf-tok "is not JSON.*depth" tf-tok decode deep.json </dev/null
test_error 'JSON that is not an object' tf-tok "top level is not an object" tf-tok encode array.json </dev/null
test_error 'no model' tf-tok "'nomodel.json': no model in the tokenizer" tf-tok encode nomodel.json </dev/null
test_error 'a model that is not BPE' tf-tok "model type 'WordPiece' is not supported" \
	tf-tok encode wordpiece.json </dev/null
test_error 'no vocab' tf-tok "has no vocab" tf-tok encode novocab.json </dev/null
test_error 'a negative id' tf-tok "vocab entry 'zz' has id -1, out of range" tf-tok encode negid.json </dev/null
test_error 'an absurd id' tf-tok "vocab entry 'zz' has id 1000000000000, out of range" \
	tf-tok encode hugeid.json </dev/null
test_error 'an id that is not a number' tf-tok "vocab entry 'zz' has no integer id" tf-tok encode strid.json </dev/null
test_error 'a merge of unknown tokens' tf-tok "merge 1789: 'nosuchtoken' is not in the vocab" \
	tf-tok encode badmerge.json </dev/null
test_error 'a merge of three tokens' tf-tok "merge 5 'a b c' is not two tokens" tf-tok encode merge3.json </dev/null
test_error 'no merges' tf-tok "has no merges" tf-tok encode nomerges.json </dev/null
test_error 'a regex PCRE2 rejects' tf-tok "regex '\(\\\\p\{L\}\+' is rejected by PCRE2 at offset 7: missing closing parenthesis" \
	tf-tok encode badregex.json </dev/null
test_error 'a regex with an unknown property' tf-tok "rejected by PCRE2 at offset [0-9]+: unknown property" \
	tf-tok encode badprop.json </dev/null
test_error 'an unknown Split behavior' tf-tok "Split behavior 'Sideways' is not known" \
	tf-tok encode badbehavior.json </dev/null
test_error 'an unsupported pre-tokenizer' tf-tok "pre_tokenizer 'Whitespace' is not supported" \
	tf-tok encode whitespace.json </dev/null
test_error 'no ByteLevel step' tf-tok "no ByteLevel step" tf-tok encode nobytelevel.json </dev/null
test_error 'a step after ByteLevel' tf-tok "pre_tokenizer 'Split' after ByteLevel is not supported" \
	tf-tok encode afterbyte.json </dev/null
test_error 'an unsupported normalizer' tf-tok "normalizer 'Lowercase' is not supported" \
	tf-tok encode lowercase.json </dev/null
test_error 'an unsupported decoder' tf-tok "decoder 'WordPiece' is not supported" tf-tok decode wpdecoder.json </dev/null
test_error 'an unsupported post-processor' tf-tok "post_processor 'TemplateProcessing' is not supported" \
	tf-tok encode template.json </dev/null
test_error 'byte_fallback' tf-tok "byte_fallback is not supported" tf-tok encode fallback.json </dev/null
test_error 'an added token without content' tf-tok "added token 1 has no content" tf-tok encode nocontent.json </dev/null
tf-pack -q --synth "$DATA/tiny-q35/config.json" --bits 4 synth.tfb &&
tf-pack -q "$M" whole.tfb && head -c 5000 whole.tfb >truncated.tfb || exit 1
test_error 'a bundle without a tokenizer' tf-tok "'synth.tfb': the bundle carries no tokenizer" \
	tf-tok encode synth.tfb </dev/null
test_error 'a truncated bundle' tf-tok "'truncated.tfb': truncated bundle" tf-tok decode truncated.tfb </dev/null
test_error 'a MODEL that does not exist' tf-tok "cannot open 'nosuch': No such file" tf-tok encode nosuch </dev/null
mkdir emptydir
test_error 'a folder without tokenizer.json' tf-tok "cannot open 'emptydir/tokenizer.json'" \
	tf-tok encode emptydir </dev/null
test_error 'an input file that does not exist' tf-tok "cannot open 'nosuch.txt'" tf-tok encode "$M" nosuch.txt

printf 'ab\377cd' >bad.txt
test_error 'text that is not UTF-8' tf-tok "'bad.txt': the text is not valid UTF-8 at byte 2" \
	tf-tok encode "$M" bad.txt
printf 'fine\nab\355\240\200\n' >surrogate.txt
test_error 'an encoded surrogate, with --lines' tf-tok "'-' line 2: the text is not valid UTF-8 at byte 2" \
	tf-tok encode --lines "$M" <surrogate.txt
printf '\300\200' >overlong.txt
test_error 'an overlong encoding' tf-tok "not valid UTF-8 at byte 0" tf-tok encode "$M" overlong.txt
test_error '--chat without ChatML tokens' tf-tok "has no <\|im_start\|> and <\|im_end\|> tokens" \
	tf-tok encode --chat nochat.json </dev/null
python3 -c "print('a' * 30000 + 'b', end='')" >as.txt
test_error 'a regex that backtracks without end' tf-tok "regex failed at byte 0: match limit exceeded" \
	tf-tok encode catastrophic.json as.txt

test_error 'decode: an id past the vocab' tf-tok "'-' line 2: id 2048 is out of range \(vocab_size 2048\)" \
	sh -c 'printf "1 2\n3 2048\n" | tf-tok decode "$0"' "$M"
test_error 'decode: an id no token has' tf-tok "'-' line 1: id 2500 has no token in 'hole.json'" \
	sh -c 'echo "5 2500" | tf-tok decode hole.json'
test_error 'decode: a huge id' tf-tok "id 2147483648 is out of range" \
	sh -c 'echo 99999999999999999999 | tf-tok decode "$0"' "$M"
test_error 'decode: a negative id' tf-tok "'-' line 1: '-' in a line of token ids" \
	sh -c 'echo "5 -1" | tf-tok decode "$0"' "$M"
test_error 'decode: a word' tf-tok "'x' in a line of token ids" \
	sh -c 'echo "5 6x" | tf-tok decode "$0"' "$M"
test_error 'decode: a truncated records stream' tf-tok "truncated record header" \
	sh -c 'printf "\211TFR\r\n\032\n\001" | tf-tok decode "$0"' "$M"
test_error 'decode: an id past the vocab in records' tf-tok "id 5000 is out of range" \
	sh -c 'python3 -c "
import struct, sys
sys.stdout.buffer.write(b\"\x89TFR\r\n\x1a\n\" + struct.pack(\"<HHHHIIQQQi\", 1, 1, 1, 48, 1, 1, 0, 0, 0, 5000))
" | tf-tok decode "$0"' "$M"

done_testing
