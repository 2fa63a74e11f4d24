/*
 * api.h: the OpenAI request bodies tf-serve takes, read and checked.
 *
 * POST /v1/completions: prompt (a string, one string in an array, or an
 * array of token ids), and POST /v1/chat/completions: messages (rendered
 * by chat.h, then tokenized), each with model, max_tokens
 * (max_completion_tokens for chat), temperature, top_p, top_k, seed, n,
 * stop, stream, stream_options.include_usage, logprobs (completions: the
 * count of alternatives; chat: a bool with top_logprobs) and two fields of
 * vLLM's: ignore_eos and return_token_ids; chat also takes tools (rendered
 * into the prompt) and tool_choice ("auto", the default, reads the
 * reply's tool calls back as tool_calls; "none" leaves the reply as it
 * is; a function named or "required" is refused). A field of the wrong type or
 * out of range is an error naming it; fields not listed are ignored, as
 * OpenAI-compatible servers do.
 */
#ifndef TF_SERVE_API_H
#define TF_SERVE_API_H

#include <jansson.h>
#include <stdint.h>

#include "decode/sample.h"
#include "io/ids.h"
#include "text.h"

#define TF_API_N_MAX 16         /* choices a request at most */

typedef struct {
	int status;             /* HTTP status: 400, 404, ... */
	const char *type;       /* OpenAI's error type */
	const char *code;       /* or NULL */
	char param[64];         /* the field at fault, or empty */
	char message[512];
} tf_api_err;

typedef struct {
	int chat;
	tf_seq prompt;
	long max_tokens;
	int n;
	tf_sampler sampler;     /* rng: the seed itself; choice i draws with tf_sample_seed(seed, i) */
	int stream, include_usage;
	char *stop[TF_STOPS_MAX];
	size_t stop_len[TF_STOPS_MAX];
	int nstop;
	int logprobs;           /* -1 none, else the alternatives a token */
	int ignore_eos, return_ids;
	int think_open;         /* chat: the rendered prompt leaves a think block
				 * open (thinking on), so the reply is split into
				 * reasoning_content and content (think.h) */
	json_t *tools;          /* chat: the request's tools when the reply's tool
				 * calls are read back (toolcall.h), else NULL */
} tf_api_req;

/* what parsing needs of the server */
typedef struct {
	const char *model_name; /* the one model served */
	long ctx;               /* prompt plus completion ids at most */
	long vocab;
	/* the prompt's text to ids (the tokenizer is shared: the callee
	 * serializes); -1 with a message. NULL: no tokenizer, prompts are
	 * ids and there is no text to stop on */
	int (*encode)(void *ctx, const char *text, size_t len, tf_seq *out);
	void *encode_ctx;
	uint64_t (*random_seed)(void);
} tf_api_env;

/* 0, or -1 with err filled */
int tf_api_parse(const tf_api_env *env, const char *body, size_t len, int chat, tf_api_req *r, tf_api_err *err);
void tf_api_req_free(tf_api_req *r);

/* sets err (always returns -1) */
int tf_api_fail(tf_api_err *err, int status, const char *type, const char *code, const char *param,
		const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* the error object's JSON text, new string */
char *tf_api_err_json(const tf_api_err *err);

#endif
