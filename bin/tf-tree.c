/*
 * tf-tree: verify token trees on a Qwen3.5 model, every node in one pass.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/args.h"
#include "base/err.h"
#include "base/pool.h"
#include "decode/decoder.h"
#include "gpu/gpu.h"
#include "io/out.h"
#include "io/trees.h"
#include "model/model.h"
#include "tools/tree_run.h"

#define VERSION "0.1.0"

static const char usage_text[] =
	"usage: tf-tree [options] MODEL [INPUT]\n"
	"\n"
	"Reads prompts and token trees (text lines or tf-records) from INPUT or stdin:\n"
	"a line of ids is a prompt and starts a sequence, a line of ID:PARENT pairs\n"
	"(PARENT a node of the line, or -1 for the end of the sequence) a tree on it.\n"
	"Runs each tree in one pass and writes the logits of its nodes as a logits\n"
	"record; each node's are the logits of stepping along its branch.\n"
	"\n"
	"  -o, --output FILE    write to FILE (complete or not at all) instead of stdout\n"
	"  -f, --force          write binary records even to a terminal\n"
	"      --text K         the top K ids and logits of each node, as text\n"
	"      --commit PATH    keep a path of each tree in the sequence before the next:\n"
	"                       node indices (0,1,3), or best: the longest path whose\n"
	"                       every id is the argmax of the logits before it\n"
	"      --draft SPEC     after each prompt, the tree SPEC drafts (tf-run(1)'s\n"
	"                       ngram[:N] or random[:SEED]), run as a tree line; with\n"
	"                       --text first shown as its line, \"draft: ID:PARENT ...\"\n"
	"      --draft-tree SHAPE  off (a chain of 8, default) or WIDTHxDEPTH\n"
	"      --ctx N          the context: a sequence's prompt and trees at most N\n"
	"                       positions (default and most: the model's)\n"
	"  -t, --threads N      CPU threads (default: TF_THREADS or all CPUs)\n"
	"      --device DEV     cpu, cuda or auto: the GPU when there is one (trees of\n"
	"                       at most 16 nodes there; default: TF_DEVICE or auto)\n"
	"  -h, --help           show this help\n"
	"  -V, --version        show the version\n";

enum { OPT_TEXT = 256, OPT_COMMIT, OPT_DEVICE, OPT_DRAFT, OPT_DRAFT_TREE, OPT_CTX };

static const struct option longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "force", no_argument, NULL, 'f' },
	{ "text", required_argument, NULL, OPT_TEXT },
	{ "commit", required_argument, NULL, OPT_COMMIT },
	{ "draft", required_argument, NULL, OPT_DRAFT },
	{ "draft-tree", required_argument, NULL, OPT_DRAFT_TREE },
	{ "ctx", required_argument, NULL, OPT_CTX },
	{ "threads", required_argument, NULL, 't' },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ 0 }
};

/* --commit best, or node indices separated by commas */
static void parse_commit(const char *arg, tf_tree_opts *o)
{
	if (!strcmp(arg, "best")) {
		o->keep = TF_KEEP_BEST;
		return;
	}
	o->keep = TF_KEEP_PATH;
	for (const char *p = arg;;) {
		char *end;
		long v;

		if (*p < '0' || *p > '9')
			tf_usage_die("--commit takes best or node indices such as 0,1,3, not '%s'", arg);
		v = strtol(p, &end, 10);
		if (v >= TF_TREE_MAX || o->path_len == TF_TREE_MAX)
			tf_usage_die("--commit '%s': a tree has at most %d nodes", arg, TF_TREE_MAX);
		o->path = tf_realloc(o->path, (o->path_len + 1) * sizeof *o->path);
		o->path[o->path_len++] = (int32_t)v;
		if (!*end)
			return;
		if (*end != ',')
			tf_usage_die("--commit takes best or node indices such as 0,1,3, not '%s'", arg);
		p = end + 1;
	}
}

/* every item, checked before anything runs, so that bad input writes
 * nothing: the trees' shapes, a --commit path against each tree, and the
 * context: a prompt, or a tree on what the sequence holds, past it (with
 * --commit best what a tree keeps is known only as it runs: the count
 * leaves it out, and the pass itself refuses a tree past the context) */
static tf_item *read_all(FILE *in, const char *name, const tf_model *m, const tf_tree_opts *o, size_t *n)
{
	long vocab = m->c.vocab;
	tf_items_reader rd;
	tf_item *v = NULL;
	size_t cap = 0;
	int64_t pos = 0;        /* positions the sequence holds, at least */
	char what[128];
	int rc;

	*n = 0;
	tf_items_open(&rd, in, name);
	for (;;) {
		if (*n == cap)
			v = tf_realloc(v, (cap = cap ? 2 * cap : 16) * sizeof *v);
		memset(&v[*n], 0, sizeof v[*n]);
		if ((rc = tf_items_next(&rd, &v[*n], vocab)) <= 0)
			break;
		if (v[*n].kind == TF_ITEM_TREE && m->gpu && v[*n].id.n > TF_GPU_TREE_MAX)
			tf_die("'%s' %s %ld: a tree of %zu nodes on the GPU (1 to %d there: its products are one "
			       "decode window's; --device cpu takes up to %d)", name, rd.binary ? "record" : "line",
			       v[*n].where, v[*n].id.n, TF_GPU_TREE_MAX, TF_TREE_MAX);
		if (v[*n].kind == TF_ITEM_TREE) {
			const tf_item *it = &v[*n];
			tf_tree t = { (int64_t)it->id.n, it->id.ids, it->parent.ids };
			tf_tree_shape sh;
			if (tf_tree_shape_of(&t, &sh) < 0 ||
			    (o->keep == TF_KEEP_PATH && tf_tree_path_check(&sh, o->path, o->path_len) < 0)) {
				if (o->keep == TF_KEEP_PATH)
					tf_errpre("'%s' %s %ld: --commit", name, rd.binary ? "record" : "line", it->where);
				else
					tf_errpre("'%s' %s %ld: ", name, rd.binary ? "record" : "line", it->where);
				tf_die_err();
			}
			snprintf(what, sizeof what, "'%s' %s %ld: a tree %d deep on %lld positions", name,
				 rd.binary ? "record" : "line", it->where, sh.width, (long long)pos);
			if (tf_config_check_ctx(&m->c, pos + sh.width, what) < 0)
				tf_die_err();
			tf_tree_shape_free(&sh);
			if (o->keep == TF_KEEP_PATH)
				pos += o->path_len;
		} else {
			snprintf(what, sizeof what, "'%s' %s %ld: prompt of %zu ids", name, rd.binary ? "record" : "line",
				 v[*n].where, v[*n].id.n);
			if (tf_config_check_ctx(&m->c, (int64_t)v[*n].id.n, what) < 0)
				tf_die_err();
			pos = (int64_t)v[*n].id.n;
		}
		++*n;
	}
	tf_item_free(&v[*n]);
	tf_items_close(&rd);
	if (rc < 0)
		tf_die_err();
	return v;
}

int main(int argc, char **argv)
{
	tf_tree_opts o = { 0 };
	const char *output = "-", *input = "-", *device = getenv("TF_DEVICE"), *draft = NULL, *draft_tree = NULL;
	tf_draft_spec spec;
	int force = 0, threads = 0, c;
	long ctx = 0;
	tf_item *items;
	size_t n;
	tf_model *m;
	tf_decoder *d;
	tf_tree_run r;
	tf_out out;
	FILE *in;

	tf_prog = "tf-tree";
	tf_out_init();
	while ((c = getopt_long(argc, argv, "o:ft:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 'f': force = 1; break;
		case OPT_TEXT: o.text_k = tf_arg_long(optarg, "--text", 1, 1 << 30); break;
		case OPT_COMMIT: parse_commit(optarg, &o); break;
		case OPT_DRAFT: draft = optarg; break;
		case OPT_DRAFT_TREE: draft_tree = optarg; break;
		case OPT_CTX: ctx = tf_arg_long(optarg, "--ctx", 1, 1L << 30); break;
		case 't': threads = tf_arg_long(optarg, "--threads", 1, 256); break;
		case OPT_DEVICE: device = optarg; break;
		case 'h': fputs(usage_text, stdout); return tf_stdout_exit();
		case 'V': printf("tf-tree %s\n", VERSION); return tf_stdout_exit();
		default: tf_usage_die("unknown option");
		}
	}
	if (argc - optind < 1 || argc - optind > 2)
		tf_usage_die("expected MODEL and at most one INPUT file");
	if (argc - optind == 2)
		input = argv[optind + 1];
	if (!device || !*device)
		device = "auto";
	if (strcmp(device, "cpu") && strcmp(device, "cuda") && strcmp(device, "auto"))
		tf_usage_die("--device must be cpu, cuda or auto, not '%s'", device);
	if (draft_tree && !draft)
		tf_usage_die("--draft-tree shapes the drafts of --draft: it needs --draft");
	if (draft && o.keep == TF_KEEP_PATH)
		tf_usage_die("--commit takes best with --draft: node indices cannot name the nodes "
			     "of trees drafted as it runs");
	// a drafter that cannot be is bad input, found before the model loads
	if (draft) {
		if (tf_draft_parse(&spec, draft, draft_tree) < 0)
			tf_die_err();
		/* the head guesses from a hidden state and the next id, and a
		 * tf-tree prompt's root is fed already: tf-run --draft mtp */
		if (spec.kind == TF_DRAFT_MTP)
			tf_die("drafter 'mtp' drafts in tf-run and tf-serve, not after tf-tree's prompts");
		o.draft = &spec;
	}

	tf_pool_init(threads);
	m = tf_model_open(argv[optind]);
	if (!m)
		tf_die_err();
	if (ctx && tf_config_set_ctx(&m->c, ctx) < 0)
		tf_die_err();
	// the weights go to the GPU once; auto falls back to the CPU without one
	if (tf_decoder_attach(m, device) < 0)
		tf_die_err();
	// the sequence may grow to the context: its cache must fit
	if (tf_decoder_check_room(m, 1) < 0)
		tf_die_err();
	in = strcmp(input, "-") ? fopen(input, "rb") : stdin;
	if (!in)
		tf_die("cannot open '%s':", input);
	items = read_all(in, strcmp(input, "-") ? input : "<stdin>", m, &o, &n);
	if (in != stdin)
		fclose(in);
	if (tf_out_open(&out, output, !o.text_k, force) < 0)
		tf_die_err();
	o.f = out.f;
	if (!(d = tf_decoder_new(m)))
		tf_die_err();
	tf_tree_run_init(&r, d, &o);
	for (size_t i = 0; i < n; i++) {
		if (tf_tree_run_item(&r, &items[i]) < 0) {
			tf_out_abort(&out);
			tf_die_err();
		}
		tf_item_free(&items[i]);
	}
	free(items);
	free(o.path);
	tf_tree_run_free(&r);
	tf_decoder_free(d);
	tf_decoder_detach(m);
	tf_model_close(m);
	if (tf_out_close(&out) < 0)
		tf_die_err();
	return 0;
}
