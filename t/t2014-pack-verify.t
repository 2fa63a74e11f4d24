#!/bin/sh
# tf-pack --verify: every tensor's stored bytes against the data_sha256 its
# manifest holds; one flipped bit anywhere in a tensor is found and named.
. "$(dirname "$0")/lib-tf.sh"
M=$DATA/tiny-q35

tf-pack -q --bits 4 $M q4.tfb || exit 1
test_expect 'a bundle tf-pack wrote verifies, every tensor ok' '
	tf-pack --verify q4.tfb >out && ! grep -v "^ok " out && test $(wc -l <out) -gt 20
'
# one bit flipped inside the first tensor's data, and one inside the last's
python3 - <<'PY'
import json, struct
raw = bytearray(open("q4.tfb", "rb").read())
moff, mlen, doff = struct.unpack("<QQQ", raw[16:40])
ts = json.loads(raw[moff:moff + mlen])["tensors"]
for name, t in (("first", min(ts, key=lambda t: t["offset"])), ("last", max(ts, key=lambda t: t["offset"]))):
    b = bytearray(raw)
    b[doff + t["offset"] + t["bytes"] // 2] ^= 4
    open(name + ".tfb", "wb").write(b)
    open(name + ".name", "w").write(t["name"])
PY
for which in first last; do
	name=$(cat $which.name)
	test_expect "a bit flipped in the $which tensor ($name) is found: BAD, exit 1" "
		tf-pack --verify $which.tfb >out 2>err; test \$? = 1 &&
		grep -q '^BAD $name: ' out && test \$(grep -c '^BAD' out) = 1 &&
		grep -q '^tf-pack: error: .*1 tensors differ from their checksums' err
	"
done
test_expect 'a bundle without data checksums: its kept tensors checked, the others counted' '
	python3 - <<PY &&
import json, struct
raw = bytearray(open("q4.tfb", "rb").read())
moff, mlen, doff = struct.unpack("<QQQ", raw[16:40])
m = json.loads(raw[moff:moff + mlen])
for t in m["tensors"]:
    del t["data_sha256"]
text = json.dumps(m, separators=(",", ":")).encode()
raw[moff:doff] = text + bytes(doff - moff - len(text))
raw[24:32] = struct.pack("<Q", len(text))
open("old.tfb", "wb").write(raw)
PY
	tf-pack --verify old.tfb >out 2>err && grep -q "^unchecked " out && grep -q "^ok " out &&
	grep -q "have no checksum of their stored bytes" err
'
test_expect '--verify with another option is a usage error' '
	tf-pack --verify --bits 4 q4.tfb 2>err; test $? = 2
'

done_testing
