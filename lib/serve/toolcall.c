/* toolcall.c: the tool calls in a chat reply (toolcall.h) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "toolargs.h"
#include "toolcall.h"

static const char call_tag[] = "<tool_call>", function_tag[] = "<function=";
static const char function_end[] = "</function>", call_end[] = "</tool_call>";

#define LEN(s) (sizeof(s) - 1)

enum { BEFORE, BETWEEN, INSIDE };

static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

void tf_toolcall_init(tf_toolcall *t, const json_t *tools)
{
	memset(t, 0, sizeof *t);
	t->tools = tools;
}

void tf_toolcall_free(tf_toolcall *t)
{
	for (int i = 0; i < t->ncalls; i++) {
		free(t->calls[i].name);
		free(t->calls[i].arguments);
	}
	free(t->calls);
	tf_sbuf_free(&t->hold);
	tf_sbuf_free(&t->content);
	memset(t, 0, sizeof *t);
}

/* an id no other call of this server has: a counter and the process's
 * start, mixed (vLLM takes 24 hex digits of a random UUID) */
static void call_id(char *out, size_t cap)
{
	static uint64_t counter;
	static uint64_t base;
	uint64_t k = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);

	if (!__atomic_load_n(&base, __ATOMIC_RELAXED)) {
		uint64_t b = ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid() ^ (uint64_t)(uintptr_t)&k;
		uint64_t zero = 0;
		__atomic_compare_exchange_n(&base, &zero, b | 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}
	/* splitmix64, twice: 24 hex digits from 96 bits */
	uint64_t h[2];
	for (int i = 0; i < 2; i++) {
		uint64_t z = __atomic_load_n(&base, __ATOMIC_RELAXED) + k * 0x9e3779b97f4a7c15ull + (uint64_t)i * 0x632be59bd9b4e019ull;
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		h[i] = z ^ (z >> 31);
	}
	snprintf(out, cap, "call_%016llx%08llx", (unsigned long long)h[0], (unsigned long long)(h[1] >> 32));
}

/* s[0..n), which begins with "<": 1 a call begins there (*body: where
 * the text after "<function=" begins), 0 the next bytes tell, -1 none */
static int call_start(const char *s, size_t n, size_t *body)
{
	size_t k = LEN(call_tag), f = LEN(function_tag);

	if (n < k)
		return memcmp(s, call_tag, n) ? -1 : 0;
	if (memcmp(s, call_tag, k))
		return -1;
	size_t i = k;
	while (i < n && blank(s[i]))
		i++;
	if (n - i < f)
		return memcmp(s + i, function_tag, n - i) ? -1 : 0;
	if (memcmp(s + i, function_tag, f))
		return -1;
	*body = i + f;
	return 1;
}

/* vLLM's test of a name: no blanks, quotes or template characters */
static int good_name(const char *s, size_t n)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (strchr("{}<>\"' \t\n\r", s[i]))
			return 0;
	return 1;
}

/* a call's text after "<function=", up to its end: a call when its name
 * is one */
static void finish(tf_toolcall *t, const char *s, size_t n)
{
	const char *gt = memchr(s, '>', n);

	if (!gt || !good_name(s, (size_t)(gt - s)))
		return;
	size_t nn = (size_t)(gt - s);
	tf_toolcall_fn c = { 0 };
	c.name = tf_malloc(nn + 1);
	memcpy(c.name, s, nn);
	c.name[nn] = 0;
	tf_sbuf a = { 0 };
	tf_toolargs(&a, t->tools, c.name, gt + 1, n - nn - 1);
	c.arguments = a.s;
	call_id(c.id, sizeof c.id);
	if (t->ncalls == t->cap) {
		t->cap = t->cap * 2 + 4;
		t->calls = tf_realloc(t->calls, t->cap * sizeof *t->calls);
	}
	t->calls[t->ncalls++] = c;
}

/* where the open call at s ends: its "</function>" or "</tool_call>",
 * whichever comes first, from byte `from` on; *len the tag's length */
static const char *call_stop(const char *s, size_t n, size_t from, size_t *len)
{
	const char *f = memmem(s + from, n - from, function_end, LEN(function_end));
	const char *c = memmem(s + from, n - from, call_end, LEN(call_end));

	if (c && (!f || c < f)) {
		*len = LEN(call_end);
		return c;
	}
	*len = LEN(function_end);
	return f;
}

/* the held bytes read: content up to a call, calls as they end, what
 * may begin a call or is an open one kept */
static void drain(tf_toolcall *t)
{
	char *s = t->hold.s;
	size_t n = t->hold.len, i = 0;

	while (i < n) {
		if (t->state == INSIDE) {
			/* the call's text begins at i */
			size_t len;
			const char *e = call_stop(s + i, n - i, t->scanned, &len);
			if (!e) {
				/* an end tag may have begun in the last bytes */
				size_t keep = LEN(call_end) - 1;
				if (n - i > keep && n - i - keep > t->scanned)
					t->scanned = n - i - keep;
				break;
			}
			finish(t, s + i + t->body, (size_t)(e - (s + i)) - t->body);
			i = (size_t)(e - s) + len;
			t->state = BETWEEN;
			continue;
		}
		const char *lt = memchr(s + i, '<', n - i);
		size_t at = lt ? (size_t)(lt - s) : n;
		if (t->state == BEFORE)
			tf_sbuf_add(&t->content, s + i, at - i);
		if (!lt) {
			i = n;
			break;
		}
		size_t body;
		int k = call_start(lt, n - at, &body);
		if (k == 0) {
			i = at;
			break;
		}
		if (k < 0) {
			if (t->state == BEFORE)
				tf_sbuf_add(&t->content, "<", 1);
			i = at + 1;
			continue;
		}
		t->state = INSIDE;
		t->body = t->scanned = body;
		i = at;
	}
	/* what is left moves to the front: an open call's offsets count from it */
	memmove(s, s + i, n - i);
	t->hold.len = n - i;
	s[t->hold.len] = 0;
}

void tf_toolcall_push(tf_toolcall *t, const char *s, size_t n)
{
	if (!n)
		return;
	tf_sbuf_add(&t->hold, s, n);
	drain(t);
}

void tf_toolcall_end(tf_toolcall *t)
{
	/* before any call, the start of one that never came is content; an
	 * open call is no call, its text content (vLLM gives a reply it
	 * cannot read back as content); between calls, the rest goes */
	if (t->hold.len && t->state != BETWEEN)
		tf_sbuf_add(&t->content, t->hold.s, t->hold.len);
	tf_sbuf_free(&t->hold);
	t->state = BETWEEN;
}
