#!/bin/sh
# tf-pull ARCHIVE --as ORG/NAME: tar, tar.gz, tar.zst, tar.xz, zip, stdin and
# plain folders go into the hub cache layout, blobs named by sha256, the
# snapshot named by the manifest's hash, byte for byte the source files.
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-hub.sh"

mkdir -p shake/sub && cp "$DATA"/shakespeare-q35/* shake/ &&
	printf '{"nested": 1}\n' >shake/sub/nested.json
# xz and Python's deflate are slow on 13 MB of weights: those two formats get
# the same files without the safetensors
mkdir small && cp shake/*.json shake/*.ids small/
ALL=$(manifest_commit shake)
SMALL=$(manifest_commit small)
DEFAULT=$(manifest_commit shake config.json generation_config.json model.safetensors \
	reference.json tokenizer.json tokenizer_config.json sub/nested.json)

# check_snapshot REPO [DIR COMMIT]: the snapshot of REPO@main holds every
# file of DIR (shake/), byte for byte, linked to blobs named by sha256
check_snapshot() {
	r=$(repo_dir "$1") src=${2:-shake} c=${3:-$ALL}
	s=$r/snapshots/$c
	printf %s "$c" | cmp - "$r/refs/main" || return 1
	for f in $(cd "$src" && find . -type f | sed 's|^\./||'); do
		cmp "$src/$f" "$s/$f" || return 1
		case $(readlink "$s/$f") in
		*/blobs/$(sha256 "$src/$f")) ;;
		*) echo "bad link for $f"; return 1 ;;
		esac
	done
	test "$(cd "$s" && find . ! -type d | wc -l)" = "$(cd "$src" && find . -type f | wc -l)"
}

tar -cf m.tar -C shake .
tar -cf - shake | gzip -1 >m.tar.gz
tar -cf - -C shake . | zstd -q -o m.tar.zst
(cd shake && zip -q -1 -r ../m.zip .)
tar -cf - small | xz -1 >s.tar.xz
python3 -c 'import os, sys, zipfile
with zipfile.ZipFile("py.zip", "w", zipfile.ZIP_DEFLATED) as z:
    for d, _, names in os.walk("small"):
        for n in names:
            p = os.path.join(d, n)
            z.write(p, os.path.relpath(p, "small"))'

for a in m.tar m.tar.gz m.tar.zst m.zip s.tar.xz py.zip; do
	name=org/$(echo "$a" | tr . -)
	case $a in
	s.tar.xz|py.zip) src=small c=$SMALL ;;
	*) src=shake c=$ALL ;;
	esac
	test_expect "$a goes in whole, the snapshot named by its manifest" '
		tf-pull -i "*" "$a" --as "$name" >out 2>err && test ! -s err &&
		echo "$(repo_dir "$name")/snapshots/$c" >want && cmp want out &&
		check_snapshot "$name" "$src" "$c"
	'
done

test_expect 'a plain folder goes in the same way' '
	tf-pull -i "*" shake --as org/folder >out && check_snapshot org/folder
'
test_expect 'an archive on stdin (-) too' '
	tf-pull -i "*" - --as org/stdin <m.tar.zst >out && check_snapshot org/stdin
'
test_expect 'the default patterns apply to archives as to downloads' '
	tf-pull m.tar.gz --as org/default >out &&
	echo "$(repo_dir org/default)/snapshots/$DEFAULT" >want && cmp want out &&
	test ! -e "$(cat out)/val4096.ids" && cmp shake/sub/nested.json "$(cat out)/sub/nested.json"
'
test_expect '--as ORG/NAME@REV writes refs/REV' '
	tf-pull -i "*" m.zip --as org/m-zip@v2 >out && printf %s "$ALL" | cmp - "$(repo_dir org/m-zip)/refs/v2"
'
test_expect 'ingesting the same archive again changes nothing' '
	(cd "$HF_HUB_CACHE" && find . | sort) >before &&
	tf-pull -i "*" m.tar --as org/m-tar >out && (cd "$HF_HUB_CACHE" && find . | sort) >after &&
	cmp before after && check_snapshot org/m-tar
'
test_expect 'the cached archive resolves offline' '
	tf-pull --offline -i "*" org/m-tar-gz >out && test "$(cat out)" = "$(repo_dir org/m-tar-gz)/snapshots/$ALL"
'
test_expect 'no staging is left in the cache' '
	test -z "$(find "$HF_HUB_CACHE" -name "ingest.*")"
'

sh -c 'exit 0' & dead=$!
wait $dead
mkdir -p "$HF_HUB_CACHE/.locks/models--org--m-tar/ingest.$dead" &&
	echo junk >"$HF_HUB_CACHE/.locks/models--org--m-tar/ingest.$dead/0"
test_expect 'the staging folder a dead process left is swept away' '
	tf-pull -i "*" m.tar --as org/m-tar >out && check_snapshot org/m-tar &&
	test ! -e "$HF_HUB_CACHE/.locks/models--org--m-tar/ingest.$dead"
'

ln shake/config.json shake/hard.json && ln -s config.json shake/alias.json &&
	ln -s ../tokenizer.json shake/sub/tok.json
tar -czf links.tar.gz -C shake .
test_expect 'links that stay inside an archive become files with their target content' '
	tf-pull -i "*" links.tar.gz --as org/links >out && s=$(cat out) &&
	cmp shake/config.json "$s/hard.json" && cmp shake/config.json "$s/alias.json" &&
	cmp shake/tokenizer.json "$s/sub/tok.json" &&
	test "$(readlink "$s/alias.json")" = "$(readlink "$s/config.json")"
'
test_expect 'and so do links inside a folder' '
	tf-pull -i "*" shake --as org/links2 >out && s=$(cat out) &&
	cmp shake/tokenizer.json "$s/sub/tok.json" && cmp shake/config.json "$s/alias.json"
'
rm shake/hard.json shake/alias.json shake/sub/tok.json

mkdir empty
test_error 'an empty folder is an error' tf-pull "'empty' holds no files" tf-pull empty --as org/empty
test_expect '... that leaves no repository' 'test ! -e "$(repo_dir org/empty)"'

head -c 3000000 m.tar.gz >cut.tar.gz
test_error 'a truncated archive is an error' tf-pull "cut.tar.gz" tf-pull -i "*" cut.tar.gz --as org/cut
test_expect '... that leaves no repository and no staging' '
	test ! -e "$(repo_dir org/cut)" && test -z "$(find "$HF_HUB_CACHE" -name "ingest.*")"
'
head -c 4096 /dev/urandom >noise.bin
test_error 'bytes that are no archive are an error' tf-pull "cannot (open|read) 'noise.bin'" \
	tf-pull noise.bin --as org/noise
test_expect '... that leaves no repository' 'test ! -e "$(repo_dir org/noise)"'
test_error 'a missing archive is an error' tf-pull "cannot open 'nothere.tar'" \
	tf-pull nothere.tar --as org/x
test_error 'an archive with no file the patterns take is an error' tf-pull \
	"no file of 'm.tar' matches the include patterns" tf-pull -i "*.gguf" m.tar --as org/none
test_expect '--as with a bad name is a usage error' '
	tf-pull m.tar --as "bad name" >out 2>err; test $? = 2 && grep -q "invalid repository id" err
'
test_error 'a commit hash is no revision for an archive' tf-pull "invalid revision" \
	tf-pull m.tar --as org/x@$ALL

# the include patterns are asked before a member is staged: a big member
# they leave out is never copied (TF_TEST_STAGED lists what is), unless a
# link they take ends at it; then a file is read a second time for it, and
# stdin, which cannot be, is refused
mkdir -p big/model && printf '{"a": 1}\n' >big/model/config.json &&
	head -c 4000000 /dev/zero >big/model/zeros.bin
tar -cf - big | zstd -q -o big.tar.zst
test_expect 'a member the patterns leave out is never staged' '
	TF_TEST_STAGED=$TMP/staged tf-pull -i "*.json" big.tar.zst --as org/big >out &&
	test "$(cat staged)" = "9 big/model/config.json" &&
	cmp big/model/config.json "$(cat out)/model/config.json" && test ! -e "$(cat out)/model/zeros.bin"
'
rm -f staged
ln -s zeros.bin big/model/link.json
tar -cf - big | zstd -q -o link.tar.zst
test_expect 'a taken link to a left-out member files it, read a second time' '
	TF_TEST_STAGED=$TMP/staged tf-pull -i "*.json" link.tar.zst --as org/link >out &&
	grep -qx "4000000 big/model/zeros.bin" staged &&
	cmp big/model/zeros.bin "$(cat out)/model/link.json" && test ! -e "$(cat out)/model/zeros.bin"
'
test_expect '... and from stdin is refused, naming the link and its target' '
	tf-pull -i "*.json" - --as org/link2 <link.tar.zst >out 2>err; test $? = 1 &&
	grep -q "member .big/model/link.json. links to .big/model/zeros.bin., which the include patterns leave out" err &&
	grep -q "pass the archive as a file" err && test ! -e "$(repo_dir org/link2)/snapshots"
'

rm -f big/model/link.json && ln big/model/zeros.bin big/model/hard.json
tar -cf hard.tar big
test_expect 'so does a taken hard link to a left-out member' '
	tf-pull -i "*.json" hard.tar --as org/hard >out &&
	cmp big/model/zeros.bin "$(cat out)/model/hard.json" && test ! -e "$(cat out)/model/zeros.bin"
'

done_testing
