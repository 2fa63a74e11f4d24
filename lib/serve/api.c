/* api.c: OpenAI request bodies read and checked (api.h) */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "base/err.h"
#include "chat.h"
#include "sbuf.h"
#include "think.h"

#define BAD "invalid_request_error"

int tf_api_fail(tf_api_err *err, int status, const char *type, const char *code, const char *param,
		const char *fmt, ...)
{
	va_list ap;

	err->status = status;
	err->type = type;
	err->code = code;
	snprintf(err->param, sizeof err->param, "%s", param ? param : "");
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof err->message, fmt, ap);
	va_end(ap);
	return -1;
}

char *tf_api_err_json(const tf_api_err *err)
{
	json_t *e = json_pack("{s:s, s:s, s:o, s:o}", "message", err->message, "type", err->type,
			      "param", *err->param ? json_string(err->param) : json_null(),
			      "code", err->code ? json_string(err->code) : json_null());
	json_t *o = json_pack("{s:o}", "error", e);
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

/* a field that must be absent, null or of one type */
static const json_t *field(const json_t *o, const char *name)
{
	const json_t *v = json_object_get(o, name);
	return v && !json_is_null(v) ? v : NULL;
}

static int want_number(tf_api_err *err, const json_t *v, const char *name, double lo, double hi, double *out)
{
	if (!json_is_number(v))
		return tf_api_fail(err, 400, BAD, NULL, name, "'%s' must be a number", name);
	double x = json_number_value(v);
	if (!(x >= lo && x <= hi))
		return tf_api_fail(err, 400, BAD, NULL, name, "'%s' must be between %g and %g, not %g", name, lo, hi, x);
	*out = x;
	return 0;
}

static int want_int(tf_api_err *err, const json_t *v, const char *name, long long lo, long long hi, long long *out)
{
	if (!json_is_integer(v))
		return tf_api_fail(err, 400, BAD, NULL, name, "'%s' must be an integer", name);
	long long x = json_integer_value(v);
	if (x < lo || x > hi)
		return tf_api_fail(err, 400, BAD, NULL, name, "'%s' must be between %lld and %lld, not %lld", name, lo,
				   hi, x);
	*out = x;
	return 0;
}

static int want_bool(tf_api_err *err, const json_t *v, const char *name, int *out)
{
	if (!json_is_boolean(v))
		return tf_api_fail(err, 400, BAD, NULL, name, "'%s' must be a boolean", name);
	*out = json_is_true(v);
	return 0;
}

static int encode(const tf_api_env *env, tf_api_err *err, const char *s, size_t n, tf_seq *out)
{
	if (!env->encode)
		return tf_api_fail(err, 400, BAD, NULL, "prompt",
				   "this server runs without a tokenizer (--no-tokenizer): 'prompt' must be token ids");
	if (env->encode(env->encode_ctx, s, n, out) < 0)
		return tf_api_fail(err, 400, BAD, NULL, "prompt", "cannot tokenize the prompt: %s", tf_errmsg());
	return 0;
}

static int read_prompt(const tf_api_env *env, const json_t *o, tf_api_req *r, tf_api_err *err)
{
	const json_t *p = json_object_get(o, "prompt");
	size_t i;
	json_t *x;

	if (!p)
		return tf_api_fail(err, 400, BAD, NULL, "prompt", "'prompt' is required");
	if (json_is_string(p))
		return encode(env, err, json_string_value(p), json_string_length(p), &r->prompt);
	if (!json_is_array(p))
		return tf_api_fail(err, 400, BAD, NULL, "prompt",
				   "'prompt' must be a string, an array of one string or an array of token ids");
	if (json_array_size(p) == 1 && json_is_string(json_array_get(p, 0))) {
		x = json_array_get(p, 0);
		return encode(env, err, json_string_value(x), json_string_length(x), &r->prompt);
	}
	json_array_foreach(p, i, x) {
		if (!json_is_integer(x))
			return tf_api_fail(err, 400, BAD, NULL, "prompt",
					   "'prompt' must be a string, an array of one string or an array of token ids "
					   "(one prompt a request)");
		long long id = json_integer_value(x);
		if (id < 0 || id >= env->vocab)
			return tf_api_fail(err, 400, BAD, NULL, "prompt", "token id %lld at %zu is not in [0, %ld)", id,
					   i, env->vocab);
		if (r->prompt.n == r->prompt.cap) {
			r->prompt.cap = r->prompt.cap * 2 + 64;
			r->prompt.ids = tf_realloc(r->prompt.ids, r->prompt.cap * sizeof *r->prompt.ids);
		}
		r->prompt.ids[r->prompt.n++] = (int32_t)id;
	}
	return 0;
}

/* tool_choice: "auto" (the default) and "none"; the forms that force a
 * call would need the reply constrained to one, which tf-serve does not
 * do, so they are refused rather than quietly taken as "auto" */
static int read_tool_choice(const json_t *o, const json_t *tools, tf_api_req *r, tf_api_err *err)
{
	const json_t *tc = field(o, "tool_choice");
	int read_calls = 1;

	if (tc && json_is_string(tc)) {
		const char *s = json_string_value(tc);
		if (!strcmp(s, "none"))
			read_calls = 0;
		else if (!strcmp(s, "required"))
			return tf_api_fail(err, 400, BAD, NULL, "tool_choice",
					   "'tool_choice' \"required\" is not supported: tf-serve takes \"auto\" and \"none\"");
		else if (strcmp(s, "auto"))
			return tf_api_fail(err, 400, BAD, NULL, "tool_choice",
					   "'tool_choice' must be \"auto\" or \"none\", not \"%s\"", s);
	} else if (tc && json_is_object(tc)) {
		return tf_api_fail(err, 400, BAD, NULL, "tool_choice",
				   "a function named in 'tool_choice' is not supported: tf-serve takes \"auto\" and \"none\"");
	} else if (tc) {
		return tf_api_fail(err, 400, BAD, NULL, "tool_choice", "'tool_choice' must be a string");
	}
	if (read_calls && json_array_size(tools))
		r->tools = json_incref((json_t *)tools);
	return 0;
}

static int read_messages(const tf_api_env *env, const json_t *o, tf_api_req *r, tf_api_err *err)
{
	const json_t *msgs = json_object_get(o, "messages"), *tools = field(o, "tools");
	const json_t *kw = field(o, "chat_template_kwargs"), *think = field(o, "enable_thinking");
	tf_chat_opts co = { .add_generation_prompt = 1 };
	tf_sbuf b = { 0 };

	if (!msgs)
		return tf_api_fail(err, 400, BAD, NULL, "messages", "'messages' is required");
	if (!json_is_array(msgs))
		return tf_api_fail(err, 400, BAD, NULL, "messages", "'messages' must be an array");
	if (tools && !json_is_array(tools))
		return tf_api_fail(err, 400, BAD, NULL, "tools", "'tools' must be an array");
	if (read_tool_choice(o, tools, r, err) < 0)
		return -1;
	if (kw && !json_is_object(kw))
		return tf_api_fail(err, 400, BAD, NULL, "chat_template_kwargs", "'chat_template_kwargs' must be an object");
	if (kw && field(kw, "enable_thinking"))
		think = field(kw, "enable_thinking");
	co.thinking_off = json_is_false(think);
	const json_t *agp = field(o, "add_generation_prompt");
	if (agp && want_bool(err, agp, "add_generation_prompt", &co.add_generation_prompt) < 0)
		return -1;
	if (tf_chat_render(&b, msgs, tools, &co) < 0) {
		tf_sbuf_free(&b);
		return tf_api_fail(err, 400, BAD, NULL, "messages", "%s", tf_errmsg());
	}
	/* where the prompt leaves the reply, not the flag: the template
	 * opens a block with thinking on and closes it with thinking off */
	r->think_open = tf_think_open_in(b.s ? b.s : "", b.len);
	int rc = encode(env, err, b.s ? b.s : "", b.len, &r->prompt);
	tf_sbuf_free(&b);
	return rc;
}

static int read_stop(const tf_api_env *env, const json_t *o, tf_api_req *r, tf_api_err *err)
{
	const json_t *s = field(o, "stop");
	size_t i;
	json_t *x;

	if (!s)
		return 0;
	if (!env->encode && !(json_is_array(s) && !json_array_size(s)))
		return tf_api_fail(err, 400, BAD, NULL, "stop",
				   "stop strings need the text: this server runs without a tokenizer (--no-tokenizer)");
	if (json_is_string(s)) {
		r->stop[0] = tf_strdup(json_string_value(s));
		r->stop_len[0] = json_string_length(s);
		r->nstop = 1;
		return 0;
	}
	if (!json_is_array(s) || json_array_size(s) > TF_STOPS_MAX)
		return tf_api_fail(err, 400, BAD, NULL, "stop", "'stop' must be a string or an array of at most %d strings",
				   TF_STOPS_MAX);
	json_array_foreach(s, i, x) {
		if (!json_is_string(x))
			return tf_api_fail(err, 400, BAD, NULL, "stop", "'stop' must be a string or an array of strings");
		r->stop_len[r->nstop] = json_string_length(x);
		r->stop[r->nstop++] = tf_strdup(json_string_value(x));
	}
	return 0;
}

static int read_sampling(const tf_api_env *env, const json_t *o, tf_api_req *r, tf_api_err *err)
{
	const json_t *v;
	double x;
	long long k;

	r->sampler = (tf_sampler){ .temp = 1, .top_k = 0, .top_p = 1 };
	if ((v = field(o, "temperature"))) {
		if (want_number(err, v, "temperature", 0, 2, &x) < 0)
			return -1;
		r->sampler.temp = (float)x;
	}
	if ((v = field(o, "top_p"))) {
		if (want_number(err, v, "top_p", 0, 1, &x) < 0)
			return -1;
		if (x <= 0)
			return tf_api_fail(err, 400, BAD, NULL, "top_p", "'top_p' must be above 0");
		r->sampler.top_p = (float)x;
	}
	if ((v = field(o, "top_k"))) {
		/* -1 and 0 both mean every id, as in vLLM and llama.cpp */
		if (want_int(err, v, "top_k", -1, 1 << 30, &k) < 0)
			return -1;
		r->sampler.top_k = k < 0 ? 0 : (int)k;
	}
	if ((v = field(o, "seed"))) {
		if (!json_is_integer(v))
			return tf_api_fail(err, 400, BAD, NULL, "seed", "'seed' must be an integer");
		r->sampler.rng = (uint64_t)json_integer_value(v);
	} else {
		r->sampler.rng = env->random_seed();
	}
	return 0;
}

static int read_request(const tf_api_env *env, const json_t *o, int chat, tf_api_req *r, tf_api_err *err)
{
	const json_t *v;
	long long k;
	int given_max = 0;

	if (!json_is_object(o))
		return tf_api_fail(err, 400, BAD, NULL, NULL, "the request body must be a JSON object");
	if ((v = field(o, "model"))) {
		if (!json_is_string(v))
			return tf_api_fail(err, 400, BAD, NULL, "model", "'model' must be a string");
		if (strcmp(json_string_value(v), env->model_name))
			return tf_api_fail(err, 404, BAD, "model_not_found", "model",
					   "The model '%s' does not exist: this server serves '%s'", json_string_value(v),
					   env->model_name);
	}
	r->chat = chat;
	r->n = 1;
	r->logprobs = -1;
	if ((v = field(o, "n"))) {
		if (want_int(err, v, "n", 1, TF_API_N_MAX, &k) < 0)
			return -1;
		r->n = (int)k;
	}
	if ((v = field(o, "stream")) && want_bool(err, v, "stream", &r->stream) < 0)
		return -1;
	if ((v = field(o, "stream_options"))) {
		if (!json_is_object(v))
			return tf_api_fail(err, 400, BAD, NULL, "stream_options", "'stream_options' must be an object");
		const json_t *u = field(v, "include_usage");
		if (u && want_bool(err, u, "stream_options.include_usage", &r->include_usage) < 0)
			return -1;
	}
	if ((v = field(o, "ignore_eos")) && want_bool(err, v, "ignore_eos", &r->ignore_eos) < 0)
		return -1;
	if ((v = field(o, "return_token_ids")) && want_bool(err, v, "return_token_ids", &r->return_ids) < 0)
		return -1;
	if (chat) {
		int on = 0;
		if ((v = field(o, "logprobs")) && want_bool(err, v, "logprobs", &on) < 0)
			return -1;
		if ((v = field(o, "top_logprobs"))) {
			if (want_int(err, v, "top_logprobs", 0, 20, &k) < 0)
				return -1;
			if (!on)
				return tf_api_fail(err, 400, BAD, NULL, "top_logprobs", "'top_logprobs' needs 'logprobs': true");
		} else {
			k = 0;
		}
		r->logprobs = on ? (int)k : -1;
	} else if ((v = field(o, "logprobs"))) {
		if (want_int(err, v, "logprobs", 0, 20, &k) < 0)
			return -1;
		r->logprobs = (int)k;
	}
	const char *maxname = "max_tokens";
	if (chat && field(o, "max_completion_tokens"))
		maxname = "max_completion_tokens";
	if ((v = field(o, maxname))) {
		if (!json_is_integer(v))
			return tf_api_fail(err, 400, BAD, NULL, maxname, "'%s' must be an integer", maxname);
		if (json_integer_value(v) < 0)
			return tf_api_fail(err, 400, BAD, NULL, maxname, "'%s' must be 0 or more, not %lld", maxname,
					   (long long)json_integer_value(v));
		k = json_integer_value(v);
		r->max_tokens = k > env->ctx ? env->ctx + 1 : (long)k;
		given_max = 1;
	}
	if (read_stop(env, o, r, err) < 0 || read_sampling(env, o, r, err) < 0)
		return -1;
	if ((chat ? read_messages(env, o, r, err) : read_prompt(env, o, r, err)) < 0)
		return -1;
	if (!r->prompt.n)
		return tf_api_fail(err, 400, BAD, NULL, chat ? "messages" : "prompt", "the prompt is empty");
	long np = (long)r->prompt.n;
	if (np >= env->ctx)
		return tf_api_fail(err, 400, BAD, "context_length_exceeded", chat ? "messages" : "prompt",
				   "This model's maximum context length is %ld tokens; the prompt has %ld", env->ctx, np);
	if (!given_max)
		/* OpenAI's defaults: 16 for a completion, the rest of the context for a chat */
		r->max_tokens = chat || env->ctx - np < 16 ? env->ctx - np : 16;
	if (np + r->max_tokens > env->ctx)
		return tf_api_fail(err, 400, BAD, "context_length_exceeded", maxname,
				   "This model's maximum context length is %ld tokens. However, you requested %ld "
				   "tokens (%ld in the prompt, %ld in the completion)",
				   env->ctx, np + r->max_tokens, np, r->max_tokens);
	return 0;
}

int tf_api_parse(const tf_api_env *env, const char *body, size_t len, int chat, tf_api_req *r, tf_api_err *err)
{
	json_error_t je;

	memset(r, 0, sizeof *r);
	json_t *o = json_loadb(body, len, 0, &je);
	if (!o)
		return tf_api_fail(err, 400, BAD, NULL, NULL, "the request body is not valid JSON: %s (line %d, column %d)",
				   je.text, je.line, je.column);
	int rc = read_request(env, o, chat, r, err);
	json_decref(o);
	return rc;
}

void tf_api_req_free(tf_api_req *r)
{
	tf_seq_free(&r->prompt);
	json_decref(r->tools);
	for (int k = 0; k < r->nstop; k++)
		free(r->stop[k]);
	memset(r, 0, sizeof *r);
}
