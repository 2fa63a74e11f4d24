#!/bin/sh
# tf-pull --list: one tab-separated line per cached snapshot (repository,
# refs, commit, files, bytes, size), checked against sizes summed apart.
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-hub.sh"

SRC=$DATA/shakespeare-q35
TINY=$DATA/tiny-q35

test_expect 'an empty or missing cache lists nothing' '
	tf-pull --list >out 2>err && test ! -s out && test ! -s err
'

start_hub --repo org/shake="$SRC" --repo org/shake@v1="$SRC" --repo org/shake@dev="$TINY" \
	--repo acme/tiny="$TINY"
MAIN=$(api_commit org/shake)
DEV=$(api_commit org/shake dev)
TC=$(api_commit acme/tiny)
tf-pull org/shake >/dev/null && tf-pull org/shake@v1 >/dev/null &&
	tf-pull -i "*.json" org/shake@dev >/dev/null && tf-pull -i "*" acme/tiny >/dev/null ||
	echo "Bail out! the pulls failed"
stop_hub

# bytes of the named files of a folder, and the same for people
bytes() {
	d=$1; shift
	(cd "$d" && cat "$@") | wc -c
}
human() {
	python3 -c 'import sys
n = int(sys.argv[1]); u = -1
while n >= 1024 and u < 5: n /= 1024; u += 1
print("%dB" % n if u < 0 else "%.1f%s" % (n, "KMGTPE"[u]))' "$1"
}
line() {
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$(human "$5")"
}

M=$(bytes "$SRC" config.json generation_config.json model.safetensors reference.json tokenizer.json tokenizer_config.json)
D=$(bytes "$TINY" $(cd "$TINY" && ls *.json))
T=$(bytes "$TINY" $(cd "$TINY" && ls))
{
	line acme/tiny main "$TC" "$(ls "$TINY" | wc -l)" "$T"
	# commits in name order
	if [ "$MAIN" \< "$DEV" ]; then
		line org/shake main,v1 "$MAIN" 6 "$M"
		line org/shake dev "$DEV" "$(cd "$TINY" && ls *.json | wc -l)" "$D"
	else
		line org/shake dev "$DEV" "$(cd "$TINY" && ls *.json | wc -l)" "$D"
		line org/shake main,v1 "$MAIN" 6 "$M"
	fi
} >want

test_expect '--list shows every snapshot with its refs, file count and bytes' '
	tf-pull --list >out && cmp want out
'
test_expect '--list ORG/NAME shows that repository only' '
	tf-pull --list org/shake >out && grep "^org/shake	" want | cmp - out
'
test_expect 'the listing needs no network and writes nothing to stderr' '
	HF_HUB_OFFLINE=1 tf-pull -l acme/tiny >out 2>err && test ! -s err && grep "^acme/tiny	" want | cmp - out
'

rm "$(repo_dir org/shake)/refs/v1" "$(repo_dir org/shake)/refs/main"
test_expect 'a snapshot no ref points at shows "-"' '
	tf-pull --list org/shake | grep -q "^org/shake	-	$MAIN	6	$M	"
'
test_expect '--list of an invalid repository id is a usage error' '
	tf-pull --list nope >out 2>err; test $? = 2 && grep -q "invalid repository id .nope." err
'

done_testing
