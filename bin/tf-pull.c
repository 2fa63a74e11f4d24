/* tf-pull: bring a model into the Hugging Face cache and print its snapshot folder */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <curl/curl.h>

#include "base/err.h"
#include "hub/archive_ingest.h"
#include "hub/hub.h"
#include "hub/hublist.h"
#include "hub/hubpull.h"
#include "io/out.h"

#ifndef TF_VERSION
#define TF_VERSION "0.1.0"
#endif

static const char usage_text[] =
	"usage: tf-pull [options] ORG/NAME[@REV]\n"
	"       tf-pull [options] ARCHIVE|FOLDER|- --as ORG/NAME[@REV]\n"
	"       tf-pull --list [ORG/NAME]\n"
	"\n"
	"Brings a model into the Hugging Face cache and prints its snapshot folder.\n"
	"\n"
	"  -i, --include GLOB     take the files matching GLOB (repeatable; default:\n"
	"                         *.json *.safetensors tokenizer* *.txt *.jinja)\n"
	"  -x, --exclude GLOB     leave out the files matching GLOB (repeatable)\n"
	"  -r, --revision REV     branch, tag or commit (default main; or ORG/NAME@REV)\n"
	"  -j, --jobs N           downloads at once, 1 to 64 (default 4)\n"
	"  -o, --offline          resolve from the cache only (or HF_HUB_OFFLINE=1)\n"
	"  -a, --as ORG/NAME[@REV]\n"
	"                         file an archive or folder under this name\n"
	"  -l, --list             list cached repositories, revisions and sizes\n"
	"  -c, --cache-dir DIR    the hub cache (default $HF_HUB_CACHE, $HF_HOME/hub,\n"
	"                         ~/.cache/huggingface/hub)\n"
	"  -q, --quiet            no progress bars\n"
	"      --deadline S       give up on a request after S seconds (default: a\n"
	"                         minute plus its bytes at 256 KiB/s)\n"
	"  -h, --help             show this help\n"
	"  -V, --version          show the version\n";

enum { OPT_DEADLINE = 256 };

static const struct option longopts[] = {
	{ "include", required_argument, NULL, 'i' },
	{ "exclude", required_argument, NULL, 'x' },
	{ "revision", required_argument, NULL, 'r' },
	{ "jobs", required_argument, NULL, 'j' },
	{ "offline", no_argument, NULL, 'o' },
	{ "as", required_argument, NULL, 'a' },
	{ "list", no_argument, NULL, 'l' },
	{ "cache-dir", required_argument, NULL, 'c' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "deadline", required_argument, NULL, OPT_DEADLINE },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

/* ORG/NAME[@REV] into repo and rev; a usage error otherwise, which says
 * so when arg is a local folder or file */
static void parse_repo(const char *arg, char **repo, char **rev)
{
	struct stat st;

	if (!tf_hub_parse_spec(arg, repo, rev))
		return;
	if (!stat(arg, &st))
		tf_usage_die("'%s' is a local %s; name the repository with --as ORG/NAME", arg,
			     S_ISDIR(st.st_mode) ? "folder" : "file");
	tf_usage_die("%s", tf_errmsg());
}

/* the revision of --revision or of '@REV', not both */
static const char *one_revision(const char *revision, const char *rev)
{
	if (revision && rev)
		tf_usage_die("the revision is given twice ('@%s' and --revision)", rev);
	return revision ? revision : rev;
}

int main(int argc, char **argv)
{
	const char **inc = tf_calloc(argc, sizeof *inc), **exc = tf_calloc(argc, sizeof *exc);
	const char *as = NULL, *cache_arg = NULL, *revision = NULL;
	int ninc = 0, nexc = 0, jobs = 4, offline = 0, list = 0, quiet = 0, c;
	long deadline = 0;
	char *cache, *repo = NULL, *rev = NULL, *snapshot = NULL, *end;
	tf_hub_filter filter;
	int rc;

	tf_prog = "tf-pull";
	tf_out_init();
	while ((c = getopt_long(argc, argv, "i:x:r:j:oa:lc:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			inc[ninc++] = optarg;
			break;
		case 'x':
			exc[nexc++] = optarg;
			break;
		case 'r':
			revision = optarg;
			break;
		case 'j':
			jobs = strtol(optarg, &end, 10);
			if (*end || !*optarg || jobs < 1 || jobs > 64)
				tf_usage_die("--jobs wants a number from 1 to 64, not '%s'", optarg);
			break;
		case 'o':
			offline = 1;
			break;
		case 'a':
			as = optarg;
			break;
		case 'l':
			list = 1;
			break;
		case 'c':
			cache_arg = optarg;
			break;
		case OPT_DEADLINE:
			deadline = strtol(optarg, &end, 10);
			if (*end || !*optarg || deadline < 1)
				tf_usage_die("--deadline wants a number of seconds, not '%s'", optarg);
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			free(inc);
			free(exc);
			return tf_stdout_exit();
		case 'V':
			printf("tf-pull %s (libcurl %s, %s)\n", TF_VERSION,
			       curl_version_info(CURLVERSION_NOW)->version, archive_version_string());
			free(inc);
			free(exc);
			return tf_stdout_exit();
		default:
			tf_usage_die("unknown or incomplete option");
		}
	}
	argc -= optind;
	argv += optind;
	if (list && (as || argc > 1))
		tf_usage_die("--list takes at most one ORG/NAME");
	if (!list && argc != 1)
		tf_usage_die(argc ? "one repository or archive at a time" :
			     "missing ORG/NAME (or an ARCHIVE with --as)");

	filter = (tf_hub_filter){ ninc ? inc : NULL, ninc, exc, nexc };
	if (!(cache = tf_hub_cache_dir(cache_arg)))
		tf_die_err();

	if (list) {
		if (argc && !tf_hub_valid_repo(argv[0]))
			tf_usage_die("invalid repository id '%s' (want ORG/NAME)", argv[0]);
		rc = tf_hub_list(cache, argc ? argv[0] : NULL, stdout);
	} else if (as) {
		tf_ingest_opts o = { .cache = cache, .src = argv[0], .filter = filter };

		if (tf_hub_parse_spec(as, &repo, &rev))
			tf_usage_die("--as: %s", tf_errmsg());
		o.repo = repo;
		o.rev = one_revision(revision, rev);
		rc = tf_archive_ingest(&o, &snapshot);
	} else {
		tf_pull_opts o = { .cache = cache, .filter = filter, .jobs = jobs, .deadline_s = deadline };

		parse_repo(argv[0], &repo, &rev);
		o.repo = repo;
		o.rev = one_revision(revision, rev);
		o.offline = offline || tf_hub_offline();
		o.progress = !quiet && isatty(2) && !tf_hub_env_true("HF_HUB_DISABLE_PROGRESS_BARS");
		rc = tf_hub_pull(&o, &snapshot);
	}
	if (rc)
		tf_die_err();
	if (snapshot)
		printf("%s\n", snapshot);
	if (tf_stdout_close())
		tf_die_err();
	free(snapshot);
	free(repo);
	free(rev);
	free(cache);
	free(inc);
	free(exc);
	return 0;
}
