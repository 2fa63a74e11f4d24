# gate-lib.sh: helpers for the tf-gate tests; source it after lib-tf.sh.

# the numpy oracle (t/helper/gate-oracle.py)
oracle() {
	python3 "$TF_ROOT/t/helper/gate-oracle.py" "$@"
}

# test_status TITLE N CMD...: CMD exits with status N and does not crash
test_status() {
	title=$1 want=$2
	shift 2
	"$@" >"$TMP/.stdout" 2>"$TMP/.stderr"
	rc=$?
	if [ $rc = "$want" ] && ! grep -q 'Sanitizer' "$TMP/.stderr"; then
		say_ok 0 "$title"
	else
		say_ok 1 "$title"
		echo "#   exit status $rc (wanted $want), stderr:"
		sed 's/^/#   /' "$TMP/.stderr"
	fi
}

# test_trouble TITLE PATTERN CMD...: CMD exits 2 ("could not compare") with
# "tf-gate: error: ...PATTERN" (an extended regex) on stderr
test_trouble() {
	title=$1 pat=$2
	shift 2
	"$@" >"$TMP/.stdout" 2>"$TMP/.stderr"
	rc=$?
	if [ $rc = 2 ] && grep -Eq "^tf-gate: error: .*$pat" "$TMP/.stderr" &&
	   ! grep -q 'Sanitizer' "$TMP/.stderr"; then
		say_ok 0 "$title"
	else
		say_ok 1 "$title"
		echo "#   exit status $rc, stderr:"
		sed 's/^/#   /' "$TMP/.stderr"
	fi
}
