#!/bin/sh
# tf-pull of a GGUF repository, as people take one quantization of many:
# --include with a file name pattern (*Q1_0*) takes that file alone, and
# *.gguf a whole split set; the snapshot folder is then a model tf-run
# reads, a folder of one GGUF or one split set.
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-hub.sh"
python3 -c 'import gguf, numpy' 2>/dev/null || skip_all 'the gguf package is not installed (make test installs it)'
MK="python3 $TF_ROOT/t/helper/mkgguf.py"
SH1=$DATA/shakespeare-q35-1bit
P=$SH1/prompt.ids

mkdir repo split
$MK write $SH1 repo/twin-Q1_0.gguf --type Q1_0 && $MK write $SH1 repo/twin-BF16.gguf --type BF16 &&
	echo '# a 1-bit model' >repo/README.md && $MK write $SH1 split/twin.gguf --type Q1_0 --split 40 || exit 1
tf-run repo/twin-Q1_0.gguf $P >want.out || exit 1

start_hub --repo org/twin="$PWD/repo" --repo org/twin-split="$PWD/split"
test_expect "--include '*Q1_0*' takes the Q1_0 file alone" "
	tf-pull -i '*Q1_0*' org/twin >snap && ls \"\$(cat snap)\" >files && test \"\$(cat files)\" = twin-Q1_0.gguf
"
test_expect "the snapshot folder runs as that GGUF" "
	tf-run \"\$(cat snap)\" $P >got.out && cmp want.out got.out
"
test_expect "--include '*.gguf' takes a split set, which runs as one model" "
	tf-pull -i '*.gguf' org/twin-split >snap2 && test \$(ls \"\$(cat snap2)\" | wc -l) -gt 1 &&
	tf-run \"\$(cat snap2)\" $P >got2.out && cmp want.out got2.out
"
test_expect "tf-tok reads the pulled GGUF's tokenizer" "
	tf-tok encode \"\$(cat snap)\" $SH1/tokenizer.json >a.ids && tf-tok encode $SH1 $SH1/tokenizer.json >b.ids &&
	cmp a.ids b.ids
"
stop_hub

done_testing
