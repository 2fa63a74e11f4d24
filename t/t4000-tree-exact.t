#!/bin/sh
# tf-tree against tf-run --mode step, the program a user checks it with:
# each node's logits are the last row of stepping through the prompt and
# the node's branch; --commit best keeps the greedy path (and no junk
# branch), --commit PATH the path given, and the next tree sees exactly
# that; records input gives the records text input gives; each tree's
# record says its sequence and where it starts.
. "$(dirname "$0")/lib-tf.sh"
M=$DATA/shakespeare-q35
P=$(cat $M/prompt.ids)
V=2048

# want IDS...: the step path's last row of logits for those ids, bare
want() {
	echo "$*" | tf-run --mode step --last --raw $M
}

# a tree of 9 nodes whose parents often come after their children
TREE='17:4 30:-1 44:1 51:4 62:-1 70:1 81:5 93:4 105:6'
# each node's branch, root first
BRANCH='62 17|30|30 44|62 51|62|30 70|30 70 81|62 93|30 70 81 105'
test_expect "each node of a tree of 9 has the logits of steps along its branch" "
	printf '%s\n%s\n' '$P' '$TREE' | tf-tree $M >tree.rec &&
	tail -c +49 tree.rec >got.raw &&
	echo '$BRANCH' | tr '|' '\n' | while read -r b; do want $P \$b; done >want.raw &&
	test \$(wc -c <got.raw) = $((9 * V * 4)) && cmp got.raw want.raw
"

test_expect "the record holds 9 rows of $V at the prompt's length, sequence 0" "
	python3 -c '
import struct, sys
h = open(\"tree.rec\", \"rb\").read(48)
m, ver, kind, dt, hl, rows, cols, seq, pos, res = struct.unpack(\"<8s4H2I3Q\", h)
sys.exit(not (kind == 2 and rows == 9 and cols == $V and seq == 0 and pos == $(echo $P | wc -w)))'
"

# the greedy continuation, through the step path
G=$(echo "$P" | tf-run --mode step -n 3 $M)
set -- $G
g1=$1 g2=$2 g3=$3
j1=$(( (g1 + 1) % V )) j2=$(( (g2 + 7) % V ))
test_expect "--commit best keeps the greedy path and not the junk beside it" "
	printf '%s\n%s\n%s\n' '$P' '$g1:-1 $j1:0 $g2:0 $g3:2 $j2:2' '5:-1 9:0' |
		tf-tree --text 2 --commit best $M >best.txt &&
	grep -qx 'kept: 0 2 3' best.txt
"
test_expect "the next tree runs on the kept path: its nodes are steps past it" "
	printf '%s\n%s\n%s\n' '$P' '$g1:-1 $j1:0 $g2:0 $g3:2 $j2:2' '5:-1 9:0' |
		tf-tree --commit best $M | python3 -c '
import sys
d = sys.stdin.buffer.read()
first = 48 + 5 * $V * 4
sys.stdout.buffer.write(d[first + 48:])' >next.raw &&
	{ want $P $g1 $g2 $g3 5; want $P $g1 $g2 $g3 5 9; } >next.want &&
	cmp next.raw next.want
"
test_expect "--commit 0,1 keeps the path given, with a junk root" "
	printf '%s\n%s\n%s\n' '$P' '$j1:-1 $j2:0 $g1:-1' '5:-1 6:0' | tf-tree --commit 0,1 $M |
		tail -c $((V * 4)) >given.raw &&
	want $P $j1 $j2 5 6 >given.want && cmp given.raw given.want
"
test_expect "--commit best keeps nothing when no root is the argmax" "
	printf '%s\n%s\n%s\n' '$P' '$j1:-1 $g2:0' '5:-1' | tf-tree --text 1 --commit best $M >none.txt &&
	grep -qx 'kept:' none.txt &&
	printf '%s\n%s\n' '$P' '5:-1' | tf-tree --text 1 $M >alone.txt &&
	tail -3 none.txt | head -1 >a && head -1 alone.txt >b && cmp a b
"

test_expect "records in give the records text in gives, two sequences" "
	printf '%s\n%s\n\n%s\n' '$P' '$TREE' '3:-1 4:0 5:-1' | tf-tree $M >text.rec &&
	python3 -c '
import struct
def rec(kind, rows, cols, vals):
    return struct.pack(\"<8s4H2I3Q\", b\"\\x89TFR\\r\\n\\x1a\\n\", 1, kind, 1, 48, rows, cols, 0, 0, 0) + \\
        struct.pack(\"<%di\" % len(vals), *vals)
p = [int(x) for x in \"$P\".split()]
t = [tuple(map(int, w.split(\":\"))) for w in \"$TREE\".split()]
out = rec(1, len(p), 1, p) + rec(3, 2, len(t), [i for i, _ in t] + [q for _, q in t])
out += rec(1, 0, 1, []) + rec(3, 2, 3, [3, 4, 5, -1, 0, -1])
open(\"in.rec\", \"wb\").write(out)' &&
	tf-tree -o bin.rec $M in.rec && cmp text.rec bin.rec
"
test_expect "the second sequence starts empty: seq 1, pos 0, roots at position 0" "
	python3 -c '
import struct, sys
d = open(\"bin.rec\", \"rb\").read()
h = d[48 + 9 * $V * 4:][:48]
m, ver, kind, dt, hl, rows, cols, seq, pos, res = struct.unpack(\"<8s4H2I3Q\", h)
sys.exit(not (rows == 3 and seq == 1 and pos == 0))' &&
	tail -c $((3 * V * 4)) bin.rec >empty.raw &&
	{ want 3; want 3 4; want 5; } >empty.want && cmp empty.raw empty.want
"
test_expect "a comment and blanks around the pairs change nothing" "
	printf '%s\n# a tree:\n  %s  # its nodes\n' '$P' '$TREE' | tf-tree $M | cmp - tree.rec
"

done_testing
