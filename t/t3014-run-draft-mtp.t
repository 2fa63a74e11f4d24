#!/bin/sh
# tf-run --draft mtp: the model's own multi-token-prediction head drafts,
# and the ids are plain decoding's, token for token, greedy and sampled,
# as chains of several lengths and as trees, under -P, --stream and short
# -n limits, from a folder and from a 4-bit bundle (tf-pack keeps the
# mtp.* tensors and quantizes them with the rest). --draft-stats shows the
# head's drafts taken, more of them than ngram's on held-out text, so the
# exactness covers accepted drafts. A model without a head, a head
# missing a tensor or of the wrong shape, and tf-tree are errors that say
# what is wrong. t3015 holds the drafts to a reference in torch.
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-draft.sh"

M=$DATA/shakespeare-q35-mtp
# four held-out lines of 48 ids, and the prompt
{ tr ' ' '\n' <$M/val4096.ids | awk 'NF' | awk '
	{ id[NR] = $1 }
	END { for (a = 1; a <= 4; a++) { for (i = 0; i < 48; i++) printf "%s%d", (i ? " " : ""), id[a * 700 + i]; print "" } }'
  cat $M/prompt.ids; } >val.ids
tf-pack -q --bits 4 $M q4.tfb || exit 1

DRAFTS="mtp mtp:1 mtp:5 mtp|3x3 mtp|2x6"

for path in $M q4.tfb; do
	test_expect "$path: drafted greedy ids are the plain ones" "
		same -n 40 --ignore-eos $path val.ids
	"
	test_expect "$path: drafted ids at temperature 0.7, top-k 40, are the plain ones" "
		same -n 40 --ignore-eos --temp 0.7 --top-k 40 --seed 4 $path val.ids
	"
	test_expect "$path: drafted ids at temperature 1, top-p 0.9, are the plain ones" "
		same -n 40 --ignore-eos --temp 1 --top-p 0.9 --seed 5 $path val.ids
	"
done
test_expect "the bundle keeps the head: its mtp.* tensors, the matrices at 4 bits" "
	PYTHONPATH=$TF_ROOT/t/helper python3 -c '
import sys
from tfbundle import Bundle
b = Bundle(sys.argv[1])
mtp = [t for t in b.manifest[\"tensors\"] if t[\"name\"].startswith(\"mtp.\")]
fmt = {t[\"name\"]: t[\"format\"] for t in mtp}
assert len(mtp) == 15, len(mtp)
assert fmt[\"mtp.fc.weight\"] == \"affine\" and fmt[\"mtp.layers.0.mlp.down_proj.weight\"] == \"affine\", fmt
assert fmt[\"mtp.norm.weight\"] == \"bf16\", fmt
' q4.tfb
"

test_expect "at -n 1 to 8 the drafted ids are the plain ones" "
	for n in 1 2 3 4 5 6 7 8; do
		DRAFTS='mtp mtp|2x3' same -n \$n --ignore-eos $M val.ids || exit 1
	done
"
test_expect "with the model's end id the lines end where the plain ones do" "
	same -n 64 $M val.ids
"
test_expect "-P 3 with --draft mtp writes the lines of -P 1 without, greedy and sampled" "
	tf-run -n 32 --ignore-eos $M val.ids >p1 &&
	tf-run -n 32 --ignore-eos -P 3 --draft mtp $M val.ids >p3 && cmp p1 p3 &&
	tf-run -n 32 --ignore-eos -P 3 --draft mtp --draft-tree 2x3 $M val.ids >p3t && cmp p1 p3t &&
	tf-run -n 32 --ignore-eos --temp 1 --top-k 50 --seed 9 $M val.ids >s1 &&
	tf-run -n 32 --ignore-eos --temp 1 --top-k 50 --seed 9 -P 3 --draft mtp:4 $M val.ids >s3 && cmp s1 s3
"
test_expect "--stream with --draft mtp writes the same ids" "
	tf-run -n 32 --ignore-eos --stream --draft mtp $M val.ids | sed 's/ \$//' | cmp - p1
"

# what --draft-stats says: field $2 of the line starting $1
stat() {
	awk -v k="$1" -v f="$2" '$1 == k { print $f }' stats
}
test_expect "mtp drafts are taken: more ids a pass than ngram's on held-out lines" "
	tf-run -n 64 --ignore-eos --draft mtp --draft-stats $M val.ids >o 2>stats &&
	mtp=\$(stat ids 4) && test \$(stat draft 2) = mtp, &&
	tf-run -n 64 --ignore-eos --draft ngram --draft-stats $M val.ids >o 2>stats &&
	ngram=\$(stat ids 4) && echo \"mtp \$mtp, ngram \$ngram ids a pass\" &&
	awk -v a=\$mtp -v b=\$ngram 'BEGIN { exit !(a > 1.3 && a > b) }'
"
test_expect "... and sampled at temperature 0.7, as a tree" "
	tf-run -n 64 --ignore-eos --temp 0.7 --seed 4 --draft mtp --draft-tree 3x3 --draft-stats \
		$M val.ids >o 2>stats && test \$(stat draft 4) = 3x3 &&
	awk '\$1 == \"drafted\" { exit !(\$4 > 0) }' stats
"

S=$DATA/shakespeare-q35
test_error "a model without a head is named" tf-run "drafter 'mtp': the model has no MTP head \(mtp\.\* tensors\)" \
	tf-run -n 4 --draft mtp $S $S/prompt.ids
test_expect "... before anything is written" "
	tf-run -n 4 --draft mtp -o bad.out $S $S/prompt.ids 2>/dev/null; test \$? = 1 && ! test -e bad.out
"
# a copy of the model whose head lacks a tensor, or has one of a wrong shape
damage() {
	python3 - "$M/model.safetensors" "$1" "$2" <<'EOF'
import json, struct, sys
src, out, how = sys.argv[1:4]
raw = open(src, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
hdr = json.loads(raw[8:8 + n])
if how == "missing":
    del hdr["mtp.norm.weight"]
else:
    hdr["mtp.fc.weight"]["shape"] = hdr["mtp.fc.weight"]["shape"][::-1]
text = json.dumps(hdr).encode()
text += b" " * (-len(text) % 8)
open(out, "wb").write(struct.pack("<Q", len(text)) + text + raw[8 + n:])
EOF
}
for how in missing shape; do
	mkdir $how && cp $M/*.json $how/ && damage $how/model.safetensors $how || exit 1
done
test_error "a head missing a tensor is named" tf-run "drafter 'mtp': the model's MTP head: missing tensor 'mtp.norm.weight'" \
	tf-run -n 4 --draft mtp missing $M/prompt.ids
test_error "a head's tensor of the wrong shape is named" tf-run "drafter 'mtp': the model's MTP head: .*mtp.fc" \
	tf-run -n 4 --draft mtp shape $M/prompt.ids
test_expect "... and the model runs as before without --draft mtp" "
	tf-run -n 8 missing $M/prompt.ids >a && tf-run -n 8 $S $S/prompt.ids >b && cmp a b
"
test_error "mtp:0 is no chain" tf-run "bad drafter 'mtp:0': mtp:K takes a chain of 1 to 64 ids" \
	tf-run -n 4 --draft mtp:0 $M $M/prompt.ids
test_error "tf-tree does not draft with the head, and says so" tf-tree "drafter 'mtp' drafts in tf-run and tf-serve" \
	tf-tree --draft mtp $M $M/prompt.ids
test_expect "-h names mtp" '
	tf-run -h | grep -q "mtp\[:K\]"
'

done_testing
