#!/bin/sh
# Trees that are no trees, paths that are no paths, input that is neither:
# each a "tf-tree: error:" naming the line or record, exit 1, and nothing
# written, even when good trees come before the bad one.
. "$(dirname "$0")/lib-tf.sh"
M=$DATA/tiny-q35

# bad TITLE ERE INPUT [OPTIONS]: refused with ERE, stdout empty
bad() {
	printf '%b' "$3" >in.txt
	test_error "$1" tf-tree "$2" tf-tree $4 $M in.txt
	test_expect "$1: nothing on stdout" "tf-tree $4 $M in.txt >out 2>/dev/null; test \$? = 1 && ! test -s out"
}

bad 'a tree before any prompt' "'in.txt' line 1: a tree before any prompt" '5:-1 6:0\n'
bad 'a parent past the tree' "line 2: tree node 1: parent 7 is not a node of the tree \(-1 to 2\)" \
	'1 2\n5:-1 6:7 8:0\n'
bad 'a parent below -1' "line 2: '5:-2' is not ID:PARENT" '1 2\n5:-2\n'
bad 'a node its own parent' "line 2: tree node 1 is its own parent" '1 2\n5:-1 6:1\n'
bad 'a cycle' "line 2: tree node 0 is its own ancestor" '1 2\n5:1 6:2 7:0\n'
bad 'an id past the vocabulary' "line 2: node 1: id 1024 is out of range \(vocab_size 1024\)" '1 2\n5:-1 1024:0\n'
bad 'a word that is not id:parent' "line 2: '6:x' is not ID:PARENT" '1 2\n5:-1 6:x\n'
bad 'a parent past int32' "line 2: '6:99999999999' is not ID:PARENT" '1 2\n5:-1 6:99999999999\n'
bad 'a prompt id past the vocabulary' "line 1: id 5000 is out of range" '1 5000\n5:-1\n'
bad 'good trees, then a bad one: nothing written' "line 4: tree node 0: parent 3" \
	'1 2\n5:-1 6:0\n7:-1\n8:3\n'
bad 'a --commit path that is no chain of a tree' "line 3: --commit: path node 2 is not a child of 1" \
	'1 2\n5:-1 6:0 7:1\n5:-1 6:0 7:0\n' '--commit 0,1,2'
bad 'a --commit path that starts below a root' "line 2: --commit: path node 1 is no root" \
	'1 2\n5:-1 6:0\n' '--commit 1'

awk 'BEGIN { printf "1 2\n"; for (i = 0; i < 1025; i++) printf "%d:%d ", i % 1000, i - 1; print "" }' >big.txt
test_error 'a tree of 1025 nodes' tf-tree "line 2: a tree of 1025 nodes \(1 to 1024 are taken\)" tf-tree $M big.txt
awk 'BEGIN { printf "1 2\n"; for (i = 0; i < 1024; i++) printf "%d:%d ", i % 1000, i - 1; print "" }' >max.txt
test_expect 'a chain of 1024 nodes runs' "tf-tree --text 1 $M max.txt >max.out && test \$(grep -c : max.out) = 1024"

tf-run --last $M $M/prompt.ids >logits.rec
test_error 'a logits record as input' tf-tree "record 1 is a logits record" tf-tree $M logits.rec
printf '1 2\n5:-1\n' >ok.txt
test_expect '--device tpu is a usage error' "
	tf-tree --device tpu $M ok.txt 2>err; test \$? = 2 && grep -q 'device must be cpu, cuda or auto' err
"
for p in 0,x 0, -1 ,0; do
	test_expect "--commit '$p' is a usage error" "
		tf-tree --commit '$p' $M ok.txt 2>err; test \$? = 2 && grep -q 'commit takes best or node indices' err
	"
done
python3 -c '
import struct
def rec(kind, rows, cols, vals):
    return struct.pack("<8s4H2I3Q", b"\x89TFR\r\n\x1a\n", 1, kind, 1, 48, rows, cols, 0, 0, 0) + \
        struct.pack("<%di" % len(vals), *vals)
open("neg.rec", "wb").write(rec(1, 1, 1, [3]) + rec(3, 2, 2, [5, 6, -1, -2]))
open("rows.rec", "wb").write(rec(1, 1, 1, [3]) + rec(3, 1, 2, [5, 6]))'
test_error 'a parent below -1 in a record' tf-tree "'neg.rec' record 2: tree node 1: parent -2" tf-tree $M neg.rec
test_error 'a tree record of one row' tf-tree "record 2 is of the wrong shape" tf-tree $M rows.rec
# the context: --ctx 8 here (the model's is 4096)
bad 'a prompt past the context' "line 1: prompt of 9 ids passes the context of 8 that --ctx set" \
	'1 2 3 4 5 6 7 8 9\n5:-1\n' '--ctx 8'
bad 'a tree past the context on its prompt' "line 2: a tree 3 deep on 6 positions passes the context of 8" \
	'1 2 3 4 5 6\n5:-1 6:0 7:1\n' '--ctx 8'
bad 'a tree past the context after the paths kept' "line 3: a tree 2 deep on 7 positions passes the context of 8" \
	'1 2 3 4 5 6\n5:-1 6:0\n5:-1 6:0\n' '--ctx 8 --commit 0'
test_expect 'a tree that fills the context runs' "
	printf '1 2 3 4 5 6\\n5:-1 6:0\\n' >fill.txt && tf-tree --ctx 8 --text 1 $M fill.txt >fill.out &&
	test \$(wc -l <fill.out) = 3
"
bad '--ctx past the model'\''s context' "--ctx 4097 is more than the model's context of 4096" '1 2\n' '--ctx 4097'
test_error 'a cache past the memory is refused up front' tf-tree "a context of 4096 positions needs .* --ctx [0-9]+ fits" \
	env TF_MEM_AVAILABLE=1M tf-tree $M in.txt
test_expect '-o of a bad input leaves no file' "
	printf '1 2\n5:-1\n6:4\n' >b.txt; ! tf-tree -o out.rec $M b.txt 2>/dev/null && ! test -e out.rec
"
done_testing
