#!/bin/sh
# tf-tok against input built to hurt it: a record header whose size wraps
# in 64 bits, and added tokens long enough that anything quadratic in their
# length (every prefix stored, every prefix hashed at every position) would
# take gigabytes or minutes.
. "$(dirname "$0")/lib-tf.sh"

M=$DATA/shakespeare-q35

# an ids record header with rows = cols = 2^31: rows * cols * 4 is 2^64
python3 -c "
import struct, sys
h = b'\x89TFR\r\n\x1a\n' + struct.pack('<HHHHIIQQQ', 1, 1, 1, 48, 1 << 31, 1 << 31, 0, 0, 0)
sys.stdout.buffer.write(h + b'\0' * 64)" >wrap.rec
test_error 'an ids record of 2^31 x 2^31 values is refused, not read past its end' tf-tok \
	"too large" tf-tok decode $M wrap.rec

# tokenizer.json with one more added token of the given text
added() {
	python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
d['added_tokens'].append({'id': 2047, 'content': sys.argv[3], 'single_word': False, 'lstrip': False,
	'rstrip': False, 'normalized': False, 'special': True})
json.dump(d, open(sys.argv[2], 'w'))" $M/tokenizer.json "$1" "$2"
}
added long50k.json "$(python3 -c "print('x' * 50000)")"
added long1k.json "$(python3 -c "print('a' * 1000 + 'b')")"

test_expect 'a 50,000-byte added token loads in 300 MB and is found' '
	(ulimit -v 300000; printf "hi %s" "$(python3 -c "print(\"x\" * 50000)")" |
		tf-tok encode long50k.json >ids) && test "$(cat ids)" = "381 223 2047"
'
test_expect 'a 1001-byte added token over 256 KiB of its prefix: one walk a position' '
	python3 -c "print(\"a\" * 262144)" >aaa.txt &&
	timeout 60 tf-tok encode long1k.json <aaa.txt >ids1k &&
	timeout 60 tf-tok encode $M <aaa.txt | cmp - ids1k
'

# a run of 10 million blanks: one pre-token, not a regex match limit
python3 -c "print(' ' * 10000000 + 'x  \n y', end='')" >blanks10m.txt
python3 -c "print(' ' * 100000 + 'x  \n y', end='')" >blanks100k.txt
test_expect '10 million blanks are encoded, not refused, and end as 100,000 do' '
	tf-tok encode $M <blanks10m.txt >b10m && tf-tok encode $M <blanks100k.txt >b100k &&
	test "$(tr " " "\n" <b10m | tail -4)" = "$(tr " " "\n" <b100k | tail -4)"
'

done_testing
