/* server.c: HTTP on libmicrohttpd, a thread a connection (server.h) */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "base/err.h"
#include "gen.h"
#include "metrics.h"
#include "server.h"

struct tf_server {
	const tf_model *m;
	tf_tok *tok;
	pthread_mutex_t tok_mu;         /* the tokenizer's scratch is not shared */
	tf_engine *e;
	tf_server_opts o;
	struct MHD_Daemon *d;
	int fd;                         /* the listening socket */
	int port;
	pthread_mutex_t mu;
	pthread_cond_t idle;            /* a request ended */
	int active;                     /* requests not yet ended */
	int draining;
	tf_metrics metrics;
};

/* one request, from its first byte until MHD is done with it */
struct req {
	tf_server *s;
	int refs;                       /* the request's, and a streaming response's */
	int route;                      /* TF_ROUTE_* */
	char url[128];                  /* for messages */
	struct MHD_Connection *conn;
	tf_sbuf body;
	int too_big;
	int answered;                   /* a response went out at the first call */
	tf_api_req r;
	tf_gen g;
	int gen;                        /* g was started */
	tf_sbuf out;                    /* events not yet handed to MHD */
	size_t out_off;
};

static void req_unref(struct req *q)
{
	tf_server *s = q->s;

	pthread_mutex_lock(&s->mu);
	int last = --q->refs == 0;
	pthread_mutex_unlock(&s->mu);
	if (!last)
		return;
	if (q->gen)
		tf_gen_free(&q->g);
	tf_api_req_free(&q->r);
	tf_sbuf_free(&q->body);
	tf_sbuf_free(&q->out);
	free(q);
	pthread_mutex_lock(&s->mu);
	s->active--;
	pthread_cond_broadcast(&s->idle);
	pthread_mutex_unlock(&s->mu);
}

/* whether the client has closed its end (or the connection broke) */
static int client_gone(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct pollfd p;
	char c;

	if (!ci)
		return 1;
	p.fd = ci->connect_fd;
	p.events = POLLIN | POLLRDHUP;
	if (poll(&p, 1, 0) <= 0)
		return 0;
	if (p.revents & (POLLHUP | POLLERR | POLLRDHUP))
		return 1;
	/* readable: a pipelined request, or the end of the stream */
	return recv(p.fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

static enum MHD_Result send_text(struct req *q, int status, const char *type, const char *text, size_t n)
{
	struct MHD_Response *rs = MHD_create_response_from_buffer(n, (void *)text, MHD_RESPMEM_MUST_COPY);
	if (!rs)
		return MHD_NO;
	MHD_add_response_header(rs, "Content-Type", type);
	enum MHD_Result rc = MHD_queue_response(q->conn, status, rs);
	MHD_destroy_response(rs);
	tf_metrics_response(&q->s->metrics, q->route, status);
	return rc;
}

static enum MHD_Result send_json(struct req *q, int status, char *json)
{
	enum MHD_Result rc = send_text(q, status, "application/json", json, strlen(json));
	free(json);
	return rc;
}

static enum MHD_Result send_err(struct req *q, const tf_api_err *err)
{
	struct MHD_Response *rs;
	char *json = tf_api_err_json(err);

	rs = MHD_create_response_from_buffer(strlen(json), json, MHD_RESPMEM_MUST_FREE);
	if (!rs) {
		free(json);
		return MHD_NO;
	}
	MHD_add_response_header(rs, "Content-Type", "application/json");
	if (err->status == 401)
		MHD_add_response_header(rs, "WWW-Authenticate", "Bearer");
	if (err->status == 503)
		MHD_add_response_header(rs, "Retry-After", "1");
	enum MHD_Result rc = MHD_queue_response(q->conn, err->status, rs);
	MHD_destroy_response(rs);
	tf_metrics_response(&q->s->metrics, q->route, err->status);
	return rc;
}

static enum MHD_Result fail(struct req *q, int status, const char *type, const char *code, const char *fmt,
			    const char *arg)
{
	tf_api_err err;

	tf_api_fail(&err, status, type, code, NULL, fmt, arg);
	return send_err(q, &err);
}

/* ---------------------------------------------------------------------------
 * the endpoints */

static int encode(void *ctx, const char *text, size_t len, tf_seq *out)
{
	tf_server *s = ctx;

	pthread_mutex_lock(&s->tok_mu);
	int rc = tf_tok_encode(s->tok, text, len, out);
	pthread_mutex_unlock(&s->tok_mu);
	return rc;
}

static uint64_t random_seed(void)
{
	static uint64_t n;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return tf_sample_seed((uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec,
			      __atomic_add_fetch(&n, 1, __ATOMIC_RELAXED));
}

static enum MHD_Result models(struct req *q)
{
	tf_server *s = q->s;
	json_t *o = json_pack("{s:s, s:[{s:s, s:s, s:I, s:s, s:I}]}", "object", "list", "data", "id",
			      s->o.model_name, "object", "model", "created", (json_int_t)0, "owned_by", "tensorfold",
			      "max_model_len", (json_int_t)s->o.ctx);
	char *t = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return send_json(q, 200, t);
}

static enum MHD_Result metrics(struct req *q)
{
	tf_engine_stats st;
	tf_sbuf b = { 0 };

	tf_engine_stats_get(q->s->e, &st);
	tf_metrics_text(&q->s->metrics, &st, &b);
	enum MHD_Result rc = send_text(q, 200, "text/plain; version=0.0.4", b.s, b.len);
	tf_sbuf_free(&b);
	return rc;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct req *q = cls;

	for (;;) {
		if (q->out_off < q->out.len) {
			size_t n = q->out.len - q->out_off;
			if (n > max)
				n = max;
			memcpy(buf, q->out.s + q->out_off, n);
			q->out_off += n;
			if (q->out_off == q->out.len)
				q->out_off = q->out.len = 0;
			return (ssize_t)n;
		}
		if (q->g.ended)
			return MHD_CONTENT_READER_END_OF_STREAM;
		tf_gen_poll(&q->g, 100);
		tf_gen_events(&q->g, &q->out);
		if (q->out.len == 0 && client_gone(q->conn)) {
			tf_gen_cancel(&q->g);
			return MHD_CONTENT_READER_END_WITH_ERROR;
		}
	}
}

static void stream_done(void *cls)
{
	req_unref(cls);
}

static enum MHD_Result generate(struct req *q, int chat)
{
	tf_server *s = q->s;
	tf_api_err err;
	tf_api_env env = { s->o.model_name, s->o.ctx, s->m->c.vocab, s->tok ? encode : NULL, s, random_seed };

	if (chat && s->o.chat_refused)
		return fail(q, 400, "invalid_request_error", "chat_template_unsupported",
			    "%s; use /v1/completions with the prompt rendered", s->o.chat_refused);
	if (tf_api_parse(&env, q->body.s ? q->body.s : "", q->body.len, chat, &q->r, &err) < 0)
		return send_err(q, &err);
	if (tf_gen_start(&q->g, s->e, s->tok, s->o.model_name, &q->r, &err) < 0) {
		tf_gen_free(&q->g);
		return send_err(q, &err);
	}
	q->gen = 1;
	if (q->r.stream) {
		pthread_mutex_lock(&s->mu);
		q->refs++;
		pthread_mutex_unlock(&s->mu);
		struct MHD_Response *rs = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, stream_read, q,
									     stream_done);
		if (!rs) {
			req_unref(q);
			return MHD_NO;
		}
		MHD_add_response_header(rs, "Content-Type", "text/event-stream");
		MHD_add_response_header(rs, "Cache-Control", "no-cache");
		enum MHD_Result rc = MHD_queue_response(q->conn, 200, rs);
		MHD_destroy_response(rs);
		tf_metrics_response(&s->metrics, q->route, 200);
		return rc;
	}
	while (!tf_gen_poll(&q->g, 100))
		if (client_gone(q->conn)) {
			tf_gen_cancel(&q->g);
			return MHD_NO;
		}
	char *body = tf_gen_body(&q->g, &err);
	if (!body)
		return send_err(q, &err);
	return send_json(q, 200, body);
}

/* ---------------------------------------------------------------------------
 * the request's way through MHD */

static int route_of(const char *url)
{
	static const char *const names[] = { [TF_ROUTE_HEALTH] = "/health", [TF_ROUTE_METRICS] = "/metrics",
					     [TF_ROUTE_MODELS] = "/v1/models", [TF_ROUTE_COMPLETIONS] = "/v1/completions",
					     [TF_ROUTE_CHAT] = "/v1/chat/completions" };
	for (int i = 0; i < TF_ROUTE_OTHER; i++)
		if (!strcmp(url, names[i]))
			return i;
	return TF_ROUTE_OTHER;
}

/* the key, compared in a time that does not depend on where it differs */
static int key_ok(const tf_server *s, struct MHD_Connection *conn)
{
	const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	const char *k = s->o.api_key;
	size_t kn = strlen(k), hn;
	unsigned diff = 0;

	if (!h || strncasecmp(h, "Bearer ", 7))
		return 0;
	h += 7;
	hn = strlen(h);
	diff = hn != kn;
	for (size_t i = 0; i < kn; i++)
		diff |= (unsigned char)k[i] ^ (unsigned char)(i < hn ? h[i] : 0);
	return !diff;
}

/* what can be answered before the body is read: 0 when nothing */
static enum MHD_Result early(struct req *q, const char *method, int *answered)
{
	tf_server *s = q->s;
	int post = q->route == TF_ROUTE_COMPLETIONS || q->route == TF_ROUTE_CHAT;

	*answered = 1;
	if (q->route == TF_ROUTE_OTHER)
		return fail(q, 404, "invalid_request_error", "not_found", "no such endpoint: '%s'", q->url);
	if (strcmp(method, post ? "POST" : "GET"))
		return fail(q, 405, "invalid_request_error", "method_not_allowed", "this endpoint takes %s",
			    post ? "POST" : "GET");
	if (s->o.api_key && q->route >= TF_ROUTE_MODELS && !key_ok(s, q->conn))
		return fail(q, 401, "invalid_request_error", "invalid_api_key",
			    "%s", MHD_lookup_connection_value(q->conn, MHD_HEADER_KIND, "Authorization")
				  ? "Incorrect API key provided"
				  : "You didn't provide an API key: send it as 'Authorization: Bearer KEY'");
	pthread_mutex_lock(&s->mu);
	int draining = s->draining;
	pthread_mutex_unlock(&s->mu);
	if (draining && q->route != TF_ROUTE_METRICS)
		return fail(q, 503, "server_shutting_down", NULL, "%s", "the server is shutting down");
	const char *cl = MHD_lookup_connection_value(q->conn, MHD_HEADER_KIND, "Content-Length");
	if (post && cl && strtoull(cl, NULL, 10) > (unsigned long long)s->o.body_max) {
		char lim[32];
		snprintf(lim, sizeof lim, "%ld", s->o.body_max);
		return fail(q, 413, "invalid_request_error", "request_too_large",
			    "the request body is larger than the limit of %s bytes", lim);
	}
	*answered = 0;
	return MHD_YES;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	tf_server *s = cls;
	struct req *q = *con_cls;

	if (!q) {
		q = tf_calloc(1, sizeof *q);
		q->s = s;
		q->refs = 1;
		q->conn = conn;
		q->route = route_of(url);
		snprintf(q->url, sizeof q->url, "%s", url);
		pthread_mutex_lock(&s->mu);
		s->active++;
		pthread_mutex_unlock(&s->mu);
		*con_cls = q;
		tf_metrics_request(&s->metrics, q->route);
		enum MHD_Result rc = early(q, method, &q->answered);
		if (q->answered || q->route < TF_ROUTE_COMPLETIONS)
			return q->answered ? rc : MHD_YES;
		return MHD_YES;
	}
	if (q->answered) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (*upload_size) {
		if (q->body.len + *upload_size > (size_t)s->o.body_max)
			q->too_big = 1;
		else
			tf_sbuf_add(&q->body, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	switch (q->route) {
	case TF_ROUTE_HEALTH:
		return send_json(q, 200, tf_strdup("{\"status\":\"ok\"}"));
	case TF_ROUTE_METRICS:
		return metrics(q);
	case TF_ROUTE_MODELS:
		return models(q);
	}
	if (q->too_big) {
		char lim[32];
		snprintf(lim, sizeof lim, "%ld", s->o.body_max);
		return fail(q, 413, "invalid_request_error", "request_too_large",
			    "the request body is larger than the limit of %s bytes", lim);
	}
	return generate(q, q->route == TF_ROUTE_CHAT);
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode why)
{
	struct req *q = *con_cls;

	if (!q)
		return;
	/* a client that left mid-answer: its jobs end now */
	if (q->gen)
		tf_gen_cancel(&q->g);
	*con_cls = NULL;
	req_unref(q);
}

/* the listening socket, bound here so a failure says why */
static int listen_on(const char *host, int port, int *bound)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE },
			*res;
	char ps[16];
	int one = 1, fd, rc;

	snprintf(ps, sizeof ps, "%d", port);
	if ((rc = getaddrinfo(host, ps, &hints, &res)))
		return tf_err("cannot listen on '%s': %s", host, gai_strerror(rc));
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		freeaddrinfo(res);
		return tf_err("cannot make a socket:");
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 128) < 0) {
		int e = errno;
		close(fd);
		freeaddrinfo(res);
		errno = e;
		return tf_err("cannot listen on %s port %d:", host, port);
	}
	freeaddrinfo(res);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	*bound = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						: ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

tf_server *tf_server_start(const tf_model *m, tf_tok *tok, tf_engine *e, const tf_server_opts *o)
{
	tf_server *s = tf_calloc(1, sizeof *s);

	s->m = m;
	s->tok = tok;
	s->e = e;
	s->o = *o;
	pthread_mutex_init(&s->tok_mu, NULL);
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->idle, NULL);
	tf_metrics_init(&s->metrics);
	if ((s->fd = listen_on(o->host, o->port, &s->port)) < 0) {
		free(s);
		return NULL;
	}
	s->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC, 0, NULL, NULL, handle, s, MHD_OPTION_LISTEN_SOCKET, s->fd,
				MHD_OPTION_NOTIFY_COMPLETED, completed, s, MHD_OPTION_CONNECTION_TIMEOUT,
				(unsigned)o->timeout_s, MHD_OPTION_CONNECTION_LIMIT, (unsigned)o->connections,
				MHD_OPTION_END);
	if (!s->d) {
		close(s->fd);
		free(s);
		tf_err("cannot start the HTTP server on %s port %d", o->host, o->port);
		return NULL;
	}
	return s;
}

int tf_server_port(const tf_server *s)
{
	return s->port;
}

void tf_server_stop(tf_server *s, double seconds)
{
	struct timespec ts;

	pthread_mutex_lock(&s->mu);
	s->draining = 1;
	pthread_mutex_unlock(&s->mu);
	/* no new connections; those open get 503 for a new request */
	int fd = MHD_quiesce_daemon(s->d);
	tf_engine_drain(s->e, seconds);
	/* the answers of the jobs that finished go out: a few seconds more */
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 5;
	pthread_mutex_lock(&s->mu);
	while (s->active > 0)
		if (pthread_cond_timedwait(&s->idle, &s->mu, &ts))
			break;
	pthread_mutex_unlock(&s->mu);
	MHD_stop_daemon(s->d);
	if (fd >= 0)
		close(fd);
	tf_metrics_free(&s->metrics);
	free(s);
}
