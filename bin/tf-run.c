/*
 * tf-run: run a Qwen3.5 model over token ids; write logits or generate.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/args.h"
#include "base/err.h"
#include "base/pool.h"
#include "decode/decoder.h"
#include "draft/draft.h"
#include "io/ids.h"
#include "io/out.h"
#include "model/model.h"
#include "tools/run.h"
#include "tools/streams.h"

#define VERSION "0.1.0"

static const char usage_text[] =
	"usage: tf-run [options] MODEL [IDS]\n"
	"\n"
	"Reads token ids (text lines or tf-records) from IDS or stdin and writes the\n"
	"logits of every position as tf-records, or generates ids with -n.\n"
	"\n"
	"  -o, --output FILE    write to FILE (complete or not at all) instead of stdout\n"
	"  -f, --force          write binary records even to a terminal\n"
	"      --raw            bare little-endian float32 rows instead of records\n"
	"      --last           only the last row of each sequence\n"
	"      --text K         the top K ids and logits of each row, as text\n"
	"  -n, --generate N     generate N ids per sequence, one text line each\n"
	"      --temp T         sample at temperature T (default 0: greedy)\n"
	"      --top-k K        sample among the K most likely ids\n"
	"      --top-p P        sample among the most likely ids reaching probability P\n"
	"      --seed S         seed for sampling (default 0)\n"
	"      --ignore-eos     do not stop at the model's end-of-sequence ids\n"
	"      --stream         write each generated id as soon as it is made (with -P,\n"
	"                       those of the first line not yet written)\n"
	"      --draft SPEC     speculative decoding: SPEC drafts ids, the model checks\n"
	"                       them in one pass and keeps those it would have made;\n"
	"                       ngram[:N] (the last N ids looked up earlier in the\n"
	"                       sequence, default 3), mtp[:K] (the model's own MTP\n"
	"                       head, K ids a chain, default 3; CPU only) or\n"
	"                       random[:SEED] (a test aid)\n"
	"      --draft-tree SHAPE  off (a chain of 8, default) or WIDTHxDEPTH: up to\n"
	"                       WIDTH drafted branches of DEPTH ids, in one tree\n"
	"      --draft-stats    write ids a pass, the draft's share and ids/s to stderr\n"
	"  -P, --parallel N     generate up to N sequences at once, in shared rounds\n"
	"                       (default 1); the lines still come out in input order\n"
	"      --ctx N          the context: prompt plus -n at most N positions (default\n"
	"                       and most: the model's max_position_embeddings); the\n"
	"                       cache of one sequence at N must fit in memory\n"
	"      --mem-budget B   admit a sequence only when the caches in flight fit in\n"
	"                       B bytes (K, M, G suffixes; default: TF_MEM_BUDGET or none)\n"
	"      --mode MODE      prompt (whole prompt in one pass, default) or step\n"
	"      --window N       feed the prompt N ids at a time through the step path\n"
	"                       (logits bit-identical to --mode step)\n"
	"  -t, --threads N      CPU threads (default: TF_THREADS or all CPUs)\n"
	"      --device DEV     cpu, cuda or auto: the GPU when there is one\n"
	"                       (default: TF_DEVICE or auto)\n"
	"  -q, --quiet          no progress on stderr (drawn only on a terminal)\n"
	"  -h, --help           show this help\n"
	"  -V, --version        show the version\n";

enum { OPT_RAW = 256, OPT_LAST, OPT_TEXT, OPT_TEMP, OPT_TOPK, OPT_TOPP, OPT_SEED, OPT_NOEOS,
       OPT_STREAM, OPT_MODE, OPT_DEVICE, OPT_WINDOW, OPT_BUDGET, OPT_DRAFT, OPT_DRAFT_TREE, OPT_DRAFT_STATS,
       OPT_CTX };

static const struct option longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "force", no_argument, NULL, 'f' },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "last", no_argument, NULL, OPT_LAST },
	{ "text", required_argument, NULL, OPT_TEXT },
	{ "generate", required_argument, NULL, 'n' },
	{ "temp", required_argument, NULL, OPT_TEMP },
	{ "top-k", required_argument, NULL, OPT_TOPK },
	{ "top-p", required_argument, NULL, OPT_TOPP },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "ignore-eos", no_argument, NULL, OPT_NOEOS },
	{ "stream", no_argument, NULL, OPT_STREAM },
	{ "draft", required_argument, NULL, OPT_DRAFT },
	{ "draft-tree", required_argument, NULL, OPT_DRAFT_TREE },
	{ "draft-stats", no_argument, NULL, OPT_DRAFT_STATS },
	{ "parallel", required_argument, NULL, 'P' },
	{ "mem-budget", required_argument, NULL, OPT_BUDGET },
	{ "ctx", required_argument, NULL, OPT_CTX },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "threads", required_argument, NULL, 't' },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ 0 }
};

/* options given, where one only means something beside another */
enum { G_TEMP = 1, G_TOPK = 2, G_TOPP = 4, G_SEED = 8, G_STREAM = 16, G_LOGITS = 32, G_STREAMS = 64,
       G_DRAFT = 128, G_DRAFT_TREE = 256, G_DRAFT_STATS = 512 };

/* an option that would be accepted and then ignored is a usage error */
static void check_options(const tf_run_opts *o, int given)
{
	if (!o->gen && (given & (G_TEMP | G_TOPK | G_TOPP | G_SEED | G_STREAM | G_STREAMS)))
		tf_usage_die("--temp, --top-k, --top-p, --seed, --stream, -P and --mem-budget go with -n (generation)");
	if (!o->gen && (given & (G_DRAFT | G_DRAFT_TREE | G_DRAFT_STATS)))
		tf_usage_die("--draft, --draft-tree and --draft-stats go with -n (generation)");
	if ((given & G_DRAFT_TREE) && !(given & G_DRAFT))
		tf_usage_die("--draft-tree shapes the drafts of --draft: it needs --draft");
	if (o->gen && (given & G_LOGITS))
		tf_usage_die("-n writes ids: --raw, --last, --text and --window shape logits, not ids");
	if ((given & (G_TOPK | G_TOPP)) && !(o->sampler.temp > 0))
		tf_usage_die("--top-k and --top-p choose among ids to sample: they need --temp above 0");
}

/* ---------------------------------------------------------------------------
 * progress of a prompt on a terminal: one line redrawn in place, erased
 * when the sequence is done, so that stderr keeps only what went wrong */

struct shown {
	long index;             /* the sequence, from 1 */
	int64_t tokens;         /* its prompt's */
	int drawn;              /* a line is on the terminal */
	double last;            /* when it was drawn */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* n with a comma every three digits */
static char *grouped(int64_t n, char out[32])
{
	char digits[24];
	int len = snprintf(digits, sizeof digits, "%lld", (long long)n), k = 0;

	for (int i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			out[k++] = ',';
		out[k++] = digits[i];
	}
	out[k] = 0;
	return out;
}

static void show(void *ctx, int64_t done, int64_t total)
{
	struct shown *p = ctx;
	double t = now();
	char tok[32];

	if (p->drawn && t - p->last < 0.1 && done < total)
		return;
	p->last = t;
	p->drawn = 1;
	fprintf(stderr, "\r\033[Ktf-run: sequence %ld, prompt of %s tokens (%d%%)", p->index,
		grouped(p->tokens, tok), (int)(100 * done / (total ? total : 1)));
	fflush(stderr);
}

/* a prompt chunk of a generated sequence taken in */
static void show_chunk(void *ctx, long index, int64_t tokens, int64_t fed)
{
	struct shown *p = ctx;

	p->index = index + 1;
	p->tokens = tokens;
	show(p, fed, tokens);
}

/* --draft-stats: what the decoding rounds made and where their time went */
static void show_stats(const tf_draft_spec *sp, const tf_draft_stats *st)
{
	double t = st->total_s > 0 ? st->total_s : 1e-9, other = t - st->draft_s - st->verify_s;
	char name[96];

	fprintf(stderr, "draft        %s\n", tf_draft_name(sp, name));
	fprintf(stderr, "passes       %ld (%ld with a draft)\n", st->passes, st->drafted);
	fprintf(stderr, "ids          %ld made, %.3f a pass (acceptance length)\n", st->made,
		st->passes ? (double)st->made / st->passes : 0);
	fprintf(stderr, "drafted      %ld ids, %ld accepted (%.1f%%), %.3f ids a drafted pass\n", st->proposed,
		st->accepted, st->proposed ? 100.0 * st->accepted / st->proposed : 0,
		st->drafted ? (double)(st->accepted + st->drafted) / st->drafted : 0);
	fprintf(stderr, "time         %.3f s decoding: draft %.1f%%, verify %.1f%%, other %.1f%%\n", st->total_s,
		100 * st->draft_s / t, 100 * st->verify_s / t, 100 * (other > 0 ? other : 0) / t);
	fprintf(stderr, "speed        %.1f ids/s\n", st->made / t);
}

static void unshow(struct shown *p)
{
	if (!p->drawn)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	p->drawn = 0;
}

int main(int argc, char **argv)
{
	tf_run_opts o = { .out = TF_OUT_RECORDS, .sampler = { .top_p = 1 } };
	tf_streams_opts so = { .parallel = 1 };
	const char *budget = getenv("TF_MEM_BUDGET");
	const char *output = "-", *input = "-", *draft = NULL, *draft_tree = NULL;
	tf_draft_spec spec = { 0 };
	tf_draft_stats stats = { 0 };
	int force = 0, quiet = 0, threads = 0, given = 0, c;
	struct shown shown = { 0 };
	const char *device = getenv("TF_DEVICE");
	tf_model *m;
	tf_decoder *d;
	tf_out out;
	tf_ids_reader rd;
	tf_seq s = { 0 };
	FILE *in;
	long index = 0, ctx = 0;

	tf_prog = "tf-run";
	tf_out_init();
	while ((c = getopt_long(argc, argv, "o:fn:t:P:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 'f': force = 1; break;
		case 'q': quiet = 1; break;
		case OPT_RAW: o.out = TF_OUT_RAW; given |= G_LOGITS; break;
		case OPT_LAST: o.last = 1; given |= G_LOGITS; break;
		case OPT_TEXT:
			o.out = TF_OUT_TEXT;
			o.text_k = tf_arg_long(optarg, "--text", 1, 1 << 30);
			given |= G_LOGITS;
			break;
		case 'n': o.gen = tf_arg_long(optarg, "-n", 1, 1L << 40); break;
		case OPT_TEMP: o.sampler.temp = tf_arg_double(optarg, "--temp", 0, 1e6); given |= G_TEMP; break;
		case OPT_TOPK: o.sampler.top_k = tf_arg_long(optarg, "--top-k", 0, 1 << 30); given |= G_TOPK; break;
		case OPT_TOPP: o.sampler.top_p = tf_arg_double(optarg, "--top-p", 0, 1); given |= G_TOPP; break;
		case OPT_SEED: o.sampler.rng = tf_arg_u64(optarg, "--seed"); given |= G_SEED; break;
		case OPT_NOEOS: o.ignore_eos = 1; break;
		case OPT_STREAM: o.stream = 1; given |= G_STREAM; break;
		case OPT_DRAFT: draft = optarg; given |= G_DRAFT; break;
		case OPT_DRAFT_TREE: draft_tree = optarg; given |= G_DRAFT_TREE; break;
		case OPT_DRAFT_STATS: given |= G_DRAFT_STATS; break;
		case 'P': so.parallel = tf_arg_long(optarg, "-P", 1, 4096); given |= G_STREAMS; break;
		case OPT_BUDGET: budget = optarg; given |= G_STREAMS; break;
		case OPT_CTX: ctx = tf_arg_long(optarg, "--ctx", 1, 1L << 30); break;
		case OPT_MODE:
			if (strcmp(optarg, "prompt") && strcmp(optarg, "step"))
				tf_usage_die("--mode must be prompt or step, not '%s'", optarg);
			o.step = !strcmp(optarg, "step");
			break;
		case 't': threads = tf_arg_long(optarg, "--threads", 1, 256); break;
		case OPT_WINDOW: o.window = tf_arg_long(optarg, "--window", 1, 1 << 20); given |= G_LOGITS; break;
		case OPT_DEVICE: device = optarg; break;
		case 'h': fputs(usage_text, stdout); return tf_stdout_exit();
		case 'V': printf("tf-run %s\n", VERSION); return tf_stdout_exit();
		default: tf_usage_die("unknown option");
		}
	}
	if (argc - optind < 1 || argc - optind > 2)
		tf_usage_die("expected MODEL and at most one IDS file");
	check_options(&o, given);
	if (argc - optind == 2)
		input = argv[optind + 1];
	if (o.gen && budget && *budget)
		so.budget = tf_arg_bytes(budget, given & G_STREAMS ? "--mem-budget" : "TF_MEM_BUDGET");

	if (!device || !*device)
		device = "auto";
	if (strcmp(device, "cpu") && strcmp(device, "cuda") && strcmp(device, "auto"))
		tf_usage_die("--device must be cpu, cuda or auto, not '%s'", device);
	// a drafter that cannot be is bad input, found before the model loads
	if (draft) {
		if (tf_draft_parse(&spec, draft, draft_tree) < 0)
			tf_die_err();
		so.draft = &spec;
	}
	if (given & G_DRAFT_STATS)
		so.stats = &stats;

	tf_pool_init(threads);
	m = tf_model_open(argv[optind]);
	if (!m)
		tf_die_err();
	if (ctx && tf_config_set_ctx(&m->c, ctx) < 0)
		tf_die_err();
	// the weights go to the GPU once; auto falls back to the CPU without one
	if (tf_decoder_attach(m, device) < 0)
		tf_die_err();
	// a sequence may grow to the context: its cache must fit, known now
	// rather than when an allocation fails
	if (tf_decoder_check_room(m, 1) < 0)
		tf_die_err();
	// a drafter the model cannot feed (no MTP head, or one on the GPU) is
	// bad input, found before any id is read
	if (draft && tf_draft_check(&spec, m) < 0)
		tf_die_err();
	in = strcmp(input, "-") ? fopen(input, "rb") : stdin;
	if (!in)
		tf_die("cannot open '%s':", input);
	if (tf_out_open(&out, output, !o.gen && o.out != TF_OUT_TEXT, force) < 0)
		tf_die_err();
	o.f = out.f;
	tf_ids_open(&rd, in, strcmp(input, "-") ? input : "<stdin>");
	if (o.gen) {
		// generation: every sequence through the rounds of streams.h
		if (!quiet && isatty(2)) {
			so.progress = show_chunk;
			so.progress_ctx = &shown;
		}
		int rc = tf_run_streams(m, &rd, &o, &so);
		unshow(&shown);
		if (rc == 0 && so.stats)
			show_stats(&spec, &stats);
		if (rc < 0) {
			tf_out_abort(&out);
			tf_die_err();
		}
		d = NULL;
	} else {
		d = tf_decoder_new(m);
		if (!d)
			tf_die_err();
		if (!quiet && isatty(2))
			tf_decoder_on_progress(d, show, &shown);
	}
	while (d) {
		int rc = tf_ids_next(&rd, &s, m->c.vocab);
		if (rc > 0) {
			shown.index = index + 1;
			shown.tokens = (int64_t)s.n;
		}
		if (rc > 0)
			rc = tf_run_seq(d, &s, index++, &o) < 0 ? -1 : rc;
		unshow(&shown);
		if (rc < 0) {
			tf_out_abort(&out);
			tf_die_err();
		}
		if (!rc)
			break;
	}
	tf_ids_close(&rd);
	tf_seq_free(&s);
	tf_decoder_free(d);
	tf_decoder_detach(m);
	tf_model_close(m);
	if (in != stdin)
		fclose(in);
	if (tf_out_close(&out) < 0)
		tf_die_err();
	return 0;
}
