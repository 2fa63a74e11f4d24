/* hub: cache paths, name checks, etags, links, filters and digests of the hub library */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "hub/http.h"
#include "hub/hub.h"
#include "hub/hubsum.h"
#include "tap.h"

static char tmp[] = "/tmp/hub.XXXXXX";

static int str_is(char *got, const char *want)
{
	int same = got && !strcmp(got, want);

	if (!same)
		diag("got '%s', want '%s'", got ? got : "(null)", want);
	free(got);
	return same;
}

static void clear_env(void)
{
	static const char *vars[] = { "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME",
				      "XDG_CACHE_HOME", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN",
				      "HF_TOKEN_PATH", "HF_ENDPOINT", NULL };

	for (int i = 0; vars[i]; i++)
		unsetenv(vars[i]);
}

static void names(void)
{
	static const char *good_repo[] = { "Qwen/Qwen3.5-9B", "a/b", "org_x/name.v2", "mlx-community/x_1", NULL };
	static const char *bad_repo[] = { "a", "a/b/c", "/a", "a/", "a--b/c", "a/b--c", "a/..b", "-a/b",
					  "a/b.", "a b/c", "", "a/b\n", NULL };
	static const char *good_rev[] = { "main", "v1.0", "refs/pr/1", "0123456789abcdef0123456789abcdef01234567", NULL };
	static const char *bad_rev[] = { "", "../x", "a//b", "/a", "a/", ".hidden", "a/.x", "a..b", "a b", "a\n", NULL };
	static const char *good_path[] = { "config.json", "a/b/c.json", ".gitattributes", "x..y", NULL };
	static const char *bad_path[] = { "", "/abs", "a/../b", "..", ".", "a/./b", "a//b", "a/", "a\\b", "a\nb", NULL };
	char big[128];
	int all;

	all = 1;
	for (int i = 0; good_repo[i]; i++)
		all &= tf_hub_valid_repo(good_repo[i]);
	ok(all, "valid repository ids pass");
	all = 1;
	for (int i = 0; bad_repo[i]; i++)
		if (tf_hub_valid_repo(bad_repo[i])) {
			diag("accepted repository id '%s'", bad_repo[i]);
			all = 0;
		}
	ok(all, "ids with no owner, two slashes, '--', '..', odd ends or characters fail");
	memset(big, 'a', sizeof big);
	big[0] = 'o';
	big[1] = '/';
	big[99] = 0;
	ok(!tf_hub_valid_repo(big), "a name of 97 characters fails");
	big[98] = 0;
	ok(tf_hub_valid_repo(big), "a name of 96 characters passes");

	all = 1;
	for (int i = 0; good_rev[i]; i++)
		all &= tf_hub_valid_rev(good_rev[i]);
	ok(all, "branches, tags, refs/pr/N and commits are valid revisions");
	all = 1;
	for (int i = 0; bad_rev[i]; i++)
		if (tf_hub_valid_rev(bad_rev[i])) {
			diag("accepted revision '%s'", bad_rev[i]);
			all = 0;
		}
	ok(all, "revisions that climb, start with '.', or hold blanks fail");

	all = 1;
	for (int i = 0; good_path[i]; i++)
		all &= tf_hub_valid_path(good_path[i]);
	ok(all, "relative file paths pass");
	all = 1;
	for (int i = 0; bad_path[i]; i++)
		if (tf_hub_valid_path(bad_path[i])) {
			diag("accepted path '%s'", bad_path[i]);
			all = 0;
		}
	ok(all, "absolute paths, '.', '..', empty parts, backslashes and control characters fail");

	ok(tf_hub_is_commit("0123456789abcdef0123456789abcdef01234567") &&
	   !tf_hub_is_commit("0123456789ABCDEF0123456789abcdef01234567") &&
	   !tf_hub_is_commit("0123456789abcdef0123456789abcdef0123456"), "a commit is 40 lowercase hex");
}

static void etags(void)
{
	char e[65];
	const char *sha1 = "ce013625030ba8dba906f756967f9e9ca394464a";

	ok(!tf_hub_norm_etag("\"ce013625030ba8dba906f756967f9e9ca394464a\"", e) && !strcmp(e, sha1),
	   "a quoted 40-hex etag loses its quotes");
	ok(!tf_hub_norm_etag("W/\"CE013625030BA8DBA906F756967F9E9CA394464A\"", e) && !strcmp(e, sha1),
	   "a weak, uppercase etag is normalised");
	ok(!tf_hub_norm_etag("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", e),
	   "a bare sha256 is an etag");
	ok(tf_hub_norm_etag("\"ce013625030ba8dba906f756967f9e9ca394464\"", e) &&
	   tf_hub_norm_etag("\"../../../../etc/passwd0000000000000000000\"", e) && tf_hub_norm_etag("", e),
	   "short, non-hex and empty etags are refused");
}

static void spec(void)
{
	char *repo, *rev;

	ok(!tf_hub_parse_spec("Qwen/Qwen3.5-9B@refs/pr/3", &repo, &rev) && str_is(repo, "Qwen/Qwen3.5-9B") &&
	   str_is(rev, "refs/pr/3"), "ORG/NAME@REV splits");
	ok(!tf_hub_parse_spec("a/b", &repo, &rev) && str_is(repo, "a/b") && !rev, "without @ there is no revision");
	ok(tf_hub_parse_spec("a/b@", &repo, &rev) && !repo && !rev, "an empty revision fails");
	ok(tf_hub_parse_spec("a/b@x y", &repo, &rev) && strstr(tf_errmsg(), "invalid revision 'x y'"),
	   "a bad revision is named");
}

static void folders(void)
{
	ok(str_is(tf_hub_repo_dir("/c", "Qwen/Qwen3.5-9B"), "/c/models--Qwen--Qwen3.5-9B"),
	   "the repository folder is models--ORG--NAME");
	ok(str_is(tf_hub_repo_from_folder("models--Qwen--Qwen3.5-9B"), "Qwen/Qwen3.5-9B") &&
	   str_is(tf_hub_repo_from_folder("models--gpt2"), "gpt2"), "and back, old owner-less names too");
	ok(!tf_hub_repo_from_folder("datasets--a--b") && !tf_hub_repo_from_folder(".locks") &&
	   !tf_hub_repo_from_folder("models--a--b--c"), "other folders are no model repositories");
}

static void cache_dir(void)
{
	clear_env();
	setenv("HOME", "/home/u", 1);
	ok(str_is(tf_hub_cache_dir(NULL), "/home/u/.cache/huggingface/hub"), "default ~/.cache/huggingface/hub");
	setenv("XDG_CACHE_HOME", "/x", 1);
	ok(str_is(tf_hub_cache_dir(NULL), "/x/huggingface/hub"), "then XDG_CACHE_HOME/huggingface/hub");
	setenv("HF_HOME", "~/hf", 1);
	ok(str_is(tf_hub_cache_dir(NULL), "/home/u/hf/hub"), "then HF_HOME/hub, with ~ expanded");
	setenv("HUGGINGFACE_HUB_CACHE", "/legacy", 1);
	ok(str_is(tf_hub_cache_dir(NULL), "/legacy"), "then the legacy HUGGINGFACE_HUB_CACHE");
	setenv("HF_HUB_CACHE", "/hub", 1);
	ok(str_is(tf_hub_cache_dir(NULL), "/hub"), "then HF_HUB_CACHE");
	ok(str_is(tf_hub_cache_dir("/flag"), "/flag"), "and --cache-dir before all");
	setenv("HF_HUB_CACHE", "", 1);
	ok(str_is(tf_hub_cache_dir(NULL), "/legacy"), "an empty variable counts as unset");

	setenv("HF_ENDPOINT", "http://127.0.0.1:1//", 1);
	ok(str_is(tf_hub_endpoint(), "http://127.0.0.1:1"), "HF_ENDPOINT loses trailing slashes");
	unsetenv("HF_ENDPOINT");
	ok(str_is(tf_hub_endpoint(), "https://huggingface.co"), "the public hub by default");
	clear_env();
}

static void token(void)
{
	char *t, path[PATH_MAX];
	FILE *f;

	clear_env();
	snprintf(path, sizeof path, "%s/hf", tmp);
	setenv("HF_HOME", path, 1);
	ok(!tf_hub_token(&t) && !t, "no token anywhere is no token");
	tf_hub_mkdirs(path);
	snprintf(path, sizeof path, "%s/hf/token", tmp);
	f = fopen(path, "w");
	fputs("  file-token \n", f);
	fclose(f);
	ok(!tf_hub_token(&t) && str_is(t, "file-token"), "$HF_HOME/token, blanks stripped");
	setenv("HUGGING_FACE_HUB_TOKEN", "legacy", 1);
	ok(!tf_hub_token(&t) && str_is(t, "legacy"), "HUGGING_FACE_HUB_TOKEN before the file");
	setenv("HF_TOKEN", "hf_abc\n", 1);
	ok(!tf_hub_token(&t) && str_is(t, "hf_abc"), "HF_TOKEN first");
	setenv("HF_TOKEN", "a\r\nX-Evil: 1", 1);
	ok(tf_hub_token(&t) == -1 && !t, "a token that would break the header is refused");
	clear_env();
}

static void filters(void)
{
	static const char *take[] = { "config.json", "model-00001-of-00002.safetensors",
				      "model.safetensors.index.json", "tokenizer.model", "sub/tokenizer.json",
				      "merges.txt", "chat_template.jinja", NULL };
	static const char *leave[] = { "pytorch_model.bin", ".gitattributes", "README.md", "prompt.ids",
				       "model.gguf", NULL };
	const char *inc[] = { "sub/", "*.ids" }, *exc[] = { "sub/b/*", "p*" };
	tf_hub_filter f = { inc, 2, exc, 2 };
	int all = 1;

	for (int i = 0; take[i]; i++)
		all &= tf_hub_filter_match(NULL, take[i]);
	ok(all, "the default patterns take config, tokenizer, safetensors, txt and jinja files");
	all = 1;
	for (int i = 0; leave[i]; i++)
		all &= !tf_hub_filter_match(NULL, leave[i]);
	ok(all, "and leave other weights, READMEs and git files");
	ok(tf_hub_filter_match(&f, "sub/a/x.bin") && tf_hub_filter_match(&f, "a/greedy.ids"),
	   "a pattern ending in / takes a folder; a pattern without / matches base names");
	ok(!tf_hub_filter_match(&f, "sub/b/x.bin") && !tf_hub_filter_match(&f, "prompt.ids") &&
	   !tf_hub_filter_match(&f, "config.json"), "exclude patterns win; include patterns replace the defaults");
}

static int link_is(const char *path, const char *want, size_t n)
{
	char buf[PATH_MAX];
	ssize_t got = readlink(path, buf, sizeof buf - 1);

	buf[got > 0 ? got : 0] = 0;
	if (strncmp(buf, want, n))
		diag("link '%s' -> '%s'", path, buf);
	return !strncmp(buf, want, n);
}

static void links(void)
{
	char repo[PATH_MAX], path[PATH_MAX + 128], commit[41];
	const char *c = "0123456789abcdef0123456789abcdef01234567";
	const char *e = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
	const char *to = "../../blobs/ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
	FILE *f;
	long size = -1;

	snprintf(repo, sizeof repo, "%s/models--a--b", tmp);
	ok(!tf_hub_link(repo, c, "x.json", e), "a snapshot link is made");
	snprintf(path, sizeof path, "%s/snapshots/%s/x.json", repo, c);
	ok(link_is(path, to, strlen(to) + 1), "it is relative: ../../blobs/ETAG");
	ok(!tf_hub_link(repo, c, "a/b/y.json", e), "one in a folder too");
	snprintf(path, sizeof path, "%s/snapshots/%s/a/b/y.json", repo, c);
	ok(link_is(path, "../../../../blobs/", 18), "with one more ../ per folder");
	ok(!tf_hub_link(repo, c, "x.json", e), "linking again replaces the link");
	ok(!tf_hub_have_file(repo, c, "x.json"), "a link whose blob is missing is no file");

	ok(tf_hub_ref_read(repo, "main", commit) == 0, "a missing ref reads as absent");
	ok(!tf_hub_ref_write(repo, "refs/pr/1", c) && tf_hub_ref_read(repo, "refs/pr/1", commit) == 1 &&
	   !strcmp(commit, c), "a nested ref is written and read back");
	snprintf(path, sizeof path, "%s/refs/refs/pr/1", repo);
	if ((f = fopen(path, "rb"))) {
		fseek(f, 0, SEEK_END);
		size = ftell(f);
		fclose(f);
	}
	ok(size == 40, "a ref holds the bare commit, no newline");
}

static void digests(void)
{
	tf_sum s;
	char hex[65];

	ok(!tf_sum_init(&s, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", 3) &&
	   !tf_sum_add(&s, "ab", 2) && !tf_sum_add(&s, "c", 1) && !tf_sum_hex(&s, hex) &&
	   !strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
	   "sha256(\"abc\") in two pieces is the FIPS 180-2 value");
	ok(!tf_sum_init(&s, "ce013625030ba8dba906f756967f9e9ca394464a", 6) && !tf_sum_add(&s, "hello\n", 6) &&
	   !tf_sum_hex(&s, hex) && !strcmp(hex, "ce013625030ba8dba906f756967f9e9ca394464a"),
	   "a 40-hex etag means git's blob hash ('git hash-object' of hello)");
	ok(!tf_sum_init(&s, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391", 0) && !tf_sum_hex(&s, hex) &&
	   !strcmp(hex, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"), "the empty blob hashes as git's");
	ok(!tf_sum_init(&s, "ce013625030ba8dba906f756967f9e9ca394464a", 6) && !tf_sum_add(&s, "junk", 4) &&
	   !tf_sum_reset(&s, 6) && !tf_sum_add(&s, "hello\n", 6) && !tf_sum_hex(&s, hex) &&
	   !strcmp(hex, "ce013625030ba8dba906f756967f9e9ca394464a"), "a reset starts the hash over");
}

static void misc(void)
{
	char h[16];

	ok(!strcmp(tf_hub_human(0, h), "0B") && !strcmp(tf_hub_human(1023, h), "1023B") &&
	   !strcmp(tf_hub_human(1024, h), "1.0K") && !strcmp(tf_hub_human(13178128, h), "12.6M"),
	   "sizes for people");
	ok(str_is(tf_http_escape("refs/pr/1", 0), "refs%2Fpr%2F1") &&
	   str_is(tf_http_escape("a b/c#d?.json", 1), "a%20b/c%23d%3F.json"), "URL escaping");
}

int main(void)
{
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	names();
	etags();
	spec();
	folders();
	cache_dir();
	token();
	filters();
	links();
	digests();
	misc();
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
		if (system(cmd))
			diag("could not remove %s", tmp);
	}
	return done();
}
