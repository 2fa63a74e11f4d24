# lib-draft.sh: the drafting tests' check; source it after lib-tf.sh.
#
#   DRAFTS="ngram ngram:2|4x6"   specs, each SPEC or SPEC|TREE
#   same ARGS...                 tf-run ARGS without a draft, then with each
#                                of DRAFTS: every output equal to the plain one

same() {
	tf-run "$@" >plain || return 1
	for d in $DRAFTS; do
		spec=${d%%|*} tree=
		case $d in *\|*) tree="--draft-tree ${d#*|}" ;; esac
		tf-run --draft $spec $tree "$@" >drafted || return 1
		cmp plain drafted || { echo "--draft $spec $tree differs"; return 1; }
	done
}
