/*
 * server.h: the HTTP side of tf-serve, on libmicrohttpd with a thread a
 * connection: routes, the API key, the body limit, JSON answers and
 * server-sent events, the metrics, and a drain for SIGTERM.
 *
 *   GET  /health                 {"status":"ok"} (503 while draining)
 *   GET  /metrics                Prometheus text
 *   GET  /v1/models              the one model
 *   POST /v1/completions         api.h
 *   POST /v1/chat/completions
 *
 * A connection's thread waits for its jobs; while it waits it watches its
 * socket, and a client that has gone has its jobs cancelled at once, so
 * their slots are free for the next round.
 */
#ifndef TF_SERVE_SERVER_H
#define TF_SERVE_SERVER_H

#include "engine.h"
#include "model/model.h"
#include "tok/tok.h"

typedef struct {
	const char *host;       /* address to bind: a name or a literal, v4 or v6 */
	int port;               /* 0: any free one */
	const char *api_key;    /* NULL: none asked */
	const char *model_name;
	long ctx;               /* prompt plus completion ids a request at most */
	long body_max;          /* request body bytes at most */
	int timeout_s;          /* an idle connection is closed after this */
	int connections;        /* connections at once at most */
	const char *chat_refused;       /* why chats are refused (a template not the Qwen3.5
					 * family's, no ChatML tokens), or NULL */
} tf_server_opts;

typedef struct tf_server tf_server;

/* listening when it returns; NULL with a message */
tf_server *tf_server_start(const tf_model *m, tf_tok *tok, tf_engine *e, const tf_server_opts *o);
/* the port it listens on */
int tf_server_port(const tf_server *s);
/* stops taking connections and requests, waits up to `seconds` for the
 * requests in flight to be answered, then stops */
void tf_server_stop(tf_server *s, double seconds);

#endif
