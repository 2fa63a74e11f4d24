/*
 * tf-pack: turn a checkpoint into one tf-bundle(5); show a bundle; make a
 * random model of any geometry.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/args.h"
#include "base/err.h"
#include "io/out.h"
#include "model/bundle.h"
#include "model/gguf.h"
#include "model/gguf_qwen35.h"
#include "pack/pack.h"
#include "pack/synth.h"

#define VERSION "0.1.0"

static const char usage_text[] =
	"usage: tf-pack [options] SRC OUT\n"
	"       tf-pack --synth CONFIG --bits N [--group G] [--seed S] OUT\n"
	"       tf-pack --show [--json] BUNDLE | --show FILE.gguf\n"
	"       tf-pack --verify BUNDLE\n"
	"\n"
	"Packs the checkpoint folder, bundle or GGUF file SRC into the bundle OUT. MLX\n"
	"codes, scales and biases are kept bit for bit, GGUF Q8_0, Q4_0 and Q1_0 blocks\n"
	"become the same numbers as affine and sign1; float weights whose every group of\n"
	"128 holds exactly {-s,+s} become sign1 with zero error; other float\n"
	"weights are kept, or quantized when --bits or --recipe asks.\n"
	"\n"
	"  -b, --bits N         quantize float weights to N bits (2, 3, 4, 5, 6, 8);\n"
	"                       with --synth also 1 (sign1) and 16 (bf16)\n"
	"  -g, --group G        quantization group: 32, 64 (default) or 128\n"
	"  -r, --recipe FILE    bits per module from FILE, or mixed_2_6, mixed_3_4,\n"
	"                       mixed_3_6, mixed_4_6 (mlx-lm's mixed recipes)\n"
	"      --no-sign1       do not repack binary weights as sign1\n"
	"      --synth CONFIG   write a model of random weights with CONFIG's geometry:\n"
	"                       a config.json, or qwen3.5-0.8b, -2b, -4b, -9b or -27b\n"
	"      --seed S         seed for --synth (default 0)\n"
	"      --show           print the manifest of BUNDLE as a table (of a GGUF:\n"
	"                       each tensor's type and the form it becomes)\n"
	"      --json           with --show: print the manifest as JSON\n"
	"      --verify         check every tensor's bytes against the manifest's\n"
	"                       checksums; exit 1 when one differs\n"
	"  -q, --quiet          no progress line\n"
	"  -h, --help           show this help\n"
	"  -V, --version        show the version\n";

enum { OPT_NOSIGN1 = 256, OPT_SYNTH, OPT_SEED, OPT_SHOW, OPT_JSON, OPT_VERIFY };

static const struct option longopts[] = {
	{ "bits", required_argument, NULL, 'b' },
	{ "group", required_argument, NULL, 'g' },
	{ "recipe", required_argument, NULL, 'r' },
	{ "no-sign1", no_argument, NULL, OPT_NOSIGN1 },
	{ "synth", required_argument, NULL, OPT_SYNTH },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "show", no_argument, NULL, OPT_SHOW },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ 0 }
};

static void human(char *buf, size_t n, double bytes)
{
	const char *unit[] = { "B", "KB", "MB", "GB", "TB" };
	int u = 0;

	while (bytes >= 1000 && u < 4) {
		bytes /= 1000;
		u++;
	}
	snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
}

/* the manifest as a table: one tensor a line, then totals */
static int show(const char *path, int as_json)
{
	uint64_t size, total = 0;
	json_t *m, *t;
	size_t i;
	char buf[32];
	int nsign1 = 0, naff = 0, nraw = 0, gguf = tf_gguf_is(path);

	if (gguf < 0)
		return -1;
	if (gguf) {
		if (as_json)
			tf_usage_die("--json shows bundles only");
		return tf_gguf_show(path, stdout);
	}
	if (!(m = tf_bundle_manifest(path, &size)))
		return -1;
	if (as_json) {
		if (json_dumpf(m, stdout, JSON_INDENT(1)) < 0 || putchar('\n') == EOF) {
			json_decref(m);
			return tf_err("write to stdout:");
		}
		json_decref(m);
		return 0;
	}
	printf("%-48s %-7s %-16s %4s %5s %-9s %10s %10s\n", "tensor", "format", "shape", "bits", "group",
	       "path", "bytes", "max_error");
	json_array_foreach(json_object_get(m, "tensors"), i, t) {
		json_t *sh = json_object_get(t, "shape"), *d;
		const char *fmt = json_string_value(json_object_get(t, "format"));
		char shape[64] = "";
		size_t k;
		json_array_foreach(sh, k, d) {
			size_t l = strlen(shape);
			snprintf(shape + l, sizeof shape - l, "%s%lld", k ? "x" : "", (long long)json_integer_value(d));
		}
		total += json_integer_value(json_object_get(t, "bytes"));
		if (!strcmp(fmt, "sign1"))
			nsign1++;
		else if (!strcmp(fmt, "affine"))
			naff++;
		else
			nraw++;
		printf("%-48s %-7s %-16s %4lld %5lld %-9s %10lld %10.3g\n",
		       json_string_value(json_object_get(t, "name")), fmt, shape,
		       (long long)json_integer_value(json_object_get(t, "bits")),
		       (long long)json_integer_value(json_object_get(t, "group")),
		       json_string_value(json_object_get(t, "path")),
		       (long long)json_integer_value(json_object_get(t, "bytes")),
		       json_number_value(json_object_get(t, "max_error")));
	}
	human(buf, sizeof buf, size);
	printf("# %zu tensors: %d affine, %d sign1, %d other; %llu bytes of tensors; file %llu bytes (%s)\n",
	       json_array_size(json_object_get(m, "tensors")), naff, nsign1, nraw, (unsigned long long)total,
	       (unsigned long long)size, buf);
	json_decref(m);
	return 0;
}

int main(int argc, char **argv)
{
	tf_pack_opts o = { .group = 64 };
	const char *synth = NULL;
	long seed = 0;
	int c, do_show = 0, do_verify = 0, as_json = 0, quiet = 0, group_set = 0, seed_set = 0;

	tf_prog = "tf-pack";
	tf_out_init();
	while ((c = getopt_long(argc, argv, "b:g:r:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'b': o.bits = tf_arg_long(optarg, "--bits", 1, 16); break;
		case 'g': o.group = tf_arg_long(optarg, "--group", 32, 128); group_set = 1; break;
		case 'r': o.recipe = optarg; break;
		case OPT_NOSIGN1: o.no_sign1 = 1; break;
		case OPT_SYNTH: synth = optarg; break;
		case OPT_SEED: seed = tf_arg_long(optarg, "--seed", 0, 0x7fffffffl); seed_set = 1; break;
		case OPT_SHOW: do_show = 1; break;
		case OPT_JSON: as_json = 1; break;
		case OPT_VERIFY: do_verify = 1; break;
		case 'q': quiet = 1; break;
		case 'h': fputs(usage_text, stdout); return tf_stdout_exit();
		case 'V': printf("tf-pack %s\n", VERSION); return tf_stdout_exit();
		default: tf_usage_die("unknown option");
		}
	}
	argc -= optind;
	argv += optind;
	if (o.group != 32 && o.group != 64 && o.group != 128)
		tf_usage_die("--group must be 32, 64 or 128, not %d", o.group);
	if (as_json && !do_show)
		tf_usage_die("--json goes with --show");
	o.progress = !quiet && isatty(2);
	if (do_show) {
		if (argc != 1 || synth || o.bits || o.recipe)
			tf_usage_die("--show takes one bundle and no packing options");
		if (show(argv[0], as_json) < 0)
			tf_die_err();
		return tf_stdout_close() ? (tf_die_err(), 1) : 0;
	}
	if (do_verify) {
		long bad, unchecked;
		if (argc != 1 || do_show || synth || o.bits || o.recipe)
			tf_usage_die("--verify takes one bundle and no other options");
		if (tf_bundle_verify(argv[0], stdout, &bad, &unchecked) < 0)
			tf_die_err();
		tf_stdout_exit();
		if (bad)
			tf_die("'%s': %ld tensors differ from their checksums", argv[0], bad);
		if (unchecked)
			tf_warn("'%s': %ld tensors have no checksum of their stored bytes (an older tf-pack "
				"made it)", argv[0], unchecked);
		return 0;
	}
	if (seed_set && !synth)
		tf_usage_die("--seed goes with --synth");
	if (synth) {
		if (argc != 1)
			tf_usage_die("--synth takes one output file");
		if (o.recipe)
			tf_usage_die("--recipe does not go with --synth");
		if (!o.bits)
			tf_usage_die("--synth needs --bits (1, 2..8 or 16)");
		if (o.bits == 7 || (o.bits > 8 && o.bits != 16))
			tf_usage_die("--bits for --synth must be 1, 2, 3, 4, 5, 6, 8 or 16, not %d", o.bits);
		if (tf_synth(synth, o.bits, o.group, seed, argv[0], o.progress) < 0)
			tf_die_err();
		return 0;
	}
	if (argc != 2)
		tf_usage_die("expected SRC and OUT");
	if (o.bits && (o.bits < 2 || o.bits > 8 || o.bits == 7))
		tf_usage_die("--bits must be 2, 3, 4, 5, 6 or 8, not %d", o.bits);
	if (group_set && !o.bits && !o.recipe)
		tf_usage_die("--group goes with --bits or --recipe");
	if (tf_pack(argv[0], argv[1], &o) < 0)
		tf_die_err();
	return 0;
}
