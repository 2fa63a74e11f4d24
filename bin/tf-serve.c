/*
 * tf-serve: an OpenAI-compatible HTTP server over the streams engine.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/args.h"
#include "base/err.h"
#include "base/pool.h"
#include "decode/decoder.h"
#include "draft/draft.h"
#include "io/out.h"
#include "model/model.h"
#include "serve/chat.h"
#include "serve/engine.h"
#include "serve/server.h"
#include "serve/template.h"
#include "tok/tok.h"
#include "tok/tok_chat.h"

#define VERSION "0.1.0"

static const char usage_text[] =
	"usage: tf-serve [options] MODEL\n"
	"\n"
	"Serves MODEL over an OpenAI-compatible HTTP API: /v1/completions,\n"
	"/v1/chat/completions, /v1/models, /health and /metrics. Prints the URL it\n"
	"listens on, a line on stdout; SIGTERM or SIGINT finishes the requests in\n"
	"flight and exits.\n"
	"\n"
	"  -p, --port N         port to listen on (default 8888; 0: any free one)\n"
	"      --host H         address to bind (default 127.0.0.1)\n"
	"  -P, --parallel N     requests decoded together in shared rounds (default 8)\n"
	"      --queue N        requests waiting for a slot at most; past it 503 (default 64)\n"
	"      --ctx N          prompt plus completion tokens a request at most (default\n"
	"                       4096, or the model's context where that is less; at\n"
	"                       most the model's); -P caches of N must fit in memory\n"
	"      --api-key-file F ask every /v1 request for the key in F (mode 0600 or stricter)\n"
	"      --name NAME      the model's name in the API (default: MODEL's last path part)\n"
	"      --max-body B     request body bytes at most (K, M suffixes; default 1M)\n"
	"      --timeout S      close a connection idle for S seconds (default 60)\n"
	"      --drain S        on SIGTERM, give the requests in flight S seconds (default 30)\n"
	"      --draft SPEC     speculative decoding, as tf-run --draft: ngram[:N], mtp[:K] or\n"
	"                       random[:SEED]; the same ids as without\n"
	"      --draft-tree SHAPE  off (a chain of 8, default) or WIDTHxDEPTH\n"
	"      --no-tokenizer   serve ids alone: prompts of token ids, replies' ids in\n"
	"                       return_token_ids, no text, no chat (for MODELs that\n"
	"                       carry no tokenizer, as tf-pack --synth makes them)\n"
	"  -t, --threads N      CPU threads (default: TF_THREADS or all CPUs)\n"
	"      --device DEV     cpu, cuda or auto (default: TF_DEVICE or auto)\n"
	"  -h, --help           show this help\n"
	"  -V, --version        show the version\n";

/* the default context: enough for a chat, and a cache a slot of the
 * largest models holds with room to spare (128 KiB a position for the
 * 27B's fp32 keys and values: 512 MiB a slot) */
#define TF_SERVE_CTX 4096

enum { OPT_HOST = 256, OPT_QUEUE, OPT_CTX, OPT_KEY, OPT_NAME, OPT_BODY, OPT_TIMEOUT, OPT_DRAIN, OPT_DEVICE,
       OPT_DRAFT, OPT_DRAFT_TREE, OPT_NO_TOK };

static const struct option longopts[] = {
	{ "port", required_argument, NULL, 'p' },
	{ "host", required_argument, NULL, OPT_HOST },
	{ "parallel", required_argument, NULL, 'P' },
	{ "queue", required_argument, NULL, OPT_QUEUE },
	{ "ctx", required_argument, NULL, OPT_CTX },
	{ "api-key-file", required_argument, NULL, OPT_KEY },
	{ "name", required_argument, NULL, OPT_NAME },
	{ "max-body", required_argument, NULL, OPT_BODY },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "drain", required_argument, NULL, OPT_DRAIN },
	{ "threads", required_argument, NULL, 't' },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "draft", required_argument, NULL, OPT_DRAFT },
	{ "draft-tree", required_argument, NULL, OPT_DRAFT_TREE },
	{ "no-tokenizer", no_argument, NULL, OPT_NO_TOK },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ 0 }
};

/* the key in path: its first line; the file must be its owner's alone */
static char *read_key(const char *path)
{
	struct stat st;
	char buf[4096];
	FILE *f = fopen(path, "r");

	if (!f)
		tf_die("cannot open the API key file '%s':", path);
	if (fstat(fileno(f), &st) < 0)
		tf_die("cannot stat the API key file '%s':", path);
	if (st.st_mode & 077)
		tf_die("the API key file '%s' has mode %04o: others may read it; chmod 600 it",
		       path, (unsigned)(st.st_mode & 07777));
	if (!fgets(buf, sizeof buf, f))
		tf_die("the API key file '%s' is empty", path);
	fclose(f);
	buf[strcspn(buf, "\r\n")] = 0;
	if (!*buf)
		tf_die("the API key file '%s' is empty", path);
	return tf_strdup(buf);
}

/* the model's name in the API: the last part of its path */
static const char *name_of(const char *path)
{
	static char name[256];
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	size_t i = n;
	while (i > 0 && path[i - 1] != '/')
		i--;
	snprintf(name, sizeof name, "%.*s", (int)(n - i), path + i);
	return name;
}

int main(int argc, char **argv)
{
	tf_server_opts so = { .host = "127.0.0.1", .port = 8888, .ctx = 0, .body_max = 1 << 20,
			      .timeout_s = 60, .connections = 1024 };
	tf_engine_opts eo = { .parallel = 8, .queue = 64 };
	const char *device = getenv("TF_DEVICE"), *key_file = NULL, *name = NULL, *draft = NULL, *draft_tree = NULL;
	tf_draft_spec spec;
	int threads = 0, c, no_tok = 0;
	double drain = 30;

	tf_prog = "tf-serve";
	while ((c = getopt_long(argc, argv, "p:P:t:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': so.port = tf_arg_long(optarg, "--port", 0, 65535); break;
		case OPT_HOST: so.host = optarg; break;
		case 'P': eo.parallel = tf_arg_long(optarg, "--parallel", 1, 4096); break;
		case OPT_QUEUE: eo.queue = tf_arg_long(optarg, "--queue", 0, 1 << 20); break;
		case OPT_CTX: so.ctx = tf_arg_long(optarg, "--ctx", 2, 1L << 30); break;
		case OPT_KEY: key_file = optarg; break;
		case OPT_NAME: name = optarg; break;
		case OPT_BODY: so.body_max = (long)tf_arg_bytes(optarg, "--max-body"); break;
		case OPT_TIMEOUT: so.timeout_s = tf_arg_long(optarg, "--timeout", 1, 86400); break;
		case OPT_DRAIN: drain = tf_arg_double(optarg, "--drain", 0, 86400); break;
		case 't': threads = tf_arg_long(optarg, "--threads", 1, 256); break;
		case OPT_DEVICE: device = optarg; break;
		case OPT_DRAFT: draft = optarg; break;
		case OPT_DRAFT_TREE: draft_tree = optarg; break;
		case OPT_NO_TOK: no_tok = 1; break;
		case 'h': fputs(usage_text, stdout); return tf_stdout_exit();
		case 'V': printf("tf-serve %s\n", VERSION); return tf_stdout_exit();
		default: tf_usage_die("unknown option");
		}
	}
	if (argc - optind != 1)
		tf_usage_die("expected one MODEL");
	if (so.body_max < 1024)
		tf_usage_die("--max-body must be 1K or more");
	if (!device || !*device)
		device = "auto";
	if (strcmp(device, "cpu") && strcmp(device, "cuda") && strcmp(device, "auto"))
		tf_usage_die("--device must be cpu, cuda or auto, not '%s'", device);
	if (draft_tree && !draft)
		tf_usage_die("--draft-tree shapes the drafts of --draft: it needs --draft");
	// a drafter that cannot be is bad input, found before the model loads
	if (draft) {
		if (tf_draft_parse(&spec, draft, draft_tree) < 0)
			tf_die_err();
		eo.draft = &spec;
	}
	const char *path = argv[optind];
	so.model_name = name ? name : name_of(path);
	if (key_file)
		so.api_key = read_key(key_file);

	/* the signals are taken by sigwait below: no thread made from here on
	 * gets them */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	tf_pool_init(threads);
	tf_model *m = tf_model_open(path);
	if (!m)
		tf_die_err();
	// the context a request may take: a cache of it for every slot must
	// fit where they run, known at start rather than when one cannot grow
	if (!so.ctx)
		so.ctx = m->c.max_pos < TF_SERVE_CTX ? m->c.max_pos : TF_SERVE_CTX;
	if (tf_config_set_ctx(&m->c, so.ctx) < 0)
		tf_die_err();
	if (tf_decoder_attach(m, device) < 0)
		tf_die_err();
	if (tf_decoder_check_room(m, (int)eo.parallel) < 0)
		tf_die_err();
	if (draft && tf_draft_check(&spec, m) < 0)
		tf_die_err();
	tf_tok *tok = NULL;
	if (!no_tok && !(tok = tf_tok_load(path))) {
		char why[512];
		snprintf(why, sizeof why, "%s", tf_errmsg());
		tf_die("%s%s", why, strstr(why, "no tokenizer") ? " (--no-tokenizer serves ids alone)" : "");
	}
	char *tmpl = no_tok ? NULL : tf_chat_template_of(path);
	if (no_tok)
		so.chat_refused = "tf-serve runs without a tokenizer (--no-tokenizer)";
	else if (tmpl && !tf_chat_template_known(tmpl))
		so.chat_refused = "the model's chat template is not the Qwen3.5 family's, the one format tf-serve renders";
	else if (!tf_tok_has_chat(tok))
		so.chat_refused = "the model's tokenizer has no <|im_start|> and <|im_end|> for chat turns";
	if (so.chat_refused)
		tf_warn("%s: /v1/chat/completions is refused", so.chat_refused);
	free(tmpl);

	tf_engine *e = tf_engine_new(m, &eo);
	if (!e)
		tf_die_err();
	tf_server *s = tf_server_start(m, tok, e, &so);
	if (!s)
		tf_die_err();
	printf("http://%s%s%s:%d\n", strchr(so.host, ':') ? "[" : "", so.host, strchr(so.host, ':') ? "]" : "",
	       tf_server_port(s));
	if (fflush(stdout))
		tf_die("write error:");

	int sig;
	sigwait(&sigs, &sig);
	tf_server_stop(s, drain);
	tf_engine_free(e);
	tf_tok_free(tok);
	tf_decoder_detach(m);
	tf_model_close(m);
	free((char *)so.api_key);
	return 0;
}
