#!/bin/sh
# tf-run on the GPU against the CPU on every t/data model and on bundles of
# every weight form (affine 2, 3, 4, 8 bits, a mixed recipe, sign1): prompt
# and step logits by KL and top-1 through tf-gate, windows of 1, 2, 3, 8
# and 16 rows bit-identical on the GPU, the first 32 greedy tokens, sampled
# draws on the device against the host's, generation ending at an end id
# inside a loop of steps, the out-of-memory message; yarn rope and the
# context on the GPU.
. "$(dirname "$0")/lib-tf.sh"

if ! tf-run --device cuda $DATA/tiny-q35 </dev/null >/dev/null 2>err; then
	grep -Eq 'no CUDA|without CUDA|no CUDA support' err && skip_all "no CUDA device"
fi

vocab() {
	grep -o '"vocab_size": [0-9]*' $DATA/$1/config.json | grep -o '[0-9]*$'
}

# ids: 600 of the Shakespeare held-out ids (folded into the vocabulary),
# then the model's own prompt as a second sequence
ids() {
	tr ' ' '\n' <$DATA/shakespeare-q35/val4096.ids | awk 'NF' | head -600 |
		awk -v v=$(vocab $1) '{ printf "%s%d", (NR > 1 ? " " : ""), $1 % v } END { print "" }'
	cat $DATA/$1/prompt.ids
}

# gate A B THRESHOLDS...: tf-gate's figures go to the TAP stream as comments
gate() {
	a=$1 b=$2
	shift 2
	tf-gate "$@" $a $b >gate.out 2>&1
	rc=$?
	sed 's/^/# /' gate.out
	return $rc
}

for M in tiny-q35 shakespeare-q35 shakespeare-q35-1bit; do
	ids $M >ids.$M
	tf-run --device cpu $DATA/$M ids.$M >cpu.prompt.$M
	tf-run --device cpu --mode step $DATA/$M ids.$M >cpu.step.$M

	tf-run --device cuda $DATA/$M ids.$M >gpu.prompt.$M
	gate cpu.prompt.$M gpu.prompt.$M --kl 1e-3 --top1 0.995
	say_ok $? "$M: prompt mode on the GPU within KL 1e-3 and top-1 99.5% of the CPU"

	tf-run --device cuda --mode step $DATA/$M ids.$M >gpu.step.$M
	gate cpu.step.$M gpu.step.$M --kl 1e-3 --top1 0.995
	say_ok $? "$M: step mode on the GPU within KL 1e-3 and top-1 99.5% of the CPU"

	for W in 1 2 3 8 16; do
		test_expect "$M: GPU windows of $W rows bit-identical to steps" "
			tf-run --device cuda --window $W $DATA/$M ids.$M >gpu.w$W &&
			tf-gate --exact gpu.step.$M gpu.w$W
		"
	done
done

# yarn rope (the table uploaded with the weights; 128 ids, twice its
# original context of 64): against the CPU and transformers, windows
# bit-identical to steps, and the context held on the GPU too
Y=$DATA/tiny-q35-yarn
tf-run --device cpu $Y $Y/prompt.ids >cpu.yarn
tf-run --device cuda $Y $Y/prompt.ids >gpu.yarn
gate cpu.yarn gpu.yarn --kl 1e-3 --top1 0.995
say_ok $? "tiny-q35-yarn: prompt mode on the GPU within KL 1e-3 and top-1 99.5% of the CPU"
tf-run --device cuda --raw $Y $Y/prompt.ids >gpu.yarn.f32
gate gpu.yarn.f32 $Y/prompt.logits.f32 --raw 1024 --max-abs 1e-2 --top1 0.99
say_ok $? "tiny-q35-yarn: the GPU within 1e-2 and top-1 99% of transformers"
tf-run --device cuda --mode step $Y $Y/prompt.ids >gpu.yarn.step
gate cpu.yarn gpu.yarn.step --kl 1e-3 --top1 0.995
say_ok $? "tiny-q35-yarn: step mode on the GPU within KL 1e-3 and top-1 99.5% of the CPU"
test_expect "tiny-q35-yarn: GPU windows of 16 rows bit-identical to steps" "
	tf-run --device cuda --window 16 $Y $Y/prompt.ids >gpu.yarn.w16 && tf-gate --exact gpu.yarn.step gpu.yarn.w16
"
test_expect "tiny-q35-yarn: greedy ids on the GPU equal the CPU's" "
	tf-run --device cpu -n 16 --ignore-eos $Y $Y/prompt.ids >cpu.yarn.ids &&
	tf-run --device cuda -n 16 --ignore-eos $Y $Y/prompt.ids >gpu.yarn.ids && cmp cpu.yarn.ids gpu.yarn.ids
"
test_error "tiny-q35-yarn: a prompt plus -n past its 256 refused on the GPU" tf-run \
	"prompt of 128 ids plus -n 129 passes the model's context of 256" tf-run --device cuda -n 129 $Y $Y/prompt.ids
test_error "a context whose cache passes the GPU's free memory is refused with what fits" tf-run \
	"needs .* of cache, .* free on the GPU: --ctx [0-9]+ fits" env TF_MEM_AVAILABLE=100K tf-run --device cuda $Y $Y/prompt.ids

# the forms tf-pack writes: tiled and untiled affine widths and groups, a
# mixed recipe (fused products whose parts differ in form), sign1
ids shakespeare-q35 >ids.b
for spec in "q4 --bits 4 --group 64" "q2 --bits 2 --group 32" "q3 --bits 3 --group 128" \
	    "q8 --bits 8 --group 64" "mixed --recipe mixed_2_6" "sign1 1bit"; do
	set -- $spec
	name=$1
	shift
	if [ "$1" = 1bit ]; then
		tf-pack -q $DATA/shakespeare-q35-1bit $name.tfb
	else
		tf-pack -q "$@" $DATA/shakespeare-q35 $name.tfb
	fi
	tf-run --device cpu $name.tfb ids.b >cpu.$name
	tf-run --device cuda $name.tfb ids.b >gpu.$name
	gate cpu.$name gpu.$name --kl 1e-3 --top1 0.995
	say_ok $? "$name bundle: the GPU within KL 1e-3 and top-1 99.5% of the CPU"
	test_expect "$name bundle: GPU windows of 16 rows bit-identical to steps" "
		tf-run --device cuda --mode step $name.tfb ids.b >gs.$name &&
		tf-run --device cuda --window 16 $name.tfb ids.b >gw.$name &&
		tf-gate --exact gs.$name gw.$name
	"
	# decode steps: the default int16-input products, and the float-input
	# ones (TF_GEMV_Q16=0), against the CPU's steps
	tf-run --device cpu --mode step $name.tfb ids.b >cs.$name
	gate cs.$name gs.$name --kl 1e-3 --top1 0.995
	say_ok $? "$name bundle: GPU steps within KL 1e-3 and top-1 99.5% of the CPU's"
	TF_GEMV_Q16=0 tf-run --device cuda --mode step $name.tfb ids.b >gf.$name
	gate cs.$name gf.$name --kl 1e-3 --top1 0.995
	say_ok $? "$name bundle: GPU steps with float inputs within KL 1e-3 and top-1 99.5% of the CPU's"
done

# the SwiGLU product writing down's inputs as their int16 form, as it does
# on the 9B (forced: the small models' few tiles would not pay for it).
# Its codes and scales are those down makes from the floats
# (t/unit/cuda-gemv-q16-inputs.c), its sums in another order, so its steps
# are not the float path's bits
for name in q4 sign1; do
	test_expect "$name bundle, SwiGLU outputs int16: windows of 16 rows bit-identical to steps, not to the float path's" "
		TF_CUDA_SWIGLU16=1 tf-run --device cuda --mode step $name.tfb ids.b >gs16.$name &&
		TF_CUDA_SWIGLU16=1 tf-run --device cuda --window 16 $name.tfb ids.b >gw16.$name &&
		tf-gate --exact gs16.$name gw16.$name &&
		! tf-gate --exact gs.$name gs16.$name >/dev/null
	"
	gate cs.$name gs16.$name --kl 1e-3 --top1 0.995
	say_ok $? "$name bundle, SwiGLU outputs int16: GPU steps within KL 1e-3 and top-1 99.5% of the CPU's"
done

for M in shakespeare-q35 shakespeare-q35-1bit; do
	test_expect "$M: the first 32 greedy tokens on the GPU equal the CPU's" "
		tf-run --device cpu -n 32 $DATA/$M $DATA/$M/prompt.ids >cpu.g &&
		tf-run --device cuda -n 32 $DATA/$M $DATA/$M/prompt.ids >gpu.g &&
		diff cpu.g gpu.g
	"
done

test_expect "sampled draws on the device follow the seed" "
	tf-run --device cuda -n 24 --temp 0.8 --seed 7 $DATA/shakespeare-q35 $DATA/shakespeare-q35/prompt.ids >s1 &&
	tf-run --device cuda -n 24 --temp 0.8 --seed 7 $DATA/shakespeare-q35 $DATA/shakespeare-q35/prompt.ids >s2 &&
	diff s1 s2 && test \$(wc -w <s1) -ge 1
"

# the device's draws against tf_sample's on the same GPU logits (TF_CUDA_DRAW=0
# brings each step's logits back to the host): the same ids, whatever the
# GPU's logits differ from the CPU's by
M=$DATA/shakespeare-q35
for opts in "--temp 0.8" "--temp 0.8 --top-k 40 --top-p 0.9" "--temp 1 --top-k 5" \
	    "--temp 1.5 --top-p 0.95" "--temp 0.6 --top-k 1000 --top-p 0.99" "--temp 3 --top-p 0.5"; do
	test_expect "draws on the device equal the host's from the same logits: $opts" "
		tf-run --device cuda -n 48 --ignore-eos $opts --seed 5 $M $M/prompt.ids >dev &&
		TF_CUDA_DRAW=0 tf-run --device cuda -n 48 --ignore-eos $opts --seed 5 $M $M/prompt.ids >host &&
		diff dev host && test \$(wc -w <dev) = 48
	"
done

# generation on the device runs in loops of up to 32 steps a launch; a loop
# ends at an end id where one step a launch would, the ids before it
# written: the model's greedy ids, with the 11th made an end id of a copy
tf-run --device cuda -n 48 --ignore-eos $M $M/prompt.ids >all
E=$(awk '{ print $11 }' all)
rm -rf eosm && mkdir eosm && ln -s $M/* eosm/ && rm eosm/config.json &&
	sed "s/\"eos_token_id\": 0/\"eos_token_id\": [0, $E]/" $M/config.json >eosm/config.json
awk -v e="$E" '{ for (i = 1; i <= NF && $i != e; i++) printf "%s%s", (i > 1 ? " " : ""), $i; print "" }' all >want
for opts in "" "--temp 0.8 --seed 3" "--temp 1 --top-k 5 --seed 3"; do
	test_expect "a loop of steps on the device ends at an end id as one step a launch does: ${opts:-greedy}" "
		tf-run --device cuda -n 48 $opts eosm $M/prompt.ids >dev &&
		TF_CUDA_DRAW=0 tf-run --device cuda -n 48 $opts eosm $M/prompt.ids >host &&
		diff dev host && { test -n \"$opts\" || diff want dev; } &&
		tf-run --device cuda -n 48 --stream $opts eosm $M/prompt.ids >stream.raw &&
		sed 's/ $//' stream.raw >stream &&
		diff dev stream
	"
done

# a generation past the first growth of the caches (256 positions), where
# the loops are captured again for the new caches
test_expect "300 greedy ids on the device equal the host's draws across the caches' growth" "
	tf-run --device cuda -n 300 --ignore-eos $M $M/prompt.ids >dev &&
	TF_CUDA_DRAW=0 tf-run --device cuda -n 300 --ignore-eos $M $M/prompt.ids >host &&
	diff dev host && test \$(wc -w <dev) = 300
"

# and against the CPU, as the greedy ids above: the logits differ a little
# (KL above), so two samples part if a draw falls that close to a boundary
# between two ids; 32 ids of one seed are expected to agree
test_expect "top-k 40 and top-p 0.9 draws on the GPU equal the CPU's for seed 7" "
	tf-run --device cpu -n 32 --ignore-eos --temp 0.8 --top-k 40 --top-p 0.9 --seed 7 $M $M/prompt.ids >cpu.s &&
	tf-run --device cuda -n 32 --ignore-eos --temp 0.8 --top-k 40 --top-p 0.9 --seed 7 $M $M/prompt.ids >gpu.s &&
	diff cpu.s gpu.s
"

test_error "weights larger than the GPU room: the need is named" tf-run \
	"model needs [0-9.]+ MiB on the GPU, [0-9.]+ MiB free" \
	env TF_CUDA_MEM_LIMIT=100000 tf-run --device cuda $DATA/shakespeare-q35 $DATA/shakespeare-q35/prompt.ids

done_testing
