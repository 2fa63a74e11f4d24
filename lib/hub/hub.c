/* hub.c: paths, names, refs, snapshot links and locks of the hub cache */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "hub.h"

/* mlx-lm and llama.cpp need no more than these to load a model */
const char *const tf_hub_default_include[] = {
	"*.json", "*.safetensors", "tokenizer*", "*.txt", "*.jinja", NULL
};

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

static char *cat(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	char *s = tf_malloc(na + nb + 1);

	memcpy(s, a, na);
	memcpy(s + na, b, nb + 1);
	return s;
}

/* "~/x" -> "$HOME/x", as huggingface_hub's expanduser does */
static char *expand(const char *path, const char *tail)
{
	const char *home = env("HOME");
	char *base, *s;

	if (path[0] == '~' && (path[1] == '/' || !path[1]) && home)
		base = cat(home, path + 1);
	else
		base = tf_strdup(path);
	s = cat(base, tail);
	free(base);
	return s;
}

char *tf_hub_cache_dir(const char *override)
{
	const char *v;
	struct passwd *pw;

	if (override && *override)
		return expand(override, "");
	if ((v = env("HF_HUB_CACHE")) || (v = env("HUGGINGFACE_HUB_CACHE")))
		return expand(v, "");
	if ((v = env("HF_HOME")))
		return expand(v, "/hub");
	if ((v = env("XDG_CACHE_HOME")))
		return expand(v, "/huggingface/hub");
	if ((v = env("HOME")))
		return cat(v, "/.cache/huggingface/hub");
	if ((pw = getpwuid(getuid())) && pw->pw_dir)
		return cat(pw->pw_dir, "/.cache/huggingface/hub");
	tf_err("cannot find the hub cache: set HF_HUB_CACHE or HOME");
	return NULL;
}

static char *hf_home(void)
{
	const char *v;

	if ((v = env("HF_HOME")))
		return expand(v, "");
	if ((v = env("XDG_CACHE_HOME")))
		return expand(v, "/huggingface");
	if ((v = env("HOME")))
		return cat(v, "/.cache/huggingface");
	return NULL;
}

char *tf_hub_endpoint(void)
{
	const char *v = env("HF_ENDPOINT");
	char *s = tf_strdup(v ? v : "https://huggingface.co");
	size_t n = strlen(s);

	while (n > 0 && s[n - 1] == '/')
		s[--n] = 0;
	return s;
}

int tf_hub_env_true(const char *name)
{
	const char *v = env(name);

	return v && (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") ||
		     !strcasecmp(v, "on"));
}

int tf_hub_offline(void)
{
	return tf_hub_env_true("HF_HUB_OFFLINE") || tf_hub_env_true("TRANSFORMERS_OFFLINE");
}

/* a token goes into an HTTP header: printable ASCII without blanks only */
static int check_token(char *t, const char *from, char **tok)
{
	size_t n = strlen(t);

	while (n && isspace((unsigned char)t[n - 1]))
		t[--n] = 0;
	while (*t && isspace((unsigned char)*t))
		memmove(t, t + 1, n--);
	for (size_t i = 0; i < n; i++)
		if (t[i] < 0x21 || t[i] > 0x7e) {
			free(t);
			return tf_err("the token in %s holds a character that cannot be sent", from);
		}
	if (!n) {
		free(t);
		t = NULL;
	}
	*tok = t;
	return 0;
}

int tf_hub_token(char **tok)
{
	const char *v;
	char *path, buf[4096];
	size_t n;
	FILE *f;

	*tok = NULL;
	if ((v = env("HF_TOKEN")))
		return check_token(tf_strdup(v), "HF_TOKEN", tok);
	if ((v = env("HUGGING_FACE_HUB_TOKEN")))
		return check_token(tf_strdup(v), "HUGGING_FACE_HUB_TOKEN", tok);
	if ((v = env("HF_TOKEN_PATH")))
		path = expand(v, "");
	else {
		char *home = hf_home();

		if (!home)
			return 0;
		path = cat(home, "/token");
		free(home);
	}
	f = fopen(path, "r");
	if (!f) {
		free(path);
		return 0;
	}
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	if (check_token(tf_strdup(buf), path, tok) < 0) {
		free(path);
		return -1;
	}
	free(path);
	return 0;
}

static int word_char(int c)
{
	return isalnum(c) || c == '_';
}

static int valid_repo_part(const char *s, size_t n)
{
	if (n < 1 || n > 96 || !word_char((unsigned char)s[0]) || !word_char((unsigned char)s[n - 1]))
		return 0;
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i];

		if (!word_char(c) && c != '-' && c != '.')
			return 0;
		if (i && (c == '-' || c == '.') && s[i - 1] == c)
			return 0;       /* "--" is the folder separator, ".." climbs */
	}
	return 1;
}

int tf_hub_valid_repo(const char *id)
{
	const char *slash = strchr(id, '/');

	return slash && valid_repo_part(id, slash - id) && valid_repo_part(slash + 1, strlen(slash + 1));
}

int tf_hub_valid_rev(const char *rev)
{
	size_t n = strlen(rev);
	const char *p = rev;

	if (n < 1 || n > 255)
		return 0;
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)rev[i];

		if (!isalnum(c) && c != '-' && c != '_' && c != '.' && c != '/')
			return 0;
	}
	/* each part non-empty and not starting with '.' (git's ref rules) */
	for (;;) {
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (!len || p[0] == '.')
			return 0;
		if (!e)
			break;
		p = e + 1;
	}
	return strstr(rev, "..") == NULL;
}

int tf_hub_valid_path(const char *path)
{
	size_t n = strlen(path);
	const char *p = path;

	if (n < 1 || n > 1024)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = path[i];

		if (c < 0x20 || c == 0x7f || c == '\\')
			return 0;
	}
	for (;;) {
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (!len || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		if (!e)
			return 1;
		p = e + 1;
	}
}

static int is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]) && !(s[i] >= 'a' && s[i] <= 'f'))
			return 0;
	return s[n] == 0;
}

int tf_hub_is_commit(const char *s)
{
	return strlen(s) == 40 && is_hex(s, 40);
}

int tf_hub_valid_etag(const char *s)
{
	size_t n = strlen(s);

	return (n == 40 || n == 64) && is_hex(s, n);
}

int tf_hub_norm_etag(const char *raw, char out[65])
{
	size_t n;

	if (!strncmp(raw, "W/", 2))
		raw += 2;
	if (*raw == '"')
		raw++;
	n = strcspn(raw, "\"");
	if (n != 40 && n != 64)
		return -1;
	for (size_t i = 0; i < n; i++)
		out[i] = tolower((unsigned char)raw[i]);
	out[n] = 0;
	return tf_hub_valid_etag(out) ? 0 : -1;
}

int tf_hub_parse_spec(const char *spec, char **repo, char **rev)
{
	const char *at = strchr(spec, '@');

	*repo = *rev = NULL;
	if (at) {
		*repo = strndup(spec, at - spec);
		*rev = tf_strdup(at + 1);
		if (!*repo)
			tf_die("out of memory");
	} else
		*repo = tf_strdup(spec);
	if (!tf_hub_valid_repo(*repo))
		tf_err("invalid repository id '%s' (want ORG/NAME)", *repo);
	else if (*rev && !tf_hub_valid_rev(*rev))
		tf_err("invalid revision '%s'", *rev);
	else
		return 0;
	free(*repo);
	free(*rev);
	*repo = *rev = NULL;
	return -1;
}

char *tf_hub_repo_dir(const char *cache, const char *repo)
{
	size_t n = strlen(cache) + strlen(repo) + 16;
	char *s = tf_malloc(n), *p;

	p = s + sprintf(s, "%s/models--", cache);
	for (const char *q = repo; *q; q++)
		if (*q == '/')
			p += sprintf(p, "--");
		else
			*p++ = *q;
	*p = 0;
	return s;
}

char *tf_hub_repo_from_folder(const char *folder)
{
	char *id, *sep;

	if (strncmp(folder, "models--", 8))
		return NULL;
	id = tf_strdup(folder + 8);
	if ((sep = strstr(id, "--"))) {
		*sep = '/';
		memmove(sep + 1, sep + 2, strlen(sep + 2) + 1);
	}
	/* old repositories without an owner ("gpt2") are still listed */
	if (!(sep ? tf_hub_valid_repo(id) : valid_repo_part(id, strlen(id)))) {
		free(id);
		return NULL;
	}
	return id;
}

int tf_hub_mkdirs(const char *path)
{
	char *p = tf_strdup(path);
	struct stat st;

	for (char *s = p + 1;; s++) {
		int end = !*s;

		if (*s != '/' && !end)
			continue;
		*s = 0;
		if (mkdir(p, 0777) && errno != EEXIST) {
			tf_err("cannot create '%s':", p);
			free(p);
			return -1;
		}
		if (end)
			break;
		*s = '/';
	}
	if (stat(p, &st) || !S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		tf_err("cannot use '%s':", p);
		free(p);
		return -1;
	}
	free(p);
	return 0;
}

/* a temporary name unique to this process and thread, beside path */
static char *tmp_name(const char *path)
{
	static _Thread_local unsigned seq;
	char *s = tf_malloc(strlen(path) + 64);

	sprintf(s, "%s.tmp.%ld.%lx.%u", path, (long)getpid(), (unsigned long)(uintptr_t)&seq, seq++);
	return s;
}

/* writes data to path through a temporary file and rename */
static int write_atomic(const char *path, const char *data)
{
	char *tmp = tmp_name(path);
	size_t n = strlen(data);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);

	if (fd < 0) {
		tf_err("cannot create '%s':", tmp);
		free(tmp);
		return -1;
	}
	if (write(fd, data, n) != (ssize_t)n || close(fd)) {
		tf_err("cannot write '%s':", tmp);
		unlink(tmp);
		free(tmp);
		return -1;
	}
	if (rename(tmp, path)) {
		tf_err("cannot rename '%s' to '%s':", tmp, path);
		unlink(tmp);
		free(tmp);
		return -1;
	}
	free(tmp);
	return 0;
}

int tf_hub_cache_init(const char *cache)
{
	char *tag;
	int rc = 0;

	if (tf_hub_mkdirs(cache))
		return -1;
	tag = cat(cache, "/CACHEDIR.TAG");
	if (access(tag, F_OK))
		rc = write_atomic(tag, "Signature: 8a477f597d28d172789f06886806bc55\n"
				  "# This file is a cache directory tag created by tf-pull.\n"
				  "# For information about cache directory tags, see:\n"
				  "#\thttp://www.brynosaurus.com/cachedir/\n");
	free(tag);
	return rc;
}

static char *ref_path(const char *repo_dir, const char *rev)
{
	char *s = tf_malloc(strlen(repo_dir) + strlen(rev) + 8);

	sprintf(s, "%s/refs/%s", repo_dir, rev);
	return s;
}

int tf_hub_ref_read(const char *repo_dir, const char *rev, char commit[41])
{
	char *path = ref_path(repo_dir, rev), buf[80];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0) {
		int absent = errno == ENOENT || errno == ENOTDIR;

		if (!absent)
			tf_err("cannot open '%s':", path);
		free(path);
		return absent ? 0 : -1;
	}
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n < 0) {
		tf_err("cannot read '%s':", path);
		free(path);
		return -1;
	}
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		n--;
	buf[n] = 0;
	if (!tf_hub_is_commit(buf)) {
		tf_err("'%s' does not hold a commit hash", path);
		free(path);
		return -1;
	}
	memcpy(commit, buf, 41);
	free(path);
	return 1;
}

int tf_hub_ref_write(const char *repo_dir, const char *rev, const char *commit)
{
	char *path = ref_path(repo_dir, rev), *slash;
	int rc;

	slash = strrchr(path, '/');
	*slash = 0;
	rc = tf_hub_mkdirs(path);
	*slash = '/';
	if (!rc)
		rc = write_atomic(path, commit);
	free(path);
	return rc;
}

static char *snap_path(const char *repo_dir, const char *commit, const char *path)
{
	char *s = tf_malloc(strlen(repo_dir) + strlen(commit) + strlen(path) + 16);

	sprintf(s, "%s/snapshots/%s/%s", repo_dir, commit, path);
	return s;
}

int tf_hub_link(const char *repo_dir, const char *commit, const char *path, const char *etag)
{
	char *full = snap_path(repo_dir, commit, path), *target, *tmp, *slash, *t;
	int depth = 2;

	for (const char *p = path; *p; p++)
		depth += *p == '/';
	target = t = tf_malloc(3 * depth + strlen(etag) + 8);
	for (int i = 0; i < depth; i++)
		t += sprintf(t, "../");
	sprintf(t, "blobs/%s", etag);

	slash = strrchr(full, '/');
	*slash = 0;
	if (tf_hub_mkdirs(full)) {
		free(full);
		free(target);
		return -1;
	}
	*slash = '/';
	/* symlink under a private name, then rename over: a reader sees the old
	 * link or the new one, never none, and two writers do not collide */
	tmp = tmp_name(full);
	if (symlink(target, tmp)) {
		tf_err("cannot create the link '%s':", tmp);
	} else if (rename(tmp, full)) {
		tf_err("cannot rename '%s' to '%s':", tmp, full);
		unlink(tmp);
	} else {
		free(tmp);
		free(full);
		free(target);
		return 0;
	}
	free(tmp);
	free(full);
	free(target);
	return -1;
}

int tf_hub_have_file(const char *repo_dir, const char *commit, const char *path)
{
	char *full = snap_path(repo_dir, commit, path);
	struct stat st;
	int ok = !stat(full, &st) && S_ISREG(st.st_mode);

	free(full);
	return ok;
}

int tf_hub_have_blob(const char *repo_dir, const char *etag)
{
	char *full = tf_malloc(strlen(repo_dir) + strlen(etag) + 8);
	struct stat st;
	int ok;

	sprintf(full, "%s/blobs/%s", repo_dir, etag);
	ok = !stat(full, &st) && S_ISREG(st.st_mode);
	free(full);
	return ok;
}

int tf_hub_lock(const char *cache, const char *repo, const char *name)
{
	char *dir = tf_hub_repo_dir(cache, repo), *locks, *path;
	const char *folder = strrchr(dir, '/') + 1;
	int fd;

	locks = tf_malloc(strlen(cache) + strlen(folder) + 16);
	sprintf(locks, "%s/.locks/%s", cache, folder);
	free(dir);
	if (tf_hub_mkdirs(locks)) {
		free(locks);
		return -1;
	}
	path = tf_malloc(strlen(locks) + strlen(name) + 8);
	sprintf(path, "%s/%s.lock", locks, name);
	free(locks);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0) {
		tf_err("cannot open the lock '%s':", path);
		free(path);
		return -1;
	}
	/* flock locks belong to the open file description, so two threads of
	 * one process exclude each other as two processes do */
	while (flock(fd, LOCK_EX)) {
		if (errno != EINTR) {
			tf_err("cannot lock '%s':", path);
			close(fd);
			free(path);
			return -1;
		}
	}
	free(path);
	return fd;
}

void tf_hub_unlock(int fd)
{
	if (fd >= 0)
		close(fd);      /* closing drops the flock */
}

static int match(const char *pat, const char *path)
{
	size_t n = strlen(pat);
	const char *base = strrchr(path, '/');
	int hit;

	if (n && pat[n - 1] == '/') {
		char *p = tf_malloc(n + 2);

		sprintf(p, "%s*", pat);
		hit = !fnmatch(p, path, 0);
		free(p);
		return hit;
	}
	if (!fnmatch(pat, path, 0))
		return 1;
	/* a pattern without a slash also matches the base name */
	return base && !strchr(pat, '/') && !fnmatch(pat, base + 1, 0);
}

int tf_hub_filter_match(const tf_hub_filter *f, const char *path)
{
	const char *const *inc = f && f->include ? f->include : tf_hub_default_include;
	int ninc = f && f->include ? f->ninclude : -1;
	int hit = 0;

	for (int i = 0; ninc < 0 ? inc[i] != NULL : i < ninc; i++)
		if (match(inc[i], path)) {
			hit = 1;
			break;
		}
	for (int i = 0; hit && f && i < f->nexclude; i++)
		if (match(f->exclude[i], path))
			hit = 0;
	return hit;
}

const char *tf_hub_human(uint64_t bytes, char buf[16])
{
	static const char unit[] = "KMGTPE";
	double v = bytes;
	int u = -1;

	if (bytes < 1024) {
		snprintf(buf, 16, "%lluB", (unsigned long long)bytes);
		return buf;
	}
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	snprintf(buf, 16, "%.1f%c", v, unit[u]);
	return buf;
}
