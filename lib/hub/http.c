/* http.c: HEAD and GET with libcurl, reading the hub's headers */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "base/err.h"
#include "http.h"

#define MAX_HOPS 10

static pthread_once_t once = PTHREAD_ONCE_INIT;
static CURLcode init_rc;

static void global_init(void)
{
	init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int tf_http_init(void)
{
	pthread_once(&once, global_init);
	if (init_rc != CURLE_OK)
		return tf_err("cannot start libcurl: %s", curl_easy_strerror(init_rc));
	return 0;
}

void tf_http_resp_free(tf_http_resp *r)
{
	free(r->url);
	free(r->location);
	free(r->commit);
	free(r->etag);
	free(r->linked_etag);
	free(r->error_code);
	memset(r, 0, sizeof *r);
	r->linked_size = r->length = r->range_start = r->range_total = -1;
}

/* a fresh response, forgetting the headers of an earlier one (a redirect) */
static void resp_reset(tf_http_resp *r)
{
	char *url = r->url;

	r->url = NULL;
	tf_http_resp_free(r);
	r->url = url;
}

static int64_t parse_size(const char *v)
{
	char *end;
	long long n;

	if (!isdigit((unsigned char)*v))
		return -1;
	n = strtoll(v, &end, 10);
	return *end || n < 0 ? -1 : n;
}

typedef struct {
	tf_http_resp *r;
	tf_http_body_fn fn;
	void *ctx;
	int stopped;
	/* in-memory bodies */
	char *buf;
	size_t len, max;
	int too_big;
} xfer;

static size_t on_header(char *line, size_t size, size_t n, void *arg)
{
	xfer *x = arg;
	tf_http_resp *r = x->r;
	size_t len = size * n, klen;
	char *colon, *v, **slot = NULL;
	char tmp[8192];

	if (len >= sizeof tmp)
		return len;     /* no header we read is this long */
	memcpy(tmp, line, len);
	while (len && (tmp[len - 1] == '\n' || tmp[len - 1] == '\r'))
		len--;
	tmp[len] = 0;
	if (!strncmp(tmp, "HTTP/", 5)) {
		const char *sp = strchr(tmp, ' ');

		resp_reset(r);
		r->status = sp ? strtol(sp + 1, NULL, 10) : 0;
		return size * n;
	}
	if (!(colon = strchr(tmp, ':')))
		return size * n;
	klen = colon - tmp;
	v = colon + 1;
	while (*v == ' ' || *v == '\t')
		v++;
	for (char *e = v + strlen(v); e > v && (e[-1] == ' ' || e[-1] == '\t'); )
		*--e = 0;
#define IS(name) (klen == sizeof(name) - 1 && !strncasecmp(tmp, name, klen))
	if (IS("X-Repo-Commit"))
		slot = &r->commit;
	else if (IS("ETag"))
		slot = &r->etag;
	else if (IS("X-Linked-Etag"))
		slot = &r->linked_etag;
	else if (IS("X-Error-Code"))
		slot = &r->error_code;
	else if (IS("Location"))
		slot = &r->location;
	else if (IS("X-Linked-Size"))
		r->linked_size = parse_size(v);
	else if (IS("Content-Length"))
		r->length = parse_size(v);
	else if (IS("Content-Range") && !strncasecmp(v, "bytes ", 6)) {
		char *dash, *end;

		r->range_start = strtoll(v + 6, &dash, 10);
		if (*dash != '-' || !isdigit((unsigned char)v[6]))
			r->range_start = -1;
		else if ((end = strchr(dash, '/')) && isdigit((unsigned char)end[1]))
			r->range_total = parse_size(end + 1);
	}
#undef IS
	if (slot) {
		free(*slot);
		*slot = tf_strdup(v);
	}
	return size * n;
}

static size_t on_body(char *buf, size_t size, size_t n, void *arg)
{
	xfer *x = arg;
	size_t len = size * n;

	/* only a success carries content; an error page or a redirect's body
	 * is read and dropped */
	if (x->r->status < 200 || x->r->status > 299)
		return len;
	if (x->fn) {
		if (x->fn(x->ctx, x->r, buf, len)) {
			x->stopped = 1;
			return 0;
		}
		return len;
	}
	if (x->len + len > x->max) {
		x->too_big = 1;
		return 0;
	}
	x->buf = tf_realloc(x->buf, x->len + len + 1);
	memcpy(x->buf + x->len, buf, len);
	x->len += len;
	x->buf[x->len] = 0;
	return len;
}

static CURL *easy(const char *url, const tf_http_opts *o, xfer *x, struct curl_slist **hdrs,
		  char *errbuf)
{
	CURL *c = curl_easy_init();
	char auth[4200];

	if (!c)
		return NULL;
	*hdrs = curl_slist_append(NULL, "Accept-Encoding: identity");
	if (o->token) {
		snprintf(auth, sizeof auth, "Authorization: Bearer %s", o->token);
		*hdrs = curl_slist_append(*hdrs, auth);
	}
	errbuf[0] = 0;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, *hdrs);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "tensorfold-tf-pull/0.1");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, (long)MAX_HOPS);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	if (o->stall_s > 0) {
		curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, o->stall_s);
		/* a trickle (a byte every half second) is as dead as silence */
		curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, (long)TF_HTTP_MIN_RATE);
		curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, o->stall_s);
	}
	if (o->timeout_s > 0)
		curl_easy_setopt(c, CURLOPT_TIMEOUT, o->timeout_s);
	return c;
}

static int finish(CURL *c, CURLcode rc, xfer *x, const char *url, const char *errbuf)
{
	if (x->stopped)
		return TF_HTTP_STOP;
	if (x->too_big)
		return tf_err("the answer from '%s' is larger than %zu bytes", url, x->max),
		       TF_HTTP_STOP;
	if (rc != CURLE_OK)
		return tf_err("'%s': %s", url, errbuf[0] ? errbuf : curl_easy_strerror(rc)),
		       TF_HTTP_FAIL;
	(void)c;
	return TF_HTTP_OK;
}

static int is_absolute(const char *loc)
{
	const char *p = loc;

	if (loc[0] == '/' && loc[1] == '/')
		return 1;
	while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.')
		p++;
	return p > loc && !strncmp(p, "://", 3);
}

int tf_http_head(const char *url, const tf_http_opts *o, tf_http_resp *r)
{
	char *cur = tf_strdup(url);

	memset(r, 0, sizeof *r);
	tf_http_resp_free(r);
	for (int hop = 0;; hop++) {
		struct curl_slist *hdrs = NULL;
		char errbuf[CURL_ERROR_SIZE];
		xfer x = { .r = r };
		CURL *c = easy(cur, o, &x, &hdrs, errbuf);
		char *next = NULL;
		CURLcode rc;
		int ret;

		if (!c) {
			free(cur);
			curl_slist_free_all(hdrs);
			return tf_err("cannot start a request"), TF_HTTP_FAIL;
		}
		free(r->url);
		r->url = tf_strdup(cur);
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
		curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
		rc = curl_easy_perform(c);
		ret = finish(c, rc, &x, cur, errbuf);
		if (ret == TF_HTTP_OK && r->status >= 300 && r->status < 400 && r->location) {
			if (is_absolute(r->location)) {
				/* keep the absolute form libcurl worked out */
				char *abs = NULL;

				curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &abs);
				if (abs) {
					free(r->location);
					r->location = tf_strdup(abs);
				}
			} else {
				char *abs = NULL;

				curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &abs);
				if (abs)
					next = tf_strdup(abs);
			}
		} else if (r->status < 300 || r->status >= 400) {
			free(r->location);
			r->location = NULL;
		}
		curl_easy_cleanup(c);
		curl_slist_free_all(hdrs);
		if (ret != TF_HTTP_OK || !next) {
			free(cur);
			free(next);
			return ret;
		}
		free(cur);
		cur = next;
		if (hop + 1 >= MAX_HOPS) {
			tf_err("'%s': more than %d redirects", url, MAX_HOPS);
			free(cur);
			return TF_HTTP_FAIL;
		}
	}
}

static int get(const char *url, const tf_http_opts *o, uint64_t from, tf_http_resp *r, xfer *x)
{
	struct curl_slist *hdrs = NULL;
	char errbuf[CURL_ERROR_SIZE], range[48];
	CURL *c;
	CURLcode rc;
	int ret;

	memset(r, 0, sizeof *r);
	tf_http_resp_free(r);
	x->r = r;
	c = easy(url, o, x, &hdrs, errbuf);
	if (!c) {
		curl_slist_free_all(hdrs);
		return tf_err("cannot start a request"), TF_HTTP_FAIL;
	}
	r->url = tf_strdup(url);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	if (from > 0) {
		snprintf(range, sizeof range, "%llu-", (unsigned long long)from);
		curl_easy_setopt(c, CURLOPT_RANGE, range);
	}
	rc = curl_easy_perform(c);
	ret = finish(c, rc, x, url, errbuf);
	curl_easy_cleanup(c);
	curl_slist_free_all(hdrs);
	return ret;
}

int tf_http_get_mem(const char *url, const tf_http_opts *o, tf_http_resp *r,
		    char **body, size_t *len, size_t max)
{
	xfer x = { .max = max };
	int ret = get(url, o, 0, r, &x);

	if (ret != TF_HTTP_OK) {
		free(x.buf);
		*body = NULL;
		*len = 0;
		return ret;
	}
	*body = x.buf ? x.buf : tf_calloc(1, 1);
	*len = x.len;
	return ret;
}

int tf_http_get(const char *url, const tf_http_opts *o, uint64_t from, tf_http_resp *r,
		tf_http_body_fn fn, void *ctx)
{
	xfer x = { .fn = fn, .ctx = ctx };

	return get(url, o, from, r, &x);
}

char *tf_http_escape(const char *s, int keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out = tf_malloc(3 * strlen(s) + 1), *p = out;

	for (; *s; s++) {
		unsigned char c = *s;

		if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/'))
			*p++ = c;
		else {
			*p++ = '%';
			*p++ = hex[c >> 4];
			*p++ = hex[c & 15];
		}
	}
	*p = 0;
	return out;
}
