#!/bin/sh
# Hostile archives and folders: absolute names, '..', links pointing outside,
# hard links outside, devices, FIFOs, duplicates. Each is refused with
# nothing written outside the cache and no trace of the repository inside it.
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-hub.sh"

mkdir -p w/run w/outside && cd w/run || exit 1
HF_HUB_CACHE=$TMP/w/cache
printf '{"good": true}\n' >good.json
tar -cf good.tar good.json
tf-pull -i "*" good.tar --as org/good >/dev/null || echo "Bail out! a sound archive was refused"
ABS=$TMP/w/outside/abs-x
ETC=/etc/tf-pull-test-$$

# the whole tree but the locks folder, where refused staging would show
tree() {
	(cd "$TMP/w" && find . -path ./cache/.locks -prune -o -print | LC_ALL=C sort)
}
tree >"$TMP/before"

# hostile KIND PATTERN [TARGET]: the archive is refused naming the member,
# and the tree is as it was
hostile() {
	kind=$1 pat=$2 target=${3:-$ABS}
	python3 "$T_DIR/helper/mkarchive.py" "$kind.a" "$kind" "$target"
	test_error "$kind: refused" tf-pull "refusing '$kind.a': member $pat" \
		tf-pull -i "*" "$kind.a" --as org/evil
	rm -f "$kind.a"
	test_expect "$kind: nothing written, no repository, no staging left" '
		tree >"$TMP/after" && cmp "$TMP/before" "$TMP/after" &&
		test -z "$(find "$HF_HUB_CACHE/.locks" -name "ingest.*")" &&
		test ! -e "$(repo_dir org/evil)" && test ! -e "$ETC" && test ! -e "$ABS" &&
		test ! -e "$TMP/w/x" && test ! -e "$TMP/x"
	'
	rm -f "$TMP/after"
}

hostile dotdot "'\.\./x' climbs out with '\.\.'"
hostile deepdotdot "'a/\.\./\.\./x' climbs out with '\.\.'"
hostile abs "'$ETC' is an absolute path" "$ETC"
hostile abs "'$ABS' is an absolute path"
hostile backslash "'\.\.\\\\x' has a control character or a backslash"
hostile symroot "'root' is a link pointing outside"
hostile symup "'sub/up' is a link pointing outside the archive"
hostile symabs "'abs.json' is a link pointing outside" /etc/passwd
hostile hardup "'hard.json' is a hard link pointing outside the archive"
hostile hardabs "'hard.json' is a hard link pointing outside the archive" /etc/passwd
hostile chardev "'null' is a device"
hostile fifo "'pipe' is a FIFO"
hostile dup "'good.json' appears twice"
hostile zipdotdot "'\.\./x' climbs out with '\.\.'"
hostile zipabs "'$ABS' is an absolute path"
hostile zipsym "'link.json' is a link pointing outside" /etc/passwd

python3 "$T_DIR/helper/mkarchive.py" dangling.a dangling
test_error 'a link to a member that is not there is refused' tf-pull \
	"member 'alias.json' links to 'missing.json', which is no file in the archive" \
	tf-pull -i "*" dangling.a --as org/evil
rm dangling.a

# folders: the same rules for what is found on disk
echo '{"secret": 1}' >"$TMP/w/outside/secret.json"
tree >"$TMP/before"
mkdir f && cp good.json f/ && ln -s "$TMP/w/outside/secret.json" f/passwd.json
test_error 'a folder with a link pointing outside is refused' tf-pull \
	"refusing 'f': member 'passwd.json' is a link pointing outside the folder" tf-pull -i "*" f --as org/evil
rm f/passwd.json && mkfifo f/pipe
test_error 'a folder with a FIFO is refused (and not read, which would hang)' tf-pull \
	"member 'pipe' is a FIFO" tf-pull -i "*" f --as org/evil
rm f/pipe && ln -s nowhere.json f/dangling.json
test_error 'a folder with a dangling link is refused' tf-pull \
	"member 'dangling.json' is a link that leads nowhere" tf-pull -i "*" f --as org/evil
rm f/dangling.json
test_expect 'after all that, the tree is as it was' '
	rm -rf f && tree >"$TMP/after" && cmp "$TMP/before" "$TMP/after" && test ! -e "$(repo_dir org/evil)"
'
test_expect 'and the sound repository is untouched' '
	tf-pull --offline -i "*" org/good >out && cmp good.json "$(cat out)/good.json"
'

# archives that claim more than they hold, or more than the disk has: refused
# before the disk fills, not padded with zeros, nothing left behind
lies() {
	kind=$1 pat=$2
	python3 "$T_DIR/helper/mkarchive.py" "$kind.a" "$kind"
	test_error "$kind: refused" tf-pull "'$kind.a': member $pat" tf-pull -i "*" "$kind.a" --as org/evil
	rm -f "$kind.a"
	test_expect "$kind: no repository, no staging left" '
		test -z "$(find "$HF_HUB_CACHE/.locks" -name "ingest.*")" && test ! -e "$(repo_dir org/evil)"
	'
}
lies ziplie "'big.bin' is truncated: it holds 200 of the 4294967040 bytes its header gives"
lies tarhuge "'huge.bin' would take 1099511627776 bytes, and [0-9]* are free"

python3 "$T_DIR/helper/mkarchive.py" hard.cpio cpiohard
head -c 200 hard.cpio >cut.cpio
test_error 'a truncated cpio names where it broke, not "(null)"' tf-pull \
	"cannot read 'cut.cpio' past its member 'a.json': truncated or damaged" tf-pull -i "*" cut.cpio --as org/cut
test_expect '... and says nothing of "(null)"' '! grep -q "(null)" "$TMP/.stderr"'
test_expect 'a GNU cpio newc hard-linked pair: both files hold the data on the last' '
	snap=$(tf-pull -i "*" hard.cpio --as org/hard) &&
	printf "{\"good\": true}\n" >want && cmp want "$snap/a.json" && cmp want "$snap/b.json"
'

done_testing
