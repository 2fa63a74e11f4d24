#!/bin/sh
# t6002-gate-errors: streams that cannot be compared exit 2 with
# "tf-gate: error: ...", never a crash or a hang; so does a closed stdout
. "$(dirname "$0")/lib-tf.sh"
. "$TF_ROOT/t/helper/gate-lib.sh"

V=300
test_expect 'numpy writes two streams' '
	oracle gen . --rows 24 --cols $V --seed 6200 --noise 0.1 --lens 10,14 &&
	tf-test-tool raw2rec $V 10 14 <a.f32 >a.rec &&
	tf-test-tool raw2rec $V 10 14 <b.f32 >b.rec &&
	head -c $((23 * V * 4)) b.f32 >b23.f32 &&
	tf-test-tool raw2rec $V <a.f32 >a-one.rec &&
	tf-test-tool raw2rec $((V / 2)) <b.f32 >b-half.rec &&
	echo "1 2 3" | tf-test-tool ids2rec >ids.rec
'

test_trouble 'rows of different widths' "rows differ in width: 'a.rec' has 300 values a row, 'b-half.rec' has 150" \
	tf-gate a.rec b-half.rec
test_trouble 'different widths, records against --raw' 'differ in width' tf-gate --raw 301 a.rec b.f32
test_trouble 'B has fewer rows' "'a.rec' has more rows than 'b23.f32' \(23\)" tf-gate --raw $V a.rec b23.f32
test_trouble 'A has fewer rows' "'a.f32' has more rows than 'b23.f32' \(23\)" tf-gate --raw $V b23.f32 a.f32
test_trouble 'rows at different positions' 'row 10 is at position 10 in .a-one.rec. but at 0 in .b.rec.' \
	tf-gate a-one.rec b.rec

test_expect 'damaged streams' '
	printf "0.5 0.25\n" >text &&
	head -c 30 a.rec >head30.rec &&
	head -c $(($(wc -c <a.rec) - 10)) a.rec >cut.rec &&
	head -c $((48 + 4 * V + 2)) a.rec >cutrow.rec &&
	head -c $((5 * V * 4 + 6)) a.f32 >cut.f32 &&
	python3 -c "import sys; d = bytearray(open(\"a.rec\", \"rb\").read()); d[int(sys.argv[1])] = int(sys.argv[2]); open(sys.argv[3], \"wb\").write(d)" 8 2 badver.rec &&
	python3 -c "d = bytearray(open(\"a.rec\", \"rb\").read()); d[1] = ord(\"X\"); open(\"badmagic.rec\", \"wb\").write(d)" &&
	: >empty
'
test_trouble 'text is not records' "'text': bad magic: not a tf-records stream" tf-gate text b.rec
test_trouble 'bad magic in B' "'badmagic.rec': bad magic" tf-gate a.rec badmagic.rec
test_trouble 'bare float32 without --raw' "'a.f32': bad magic" tf-gate a.f32 b.rec
test_trouble 'record version 2' "'badver.rec': record version 2 is not supported" tf-gate badver.rec b.rec
test_trouble 'truncated header' "'head30.rec': truncated record header: got 30 of 48 bytes" tf-gate head30.rec b.rec
test_trouble 'last record cut short' "'cut.rec': truncated record 1: got 1190 of 1200 bytes of the row at position 13" \
	tf-gate cut.rec b.rec
test_trouble 'record cut inside its second row' "'cutrow.rec': truncated record 0: got 2 of 1200 bytes" tf-gate cutrow.rec b.rec
test_trouble 'bare float32 not a whole number of rows' "'cut.f32': truncated: 6 bytes after 5 whole rows" \
	tf-gate --raw $V cut.f32 b.f32
test_trouble 'ids records where logits belong' "'ids.rec': record 0 is not a logits record" tf-gate ids.rec b.rec
test_trouble 'two empty streams' "'empty' and 'empty' hold no rows" tf-gate empty empty
test_trouble 'an empty stream against rows' "'b.rec' has more rows than 'empty' \(0\)" tf-gate empty b.rec
test_trouble 'a missing file' "cannot open 'nope': No such file" tf-gate nope b.rec
test_trouble 'a directory' "cannot read '.': Is a directory" tf-gate . b.rec
test_trouble 'damage on stdin' "'-': truncated record 1" tf-gate - b.rec <cut.rec

test_expect 'targets that do not fit' '
	printf "1 2 3 4 5 6 7 8 9 10\n1 2 3 4 5 6 7 8 9 10 11 12 13\n" >short.ids &&
	printf "1 2 3 4 5 6 7 8 9 10\n1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n" >long.ids &&
	printf "1 2 3 4 5 6 7 8 9 10\n1 2 3 4 5 6 7 8 9 10 11 12 13 300\n" >wide.ids &&
	printf "1 2 3 4 5 6 7 8 9 10 11 12\n1 2 3 4 5 6 7 8 9 10 11 12\n" >shifted.ids &&
	printf "1 2 x\n" >bad.ids
'
test_trouble 'targets shorter than the streams' "'a.rec' has more rows than the targets in 'short.ids' \(23\)" \
	tf-gate --targets short.ids a.rec b.rec
test_trouble 'targets longer than the streams' "the targets in 'long.ids' hold more rows than 'a.rec' \(24\)" \
	tf-gate --targets long.ids a.rec b.rec
test_trouble 'a target id past the row width' "target id 300 \(sequence 1 of 'wide.ids'\) is past the row width 300" \
	tf-gate --targets wide.ids a.rec b.rec
test_trouble 'sequences split elsewhere than the records' "row 10 of 'a.rec' is at position 0, but the targets in 'shifted.ids' put it at position 10 of sequence 0" \
	tf-gate --targets shifted.ids a.rec b.rec
test_trouble 'targets that are not ids' "'bad.ids' line 1: 'x' is not a token id" tf-gate --targets bad.ids a.rec b.rec
test_trouble 'a scored stream that is too short' "the targets in 'long.ids' hold more rows" tf-gate --targets long.ids a.rec

test_expect 'NaN in B: figures say so, the JSON stays JSON, no crash' '
	python3 -c "import numpy as np; b = np.fromfile(\"b.f32\", \"<f4\"); b[7] = np.nan; b.tofile(\"nan.f32\")" &&
	tf-gate --json --raw $V a.f32 nan.f32 >j.json &&
	python3 -c "import json; j = json.load(open(\"j.json\")); assert j[\"max_abs\"] is None and j[\"kl_max\"] is None and j[\"kl_max_row\"] == 0, j"
'
test_status 'NaN in B fails --max-abs: 1' 1 tf-gate --max-abs 1e30 --raw $V a.f32 nan.f32
test_status 'NaN in B fails --kl: 1' 1 tf-gate --kl 1e30 --raw $V a.f32 nan.f32

# a reader that is gone: every write fails, and says so
test_trouble 'stdout closed' 'write to stdout' sh -c 'exec tf-gate a.rec b.rec >&-'
test_trouble 'stdout full' 'write to stdout: No space left on device' sh -c 'exec tf-gate --json a.rec b.rec >/dev/full'
test_trouble 'stdout a pipe nobody reads' 'write to stdout: Broken pipe' python3 -c '
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
sys.exit(subprocess.run(sys.argv[1:], stdout=w).returncode)' tf-gate --hash a.rec b.rec
# A comes from a pipe that never ends: only stopping at the first failed
# write lets tf-gate finish
test_expect 'with --hash a gone reader stops the run at the first row' '
	python3 -c "
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.Popen([\"tf-gate\", \"--hash\", \"-\", \"b.rec\"], stdout=w, stdin=subprocess.PIPE,
                     stderr=open(\"gate.err\", \"wb\"))
p.stdin.write(open(\"a.rec\", \"rb\").read()[:48 + 2 * 1200])
p.stdin.flush()
try:
    rc = p.wait(timeout=20)
except subprocess.TimeoutExpired:
    p.kill()
    sys.exit(\"tf-gate kept reading\")
err = open(\"gate.err\", \"rb\").read()
sys.exit(0 if rc == 2 and b\"Broken pipe\" in err else \"exit %d: %r\" % (rc, err))"
'
done_testing
