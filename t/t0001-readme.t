#!/bin/sh
# t0001-readme: the README's examples run as written, so it cannot rot.
#
# An example block is a run of lines indented by four spaces. In it a line
# "$ CMD" is a command; a command line ending in |, \ or && goes on to the
# next line; the lines after a command, up to the next one, are its output
# as the README shows it. Every command runs, in order, in one bash with
# pipefail, from a scratch folder that looks like a clone after make (bin,
# man, t and the Makefile linked from the tree), with HOME and TMPDIR in
# the scratch folder and neither the test's PATH nor its TF_DEVICE. A command passes when it
# exits 0 and, where output is shown, writes exactly that (trailing blank
# lines aside). A block whose first line is "# needs ..." (a GPU, the
# network, minutes) is shown to readers but not run.
. "$(dirname "$0")/lib-tf.sh"

README=$TF_ROOT/README
ln -s "$TF_ROOT/bin" "$TF_ROOT/man" "$TF_ROOT/t" "$TF_ROOT/Makefile" . || exit 1
mkdir .readme home tmp || exit 1

# the commands into .readme/cmd.N, the output shown into .readme/exp.N, a
# line "N LINE run|skip CMD" for each into .readme/list
awk -v dir=.readme '
	function flush() { if (n) close(dir "/cmd." n); if (n) close(dir "/exp." n) }
	/^    / || (/^$/ && inblock) {
		line = substr($0, 5)
		if (!inblock) { inblock = 1; skip = line ~ /^# needs / }
		if (cont) {
			sub(/^ +/, "", line)
			print line >> (dir "/cmd." n)
			cont = line ~ /(\||\\|&&)$/
			next
		}
		if (line ~ /^\$ /) {
			flush()
			n++
			cmd = substr(line, 3)
			print cmd > (dir "/cmd." n)
			printf "" > (dir "/exp." n)
			print n, NR, (skip ? "skip" : "run"), cmd > (dir "/list")
			cont = cmd ~ /(\||\\|&&)$/
			incmd = 1
			next
		}
		if (incmd)
			print line >> (dir "/exp." n)
		next
	}
	{ inblock = 0; incmd = 0; cont = 0 }
	END { flush() }
' "$README"

# the script that runs them, in the manner of a user's shell
{
	echo 'set -o pipefail'
	echo 'cd "$1" || exit 1'
	while read -r n line how cmd; do
		[ "$how" = run ] || continue
		echo "{ . .readme/cmd.$n; } </dev/null >.readme/out.$n 2>.readme/err.$n; echo \$? >.readme/rc.$n"
	done <.readme/list
} >.readme/run.sh

# the tree's tools reach the commands only through the README's own PATH
PATH=${PATH#"$TF_ROOT/bin:$TF_ROOT/t/helper:"}
HOME=$TMP/home TMPDIR=$TMP/tmp env -u TF_DEVICE -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	bash .readme/run.sh "$TMP"

# the output with trailing blank lines dropped and the last line ended
trim() {
	awk '{ l[NR] = $0 } END { n = NR; while (n > 0 && l[n] == "") n--; for (i = 1; i <= n; i++) print l[i] }' "$1"
}

runs=0
while read -r n line how cmd; do
	if [ "$how" = skip ]; then
		t_n=$((t_n + 1))
		printf 'ok %d # skip README:%s: %s\n' $t_n "$line" "$cmd"
		continue
	fi
	runs=$((runs + 1))
	rc=$(cat .readme/rc.$n 2>/dev/null || echo missing)
	trim .readme/exp.$n >.readme/want.$n
	trim .readme/out.$n >.readme/got.$n
	t_n=$((t_n + 1))
	if [ "$rc" = 0 ] && { [ ! -s .readme/want.$n ] || cmp -s .readme/want.$n .readme/got.$n; }; then
		printf 'ok %d - README:%s: %s\n' $t_n "$line" "$cmd"
	else
		printf 'not ok %d - README:%s: %s\n' $t_n "$line" "$cmd"
		t_fail=$((t_fail + 1))
		echo "#   exit status $rc"
		if [ -s .readme/want.$n ]; then
			diff .readme/want.$n .readme/got.$n | sed 's/^/#   /'
		fi
		sed 's/^/#   stderr: /' .readme/err.$n
	fi
done <.readme/list

# the extraction itself: the walk-through was found, and the figures it
# shows are the references' (the held-out perplexity is reference.json's)
test_expect "the README's walk-through has its commands" "test $runs -ge 30"
test_expect "the README's held-out perplexity is reference.json's val4096_ppl" "
	want=\$(grep -o '\"val4096_ppl\": [0-9.]*' $DATA/shakespeare-q35/reference.json | grep -o '[0-9.]*\$') &&
	shown=\$(grep -m 1 '^    ppl  *[0-9]' '$README' | awk '{ print \$2 }') &&
	test \"\$shown\" = \"\$(printf '%.6g' \$want)\"
"
test_expect "the README shows generated text" "
	grep -q '^     be gone, and I will not do it\.\$' '$README'
"
test_expect "the README is at most 315 lines" "test \$(wc -l <'$README') -le 315"

done_testing
