/*
 * tf-bench: prompt and decode speed of models on the GPU (or the CPU),
 * llama-bench style.
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
#include "model/geometry.h"
#include "model/model.h"
#include "tools/bench.h"

#define VERSION "0.1.0"
#define MAXN 16

static const char usage_text[] =
	"usage: tf-bench [options] [MODEL...]\n"
	"\n"
	"Times prompt passes (ppN) and decode steps (tgN) of each MODEL (a bundle or a\n"
	"checkpoint folder) on the GPU (or the CPU) and prints one row per model and\n"
	"test, with the\n"
	"bytes a decoded token reads and the share of the measured copy bandwidth.\n"
	"\n"
	"  -s, --synth NAME:FORM  also a model of a published geometry with random\n"
	"                         weights made on the GPU: NAME qwen3.5-0.8b, -2b, -4b,\n"
	"                         -9b or -27b; FORM bf16, qB, qBgG (MLX affine) or sign1\n"
	"  -p, --prompt N,...     prompt lengths (default 512,4096; 0: none)\n"
	"  -n, --gen N,...        decode lengths (default 128; 0: none)\n"
	"  -d, --depth N,...      decode after a prompt of N tokens, a tgN@dN row\n"
	"                         for each (default 0: after a 1-token prompt)\n"
	"  -r, --reps N           timed repetitions after a warm-up (default 3)\n"
	"      --gemv             also a 'gemv' row: the decode products of a token\n"
	"                         alone (every matrix once), replayed 20 times a rep\n"
	"      --rows N,...       also a table of passes of N rows of one sequence (what\n"
	"                         tf-run --window N --last runs): ms a pass, its ratio\n"
	"                         to a pass of one row, rows a second\n"
	"      --streams N,...    also a table of decode rounds of N streams at once\n"
	"                         (what tf-run -P N runs): tokens a second in all and a\n"
	"                         stream, against one stream, and the bytes a round reads\n"
	"      --intake N         with --streams, also a prompt of N ids taken in while\n"
	"                         S - 1 streams decode, for each S from 2: their\n"
	"                         tokens a second before and during the intake\n"
	"      --device DEV       cuda (default) or cpu: the model stays on the CPU\n"
	"                         (no --synth, no --gemv)\n"
	"  -o, --output FMT       md (default) or json (one object a line)\n"
	"      --json             the same as -o json\n"
	"  -h, --help             show this help\n"
	"  -V, --version          show the version\n";

enum { OPT_JSON = 256, OPT_GEMV, OPT_ROWS, OPT_STREAMS, OPT_INTAKE, OPT_DEVICE };

static const struct option longopts[] = {
	{ "synth", required_argument, NULL, 's' },
	{ "prompt", required_argument, NULL, 'p' },
	{ "gen", required_argument, NULL, 'n' },
	{ "depth", required_argument, NULL, 'd' },
	{ "reps", required_argument, NULL, 'r' },
	{ "output", required_argument, NULL, 'o' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "gemv", no_argument, NULL, OPT_GEMV },
	{ "rows", required_argument, NULL, OPT_ROWS },
	{ "streams", required_argument, NULL, OPT_STREAMS },
	{ "intake", required_argument, NULL, OPT_INTAKE },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ 0 }
};

/* the counts of a list like 512,4096 into out; zeros dropped (none) unless
 * keep0 */
static int list(const char *s, const char *what, int *out, int keep0)
{
	int n = 0;
	char *end;

	for (;;) {
		long v = strtol(s, &end, 10);
		if (end == s || v < 0 || v > 1 << 20 || (*end && *end != ','))
			tf_usage_die("%s must be a list of counts like 512,4096, not '%s'", what, s);
		if (n == MAXN)
			tf_usage_die("%s: at most %d counts", what, MAXN);
		if (v || keep0)
			out[n++] = (int)v;
		if (!*end)
			return n;
		s = end + 1;
	}
}

/* a weight's form as the rows show it: bf16, q4g64, sign1 */
static void form_name(const tf_weight *w, char *buf, size_t n)
{
	if (w->fmt == TF_AFFINE)
		snprintf(buf, n, "q%dg%d", w->bits, w->group);
	else
		snprintf(buf, n, "%s", tf_fmt_name(w->fmt));
}

struct ctx {
	int json, gemv;
	int rows[MAXN], nrows;  /* --rows */
	int streams[MAXN], nstreams;    /* --streams */
	int intake;             /* --intake: prompt ids */
	int cpu;                /* --device cpu */
	double bw;              /* copy bandwidth, 0 on the CPU (no roofline) */
	const char *dev;
};

static void row(const struct ctx *x, const char *model, const char *form, uint64_t size, const char *test, int n,
		const tf_bench_rate *r, uint64_t tok_bytes)
{
	double gbs = tok_bytes ? r->mean * tok_bytes / 1e9 : 0, share = x->bw > 0 ? gbs * 1e9 / x->bw : 0;

	if (x->json) {
		printf("{\"model\": \"%s\", \"form\": \"%s\", \"size_bytes\": %llu, \"test\": \"%s\", \"n\": %d, "
		       "\"tok_per_s\": %.2f, \"tok_per_s_sd\": %.2f, \"reps\": %d",
		       model, form, (unsigned long long)size, test, n, r->mean, r->sd, r->reps);
		if (tok_bytes)
			printf(", \"bytes_per_token\": %llu, \"gb_per_s\": %.1f", (unsigned long long)tok_bytes, gbs);
		/* the CPU measures no bandwidth: no roofline to share */
		if (tok_bytes && x->bw > 0)
			printf(", \"roofline_share\": %.4f", share);
		if (x->bw > 0)
			printf(", \"copy_bw_bytes_per_s\": %.0f", x->bw);
		printf(", \"device\": \"%s\"}\n", x->dev);
		return;
	}
	printf("| %s | %s | %.2f GiB | %s | %.2f ± %.2f |", model, form, size / (1024.0 * 1024 * 1024), test,
	       r->mean, r->sd);
	if (tok_bytes && x->bw > 0)
		printf(" %.1f MB | %.0f GB/s | %.1f%% |\n", tok_bytes / 1e6, gbs, 100 * share);
	else if (tok_bytes)
		printf(" %.1f MB | %.1f GB/s | - |\n", tok_bytes / 1e6, gbs);
	else
		printf(" - | - | - |\n");
	fflush(stdout);
}

/* the --rows table of a model: each pass of N rows in ms and against one
 * row's (timed too where 1 is not in the list) */
static void rows_table(const struct ctx *x, tf_model *m, const char *model, const char *form, int reps)
{
	tf_bench_rate one, r;

	if (tf_bench_rows(m, 1, reps, &one) < 0)
		tf_die("%s: rows1: %s", model, tf_errmsg());
	if (!x->json) {
		printf("\n| model | form | rows | ms a pass | x one row | rows/s | products ms | rest |\n");
		printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
	}
	for (int i = 0; i < x->nrows; i++) {
		const int n = x->rows[i];
		tf_bench_rate p = { 0 };
		uint64_t bytes;
		if (n == 1)
			r = one;
		else if (tf_bench_rows(m, n, reps, &r) < 0)
			tf_die("%s: rows%d: %s", model, n, tf_errmsg());
		/* the products of the pass's rows alone, for the share of the
		 * rest (up to 16 rows, a window's) */
		if (n <= 16 && !x->cpu && tf_bench_gemv(m, n, reps, &p, &bytes) < 0)
			tf_die("%s: products of %d rows: %s", model, n, tf_errmsg());
		const double ratio = r.mean / one.mean, rate = n * 1e3 / r.mean;
		const double pms = p.mean > 0 ? 1e3 / p.mean : 0, rest = pms > 0 ? 1 - pms / r.mean : 0;
		if (x->json)
			printf("{\"model\": \"%s\", \"form\": \"%s\", \"test\": \"rows%d\", \"n\": %d, "
			       "\"ms_per_pass\": %.4f, \"ms_per_pass_sd\": %.4f, \"x_one_row\": %.3f, "
			       "\"rows_per_s\": %.1f, \"products_ms\": %.4f, \"rest_share\": %.4f, \"reps\": %d, "
			       "\"device\": \"%s\"}\n",
			       model, form, n, n, r.mean, r.sd, ratio, rate, pms, rest, r.reps, x->dev);
		else if (pms > 0)
			printf("| %s | %s | %d | %.3f ± %.3f | %.2f | %.1f | %.3f | %.1f%% |\n", model, form, n, r.mean,
			       r.sd, ratio, rate, pms, 100 * rest);
		else
			printf("| %s | %s | %d | %.3f ± %.3f | %.2f | %.1f | - | - |\n", model, form, n, r.mean, r.sd,
			       ratio, rate);
		fflush(stdout);
	}
	if (!x->json)
		printf("\n");
}

/* for each count of streams S from 2, a prompt of x->intake ids taken in
 * while S - 1 streams decode: their rate before and during the intake */
static void intake_table(const struct ctx *x, tf_model *m, const char *model, const char *form)
{
	if (!x->json) {
		printf("| model | form | streams | prompt | t/s before | t/s during | change | intake ms |\n");
		printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
	}
	for (int j = 0; j < x->nstreams; j++) {
		const int s = x->streams[j];
		tf_bench_intake_rate r;
		if (s < 2)
			continue;
		if (tf_bench_intake(m, s - 1, x->intake, &r) < 0)
			tf_die("%s: a prompt of %d ids beside %d streams: %s", model, x->intake, s - 1, tf_errmsg());
		const double change = r.during / r.before - 1;
		if (x->json)
			printf("{\"model\": \"%s\", \"form\": \"%s\", \"test\": \"intake\", \"streams\": %d, "
			       "\"prompt\": %d, \"tok_per_s_before\": %.2f, \"tok_per_s_during\": %.2f, "
			       "\"change\": %.4f, \"intake_ms\": %.2f, \"device\": \"%s\"}\n",
			       model, form, s, x->intake, r.before, r.during, change, r.ms, x->dev);
		else
			printf("| %s | %s | %d | %d | %.2f | %.2f | %+.1f%% | %.1f |\n", model, form, s, x->intake,
			       r.before, r.during, 100 * change, r.ms);
		fflush(stdout);
	}
	if (!x->json)
		printf("\n");
}

/* what streams of m hold: the executor the streams share (made by the
 * rounds before) and each stream's own cache at 4K and 32K positions */
static void memory_table(const struct ctx *x, const tf_model *m, const char *model, const char *form)
{
	const uint64_t ex = tf_decoder_exec_bytes(m);
	const uint64_t c4 = tf_decoder_cache_bytes(m, 4096), c32 = tf_decoder_cache_bytes(m, 32768);

	if (x->json) {
		printf("{\"model\": \"%s\", \"form\": \"%s\", \"test\": \"memory\", \"executor_bytes\": %llu, "
		       "\"stream_cache_bytes_4k\": %llu, \"stream_cache_bytes_32k\": %llu, \"device\": \"%s\"}\n", model,
		       form, (unsigned long long)ex, (unsigned long long)c4, (unsigned long long)c32, x->dev);
		return;
	}
	printf("| model | form | shared by the streams | a stream's cache at 4K | at 32K |\n");
	printf("| --- | --- | ---: | ---: | ---: |\n");
	printf("| %s | %s | %.1f MiB | %.1f MiB | %.1f MiB |\n\n", model, form, ex / 1048576.0, c4 / 1048576.0,
	       c32 / 1048576.0);
}

/* the --streams table of a model: for each decode length and depth,
 * rounds of N streams, against one stream's (timed too where 1 is not in
 * the list) */
static void streams_table(const struct ctx *x, tf_model *m, const char *model, const char *form, const int *tg,
			  int ntg, const int *dp, int ndp, int reps)
{
	if (!x->json) {
		printf("\n| model | form | test | streams | t/s | t/s a stream | x one stream | bytes/round | GB/s |"
		       " roofline |\n");
		printf("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
	}
	for (int i = 0; i < ntg; i++)
		for (int k = 0; k < ndp; k++) {
			tf_bench_rate one, r;
			char test[32];
			if (dp[k])
				snprintf(test, sizeof test, "tg%d@d%d", tg[i], dp[k]);
			else
				snprintf(test, sizeof test, "tg%d", tg[i]);
			if (tf_bench_streams(m, 1, tg[i], dp[k], reps, &one) < 0)
				tf_die("%s: %s, one stream: %s", model, test, tf_errmsg());
			for (int j = 0; j < x->nstreams; j++) {
				const int n = x->streams[j];
				if (n == 1)
					r = one;
				else if (tf_bench_streams(m, n, tg[i], dp[k], reps, &r) < 0)
					tf_die("%s: %s, %d streams: %s", model, test, n, tf_errmsg());
				/* a round reads the weights once and each stream's
				 * caches at its position: the middle one stands for
				 * them, as in the tg rows */
				uint64_t bytes = tf_bench_round_bytes(m, n, dp[k] + tg[i] / 2);
				const double rounds = r.mean / n, gbs = rounds * bytes / 1e9;
				const double share = x->bw > 0 ? gbs * 1e9 / x->bw : 0, ratio = r.mean / one.mean;
				if (x->json) {
					printf("{\"model\": \"%s\", \"form\": \"%s\", \"test\": \"%s\", \"n\": %d, "
					       "\"streams\": %d, \"tok_per_s\": %.2f, \"tok_per_s_sd\": %.2f, "
					       "\"stream_tok_per_s\": %.2f, \"x_one_stream\": %.3f, "
					       "\"bytes_per_round\": %llu, \"gb_per_s\": %.2f",
					       model, form, test, tg[i], n, r.mean, r.sd, rounds, ratio,
					       (unsigned long long)bytes, gbs);
					if (x->bw > 0)
						printf(", \"roofline_share\": %.4f", share);
					printf(", \"reps\": %d, \"device\": \"%s\"}\n", r.reps, x->dev);
				} else {
					printf("| %s | %s | %s | %d | %.2f ± %.2f | %.2f | %.2f | %.1f MB | %.1f GB/s |",
					       model, form, test, n, r.mean, r.sd, rounds, ratio, bytes / 1e6, gbs);
					if (x->bw > 0)
						printf(" %.1f%% |\n", 100 * share);
					else
						printf(" - |\n");
				}
				fflush(stdout);
			}
		}
	if (!x->json)
		printf("\n");
	memory_table(x, m, model, form);
	if (x->intake)
		intake_table(x, m, model, form);
}

/* every length asked for within the model's context, checked before
 * anything is timed: a prompt, a depth plus a decode (depth 0 is a prompt
 * of one id), an intake beside a decode */
static void check_ctx(const struct ctx *x, const tf_config *c, const char *name, const int *pp, int npp,
		      const int *tg, int ntg, const int *dp, int ndp)
{
	char what[160];

	for (int i = 0; i < npp; i++) {
		snprintf(what, sizeof what, "%s: pp%d, a prompt of %d ids,", name, pp[i], pp[i]);
		if (tf_config_check_ctx(c, pp[i], what) < 0)
			tf_die_err();
	}
	for (int i = 0; i < ntg; i++)
		for (int k = 0; k < ndp; k++) {
			int at = dp[k] ? dp[k] : 1;
			snprintf(what, sizeof what, "%s: tg%d at depth %d, %d positions,", name, tg[i], dp[k], at + tg[i]);
			if (tf_config_check_ctx(c, (int64_t)at + tg[i], what) < 0)
				tf_die_err();
		}
	if (x->intake) {
		snprintf(what, sizeof what, "%s: --intake %d", name, x->intake);
		if (tf_config_check_ctx(c, x->intake, what) < 0)
			tf_die_err();
	}
}

static void bench(const struct ctx *x, tf_model *m, const char *name, const char *form, const int *pp, int npp,
		  const int *tg, int ntg, const int *dp, int ndp, int reps)
{
	uint64_t size = x->cpu ? tf_bench_weight_bytes(m) : tf_gpu_weight_bytes(m);
	tf_bench_rate r;
	char test[32];

	for (int i = 0; i < npp; i++) {
		if (tf_bench_pp(m, pp[i], reps, &r) < 0)
			tf_die("%s: pp%d: %s", name, pp[i], tf_errmsg());
		snprintf(test, sizeof test, "pp%d", pp[i]);
		row(x, name, form, size, test, pp[i], &r, 0);
	}
	for (int i = 0; i < ntg; i++)
		for (int k = 0; k < ndp; k++) {
			if (tf_bench_tg(m, tg[i], dp[k], reps, &r) < 0)
				tf_die("%s: tg%d at depth %d: %s", name, tg[i], dp[k], tf_errmsg());
			if (dp[k])
				snprintf(test, sizeof test, "tg%d@d%d", tg[i], dp[k]);
			else
				snprintf(test, sizeof test, "tg%d", tg[i]);
			/* the steps read the weights and the caches at positions
			 * depth .. depth + n - 1: the middle one stands for them */
			row(x, name, form, size, test, tg[i], &r, tf_bench_token_bytes(m, dp[k] + tg[i] / 2));
		}
	if (x->gemv) {
		uint64_t bytes;
		if (tf_bench_gemv(m, 1, reps, &r, &bytes) < 0)
			tf_die("%s: gemv: %s", name, tf_errmsg());
		row(x, name, form, size, "gemv", 1, &r, bytes);
	}
	if (x->nrows)
		rows_table(x, m, name, form, reps);
	if (x->nstreams)
		streams_table(x, m, name, form, tg, ntg, dp, ndp, reps);
}

int main(int argc, char **argv)
{
	int pp[MAXN] = { 512, 4096 }, tg[MAXN] = { 128 }, dp[MAXN] = { 0 }, npp = 2, ntg = 1, ndp = 1, reps = 3, c;
	const char *synth[64];
	int nsynth = 0;
	struct ctx x = { 0 };
	char dev[300] = "";

	tf_prog = "tf-bench";
	tf_out_init();
	while ((c = getopt_long(argc, argv, "s:p:n:d:r:o:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (nsynth == 64)
				tf_usage_die("at most 64 synthetic models");
			synth[nsynth++] = optarg;
			break;
		case 'p': npp = list(optarg, "--prompt", pp, 0); break;
		case 'n': ntg = list(optarg, "--gen", tg, 0); break;
		case 'd': ndp = list(optarg, "--depth", dp, 1); break;
		case 'r': reps = (int)tf_arg_long(optarg, "--reps", 1, 1000); break;
		case 'o':
			if (strcmp(optarg, "md") && strcmp(optarg, "json"))
				tf_usage_die("--output must be md or json, not '%s'", optarg);
			x.json = !strcmp(optarg, "json");
			break;
		case OPT_JSON: x.json = 1; break;
		case OPT_GEMV: x.gemv = 1; break;
		case OPT_ROWS:
			x.nrows = list(optarg, "--rows", x.rows, 0);
			for (int i = 0; i < x.nrows; i++)
				if (x.rows[i] > 64)
					tf_usage_die("--rows: at most 64 rows a pass, not %d", x.rows[i]);
			break;
		case OPT_STREAMS:
			x.nstreams = list(optarg, "--streams", x.streams, 0);
			for (int i = 0; i < x.nstreams; i++)
				if (x.streams[i] > 256)
					tf_usage_die("--streams: at most 256 streams, not %d", x.streams[i]);
			if (!x.nstreams)
				tf_usage_die("--streams wants counts of streams like 1,2,4,8, not '%s'", optarg);
			break;
		case OPT_INTAKE: x.intake = (int)tf_arg_long(optarg, "--intake", 1, 65536); break;
		case OPT_DEVICE:
			if (strcmp(optarg, "cpu") && strcmp(optarg, "cuda"))
				tf_usage_die("--device must be cpu or cuda, not '%s'", optarg);
			x.cpu = !strcmp(optarg, "cpu");
			break;
		case 'h': fputs(usage_text, stdout); return tf_stdout_exit();
		case 'V': printf("tf-bench %s\n", VERSION); return tf_stdout_exit();
		default: tf_usage_die("unknown option");
		}
	}
	if (optind == argc && !nsynth)
		tf_usage_die("expected a MODEL or --synth");
	if (x.cpu && nsynth)
		tf_usage_die("--synth makes its weights on the GPU: not with --device cpu");
	if (x.cpu && x.gemv)
		tf_usage_die("--gemv times the GPU's products: not with --device cpu");
	if (x.intake && !x.nstreams)
		tf_usage_die("--intake takes a prompt in beside streams: it needs --streams");
	if (x.nstreams && !ntg)
		tf_usage_die("--streams times decode rounds: it needs a decode length (-n)");
	for (int i = 0; i < nsynth; i++) {
		char name[128];
		const char *colon = strchr(synth[i], ':');
		if (!colon || colon - synth[i] >= (int)sizeof name)
			tf_usage_die("--synth wants NAME:FORM, like qwen3.5-9b:q4g64, not '%s'", synth[i]);
		snprintf(name, sizeof name, "%.*s", (int)(colon - synth[i]), synth[i]);
		if (tf_bench_synth_check(name, colon + 1) < 0)
			tf_usage_die("--synth: %s", tf_errmsg());
	}

	// every length within each model's context, before any row is printed
	for (int i = optind; i < argc; i++) {
		tf_model *m = tf_model_open(argv[i]);
		if (!m)
			tf_die_err();
		check_ctx(&x, &m->c, argv[i], pp, npp, tg, ntg, dp, ndp);
		tf_model_close(m);
	}
	for (int i = 0; i < nsynth; i++) {
		char name[128];
		tf_config cf;
		snprintf(name, sizeof name, "%.*s", (int)(strchr(synth[i], ':') - synth[i]), synth[i]);
		json_t *cfg = tf_geometry_config(name);
		if (!cfg || tf_config_parse(cfg, NULL, &cf) < 0)
			tf_die_err();
		json_decref(cfg);
		check_ctx(&x, &cf, name, pp, npp, tg, ntg, dp, ndp);
		tf_config_free(&cf);
	}

	int sms;
	uint64_t mem;
	if (x.cpu) {
		tf_pool_init(0);
		snprintf(dev, sizeof dev, "cpu, %d threads", tf_pool_threads());
	} else {
		if (tf_bench_start(dev, sizeof dev, &sms, &mem) < 0)
			tf_die_err();
		x.bw = tf_bench_copy_bw();
	}
	x.dev = dev;
	if (!x.json) {
		if (x.cpu)
			printf("device: %s; no roofline (no measured bandwidth)\n\n", dev);
		else
			printf("device: %s, %d multiprocessors, %.1f GiB; measured copy bandwidth %.0f GB/s "
			       "(read + write)\n\n", dev, sms, mem / (1024.0 * 1024 * 1024), x.bw / 1e9);
		if (npp || ntg) {
			printf("| model | form | size | test | t/s | bytes/token | GB/s | roofline |\n");
			printf("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: |\n");
		}
	}
	for (int i = optind; i < argc; i++) {
		tf_model *m = tf_model_open(argv[i]);
		char form[32];
		if (!m || (!x.cpu && tf_gpu_attach(m) < 0))
			tf_die_err();
		form_name(&m->layer[0].gate, form, sizeof form);
		bench(&x, m, argv[i], form, pp, npp, tg, ntg, dp, ndp, reps);
		tf_gpu_detach(m);
		tf_model_close(m);
	}
	for (int i = 0; i < nsynth; i++) {
		char name[128];
		snprintf(name, sizeof name, "%.*s", (int)(strchr(synth[i], ':') - synth[i]), synth[i]);
		tf_model *m = tf_bench_synth(name, strchr(synth[i], ':') + 1);
		if (!m)
			tf_die_err();
		bench(&x, m, name, strchr(synth[i], ':') + 1, pp, npp, tg, ntg, dp, ndp, reps);
		tf_bench_synth_free(m);
	}
	return tf_stdout_exit();
}
