#!/bin/sh
# GGUF models split over files (NAME-00001-of-0000N.gguf, keys split.no and
# split.count, as gguf's writer and llama.cpp's gguf-split make them): the
# first part brings the rest, a folder of one split set is that set, and a
# part missing, out of place or opened on its own is refused by name.
. "$(dirname "$0")/lib-tf.sh"
python3 -c 'import gguf, numpy' 2>/dev/null || skip_all 'the gguf package is not installed (make test installs it)'
MK="python3 $TF_ROOT/t/helper/mkgguf.py"
TINY=$DATA/tiny-q35
SH=$DATA/shakespeare-q35
P=$TINY/prompt.ids

$MK write $TINY one.gguf --type Q4_0 --no-tok || exit 1
mkdir s && $MK write $TINY s/tiny.gguf --type Q4_0 --no-tok --split 20 || exit 1
tf-run one.gguf $P >one.out || exit 1

test_expect "the set is three parts" "ls s | tr '\n' ' ' | grep -qx 'tiny-00001-of-00003.gguf tiny-00002-of-00003.gguf tiny-00003-of-00003.gguf '"
test_expect "the first part gives the single file's logits" "
	tf-run s/tiny-00001-of-00003.gguf $P >g.out && cmp one.out g.out
"
test_expect "a folder of the set gives them too" "tf-run s $P >g.out && cmp one.out g.out"
test_expect "tf-pack of the set gives a bundle of the same logits" "
	tf-pack -q s/tiny-00001-of-00003.gguf t.tfb && tf-run t.tfb $P >g.out && cmp one.out g.out
"
test_expect "--show lists the tensors of every part" "
	tf-pack --show s/tiny-00001-of-00003.gguf | tail -n 1 | grep -qx '# 56 tensors in 3 files'
"
test_error "a later part is not a model on its own" tf-run "part 2 of a split model: open the first part" \
	tf-run s/tiny-00002-of-00003.gguf $P
mkdir m && cp s/tiny-00001-of-00003.gguf s/tiny-00002-of-00003.gguf m/
test_error "a missing part is named" tf-run "cannot open 'm/tiny-00003-of-00003.gguf'" \
	tf-run m/tiny-00001-of-00003.gguf $P
mkdir x && cp s/tiny-00001-of-00003.gguf x/ && cp s/tiny-00003-of-00003.gguf x/tiny-00002-of-00003.gguf &&
	cp s/tiny-00002-of-00003.gguf x/tiny-00003-of-00003.gguf
test_error "parts out of place are refused" tf-run "split.no 2 of 3, expected 1 of 3" \
	tf-run x/tiny-00001-of-00003.gguf $P
cp s/tiny-00001-of-00003.gguf r.gguf
test_error "a first part renamed out of the pattern is refused" tf-run "split.count is 3 but the name is not" \
	tf-run r.gguf $P
mkdir y && cp s/* y/ && cp one.gguf y/
test_error "a folder of a set and another GGUF is refused" tf-run "holds 4 GGUF files that are not one split set" \
	tf-run y $P

mkdir t && $MK write $SH t/sh.gguf --type BF16 --split 30 || exit 1
test_expect "tf-tok reads the tokenizer of a split set" "
	tf-tok decode $SH $SH/val4096.ids >text && tf-tok encode t/sh-00001-of-00004.gguf text >a.ids &&
	tf-tok encode $SH text >b.ids && cmp a.ids b.ids
"

done_testing
