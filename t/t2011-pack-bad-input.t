#!/bin/sh
# Damaged bundles and bad options: a clear "tf-pack: error:" (and
# "tf-run: error:" for the same file), an exit status below 128, no output
# file left behind.
. "$(dirname "$0")/lib-tf.sh"
M=$DATA/tiny-q35
FIX="python3 $TF_ROOT/t/helper/pack-fixture.py"

tf-pack -q $M good.tfb || exit 1

bad() {
	kind=$1 pat=$2
	$FIX bundle-bad good.tfb bad-$kind.tfb $kind
	test_error "$kind bundle: tf-pack --show" tf-pack "$pat" tf-pack --show bad-$kind.tfb
	test_error "$kind bundle: tf-run" tf-run "$pat" tf-run -o out.rec bad-$kind.tfb $M/prompt.ids
	test_expect "$kind bundle: no output file" "test ! -e out.rec && ! ls out.rec.tmp.* 2>/dev/null"
}

bad truncated 'truncated bundle: [0-9]+ bytes, the header says [0-9]+'
bad trailing 'bytes after the end the header gives'
bad version 'tf-bundle version 7 not supported'
bad past-end "tensor 'embed_tokens.weight': bytes \[[0-9]+, [0-9]+\) point past the end"
bad overlap 'overlap'
bad overlap-hidden 'overlap'
bad bytes "tensor 'embed_tokens.weight': 528384 bytes, its shape and format need 524288"
bad shape "tensor 'embed_tokens.weight': bad shape"
bad notjson 'manifest is not valid JSON'
bad deep 'manifest is not valid JSON: maximum parsing depth'
bad notarray 'manifest has no tensors array'
bad dupkey 'duplicate object key'
$FIX bundle-bad good.tfb bad-magic.tfb magic
test_error 'bad magic: tf-pack --show' tf-pack 'is not a tf-bundle \(bad magic\)' tf-pack --show bad-magic.tfb
test_error 'bad magic: tf-run' tf-run 'neither a model folder, a tf-bundle nor a GGUF file' tf-run bad-magic.tfb $M/prompt.ids
: >empty.tfb
test_error 'an empty file' tf-pack 'bad magic' tf-pack --show empty.tfb

# every byte of the header and manifest damaged in turn, 300 times: an
# error or a valid reading, never a crash
test_expect 'random damage to the header and manifest never crashes the reader' "
	python3 - <<'PY'
import random, subprocess, sys
raw = open('good.tfb', 'rb').read()
mlen = int.from_bytes(raw[24:32], 'little')
rng = random.Random(5)
for i in range(300):
    b = bytearray(raw[:64 + mlen + 4096])
    for _ in range(rng.randint(1, 4)):
        b[rng.randrange(0, 64 + mlen)] = rng.randrange(256)
    open('fuzz.tfb', 'wb').write(b + raw[64 + mlen + 4096:])
    r = subprocess.run(['tf-pack', '--show', 'fuzz.tfb'], capture_output=True)
    if r.returncode not in (0, 1) or (r.returncode == 1 and not r.stderr.startswith(b'tf-pack: error: ')):
        sys.exit('case %d: exit %d %r' % (i, r.returncode, r.stderr[:200]))
PY
"

test_error 'a source that does not exist' tf-pack "cannot open 'nowhere'" tf-pack nowhere out.tfb
test_error 'a source that is a plain file' tf-pack 'neither a model folder, a tf-bundle nor a GGUF file' tf-pack $M/config.json out.tfb
test_error 'an output folder that does not exist' tf-pack "cannot create 'no/such/dir/x.tfb.tmp" tf-pack $M no/such/dir/x.tfb
test_error 'a bundle to stdout' tf-pack 'cannot be written to stdout' tf-pack $M -

printf 'layers.*.mlp.* 9\n' >r9.txt
test_error 'a recipe with bits 9' tf-pack "recipe 'r9.txt' line 1: bits '9' not supported" tf-pack -r r9.txt $M out.tfb
printf 'layers.*.mlp.* 4 48\n' >rg.txt
test_error 'a recipe with group 48' tf-pack "recipe 'rg.txt' line 1: group 48 not supported" tf-pack -r rg.txt $M out.tfb
printf 'just-a-glob\n' >r1.txt
test_error 'a recipe line without bits' tf-pack "recipe 'r1.txt' line 1: expected 'GLOB BITS \[GROUP\]'" tf-pack -r r1.txt $M out.tfb
test_expect 'no output file after any of these' "test ! -e out.tfb && ! ls out.tfb.tmp.* 2>/dev/null"

usage() {
	title=$1
	shift
	test_expect "$title: usage error, exit 2" "
		tf-pack $* >o.txt 2>e.txt; test \$? = 2 && grep -q \"Try 'tf-pack --help'\" e.txt && test ! -s o.txt
	"
}
usage '--bits 9' --bits 9 $M out.tfb
usage '--bits 1 without --synth' --bits 1 $M out.tfb
usage '--bits 7' --bits 7 $M out.tfb
usage '--group 48' --bits 4 --group 48 $M out.tfb
usage '--json without --show' --json $M out.tfb
usage 'one operand' $M
usage 'an unknown option' --frobnicate $M out.tfb
usage '--synth without --bits' --synth qwen3.5-9b out.tfb
usage '--seed without --synth' --seed 3 $M out.tfb

# checkpoints tf-run refuses, tf-pack refuses too, before writing anything
for kind in shape missing overlap-hidden config-nofield; do
	python3 "$TF_ROOT/t/helper/mkbad.py" $M ck-$kind $kind
	test_error "a checkpoint tf-run refuses ($kind) is not packed" tf-pack "(is not a model tf-run can load|overlap)" \
		tf-pack -q ck-$kind out.tfb
done
test_expect 'no output file after any of them' "test ! -e out.tfb && ! ls out.tfb.tmp.* 2>/dev/null"

# options that would be ignored are refused instead
tf-pack -q --bits 8 $M q8.tfb || echo "Bail out! tf-pack --bits 8 failed"
test_error '--bits 4 on an 8-bit bundle is refused, not kept at 8 bits' tf-pack \
	"'embed_tokens' is already 8-bit: tf-pack copies quantized weights as they are" tf-pack --bits 4 q8.tfb out.tfb
test_expect '--bits 8 on an 8-bit bundle is what it has: packed' 'tf-pack -q --bits 8 q8.tfb same.tfb'
printf 'layers.*.mlp.nothing 4\n' >nomatch.txt
test_error 'a recipe rule that matches no module is refused' tf-pack \
	"recipe line 1: 'layers.\*.mlp.nothing' matches no module" tf-pack -r nomatch.txt $M out.tfb
test_expect 'no output file after a refused recipe' "test ! -e out.tfb && ! ls out.tfb.tmp.* 2>/dev/null"

test_expect '--help on stdout, exit 0' "tf-pack --help >h.txt && grep -q '^usage: tf-pack' h.txt"
test_expect '--version' "tf-pack --version | grep -q '^tf-pack [0-9]'"

# a pack stopped by a signal leaves nothing behind: the 9B geometry takes
# seconds to write, so SIGTERM lands in the middle
test_expect 'a pack killed by SIGTERM leaves no file' "
	tf-pack -q --synth qwen3.5-9b --bits 4 big.tfb & pid=\$!
	sleep 1; kill \$pid; wait \$pid; test \$? -ge 128 &&
	test ! -e big.tfb && ! ls big.tfb.tmp.* 2>/dev/null
"

done_testing
