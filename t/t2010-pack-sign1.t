#!/bin/sh
# Exact 1-bit repack of the Shakespeare 1-bit twin: every 2-D weight becomes
# sign1 with error 0, the bundle is under a seventh of the bf16 file, and
# tf-run gives the same logits from the bundle as from the folder.
. "$(dirname "$0")/lib-tf.sh"
M=$DATA/shakespeare-q35-1bit

test_expect 'pack the 1-bit twin' "tf-pack -q $M one.tfb && test -s one.tfb"

test_expect 'every 2-D weight took the sign1 path with error 0' "
	tf-pack --show --json one.tfb >m.json &&
	python3 - <<'PY'
import json
m = json.load(open('m.json'))
ts = m['tensors']
w2 = [t for t in ts if len(t['shape']) == 2]
assert len(w2) == 63, len(w2)
for t in w2:
    assert t['format'] == 'sign1' and t['path'] == 'sign1', t
    assert t['max_error'] == 0 and t['bits'] == 1 and t['group'] == 128, t
    assert 'no_rotation' in t['flags'] and 'exact' in t['flags'], t
for t in ts:
    if len(t['shape']) != 2:
        assert t['path'] == 'kept' and t['format'] == 'bf16', t
assert 'tied_head' in m['flags']
PY
"

test_expect 'the manifest: source names and sha256 of the source bytes' "
	python3 - $M/model.safetensors <<'PY'
import hashlib, json, struct, sys
raw = open(sys.argv[1], 'rb').read()
n = struct.unpack('<Q', raw[:8])[0]
hdr = json.loads(raw[8:8 + n])
m = json.load(open('m.json'))
assert len(m['tensors']) == len(hdr) - ('__metadata__' in hdr)
for t in m['tensors']:
    b, e = hdr[t['source']]['data_offsets']
    assert t['sha256'] == hashlib.sha256(raw[8 + n + b:8 + n + e]).hexdigest(), t['name']
PY
"

test_expect 'the bundle is at most a seventh of the bf16 file' "
	b=\$(wc -c <one.tfb) && f=\$(wc -c <$M/model.safetensors) &&
	echo \"bundle \$b bytes, bf16 \$f bytes\" && test \$((b * 7)) -le \$f
"

# sign1 dequantizes to exactly the bf16 weights, and the sign1 kernel sums
# in tf_dot's order, so the logits are not just close but identical
test_expect 'tf-run logits of the bundle equal those of the bf16 folder, bit for bit' "
	tf-run --raw $M $M/prompt.ids >folder.f32 &&
	tf-run --raw one.tfb $M/prompt.ids >bundle.f32 &&
	cmp folder.f32 bundle.f32
"
if command -v tf-gate >/dev/null; then
	test_expect 'tf-gate: within 1e-5 (max abs)' "tf-gate --raw 2048 --max-abs 1e-5 bundle.f32 folder.f32"
else
	diag 'tf-gate not built: the max-abs gate is covered by the cmp above'
fi

test_expect 'the bundle is deterministic' "tf-pack -q $M two.tfb && cmp one.tfb two.tfb"

test_expect 'one flipped magnitude: that tensor is not binary and stays bf16' "
	python3 \$TF_ROOT/t/helper/pack-fixture.py flip $M flipped model.layers.2.mlp.up_proj.weight &&
	tf-pack -q flipped f.tfb && tf-pack --show f.tfb >show.txt &&
	grep -E '^layers\.2\.mlp\.up_proj\.weight +bf16 .* kept ' show.txt &&
	grep -E '^layers\.2\.mlp\.down_proj\.weight +sign1 .* sign1 ' show.txt &&
	test \$(grep -c ' sign1 ' show.txt) = 62
"

test_expect '--no-sign1 keeps every weight as bf16' "
	tf-pack -q --no-sign1 $M k.tfb && tf-pack --show k.tfb >k.txt && ! grep -q ' sign1 ' k.txt
"

test_expect 'a bf16 checkpoint has no binary tensors' "
	tf-pack -q $DATA/shakespeare-q35 bf.tfb && tf-pack --show bf.tfb >bf.txt && ! grep -q ' sign1 ' bf.txt &&
	tf-run --raw $DATA/shakespeare-q35 $M/prompt.ids >a.f32 && tf-run --raw bf.tfb $M/prompt.ids >b.f32 &&
	cmp a.f32 b.f32
"

test_expect '--show prints a table with totals' "
	tf-pack --show one.tfb >t.txt && head -1 t.txt | grep -q '^tensor  *format' &&
	grep -q '^embed_tokens.weight  *sign1  *2048x256 ' t.txt && tail -1 t.txt | grep -q '108 tensors: 0 affine, 63 sign1'
"

test_expect 'tf-run reads the config and tokenizer from the bundle' "
	tf-run -n 8 one.tfb $M/prompt.ids >g.ids && tf-run -n 8 $M $M/prompt.ids >h.ids && diff g.ids h.ids &&
	tf-pack --show --json one.tfb | python3 -c 'import json,sys; m=json.load(sys.stdin); assert m[\"tokenizer\"] == open(\"$M/tokenizer.json\").read()'
"

done_testing
