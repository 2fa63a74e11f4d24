/* tf-gate: compare two logit streams row by row, or score one against targets */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "io/out.h"
#include "tools/gate.h"

#ifndef TF_VERSION
#define TF_VERSION "0.1.0"
#endif

static const char usage_text[] =
	"usage: tf-gate [options] A B\n"
	"       tf-gate --targets IDS [options] A\n"
	"\n"
	"Compare two logit streams (tf-records(5) logits records, or bare float32\n"
	"rows with --raw) row by row; '-' is stdin. Exit 0 within every threshold,\n"
	"1 outside one, 2 when the streams could not be compared.\n"
	"\n"
	"  --raw V         a stream without the record magic is bare float32, V a row\n"
	"  --targets IDS   token ids (text or records) the rows predict: adds perplexity;\n"
	"                  with one stream, score it alone\n"
	"  --hash          print the sha256 of every row\n"
	"  --json          one JSON object instead of the table\n"
	"  --tap           the thresholds as TAP, the figures as comments\n"
	"  --exact         threshold: every row bit-equal\n"
	"  --max-abs X     threshold: max |a - b| at most X\n"
	"  --kl X          threshold: mean KL(A||B) at most X\n"
	"  --top1 X        threshold: top-1 agreement at least X (a share, 0 to 1)\n"
	"  --ppl-tol PCT   threshold: perplexities within PCT percent (needs --targets)\n"
	"  -h, --help      this text\n"
	"  -V, --version   the version\n";

enum { OPT_RAW = 256, OPT_TARGETS, OPT_HASH, OPT_JSON, OPT_TAP, OPT_EXACT, OPT_MAX_ABS, OPT_KL,
       OPT_TOP1, OPT_PPL_TOL };

static const struct option longopts[] = {
	{ "raw", required_argument, NULL, OPT_RAW },
	{ "targets", required_argument, NULL, OPT_TARGETS },
	{ "hash", no_argument, NULL, OPT_HASH },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "tap", no_argument, NULL, OPT_TAP },
	{ "exact", no_argument, NULL, OPT_EXACT },
	{ "max-abs", required_argument, NULL, OPT_MAX_ABS },
	{ "kl", required_argument, NULL, OPT_KL },
	{ "top1", required_argument, NULL, OPT_TOP1 },
	{ "ppl-tol", required_argument, NULL, OPT_PPL_TOL },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ 0 }
};

/* a threshold: a finite number, not negative */
static double limit_arg(const char *opt, const char *s)
{
	char *end;
	double v;

	v = strtod(s, &end);
	if (end == s || *end || !isfinite(v) || v < 0)
		tf_usage_die("--%s: '%s' is not a non-negative number", opt, s);
	return v;
}

int main(int argc, char **argv)
{
	tf_gate_opts o = { .max_abs = NAN, .kl = NAN, .top1 = NAN, .ppl_tol = NAN };
	int c, nstd, rc;

	tf_prog = "tf-gate";
	tf_out_init();
	while ((c = getopt_long(argc, argv, "hV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_RAW: {
			char *end;
			unsigned long long v = strtoull(optarg, &end, 10);
			if (end == optarg || *end || optarg[0] == '-' || v < 1 || v > UINT32_MAX)
				tf_usage_die("--raw: '%s' is not a row width (1 to %u)", optarg, UINT32_MAX);
			o.raw = v;
			break;
		}
		case OPT_TARGETS: o.targets = optarg; break;
		case OPT_HASH: o.hash = 1; break;
		case OPT_JSON: o.json = 1; break;
		case OPT_TAP: o.tap = 1; break;
		case OPT_EXACT: o.exact = 1; break;
		case OPT_MAX_ABS: o.max_abs = limit_arg("max-abs", optarg); break;
		case OPT_KL: o.kl = limit_arg("kl", optarg); break;
		case OPT_TOP1:
			o.top1 = limit_arg("top1", optarg);
			if (o.top1 > 1)
				tf_usage_die("--top1: '%s' is a share of rows, 0 to 1", optarg);
			break;
		case OPT_PPL_TOL: o.ppl_tol = limit_arg("ppl-tol", optarg); break;
		case 'h':
			fputs(usage_text, stdout);
			if (tf_stdout_close())
				tf_die_err();
			return 0;
		case 'V':
			printf("tf-gate %s\n", TF_VERSION);
			if (tf_stdout_close())
				tf_die_err();
			return 0;
		default:
			tf_usage_die("unknown option");
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 2) {
		o.a = argv[0];
		o.b = argv[1];
	} else if (argc == 1 && o.targets) {
		o.a = argv[0];
	} else {
		tf_usage_die(o.targets ? "need one stream to score or two to compare" : "need two streams to compare");
	}
	if (!o.b && (o.exact || !isnan(o.max_abs) || !isnan(o.kl) || !isnan(o.top1) || !isnan(o.ppl_tol)))
		tf_usage_die("--exact, --max-abs, --kl, --top1 and --ppl-tol compare two streams");
	if (!isnan(o.ppl_tol) && !o.targets)
		tf_usage_die("--ppl-tol needs --targets");
	if (o.json && o.tap)
		tf_usage_die("--json and --tap are two forms of one report: choose one");
	nstd = !strcmp(o.a, "-") + (o.b && !strcmp(o.b, "-")) + (o.targets && !strcmp(o.targets, "-"));
	if (nstd > 1)
		tf_usage_die("only one input can be '-' (stdin)");

	/* trouble is 2, not tf_die's 1: 1 means "outside a threshold" here */
	rc = tf_gate_run(&o);
	if (rc == TF_GATE_TROUBLE)
		fflush(stdout);
	else if (tf_stdout_close() < 0)
		rc = TF_GATE_TROUBLE;
	if (rc == TF_GATE_TROUBLE)
		fprintf(stderr, "%s: error: %s\n", tf_prog, tf_errmsg());
	return rc;
}
