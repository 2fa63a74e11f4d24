#!/bin/sh
# tf-tree on the GPU against the GPU's own steps: every node of chains,
# stars, binary and random trees of up to 16 nodes bit-identical to
# tf-run --device cuda --mode step over the prompt and the node's branch,
# on every t/data model and on 4-bit and sign1 bundles; contexts on both
# sides of the attention's chunks of keys (128, 256, 8192); --commit best
# and the next tree against steps past the kept path; the CPU's trees
# within tf-gate's bounds; a tree of 17 nodes refused before anything runs.
. "$(dirname "$0")/lib-tf.sh"

if ! tf-run --device cuda $DATA/tiny-q35 </dev/null >/dev/null 2>err; then
	grep -Eq 'no CUDA|without CUDA|no CUDA support' err && skip_all "no CUDA device"
fi

vocab() {
	python3 -c "import json; print(json.load(open('$1/config.json'))['vocab_size'])" 2>/dev/null || echo 1024
}

# trees N SEED V: lines of random trees of the shapes named above
trees() {
	python3 -c "
import random
r = random.Random($2); V = $3
def line(par): return ' '.join('%d:%d' % (r.randrange(V), p) for p in par)
print(line([i - 1 for i in range(16)]))
print(line([-1] + [0] * 15))
print(line([-1] + [(i - 1) // 2 for i in range(1, 15)]))
for k in range($1):
    n = r.randint(2, 16)
    par = [-1] + [(-1 if r.random() < 0.1 else r.randrange(i)) for i in range(1, n)]
    perm = list(range(n)); r.shuffle(perm); inv = {p: i for i, p in enumerate(perm)}
    print(' '.join('%d:%d' % (r.randrange(V), -1 if par[p] < 0 else inv[par[p]]) for p in perm))
"
}

# branches PROMPT < TREES: one line per node, the prompt then its branch
branches() {
	python3 -c "
import sys
p = sys.argv[1]
for ln in sys.stdin:
    nodes = [tuple(map(int, w.split(':'))) for w in ln.split()]
    for i in range(len(nodes)):
        b, x = [], i
        while x >= 0:
            b.append(nodes[x][0]); x = nodes[x][1]
        print(' '.join([p] + [str(t) for t in reversed(b)]).strip())
" "$1"
}

# same MODEL PROMPT: each node's GPU logits against the GPU's steps
same() {
	model=$1 prompt=$2
	trees 4 $seed $(vocab $model) >trees.txt
	{ echo "$prompt"; cat trees.txt; } | tf-tree --device cuda $model >tree.rec &&
	python3 -c "
import sys
d = open('tree.rec', 'rb').read(); out = b''
while d:
    rows, cols = int.from_bytes(d[16:20], 'little'), int.from_bytes(d[20:24], 'little')
    out += d[48:48 + 4 * rows * cols]; d = d[48 + 4 * rows * cols:]
open('got.raw', 'wb').write(out)" &&
	branches "$prompt" <trees.txt | tf-run --device cuda --window 16 --last --raw $model >want.raw &&
	test -s want.raw && cmp got.raw want.raw
}

seed=1
for M in tiny-q35 shakespeare-q35 shakespeare-q35-1bit; do
	P=$(cat $DATA/$M/prompt.ids)
	test_expect "$M: every node of 7 trees bit-identical to the GPU's steps" "same $DATA/$M '$P'"
	seed=$((seed + 1))
done

tf-pack --bits 4 $DATA/tiny-q35 q4.tfb 2>/dev/null
tf-pack $DATA/shakespeare-q35-1bit sign1.tfb 2>/dev/null
for B in q4 sign1; do
	test_expect "$B bundle: every node bit-identical to the GPU's steps" "same $B.tfb '$(cat $DATA/tiny-q35/prompt.ids)'"
	seed=$((seed + 1))
done

# contexts of random ids on both sides of the chunks of keys, on a copy
# of the model whose context (8192) lets a tree past the last chunk
mkdir -p long && for f in $DATA/shakespeare-q35/*; do ln -sf "$f" long/; done && rm long/config.json &&
	sed 's/"max_position_embeddings": [0-9]*/"max_position_embeddings": 32768/' $DATA/shakespeare-q35/config.json >long/config.json
for ctx in 126 255 8189; do
	P=$(python3 -c "import random; r = random.Random($ctx); print(' '.join(str(r.randrange(2048)) for _ in range($ctx)))")
	test_expect "a context of $ctx keys: trees across its chunk boundary exact" "same long '$P'"
done

M=$DATA/shakespeare-q35
P=$(cat $M/prompt.ids)
G=$(echo "$P" | tf-run --device cuda --mode step -n 3 $M)
set -- $G
test_expect "--commit best keeps the greedy path; the next tree is steps past it" "
	printf '%s\n%s\n%s\n' '$P' '$1:-1 7:0 $2:0 $3:2 9:2' '5:-1 9:0' | tf-tree --device cuda --commit best $M |
		tail -c $((2 * 2048 * 4)) >next.raw &&
	printf '%s\n%s\n' '$P $1 $2 $3 5' '$P $1 $2 $3 5 9' | tf-run --device cuda --mode step --last --raw $M >next.want &&
	cmp next.raw next.want &&
	printf '%s\n%s\n' '$P' '$1:-1 7:0 $2:0 $3:2 9:2' | tf-tree --device cuda --text 1 --commit best $M |
		grep -qx 'kept: 0 2 3'
"
test_expect "the CPU's trees agree within KL 1e-3 and top-1 0.95" "
	trees 4 99 2048 >t.txt && { echo '$P'; cat t.txt; } >in.txt &&
	tf-tree --device cuda $M in.txt >gpu.rec && tf-tree --device cpu $M in.txt >cpu.rec &&
	tf-gate --kl 1e-3 --top1 0.95 cpu.rec gpu.rec >/dev/null
"
awk 'BEGIN { printf "1 2\n"; for (i = 0; i < 17; i++) printf "%d:%d ", i, i - 1; print "" }' >big.txt
test_error "a tree of 17 nodes on the GPU" tf-tree "line 2: a tree of 17 nodes on the GPU \(1 to 16 there" \
	tf-tree --device cuda $M big.txt

done_testing
