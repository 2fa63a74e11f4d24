#!/bin/sh
# What every program owes its caller: --help and --version that report a
# write they could not make (exit 1 and a message), never exit 0.
. "$(dirname "$0")/lib-tf.sh"

for p in tf-pull tf-pack tf-tok tf-run tf-tree tf-gate tf-bench tf-serve; do
	for o in --help --version; do
		test_expect "$p $o into a full disk: exit 1 and a message" "
			$p $o >/dev/full 2>err; test \$? = 1 &&
			grep -q '^$p: error: write to stdout: No space left on device' err
		"
	done
	test_expect "$p --help reads as usage" "
		$p --help >out && grep -q '^usage: $p' out
	"
done

done_testing
