#!/bin/sh
# Several tf-pull processes on one repository at once: the blob locks let
# each file be downloaded exactly once, every process prints the same
# snapshot and the cache ends whole. An interrupted pull (SIGINT) is resumed.
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-hub.sh"

SRC=$DATA/shakespeare-q35
R=$(repo_dir org/shake)
NFILES=$(ls "$SRC" | wc -l)

# about half a second per whole safetensors transfer, so that runs overlap
start_hub --repo org/shake="$SRC" --chunk-delay 0.0025
COMMIT=$(api_commit org/shake)
SNAP=$R/snapshots/$COMMIT

test_expect 'four pulls at once all succeed with the same snapshot' '
	for i in 1 2 3 4; do tf-pull -q -j 3 -i "*" org/shake >out$i 2>err$i & done; wait &&
	for i in 1 2 3 4; do
		test "$(cat out$i)" = "$SNAP" && test ! -s err$i || exit 1
	done
'
test_expect 'every file was downloaded once, not once per process' '
	test "$(hub_count "^GET	/_lfs/")" = 1 &&
	test "$(hub_count "^GET	/org/shake/resolve/")" = "$NFILES"
'
test_expect 'the cache is whole: every file right, nothing half done' '
	for f in $(cd "$SRC" && ls); do cmp "$SRC/$f" "$SNAP/$f" || exit 1; done &&
	test "$(ls "$SNAP" | wc -l)" = "$NFILES" &&
	test "$(ls "$R/blobs" | wc -l)" = "$NFILES" &&
	test -z "$(find "$HF_HUB_CACHE" -name "*.incomplete" -o -name "*.tmp.*")"
'

rm -rf "$HF_HUB_CACHE"
: >"$HUB_LOG"
test_expect '-j 1 and -j 8 give the same cache' '
	tf-pull -j 1 -i "*" --cache-dir c1 org/shake >o1 && tf-pull -j 8 -i "*" --cache-dir c8 org/shake >o8 &&
	(cd c1 && find . -type l -exec readlink {} + | sort) >l1 &&
	(cd c8 && find . -type l -exec readlink {} + | sort) >l8 && cmp l1 l8 &&
	for f in $(cd "$SRC" && ls); do cmp "$(cat o1)/$f" "$(cat o8)/$f" || exit 1; done
'
stop_hub

# slower still, so that there is time to interrupt the transfer
start_hub --repo org/shake="$SRC" --chunk-delay 0.02
SHA=$(sha256 "$SRC/model.safetensors")
rm -rf "$HF_HUB_CACHE"
test_expect 'a pull interrupted by SIGINT leaves its .incomplete file ...' '
	tf-pull -q org/shake >out 2>err & pid=$!
	i=0
	while [ "$(wc -c <"$R/blobs/$SHA.incomplete" 2>/dev/null || echo 0)" -lt 1000000 ] && [ $i -lt 200 ]; do
		sleep 0.05; i=$((i + 1))
	done
	kill -INT $pid; wait $pid; rc=$?
	test $rc -ne 0 && test -s "$R/blobs/$SHA.incomplete" && test ! -e "$R/blobs/$SHA" &&
	wc -c <"$R/blobs/$SHA.incomplete" >kept
'
stop_hub
start_hub --repo org/shake="$SRC"
test_expect '... which the next run resumes with a Range request' '
	tf-pull org/shake >out && cmp "$SRC/model.safetensors" "$SNAP/model.safetensors" &&
	hub_count "^GET	/_lfs/$SHA	bytes=[1-9][0-9]*-	206" >/dev/null
'

done_testing
