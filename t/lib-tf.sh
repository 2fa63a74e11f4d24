# lib-tf.sh: TAP helpers for shell tests; source it first.
#
#   . "$(dirname "$0")/lib-tf.sh"
#   test_expect 'title' 'cmd && cmd'
#   test_error  'title' tf-run 'pattern' cmd args...   # must fail cleanly
#   done_testing
#
# Each test runs in a fresh scratch folder $TMP, removed at exit. The tools in
# bin/ come first in PATH; $DATA is t/data.

T_DIR=$(cd "$(dirname "$0")" && pwd)
TF_ROOT=$(cd "$T_DIR/.." && pwd)
DATA=$T_DIR/data
PATH=$TF_ROOT/bin:$TF_ROOT/t/helper:$PATH
export PATH DATA TF_ROOT
# the tools run on the CPU, the reference, unless a test asks for the GPU
# with --device cuda (tf-run's default, auto, would take a GPU when present)
TF_DEVICE=cpu
export TF_DEVICE
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tf-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
t_n=0
t_fail=0

say_ok() {
	t_n=$((t_n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $t_n - $2"
	else
		echo "not ok $t_n - $2"
		t_fail=$((t_fail + 1))
	fi
}

# test_expect TITLE SCRIPT: passes when SCRIPT exits 0; its output is shown
# as comments only on failure
test_expect() {
	if (eval "$2") >"$TMP/.out" 2>&1; then
		say_ok 0 "$1"
	else
		say_ok 1 "$1"
		sed 's/^/#   /' "$TMP/.out"
	fi
}

# test_error TITLE PROG PATTERN CMD...: CMD must exit with a status in 1..127,
# print "PROG: error: " matching PATTERN (an extended regex) on stderr, and
# must not crash (no signal, no sanitizer report)
test_error() {
	title=$1 prog=$2 pat=$3
	shift 3
	"$@" >"$TMP/.stdout" 2>"$TMP/.stderr"
	rc=$?
	if [ $rc -ge 1 ] && [ $rc -lt 128 ] &&
	   grep -Eq "^$prog: error: .*$pat" "$TMP/.stderr" &&
	   ! grep -q 'Sanitizer' "$TMP/.stderr"; then
		say_ok 0 "$title"
	else
		say_ok 1 "$title"
		echo "#   exit status $rc, stderr:"
		sed 's/^/#   /' "$TMP/.stderr"
	fi
}

skip_all() {
	echo "1..0 # SKIP $1"
	exit 0
}

diag() {
	echo "# $*"
}

done_testing() {
	echo "1..$t_n"
	[ $t_fail = 0 ]
	exit $?
}
