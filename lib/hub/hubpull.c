/* hubpull.c: resolve a revision, download what is missing, link the snapshot */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "base/err.h"
#include "http.h"
#include "hub.h"
#include "hubprogress.h"
#include "hubpull.h"
#include "hubsum.h"

#define ATTEMPTS 3              /* tries without progress before giving up */
#define MAX_LISTING (64 << 20)  /* bytes of JSON we accept for a file list */
#define MAX_UNSIZED (50ull << 30) /* bytes of a file whose size the server did not say */

typedef struct {
	char *path;             /* in the repository */
	char etag[65];          /* from the listing, "" when it gave none */
	int64_t size;           /* from the listing, -1 when it gave none */
	char *err;              /* why it failed, NULL when it worked */
} pfile;

typedef struct {
	const tf_pull_opts *o;
	char *repo_dir, *endpoint, *token;
	char commit[41];
	tf_http_opts api, head, get;
	pfile *f;
	int nf, next, failed;
	pthread_mutex_t mu;
	tf_progress *prog;
} pull;

/* a name from a server, safe to print */
static const char *shown(const char *s, char buf[96])
{
	size_t i;

	for (i = 0; s[i] && i < 95; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	buf[i] = 0;
	return buf;
}

static long env_seconds(const char *name, long def)
{
	const char *v = getenv(name);
	char *end;
	double d;

	if (!v || !*v)
		return def;
	d = strtod(v, &end);
	return *end || d < 1 ? def : (long)d;
}

static int retryable(long status)
{
	return status == 408 || status == 429 || status >= 500;
}

/* " (RevisionNotFound)" and a hint, for an HTTP error */
static const char *why(const tf_http_resp *r, const pull *p, char buf[192])
{
	const char *hint = NULL;
	char code[96];

	if (r->status == 401 || r->status == 403)
		hint = p->token ? "the token was refused" : "a gated or private repository needs HF_TOKEN";
	if (r->error_code && *r->error_code)
		snprintf(buf, 192, " (%s%s%s)", shown(r->error_code, code), hint ? "; " : "",
			 hint ? hint : "");
	else if (hint)
		snprintf(buf, 192, " (%s)", hint);
	else
		buf[0] = 0;
	return buf;
}

/* ---- the revision and its file list ---- */

static int parse_listing(pull *p, const char *body, size_t len, const char *rev)
{
	const tf_pull_opts *o = p->o;
	json_error_t jerr;
	json_t *root = json_loadb(body, len, 0, &jerr), *sha, *sib;
	char b[96];
	size_t i;

	if (!root || !json_is_object(root)) {
		json_decref(root);
		return tf_err("cannot resolve '%s' for '%s': the answer is not a JSON object", rev,
			      o->repo);
	}
	sha = json_object_get(root, "sha");
	if (!json_is_string(sha) || !tf_hub_is_commit(json_string_value(sha))) {
		json_decref(root);
		return tf_err("cannot resolve '%s' for '%s': the answer holds no commit hash", rev,
			      o->repo);
	}
	memcpy(p->commit, json_string_value(sha), 41);
	sib = json_object_get(root, "siblings");
	if (!json_is_array(sib)) {
		json_decref(root);
		return tf_err("cannot resolve '%s' for '%s': the answer lists no files", rev, o->repo);
	}
	p->f = tf_calloc(json_array_size(sib) + 1, sizeof *p->f);
	for (i = 0; i < json_array_size(sib); i++) {
		json_t *e = json_array_get(sib, i), *name, *size, *lfs, *blob;
		const char *path;
		pfile *f;

		name = json_object_get(e, "rfilename");
		if (!json_is_string(name)) {
			json_decref(root);
			return tf_err("the file list of '%s' has an entry without a name", o->repo);
		}
		path = json_string_value(name);
		if (!tf_hub_valid_path(path) || strlen(path) != json_string_length(name)) {
			tf_err("the file list of '%s' names an unsafe path '%s'", o->repo, shown(path, b));
			json_decref(root);
			return -1;
		}
		if (!tf_hub_filter_match(&o->filter, path))
			continue;
		f = &p->f[p->nf++];
		f->path = tf_strdup(path);
		f->size = -1;
		size = json_object_get(e, "size");
		if (json_is_integer(size) && json_integer_value(size) >= 0)
			f->size = json_integer_value(size);
		/* the blob's name, so that a file already in the cache costs no
		 * request: the LFS sha256, else the git blob id */
		lfs = json_object_get(e, "lfs");
		blob = json_object_get(e, "blobId");
		if (json_is_object(lfs) && json_is_string(json_object_get(lfs, "sha256")) &&
		    tf_hub_valid_etag(json_string_value(json_object_get(lfs, "sha256"))))
			strcpy(f->etag, json_string_value(json_object_get(lfs, "sha256")));
		else if (!json_is_object(lfs) && json_is_string(blob) &&
			 tf_hub_valid_etag(json_string_value(blob)))
			strcpy(f->etag, json_string_value(blob));
	}
	json_decref(root);
	if (!p->nf)
		return tf_err("no file of '%s' at '%s' matches the include patterns", o->repo, rev);
	return 0;
}

/*
 * The most one request may take, so that a server trickling bytes just
 * fast enough not to count as stalled cannot hold a pull forever: the
 * user's --deadline, else a minute plus the bytes it should bring at
 * 256 KiB/s (a 5 GB file: about 5.5 hours).
 */
static long deadline(const tf_pull_opts *o, uint64_t bytes)
{
	return o->deadline_s > 0 ? o->deadline_s : 60 + (long)(bytes / (256 << 10));
}

static int resolve(pull *p, const char *rev)
{
	const tf_pull_opts *o = p->o;
	char *erev = tf_http_escape(rev, 0), *url, *body = NULL, hint[192];
	tf_http_resp r = { 0 };
	size_t len = 0;
	int ret = -1;

	url = tf_malloc(strlen(p->endpoint) + strlen(o->repo) + strlen(erev) + 64);
	sprintf(url, "%s/api/models/%s/revision/%s?blobs=true", p->endpoint, o->repo, erev);
	for (int attempt = 1;; attempt++) {
		int rc = tf_http_get_mem(url, &p->api, &r, &body, &len, MAX_LISTING);

		if (rc == TF_HTTP_OK && r.status == 200) {
			ret = parse_listing(p, body, len, rev);
			break;
		}
		if (rc == TF_HTTP_STOP) {
			tf_errpre("cannot resolve '%s' for '%s'", rev, o->repo);
			break;
		}
		if (attempt >= ATTEMPTS || (rc == TF_HTTP_OK && !retryable(r.status))) {
			if (rc == TF_HTTP_OK)
				tf_err("cannot resolve '%s' for '%s': HTTP %ld%s", rev, o->repo, r.status,
				       why(&r, p, hint));
			else
				tf_errpre("cannot resolve '%s' for '%s'", rev, o->repo);
			break;
		}
		free(body);
		body = NULL;
		tf_http_resp_free(&r);
		sleep(1u << (attempt - 1));
	}
	free(body);
	tf_http_resp_free(&r);
	free(url);
	free(erev);
	return ret;
}

/* ---- one blob ---- */

typedef struct {
	pull *p;
	pfile *f;
	int fd, slot;
	uint64_t have, start;   /* bytes on disk; where this request began */
	int64_t size;
	tf_sum *sum;            /* NULL: hash once the size is known */
	int first;
} sink;

static int restart(sink *k)
{
	if (ftruncate(k->fd, 0))
		return tf_err("cannot truncate the download of '%s':", k->f->path);
	tf_progress_rewind(k->p->prog, k->slot, k->have);
	k->have = 0;
	if (k->sum && tf_sum_reset(k->sum, k->size >= 0 ? (uint64_t)k->size : 0))
		return -1;
	return 0;
}

static int on_data(void *ctx, const tf_http_resp *r, const void *buf, size_t n)
{
	sink *k = ctx;
	const char *b = buf;

	if (k->first) {
		k->first = 0;
		if (r->status == 200 && k->start > 0) {
			/* the server ignored our Range: start over from byte 0 */
			if (restart(k))
				return -1;
		} else if (r->status == 206 && r->range_start != (int64_t)k->start)
			return tf_err("'%s': asked for bytes from %llu, the server sent them from %lld",
				      k->f->path, (unsigned long long)k->start, (long long)r->range_start);
		else if (r->status != 200 && r->status != 206)
			return tf_err("'%s': unexpected HTTP %ld", k->f->path, r->status);
	}
	if (k->size >= 0 && k->have + n > (uint64_t)k->size)
		return tf_err("'%s': the server sent more than the %lld bytes announced", k->f->path,
			      (long long)k->size);
	if (k->size < 0 && k->have + n > MAX_UNSIZED)
		return tf_err("'%s': the server sent more than %llu bytes without saying the size",
			      k->f->path, MAX_UNSIZED);
	while (n) {
		ssize_t w = pwrite(k->fd, b, n, k->have);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return tf_err("cannot write the download of '%s':", k->f->path);
		}
		if (k->sum && tf_sum_add(k->sum, b, w))
			return -1;
		tf_progress_add(k->p->prog, k->slot, w);
		k->have += w;
		b += w;
		n -= w;
	}
	return 0;
}

/* feeds bytes [0, n) of fd to the digest */
static int hash_file(int fd, uint64_t n, tf_sum *sum, const char *name)
{
	static const size_t bufsz = 1 << 20;
	char *buf = tf_malloc(bufsz);
	uint64_t off = 0;

	while (off < n) {
		size_t want = n - off < bufsz ? n - off : bufsz;
		ssize_t got = pread(fd, buf, want, off);

		if (got <= 0) {
			if (got < 0 && errno == EINTR)
				continue;
			free(buf);
			return got < 0 ? tf_err("cannot read '%s':", name) :
			       tf_err("'%s' shrank while it was read", name);
		}
		tf_sum_add(sum, buf, got);
		off += got;
	}
	free(buf);
	return 0;
}

/* downloads url into blobs/ETAG through blobs/ETAG.incomplete; called
 * with the blob's lock held */
/* fetches the rest of f from url into k's file (inc) until it holds size
 * bytes, or the server's all of it when size < 0: ranges from what is
 * there, a fresh start when the server knows no such prefix, a few tries
 * with backoff when a transfer moves nothing */
static int transfer(pull *p, pfile *f, sink *k, const char *url, const char *inc, int64_t size)
{
	char hint[192];
	int tries = 0;

	while (size < 0 || k->have < (uint64_t)size) {
		tf_http_resp r = { 0 };
		int got;

		k->start = k->have;
		k->first = 1;
		tf_http_opts get = p->get;
		get.timeout_s = deadline(p->o, size >= 0 ? (uint64_t)size - k->have : 0);
		got = tf_http_get(url, &get, k->have, &r, on_data, k);
		if (got == TF_HTTP_OK && r.status == 416 && k->have > 0) {
			/* the partial file is no prefix the server knows: start over */
			tf_http_resp_free(&r);
			if (restart(k))
				return -1;
			if (++tries >= ATTEMPTS) {
				tf_err("cannot fetch '%s': the server refuses every range", f->path);
				return -1;
			}
			continue;
		}
		if (got == TF_HTTP_STOP) {
			tf_http_resp_free(&r);
			/* what is on disk cannot be trusted any more */
			unlink(inc);
			return -1;
		}
		if (got == TF_HTTP_OK && r.status >= 200 && r.status < 300 &&
		    (size < 0 || k->have == (uint64_t)size)) {
			tf_http_resp_free(&r);
			return 0;
		}
		if (got == TF_HTTP_OK && r.status >= 200 && r.status < 300)
			tf_err("'%s': the transfer ended after %llu of %lld bytes", f->path,
			       (unsigned long long)k->have, (long long)size);
		else if (got == TF_HTTP_OK) {
			tf_err("cannot fetch '%s' of '%s': HTTP %ld%s", f->path, p->o->repo, r.status,
			       why(&r, p, hint));
			if (!retryable(r.status)) {
				tf_http_resp_free(&r);
				return -1;
			}
		}
		tf_http_resp_free(&r);
		/* a transfer that moved forward earns another go at once */
		if (k->have > k->start)
			continue;
		if (++tries >= ATTEMPTS) {
			if (k->have) {
				char why[512];

				snprintf(why, sizeof why, "%s", tf_errmsg());
				tf_err("%s; %llu bytes kept in '%s' for the next run", why,
				       (unsigned long long)k->have, inc);
			}
			return -1;
		}
		sleep(1u << (tries - 1));
	}
	return 0;
}

/* checks k's file (inc) against etag and moves it to blob */
static int finish(sink *k, tf_sum *sum, pfile *f, const char *etag, const char *inc, const char *blob)
{
	char hex[65];

	if (!k->sum) {
		if (tf_sum_init(sum, etag, k->have) || hash_file(k->fd, k->have, sum, inc))
			return -1;
		k->sum = sum;
	}
	if (tf_sum_hex(sum, hex))
		return -1;
	k->sum = NULL;
	if (strcmp(hex, etag)) {
		unlink(inc);
		tf_err("checksum mismatch for '%s': expected %s %s, got %s; the download was deleted",
		       f->path, strlen(etag) == 64 ? "sha256" : "git sha1", etag, hex);
		return -1;
	}
	if (close(k->fd)) {
		k->fd = -1;
		tf_err("cannot write '%s':", inc);
		return -1;
	}
	k->fd = -1;
	if (rename(inc, blob)) {
		tf_err("cannot rename '%s' to '%s':", inc, blob);
		return -1;
	}
	return 0;
}

static int download(pull *p, pfile *f, const char *url, const char *etag, int64_t size)
{
	char *inc, *blob;
	tf_sum sum = { 0 };
	sink k = { .p = p, .f = f, .size = size, .slot = -1 };
	struct stat st;
	int rc = -1;

	inc = tf_malloc(strlen(p->repo_dir) + 96);
	blob = tf_malloc(strlen(p->repo_dir) + 96);
	sprintf(inc, "%s/blobs/%s.incomplete", p->repo_dir, etag);
	sprintf(blob, "%s/blobs/%s", p->repo_dir, etag);
	k.fd = open(inc, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (k.fd < 0 || fstat(k.fd, &st)) {
		tf_err("cannot open '%s':", inc);
		goto out;
	}
	k.have = st.st_size;
	if (size >= 0 && k.have > (uint64_t)size) {
		if (ftruncate(k.fd, 0)) {
			tf_err("cannot truncate '%s':", inc);
			goto out;
		}
		k.have = 0;
	}
	/* a git blob hash needs the size first; without one, hash at the end */
	if (size >= 0 || strlen(etag) == 64) {
		if (tf_sum_init(&sum, etag, size >= 0 ? size : 0))
			goto out;
		k.sum = &sum;
		if (k.have && hash_file(k.fd, k.have, &sum, inc))
			goto out;
	}
	k.slot = tf_progress_start(p->prog, f->path, size >= 0 ? size : 0, k.have);

	if (transfer(p, f, &k, url, inc, size) < 0 || finish(&k, &sum, f, etag, inc, blob) < 0)
		goto out;
	rc = 0;
out:
	if (k.sum)
		tf_sum_free(k.sum);
	if (k.fd >= 0)
		close(k.fd);
	/* a failed download keeps what it got for the next run, but not an
	 * empty file: there is nothing to resume */
	if (rc && k.fd >= 0 && !k.have)
		unlink(inc);
	tf_progress_done(p->prog, k.slot);
	free(inc);
	free(blob);
	return rc;
}

/* HEAD the file at the commit: its etag, size and the URL to GET */
static int head(pull *p, pfile *f, char etag[65], int64_t *size, char **url)
{
	char *epath = tf_http_escape(f->path, 1), *u, hint[192], b[96];
	tf_http_resp r = { 0 };
	int rc = -1;

	u = tf_malloc(strlen(p->endpoint) + strlen(p->o->repo) + strlen(epath) + 64);
	sprintf(u, "%s/%s/resolve/%s/%s", p->endpoint, p->o->repo, p->commit, epath);
	free(epath);
	for (int attempt = 1;; attempt++) {
		int got = tf_http_head(u, &p->head, &r);

		if (got == TF_HTTP_OK && (r.status / 100 == 2 || (r.status / 100 == 3 && r.location)))
			break;
		if (attempt >= ATTEMPTS || (got == TF_HTTP_OK && !retryable(r.status))) {
			if (got == TF_HTTP_OK)
				tf_err("cannot fetch '%s' of '%s': HTTP %ld%s", f->path, p->o->repo,
				       r.status, why(&r, p, hint));
			else
				tf_errpre("cannot fetch '%s' of '%s'", f->path, p->o->repo);
			goto out;
		}
		tf_http_resp_free(&r);
		sleep(1u << (attempt - 1));
	}
	if (r.commit && strcmp(r.commit, p->commit)) {
		tf_err("'%s': the server answered for commit '%s', not '%s'", f->path,
		       shown(r.commit, b), p->commit);
		goto out;
	}
	/* an LFS file names its blob by X-Linked-Etag (the sha256); a redirect's
	 * own ETag and Content-Length describe the redirect, not the file */
	if (tf_hub_norm_etag(r.linked_etag ? r.linked_etag : r.etag ? r.etag : "", etag)) {
		tf_err("'%s': the server sent no usable ETag ('%s')", f->path,
		       shown(r.linked_etag ? r.linked_etag : r.etag ? r.etag : "", b));
		goto out;
	}
	*size = r.linked_size >= 0 ? r.linked_size : r.status / 100 == 2 ? r.length : -1;
	/* GET the resolve URL (after renames) and let libcurl follow the
	 * redirect, so the token never travels to another host */
	*url = tf_strdup(r.url);
	rc = 0;
out:
	tf_http_resp_free(&r);
	free(u);
	return rc;
}

static int fetch(pull *p, pfile *f)
{
	char etag[65], *url = NULL;
	int64_t size;
	int lock, rc;

	if (tf_hub_have_file(p->repo_dir, p->commit, f->path)) {
		tf_progress_skip(p->prog, f->size > 0 ? f->size : 0);
		return 0;
	}
	if (f->etag[0] && tf_hub_have_blob(p->repo_dir, f->etag)) {
		tf_progress_skip(p->prog, f->size > 0 ? f->size : 0);
		return tf_hub_link(p->repo_dir, p->commit, f->path, f->etag);
	}
	if (head(p, f, etag, &size, &url))
		return -1;
	if ((lock = tf_hub_lock(p->o->cache, p->o->repo, etag)) < 0) {
		free(url);
		return -1;
	}
	/* another process may have finished it while we waited */
	if (tf_hub_have_blob(p->repo_dir, etag)) {
		tf_progress_skip(p->prog, size > 0 ? size : 0);
		rc = 0;
	} else
		rc = download(p, f, url, etag, size);
	tf_hub_unlock(lock);
	free(url);
	if (!rc)
		rc = tf_hub_link(p->repo_dir, p->commit, f->path, etag);
	return rc;
}

static void *worker(void *arg)
{
	pull *p = arg;

	for (;;) {
		pfile *f;

		pthread_mutex_lock(&p->mu);
		if (p->failed || p->next >= p->nf) {
			pthread_mutex_unlock(&p->mu);
			return NULL;
		}
		f = &p->f[p->next++];
		pthread_mutex_unlock(&p->mu);
		if (fetch(p, f)) {
			f->err = tf_strdup(tf_errmsg());
			pthread_mutex_lock(&p->mu);
			p->failed = 1;
			pthread_mutex_unlock(&p->mu);
		}
	}
}

static int fetch_all(pull *p)
{
	int n = p->o->jobs < 1 ? 1 : p->o->jobs;
	pthread_t *tid;
	int started = 0;
	uint64_t total = 0;

	if (n > p->nf)
		n = p->nf;
	for (int i = 0; i < p->nf; i++)
		total += p->f[i].size > 0 ? p->f[i].size : 0;
	p->prog = tf_progress_new(p->o->progress, n, p->nf, total);
	tid = tf_calloc(n, sizeof *tid);
	for (int i = 1; i < n; i++)
		if (!pthread_create(&tid[i], NULL, worker, p))
			started = i;
		else
			break;
	worker(p);
	for (int i = 1; i <= started; i++)
		pthread_join(tid[i], NULL);
	free(tid);
	tf_progress_free(p->prog);
	p->prog = NULL;
	for (int i = 0; i < p->nf; i++)
		if (p->f[i].err)
			return tf_err("%s", p->f[i].err);
	return 0;
}

/* ---- offline ---- */

/* counts the files of a snapshot folder the filter takes; -1 if one of
 * them has no blob */
static int scan_snapshot(const char *root, const char *rel, const tf_hub_filter *flt, int depth)
{
	char *dir = tf_malloc(strlen(root) + strlen(rel) + 2);
	struct dirent *d;
	DIR *dh;
	int count = 0;

	sprintf(dir, "%s%s%s", root, *rel ? "/" : "", rel);
	if (depth > 64 || !(dh = opendir(dir))) {
		tf_err("cannot read '%s':", dir);
		free(dir);
		return -1;
	}
	while ((d = readdir(dh))) {
		char *sub, *full;
		struct stat st;

		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		sub = tf_malloc(strlen(rel) + strlen(d->d_name) + 2);
		sprintf(sub, "%s%s%s", rel, *rel ? "/" : "", d->d_name);
		full = tf_malloc(strlen(root) + strlen(sub) + 2);
		sprintf(full, "%s/%s", root, sub);
		if (!lstat(full, &st) && S_ISDIR(st.st_mode)) {
			int n = scan_snapshot(root, sub, flt, depth + 1);

			if (n < 0)
				count = -1;
			else if (count >= 0)
				count += n;
		} else if (tf_hub_filter_match(flt, sub)) {
			if (stat(full, &st) || !S_ISREG(st.st_mode)) {
				tf_err("'%s' is in the cached snapshot but its blob is missing", sub);
				count = -1;
			} else
				count++;
		}
		free(sub);
		free(full);
		if (count < 0)
			break;
	}
	closedir(dh);
	free(dir);
	return count;
}

static int offline(const tf_pull_opts *o, const char *rev, const char *repo_dir, char **snapshot)
{
	char commit[41], *snap;
	struct stat st;
	int n;

	if (stat(repo_dir, &st))
		return tf_err("'%s' is not in the cache '%s' (offline)", o->repo, o->cache);
	snap = tf_malloc(strlen(repo_dir) + strlen(rev) + 64);
	sprintf(snap, "%s/snapshots/%s", repo_dir, rev);
	if (tf_hub_is_commit(rev) && !stat(snap, &st) && S_ISDIR(st.st_mode)) {
		memcpy(commit, rev, 41);
	} else {
		n = tf_hub_ref_read(repo_dir, rev, commit);
		if (n <= 0) {
			free(snap);
			return n < 0 ? -1 : tf_err("revision '%s' of '%s' is not in the cache (offline)",
						  rev, o->repo);
		}
		sprintf(snap, "%s/snapshots/%s", repo_dir, commit);
		if (stat(snap, &st) || !S_ISDIR(st.st_mode)) {
			tf_err("'%s' of '%s' points at commit %s, which has no snapshot (offline)",
			       rev, o->repo, commit);
			free(snap);
			return -1;
		}
	}
	n = scan_snapshot(snap, "", &o->filter, 0);
	if (n <= 0) {
		if (n == 0)
			tf_err("no cached file of '%s' at '%s' matches the include patterns (offline)",
			       o->repo, rev);
		else
			tf_errpre("'%s' at '%s' (offline)", o->repo, rev);
		free(snap);
		return -1;
	}
	*snapshot = snap;
	return 0;
}

int tf_hub_pull(const tf_pull_opts *o, char **snapshot)
{
	const char *rev = o->rev ? o->rev : "main";
	pull p = { .o = o };
	char *token = NULL;
	int rc = -1;

	*snapshot = NULL;
	if (!tf_hub_valid_repo(o->repo))
		return tf_err("invalid repository id '%s' (want ORG/NAME)", o->repo);
	if (!tf_hub_valid_rev(rev))
		return tf_err("invalid revision '%s'", rev);
	p.repo_dir = tf_hub_repo_dir(o->cache, o->repo);
	if (o->offline) {
		rc = offline(o, rev, p.repo_dir, snapshot);
		free(p.repo_dir);
		return rc;
	}
	if (tf_hub_token(&token) || tf_http_init()) {
		free(p.repo_dir);
		return -1;
	}
	p.token = token;
	p.endpoint = tf_hub_endpoint();
	p.api.token = p.head.token = p.get.token = token;
	p.api.stall_s = p.head.stall_s = env_seconds("HF_HUB_ETAG_TIMEOUT", 10);
	p.api.timeout_s = deadline(o, MAX_LISTING);
	p.head.timeout_s = p.head.stall_s;
	p.get.stall_s = env_seconds("HF_HUB_DOWNLOAD_TIMEOUT", 10);
	pthread_mutex_init(&p.mu, NULL);

	if (resolve(&p, rev))
		goto out;
	if (tf_hub_cache_init(o->cache))
		goto out;
	{
		char *blobs = tf_malloc(strlen(p.repo_dir) + 8);

		sprintf(blobs, "%s/blobs", p.repo_dir);
		rc = tf_hub_mkdirs(blobs);
		free(blobs);
		if (rc)
			goto out;
		rc = -1;
	}
	if (fetch_all(&p))
		goto out;
	/* the ref moves only once its snapshot is whole */
	if (strcmp(rev, p.commit) && tf_hub_ref_write(p.repo_dir, rev, p.commit))
		goto out;
	*snapshot = tf_malloc(strlen(p.repo_dir) + 64);
	sprintf(*snapshot, "%s/snapshots/%s", p.repo_dir, p.commit);
	rc = 0;
out:
	for (int i = 0; i < p.nf; i++) {
		free(p.f[i].path);
		free(p.f[i].err);
	}
	free(p.f);
	free(p.repo_dir);
	free(p.endpoint);
	free(token);
	pthread_mutex_destroy(&p.mu);
	return rc;
}
