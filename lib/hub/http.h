/*
 * http.h: the few HTTP requests tf-pull makes, over libcurl.
 *
 * Each call returns TF_HTTP_OK when a response arrived, whatever its
 * status (the caller reads r->status and the headers), TF_HTTP_FAIL when
 * the transfer broke (no connection, a cut body, a stall: worth a retry)
 * and TF_HTTP_STOP when the body callback refused the data. A bearer token
 * travels in the Authorization header, which libcurl drops when a redirect
 * leads to another host.
 */
#ifndef TF_HTTP_H
#define TF_HTTP_H

#include <stddef.h>
#include <stdint.h>

enum { TF_HTTP_OK = 0, TF_HTTP_FAIL = -1, TF_HTTP_STOP = -2 };

typedef struct {
	long status;            /* status of the last response; 0 if none came */
	char *url;              /* the URL that gave it */
	char *location;         /* an absolute redirect that was not followed */
	char *commit;           /* X-Repo-Commit */
	char *etag;             /* ETag */
	char *linked_etag;      /* X-Linked-Etag */
	char *error_code;       /* X-Error-Code */
	int64_t linked_size;    /* X-Linked-Size, -1 when absent */
	int64_t length;         /* Content-Length, -1 when absent */
	int64_t range_start;    /* first byte of a 206's Content-Range, -1 */
	int64_t range_total;    /* its total size, -1 when absent or '*' */
} tf_http_resp;

typedef struct {
	const char *token;      /* bearer token or NULL */
	long timeout_s;         /* limit for the whole request, 0 = none */
	long stall_s;           /* give up after this long below TF_HTTP_MIN_RATE */
} tf_http_opts;

/* bytes a second below which a transfer counts as stalled */
#define TF_HTTP_MIN_RATE 1024

/* called once per block of a 2xx body; returns 0 to go on, -1 to stop */
typedef int (*tf_http_body_fn)(void *ctx, const tf_http_resp *r, const void *buf, size_t n);

int tf_http_init(void);
/* HEAD that follows relative redirects only; an absolute one (a CDN) is
 * reported in r->location with the headers that came with it */
int tf_http_head(const char *url, const tf_http_opts *o, tf_http_resp *r);
/* GET following redirects, the body into memory (at most max bytes) */
int tf_http_get_mem(const char *url, const tf_http_opts *o, tf_http_resp *r,
		    char **body, size_t *len, size_t max);
/* GET following redirects, from byte `from` on (a Range request when > 0) */
int tf_http_get(const char *url, const tf_http_opts *o, uint64_t from, tf_http_resp *r,
		tf_http_body_fn fn, void *ctx);
void tf_http_resp_free(tf_http_resp *r);

/* percent-encodes s for a URL; keeps '/' when keep_slash */
char *tf_http_escape(const char *s, int keep_slash);

#endif
